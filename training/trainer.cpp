#include "trainer.h"

#include "growth.h"

#include <dlfcn.h>
#include <malloc.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <limits>
#include <sstream>

#include <nlohmann/json.hpp>

#include "batches.h"
#include "hf_checkpoint.h"
#include "io/atomic_file.h"
#include "lr_schedule.h"
#include "token_data.h"
#include "tokenizer/tokenizer.h"
#include "train_state.h"
#include "util/error.h"

namespace specd::training {
namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

std::atomic<bool> stop_requested{false};
extern "C" void request_stop(int) { stop_requested = true; }

// SIGINT/SIGTERM only raise a flag while training; the loop saves and stops at the end of a step.
class StopSignals {
 public:
  StopSignals() {
    stop_requested = false;
    old_int_ = std::signal(SIGINT, request_stop);
    old_term_ = std::signal(SIGTERM, request_stop);
  }
  ~StopSignals() {
    std::signal(SIGINT, old_int_);
    std::signal(SIGTERM, old_term_);
  }

 private:
  void (*old_int_)(int);
  void (*old_term_)(int);
};

std::string hms(double seconds) {
  auto s = static_cast<int64_t>(seconds + 0.5);
  std::ostringstream out;
  out << s / 3600 << ":" << std::setw(2) << std::setfill('0') << (s / 60) % 60 << ":" << std::setw(2) << s % 60;
  return out.str();
}

uint64_t hash_ids(const std::vector<int32_t>& ids) {
  uint64_t hash = 1469598103934665603ull;
  for (int32_t id : ids) hash = (hash ^ static_cast<uint32_t>(id)) * 1099511628211ull;
  return hash;
}

torch::Tensor cross_entropy(const torch::Tensor& logits, const torch::Tensor& targets) {
  return torch::nn::functional::cross_entropy(logits.view({-1, logits.size(-1)}), targets.view({-1}));
}

// KL(teacher || student) per position, averaged over positions.
torch::Tensor distillation_kl(const torch::Tensor& student_logits, const torch::Tensor& teacher_logits) {
  torch::Tensor log_q = torch::log_softmax(student_logits, -1);
  torch::Tensor log_p = torch::log_softmax(teacher_logits, -1);
  return (log_p.exp() * (log_p - log_q)).sum(-1).mean();
}

int64_t token_count(const std::vector<Batch>& batches) {
  int64_t count = 0;
  for (const Batch& b : batches) count += b.targets.numel();
  return count;
}

double evaluate(TrainLlama& model, const std::vector<Batch>& batches) {
  c10::InferenceMode guard;
  double total = 0;
  int64_t count = 0;
  for (const Batch& b : batches) {
    total += cross_entropy(model->forward(b.inputs), b.targets).item<double>() * static_cast<double>(b.targets.numel());
    count += b.targets.numel();
  }
  return count ? total / static_cast<double>(count) : 0.0;
}

// Everything that fixes the trajectory of a run; a resume must match it field for field.
json recipe_of(const TrainOptions& o, const ModelConfig& cfg, const std::vector<int32_t>& train_ids) {
  return {{"config", cfg.to_json()},
          {"train_tokens", train_ids.size()},
          {"train_ids_fnv1a", train_ids.empty() ? 0 : hash_ids(train_ids)},
          {"steps", o.steps},
          {"batch", o.batch},
          {"seq", o.seq},
          {"lr", o.lr},
          {"min_lr", o.min_lr},
          {"warmup", o.warmup},
          {"weight_decay", o.weight_decay},
          {"clip", o.clip},
          {"seed", o.seed},
          {"distill_from", o.distill_from},
          {"grow_from", o.grow_from},
          {"distill_weight", o.distill_from.empty() ? 0.0 : o.distill_weight}};
}

void check_same_recipe(const std::string& state_path, const json& saved, const json& current) {
  for (const auto& [key, value] : current.items()) {
    if (!saved.contains(key) || saved[key] != value) {
      input_error(state_path, "cannot resume: " + key + " was " + (saved.contains(key) ? saved[key].dump() : "absent") +
                                  ", now " + value.dump() + " (remove the state to start over)");
    }
  }
}

void check_options(const TrainOptions& o) {
  auto require = [](bool ok, const std::string& what) {
    if (!ok) throw InputError(what);
  };
  require(!o.out_dir.empty(), "--config-out is required");
  require(!o.text.empty() && !o.tokenizer.empty(), "--text and --tokenizer are required");
  require(o.steps > 0 && o.batch > 0 && o.seq > 1, "--steps, --batch and --seq must be positive (seq > 1)");
  require(o.seq <= o.shape.context, "--seq must not exceed --context");
  require(o.warmup >= 0 && o.warmup < o.steps, "--warmup must be below --steps");
  require(o.lr > 0 && o.min_lr >= 0 && o.min_lr <= o.lr, "need 0 <= --min-lr <= --lr, --lr > 0");
  require(o.clip > 0, "--clip must be positive");
  require(o.eval_every > 0 && o.checkpoint_every > 0 && o.log_every > 0, "--eval-every, --checkpoint-every and --log-every must be positive");
  require(o.distill_from.empty() || (o.distill_weight >= 0 && o.distill_weight <= 1), "--distill-weight must be in [0, 1]");
}

void set_learning_rate(torch::optim::AdamW& optimizer, double lr) {
  for (auto& group : optimizer.param_groups()) static_cast<torch::optim::AdamWOptions&>(group.options()).lr(lr);
}

}  // namespace

// AdamW with weight decay on matrices (embedding included) and none on norm gains.
std::unique_ptr<torch::optim::AdamW> make_optimizer(TrainLlama& model, double lr, double weight_decay) {
  std::vector<torch::Tensor> decayed, plain;
  for (const auto& p : model->parameters()) (p.dim() >= 2 ? decayed : plain).push_back(p);
  auto options = [&](double decay) {
    return std::make_unique<torch::optim::AdamWOptions>(
        torch::optim::AdamWOptions(lr).betas({0.9, 0.95}).eps(1e-8).weight_decay(decay));
  };
  std::vector<torch::optim::OptimizerParamGroup> groups;
  groups.emplace_back(decayed, options(weight_decay));
  groups.emplace_back(plain, options(0.0));
  return std::make_unique<torch::optim::AdamW>(groups, torch::optim::AdamWOptions(lr));
}

double train_step(TrainLlama& model, torch::optim::Optimizer& optimizer, const Batch& b, TrainLlama* teacher,
                  double distill_weight, double clip) {
  torch::Tensor logits = model->forward(b.inputs);
  torch::Tensor loss = cross_entropy(logits, b.targets);
  torch::Tensor objective = loss;
  if (teacher) {
    torch::Tensor teacher_logits;
    {
      c10::InferenceMode guard;
      teacher_logits = (*teacher)->forward(b.inputs);
    }
    objective = (1.0 - distill_weight) * loss + distill_weight * distillation_kl(logits, teacher_logits);
  }
  // Dropping the gradients (rather than zeroing them) lets backward write them without a fill.
  for (auto& p : model->parameters()) p.mutable_grad() = torch::Tensor();
  objective.backward();
  torch::nn::utils::clip_grad_norm_(model->parameters(), clip);
  optimizer.step();
  return loss.item<double>();
}

ModelConfig make_model_config(const ModelShape& shape, int64_t vocab_size, int64_t end_of_text) {
  ModelConfig cfg;
  cfg.model_type = "llama";
  cfg.vocab_size = vocab_size;
  cfg.hidden_size = shape.hidden;
  cfg.intermediate_size = shape.ffn;
  cfg.num_hidden_layers = shape.layers;
  cfg.num_attention_heads = shape.heads;
  cfg.num_key_value_heads = shape.kv_heads;
  cfg.head_dim = shape.heads > 0 ? shape.hidden / shape.heads : 0;
  cfg.max_position_embeddings = shape.context;
  cfg.rope_theta = shape.rope_theta;
  cfg.rms_norm_eps = shape.rms_norm_eps;
  cfg.tie_word_embeddings = true;
  cfg.bos_token_id = end_of_text;
  cfg.eos_token_ids = {end_of_text};
  if (shape.heads <= 0 || shape.hidden % shape.heads) input_error("--hidden", "must be a multiple of --heads");
  check_trainable(cfg);
  return cfg;
}

void keep_freed_memory() {
  // Activations of a step are tens of MB each; glibc would return them to the kernel with munmap
  // and fault the pages in again for the next step (a third of the step time). Keep them.
  mallopt(M_MMAP_MAX, 0);
  mallopt(M_TRIM_THRESHOLD, std::numeric_limits<int>::max());
}

void configure_training_threads(int threads) {
  // As in the runtime: ATen's OpenMP pool and OpenBLAS's threads spin against each other on a
  // small CPU (2 threads each ran 3-6x slower than this on 2 cores), and the time goes into GEMMs.
  // So elementwise ops run on one thread and BLAS gets the cores. OpenBLAS sits behind the
  // libblas.so.3 alternative; set its pool when it is the one loaded.
  at::set_num_threads(1);
  if (auto set = reinterpret_cast<void (*)(int)>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads"))) set(threads);
}

TrainSummary train(const TrainOptions& o, std::ostream& log) {
  check_options(o);
  keep_freed_memory();
  configure_training_threads(o.threads);
  const std::string state_dir = o.state_dir.empty() ? (std::filesystem::path(o.out_dir) / "train-state").string() : o.state_dir;
  const std::string cache_dir = o.cache_dir.empty() ? state_dir : o.cache_dir;
  const std::string state_path = (std::filesystem::path(state_dir) / "state.pt").string();
  if (!o.resume && std::filesystem::exists(state_path))
    input_error(state_path, "a training state exists; pass --resume to continue it or remove it to start over");

  Tokenizer tokenizer = Tokenizer::from_file(o.tokenizer);
  const int32_t eot = end_of_text_id(tokenizer, o.tokenizer);
  std::vector<int32_t> train_ids = load_token_ids(o.text, o.tokenizer, cache_dir, o.threads, log);
  std::vector<int32_t> eval_ids = o.eval_text.empty() ? std::vector<int32_t>{} : load_token_ids(o.eval_text, o.tokenizer, cache_dir, o.threads, log);
  std::vector<Batch> eval_batches = evaluation_batches(eval_ids, o.batch, o.seq, o.eval_tokens);

  ModelConfig cfg = make_model_config(o.shape, tokenizer.vocab_size(), eot);
  torch::manual_seed(o.seed);
  TrainLlama model(cfg);
  auto optimizer = make_optimizer(model, o.lr, o.weight_decay);
  TrainLlama teacher{nullptr};
  if (!o.distill_from.empty()) {
    teacher = load_hf_model(o.distill_from);
    if (teacher->config().vocab_size != cfg.vocab_size) input_error(o.distill_from, "teacher vocabulary differs from the tokenizer's");
    for (auto& p : teacher->parameters()) p.set_requires_grad(false);
  }

  const json recipe = recipe_of(o, cfg, train_ids);
  TrainProgress progress;
  progress.recipe = recipe.dump();
  if (auto saved = load_train_state(state_path, model, *optimizer)) {
    check_same_recipe(state_path, json::parse(saved->recipe), recipe);
    progress = *saved;
    log << "resuming " << state_path << " at step " << progress.steps_done << "/" << o.steps << "\n";
  } else if (!o.grow_from.empty()) {
    GrowthOptions growth;
    growth.seed = o.seed;
    grow_model(load_hf_model(o.grow_from), model, growth);
    log << "grown from " << o.grow_from << "\n";
  }

  TrainSummary summary;
  summary.parameters = model->parameter_count();
  const int64_t tokens_per_step = o.batch * o.seq;
  log << "model: " << summary.parameters << " parameters (" << cfg.num_hidden_layers << " layers, hidden " << cfg.hidden_size
      << ", vocab " << cfg.vocab_size << "); " << train_ids.size() << " training tokens, " << tokens_per_step
      << " per step, " << o.steps << " steps = " << std::fixed << std::setprecision(2)
      << static_cast<double>(o.steps * tokens_per_step) / static_cast<double>(train_ids.size()) << " epochs"
      << std::defaultfloat << std::endl;

  const LrSchedule schedule{o.lr, o.min_lr, o.warmup, o.steps};
  StopSignals signals;
  double eval_loss = std::nan("");
  auto record = [&](const json& entry) { progress.history += entry.dump() + "\n"; };
  auto run_eval = [&](int64_t step) {
    if (eval_batches.empty()) return;
    auto start = Clock::now();
    eval_loss = evaluate(model, eval_batches);
    double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    progress.train_seconds += seconds;
    record({{"step", step}, {"eval_loss", eval_loss}});
    log << "eval  step " << step << "/" << o.steps << "  eval loss " << std::setprecision(4) << eval_loss << "  ppl "
        << std::exp(eval_loss) << "  (" << std::setprecision(1) << std::fixed << seconds << " s)" << std::defaultfloat
        << std::endl;
  };
  auto checkpoint = [&]() { save_train_state(state_path, model, *optimizer, progress); };

  if (progress.steps_done == 0) run_eval(0);
  double interval_loss = 0, interval_seconds = 0;
  int64_t interval_steps = 0;
  bool stopped = false;
  for (int64_t step = progress.steps_done; step < o.steps; ++step) {
    auto start = Clock::now();
    const double lr = schedule.at(step);
    set_learning_rate(*optimizer, lr);
    Batch b = sample_batch(train_ids, o.batch, o.seq, o.seed, step);
    const double loss = train_step(model, *optimizer, b, teacher ? &teacher : nullptr, o.distill_weight, o.clip);

    const int64_t done = step + 1;
    interval_loss += loss;
    interval_steps += 1;
    double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    interval_seconds += seconds;
    progress.train_seconds += seconds;
    progress.steps_done = done;

    if (done % o.log_every == 0 || done == o.steps) {
      double mean_loss = interval_loss / static_cast<double>(interval_steps);
      double tokens_per_second = static_cast<double>(interval_steps * tokens_per_step) / interval_seconds;
      double eta = static_cast<double>(o.steps - done) * interval_seconds / static_cast<double>(interval_steps);
      record({{"step", done}, {"loss", mean_loss}, {"lr", lr}, {"tokens_per_second", tokens_per_second}});
      log << "step " << done << "/" << o.steps << "  loss " << std::fixed << std::setprecision(4) << mean_loss
          << "  lr " << std::scientific << std::setprecision(2) << lr << std::fixed << std::setprecision(0) << "  tok/s "
          << tokens_per_second << "  elapsed " << hms(progress.train_seconds) << "  eta " << hms(eta)
          << std::defaultfloat << std::endl;
      interval_loss = interval_seconds = 0;
      interval_steps = 0;
    }
    if (done % o.eval_every == 0 && done != o.steps) run_eval(done);
    stopped = stop_requested || (o.stop_after > 0 && done >= o.stop_after && done < o.steps);
    if (done % o.checkpoint_every == 0 || stopped) checkpoint();
    if (stopped) break;
  }

  summary.steps_done = progress.steps_done;
  summary.tokens_trained = progress.steps_done * tokens_per_step;
  summary.train_seconds = progress.train_seconds;
  if (stopped) {
    log << "stopped after step " << progress.steps_done << "/" << o.steps << "; state saved in " << state_path
        << " (--resume continues)" << std::endl;
    return summary;
  }
  run_eval(o.steps);
  checkpoint();
  save_hf_model(model, o.out_dir, o.dtype, o.tokenizer, o.max_shard_bytes);
  summary.finished = true;
  summary.eval_loss = eval_loss;

  json report = {{"parameters", summary.parameters},
                 {"steps", summary.steps_done},
                 {"tokens_trained", summary.tokens_trained},
                 {"train_seconds", summary.train_seconds},
                 {"threads", o.threads},
                 {"eval_loss", eval_batches.empty() ? json(nullptr) : json(eval_loss)},
                 {"eval_tokens", token_count(eval_batches)},
                 {"train_text", o.text},
                 {"eval_text", o.eval_text},
                 {"recipe", recipe},
                 {"history", json::array()}};
  std::istringstream lines(progress.history);
  for (std::string line; std::getline(lines, line);) report["history"].push_back(json::parse(line));
  write_file_atomically((std::filesystem::path(o.out_dir) / "training.json").string(), report.dump(1) + "\n");
  log << "wrote " << o.out_dir << " (" << dtype_name(o.dtype) << "), eval loss " << std::setprecision(4) << eval_loss << ", "
      << hms(summary.train_seconds) << " of training" << std::endl;
  return summary;
}

}  // namespace specd::training
