#include "growth.h"

#include <string>

#include "util/error.h"

namespace specd::training {
namespace {

struct Growth {
  int64_t width;  // hidden, heads and kv-heads
  int64_t ffn;
};

Growth check_growth(const ModelConfig& from, const ModelConfig& to) {
  const std::string where = "growth";
  auto require = [&](bool ok, const std::string& what) {
    if (!ok) input_error(where, what);
  };
  require(from.vocab_size == to.vocab_size, "vocabulary sizes differ");
  require(from.tie_word_embeddings && to.tie_word_embeddings, "both models must tie their embeddings");
  require(from.head_dim == to.head_dim, "head_dim must stay " + std::to_string(from.head_dim));
  require(from.rms_norm_eps == to.rms_norm_eps && from.rope_theta == to.rope_theta, "rms_norm_eps and rope_theta must stay");
  require(to.num_hidden_layers >= from.num_hidden_layers, "--layers must be at least the source's " + std::to_string(from.num_hidden_layers));
  require(to.hidden_size % from.hidden_size == 0, "--hidden must be a multiple of the source's " + std::to_string(from.hidden_size));
  const int64_t width = to.hidden_size / from.hidden_size;
  require(to.num_attention_heads == width * from.num_attention_heads && to.num_key_value_heads == width * from.num_key_value_heads,
          "--heads and --kv-heads must grow by the hidden size's factor " + std::to_string(width));
  require(to.intermediate_size % from.intermediate_size == 0,
          "--ffn must be a multiple of the source's " + std::to_string(from.intermediate_size));
  return {width, to.intermediate_size / from.intermediate_size};
}

class Splitter {
 public:
  Splitter(const GrowthOptions& options) : noise_(options.share_noise), generator_(at::detail::createCPUGenerator(options.seed)) {}

  // `copies` shares per element of `shape`, [copies, shape...], summing to one over the copies.
  torch::Tensor shares(int64_t copies, at::IntArrayRef shape) {
    std::vector<int64_t> full{copies};
    full.insert(full.end(), shape.begin(), shape.end());
    if (copies == 1) return torch::ones(full);
    torch::Tensor z = torch::randn(full, generator_);
    z = z - z.mean(0, /*keepdim=*/true);  // the deviations cancel over the copies
    return (1.0 + noise_ * z) / static_cast<double>(copies);
  }

  // w [out, in] reading inputs copied `copies` times (input j*in + c is input c): each copy gets a
  // share of w, the shares summing to w.
  torch::Tensor split_inputs(const torch::Tensor& w, int64_t copies) {
    const int64_t out = w.size(0), in = w.size(1);
    return (shares(copies, w.sizes()) * w.unsqueeze(0)).permute({1, 0, 2}).reshape({out, copies * in});
  }

 private:
  double noise_;
  at::Generator generator_;
};

// Output rows copied `copies` times (row j*out + o is row o).
torch::Tensor copy_outputs(const torch::Tensor& w, int64_t copies) { return w.repeat({copies, 1}); }

}  // namespace

void grow_model(const TrainLlama& source_holder, TrainLlama& grown, const GrowthOptions& options) {
  TrainLlama source = source_holder;  // the same module, through a holder that lends it non-const
  const ModelConfig& from = source->config();
  const ModelConfig& to = grown->config();
  const Growth g = check_growth(from, to);
  Splitter split(options);
  torch::NoGradGuard no_grad;

  grown->embed_tokens->weight.copy_(source->embed_tokens->weight.repeat({1, g.width}));
  // The tied head reads the final norm's output through the copied embedding: splitting the
  // gains keeps the logits.
  grown->norm->named_parameters()["weight"].copy_(
      (split.shares(g.width, {from.hidden_size}) * source->norm->named_parameters()["weight"].unsqueeze(0)).reshape({-1}));

  const int64_t from_layers = from.num_hidden_layers, to_layers = to.num_hidden_layers;
  std::vector<int64_t> source_of(static_cast<size_t>(to_layers), -1);
  for (int64_t l = 0; l < from_layers; ++l) source_of[static_cast<size_t>(l * to_layers / from_layers)] = l;
  for (int64_t l = 0; l < to_layers; ++l) {
    auto& layer = *grown->layers[static_cast<size_t>(l)]->as<DecoderLayer>();
    const int64_t s = source_of[static_cast<size_t>(l)];
    if (s < 0) {  // a new block that adds nothing yet; its other weights keep their random start
      layer.self_attn->o_proj->weight.zero_();
      layer.mlp->down_proj->weight.zero_();
      continue;
    }
    const auto& old = *source->layers[static_cast<size_t>(s)]->as<DecoderLayer>();
    for (const char* norm : {"input_layernorm", "post_attention_layernorm"}) {
      layer.named_parameters()[std::string(norm) + ".weight"].copy_(
          old.named_parameters()[std::string(norm) + ".weight"].repeat({g.width}));
    }
    layer.self_attn->q_proj->weight.copy_(copy_outputs(split.split_inputs(old.self_attn->q_proj->weight, g.width), g.width));
    layer.self_attn->k_proj->weight.copy_(copy_outputs(split.split_inputs(old.self_attn->k_proj->weight, g.width), g.width));
    layer.self_attn->v_proj->weight.copy_(copy_outputs(split.split_inputs(old.self_attn->v_proj->weight, g.width), g.width));
    layer.self_attn->o_proj->weight.copy_(copy_outputs(split.split_inputs(old.self_attn->o_proj->weight, g.width), g.width));
    layer.mlp->gate_proj->weight.copy_(copy_outputs(split.split_inputs(old.mlp->gate_proj->weight, g.width), g.ffn));
    layer.mlp->up_proj->weight.copy_(copy_outputs(split.split_inputs(old.mlp->up_proj->weight, g.width), g.ffn));
    layer.mlp->down_proj->weight.copy_(copy_outputs(split.split_inputs(old.mlp->down_proj->weight, g.ffn), g.width));
  }
}

}  // namespace specd::training
