// Hostile input files (issue 13): every reader refuses them with one InputError naming the file,
// before allocating by a number in the file, without blocking on a FIFO or reading a device.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <future>

#include <nlohmann/json.hpp>

#include "artifact/artifact_arrays.h"
#include "artifact/manifest.h"
#include "io/hdf5_file.h"
#include "io/json_reader.h"
#include "io/model_config.h"
#include "io/read_file.h"
#include "io/safetensors.h"
#include "io/sqlite_db.h"
#include "test_helpers.h"
#include "tokenizer/tokenizer.h"
#include "trace/trace_reader.h"
#include "trace/trace_sink.h"
#include "util/error.h"
#include "workload/workload.h"

using namespace specd;
using nlohmann::json;

namespace {

std::string error_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

json tokenizer_with_vocab(json vocab) {
  return {{"model", {{"type", "BPE"}, {"vocab", std::move(vocab)}, {"merges", json::array()}}}};
}

// The error of `read` on a FIFO at `path`; fails (and unblocks the reader) if it blocks.
std::string error_on_fifo(const std::string& path, const std::function<void()>& read) {
  REQUIRE(::mkfifo(path.c_str(), 0600) == 0);
  auto result = std::async(std::launch::async, [&] { return error_of(read); });
  if (result.wait_for(std::chrono::seconds(10)) != std::future_status::ready) {
    const int writer = ::open(path.c_str(), O_WRONLY | O_NONBLOCK);  // lets a blocked open return
    result.wait();
    ::close(writer);
    FAIL("reading a FIFO blocked: " << path);
  }
  return result.get();
}

}  // namespace

TEST_CASE("tokenizer.json vocabulary ids are bounded before anything is sized by them", "[hostile][tokenizer]") {
  test::ScopedTempDir dir("hostile-ids");
  const std::string path = dir.file("tokenizer.json");
  auto load = [&](const json& config) {
    test::write_text_file(path, config.dump());
    return error_of([&] { Tokenizer::from_file(path); });
  };
  // 100000000 used to size a table of 3.3 GB; 2^62 became id 0.
  CHECK(load(tokenizer_with_vocab({{"a", 0}, {"b", 100000000}})) ==
        path + ": model.vocab id of 'b' must be an integer from 0 to 16777215, not 100000000");
  CHECK(load(tokenizer_with_vocab({{"a", 0}, {"b", int64_t{1} << 62}})) ==
        path + ": model.vocab id of 'b' must be an integer from 0 to 16777215, not 4611686018427387904");
  CHECK(load(tokenizer_with_vocab({{"a", -1}})) == path + ": model.vocab id of 'a' must be an integer from 0 to 16777215, not -1");
  CHECK(load(tokenizer_with_vocab({{"a", 1.5}})) == path + ": model.vocab id of 'a' must be an integer from 0 to 16777215, not 1.5");
  json added = tokenizer_with_vocab({{"a", 0}});
  added["added_tokens"] = {{{"id", uint64_t{1} << 40}, {"content", "<s>"}}};
  CHECK(load(added) == path + ": added_tokens id must be an integer from 0 to 16777215, not 1099511627776");
  // A sparse vocabulary at the largest id costs its entries, not a table up to the id.
  test::write_text_file(path, tokenizer_with_vocab({{"a", 0}, {"b", 16777215}}).dump());
  const Tokenizer sparse = Tokenizer::from_file(path);
  CHECK(sparse.vocab_size() == 16777216);
  CHECK(sparse.id_to_token(16777215) == "b");
  CHECK(sparse.encode("ab", false) == std::vector<int32_t>{0, 16777215});
}

TEST_CASE("template post-processor ids are bounded", "[hostile][tokenizer]") {
  test::ScopedTempDir dir("hostile-template");
  const std::string path = dir.file("tokenizer.json");
  json config = tokenizer_with_vocab({{"a", 0}});
  config["post_processor"] = {{"type", "TemplateProcessing"},
                              {"single", {{{"SpecialToken", {{"id", "<s>"}}}}, {{"Sequence", {{"id", "A"}}}}}},
                              {"special_tokens", {{"<s>", {{"id", "<s>"}, {"ids", {int64_t{1} << 33}}}}}}};
  test::write_text_file(path, config.dump());
  CHECK(error_of([&] { Tokenizer::from_file(path); }) ==
        path + ": post_processor special_tokens id must be an integer from 0 to 16777215, not 8589934592");
}

TEST_CASE("a catastrophic pre-tokenizer regex is an InputError naming the tokenizer file", "[hostile][tokenizer]") {
  test::ScopedTempDir dir("hostile-regex");
  const std::string path = dir.file("tokenizer.json");
  json config = tokenizer_with_vocab({{"a", 0}, {"!", 1}});
  config["pre_tokenizer"] = {{"type", "Split"}, {"pattern", {{"Regex", "(a+)+$"}}}, {"behavior", "Isolated"}};
  test::write_text_file(path, config.dump());
  const Tokenizer tokenizer = Tokenizer::from_file(path);
  CHECK(tokenizer.encode("aaaa", false) == std::vector<int32_t>{0, 0, 0, 0});
  const std::string message = error_of([&] { tokenizer.encode(std::string(40, 'a') + "!", false); });
  CHECK_THAT(message, Catch::StartsWith(path + ": pre_tokenizer Split: regex '(a+)+$' gave up on the text ("));
  CHECK_THAT(message, Catch::Contains("limit"));
}

TEST_CASE("a Strip decoder with empty content is refused (it would loop start times)", "[hostile][tokenizer]") {
  test::ScopedTempDir dir("hostile-strip");
  const std::string path = dir.file("tokenizer.json");
  json config = tokenizer_with_vocab({{"a", 0}});
  config["decoder"] = {{"type", "Strip"}, {"content", ""}, {"start", uint64_t{1} << 62}, {"stop", 0}};
  test::write_text_file(path, config.dump());
  CHECK(error_of([&] { Tokenizer::from_file(path); }) == path + ": decoder Strip needs a non-empty content");
}

TEST_CASE("FIFOs and devices are refused as input files without blocking or reading them", "[hostile][files]") {
  test::ScopedTempDir dir("hostile-fifo");
  const std::string fifo_error = ": not a regular file";
  const std::string config = dir.file("config.json");
  CHECK(error_on_fifo(config, [&] { ModelConfig::from_file(config); }) == config + fifo_error);
  const std::string weights = dir.file("model.safetensors");
  CHECK(error_on_fifo(weights, [&] { SafetensorsFile::open(weights); }) == weights + fifo_error);
  const std::string tokenizer = dir.file("tokenizer.json");
  CHECK(error_on_fifo(tokenizer, [&] { Tokenizer::from_file(tokenizer); }) == tokenizer + fifo_error);
  const std::string workload = dir.file("w.jsonl");
  CHECK(error_on_fifo(workload, [&] { read_workload(workload); }) == workload + fifo_error);
  const std::string traces = dir.file("traces.sqlite");
  CHECK(error_on_fifo(traces, [&] { TraceReader reader(traces); }) == traces + fifo_error);
  const std::string arrays = dir.file("calibration.h5");
  CHECK(error_on_fifo(arrays, [&] { Hdf5File::open_read(arrays); }) == arrays + fifo_error);
  const std::string manifest_dir = dir.file("artifact");
  std::filesystem::create_directory(manifest_dir);
  CHECK(error_on_fifo(manifest_dir + "/manifest.json", [&] { read_manifest(manifest_dir); }) ==
        manifest_dir + "/manifest.json" + fifo_error);

  // Symlinks are followed, then the target must be a regular file: /dev/zero never ends.
  const std::string zero = dir.file("zero-tokenizer.json");
  std::filesystem::create_symlink("/dev/zero", zero);
  CHECK(error_of([&] { Tokenizer::from_file(zero); }) == zero + fifo_error);
  const std::string linked = dir.file("linked-config.json");
  test::write_text_file(dir.file("real.json"), "[]");
  std::filesystem::create_symlink(dir.file("real.json"), linked);
  CHECK(error_of([&] { ModelConfig::from_file(linked); }) == linked + ": not a JSON object");
}

TEST_CASE("whole-file reads are bounded", "[hostile][files]") {
  test::ScopedTempDir dir("hostile-size");
  const std::string path = dir.file("big.json");
  test::write_text_file(path, std::string(1000, ' '));
  CHECK(read_whole_file(path, 1000).size() == 1000);
  CHECK(error_of([&] { read_whole_file(path, 999); }) == path + ": is larger than the limit of 999 bytes");
}

TEST_CASE("1e999 anywhere in any JSON input is an InputError naming the file", "[hostile][json]") {
  test::ScopedTempDir dir("hostile-number");
  const std::string overflow = "invalid JSON: number overflow parsing '1e999'";
  const std::string config = dir.file("config.json");
  test::write_text_file(config, R"({"model_type": "llama", "rope_theta": 1e999})");
  CHECK(error_of([&] { ModelConfig::from_file(config); }) == config + ": " + overflow);
  const std::string tokenizer = dir.file("tokenizer.json");
  test::write_text_file(tokenizer, R"({"model": {"type": "BPE", "dropout": 1e999, "vocab": {}, "merges": []}})");
  CHECK(error_of([&] { Tokenizer::from_file(tokenizer); }) == tokenizer + ": " + overflow);
  const std::string workload = dir.file("w.jsonl");
  test::write_text_file(workload, "{\"id\": \"a\", \"category\": \"qa\", \"prompt\": \"p\", \"max_new_tokens\": 1e999}\n");
  CHECK(error_of([&] { read_workload(workload); }) == workload + ":1: " + overflow);
  std::filesystem::create_directory(dir.file("artifact"));
  test::write_text_file(dir.file("artifact/manifest.json"), "[1e999]");
  CHECK(error_of([&] { read_manifest(dir.file("artifact")); }) == dir.file("artifact/manifest.json") + ": " + overflow);
  const std::string weights = dir.file("model.safetensors");
  const std::string header = R"({"__metadata__": {"x": 1e999}})";
  std::string bytes(8, '\0');
  bytes[0] = static_cast<char>(header.size());
  test::write_text_file(weights, bytes + header);
  CHECK(error_of([&] { SafetensorsFile::open(weights); }) == weights + ": " + overflow);
}

TEST_CASE("a JSON object naming a key twice is an InputError naming the file and the key", "[hostile][json]") {
  // Parsers disagree on which of the two values wins: nlohmann keeps the last, others the first.
  test::ScopedTempDir dir("hostile-duplicate");
  const std::string twice = "invalid JSON: the key 'rope_theta' appears twice in one object";
  const std::string config = dir.file("config.json");
  test::write_text_file(config, R"({"model_type": "llama", "rope_theta": 10000, "rope_theta": 500000})");
  CHECK(error_of([&] { ModelConfig::from_file(config); }) == config + ": " + twice);
  std::filesystem::create_directory(dir.file("artifact"));
  test::write_text_file(dir.file("artifact/manifest.json"), R"({"schema_version": 3, "nested": {"a": 1, "a": 2}})");
  CHECK(error_of([&] { read_manifest(dir.file("artifact")); }) ==
        dir.file("artifact/manifest.json") + ": invalid JSON: the key 'a' appears twice in one object");
  // The same key in two different objects is fine.
  CHECK_NOTHROW(parse_json(R"({"a": {"a": 1}, "b": [{"a": 1}, {"a": 2}]})", "x"));
}

TEST_CASE("a workload field of the wrong type names the file, line and field", "[hostile][json]") {
  test::ScopedTempDir dir("hostile-types");
  const std::string path = dir.file("w.jsonl");
  const std::string base = "{\"id\": \"a\", \"category\": \"qa\", \"prompt\": \"p\"";
  const std::string good = base + ", \"max_new_tokens\": 8";
  auto error_with = [&](const std::string& extra) {
    test::write_text_file(path, good + "}\n" + good + extra + "}\n");
    return error_of([&] { read_workload(path); });
  };
  CHECK(error_with(", \"source\": 5") == path + ":2: field 'source' must be a string");
  CHECK(error_with(", \"license\": []") == path + ":2: field 'license' must be a string");
  CHECK(error_with(", \"reference\": {}") == path + ":2: field 'reference' must be a string");
  test::write_text_file(path, good + "}\n" + base + ", \"max_new_tokens\": 18446744073709551615}\n");
  CHECK(error_of([&] { read_workload(path); }) == path + ":2: field 'max_new_tokens' is too large");
}

TEST_CASE("JSON nested beyond the limit is an InputError, not a deep recursion", "[hostile][json]") {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  CHECK(error_of([&] { parse_json(deep, "x.json"); }) == "x.json: invalid JSON at byte 256: nested deeper than 256 levels");
  const std::string fine = std::string(256, '[') + std::string(256, ']');
  CHECK(parse_json(fine, "x.json").is_array());
  // Brackets inside strings do not count.
  CHECK(parse_json("[\"" + std::string(1000, '[') + "\\\"\"]", "x.json").size() == 1);
}

TEST_CASE("a huge JSON value is never echoed whole into an error line", "[hostile][json]") {
  const std::string huge(1300000, 'x');
  const std::string message = error_of([&] { ModelConfig::from_json({{"model_type", huge}}, "config.json"); });
  CHECK(message == "config.json: unsupported model_type '" + std::string(kMaxQuotedBytes, 'x') +
                       "...' (1300000 bytes) (supported: llama, mistral, qwen2)");
  const std::string parse_message = error_of([&] { parse_json("[\"" + huge + "\x01\"]", "big.json"); });
  CHECK(parse_message.size() < 400);
  CHECK_THAT(parse_message, Catch::StartsWith("big.json: invalid JSON at byte 1300003: "));
  CHECK(parse_message.find('\n') == std::string::npos);
  // Cut at a UTF-8 boundary: no half character, and the full length.
  CHECK(single_quoted(std::string(63, 'a') + "é") == "'" + std::string(63, 'a') + "...' (65 bytes)");
  CHECK(json_excerpt(json::array({1, 2})) == "[1,2]");
}

TEST_CASE("malformed JSON columns of a trace file are InputErrors naming it", "[hostile][traces]") {
  test::ScopedTempDir dir("hostile-traces");
  const std::string path = dir.file("t.sqlite");
  {
    SqliteTraceSink sink(path);
    const int run = sink.add_run({"specd bench", "t", "", "csd", "{}", "0.1.0", "", ""});
    StepTrace step;
    step.drafter = "csd";
    step.decision_scores = "[-1.5]";
    sink.write_request(run, {{0, "qa-0", "qa", 3}, {step}, {{1, 2}, 1.0, ""}});
    sink.finish_run(run);
  }
  auto corrupt = [&](const std::string& sql) {
    sqlite::Database db(path, sqlite::Database::Mode::ReadWriteCreate);
    db.exec(sql);
  };
  TraceReader(path).requests(1);
  corrupt("UPDATE requests SET output_tokens = '[1, \"x\"]'");
  CHECK(error_of([&] { TraceReader(path).requests(1); }) ==
        path + ": run 1 request 0 output_tokens: must be a list of token ids, not \"x\"");
  corrupt("UPDATE requests SET output_tokens = '[1e999]'");
  CHECK_THAT(error_of([&] { TraceReader(path).requests(1); }), Catch::Contains("output_tokens: invalid JSON: number overflow"));
  corrupt("UPDATE steps SET decision_scores = '[oops'");
  std::ostringstream out;
  CHECK_THAT(error_of([&] { TraceReader(path).export_steps(1, TraceFormat::JsonLines, out); }),
             Catch::StartsWith(path + ": run 1 step 0 decision_scores: invalid JSON at byte"));
  corrupt("UPDATE steps SET decision_scores = '[]', detail = '{\"pruning\":'");
  std::ostringstream cut;
  CHECK_THAT(error_of([&] { TraceReader(path).export_steps(1, TraceFormat::JsonLines, cut); }),
             Catch::StartsWith(path + ": run 1 request 0 step 0 detail: invalid JSON at byte"));
  // A detail of the wrong shape is refused when the steps are read, naming the field.
  corrupt("UPDATE steps SET detail = '{\"acceptance\":{\"lts\":[{\"node\":\"x\"}]}}'");
  CHECK(error_of([&] { TraceReader(path).steps(1); }) ==
        path + ": run 1 request 0 step 0: field 'detail.acceptance.lts[0].node' must be an integer from 0 to 2147483647, not \"x\"");
  corrupt("UPDATE steps SET detail = '{\"acceptance\":{\"rescues\":[{\"draft\":-4,\"target\":1,\"gap\":0}]}}'");
  CHECK_THAT(error_of([&] { TraceReader(path).steps(1); }), Catch::Contains("field 'detail.acceptance.rescues[0].draft' must be an integer from 0 to 2147483647, not -4"));
  corrupt("UPDATE steps SET detail = '{\"drafting\":{\"trigger\":[1]}}'");
  CHECK(error_of([&] { TraceReader(path).steps(1); }) ==
        path + ": run 1 request 0 step 0: field 'detail.drafting.trigger' must be null, a boolean, a number or a string");
  corrupt("UPDATE steps SET detail = '{\"verdict\":1}'");
  CHECK_THAT(error_of([&] { TraceReader(path).steps(1); }), Catch::EndsWith("field 'detail' has an unknown member 'verdict' (drafting, pruning and acceptance are known)"));
  // Invalid UTF-8 in a text column is exported replaced, not an internal error.
  corrupt("UPDATE steps SET decision_scores = '[]', detail = NULL; UPDATE requests SET category = CAST(X'FF41' AS TEXT)");
  std::ostringstream replaced;
  TraceReader(path).export_steps(1, TraceFormat::JsonLines, replaced);
  CHECK_THAT(replaced.str(), Catch::Contains("\"category\":\"\xEF\xBF\xBD" "A\""));
}

TEST_CASE("SAM corpus offsets beyond the tokens are refused before they are used", "[hostile][artifact]") {
  // Found by fuzz_artifact_hdf5: offsets [0, 100, 5] over 5 tokens copied 100 tokens from a
  // vector of 5 before the decrease at row 2 was seen.
  test::ScopedTempDir dir("hostile-offsets");
  const std::string path = dir.file("calibration.h5");
  auto error_for = [&](const std::vector<int64_t>& offsets) {
    Hdf5File file = Hdf5File::create(path);
    file.write_root_attribute("schema_version", 1);
    file.write("/sam_corpus/tokens", std::vector<int32_t>{1, 2, 3, 4, 5});
    file.write("/sam_corpus/offsets", offsets);
    file.close();
    return error_of([&] { read_sam_documents(open_artifact_arrays(path)); });
  };
  CHECK(error_for({0, 100, 5}) == path + ": /sam_corpus/offsets row 1 is beyond the last offset");
  CHECK(error_for({0, 3, 2, 5}) == path + ": /sam_corpus/offsets decreases at row 2");
  CHECK(error_for({0, 2, 5}) == "no error");
}
