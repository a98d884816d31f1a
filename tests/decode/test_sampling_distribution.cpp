// Losslessness at T > 0, end to end: the tokens the speculative engine commits (sd's sampled
// chain, sd-tree, pld, sam) are distributed as the target's own shaped distribution (temperature,
// top-k, top-p), checked by a chi-square goodness-of-fit test against probabilities from a full
// forward of the target over each committed prefix.
//
// Setup: a tiny target and a different tiny draft (24-token vocabulary, so that expected counts
// are large), a fixed prompt, 2,000 requests of 8 tokens with seeds 1000, 1001, ... through the
// same policy objects (as bench runs them). Every committed token at position i is an
// observation of p(. | prompt + tokens[0..i)); the observations' distributions differ, so the
// statistic is the chi-square form for that case (chi_square() below), per token cell. Tested:
// every committed token, the first token of the first step, tokens right after an accepted draft
// token, tokens right after a residual resample (the last two selected by how the *previous*
// token was made, an event of the past, so they are still distributed as p given their prefix).
// The draft differs from the target enough that acceptances, rejections and residual resamples
// all happen often (asserted).
//
// Power: the same tokens against a wrong reference (temperature 1.0 instead of 0.6; the
// unfiltered distribution instead of top-k + top-p) must be rejected. Seeds are fixed, so the
// test is deterministic: the 1e-4 threshold is a false-alarm rate over seed sequences, not a
// flake rate.
#include "catch_torch.h"

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "decode/autoregressive.h"
#include "decode/speculative.h"
#include "fixture_models.h"
#include "methods/method_registry.h"

using namespace specd;

namespace {

constexpr double kAlpha = 1e-4;   // the test's significance threshold
constexpr int kRequests = 2000;   // seeds per method and sampling setting
constexpr int64_t kNewTokens = 8;

// How a committed token was made.
enum class Made { Prefill, AcceptedDraft, Residual, Bonus };

struct Decoded {
  std::vector<int32_t> tokens;
  std::vector<Made> made;
};

struct Counts {
  int64_t accepted = 0, residual = 0, bonus = 0, rejected_nodes = 0;
};

// One request; records how each committed token was made from the step callback: the accepted
// drafted tokens of the path, then the next token, a residual draw when a child of the last
// accepted node was rejected, else a bonus draw from the full distribution at a leaf.
Decoded decode(const LlamaModel& target, Policy& policy, const std::vector<int32_t>& prompt, const GenerateOptions& options,
               Counts& counts) {
  std::vector<Made> made{Made::Prefill};
  auto on_step = [&](const DraftTree& tree, const AcceptResult& result, const float*, int64_t) {
    for (size_t i = 1; i < result.path.size(); ++i) made.push_back(Made::AcceptedDraft);
    made.push_back(tree.children(result.path.back()).empty() ? Made::Bonus : Made::Residual);
    counts.rejected_nodes += result.count(NodeVerdict::Rejected);
  };
  Decoded out;
  out.tokens = decode_with(target, policy, prompt, options, on_step).tokens;
  made.resize(out.tokens.size());  // the budget may end a step early
  out.made = made;
  for (Made m : out.made) {
    counts.accepted += m == Made::AcceptedDraft;
    counts.residual += m == Made::Residual;
    counts.bonus += m == Made::Bonus;
  }
  return out;
}

using Prefix = std::vector<int32_t>;

// The target's logits after every prefix seen, each from one full forward (a fresh cache, the
// whole sequence at once: no tree masks, no cache rollback).
class Reference {
 public:
  Reference(const LlamaModel& target, const std::vector<int32_t>& prompt) : target_(target), prompt_(prompt) {}

  void add_run(const std::vector<int32_t>& tokens) {
    Prefix prefix = prompt_;
    prefix.insert(prefix.end(), tokens.begin(), tokens.end() - 1);
    if (logits_.count(prefix)) return;
    at::InferenceMode guard;
    KvCache cache = target_.new_cache(static_cast<int64_t>(prefix.size()));
    ForwardRequest request;
    request.tokens.assign(prefix.begin(), prefix.end());
    const at::Tensor all = test::tensor(target_.forward(cache, request).logits);
    const int64_t vocab = all.size(1);
    for (size_t i = prompt_.size(); i <= prefix.size(); ++i) {
      const float* row = all[static_cast<int64_t>(i) - 1].data_ptr<float>();
      logits_.emplace(Prefix(prefix.begin(), prefix.begin() + static_cast<std::ptrdiff_t>(i)), std::vector<float>(row, row + vocab));
    }
  }
  std::vector<double> distribution(const Prefix& prefix, const SamplingParams& params) const {
    const std::vector<float>& row = logits_.at(prefix);
    return shaped_distribution(row.data(), static_cast<int64_t>(row.size()), params);
  }

 private:
  const LlamaModel& target_;
  std::vector<int32_t> prompt_;
  std::map<Prefix, std::vector<float>> logits_;
};

// One observation: the committed token and the reference distribution given its prefix.
struct Observation {
  int32_t token;
  const std::vector<double>* p;
};

struct ChiSquare {
  double statistic = 0;
  int64_t df = 0;
  int64_t impossible = 0;  // observations of a token the reference gives probability 0
  int64_t observations = 0;
  double p_value() const {
    if (impossible > 0) return 0.0;
    if (df == 0) return 1.0;
    return at::special_gammaincc(at::scalar_tensor(0.5 * static_cast<double>(df), at::kDouble),
                                 at::scalar_tensor(0.5 * statistic, at::kDouble))
        .item<double>();
  }
};

// Goodness of fit of observations whose reference distributions differ (each token has its own
// prefix). With cells c, S_c = sum_i ([x_i in c] - p_i(c)) is a sum of martingale differences
// whose conditional covariances add up to C = sum_i (diag(p_i) - p_i p_i^T), so S^T C^-1 S
// (one cell dropped, C then invertible) is asymptotically chi-square with cells - 1 degrees of
// freedom. With one reference distribution for all observations it is exactly Pearson's
// statistic. Cells: each token expected >= 5 times on its own, the rest pooled (merged into the
// smallest cell when the pool itself expects fewer than 5).
ChiSquare chi_square(const std::vector<Observation>& observations, int64_t vocab) {
  ChiSquare chi;
  chi.observations = static_cast<int64_t>(observations.size());
  std::vector<double> expected(static_cast<size_t>(vocab), 0.0);
  for (const Observation& o : observations) {
    for (int64_t t = 0; t < vocab; ++t) expected[t] += (*o.p)[t];
    chi.impossible += (*o.p)[o.token] <= 0.0;
  }
  std::vector<int64_t> cell(static_cast<size_t>(vocab), -1);
  int64_t cells = 0, smallest = -1;
  double pooled = 0;
  for (int64_t t = 0; t < vocab; ++t) {
    if (expected[t] < 5) {
      pooled += expected[t];
      continue;
    }
    cell[t] = cells++;
    if (smallest < 0 || expected[t] < expected[smallest]) smallest = t;
  }
  if (smallest < 0) return chi;
  const int64_t pool = pooled >= 5 ? cells++ : cell[smallest];
  for (int64_t t = 0; t < vocab; ++t)
    if (cell[t] < 0) cell[t] = pool;
  if (cells < 2) return chi;

  const int64_t k = cells - 1;  // the last cell is dropped
  at::Tensor s = at::zeros({k}, at::kDouble), c = at::zeros({k, k}, at::kDouble);
  auto sa = s.accessor<double, 1>();
  auto ca = c.accessor<double, 2>();
  std::vector<double> q(static_cast<size_t>(cells));
  for (const Observation& o : observations) {
    std::fill(q.begin(), q.end(), 0.0);
    for (int64_t t = 0; t < vocab; ++t) q[cell[t]] += (*o.p)[t];
    if (cell[o.token] < k) sa[cell[o.token]] += 1;
    for (int64_t a = 0; a < k; ++a) {
      sa[a] -= q[a];
      ca[a][a] += q[a];
      for (int64_t b = 0; b < k; ++b) ca[a][b] -= q[a] * q[b];
    }
  }
  chi.statistic = at::dot(s, at::linalg_solve(c, s)).item<double>();
  chi.df = k;
  return chi;
}

enum class Subset { All, FirstStep, AfterAcceptedDraft, AfterResidual };

const char* subset_name(Subset subset) {
  switch (subset) {
    case Subset::All: return "every committed token";
    case Subset::FirstStep: return "the first token of the first step";
    case Subset::AfterAcceptedDraft: return "tokens right after an accepted draft token";
    case Subset::AfterResidual: return "tokens right after a residual resample";
  }
  return "";
}

bool in_subset(Subset subset, const Decoded& run, size_t i) {
  switch (subset) {
    case Subset::All: return true;
    case Subset::FirstStep: return i == 1;
    case Subset::AfterAcceptedDraft: return i > 0 && run.made[i - 1] == Made::AcceptedDraft;
    case Subset::AfterResidual: return i > 0 && run.made[i - 1] == Made::Residual;
  }
  return false;
}

ChiSquare test_subset(const std::vector<Decoded>& runs, const std::vector<int32_t>& prompt, const Reference& reference,
                      const SamplingParams& params, Subset subset, int64_t vocab) {
  std::map<Prefix, std::vector<double>> distributions;
  std::vector<Observation> observations;
  for (const Decoded& run : runs) {
    Prefix prefix = prompt;
    for (size_t i = 0; i < run.tokens.size(); ++i) {
      if (in_subset(subset, run, i)) {
        auto it = distributions.find(prefix);
        if (it == distributions.end()) it = distributions.emplace(prefix, reference.distribution(prefix, params)).first;
        observations.push_back({run.tokens[i], &it->second});
      }
      prefix.push_back(run.tokens[i]);
    }
  }
  return chi_square(observations, vocab);
}

ModelConfig small_vocabulary() {
  ModelConfig cfg = test::tiny_config("llama");
  cfg.vocab_size = 24;
  cfg.hidden_size = 32;
  cfg.intermediate_size = 64;
  cfg.num_attention_heads = 2;
  cfg.num_key_value_heads = 1;
  cfg.num_hidden_layers = 2;
  cfg.eos_token_ids = {};
  return cfg;
}

// Every token once (5 is prime to 24), so that PLD and SAM find a match for any root, then the
// target's own greedy continuation, so that some retrieved drafts are likely under the target.
std::vector<int32_t> retrieval_prompt(const LlamaModel& target) {
  const int64_t vocab = target.config().vocab_size;
  std::vector<int32_t> prompt;
  for (int64_t i = 0; i < vocab; ++i) prompt.push_back(static_cast<int32_t>((i * 5 + 1) % vocab));
  GenerateOptions greedy;
  greedy.max_new_tokens = 16;
  const std::vector<int32_t> continuation = generate_autoregressive(target, prompt, greedy).tokens;
  prompt.insert(prompt.end(), continuation.begin(), continuation.end());
  return prompt;
}

// Runs one method under both sampling settings and tests the committed tokens. Fixture
// directories per method: ctest runs the test cases side by side.
void check_distribution(const std::string& method) {
  const ModelConfig cfg = small_vocabulary();
  auto target = test::load_model(test::write_model("distribution-target-" + method, cfg, DType::F32, 21));
  std::shared_ptr<const LlamaModel> draft =
      test::load_model(test::write_model("distribution-draft-" + method, cfg, DType::F32, 99));
  const std::vector<int32_t> prompt = retrieval_prompt(*target);

  // The sampling the target uses and a wrong reference the counts must reject.
  struct Setting {
    const char* name;
    SamplingParams right, wrong;
  };
  SamplingParams t06, t10, filtered, unfiltered;
  t06.temperature = 0.6;
  t10.temperature = 1.0;
  filtered.temperature = unfiltered.temperature = 0.9;
  filtered.top_k = 8;
  filtered.top_p = 0.8;
  auto setting = GENERATE_COPY(Setting{"T=0.6 (wrong: T=1.0)", t06, t10}, Setting{"T=0.9 top-k 8 top-p 0.8 (wrong: unfiltered)", filtered, unfiltered});
  CAPTURE(setting.name);

  MethodOptions options;
  options.gamma = 3;
  options.tree = {3, 3, 6};
  options.sam.len_threshold = 2;
  options.adaptive_budget = false;  // the budget measures wall time: runs would not repeat
  GenerateOptions generate;
  generate.max_new_tokens = kNewTokens;
  generate.sampling = setting.right;
  Policy policy = make_policy(method, MethodContext{*target, draft, generate.sampling, options, nullptr});

  Reference reference(*target, prompt);
  std::vector<Decoded> runs;
  Counts counts;
  for (int seed = 0; seed < kRequests; ++seed) {
    generate.sampling.seed = 1000 + static_cast<uint64_t>(seed);
    runs.push_back(decode(*target, policy, prompt, generate, counts));
    REQUIRE(runs.back().tokens.size() == static_cast<size_t>(kNewTokens));
    reference.add_run(runs.back().tokens);
  }
  // Both acceptance paths are exercised many times.
  CAPTURE(counts.accepted, counts.residual, counts.bonus, counts.rejected_nodes);
  CHECK(counts.accepted >= 300);
  CHECK(counts.residual >= 300);
  CHECK(counts.rejected_nodes >= counts.residual);

  for (Subset subset : {Subset::All, Subset::FirstStep, Subset::AfterAcceptedDraft, Subset::AfterResidual}) {
    const ChiSquare right = test_subset(runs, prompt, reference, setting.right, subset, cfg.vocab_size);
    const ChiSquare wrong = test_subset(runs, prompt, reference, setting.wrong, subset, cfg.vocab_size);
    CAPTURE(subset_name(subset), right.statistic, right.df, right.impossible, right.observations, wrong.statistic, wrong.df,
            wrong.impossible);
    CHECK(right.df >= 3);  // enough cells to test anything
    CHECK(right.impossible == 0);
    CHECK(right.p_value() > kAlpha);
    CHECK(wrong.p_value() < kAlpha);
  }
}

}  // namespace

TEST_CASE("at T > 0 sd commits tokens distributed as the target's", "[spec][sampling][distribution]") { check_distribution("sd"); }
TEST_CASE("at T > 0 sd-tree commits tokens distributed as the target's", "[spec][sampling][distribution]") {
  check_distribution("sd-tree");
}
TEST_CASE("at T > 0 pld commits tokens distributed as the target's", "[spec][sampling][distribution]") { check_distribution("pld"); }
TEST_CASE("at T > 0 sam commits tokens distributed as the target's", "[spec][sampling][distribution]") { check_distribution("sam"); }

TEST_CASE("a reused sd policy samples a request's drafts from that request's seed", "[spec][sampling]") {
  const ModelConfig cfg = small_vocabulary();
  auto target = test::load_model(test::write_model("reused-policy-target", cfg, DType::F32, 21));
  std::shared_ptr<const LlamaModel> draft = test::load_model(test::write_model("reused-policy-draft", cfg, DType::F32, 99));
  const std::vector<int32_t> prompt = retrieval_prompt(*target);
  MethodOptions options;
  options.gamma = 3;
  options.adaptive_budget = false;
  GenerateOptions generate;
  generate.max_new_tokens = 24;
  generate.sampling.temperature = 0.6;
  generate.sampling.seed = 1;
  // Built for seed 1, then used for seeds 2..5: each request must be what a policy built for its
  // own seed gives (before the fix, the draft stream restarted from seed 1 in every request).
  Policy reused = make_policy("sd", MethodContext{*target, draft, generate.sampling, options, nullptr});
  for (uint64_t seed = 2; seed <= 5; ++seed) {
    generate.sampling.seed = seed;
    Policy fresh = make_policy("sd", MethodContext{*target, draft, generate.sampling, options, nullptr});
    CAPTURE(seed);
    CHECK(decode_with(*target, reused, prompt, generate).tokens == decode_with(*target, fresh, prompt, generate).tokens);
  }
}

TEST_CASE("at T > 0 adapld commits tokens distributed as the target's", "[spec][sampling][distribution][adapld]") {
  check_distribution("adapld");
}
