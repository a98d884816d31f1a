#include "tokenizer/chat_template.h"

#include "io/json_reader.h"
#include "util/error.h"
#include "util/timestamp.h"

namespace specd {
namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// Python's str.strip(chars) family, as the templates call them.
std::string lstrip(const std::string& s, const std::string& chars) {
  const size_t first = s.find_first_not_of(chars);
  return first == std::string::npos ? "" : s.substr(first);
}
std::string rstrip(const std::string& s, const std::string& chars) {
  const size_t last = s.find_last_not_of(chars);
  return last == std::string::npos ? "" : s.substr(0, last + 1);
}
std::string strip(const std::string& s, const std::string& chars) { return lstrip(rstrip(s, chars), chars); }
// Jinja's trim filter (@huggingface/jinja: JavaScript's String.prototype.trim, here its ASCII whitespace).
std::string trim(const std::string& s) { return strip(s, " \t\n\r\f\v"); }

// s.split(sep)[-1] and s.split(sep)[0].
std::string after_last(const std::string& s, const std::string& sep) {
  const size_t at = s.rfind(sep);
  return at == std::string::npos ? s : s.substr(at + sep.size());
}
std::string before_first(const std::string& s, const std::string& sep) { return s.substr(0, s.find(sep)); }

bool starts_with(const std::string& s, const std::string& p) { return s.compare(0, p.size(), p) == 0; }
bool ends_with(const std::string& s, const std::string& p) { return s.size() >= p.size() && s.compare(s.size() - p.size(), p.size(), p) == 0; }

std::string render_plain(const std::vector<ChatMessage>& messages) {
  std::string out;
  for (const ChatMessage& m : messages) {
    std::string role = m.role;
    role[0] = static_cast<char>(role[0] - 'a' + 'A');
    out += role + ": " + m.content + "\n\n";
  }
  return out + "Assistant:";
}

// Meta-Llama-3's template: every message (content trimmed) in its header, the BOS token first,
// and the assistant's header at the end whatever add_generation_prompt says.
std::string render_llama3(const std::vector<ChatMessage>& messages, const std::string& bos) {
  std::string out;
  for (size_t i = 0; i < messages.size(); ++i) {
    if (i == 0) out += bos;
    out += "<|start_header_id|>" + messages[i].role + "<|end_header_id|>\n\n" + trim(messages[i].content) + "<|eot_id|>";
  }
  return out + "<|start_header_id|>assistant<|end_header_id|>\n\n";
}

// Qwen3's template without tools: an assistant turn after the last user query keeps its reasoning
// in <think>, earlier ones lose it; consecutive tool results share one user turn.
std::string render_qwen3(const std::vector<ChatMessage>& messages) {
  const size_t n = messages.size();
  auto is_tool_response = [](const std::string& c) { return starts_with(c, "<tool_response>") && ends_with(c, "</tool_response>"); };
  size_t last_query = n - 1;
  for (size_t k = n; k-- > 0;)
    if (messages[k].role == "user" && !is_tool_response(messages[k].content)) {
      last_query = k;
      break;
    }
  std::string out;
  if (messages[0].role == "system") out += "<|im_start|>system\n" + messages[0].content + "<|im_end|>\n";
  for (size_t i = 0; i < n; ++i) {
    const ChatMessage& m = messages[i];
    if (m.role == "user" || (m.role == "system" && i > 0)) {
      out += "<|im_start|>" + m.role + "\n" + m.content + "<|im_end|>\n";
    } else if (m.role == "assistant") {
      std::string content = m.content, reasoning;
      if (contains(content, "</think>")) {
        content = lstrip(after_last(m.content, "</think>"), "\n");
        reasoning = lstrip(after_last(rstrip(before_first(m.content, "</think>"), "\n"), "<think>"), "\n");
      }
      if (i > last_query && (i == n - 1 || !reasoning.empty()))
        out += "<|im_start|>assistant\n<think>\n" + strip(reasoning, "\n") + "\n</think>\n\n" + lstrip(content, "\n");
      else
        out += "<|im_start|>assistant\n" + content;
      out += "<|im_end|>\n";
    } else if (m.role == "tool") {
      if (i == 0 || messages[i - 1].role != "tool") out += "<|im_start|>user";
      out += "\n<tool_response>\n" + m.content + "\n</tool_response>";
      if (i == n - 1 || messages[i + 1].role != "tool") out += "<|im_end|>\n";
    }
  }
  return out + "<|im_start|>assistant\n";
}

// Qwen2.5's template without tools: ChatML, a default system message when the conversation has
// none, consecutive tool results in one user turn.
std::string render_qwen25(const std::vector<ChatMessage>& messages) {
  const size_t n = messages.size();
  std::string out = messages[0].role == "system" ? "<|im_start|>system\n" + messages[0].content + "<|im_end|>\n"
                                                 : "<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n";
  for (size_t i = 0; i < n; ++i) {
    const ChatMessage& m = messages[i];
    if (m.role == "user" || (m.role == "system" && i > 0) || m.role == "assistant") {
      out += "<|im_start|>" + m.role + "\n" + m.content + "<|im_end|>\n";
    } else if (m.role == "tool") {
      if (i == 0 || messages[i - 1].role != "tool") out += "<|im_start|>user";
      out += "\n<tool_response>\n" + m.content + "\n</tool_response>";
      if (i == n - 1 || messages[i + 1].role != "tool") out += "<|im_end|>\n";
    }
  }
  return out + "<|im_start|>assistant\n";
}

// Llama-3.2's template without tools: a system header first, always, with its knowledge cutoff,
// today's date and the (trimmed) first system message; tool results as ipython turns, their text
// as a JSON string.
std::string render_llama32(const std::vector<ChatMessage>& messages, const std::string& bos) {
  const bool system = messages[0].role == "system";
  std::string out = bos + "<|start_header_id|>system<|end_header_id|>\n\nCutting Knowledge Date: December 2023\nToday Date: " +
                    local_time("%d %b %Y") +  // as strftime_now gives it in Hugging Face's engines
                    "\n\n" + (system ? trim(messages[0].content) : "") + "<|eot_id|>";
  for (size_t i = system ? 1 : 0; i < messages.size(); ++i) {
    const ChatMessage& m = messages[i];
    if (m.role == "tool")  // a string is iterable to Jinja, so the template writes it through tojson
      out += "<|start_header_id|>ipython<|end_header_id|>\n\n" +
             nlohmann::json(m.content).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "<|eot_id|>";
    else out += "<|start_header_id|>" + m.role + "<|end_header_id|>\n\n" + trim(m.content) + "<|eot_id|>";
  }
  return out + "<|start_header_id|>assistant<|end_header_id|>\n\n";
}

// Mistral-Nemo's template without tools: [INST]user[/INST] and assistant</s> turns after an
// optional first system message, which goes before the last message when that is a user's. A
// later system message or a tool result is refused, as the template raises. (Its check that the
// roles alternate never fires in Hugging Face's Jinja engine, the reference here, so turns in any
// order render.)
std::string render_mistral(const std::vector<ChatMessage>& messages, const std::string& bos, const std::string& eos) {
  const bool system = messages[0].role == "system";
  const size_t first = system ? 1 : 0;
  std::string out = bos;
  for (size_t i = first; i < messages.size(); ++i) {
    const ChatMessage& m = messages[i];
    if (m.role == "user") {
      const bool last = i + 1 == messages.size();
      out += "[INST]" + (last && system ? messages[0].content + "\n\n" : "") + m.content + "[/INST]";
    } else if (m.role == "assistant") {
      out += m.content + eos;
    } else if (m.role == "tool") {
      input_error("messages", "this model's chat template needs a tool_call_id of 9 characters for a tool result");
    } else {
      input_error("messages", "this model's chat template takes a system message only first");
    }
  }
  return out;
}

// A special token as tokenizer_config.json writes it: a string, or an object with its content.
std::string token_text(const nlohmann::json& config, const char* key) {
  if (!config.contains(key)) return "";
  const nlohmann::json& token = config[key];
  if (token.is_string()) return token.get<std::string>();
  if (token.is_object() && token.contains("content") && token["content"].is_string()) return token["content"].get<std::string>();
  return "";
}

}  // namespace

ChatTemplate ChatTemplate::from_config(const std::string& path) {
  const nlohmann::json config = read_json_file(path);
  if (!config.is_object()) input_error(path, "must be a JSON object");
  JsonObjectReader r(config, path);
  if (!r.has("chat_template")) return ChatTemplate(ChatFamily::Plain);
  if (!config["chat_template"].is_string())
    input_error(path, "chat_template is not one template (a list of named templates is not supported)");
  const std::string text = config["chat_template"].get<std::string>();
  const std::string bos = token_text(config, "bos_token"), eos = token_text(config, "eos_token");
  // Recognised by the markers each family's template writes; the ctest holds the rendering to the
  // real templates.
  if (contains(text, "<|start_header_id|>") && contains(text, "<|eot_id|>") && !contains(text, "tools") &&
      !contains(text, "date_string"))
    return ChatTemplate(ChatFamily::Llama3, bos);
  if (contains(text, "<|start_header_id|>") && contains(text, "date_string") && contains(text, "Cutting Knowledge Date"))
    return ChatTemplate(ChatFamily::Llama32, bos);
  if (contains(text, "<|im_start|>") && contains(text, "ns.last_query_index") && contains(text, "reasoning_content"))
    return ChatTemplate(ChatFamily::Qwen3);
  if (contains(text, "<|im_start|>") && contains(text, "You are Qwen, created by Alibaba Cloud. You are a helpful assistant."))
    return ChatTemplate(ChatFamily::Qwen25);
  if (contains(text, "[INST]") && contains(text, "[/INST]") && contains(text, "loop.last and system_message is defined"))
    return ChatTemplate(ChatFamily::Mistral, bos, eos);
  input_error(path, "chat_template is of no family specd renders (Llama-3, Llama-3.2, Qwen2.5, Qwen3, Mistral); the plain template needs none");
}

const char* ChatTemplate::name() const {
  switch (family_) {
    case ChatFamily::Llama3: return "llama3";
    case ChatFamily::Llama32: return "llama3.2";
    case ChatFamily::Qwen25: return "qwen2.5";
    case ChatFamily::Qwen3: return "qwen3";
    case ChatFamily::Mistral: return "mistral";
    case ChatFamily::Plain: break;
  }
  return "plain";
}

std::string ChatTemplate::render(const std::vector<ChatMessage>& messages) const {
  if (messages.empty()) input_error("messages", "a conversation needs at least one message");
  for (size_t i = 0; i < messages.size(); ++i) {
    const std::string& role = messages[i].role;
    if (role != "system" && role != "user" && role != "assistant" && role != "tool")
      input_error("messages", "message " + std::to_string(i) + " has role " + single_quoted(role) + " (system, user, assistant or tool)");
  }
  switch (family_) {
    case ChatFamily::Llama3: return render_llama3(messages, bos_token_);
    case ChatFamily::Llama32: return render_llama32(messages, bos_token_);
    case ChatFamily::Qwen25: return render_qwen25(messages);
    case ChatFamily::Qwen3: return render_qwen3(messages);
    case ChatFamily::Mistral: return render_mistral(messages, bos_token_, eos_token_);
    case ChatFamily::Plain: break;
  }
  return render_plain(messages);
}

}  // namespace specd
