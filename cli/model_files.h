#pragma once
// A model directory opened for decoding: the model, its tokenizer and its stop tokens,
// checked against each other.
#include <memory>
#include <string>
#include <vector>

#include "model/device.h"
#include "tokenizer/chat_template.h"
#include "tokenizer/tokenizer.h"

namespace specd {
class LlamaModel;
}

namespace specd::cli {

struct ModelFiles {
  std::shared_ptr<LlamaModel> model;
  Tokenizer tokenizer;
  std::vector<int32_t> stop_tokens;
};

// tokenizer_path empty: DIR/tokenizer.json. Throws InputError on any inconsistency.
ModelFiles open_model_files(const std::string& dir, const std::string& tokenizer_path, const DeviceSpec& device);

// The chat template of the tokenizer's directory (DIR, or tokenizer_path's): its
// tokenizer_config.json's, or the plain template when there is none.
ChatTemplate chat_template_of(const std::string& dir, const std::string& tokenizer_path);

}  // namespace specd::cli
