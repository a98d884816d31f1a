// The specd binary as a user meets it: a working generate and tokenize, and for each kind of bad
// input one line naming the file or argument, exit code 2, and nothing on standard output.
#include <sys/wait.h>
#include <unistd.h>

#include "catch_torch.h"

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli_helpers.h"
#include "fixture_models.h"
#include "io/safetensors.h"
#include "artifact/artifact_reader.h"
#include "tokenizer/tokenizer.h"
#include "util/machine.h"

using namespace specd;
using namespace specd::test;

namespace {

// Rewrites model.safetensors after `edit` changed its tensor list.
void rewrite_weights(const std::string& dir, const std::function<void(std::vector<TensorView>&)>& edit) {
  std::vector<TensorView> views;
  std::vector<std::vector<uint8_t>> storage;
  {
    auto file = SafetensorsFile::open(dir + "/model.safetensors");
    for (const auto& v : file.tensors()) {
      storage.emplace_back(static_cast<const uint8_t*>(v.data), static_cast<const uint8_t*>(v.data) + v.nbytes);
      views.push_back(v);
      views.back().data = storage.back().data();
    }
  }
  edit(views);
  write_safetensors(dir + "/model.safetensors", views);
}

}  // namespace

TEST_CASE("specd generate prints a continuation and a stats line", "[cli]") {
  std::string dir = model_with_tokenizer("cli-generate");
  CliResult r = run_cli("generate --model " + dir + " --prompt 'def the thing' --max-new-tokens 12");
  CAPTURE(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(!r.out.empty());
  CHECK(r.err.find("prompt tokens:") != std::string::npos);
  CHECK(r.err.find("tokens/s") != std::string::npos);
  // Greedy is deterministic.
  CHECK(run_cli("generate --model " + dir + " --prompt 'def the thing' --max-new-tokens 12").out == r.out);
}

TEST_CASE("specd generate --method gives AR's text at T=0 with every speculative method", "[cli]") {
  std::string dir = model_with_tokenizer("cli-generate-methods");
  std::string draft = test::write_model("cli-generate-draft", test::tiny_config("llama"), DType::BF16, 77);
  const std::string base = "generate --model " + dir + " --draft " + draft + " --prompt 'def the thing def the thing' --max-new-tokens 16";
  CliResult ar = run_cli(base);
  REQUIRE(ar.exit_code == 0);
  for (const std::string method : {"sd", "sd-tree", "pld", "sam"}) {
    for (const std::string budget : {"auto", "fixed"}) {
      CliResult r = run_cli(base + " --method " + method + " --draft-budget " + budget);
      CAPTURE(method, budget, r.err);
      REQUIRE(r.exit_code == 0);
      CHECK(r.out == ar.out);
      CHECK(r.err.find(method + ": ") != std::string::npos);  // steps, tokens/step, acceptance
    }
  }
  require_one_line_error(run_cli(base + " --method beam"), "--method");
  require_one_line_error(run_cli(base + " --method pld --draft-budget some"), "--draft-budget");
  require_one_line_error(run_cli(base + " --method pld --pld-match middle"), "--pld-match");
  CHECK(run_cli(base + " --method pld --pld-match latest").out == ar.out);
}

// The demo pairs as a new user meets them: no model named decodes with the large target and, for
// a draft-model method, its draft demo-large-draft; demo-target's own draft is demo-draft; any other
// target must name its draft. Speculative decoding gives AR's text at T=0 on both pairs.
TEST_CASE("specd generate uses the large demo pair by default and the demo targets' own drafts", "[cli][demo]") {
  const std::string models = std::string(SPECD_SOURCE_DIR) + "/data/models/";
  const std::string prompt = " --prompt 'import os\nimport sys\n\ndef main(' --max-new-tokens 24 --draft-budget fixed";
  auto sd_counts = [](const CliResult& r) {
    const size_t at = r.err.find(" | sd: ");
    return at == std::string::npos ? std::string() : r.err.substr(at, r.err.find('\n', at) - at);
  };
  const CliResult ar = run_cli("generate" + prompt);
  CAPTURE(ar.err);
  REQUIRE(ar.exit_code == 0);
  CHECK(run_cli("generate --model " + models + "demo-large-target" + prompt).out == ar.out);
  const CliResult sd = run_cli("generate --method sd" + prompt);
  CAPTURE(sd.err);
  REQUIRE(sd.exit_code == 0);
  CHECK(sd.out == ar.out);
  REQUIRE(!sd_counts(sd).empty());
  CHECK(sd_counts(run_cli("generate --method sd --draft " + models + "demo-large-draft" + prompt)) == sd_counts(sd));

  const std::string small = "generate --model " + models + "demo-target" + prompt;
  const CliResult small_sd = run_cli(small + " --method sd");
  CAPTURE(small_sd.err);
  REQUIRE(small_sd.exit_code == 0);
  CHECK(small_sd.out == run_cli(small).out);
  CHECK(sd_counts(run_cli(small + " --method sd --draft " + models + "demo-draft")) == sd_counts(small_sd));

  require_one_line_error(run_cli("generate --model " + model_with_tokenizer("cli-no-demo-pair") + " --method sd --prompt 'x'"), "--draft");
}

// A request's speculative steps depend on its inputs only: run in separate processes (and with
// different thread counts), sd-tree drafts the same trees, so its text and its step and
// acceptance counts agree. The draft is the target: deep trees, many nodes accepted. A fixed
// draft budget: the adaptive one follows measured timings.
TEST_CASE("specd generate --method sd-tree drafts the same trees in separate processes", "[cli]") {
  std::string dir = model_with_tokenizer("cli-tree-repro");
  const std::string base = "generate --model " + dir + " --draft " + dir +
                           " --method sd-tree --draft-budget fixed --tree-top-k 3 --tree-depth 4 --tree-nodes 10"
                           " --prompt 'the thing is the thing' --max-new-tokens 60 --threads ";
  auto step_counts = [](const CliResult& r) {
    const size_t at = r.err.find(" | sd-tree: ");
    return at == std::string::npos ? std::string() : r.err.substr(at, r.err.find('\n', at) - at);
  };
  const CliResult first = run_cli(base + "1");
  CAPTURE(first.err);
  REQUIRE(first.exit_code == 0);
  REQUIRE(!step_counts(first).empty());
  for (const char* threads : {"1", "2", "1"}) {
    const CliResult again = run_cli(base + threads);
    CAPTURE(threads, again.err);
    REQUIRE(again.exit_code == 0);
    CHECK(again.out == first.out);
    CHECK(step_counts(again) == step_counts(first));
  }
}

TEST_CASE("specd calibrate sam-corpus writes a static corpus into the artifact that sam searches, still giving AR's text", "[cli]") {
  std::string dir = model_with_tokenizer("cli-sam-corpus");
  const std::string prompts = std::string(SPECD_BINARY_DIR) + "/test-fixtures/sam-prompts.jsonl";
  write_text(prompts,
             "{\"id\": \"c-1\", \"category\": \"calibration\", \"prompt\": \"def the thing\", \"max_new_tokens\": 24}\n"
             "{\"id\": \"c-2\", \"category\": \"calibration\", \"prompt\": \"the quick fox\", \"max_new_tokens\": 24}\n");
  const std::string artifact = std::string(SPECD_BINARY_DIR) + "/test-fixtures/sam-artifact";
  remove_tree(artifact);
  CliResult made = run_cli("calibrate sam-corpus --target " + dir + " --prompts " + prompts + " --out " + artifact);
  CAPTURE(made.err);
  REQUIRE(made.exit_code == 0);
  CHECK(made.out.find("2 documents") != std::string::npos);
  const Artifact read = read_artifact(artifact);
  REQUIRE(read.sam_corpus);
  REQUIRE(read.sam_corpus->documents.size() == 2);
  CHECK(read.sam_corpus->documents[0].size() == 24);

  // Greedy answers to the same prompt are in the corpus: sam drafts them, and the text is AR's.
  const std::string base = "generate --model " + dir + " --prompt 'def the thing' --max-new-tokens 24";
  CliResult ar = run_cli(base);
  CliResult sam = run_cli(base + " --method sam --draft " + dir + " --artifact " + artifact + " --sam-len-bias 0");
  CAPTURE(sam.err);
  REQUIRE(sam.exit_code == 0);
  CHECK(sam.out == ar.out);
  const size_t stats = sam.err.find("sam: ");
  REQUIRE(stats != std::string::npos);
  CHECK(std::stoi(sam.err.substr(stats + 5)) <= 20);  // steps: the corpus copy of the answer was drafted

  // An artifact made for another target (another tokenizer) is refused.
  std::string other = test::write_model("cli-sam-other", test::tiny_config("llama"));
  std::string tokenizer = slurp(tiny_tokenizer());
  write_text(other + "/tokenizer.json", tokenizer.substr(0, tokenizer.rfind('}')) + " }");
  require_one_line_error(run_cli("generate --model " + other + " --draft " + other + " --prompt 'def' --method sam --artifact " + artifact),
                         artifact);
  require_one_line_error(run_cli("calibrate sam-corpus --target " + dir + " --prompts " + prompts), "--out");
  require_one_line_error(run_cli("calibrate sam-corpus --target " + dir + " --prompts /nonexistent.jsonl --out " + artifact),
                         "/nonexistent.jsonl");
}

TEST_CASE("specd tokenize prints the tokenizer's ids, one line per line", "[cli]") {
  std::string lines = std::string(SPECD_BINARY_DIR) + "/test-fixtures/lines.txt";
  write_text(lines, "def the thing\nthe  quick\tfox<|endoftext|>\n\n");
  CliResult r = run_cli("tokenize --tokenizer " + tiny_tokenizer(), lines);
  REQUIRE(r.exit_code == 0);
  Tokenizer tokenizer = Tokenizer::from_file(tiny_tokenizer());
  std::string expected;
  for (std::string line : {"def the thing", "the  quick\tfox<|endoftext|>", ""}) {
    std::string ids;
    for (int32_t id : tokenizer.encode(line)) ids += (ids.empty() ? "" : " ") + std::to_string(id);
    expected += ids + "\n";
  }
  CHECK(r.out == expected);
  CHECK(r.out.find("300") != std::string::npos);  // the special token kept whole
  CliResult json = run_cli("tokenize --tokenizer " + tiny_tokenizer() + " --json --text 'the'");
  CHECK(json.out.find("\"ids\"") != std::string::npos);
}

TEST_CASE("bad model files give one line naming the file, exit code 2", "[cli][errors]") {
  SECTION("missing config.json") {
    std::string dir = model_with_tokenizer("cli-no-config");
    std::filesystem::remove(dir + "/config.json");
    require_one_line_error(run_cli("generate --model " + dir + " --prompt hi"), "config.json");
  }
  SECTION("malformed config.json") {
    std::string dir = model_with_tokenizer("cli-bad-config");
    write_text(dir + "/config.json", "{\"model_type\": \"llama\", ");
    require_one_line_error(run_cli("generate --model " + dir + " --prompt hi"), "config.json");
  }
  SECTION("unknown model_type") {
    std::string dir = model_with_tokenizer("cli-gpt2");
    std::string config = slurp(dir + "/config.json");
    config.replace(config.find("\"llama\""), 7, "\"gpt2\"");
    write_text(dir + "/config.json", config);
    require_one_line_error(run_cli("generate --model " + dir + " --prompt hi"), "gpt2");
  }
  SECTION("truncated safetensors") {
    std::string dir = model_with_tokenizer("cli-truncated");
    std::string weights = slurp(dir + "/model.safetensors");
    write_text(dir + "/model.safetensors", weights.substr(0, weights.size() / 2));
    require_one_line_error(run_cli("generate --model " + dir + " --prompt hi"), "model.safetensors");
  }
  SECTION("a tensor of the wrong shape") {
    std::string dir = model_with_tokenizer("cli-shape");
    rewrite_weights(dir, [](std::vector<TensorView>& views) {
      for (auto& v : views)
        if (v.name == "model.layers.1.mlp.up_proj.weight") std::swap(v.shape[0], v.shape[1]);
    });
    require_one_line_error(run_cli("generate --model " + dir + " --prompt hi"), "model.layers.1.mlp.up_proj.weight");
  }
  SECTION("a tensor of the wrong dtype") {
    std::string dir = model_with_tokenizer("cli-dtype");
    rewrite_weights(dir, [](std::vector<TensorView>& views) {
      for (auto& v : views)
        if (v.name == "model.norm.weight") v.dtype = DType::I32;
    });
    require_one_line_error(run_cli("generate --model " + dir + " --prompt hi"), "model.norm.weight");
  }
  SECTION("a missing tensor") {
    std::string dir = model_with_tokenizer("cli-missing-tensor");
    rewrite_weights(dir, [](std::vector<TensorView>& views) {
      views.erase(std::remove_if(views.begin(), views.end(), [](const TensorView& v) { return v.name == "model.layers.0.self_attn.k_proj.weight"; }),
                  views.end());
    });
    require_one_line_error(run_cli("generate --model " + dir + " --prompt hi"), "model.layers.0.self_attn.k_proj.weight");
  }
  SECTION("a broken tokenizer.json") {
    std::string dir = model_with_tokenizer("cli-bad-tokenizer");
    write_text(dir + "/tokenizer.json", "{\"model\": {\"type\": \"WordLevel\"");
    require_one_line_error(run_cli("generate --model " + dir + " --prompt hi"), "tokenizer.json");
  }
}

TEST_CASE("bad prompts and options give one line naming the argument, exit code 2", "[cli][errors]") {
  std::string dir = model_with_tokenizer("cli-prompts");
  SECTION("a prompt longer than the context") {
    std::string file = dir + "/long-prompt.txt";
    write_text(file, std::string(400, 'x') + " " + std::string(400, 'q'));
    require_one_line_error(run_cli("generate --model " + dir + " --prompt-file " + file), "context");
  }
  SECTION("invalid UTF-8 in the prompt") {
    std::string file = dir + "/latin1.txt";
    write_text(file, "caf\xE9 au lait");
    require_one_line_error(run_cli("generate --model " + dir + " --prompt-file " + file), "UTF-8");
  }
  SECTION("a missing prompt file") { require_one_line_error(run_cli("generate --model " + dir + " --prompt-file /nonexistent/p.txt"), "/nonexistent/p.txt"); }
  SECTION("an unknown device") { require_one_line_error(run_cli("generate --model " + dir + " --prompt hi --device tpu"), "device"); }
  SECTION("CUDA on a libtorch build without it") {
    if (!at::hasCUDA()) require_one_line_error(run_cli("generate --model " + dir + " --prompt hi --device cuda"), "device");
  }
  SECTION("a workload index out of range") {
    std::string file = dir + "/w.jsonl";
    write_text(file, "{\"id\": \"a\", \"category\": \"qa\", \"prompt\": \"p\", \"max_new_tokens\": 8}\n");
    require_one_line_error(run_cli("generate --model " + dir + " --workload " + file + " --prompt-index 3"), "--prompt-index");
  }
  SECTION("an out-of-range top-p") { require_one_line_error(run_cli("generate --model " + dir + " --prompt hi --top-p 1.5"), "--top-p"); }
  SECTION("an unknown option") { require_one_line_error(run_cli("generate --model " + dir + " --prompt hi --beams 4"), "beams"); }
  SECTION("an unknown command") {
    CliResult r = run_cli("frobnicate");
    CHECK(r.exit_code == 2);
  }
}

TEST_CASE("specd bench --methods compares every method with AR and its traces read back", "[cli][bench]") {
  std::string target = model_with_tokenizer("cli-bench-target");
  std::string draft = test::write_model("cli-bench-draft", test::tiny_config("llama"), DType::BF16, 77);
  std::string workloads = test::fixture_dir("cli-bench-workloads");  // fresh: a rerun must not see the broken file below
  write_text(workloads + "/qa.jsonl",
             "{\"id\": \"qa-1\", \"category\": \"qa\", \"prompt\": \"def the thing def the thing\", \"max_new_tokens\": 12}\n");
  write_text(workloads + "/multi_turn.jsonl",
             "{\"id\": \"mt-1\", \"category\": \"multi_turn\", \"turns\": [\"the quick fox\", \"the lazy dog\"], \"max_new_tokens\": 8}\n");
  std::string traces = std::string(SPECD_BINARY_DIR) + "/test-fixtures/cli-bench-traces.sqlite";
  std::string json = std::string(SPECD_BINARY_DIR) + "/test-fixtures/cli-bench.json";
  std::filesystem::remove(traces);
  CliResult r = run_cli("bench --methods sd,sd-tree,pld,sam --model " + target + " --draft " + draft + " --workloads " + workloads +
                        " --max-prompts 1 --repeats 1 --traces " + traces + " --json " + json);
  CAPTURE(r.err);
  REQUIRE(r.exit_code == 0);
  for (const char* method : {"ar", "sd", "sd-tree", "pld", "sam"}) CHECK(r.out.find(std::string(" ") + method + " ") != std::string::npos);
  CHECK(r.out.find("overall") != std::string::npos);
  CHECK(r.out.find("2/2") != std::string::npos);  // greedy: every method equals AR on both prompts
  CHECK(r.out.find("0/2") == std::string::npos);
  CHECK(r.out.find("1/2") == std::string::npos);
  CHECK(slurp(json).find("\"speedup\"") != std::string::npos);
  CHECK(slurp(json).find("\"speedup_ci95\"") != std::string::npos);

  CliResult listed = run_cli("traces list --file " + traces);
  REQUIRE(listed.exit_code == 0);
  CHECK(std::count(listed.out.begin(), listed.out.end(), '\n') == 6);  // header + 5 runs
  CHECK(listed.out.find("\t" + read_cpuinfo().model + ", ") != std::string::npos);  // the machine each run was measured on
  CliResult exported = run_cli("traces export --file " + traces + " --run 2 --format jsonl");
  REQUIRE(exported.exit_code == 0);
  CHECK(exported.out.find("\"drafter\":\"draft-chain\"") != std::string::npos);

  require_one_line_error(run_cli("bench --methods sd,medusa --model " + target + " --draft " + draft + " --workloads " + workloads), "medusa");
  write_text(workloads + "/broken.jsonl", "{\"id\": \"b\"}\n");
  require_one_line_error(run_cli("bench --methods pld --model " + target + " --workloads " + workloads), "broken.jsonl:1");
}

namespace {

// A fresh workloads directory with one code-editing prompt that repeats itself (retrieval
// drafters find matches in it).
std::string repeating_workloads(const std::string& name) {
  std::string workloads = test::fixture_dir(name);
  write_text(workloads + "/code_editing.jsonl",
             "{\"id\": \"ce-1\", \"category\": \"code_editing\", \"prompt\": \"def the thing def the thing x = y + 1\", "
             "\"max_new_tokens\": 24}\n");
  return workloads;
}

}  // namespace

TEST_CASE("specd bench prints and reports the drafting statistics of methods that trace them", "[cli][bench][adapld]") {
  std::string target = model_with_tokenizer("cli-bench-drafting-target");
  std::string workloads = repeating_workloads("cli-bench-drafting-workloads");
  std::string json = std::string(SPECD_BINARY_DIR) + "/test-fixtures/cli-bench-drafting.json";
  CliResult r = run_cli("bench --methods pld,adapld --model " + target + " --workloads " + workloads + " --max-prompts 1 --repeats 1 --json " + json);
  CAPTURE(r.out, r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("adapld drafting:") != std::string::npos);
  CHECK(r.out.find("pld drafting:") == r.out.find("adapld drafting:") + 3);  // pld traces no drafting details
  CHECK(r.out.find("% of") != std::string::npos);
  const auto report = nlohmann::json::parse(slurp(json));
  // adapld against its paper's baseline, pld, prompt by prompt; a baseline itself has no such ratio.
  CHECK(report["results"]["adapld"]["overall"]["over_baseline"].get<double>() > 0);
  CHECK(report["results"]["adapld"]["overall"].contains("over_baseline_ci95"));
  CHECK(!report["results"]["pld"]["overall"].contains("over_baseline"));
  CHECK(r.out.find(" over pld ") != std::string::npos);
  REQUIRE(report["drafting"].contains("adapld"));
  CHECK_FALSE(report["drafting"].contains("pld"));
  const auto& adapld = report["drafting"]["adapld"];
  int64_t retrieval = 0, reuse = 0, lengths = 0;
  for (const auto& [value, n] : adapld["values"]["retrieval"].items()) retrieval += n.get<int64_t>();
  for (const auto& [value, n] : adapld["values"]["reuse"].items()) reuse += n.get<int64_t>();
  for (const auto& [length, n] : adapld["accepted_length"].items()) lengths += n.get<int64_t>();
  CHECK(adapld["steps"].get<int64_t>() > 0);
  CHECK(retrieval == adapld["steps"].get<int64_t>());  // one retrieval outcome and one reuse kind per step
  CHECK(reuse == adapld["steps"].get<int64_t>());
  CHECK(lengths == adapld["reuse_steps"].get<int64_t>());
}

TEST_CASE("specd bench measures a variant of a method beside the method, paired by prompt", "[cli][bench]") {
  std::string target = model_with_tokenizer("cli-bench-variant-target");
  std::string workloads = repeating_workloads("cli-bench-variant-workloads");
  std::string json = std::string(SPECD_BINARY_DIR) + "/test-fixtures/cli-bench-variant.json";
  std::string traces = std::string(SPECD_BINARY_DIR) + "/test-fixtures/cli-bench-variant.sqlite";
  std::filesystem::remove(traces);
  const std::string variant = "pld:tokens=2:draft_budget=fixed";
  CliResult r = run_cli("bench --methods pld," + variant + " --model " + target + " --workloads " + workloads +
                        " --max-prompts 1 --repeats 1 --json " + json + " --traces " + traces);
  CAPTURE(r.out, r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find(" " + variant + " ") != std::string::npos);
  CHECK(r.out.find(variant + " over pld ") != std::string::npos);
  CHECK(r.out.find(variant + " settings: ") != std::string::npos);
  const auto report = nlohmann::json::parse(slurp(json));
  // The variant against its plain method, prompt by prompt; the plain method has no baseline here.
  CHECK(report["baselines"][variant] == "pld");
  CHECK(report["results"][variant]["overall"]["over_baseline"].get<double>() > 0);
  CHECK(!report["results"]["pld"]["overall"].contains("over_baseline"));
  CHECK(report["results"][variant]["overall"]["equal_to_ar"] == "1/1");  // a variant of a lossless method is lossless
  CHECK(report["lossless"][variant] == true);
  // Its own values, with where they came from; the rest as the flags set them.
  const std::string settings = report["settings"][variant].get<std::string>();
  CHECK(settings.find("tokens=2 (--methods " + variant + ")") != std::string::npos);
  CHECK(settings.find("draft_budget=fixed (--methods " + variant + ")") != std::string::npos);
  CHECK(settings.find("max_ngram=3 (default)") != std::string::npos);
  CHECK(report["settings"]["pld"].get<std::string>().find("tokens=10 (default)") != std::string::npos);
  // No step of the fixed-budget variant drafts more than its 2 tokens.
  CliResult listed = run_cli("traces list --file " + traces);
  REQUIRE(listed.exit_code == 0);
  CHECK(listed.out.find(variant) != std::string::npos);
  CliResult exported = run_cli("traces export --file " + traces + " --run 3 --format jsonl");  // runs: ar, pld, the variant
  REQUIRE(exported.exit_code == 0);
  std::istringstream lines(exported.out);
  int steps = 0;
  for (std::string line; std::getline(lines, line); ++steps) CHECK(nlohmann::json::parse(line)["draft_size"].get<int>() <= 2);
  CHECK(steps > 0);

  const std::string bench = "bench --model " + target + " --workloads " + workloads + " --max-prompts 1 --repeats 1 --methods ";
  require_one_line_error(run_cli(bench + "pld:gamma=8"), "pld has no parameter 'gamma'");
  require_one_line_error(run_cli(bench + "pld:tokens=0"), "--methods pld:tokens=0");
  require_one_line_error(run_cli(bench + "pld:tokens"), "'tokens' is not NAME=VALUE");
  require_one_line_error(run_cli(bench + "pld:tokens=2:tokens=3"), "tokens is given twice");
  require_one_line_error(run_cli(bench + "pld:"), "ends with ':'");
  require_one_line_error(run_cli(bench + "medusa:gamma=2"), "medusa");
  require_one_line_error(run_cli(bench + "pld:max_ngram=1:min_ngram=2"), "--methods pld:max_ngram=1:min_ngram=2");
}

TEST_CASE("specd generate --chat renders the prompt with the model's chat template, the plain one without", "[cli][chat]") {
  const std::string dir = model_with_tokenizer("cli-generate-chat");  // no tokenizer_config.json: the plain template
  const CliResult chat = run_cli("generate --model " + dir + " --chat --system 'Be brief.' --prompt 'def the thing' --max-new-tokens 12");
  CAPTURE(chat.err);
  REQUIRE(chat.exit_code == 0);
  const std::string rendered = test::fixture_dir("cli-generate-chat-prompt") + "/prompt.txt";
  write_text(rendered, "System: Be brief.\n\nUser: def the thing\n\nAssistant:");
  const CliResult plain = run_cli("generate --model " + dir + " --prompt-file " + rendered + " --max-new-tokens 12");
  REQUIRE(plain.exit_code == 0);
  CHECK(chat.out == plain.out);
  require_one_line_error(run_cli("generate --model " + dir + " --system 'x' --prompt 'y'"), "--system: needs --chat");
}
