// specd serve: an OpenAI-compatible HTTP server that deploys a target (with its draft and
// artifact) and decodes each request with the speculative method it asks for (serve/).
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "artifact/artifact.h"
#include "decode/forward_cost.h"
#include "method_options.h"
#include "model/cpu/matmul_bf16_dot.h"
#include "model/llama_model.h"
#include "model_files.h"
#include "options.h"
#include "run_metadata.h"
#include "serve/http_server.h"
#include "speculative/calibrated_parts.h"
#include "util/error.h"

namespace specd::cli {

int run_serve(const Args& args) {
  std::string model_dir, tokenizer_path, name, method = "ar";
  MethodArgs method_args;
  DeviceSpec device;
  serve::ServerOptions server;
  int64_t max_tokens = 512;
  po::options_description desc("specd serve", 120, 60);
  desc.add_options()
      ("model", po::value(&model_dir)->default_value(default_model_dir()), "Hugging Face model directory of the target")
      ("tokenizer", po::value(&tokenizer_path), "tokenizer.json to use instead of the model directory's")
      ("name", po::value(&name), "the model id clients name (default: the model directory's name)")
      ("method", po::value(&method)->default_value("ar"), "the lossless method a request that names none is decoded with")
      ("host", po::value(&server.host)->default_value("127.0.0.1"), "address to listen on (0.0.0.0: every interface)")
      ("port", po::value(&server.port)->default_value(8080), "port to listen on (0: any free one, printed)")
      ("parallel", po::value(&server.parallel)->default_value(4), "requests decoded at once (their steps take turns)")
      ("queue", po::value(&server.queue)->default_value(16), "requests that may wait for a slot; more are answered 429")
      ("prefill-chunk", po::value(&server.prefill_chunk)->default_value(server.prefill_chunk),
       "the most prompt tokens a request prefills per step, so a long prompt does not stall the others (0: all at once)")
      ("drafting-guard", po::value(&server.drafting_guard)->default_value(true),
       "compare windows of steps with drafting as planned, without the draft model (where retrieval still drafts beside it) and "
       "without drafting, per batch mix, and switch drafting down only where that delivers clearly more tokens/s (off: the batch "
       "planner alone)")
      ("step-log", po::value(&server.step_log), "record every batched step in this file, one tab-separated line each (docs/serving.md)")
      ("api-key", po::value(&server.api_key), "require 'Authorization: Bearer KEY' (default: $SPECD_API_KEY, else none)")
      ("max-tokens", po::value(&max_tokens)->default_value(512), "the most new tokens a request may ask for (and a chat's default)")
      ("max-body", po::value(&server.max_body)->default_value(1 << 20), "the largest request body in bytes");
  add_method_options(desc, method_args);
  add_device_options(desc, device);
  po::variables_map vm;
  const std::string usage = "usage: specd serve [--model DIR] [--draft DIR] [--artifact DIR] [--method M] [--port P] [options]\n\n"
                            "Serves POST /v1/completions, POST /v1/chat/completions, GET /v1/models, /health and /metrics\n"
                            "(docs/serving.md). A request picks its method with \"speculative\": {\"method\": M}; lossy ones\n"
                            "also need \"allow_lossy\": true and an artifact that calibrates them.\n\nmethods:\n" + methods_help();
  if (!parse(args, desc, vm, usage.c_str())) return 0;
  if (server.port < 0 || server.port > 65535) input_error("--port", "must be in [0, 65535]");
  if (server.parallel < 1 || server.parallel > 256) input_error("--parallel", "must be in [1, 256]");
  if (server.queue < 0 || server.queue > 4096) input_error("--queue", "must be in [0, 4096]");
  if (server.prefill_chunk < 0) input_error("--prefill-chunk", "must not be negative");
  if (max_tokens < 1) input_error("--max-tokens", "must be at least 1");
  if (server.max_body < 1024) input_error("--max-body", "must be at least 1024 bytes");
  if (!vm.count("api-key"))
    if (const char* key = std::getenv("SPECD_API_KEY")) server.api_key = key;
  finish_method_options(method_args, vm);
  const MethodInfo& default_info = method_option(method, "--method");
  if (!default_info.lossless)
    input_error("--method", "'" + method + "' is lossy; the default must be lossless (a request asks for a lossy method itself, with allow_lossy)");

  serve::block_shutdown_signals();  // before the models start the CPU kernels' threads
  serve::HttpServer http(server);   // a port in use is refused before the models load
  ModelFiles files = open_model_files(model_dir, tokenizer_path, device);
  check_tree_vocabulary(method_args.options, files.model->config().vocab_size);
  serve::Deployment deployment;
  deployment.model_id = vm.count("name") ? name : std::filesystem::path(model_dir).lexically_normal().filename().string();
  if (deployment.model_id.empty()) deployment.model_id = std::filesystem::path(model_dir).lexically_normal().parent_path().filename().string();
  deployment.target = files.model;
  deployment.tokenizer = std::make_shared<Tokenizer>(std::move(files.tokenizer));
  deployment.stop_tokens = files.stop_tokens;
  deployment.chat_template = chat_template_of(model_dir, tokenizer_path);
  deployment.max_tokens = max_tokens;
  deployment.machine = this_machine(device);
  deployment.default_method = method;
  // The draft: --draft, or the demo target's own; without one, methods that need it are not served.
  std::string draft_dir = method_args.draft_dir;
  if (draft_dir.empty()) try {
      draft_dir = draft_dir_for("", model_dir);
    } catch (const InputError&) {
    }
  if (!draft_dir.empty()) deployment.draft = LlamaModel::load(draft_dir, device);
  if (default_info.draft == DraftModelUse::Required && !deployment.draft) input_error("--method", "'" + method + "' needs --draft");
  deployment.artifact = load_artifact(method_args, model_dir, deployment.draft != nullptr);
  deployment.artifact_name = method_args.artifact_dir.empty() ? "artifact" : method_args.artifact_dir;
  if (deployment.artifact) {
    if (deployment.artifact->csd) deployment.shared.memory = csd_memory_of(*deployment.artifact);
    deployment.shared.sam_corpus = sam_corpus_of(deployment.artifact.get(), files.model->config());
  }

  // Each method the loaded parts can run, with its deployed options and the cost curves its draft
  // budget needs, measured once here instead of per request.
  std::fprintf(stderr, "specd serve: measuring the forward cost of %s%s\n", model_dir.c_str(), deployment.draft ? " and its draft" : "");
  deployment.target_cost = measure_cost_curve(*files.model, 65);
  if (deployment.draft) deployment.draft_cost = measure_cost_curve(*deployment.draft, 65);
  // Chosen once per process by the CPU's instructions and a measurement; it sets what a drafted row costs.
  if (files.model->bf16_dot_products()) std::fprintf(stderr, "specd serve: BF16 weights: %s\n", cpu::bf16_kernel_summary());
  std::string served;
  for (const MethodInfo& info : method_registry()) {
    if (info.draft == DraftModelUse::Required && !deployment.draft) continue;
    if (!info.calibration.empty()) try {
        require_calibration(deployment.artifact.get(), info.calibration, info.name);
      } catch (const InputError&) {
        continue;
      }
    serve::ServedMethod entry;
    entry.options = deployed_options(method_args, info.name, deployment.artifact.get());
    entry.options.target_cost = deployment.target_cost;
    if (deployment.draft) entry.options.draft_cost = deployment.draft_cost;
    entry.lossless = info.lossless;
    deployment.methods.emplace(info.name, std::move(entry));
    served += (served.empty() ? "" : ", ") + info.name + (info.lossless ? "" : " (lossy)");
  }
  if (!deployment.methods.count(method)) input_error("--method", "'" + method + "' cannot run with the models and artifact given");

  std::fprintf(stderr, "specd serve: %s on http://%s:%d (default method %s; methods: %s)\n", deployment.model_id.c_str(),
               server.host.c_str(), http.port(), method.c_str(), served.c_str());
  std::fflush(stderr);
  http.serve(deployment);
  std::fprintf(stderr, "specd serve: stopped\n");
  return 0;
}

}  // namespace specd::cli
