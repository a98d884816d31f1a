#pragma once
// Hugging Face directories from and to the training module: config.json, model.safetensors and
// tokenizer.json, exactly what the runtime's LlamaModel::load reads.
#include <string>

#include "io/dtype.h"
#include "train_llama.h"

namespace specd::training {

// Writes DIR/config.json (torch_dtype set from `dtype`), DIR/model.safetensors (F32, F16 or BF16,
// without lm_head.weight when tied) and a copy of `tokenizer_path` as DIR/tokenizer.json (skipped
// when empty). Each file is replaced atomically. max_shard_bytes > 0: the weights as shards of at
// most that many bytes plus model.safetensors.index.json (Hugging Face's save_pretrained layout),
// and no model.safetensors.
void save_hf_model(TrainLlama& model, const std::string& dir, DType dtype, const std::string& tokenizer_path,
                   size_t max_shard_bytes = 0);

// A training module holding the weights of a Hugging Face directory (as float32).
TrainLlama load_hf_model(const std::string& dir);

}  // namespace specd::training
