// Hostile input files through the specd binary (issue 13): one line naming the file (and the
// field), exit code 2, nothing on standard output; never a hang, a huge allocation or exit 1.
#include <sys/stat.h>

#include "catch_torch.h"

#include <nlohmann/json.hpp>

#include "cli_helpers.h"
#include "fixture_models.h"

using namespace specd;
using namespace specd::test;
using nlohmann::json;

namespace {

std::string edited_config(const std::string& dir, const std::function<void(json&)>& edit) {
  json config = json::parse(slurp(dir + "/config.json"));
  edit(config);
  return config.dump();
}

}  // namespace

TEST_CASE("hostile tokenizer.json files: one line naming the file", "[cli][errors][hostile]") {
  const std::string dir = fixture_dir("cli-hostile-tokenizer");
  SECTION("a vocabulary id of 100000000 (it used to allocate 3.3 GB)") {
    json tokenizer = json::parse(slurp(tiny_tokenizer()));
    tokenizer["model"]["vocab"]["zz"] = 100000000;
    write_text(dir + "/tokenizer.json", tokenizer.dump());
    require_one_line_error(run_cli("tokenize --tokenizer " + dir + "/tokenizer.json --text hi"),
                           "tokenizer.json: model.vocab id of 'zz' must be an integer from 0 to 16777215, not 100000000");
  }
  SECTION("a symlink to /dev/zero") {
    std::filesystem::create_symlink("/dev/zero", dir + "/tokenizer.json");
    require_one_line_error(run_cli("tokenize --tokenizer " + dir + "/tokenizer.json --text hi"), "tokenizer.json: not a regular file");
  }
  SECTION("a catastrophic pre-tokenizer regex") {
    json tokenizer = json::parse(slurp(tiny_tokenizer()));
    tokenizer["pre_tokenizer"] = {{"type", "Split"}, {"pattern", {{"Regex", "(a+)+$"}}}, {"behavior", "Isolated"}};
    write_text(dir + "/tokenizer.json", tokenizer.dump());
    require_one_line_error(run_cli("tokenize --tokenizer " + dir + "/tokenizer.json --text " + std::string(40, 'a') + "!"),
                           "tokenizer.json: pre_tokenizer Split: regex '(a+)+$' gave up on the text");
  }
}

TEST_CASE("hostile model files: one line naming the file and field", "[cli][errors][hostile]") {
  const std::string dir = model_with_tokenizer("cli-hostile-model");
  SECTION("max_position_embeddings 2000000000 (it used to allocate a 16 GB KV cache)") {
    write_text(dir + "/config.json", edited_config(dir, [](json& c) { c["max_position_embeddings"] = 2000000000; }));
    require_one_line_error(run_cli("generate --model " + dir + " --prompt hi --max-new-tokens 2"),
                           "config.json: field 'max_position_embeddings' is 2000000000, above the limit of 16777216");
  }
  SECTION("1e999 in config.json") {
    std::string config = edited_config(dir, [](json& c) { c["rope_theta"] = 12345; });
    config.replace(config.find("12345"), 5, "1e999");
    write_text(dir + "/config.json", config);
    require_one_line_error(run_cli("generate --model " + dir + " --prompt hi --max-new-tokens 2"),
                           "config.json: invalid JSON: number overflow parsing '1e999'");
  }
  SECTION("config.json is a FIFO (it used to block forever)") {
    std::filesystem::remove(dir + "/config.json");
    REQUIRE(::mkfifo((dir + "/config.json").c_str(), 0600) == 0);
    require_one_line_error(run_cli("generate --model " + dir + " --prompt hi --max-new-tokens 2"), "config.json: not a regular file");
  }
  SECTION("model.safetensors is a FIFO") {
    std::filesystem::remove(dir + "/model.safetensors");
    REQUIRE(::mkfifo((dir + "/model.safetensors").c_str(), 0600) == 0);
    require_one_line_error(run_cli("generate --model " + dir + " --prompt hi --max-new-tokens 2"),
                           "model.safetensors: not a regular file");
  }
}

TEST_CASE("a workload field of the wrong type: one line naming the file, line and field", "[cli][errors][hostile]") {
  const std::string dir = model_with_tokenizer("cli-hostile-workload");
  write_text(dir + "/w.jsonl", R"({"id": "a", "category": "qa", "prompt": "hi", "max_new_tokens": 2, "source": 5})" "\n");
  require_one_line_error(run_cli("generate --model " + dir + " --workload " + dir + "/w.jsonl --prompt-index 0"),
                         "w.jsonl:1: field 'source' must be a string");
}
