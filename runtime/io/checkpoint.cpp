#include "io/checkpoint.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "io/atomic_file.h"
#include "io/json_reader.h"
#include "util/error.h"

namespace specd {

namespace fs = std::filesystem;

namespace {

constexpr const char* kSingleFile = "model.safetensors";
constexpr const char* kIndexFile = "model.safetensors.index.json";

std::string join(const std::string& dir, const std::string& name) {
  return (fs::path(dir) / name).string();
}

std::string shard_name(size_t index, size_t count) {
  char name[64];
  std::snprintf(name, sizeof name, "model-%05zu-of-%05zu.safetensors", index + 1, count);
  return name;
}

}  // namespace

Checkpoint Checkpoint::open_dir(const std::string& dir) {
  Checkpoint checkpoint;
  checkpoint.dir_ = dir;
  std::error_code error;
  if (!fs::is_directory(dir, error)) input_error(dir, "not a directory");

  const std::string single = join(dir, kSingleFile);
  if (fs::exists(single, error)) {
    checkpoint.source_ = single;
    checkpoint.files_.push_back(SafetensorsFile::open(single));
    for (const TensorView& t : checkpoint.files_[0].tensors()) checkpoint.file_index_[t.name] = 0;
    return checkpoint;
  }

  const std::string index_path = join(dir, kIndexFile);
  if (!fs::exists(index_path, error)) {
    input_error(dir, std::string("no ") + kSingleFile + " or " + kIndexFile);
  }
  checkpoint.source_ = index_path;
  const nlohmann::json index = read_json_file(index_path);
  if (!index.is_object()) input_error(index_path, "not a JSON object");
  const nlohmann::json& weight_map = JsonObjectReader(index, index_path).at("weight_map");
  if (!weight_map.is_object() || weight_map.empty()) {
    input_error(index_path, "field 'weight_map' must be a non-empty object");
  }

  std::map<std::string, size_t> shard_of_file;
  for (const auto& [name, shard] : weight_map.items()) {
    if (!shard.is_string() || shard.get<std::string>().empty() ||
        fs::path(shard.get<std::string>()).is_absolute()) {
      input_error(index_path, "weight_map entry " + single_quoted(name) + " must be a relative file name");
    }
    const std::string file = shard.get<std::string>();
    if (shard_of_file.count(file) == 0) {
      shard_of_file[file] = checkpoint.files_.size();
      checkpoint.files_.push_back(SafetensorsFile::open(join(dir, file)));
    }
    const SafetensorsFile& opened = checkpoint.files_[shard_of_file[file]];
    if (opened.find(name) == nullptr) {
      input_error(opened.path(), "tensor " + single_quoted(name) + " listed in " + kIndexFile +
                                     " is not in this shard");
    }
  }
  // Every tensor a shard holds is loaded, also those the index leaves out, so none slips past
  // the checks against the config.
  for (size_t i = 0; i < checkpoint.files_.size(); ++i) {
    for (const TensorView& t : checkpoint.files_[i].tensors()) {
      auto [it, inserted] = checkpoint.file_index_.emplace(t.name, i);
      if (!inserted) {
        input_error(checkpoint.files_[i].path(), "tensor " + single_quoted(t.name) + " is also in " +
                                                     checkpoint.files_[it->second].path());
      }
    }
  }
  return checkpoint;
}

const TensorView* Checkpoint::find(const std::string& name) const {
  auto it = file_index_.find(name);
  return it == file_index_.end() ? nullptr : files_[it->second].find(name);
}

const TensorView& Checkpoint::get(const std::string& name) const {
  const TensorView* view = find(name);
  if (view == nullptr) input_error(source_, "no tensor " + single_quoted(name));
  return *view;
}

const std::string& Checkpoint::file_of(const std::string& name) const {
  auto it = file_index_.find(name);
  return it == file_index_.end() ? source_ : files_[it->second].path();
}

void Checkpoint::drop_pages(const std::string& name, size_t offset, size_t nbytes) const {
  auto it = file_index_.find(name);
  if (it == file_index_.end()) return;
  const SafetensorsFile& file = files_[it->second];
  const TensorView* view = file.find(name);
  if (view == nullptr || offset >= view->nbytes) return;
  file.drop_pages(static_cast<const char*>(view->data) + offset, std::min(nbytes, view->nbytes - offset));
}

std::vector<std::string> Checkpoint::names() const {
  std::vector<std::string> names;
  names.reserve(file_index_.size());
  for (const auto& entry : file_index_) names.push_back(entry.first);
  return names;
}

std::vector<std::string> write_sharded_checkpoint(const std::string& dir,
                                                  const std::vector<TensorView>& tensors,
                                                  size_t max_shard_bytes) {
  std::vector<std::vector<TensorView>> shards;
  size_t shard_bytes = 0;
  for (const TensorView& t : tensors) {
    if (shards.empty() || (shard_bytes + t.nbytes > max_shard_bytes && !shards.back().empty())) {
      shards.emplace_back();
      shard_bytes = 0;
    }
    shards.back().push_back(t);
    shard_bytes += t.nbytes;
  }

  nlohmann::ordered_json weight_map = nlohmann::ordered_json::object();
  std::vector<std::string> names;
  size_t total_size = 0;
  for (size_t i = 0; i < shards.size(); ++i) {
    names.push_back(shard_name(i, shards.size()));
    write_safetensors(join(dir, names.back()), shards[i], {{"format", "pt"}});
    for (const TensorView& t : shards[i]) {
      weight_map[t.name] = names.back();
      total_size += t.nbytes;
    }
  }
  const nlohmann::ordered_json index = {{"metadata", {{"total_size", total_size}}},
                                        {"weight_map", weight_map}};
  write_file_atomically(join(dir, kIndexFile), index.dump(2) + "\n");
  return names;
}

}  // namespace specd
