// specd bench's bytes and FLOPs per forward, against a hand computation on a tiny shape.
#include <catch2/catch.hpp>

#include "bench/forward_traffic.h"

using namespace specd;

namespace {

// 2 layers, hidden 4, 2 query heads sharing 1 KV head of 2 dimensions, FFN 6, vocabulary 10:
// per row and layer q/k/v 4x(4+2+2) + o 4x4 + gate/up 4x12 + down 6x4 = 120 multiply-adds.
ModelConfig tiny_config() {
  ModelConfig cfg;
  cfg.vocab_size = 10;
  cfg.hidden_size = 4;
  cfg.intermediate_size = 6;
  cfg.num_hidden_layers = 2;
  cfg.num_attention_heads = 2;
  cfg.num_key_value_heads = 1;
  cfg.head_dim = 2;
  return cfg;
}

// BF16 matrices (embedding table 10x4x2 = 80 bytes); float32 keys and values: 2 layers x 1 head x
// 2 dims x 4 bytes = 16 bytes per row each of K, V and the key tiles, 768 for 16 rows.
ModelByteSizes tiny_sizes() { return {1000, 2, kv_read_bytes_per_row(768, true)}; }

}  // namespace

TEST_CASE("attention reads keys or their tiles, not both", "[traffic]") {
  CHECK(kv_read_bytes_per_row(768, true) == 32);
  CHECK(kv_read_bytes_per_row(512, false) == 32);
}

TEST_CASE("a forward of 3 tokens on 5 cached rows reads and computes what a hand count says", "[traffic]") {
  const ForwardTraffic t = forward_traffic(tiny_config(), tiny_sizes(), 3, 5, 3);
  // 1000 - 80 (table) + 3 rows x 8 + 8 rows seen x 32
  CHECK(t.bytes == Approx(1200));
  // tokens see 6, 7, 8 rows: 21 x 2 heads x 2 dims x 2 (QK^T, PV) = 168 multiply-adds a layer;
  // 2 FLOP x 2 layers x (3 x 120 + 168) + lm_head 2 x 4 x 10 x 3
  CHECK(t.flops == Approx(2 * 2 * (3 * 120 + 168) + 240));
}

TEST_CASE("without logits the forward does not read lm_head", "[traffic]") {
  const ForwardTraffic t = forward_traffic(tiny_config(), tiny_sizes(), 1, 0, 0);
  CHECK(t.bytes == Approx(1000 - 80 - 80 + 8 + 32));
  CHECK(t.flops == Approx(2 * 2 * (120 + 8)));
  CHECK_THROWS(forward_traffic(tiny_config(), tiny_sizes(), 2, 0, 3));
}

TEST_CASE("decode traffic is the mean over its one-token steps", "[traffic]") {
  // After a 5-token prompt, 3 new tokens: the prefill gives the first, then steps on 5 and 6 rows.
  const ForwardTraffic d = decode_traffic(tiny_config(), tiny_sizes(), {5}, 3);
  CHECK(d.bytes == Approx((1120 + 1152) / 2.0));
  CHECK(d.flops == Approx((752 + 784) / 2.0));
  const ForwardTraffic a = forward_traffic(tiny_config(), tiny_sizes(), 1, 5, 1), b = forward_traffic(tiny_config(), tiny_sizes(), 1, 6, 1);
  CHECK(d.bytes == Approx((a.bytes + b.bytes) / 2));
}
