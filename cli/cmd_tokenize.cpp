// specd tokenize: one line of text in, one line of token ids out.
#include <nlohmann/json.hpp>

#include <iostream>
#include <sstream>
#include <string>

#include "options.h"
#include "tokenizer/tokenizer.h"
#include "util/error.h"
#include "util/utf8.h"

namespace specd::cli {

int run_tokenize(const Args& args) {
  std::string model_dir, tokenizer_path, text;
  bool json = false, no_special = false;
  po::options_description desc("specd tokenize");
  desc.add_options()
      ("model", po::value(&model_dir), "model directory holding tokenizer.json")
      ("tokenizer", po::value(&tokenizer_path), "a tokenizer.json file")
      ("text", po::value(&text), "text to tokenize (default: each line of standard input)")
      ("no-special", po::bool_switch(&no_special), "do not add the special tokens of the tokenizer's post-processor (e.g. BOS)")
      ("json", po::bool_switch(&json), "print {\"ids\": [...], \"tokens\": [...]} per line");
  po::variables_map vm;
  if (!parse(args, desc, vm, "usage: specd tokenize (--model DIR | --tokenizer FILE) [--text TEXT] [--json]")) return 0;
  if (model_dir.empty() == tokenizer_path.empty()) input_error("tokenize", "give exactly one of --model and --tokenizer");
  Tokenizer tokenizer = Tokenizer::from_file(tokenizer_path.empty() ? model_dir + "/tokenizer.json" : tokenizer_path);

  // Built whole before printing: a bad line halfway leaves nothing on stdout, only its one line.
  std::ostringstream out;
  auto emit = [&](const std::string& line, const std::string& where) {
    if (!is_valid_utf8(line)) input_error(where, "is not valid UTF-8");
    std::vector<int32_t> ids = tokenizer.encode(line, !no_special);
    if (json) {
      nlohmann::json record = {{"ids", ids}, {"tokens", nlohmann::json::array()}};
      for (int32_t id : ids) record["tokens"].push_back(tokenizer.id_to_token(id));
      out << record.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    } else {
      for (size_t i = 0; i < ids.size(); ++i) out << (i ? " " : "") << ids[i];
      out << "\n";
    }
  };
  if (vm.count("text")) {
    emit(text, "--text");
  } else {
    std::string line;
    for (int64_t number = 1; std::getline(std::cin, line); ++number) emit(line, "standard input line " + std::to_string(number));
  }
  std::cout << out.str();
  return 0;
}

}  // namespace specd::cli
