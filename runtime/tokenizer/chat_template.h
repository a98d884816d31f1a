#pragma once
// Chat templates: a conversation rendered as the prompt text its model was trained on. There is no
// Jinja engine in C++ here, so specd recognises the template families it loads by their text (as
// llama.cpp did before it had one) and renders each in C++; a ctest renders real templates with
// Hugging Face's own engine (@huggingface/jinja) and requires the same text, character for
// character (tests/chat_template.cmake). A model without a chat_template gets the plain template.
#include <string>
#include <vector>

namespace specd {

struct ChatMessage {
  std::string role;     // system, user, assistant or tool
  std::string content;
};

enum class ChatFamily {
  Plain,    // "System: ...\n\nUser: ...\n\nAssistant:" (docs/models.md), for models without a template
  Llama3,   // <|start_header_id|>role<|end_header_id|>\n\ncontent<|eot_id|>, after the BOS token (Llama-3, 3.1)
  Llama32,  // Llama-3.2's: the same with a system header that always comes first and dates itself
  Qwen25,   // ChatML (<|im_start|>role\ncontent<|im_end|>) with Qwen2.5's default system message
  Qwen3,    // ChatML with Qwen3's <think> handling
  Mistral,  // [INST]user[/INST]assistant</s>, the system message before the last user turn (Mistral-Nemo)
};

class ChatTemplate {
 public:
  // From a tokenizer_config.json: the family of its chat_template, or Plain when it has none.
  // InputError naming the file for a template of no family specd renders, or a malformed file.
  static ChatTemplate from_config(const std::string& tokenizer_config_path);
  explicit ChatTemplate(ChatFamily family, std::string bos_token = "", std::string eos_token = "")
      : family_(family), bos_token_(std::move(bos_token)), eos_token_(std::move(eos_token)) {}

  // The prompt for `messages` (at least one), ending where the assistant's answer starts.
  // InputError "messages: ..." for an empty conversation, a role other than system, user,
  // assistant and tool, or a conversation the family's template refuses (Mistral's: a system
  // message past the first, tool results).
  std::string render(const std::vector<ChatMessage>& messages) const;
  ChatFamily family() const { return family_; }
  // Whether the rendered prompt is encoded with the tokenizer's special tokens: a family's
  // template writes its own BOS (as Hugging Face's apply_chat_template encodes it), the plain one
  // does not.
  bool encode_with_special_tokens() const { return family_ == ChatFamily::Plain; }
  const char* name() const;

 private:
  ChatFamily family_;
  std::string bos_token_, eos_token_;
};

}  // namespace specd
