// The forward pass against itself: incremental decoding with the KV cache must give the logits of
// one full forward, and a tree forward must give, node by node, the logits of that node's
// root-to-node chain.
#include "catch_torch.h"
#include "test_skip.h"

#include "fixture_models.h"
#include "forward_bounds.h"
#include "model/cpu/attention.h"
#include "model/cpu/matmul_bf16_dot.h"
#include "model/kv_memory.h"

#include <cstring>
#include <limits>

using namespace specd;

namespace {

at::Tensor run(const LlamaModel& model, KvCache& cache, std::vector<int64_t> tokens, std::vector<int64_t> parents = {},
               std::vector<int64_t> positions = {}) {
  ForwardRequest request;
  request.tokens = std::move(tokens);
  request.parents = std::move(parents);
  request.positions = std::move(positions);
  return test::tensor(model.forward(cache, request).logits);
}

double max_abs_diff(const at::Tensor& a, const at::Tensor& b) { return (a - b).abs().max().item<double>(); }
double max_abs_diff(const FloatRows& a, const FloatRows& b) { return max_abs_diff(test::tensor(a), test::tensor(b)); }

// Two evaluations of one forward, batched differently: the CPU kernels sum in one order however a
// token is batched, so they agree bit for bit; ATen's BLAS may sum in another order for another
// batch shape, so its results agree within `bound` (forward_bounds.h).
void check_same_forward(const at::Tensor& a, const at::Tensor& b, bool aten, double bound) {
  REQUIRE(a.sizes() == b.sizes());
  if (aten) {
    CAPTURE(bound);
    CHECK(max_abs_diff(a, b) <= bound);
  } else {
    CHECK(at::equal(a, b));
  }
}
double largest(const at::Tensor& a, const at::Tensor& b) { return std::max(a.abs().max().item<double>(), b.abs().max().item<double>()); }

ModelConfig with_rope(ModelConfig cfg, RopeScalingType type) {
  cfg.rope_scaling.type = type;
  cfg.rope_scaling.factor = 4.0;
  cfg.rope_scaling.original_max_position_embeddings = 64;
  cfg.rope_theta = 500000.0;
  return cfg;
}

}  // namespace

TEST_CASE("KV-incremental logits equal one full forward", "[model][oracle]") {
  auto [name, cfg] = GENERATE(table<std::string, ModelConfig>({
      {"llama-gqa", test::tiny_config("llama")},
      {"qwen2-bias", test::tiny_config("qwen2")},
      {"mistral", test::tiny_config("mistral")},
      {"llama3-rope", with_rope(test::tiny_config("llama"), RopeScalingType::Llama3)},
      {"linear-rope", with_rope(test::tiny_config("llama"), RopeScalingType::Linear)},
  }));
  const test::Backend backend = GENERATE(from_range(test::all_backends()));
  CAPTURE(name, test::backend_name(backend));
  const std::string dir = test::write_model("incremental-" + name, cfg);
  auto model = test::load_model(dir, backend);
  at::InferenceMode guard;
  const auto tokens = test::some_tokens(40, cfg.vocab_size, 1);

  KvCache full_cache = model->new_cache();
  at::Tensor full = run(*model, full_cache, tokens);
  REQUIRE(full.sizes() == at::IntArrayRef{40, cfg.vocab_size});

  // Prefill 9, then chunks of 1, 5, 1, 1, 8, ... as a decoder and a verifier would feed them.
  KvCache cache = model->new_cache();
  std::vector<at::Tensor> pieces;
  size_t at_token = 0;
  for (size_t chunk : {9, 1, 5, 1, 1, 8, 1, 14}) {
    std::vector<int64_t> part(tokens.begin() + at_token, tokens.begin() + at_token + chunk);
    pieces.push_back(run(*model, cache, part));
    at_token += chunk;
  }
  REQUIRE(at_token == tokens.size());
  CHECK(cache.length() == 40);
  check_same_forward(at::cat(pieces), full, backend.aten, test::float32_reorder_bound(dir, cfg, 40));
  // The logits are not trivially alike: neighbouring positions differ.
  CHECK(max_abs_diff(full[10], full[11]) > 1e-2);
}

// The ATen forward's projections are not batch-invariant (BLAS sums in another order for another
// number of rows), so with a 16-bit cache a key element within float rounding of a BF16/F16
// rounding boundary can round the other way in the incremental run than in the full one. The
// logits then agree to within a small part of what the cache's rounding itself moves them, not
// to float32 precision; the CPU kernels are batch-invariant and agree exactly (above).
TEST_CASE("the ATen forward with a 16-bit cache: incremental equals full within a quarter of the rounding's effect", "[model][oracle][kv]") {
  const ModelConfig cfg = test::tiny_config(GENERATE(as<std::string>{}, "llama", "qwen2"));
  const KvType kv = GENERATE(KvType::BF16, KvType::F16);
  CAPTURE(cfg.model_type, kv_type_name(kv));
  const std::string dir = test::write_model("incremental-aten-" + cfg.model_type, cfg);
  auto model = test::load_model(dir, true, 1, false, kv);
  auto exact = test::load_model(dir, true);
  at::InferenceMode guard;
  const auto tokens = test::some_tokens(40, cfg.vocab_size, 1);
  KvCache full_cache = model->new_cache(), exact_cache = exact->new_cache();
  const at::Tensor full = run(*model, full_cache, tokens);
  const double rounding = max_abs_diff(full, run(*exact, exact_cache, tokens));
  KvCache cache = model->new_cache();
  std::vector<at::Tensor> pieces;
  size_t at_token = 0;
  for (size_t chunk : {9, 1, 5, 1, 1, 8, 1, 14}) {
    pieces.push_back(run(*model, cache, std::vector<int64_t>(tokens.begin() + at_token, tokens.begin() + at_token + chunk)));
    at_token += chunk;
  }
  CHECK(rounding > 1e-3);
  CHECK(max_abs_diff(at::cat(pieces), full) < 0.25 * rounding);
}

TEST_CASE("a tree forward equals the chain forward of each root-to-node path", "[model][oracle]") {
  auto cfg = test::tiny_config("qwen2");
  const test::Backend backend = GENERATE(from_range(test::all_backends()));
  CAPTURE(test::backend_name(backend));
  const std::string dir = test::write_model("tree", cfg);
  auto model = test::load_model(dir, backend);
  at::InferenceMode guard;
  const auto prefix = test::some_tokens(11, cfg.vocab_size, 2);
  // Two roots (children of the last cached token), branches, and a chain of depth 4.
  const std::vector<int64_t> tree_tokens{12, 40, 77, 12, 90, 3, 55, 40, 8};
  const std::vector<int64_t> parents{-1, 0, 0, 1, 1, 2, -1, 6, 3};

  std::vector<int64_t> positions;
  for (size_t i = 0; i < parents.size(); ++i) {
    int64_t depth = 0;
    for (int64_t j = static_cast<int64_t>(i); j >= 0; j = parents[j]) ++depth;
    positions.push_back(static_cast<int64_t>(prefix.size()) + depth - 1);
  }
  KvCache cache = model->new_cache();
  run(*model, cache, prefix);
  ForwardRequest request;
  request.tokens = tree_tokens;
  request.parents = parents;
  request.positions = positions;
  request.hidden_layers = {0, 2};
  ForwardResult tree = model->forward(cache, request);

  const int64_t context = static_cast<int64_t>(prefix.size() + tree_tokens.size());
  const double logits_bound = test::float32_reorder_bound(dir, cfg, context), state_error = test::float32_layers_error(cfg, context, 2);
  for (size_t node = 0; node < tree_tokens.size(); ++node) {
    CAPTURE(node);
    std::vector<int64_t> path;
    for (int64_t j = static_cast<int64_t>(node); j >= 0; j = parents[j]) path.insert(path.begin(), tree_tokens[j]);
    KvCache chain_cache = model->new_cache();
    run(*model, chain_cache, prefix);
    ForwardRequest chain_request;
    chain_request.tokens = path;
    chain_request.hidden_layers = {0, 2};
    ForwardResult chain = model->forward(chain_cache, chain_request);
    check_same_forward(test::tensor(tree.logits)[node], test::tensor(chain.logits)[path.size() - 1], backend.aten, logits_bound);
    const at::Tensor tree_state = test::tensor(tree.hidden[1])[node], chain_state = test::tensor(chain.hidden[1])[path.size() - 1];
    check_same_forward(tree_state, chain_state, backend.aten,
                       test::float32_reorder_bound_state(state_error, cfg.hidden_size, largest(tree_state, chain_state)));
  }
}

TEST_CASE("committing a tree path leaves the cache AR decoding would hold", "[model][kv]") {
  auto cfg = test::tiny_config("llama");
  const test::Backend backend = GENERATE(from_range(test::all_backends()));
  CAPTURE(test::backend_name(backend));
  const std::string dir = test::write_model("commit", cfg);
  auto model = test::load_model(dir, backend);
  at::InferenceMode guard;
  const auto prefix = test::some_tokens(6, cfg.vocab_size, 3);
  const std::vector<int64_t> tree_tokens{5, 6, 7, 8, 9, 10};
  const std::vector<int64_t> parents{-1, 0, 0, 2, 3, 1};
  const std::vector<int64_t> positions{6, 7, 7, 8, 9, 8};
  const std::vector<int64_t> accepted{0, 2, 3, 4};  // tokens 5, 7, 8, 9

  KvCache cache = model->new_cache();
  run(*model, cache, prefix);
  run(*model, cache, tree_tokens, parents, positions);
  cache.commit_path(static_cast<int64_t>(prefix.size()), accepted);
  REQUIRE(cache.length() == 10);

  std::vector<int64_t> committed = prefix;
  for (int64_t i : accepted) committed.push_back(tree_tokens[i]);
  KvCache ar_cache = model->new_cache();
  for (int64_t t : committed) run(*model, ar_cache, {t});
  const int64_t context = 13;  // prefix, tree, one more token
  const int64_t kv_width = cfg.num_key_value_heads * cfg.head_dim;
  for (int64_t l = 0; l < cfg.num_hidden_layers; ++l) {
    CAPTURE(l);
    // Layer l's keys and values: l layers, then the input norm and a projection (and RoPE's rotation).
    const double eps = test::float32_layers_error(cfg, context, l) + 3 * test::float32_gamma(cfg.hidden_size);
    for (const auto& rows : {std::make_pair(test::keys(cache, l), test::keys(ar_cache, l)),
                             std::make_pair(test::values(cache, l), test::values(ar_cache, l))}) {
      const at::Tensor a = rows.first.narrow(1, 0, 10), b = rows.second.narrow(1, 0, 10);
      check_same_forward(a, b, backend.aten, test::float32_reorder_bound_state(eps, kv_width, largest(a, b)));
    }
  }
  // And decoding continues identically from either cache.
  check_same_forward(run(*model, cache, {33}), run(*model, ar_cache, {33}), backend.aten,
                     test::float32_reorder_bound(dir, cfg, context));
}

TEST_CASE("truncate drops rows so that a re-run gives the same logits", "[model][kv]") {
  auto cfg = test::tiny_config("llama");
  const test::Backend backend = GENERATE(from_range(test::all_backends()));
  CAPTURE(test::backend_name(backend));
  const std::string dir = test::write_model("truncate", cfg);
  auto model = test::load_model(dir, backend);
  at::InferenceMode guard;
  KvCache cache = model->new_cache();
  run(*model, cache, test::some_tokens(10, cfg.vocab_size, 4));
  at::Tensor first = run(*model, cache, {1, 2, 3});
  run(*model, cache, {4, 5});
  cache.truncate(10);
  check_same_forward(run(*model, cache, {1, 2, 3}), first, backend.aten, test::float32_reorder_bound(dir, cfg, 15));
}

// A multi-query qwen2 model of the given head size and dtype, and one tree forward over it after
// a 30-token prefill, run with the CPU kernels or ATen, with or without BF16 activations.
struct BackendCase {
  ModelConfig cfg;
  std::string dir;
  int threads;

  BackendCase(const std::string& name, int64_t head_dim, DType dtype, int threads) : cfg(test::tiny_config("qwen2")), threads(threads) {
    cfg.num_key_value_heads = 1;  // multi-query attention: every head shares one key/value head
    cfg.head_dim = head_dim;
    dir = test::write_model(name, cfg, dtype);
  }

  ForwardResult run_with(bool aten, bool fp32_activations = true, KvType kv = KvType::F32) const {
    auto model = test::load_model(dir, aten, threads, fp32_activations, kv);
    at::InferenceMode guard;
    KvCache cache = model->new_cache();
    run(*model, cache, test::some_tokens(30, cfg.vocab_size, 9));
    ForwardRequest request;
    request.tokens = {4, 8, 15, 16, 23, 42};
    request.parents = {-1, 0, 0, 2, -1, 4};
    request.positions = {30, 31, 31, 32, 30, 31};
    request.hidden_layers = {1, 3};
    return model->forward(cache, request);
  }
};

TEST_CASE("the CPU kernels compute what the device-generic ATen forward computes", "[model][oracle]") {
  // Head sizes for each attention path: the batched kernel (16, 32, 64 with AVX-512), and the
  // one-query kernel's 8-wide blocks with a 32-wide part and a tail (40).
  const int64_t head_dim = GENERATE(16, 32, 40, 64);
  const DType dtype = GENERATE(DType::F32, DType::BF16, DType::F16);
  const int threads = GENERATE(1, 2);
  CAPTURE(head_dim, dtype_name(dtype), threads);
  const BackendCase backends("backends", head_dim, dtype, threads);
  ForwardResult kernels = backends.run_with(false);
  ForwardResult aten = backends.run_with(true);
  // 16-bit weights are widened exactly in both; only the order of float operations differs.
  const ModelConfig& cfg = backends.cfg;
  const int64_t context = 36;  // prefill and tree
  CHECK(max_abs_diff(kernels.logits, aten.logits) <= test::float32_reorder_bound(backends.dir, cfg, context));
  REQUIRE(kernels.hidden.size() == 2);
  for (size_t i = 0; i < 2; ++i) {
    const int64_t layer = i == 0 ? 1 : 3;  // request.hidden_layers
    const at::Tensor a = test::tensor(kernels.hidden[i]), b = test::tensor(aten.hidden[i]);
    CHECK(max_abs_diff(a, b) <= test::float32_reorder_bound_state(test::float32_layers_error(cfg, context, layer),
                                                                   cfg.hidden_size, largest(a, b)));
  }
}

// With a BF16 or F16 cache both round the new keys and values the same way (to nearest, ties to
// even) and widen them exactly; their float32 keys differ by the order of float operations, so an
// element near a rounding boundary may round differently (see the ATen incremental test above):
// they agree to within a small part of what the rounding itself moves the logits.
TEST_CASE("at BF16 and F16 KV precision the CPU kernels compute what ATen computes with that cache", "[model][oracle][kv]") {
  const int64_t head_dim = GENERATE(16, 32, 40, 64);
  const KvType kv = GENERATE(KvType::BF16, KvType::F16);
  CAPTURE(head_dim, kv_type_name(kv));
  const BackendCase backends("backends-kv", head_dim, DType::F32, 2);
  ForwardResult kernels = backends.run_with(false, true, kv);
  ForwardResult aten = backends.run_with(true, true, kv);
  const double rounding = max_abs_diff(kernels.logits, backends.run_with(false).logits);
  CHECK(rounding > 1e-3);
  CHECK(max_abs_diff(kernels.logits, aten.logits) < 0.25 * rounding);
  CHECK(max_abs_diff(kernels.hidden[1], aten.hidden[1]) < 0.25 * max_abs_diff(kernels.hidden[1], backends.run_with(false).hidden[1]));
}

TEST_CASE("with BF16 activations (AVX512-BF16) the CPU kernels stay within BF16 precision of ATen", "[model][oracle]") {
  if (!cpu::bf16_dot_supported()) SPECD_SKIP("no AVX512-BF16 kernels in this build");
  const int64_t head_dim = GENERATE(16, 32, 40, 64);
  const int threads = GENERATE(1, 2);
  CAPTURE(head_dim, threads);
  // With BF16 weights the default kernels round the activations to BF16 (relative error 2^-9 per
  // input); the logits stay within that of the exact forward.
  const BackendCase backends("backends-bf16-activations", head_dim, DType::BF16, threads);
  ForwardResult aten = backends.run_with(true);
  ForwardResult rounded = backends.run_with(false, false);
  const double scale = test::tensor(aten.logits).abs().max().item<double>();
  CHECK(max_abs_diff(rounded.logits, aten.logits) < 0.02 * scale);
  CHECK(max_abs_diff(rounded.logits, aten.logits) > 0);  // the BF16 path really ran
}

TEST_CASE("a tree continued across forwards equals the chain forward of each path", "[model][oracle]") {
  auto cfg = test::tiny_config("llama");
  const test::Backend backend = GENERATE(from_range(test::all_backends()));
  CAPTURE(test::backend_name(backend));
  const std::string dir = test::write_model("tree-levels", cfg);
  auto model = test::load_model(dir, backend);
  at::InferenceMode guard;
  const auto prefix = test::some_tokens(9, cfg.vocab_size, 5);
  const int64_t base = static_cast<int64_t>(prefix.size());
  KvCache cache = model->new_cache();
  run(*model, cache, prefix);

  // Level 1: two alternatives for the next token (rows base, base + 1).
  ForwardRequest level1;
  level1.tokens = {21, 34};
  level1.parents = {-1, -1};
  level1.positions = {base, base};
  level1.tree_base = base;
  model->forward(cache, level1);
  // Level 2: children of both (rows base + 2 .. base + 4), seeing only their own ancestor.
  ForwardRequest level2;
  level2.tokens = {55, 89, 144};
  level2.parents = {base, base + 1, base + 1};
  level2.positions = {base + 1, base + 1, base + 1};
  level2.tree_base = base;
  level2.cached_parents = {-1, -1};
  at::Tensor logits = test::tensor(model->forward(cache, level2).logits);

  const std::vector<std::vector<int64_t>> paths{{21, 55}, {34, 89}, {34, 144}};
  const double bound = test::float32_reorder_bound(dir, cfg, base + 5);
  for (size_t node = 0; node < paths.size(); ++node) {
    CAPTURE(node);
    KvCache chain_cache = model->new_cache();
    run(*model, chain_cache, prefix);
    at::Tensor chain = run(*model, chain_cache, paths[node]);
    check_same_forward(logits[node], chain[1], backend.aten, bound);
  }
}

// A draft tree grown level by level (as the tree drafter does: forwards continued through
// tree_base and cached_parents, then truncated back and re-synced) must read only rows it may
// see: a cache whose unused rows and key tiles hold NaN, left over from another request, gives
// bit-identical logits to a fresh one.
TEST_CASE("continued tree forwards do not depend on the cache's unused memory", "[model][oracle]") {
  auto cfg = test::tiny_config("llama");
  auto dtype = GENERATE(DType::F32, DType::BF16);
  const KvType kv = GENERATE(KvType::F32, KvType::BF16, KvType::F16);
  CAPTURE(dtype_name(dtype), kv_type_name(kv));
  auto model = test::load_model(test::write_model("tree-garbage", cfg, dtype), /*aten=*/false, /*threads=*/2, false, kv);
  at::InferenceMode guard;

  auto grow = [&](KvCache& cache) {
    std::vector<at::Tensor> logits;
    auto keep = [&](const at::Tensor& t) { logits.push_back(t.clone()); };
    const auto prefix = test::some_tokens(21, cfg.vocab_size, 4);
    const int64_t base = static_cast<int64_t>(prefix.size());
    keep(run(*model, cache, prefix));
    // Three levels of three nodes: rows base..base+2, then their children, then grandchildren.
    std::vector<int64_t> cached_parents;
    const std::vector<std::vector<int64_t>> parents{{-1, -1, -1}, {base, base, base + 2}, {base + 3, base + 5, base + 5}};
    for (size_t level = 0; level < parents.size(); ++level) {
      ForwardRequest feed;
      feed.tokens = test::some_tokens(3, cfg.vocab_size, 10 + static_cast<int64_t>(level));
      feed.parents = parents[level];
      feed.positions.assign(3, base + static_cast<int64_t>(level));
      feed.tree_base = base;
      feed.cached_parents = cached_parents;
      keep(test::tensor(model->forward(cache, feed).logits));
      cached_parents.insert(cached_parents.end(), feed.parents.begin(), feed.parents.end());
    }
    cache.truncate(base);
    keep(run(*model, cache, {7, 8}));  // the next step's sync
    ForwardRequest feed;
    feed.tokens = {3, 4, 5, 6};
    feed.parents = {-1, -1, -1, -1};
    feed.positions.assign(4, base + 2);
    feed.tree_base = base + 2;
    keep(test::tensor(model->forward(cache, feed).logits));
    return logits;
  };

  KvCache fresh = model->new_cache();
  const std::vector<at::Tensor> expected = grow(fresh);

  KvCache used = model->new_cache();
  run(*model, used, test::some_tokens(60, cfg.vocab_size, 9));  // another request first
  used.truncate(0);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (int64_t l = 0; l < cfg.num_hidden_layers; ++l) {
    test::keys(used, l).fill_(nan);
    test::values(used, l).fill_(nan);
    auto& rows = dynamic_cast<CpuKvStorage&>(used.storage());
    cpu::with_kv_element(kv, [&](auto element) {  // all-ones bits: NaN at every element type
      using E = decltype(element);
      std::memset(rows.key_tiles<E>(l), 0xff, cfg.num_key_value_heads * cpu::key_tiles_per_head(used.capacity(), cfg.head_dim) * sizeof(E));
    });
  }
  const std::vector<at::Tensor> got = grow(used);
  REQUIRE(got.size() == expected.size());
  for (size_t i = 0; i < got.size(); ++i) {
    CAPTURE(i);
    CHECK(at::equal(got[i], expected[i]));
  }
}

// Greedy identity with AR needs more than close logits: a near-tie decided differently in a
// verify forward than in an AR step makes a speculative method's output differ. So a token's
// logits must be bit-identical whether it is decoded alone, verified in a chain, or verified as a
// node of a tree (attention is the only part whose arithmetic could depend on the batch).
TEST_CASE("a token's logits are bit-identical alone, in a chain and in a tree", "[model][oracle]") {
  auto cfg = test::tiny_config("llama");
  cfg.head_dim = GENERATE(16, 32, 40, 12);  // batched kernel (AVX-512) or not; 8-wide blocks or scalar
  cfg.num_attention_heads = 4;
  auto dtype = GENERATE(DType::F32, DType::BF16);
  const KvType kv = GENERATE(KvType::F32, KvType::BF16, KvType::F16);
  CAPTURE(cfg.head_dim, dtype_name(dtype), kv_type_name(kv));
  auto model = test::load_model(test::write_model("batch-invariance", cfg, dtype), /*aten=*/false, /*threads=*/2,
                                /*fp32_activations=*/false, kv);
  at::InferenceMode guard;
  const std::vector<int64_t> prompt = test::some_tokens(37, cfg.vocab_size, 3);
  const std::vector<int64_t> path = {11, 42, 7, 99, 5, 250, 3, 18};

  // Alone: one token per forward.
  KvCache alone = model->new_cache();
  run(*model, alone, prompt);
  std::vector<at::Tensor> expected;
  for (int64_t token : path) expected.push_back(run(*model, alone, {token})[0].clone());

  KvCache chain = model->new_cache();
  run(*model, chain, prompt);
  const at::Tensor chained = run(*model, chain, path);
  for (size_t i = 0; i < path.size(); ++i) {
    CAPTURE(i);
    CHECK(at::equal(chained[i], expected[i]));
  }

  // A tree whose nodes 0, 2, 3, 5 are path[0..3], with siblings in between; the path's rows
  // are not contiguous, so its later nodes see their ancestors as tree rows.
  KvCache tree = model->new_cache();
  run(*model, tree, prompt);
  const int64_t p = static_cast<int64_t>(prompt.size());
  const at::Tensor nodes = run(*model, tree, {path[0], 77, path[1], path[2], 123, path[3]}, {-1, 0, 0, 2, 3, 3},
                               {p, p + 1, p + 1, p + 2, p + 3, p + 3});
  CHECK(at::equal(nodes[0], expected[0]));
  CHECK(at::equal(nodes[2], expected[1]));
  CHECK(at::equal(nodes[3], expected[2]));
  CHECK(at::equal(nodes[5], expected[3]));
}

// The key-tile copy (CpuKvStorage::key_tiles) is trusted for rows [0, key_tiles_rows()): every cache
// operation that moves or drops rows must lower that mark to the first row it changed.
TEST_CASE("truncate and commit_path lower the key tiles' valid mark to the first changed row", "[model][kv]") {
  auto rows = std::make_shared<CpuKvStorage>(1, 1, 32, 16, KvType::F32);
  KvCache cache(rows);
  CHECK(rows->key_tiles_rows() == 0);
  rows->key_tiles<float>(0);
  cache.advance(12);
  rows->set_key_tiles_rows(12);
  cache.truncate(10);
  CHECK(rows->key_tiles_rows() == 10);
  cache.advance(2);  // rows written by a forward are not trusted until it says so
  CHECK(rows->key_tiles_rows() == 10);
  rows->set_key_tiles_rows(12);
  cache.advance(4);  // a 4-node tree at rows 12-15; keep nodes 0, 1 and 3
  cache.commit_path(12, {0, 1, 3});
  CHECK(cache.length() == 15);
  CHECK(rows->key_tiles_rows() == 12);  // nothing past the old length was trusted
  rows->set_key_tiles_rows(15);
  cache.advance(3);
  cache.commit_path(15, {0, 2});  // row 16 is replaced by row 17
  CHECK(rows->key_tiles_rows() == 15);
  rows->set_key_tiles_rows(17);
  cache.advance(2);
  cache.commit_path(15, {0, 1, 2, 3});  // identity: nothing moved
  CHECK(rows->key_tiles_rows() == 17);
  CHECK_THROWS(rows->set_key_tiles_rows(33));
}

// A cache grown while in use (a draft model's cache grows with the text) holds the same rows: the
// logits after growing equal those of a cache that never grew, bit for bit.
TEST_CASE("a KV cache grown between forwards gives the logits of one that never grew", "[model][oracle][kv]") {
  const test::Backend backend = GENERATE(from_range(test::all_backends()));
  CAPTURE(test::backend_name(backend));
  const ModelConfig cfg = test::tiny_config("llama");
  auto model = test::load_model(test::write_model("kv-grow", cfg), backend);
  at::InferenceMode guard;
  const auto tokens = test::some_tokens(40, cfg.vocab_size, 3);
  KvCache fixed = model->new_cache(64);
  KvCache grown = model->new_cache(10);
  size_t at_token = 0;
  for (size_t chunk : {9, 1, 5, 1, 8, 16}) {
    std::vector<int64_t> part(tokens.begin() + at_token, tokens.begin() + at_token + chunk);
    at_token += chunk;
    grown.reserve(static_cast<int64_t>(at_token));
    CHECK(max_abs_diff(run(*model, grown, part), run(*model, fixed, part)) == 0);
  }
  CHECK(grown.capacity() == 40);
  CHECK(grown.length() == 40);
}

// A drafter that keeps the last layer's states gets a position's logits from them later: the
// same arithmetic as the forward's own logits, so the CPU kernels give them bit for bit.
TEST_CASE("logits_from_hidden of the last layer's states gives the forward's logits", "[model][oracle]") {
  const test::Backend backend = GENERATE(from_range(test::all_backends()));
  const DType dtype = GENERATE(DType::F32, DType::BF16);
  CAPTURE(test::backend_name(backend), dtype_name(dtype));
  const ModelConfig cfg = test::tiny_config("qwen2");
  const std::string dir = test::write_model("logits-from-hidden", cfg, dtype);
  auto model = test::load_model(dir, backend, 2);
  KvCache cache = model->new_cache();
  ForwardRequest request;
  request.tokens = test::some_tokens(23, cfg.vocab_size, 6);
  request.hidden_layers = {static_cast<int>(cfg.num_hidden_layers)};
  const ForwardResult result = model->forward(cache, request);
  const FloatRows all = model->logits_from_hidden(result.hidden[0].data(), result.hidden[0].rows);
  const FloatRows one = model->logits_from_hidden(result.hidden[0].row(7), 1);
  if (backend.aten) {  // BLAS sums in another order for another row count
    const double bound = test::float32_reorder_bound(dir, cfg, 23);
    CHECK(max_abs_diff(all, result.logits) <= bound);
    CHECK(max_abs_diff(test::tensor(one)[0], test::tensor(result.logits)[7]) <= bound);
  } else {
    CHECK(all.values == result.logits.values);
    CHECK(std::equal(one.values.begin(), one.values.end(), result.logits.row(7)));
  }
}

// The KV memory limit (--max-memory) is checked before a cache is allocated, and a cache gives
// its bytes back when its last copy goes.
TEST_CASE("KV caches count against the memory limit", "[model][kv]") {
  auto model = test::load_model(test::write_model("kv-limit", test::tiny_config("llama")));
  const int64_t before = kv_memory_in_use();
  {
    KvCache cache = model->new_cache(100);
    CHECK(kv_memory_in_use() - before == cache.bytes());
    KvCache copy = cache;  // shares the tensors, and their reservation
    CHECK(kv_memory_in_use() - before == cache.bytes());
    set_kv_memory_limit(before + 2 * cache.bytes());
    CHECK_THROWS_WITH(model->new_cache(200), Catch::Contains("--max-memory") && Catch::Contains("bytes"));
    CHECK(kv_memory_in_use() - before == cache.bytes());  // the refused cache reserved nothing
    set_kv_memory_limit(0);
  }
  CHECK(kv_memory_in_use() == before);
  CHECK(model->kv_bytes(100) >= 2 * 100 * 3 * 2 * 16 * 4);  // keys and values of 3 layers, 2 KV heads, head_dim 16
  // 16-bit caches take half: keys, values and key tiles.
  for (KvType kv : {KvType::BF16, KvType::F16}) {
    CAPTURE(kv_type_name(kv));
    auto narrow = test::load_model(model->dir(), false, 1, false, kv);
    CHECK(narrow->kv_bytes(100) * 2 == model->kv_bytes(100));
    CHECK(narrow->new_cache(100).bytes() * 2 == model->new_cache(100).bytes());
    CHECK(narrow->new_cache(100).type() == kv);
  }
}

// RoPE is computed for the positions a forward uses, not tabled for every position the config
// allows: a max_position_embeddings at the loader's limit (2^24) loads, and a token far out gets
// its own rotation.
TEST_CASE("a model whose config allows 2^24 positions loads and decodes at any of them", "[model][kv]") {
  ModelConfig cfg = test::tiny_config("llama");
  cfg.max_position_embeddings = kMaxPositions;
  auto model = test::load_model(test::write_model("huge-context", cfg));
  at::InferenceMode guard;
  KvCache near = model->new_cache(4), far = model->new_cache(4);
  const at::Tensor at_zero = run(*model, near, {5, 6}, {}, {0, 1});
  const at::Tensor far_out = run(*model, far, {5, 6}, {}, {kMaxPositions - 10, kMaxPositions - 9});
  // Relative positions are what attention sees: the same pair far out gives nearly the same logits.
  CHECK(max_abs_diff(at_zero, far_out) < 1e-2);
  CHECK(model->context_length() == kMaxPositions);
}
