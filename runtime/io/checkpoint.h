#pragma once
// The weights of a Hugging Face model directory: `model.safetensors`, or the shards listed by
// `model.safetensors.index.json` ({"weight_map": {tensor name: shard file}}). Each file is
// memory-mapped once; tensor views stay valid for the Checkpoint's lifetime.
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "io/safetensors.h"

namespace specd {

class Checkpoint {
 public:
  // Prefers model.safetensors when both exist. InputError naming the file on any problem: neither
  // file present, a malformed index or shard, a mapped tensor missing from its shard, a tensor in
  // two shards.
  static Checkpoint open_dir(const std::string& dir);

  const std::string& dir() const { return dir_; }
  // model.safetensors or the index file: where a missing tensor is reported.
  const std::string& source() const { return source_; }

  const TensorView* find(const std::string& name) const;  // nullptr when absent
  const TensorView& get(const std::string& name) const;   // InputError naming source() when absent
  // The file holding `name` (its shard), or source() when the checkpoint has no such tensor.
  const std::string& file_of(const std::string& name) const;
  std::vector<std::string> names() const;  // sorted
  // SafetensorsFile::drop_pages for the file holding `name`: the whole tensor, or `nbytes` of
  // its bytes from `offset`.
  void drop_pages(const std::string& name, size_t offset = 0, size_t nbytes = SIZE_MAX) const;

 private:
  std::string dir_;
  std::string source_;
  std::vector<SafetensorsFile> files_;
  std::map<std::string, size_t> file_index_;  // tensor name -> index into files_
};

// Writes `tensors` as shards "model-0000i-of-0000n.safetensors" of at most `max_shard_bytes` of data
// each (at least one tensor per shard) plus model.safetensors.index.json, as Hugging Face's
// save_pretrained does for large models. Returns the shard file names.
std::vector<std::string> write_sharded_checkpoint(const std::string& dir,
                                                  const std::vector<TensorView>& tensors,
                                                  size_t max_shard_bytes);

}  // namespace specd
