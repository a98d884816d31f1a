// Net2Net growth (training/growth.h): the grown model computes the source's function, its copies
// are not identical (so training can separate them), and shapes that are no growth are refused.
#include "catch_torch.h"
#include "fixture_models.h"
#include "fixture_training.h"
#include "forward_bounds.h"

#include "growth.h"
#include "hf_checkpoint.h"
#include "trainer.h"
#include "util/error.h"

using namespace specd;
using namespace specd::training;

namespace {

at::Tensor logits_of(TrainLlama& model) {
  torch::NoGradGuard no_grad;
  std::vector<int64_t> tokens;
  for (int64_t i = 0; i < 40; ++i) tokens.push_back((i * 131 + 7) % 301);
  return model->forward(torch::tensor(tokens, torch::kLong).unsqueeze(0))[0];
}

}  // namespace

TEST_CASE("a grown model computes the source model's logits", "[training]") {
  const ModelShape from_shape = test::tiny_training_shape();
  ModelShape to_shape = from_shape;
  to_shape.hidden *= 2;
  to_shape.heads *= 2;
  to_shape.kv_heads *= 2;
  to_shape.ffn *= GENERATE(1, 3);
  to_shape.layers = GENERATE(2, 3, 4);
  CAPTURE(to_shape.ffn, to_shape.layers);
  const ModelConfig from = make_model_config(from_shape, 301, 300), to = make_model_config(to_shape, 301, 300);
  TrainLlama source = test::perturbed_model(from, 11);
  TrainLlama grown(to);
  grow_model(source, grown, GrowthOptions{0.1, 5});

  const at::Tensor want = logits_of(source), got = logits_of(grown);
  REQUIRE(got.sizes() == want.sizes());
  // Both are float32 evaluations of one function, summed over other terms in other orders: within
  // the float32 bound of the grown model (the larger sums), read from its written checkpoint.
  const std::string dir = test::fixture_dir("training-growth");
  save_hf_model(grown, dir, DType::F32, "");
  CHECK((got - want).abs().max().item<double>() <= test::float32_reorder_bound(dir, to, 40));
  // Not trivially alike: another model's logits are far.
  TrainLlama other = test::perturbed_model(to, 11);
  CHECK((got - logits_of(other)).abs().max().item<double>() > 0.1);

  // The copies of a hidden coordinate are read with different shares, so they get different gradients.
  const auto& q = grown->layers[0]->as<DecoderLayer>()->self_attn->q_proj->weight;
  CHECK(!at::equal(q.narrow(1, 0, 64), q.narrow(1, 64, 64)));
}

TEST_CASE("growth refuses shapes that are not a growth of the source", "[training]") {
  const ModelConfig from = test::tiny_training_config();
  TrainLlama source = test::perturbed_model(from, 11);
  auto refused = [&](ModelShape shape, const std::string& field) {
    TrainLlama grown(make_model_config(shape, 301, 300));
    CHECK_THROWS_WITH(grow_model(source, grown, GrowthOptions{}), Catch::Contains(field));
  };
  ModelShape s = test::tiny_training_shape();
  s.layers = 1;
  refused(s, "--layers");
  s = test::tiny_training_shape();
  s.hidden = 96;
  s.heads = 6;
  s.kv_heads = 3;
  refused(s, "--hidden");
  s = test::tiny_training_shape();
  s.hidden = 128;  // heads kept: head_dim would double
  refused(s, "head_dim");
  s = test::tiny_training_shape();
  s.ffn = 100;
  refused(s, "--ffn");
}
