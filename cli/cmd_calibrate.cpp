// specd calibrate: offline work per model pair. For now one part: sam-corpus, SAM-Decoding's
// static corpus (spec/sam_corpus.h): the target's own greedy answers to the calibration prompts,
// which the sam method then searches beside the prompt and the output (--sam-corpus).
#include <cstdio>
#include <filesystem>
#include <string>

#include "bench_timing.h"
#include "commands.h"
#include "decode/autoregressive.h"
#include "model/llama_model.h"
#include "model_files.h"
#include "options.h"
#include "spec/sam_corpus.h"
#include "util/error.h"
#include "workload/workload.h"

namespace specd::cli {
namespace {

int run_sam_corpus(const Args& args) {
  std::string model_dir, prompts_path, out_path;
  int64_t max_new_tokens = 0;
  DeviceSpec device;
  po::options_description desc("specd calibrate sam-corpus");
  desc.add_options()
      ("model", po::value(&model_dir)->default_value(default_model_dir()), "target model directory")
      ("prompts", po::value(&prompts_path)->default_value(data_dir() + "/calibration/prompts.jsonl"),
       "calibration prompts (workload format); keep them apart from the prompts you measure on")
      ("max-new-tokens", po::value(&max_new_tokens)->default_value(0), "tokens per answer (0: each prompt's max_new_tokens)")
      ("out", po::value(&out_path)->required(), "corpus file to write (JSON)");
  add_device_options(desc, device);
  po::variables_map vm;
  if (!parse(args, desc, vm, "usage: specd calibrate sam-corpus [--model DIR] [--prompts FILE] --out FILE")) return 0;
  if (max_new_tokens < 0) input_error("--max-new-tokens", "must not be negative");

  // The output's folder first: a bad --out should fail before minutes of decoding, not after.
  const std::filesystem::path parent = std::filesystem::path(out_path).parent_path();
  std::error_code error;
  if (!parent.empty()) std::filesystem::create_directories(parent, error);
  if (error) input_error("--out", "cannot create " + parent.string() + ": " + error.message());
  const std::vector<WorkloadItem> items = read_workload(prompts_path);
  if (items.empty()) input_error(prompts_path, "holds no prompts");
  ModelFiles files = open_model_files(model_dir, "", device);
  SamCorpus corpus;
  corpus.tokenizer_fnv1a = file_fnv1a(model_dir + "/tokenizer.json");
  corpus.vocab_size = files.model->config().vocab_size;
  corpus.source = "greedy answers of " + model_dir + " to the " + std::to_string(items.size()) + " prompts of " + prompts_path +
                  (max_new_tokens ? ", at most " + std::to_string(max_new_tokens) + " tokens each" : "");
  BenchProgress progress(static_cast<int64_t>(items.size()), "calibrate sam-corpus");
  int64_t tokens = 0;
  for (const WorkloadItem& item : items) {
    GenerateOptions options;
    options.max_new_tokens = max_new_tokens ? max_new_tokens : item.max_new_tokens;
    options.stop_tokens = files.stop_tokens;
    const std::vector<int32_t> prompt = files.tokenizer.encode(item.turns.front(), /*add_special_tokens=*/true);
    if (static_cast<int64_t>(prompt.size()) + 1 >= files.model->context_length())
      input_error(prompts_path, "prompt " + item.id + " does not fit the model's context");
    GenerateOutput out = generate_autoregressive(*files.model, prompt, options);
    tokens += static_cast<int64_t>(out.tokens.size());
    corpus.documents.push_back(std::move(out.tokens));
    progress.step("answer");
  }
  progress.done();
  write_sam_corpus(out_path, corpus);
  std::printf("wrote %s: %zu documents, %lld tokens\n", out_path.c_str(), corpus.documents.size(), static_cast<long long>(tokens));
  return 0;
}

}  // namespace

int run_calibrate(const Args& args) {
  const std::string usage = "usage: specd calibrate sam-corpus [options]   (specd calibrate sam-corpus --help)";
  if (args.empty() || args[0] == "--help" || args[0] == "-h") {
    std::printf("%s\n\nsam-corpus   SAM-Decoding's static corpus: the target's greedy answers to calibration prompts\n", usage.c_str());
    return 0;
  }
  if (args[0] == "sam-corpus") return run_sam_corpus(Args(args.begin() + 1, args.end()));
  input_error("calibrate", "unknown part '" + args[0] + "' (known: sam-corpus)");
}

}  // namespace specd::cli
