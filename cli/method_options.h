#pragma once
// The options that define a decoding method (draft lengths, trees, PLD, SAM, the draft budget),
// shared by specd generate --method and specd bench --methods.
#include <string>

#include "decode/methods.h"
#include "io/model_config.h"
#include "options.h"

namespace specd::cli {

struct MethodArgs {
  MethodOptions options;
  std::string draft_dir;
  std::string budget_mode = "auto";
  std::string sam_corpus_path;
  std::string pld_match = "earliest";
};

// Adds --draft, --gamma, --tree-*, --pld-*, --sam-* and --draft-budget.
void add_method_options(po::options_description& desc, MethodArgs& args);
// Checks what parsing cannot (InputError naming the option) and applies --draft-budget.
void finish_method_options(MethodArgs& args);
// Loads --sam-corpus, if given, for a target whose tokenizer is `tokenizer_path`: InputError naming
// the file when it was made with another tokenizer or vocabulary.
void load_sam_corpus(MethodArgs& args, const std::string& tokenizer_path, const ModelConfig& target);

}  // namespace specd::cli
