#include "speed.h"

#include <chrono>

namespace specd::training {

SpeedResult measure_training_speed(const SpeedOptions& o) {
  keep_freed_memory();
  configure_training_threads(o.threads);
  torch::manual_seed(0);
  TrainLlama model(make_model_config(o.shape, o.vocab, o.vocab - 1));
  auto optimizer = make_optimizer(model, 1e-3, 0.1);
  TrainLlama teacher{nullptr};
  if (o.distill) teacher = TrainLlama(make_model_config(o.teacher, o.vocab, o.vocab - 1));
  std::vector<int32_t> ids(static_cast<size_t>(o.batch * o.seq * 4));
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int32_t>((i * 2654435761u) % static_cast<size_t>(o.vocab));

  auto step = [&](int64_t s) {
    train_step(model, *optimizer, sample_batch(ids, o.batch, o.seq, 0, s), teacher ? &teacher : nullptr, 0.5, 1.0);
  };
  step(0);
  auto start = std::chrono::steady_clock::now();
  for (int64_t s = 1; s <= o.steps; ++s) step(s);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  SpeedResult result;
  result.parameters = model->parameter_count();
  result.seconds_per_step = seconds / static_cast<double>(o.steps);
  result.tokens_per_second = static_cast<double>(o.batch * o.seq) / result.seconds_per_step;
  return result;
}

}  // namespace specd::training
