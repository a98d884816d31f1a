#include "io/random_checkpoint.h"

#include <cstring>
#include <filesystem>
#include <random>

#include "io/checkpoint.h"
#include "io/expected_tensors.h"
#include "io/half_precision.h"
#include "io/safetensors.h"

namespace specd {
namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The bytes of `values` stored as `dtype`.
std::vector<uint8_t> encode(const std::vector<float>& values, DType dtype) {
  std::vector<uint8_t> bytes(values.size() * dtype_size(dtype));
  for (size_t i = 0; i < values.size(); ++i) {
    if (dtype == DType::F32) {
      std::memcpy(&bytes[i * 4], &values[i], 4);
    } else {
      uint16_t h = dtype == DType::F16 ? float_to_half(values[i]) : float_to_bf16(values[i]);
      std::memcpy(&bytes[i * 2], &h, 2);
    }
  }
  return bytes;
}

}  // namespace

void write_random_checkpoint(const std::string& dir, const ModelConfig& config, const RandomCheckpointOptions& options) {
  if (options.dtype != DType::F32 && options.dtype != DType::F16 && options.dtype != DType::BF16)
    throw std::invalid_argument("write_random_checkpoint: dtype must be F32, F16 or BF16");
  std::filesystem::create_directories(dir);
  std::mt19937_64 rng(options.seed);
  std::normal_distribution<float> weight(0.0f, static_cast<float>(options.stddev));
  std::normal_distribution<float> jitter(0.0f, static_cast<float>(options.norm_gain_jitter));

  std::vector<ExpectedTensor> expected = expected_tensors(config);
  std::vector<std::vector<uint8_t>> storage;
  std::vector<TensorView> views;
  for (const auto& tensor : expected) {
    std::vector<float> values(static_cast<size_t>(element_count(tensor.shape)));
    bool is_gain = ends_with(tensor.name, "norm.weight");
    for (auto& v : values) v = is_gain ? 1.0f + (options.norm_gain_jitter > 0 ? jitter(rng) : 0.0f) : weight(rng);
    storage.push_back(encode(values, options.dtype));
    views.push_back(TensorView{tensor.name, options.dtype, tensor.shape, storage.back().data(), storage.back().size()});
  }
  if (options.max_shard_bytes > 0) {
    write_sharded_checkpoint(dir, views, options.max_shard_bytes);
  } else {
    write_safetensors(dir + "/model.safetensors", views, {{"format", "pt"}});
  }
  write_hf_config(dir, config);
}

}  // namespace specd
