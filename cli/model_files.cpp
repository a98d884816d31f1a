#include "model_files.h"

#include <filesystem>

#include "model/llama_model.h"
#include "util/error.h"

namespace specd::cli {

ModelFiles open_model_files(const std::string& dir, const std::string& tokenizer_path, const DeviceSpec& device) {
  std::string tokenizer_file = tokenizer_path.empty() ? dir + "/tokenizer.json" : tokenizer_path;
  Tokenizer tokenizer = Tokenizer::from_file(tokenizer_file);
  auto model = LlamaModel::load(dir, device);
  if (tokenizer.vocab_size() > model->config().vocab_size)
    input_error(tokenizer_file, "has " + std::to_string(tokenizer.vocab_size()) + " tokens but the model's vocab_size is " +
                                    std::to_string(model->config().vocab_size));
  std::vector<int32_t> stop_tokens;
  for (int64_t id : model->config().eos_token_ids) stop_tokens.push_back(static_cast<int32_t>(id));
  return ModelFiles{std::move(model), std::move(tokenizer), std::move(stop_tokens)};
}

ChatTemplate chat_template_of(const std::string& dir, const std::string& tokenizer_path) {
  const std::filesystem::path tokenizer_dir =
      tokenizer_path.empty() ? std::filesystem::path(dir) : std::filesystem::path(tokenizer_path).parent_path();
  const std::string config = (tokenizer_dir / "tokenizer_config.json").string();
  return std::filesystem::exists(config) ? ChatTemplate::from_config(config) : ChatTemplate(ChatFamily::Plain);
}

}  // namespace specd::cli
