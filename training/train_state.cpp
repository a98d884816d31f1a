#include "train_state.h"

#include <filesystem>
#include <sstream>

#include "io/atomic_file.h"

namespace specd::training {

void save_train_state(const std::string& path, TrainLlama& model, torch::optim::Optimizer& optimizer,
                      const TrainProgress& progress) {
  torch::serialize::OutputArchive archive, model_archive, optimizer_archive;
  model->save(model_archive);
  optimizer.save(optimizer_archive);
  archive.write("model", model_archive);
  archive.write("optimizer", optimizer_archive);
  archive.write("steps_done", c10::IValue(progress.steps_done));
  archive.write("train_seconds", c10::IValue(progress.train_seconds));
  archive.write("recipe", c10::IValue(progress.recipe));
  archive.write("history", c10::IValue(progress.history));
  std::ostringstream bytes;
  archive.save_to(bytes);
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  write_file_atomically(path, bytes.str());
}

std::optional<TrainProgress> load_train_state(const std::string& path, TrainLlama& model,
                                              torch::optim::Optimizer& optimizer) {
  if (!std::filesystem::exists(path)) return std::nullopt;
  torch::serialize::InputArchive archive, model_archive, optimizer_archive;
  archive.load_from(path);
  archive.read("model", model_archive);
  archive.read("optimizer", optimizer_archive);
  model->load(model_archive);
  optimizer.load(optimizer_archive);
  c10::IValue value;
  TrainProgress progress;
  archive.read("steps_done", value);
  progress.steps_done = value.toInt();
  archive.read("train_seconds", value);
  progress.train_seconds = value.toDouble();
  archive.read("recipe", value);
  progress.recipe = value.toStringRef();
  archive.read("history", value);
  progress.history = value.toStringRef();
  return progress;
}

}  // namespace specd::training
