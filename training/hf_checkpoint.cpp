#include "hf_checkpoint.h"

#include <filesystem>

#include "io/atomic_file.h"
#include "io/read_file.h"
#include "io/checkpoint.h"
#include "io/expected_tensors.h"
#include "io/safetensors.h"
#include "util/error.h"

namespace specd::training {
namespace {

torch::ScalarType scalar_type(DType dtype) {
  switch (dtype) {
    case DType::F32: return torch::kFloat;
    case DType::F16: return torch::kHalf;
    case DType::BF16: return torch::kBFloat16;
    default: throw std::invalid_argument(std::string("cannot save weights as ") + dtype_name(dtype));
  }
}

const char* torch_dtype_name(DType dtype) {
  switch (dtype) {
    case DType::F16: return "float16";
    case DType::BF16: return "bfloat16";
    default: return "float32";
  }
}

// Hugging Face names every tensor "model.<name>" except the untied head.
std::string hf_name(const std::string& name) { return name.rfind("lm_head.", 0) == 0 ? name : "model." + name; }

}  // namespace

void save_hf_model(TrainLlama& model, const std::string& dir, DType dtype, const std::string& tokenizer_path,
                   size_t max_shard_bytes) {
  std::filesystem::create_directories(dir);
  ModelConfig cfg = model->config();
  cfg.torch_dtype = torch_dtype_name(dtype);

  // Converted copies in Hugging Face's order; the views point into them until the write is done.
  std::vector<torch::Tensor> held;
  std::vector<TensorView> views;
  auto params = model->named_parameters();
  for (const ExpectedTensor& expected : expected_tensors(cfg)) {
    const torch::Tensor* p = nullptr;
    for (const auto& item : params)
      if (hf_name(item.key()) == expected.name) p = &item.value();
    if (!p) throw std::logic_error("training module has no parameter for " + expected.name);
    torch::Tensor t = p->detach().to(torch::kCPU, scalar_type(dtype)).contiguous();
    held.push_back(t);
    views.push_back(TensorView{expected.name, dtype, expected.shape, t.data_ptr(), t.nbytes()});
  }
  if (max_shard_bytes > 0) {
    write_sharded_checkpoint(dir, views, max_shard_bytes);
    std::filesystem::remove(std::filesystem::path(dir) / "model.safetensors");  // the loader would prefer it
  } else {
    write_safetensors((std::filesystem::path(dir) / "model.safetensors").string(), views, {{"format", "pt"}});
  }
  write_hf_config(dir, cfg);
  if (!tokenizer_path.empty())
    write_file_atomically((std::filesystem::path(dir) / "tokenizer.json").string(), read_whole_file(tokenizer_path));
}

TrainLlama load_hf_model(const std::string& dir) {
  ModelConfig cfg = ModelConfig::from_file((std::filesystem::path(dir) / "config.json").string());
  Checkpoint checkpoint = Checkpoint::open_dir(dir);
  check_checkpoint(cfg, checkpoint);
  TrainLlama model(cfg);
  torch::NoGradGuard no_grad;
  for (auto& item : model->named_parameters()) {
    const TensorView& view = checkpoint.get(hf_name(item.key()));
    auto raw = torch::from_blob(const_cast<void*>(view.data), view.shape, scalar_type(view.dtype));
    item.value().copy_(raw);
  }
  return model;
}

}  // namespace specd::training
