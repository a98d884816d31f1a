// specd init-model: a random-weight Llama-family checkpoint in Hugging Face layout, e.g. the
// shapes of the llama.cpp CPU anchor, so that speed can be compared on identical shapes.
#include <filesystem>
#include <iostream>
#include <map>

#include "io/atomic_directory.h"
#include "io/random_checkpoint.h"
#include "options.h"
#include "util/error.h"

namespace specd::cli {
namespace {

struct Shape {
  int64_t layers, hidden, heads, ffn, vocab;
};

// The shapes specd's speed is compared with llama.cpp's on (docs/benchmarks.md).
const std::map<std::string, Shape>& anchor_shapes() {
  static const std::map<std::string, Shape> shapes = {
      {"a", {6, 256, 8, 688, 4096}}, {"b", {8, 512, 8, 1376, 8192}}, {"c", {12, 768, 12, 2048, 32000}}};
  return shapes;
}

}  // namespace

int run_init_model(const Args& args) {
  std::string out, shape_name, dtype_name = "f32", tokenizer_path;
  ModelConfig cfg;
  cfg.model_type = "llama";
  RandomCheckpointOptions options;
  bool force = false;
  po::options_description desc("specd init-model");
  desc.add_options()
      ("out", po::value(&out)->required(), "directory to write (config.json, model.safetensors); must not hold files unless --force")
      ("force", po::bool_switch(&force), "replace a non-empty --out directory (its old files are removed)")
      ("shape", po::value(&shape_name), "a preset: a (6x256, vocab 4096), b (8x512, 8192) or c (12x768, 32000)")
      ("model-type", po::value(&cfg.model_type)->default_value("llama"), "llama, mistral or qwen2")
      ("layers", po::value(&cfg.num_hidden_layers)->default_value(6), "decoder layers")
      ("hidden", po::value(&cfg.hidden_size)->default_value(256), "hidden size")
      ("heads", po::value(&cfg.num_attention_heads)->default_value(8), "attention heads")
      ("kv-heads", po::value(&cfg.num_key_value_heads)->default_value(0), "key/value heads (0: as many as heads)")
      ("ffn", po::value(&cfg.intermediate_size)->default_value(688), "MLP intermediate size")
      ("vocab", po::value(&cfg.vocab_size)->default_value(4096), "vocabulary size")
      ("context", po::value(&cfg.max_position_embeddings)->default_value(2048), "max_position_embeddings")
      ("rope-theta", po::value(&cfg.rope_theta)->default_value(10000.0), "RoPE base")
      ("tie", po::bool_switch(&cfg.tie_word_embeddings), "tie the output head to the embeddings")
      ("dtype", po::value(&dtype_name)->default_value("f32"), "f32, f16 or bf16")
      ("seed", po::value(&options.seed)->default_value(0), "random seed")
      ("tokenizer", po::value(&tokenizer_path), "a tokenizer.json to copy into the directory");
  po::variables_map vm;
  if (!parse(args, desc, vm, "usage: specd init-model --out DIR [--shape a|b|c] [options]")) return 0;
  check_outputs({{"--out", out, Output::Directory}});
  // A model directory holds weights someone may have trained or downloaded: never silently replaced.
  std::error_code ignored;
  if (!force && std::filesystem::is_directory(out) && !std::filesystem::is_empty(out, ignored))
    input_error("--out " + out, "is a directory that is not empty: choose another --out, or pass --force to replace it");

  if (vm.count("shape")) {
    auto it = anchor_shapes().find(shape_name);
    if (it == anchor_shapes().end()) input_error("--shape", "unknown shape '" + shape_name + "' (use a, b or c)");
    cfg.num_hidden_layers = it->second.layers;
    cfg.hidden_size = it->second.hidden;
    cfg.num_attention_heads = it->second.heads;
    cfg.intermediate_size = it->second.ffn;
    cfg.vocab_size = it->second.vocab;
  }
  if (cfg.num_key_value_heads == 0) cfg.num_key_value_heads = cfg.num_attention_heads;
  if (cfg.num_attention_heads <= 0 || cfg.hidden_size % cfg.num_attention_heads != 0)
    input_error("--heads", "must divide --hidden");
  cfg.head_dim = cfg.hidden_size / cfg.num_attention_heads;
  cfg.rms_norm_eps = 1e-5;
  cfg.qkv_bias = cfg.model_type == "qwen2";
  cfg.eos_token_ids = {};
  const std::map<std::string, DType> dtypes = {{"f32", DType::F32}, {"f16", DType::F16}, {"bf16", DType::BF16}};
  if (!dtypes.count(dtype_name)) input_error("--dtype", "unknown dtype '" + dtype_name + "' (use f32, f16 or bf16)");
  options.dtype = dtypes.at(dtype_name);
  cfg.torch_dtype = dtype_name == "f32" ? "float32" : dtype_name == "f16" ? "float16" : "bfloat16";
  // Validate through the same parser that loading uses, so a bad shape fails here, not later.
  cfg = ModelConfig::from_json(cfg.to_json(), "init-model options");
  if (!tokenizer_path.empty() && !std::filesystem::is_regular_file(tokenizer_path)) input_error(tokenizer_path, "cannot be read");

  // Written whole or not at all: a failed run leaves no half model, and --force swaps the old
  // directory out in one step.
  AtomicDirectoryWriter writer(out);
  write_random_checkpoint(writer.temp_dir(), cfg, options);
  if (!tokenizer_path.empty()) std::filesystem::copy_file(tokenizer_path, writer.file("tokenizer.json"));
  writer.commit();
  std::cerr << "wrote " << out << ": " << cfg.num_hidden_layers << " layers, hidden " << cfg.hidden_size << ", vocab "
            << cfg.vocab_size << ", " << dtype_name << "\n";
  return 0;
}

}  // namespace specd::cli
