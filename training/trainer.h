#pragma once
// The training run: a Llama with tied embeddings trained from scratch (or distilled from a
// frozen teacher) on a token stream, with AdamW, warmup + cosine learning rate, gradient
// clipping, periodic evaluation and resumable state; the result is a Hugging Face directory.
#include <cstdint>
#include <iosfwd>
#include <memory>
#include <string>

#include "io/dtype.h"
#include "io/model_config.h"
#include "batches.h"
#include "train_llama.h"

namespace specd::training {

struct ModelShape {
  int64_t layers = 6;
  int64_t hidden = 256;
  int64_t heads = 8;
  int64_t kv_heads = 4;
  int64_t ffn = 704;
  int64_t context = 512;
  double rope_theta = 10000.0;
  double rms_norm_eps = 1e-5;
};

// A tied-embedding llama config; bos and eos are the end-of-text token.
ModelConfig make_model_config(const ModelShape& shape, int64_t vocab_size, int64_t end_of_text);

struct TrainOptions {
  std::string out_dir;     // the Hugging Face directory written at the end
  std::string state_dir;   // resumable state; empty: OUT/train-state
  std::string cache_dir;   // token id caches; empty: the state directory
  std::string text, eval_text, tokenizer;

  ModelShape shape;
  int64_t steps = 1000;
  int64_t batch = 16;
  int64_t seq = 256;
  double lr = 3e-3;
  double min_lr = 3e-4;
  int64_t warmup = 100;
  double weight_decay = 0.1;
  double clip = 1.0;
  uint64_t seed = 1;

  int64_t eval_every = 200;
  int64_t eval_tokens = 65536;
  int64_t checkpoint_every = 200;
  int64_t log_every = 10;
  int threads = 2;
  DType dtype = DType::BF16;
  size_t max_shard_bytes = 0;  // > 0: the exported weights in shards of at most this size

  // Distillation: loss = (1 - a) CE(labels) + a KL(teacher || student), teacher frozen.
  std::string distill_from;
  double distill_weight = 0.5;

  // Start from this trained model grown to `shape` (growth.h) instead of from random weights.
  std::string grow_from;

  bool resume = false;      // continue from the state directory when it holds a state
  int64_t stop_after = -1;  // > 0: save the state and stop once this many steps are done
};

struct TrainSummary {
  bool finished = false;  // all steps done and the model written; false: stopped, resumable
  int64_t steps_done = 0;
  int64_t parameters = 0;
  int64_t tokens_trained = 0;
  double train_seconds = 0;
  double eval_loss = 0;  // the last evaluation (nats per token)
};

// Progress lines go to `log`. A SIGINT or SIGTERM during the run saves the state and returns
// with finished = false.
TrainSummary train(const TrainOptions& options, std::ostream& log);

// AdamW (betas 0.9, 0.95) with weight decay on matrices, embeddings included, and none on norm gains.
std::unique_ptr<torch::optim::AdamW> make_optimizer(TrainLlama& model, double lr, double weight_decay);

// One optimizer step on a batch: cross-entropy, or with a teacher (1 - a) CE + a KL(teacher ||
// model); gradients clipped to norm `clip`. Returns the cross-entropy (nats per token).
double train_step(TrainLlama& model, torch::optim::Optimizer& optimizer, const Batch& batch, TrainLlama* teacher,
                  double distill_weight, double clip);

// Makes freed heap memory stay in the process for reuse (see trainer.cpp). Process-wide.
void keep_freed_memory();

// Gives `threads` to OpenBLAS and one to ATen's elementwise ops (see trainer.cpp).
void configure_training_threads(int threads);

}  // namespace specd::training
