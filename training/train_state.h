#pragma once
// A resumable training state in one file: model and optimizer tensors (AdamW moments and step
// counts), the number of finished steps, the training time so far, the recipe the run was started
// with, and the loss history. Written to a temporary file and renamed, so a crash while saving
// leaves the previous state intact.
#include <torch/torch.h>

#include <cstdint>
#include <optional>
#include <string>

#include "train_llama.h"

namespace specd::training {

struct TrainProgress {
  int64_t steps_done = 0;
  double train_seconds = 0;  // time spent in training steps and evaluations, over all sessions
  std::string recipe;        // JSON: what must not change when resuming
  std::string history;       // JSON Lines: one record per logged step and evaluation
};

void save_train_state(const std::string& path, TrainLlama& model, torch::optim::Optimizer& optimizer,
                      const TrainProgress& progress);

// Restores model and optimizer in place; nullopt when there is no file at `path`.
std::optional<TrainProgress> load_train_state(const std::string& path, TrainLlama& model,
                                              torch::optim::Optimizer& optimizer);

}  // namespace specd::training
