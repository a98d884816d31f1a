// specd generate: the continuation of one prompt, by plain autoregressive decoding or by one of
// the speculative methods (--method), which give the same text at T=0.
#include <cstdio>
#include <iostream>

#include "decode/autoregressive.h"
#include "methods/method_registry.h"
#include "decode/speculative.h"
#include "decode/text_stream.h"
#include "artifact/artifact.h"
#include "calibrate/memory_update.h"
#include "io/read_file.h"
#include "model/llama_model.h"
#include "method_options.h"
#include "model_files.h"
#include "options.h"
#include "tokenizer/tokenizer.h"
#include "util/error.h"
#include "util/utf8.h"
#include "workload/workload.h"

namespace specd::cli {

int run_generate(const Args& args) {
  std::string model_dir, prompt, prompt_file, tokenizer_path, workload_file, method = "ar", save_memory, system;
  MethodArgs method_args;
  int64_t prompt_index = 0;
  GenerateOptions options;
  DeviceSpec device;
  po::options_description desc("specd generate", 120, 60);
  desc.add_options()
      ("model", po::value(&model_dir)->default_value(default_model_dir()), "Hugging Face model directory (config.json, *.safetensors, tokenizer.json)")
      ("tokenizer", po::value(&tokenizer_path), "tokenizer.json to use instead of the model directory's")
      ("prompt", po::value(&prompt), "prompt text")
      ("prompt-file", po::value(&prompt_file), "file holding the prompt text")
      ("workload", po::value(&workload_file), "a workload .jsonl file to take the prompt from (its first turn)")
      ("prompt-index", po::value(&prompt_index)->default_value(0), "which prompt of --workload (0-based)")
      ("chat", "the prompt is a user's message: render it with the model's chat template (tokenizer_config.json; the plain template when it has none)")
      ("system", po::value(&system), "with --chat: a system message before it")
      ("max-new-tokens", po::value(&options.max_new_tokens)->default_value(128), "most tokens to generate")
      ("temperature", po::value(&options.sampling.temperature)->default_value(0.0), "0 is greedy")
      ("top-k", po::value(&options.sampling.top_k)->default_value(0), "keep the k most likely tokens (0: off)")
      ("top-p", po::value(&options.sampling.top_p)->default_value(1.0), "keep the most likely tokens up to this mass (1: off)")
      ("seed", po::value(&options.sampling.seed)->default_value(0), "random seed for sampling")
      ("method", po::value(&method)->default_value("ar"), "decoding method (listed above)")
      ("save-memory", po::value(&save_memory), "csd: write the artifact with the correction memory as decoding left it to this directory");
  add_method_options(desc, method_args);
  add_device_options(desc, device);
  po::variables_map vm;
  const std::string usage = "usage: specd generate [--model DIR] (--prompt TEXT | --prompt-file F | --workload F [--prompt-index I]) [options]\n\n"
                            "methods (--method):\n" + methods_help();
  if (!parse(args, desc, vm, usage.c_str())) return 0;

  if (vm.count("prompt") + vm.count("prompt-file") + vm.count("workload") != 1)
    input_error("generate", "give exactly one of --prompt, --prompt-file and --workload");
  std::string prompt_source = "--prompt", workload_header;
  if (vm.count("prompt-file")) {
    prompt = read_whole_file(prompt_file);
    prompt_source = prompt_file;
  }
  if (vm.count("workload")) {
    std::vector<WorkloadItem> items = read_workload(workload_file);
    if (prompt_index < 0 || prompt_index >= static_cast<int64_t>(items.size()))
      input_error("--prompt-index", "must be in [0, " + std::to_string(items.size()) + ") for " + workload_file);
    prompt = items[prompt_index].turns.front();
    prompt_source = workload_file + " prompt " + items[prompt_index].id;
    workload_header = "prompt " + items[prompt_index].id + " (" + items[prompt_index].category + ", " + items[prompt_index].source +
                      "):\n" + prompt + "\n---\n";
  }
  if (!is_valid_utf8(prompt)) input_error(prompt_source, "is not valid UTF-8");
  if (prompt.empty()) input_error(prompt_source, "is empty");
  if (options.max_new_tokens < 1) input_error("--max-new-tokens", "must be at least 1");
  if (vm.count("system") && !vm.count("chat")) input_error("--system", "needs --chat");
  check_sampling_options(options.sampling);
  finish_method_options(method_args, vm);
  const MethodInfo& info = method_option(method, "--method");
  if (!save_memory.empty() && info.calibration != kCsdPolicy) input_error("--save-memory", "only the csd methods keep a correction memory");
  check_outputs({{"--save-memory", save_memory, Output::Directory}});

  ModelFiles files = open_model_files(model_dir, tokenizer_path, device);
  check_tree_vocabulary(method_args.options, files.model->config().vocab_size);
  bool add_special_tokens = true;
  if (vm.count("chat")) {
    const ChatTemplate chat = chat_template_of(model_dir, tokenizer_path);
    std::vector<ChatMessage> messages;
    if (vm.count("system")) messages.push_back({"system", system});
    messages.push_back({"user", prompt});
    prompt = chat.render(messages);
    add_special_tokens = chat.encode_with_special_tokens();
  }
  std::vector<int32_t> prompt_ids = files.tokenizer.encode(prompt, add_special_tokens);
  if (static_cast<int64_t>(prompt_ids.size()) >= files.model->context_length())
    input_error(prompt_source, "is " + std::to_string(prompt_ids.size()) + " tokens; the model's context is " +
                                   std::to_string(files.model->context_length()) + " tokens");
  options.stop_tokens = files.stop_tokens;

  TextStream stream(files.tokenizer, prompt_ids);
  options.on_token = [&](int32_t token) {
    std::string piece = stream.push(token);
    std::fwrite(piece.data(), 1, piece.size(), stdout);
    std::fflush(stdout);
  };
  std::shared_ptr<const LlamaModel> draft;
  if (info.draft != DraftModelUse::None) {
    method_args.draft_dir = draft_dir_for(method_args.draft_dir, model_dir);
    draft = LlamaModel::load(method_args.draft_dir, device);
  }
  const std::shared_ptr<const Artifact> artifact = load_artifact(method_args, model_dir, draft != nullptr);
  std::vector<ParamSetting> settings;
  const MethodOptions method_options = deployed_options(method_args, method, artifact.get(), &settings);
  Policy policy = make_policy(method, MethodContext{*files.model, draft, options.sampling, method_options, artifact.get(), method_args.artifact_dir});
  check_request_memory(*files.model, draft.get(), {&policy}, static_cast<int64_t>(prompt_ids.size()), options.max_new_tokens);
  // Shown once every check has passed, so that an error is the only line on stderr.
  std::fputs(workload_header.c_str(), stderr);
  GenerateOutput out;
  std::string spec_stats;
  if (policy.autoregressive) {
    out = generate_autoregressive(*files.model, prompt_ids, options);
  } else {
    policy.root_entropy = false;  // nothing here shows it
    SpeculativeOutput run = decode_with(*files.model, policy, prompt_ids, options);
    out.tokens = run.tokens;
    out.stats = run.stats;
    int64_t drafted = 0, accepted = 0, rescued = 0;
    for (const StepTrace& step : run.steps) {
      drafted += step.draft_size;
      accepted += step.accepted_length;
      rescued += step.rescued + step.relaxed;
    }
    const size_t steps = run.steps.size();
    char line[256];
    std::snprintf(line, sizeof line, " | %s: %zu steps, %.2f tokens/step, %.1f%% of %lld drafted tokens accepted", method.c_str(),
                  steps, steps ? static_cast<double>(steps + accepted) / steps : 0.0,
                  drafted ? 100.0 * accepted / drafted : 0.0, static_cast<long long>(drafted));
    spec_stats = line;
    if (!settings.empty()) spec_stats += " | settings: " + settings_text(settings);
    if (!policy.lossless) {
      std::snprintf(line, sizeof line, " | LOSSY: %lld of the accepted tokens were rescued or relaxed, the text may differ from the target's",
                    static_cast<long long>(rescued));
      spec_stats += line;
    }
  }
  std::string rest = stream.finish();
  std::fwrite(rest.data(), 1, rest.size(), stdout);
  std::fputc('\n', stdout);
  std::fflush(stdout);

  if (!save_memory.empty()) {
    const std::string command = "specd generate --method " + method + " --artifact " + method_args.artifact_dir;
    write_updated_memory(method_args.artifact_dir, *policy.memory, command, save_memory);
    std::fprintf(stderr, "wrote %s: the correction memory after this run (%zu pairs)\n", save_memory.c_str(), policy.memory->size());
  }
  const GenerateStats& s = out.stats;
  std::fprintf(stderr, "prompt tokens: %lld | new tokens: %lld%s | prefill: %.1f ms | decode: %.1f tokens/s (%.2f ms/token)%s\n",
               static_cast<long long>(s.prompt_tokens), static_cast<long long>(s.new_tokens), s.stopped ? " (EOS)" : "",
               s.prefill_ms, s.decode_tokens_per_s(), s.new_tokens > 1 ? s.decode_ms / (s.new_tokens - 1) : 0.0,
               spec_stats.c_str());
  return 0;
}

}  // namespace specd::cli
