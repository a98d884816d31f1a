#include "speculative/adapld_drafter.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>


namespace specd {

namespace {

constexpr double kNoScore = -std::numeric_limits<double>::infinity();
// Per step, the share of branch and successor evidence kept: a half-life of about 140 steps, a
// window of a few hundred nodes while such nodes are drafted every step. Their rates are low
// (a few percent) and change with the text slowly, so the budget's own window (about 20 steps)
// would leave its prior (0.6, worth 2 nodes) doubling them; once a kind is off, the fading
// evidence moves its rate back towards the prior until it is tried again.
constexpr double kNodeRateDrift = 0.995;

// Double accumulation in 8 independent lanes: the compiler vectorises it (one running sum it may
// not reorder), and reranking scores every candidate's state, hundreds a step on long prompts.
double dot(const float* a, const float* b, int64_t n) {
  constexpr int64_t kLanes = 8;
  double lane[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int64_t k = 0; k < kLanes; ++k) lane[k] += static_cast<double>(a[i + k]) * b[i + k];
  double tail = 0;
  for (; i < n; ++i) tail += static_cast<double>(a[i]) * b[i];
  return ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7])) + tail;
}

// The k largest logits' ids, best first, ties to the lower id. One pass keeping a sorted window
// of k; blocks of 16 with nothing above the window's last entry (most of them, once it fills) are
// skipped by one vectorisable test. NaN never enters.
void top_ids_of(const float* row, int64_t vocab, int32_t k, std::vector<int32_t>& out) {
  out.clear();
  if (k <= 0) return;
  auto better = [row](int32_t a, int32_t b) { return row[a] > row[b] || (row[a] == row[b] && a < b); };
  auto offer = [&](int32_t id) {
    if (!(row[id] == row[id])) return;  // NaN
    if (static_cast<int32_t>(out.size()) == k) {
      if (!better(id, out.back())) return;
      out.pop_back();
    }
    out.insert(std::upper_bound(out.begin(), out.end(), id, better), id);
  };
  constexpr int64_t kBlock = 16;
  int64_t id = 0;
  for (; id + kBlock <= vocab; id += kBlock) {
    if (static_cast<int32_t>(out.size()) == k) {
      // A later id beats the last kept one only with a strictly larger logit.
      const float bar = row[out.back()];
      bool above = false;
      for (int64_t i = 0; i < kBlock; ++i) above |= row[id + i] > bar;
      if (!above) continue;
    }
    for (int64_t i = 0; i < kBlock; ++i) offer(static_cast<int32_t>(id + i));
  }
  for (; id < vocab; ++id) offer(static_cast<int32_t>(id));
}

// Whether a node expected to commit `gain` tokens raises the step's rate when added to a proposal
// of `nodes` nodes expected to commit `expected` tokens (then `expected` counts it).
bool pays(const DraftBudget& budget, double draft_ms_per_node, int32_t nodes, double& expected, double gain) {
  if (budget.rate_of(nodes + 1, expected + gain, draft_ms_per_node) <= budget.rate_of(nodes, expected, draft_ms_per_node)) return false;
  expected += gain;
  return true;
}

}  // namespace

const char* adapld_retrieval_name(AdaPldRetrieval retrieval) {
  switch (retrieval) {
    case AdaPldRetrieval::Lexical: return "lexical";
    case AdaPldRetrieval::Semantic: return "semantic";
    case AdaPldRetrieval::Skipped: return "skipped";
    default: return "none";
  }
}

AdaPldDrafter::AdaPldDrafter(AdaPldOptions options, int32_t layer, EmbeddingLookup embeddings, std::string name, LogitsLookup logits)
    : options_(options), layer_(layer), embeddings_(std::move(embeddings)), name_(std::move(name)), logits_(std::move(logits)) {
  validate(options_);
  if (layer_ < 0) throw std::invalid_argument("adapld: the hidden-state layer must be resolved (>= 0)");
  if (options_.semantic && (embeddings_.hidden_size <= 0 || !embeddings_.row))
    throw std::invalid_argument("adapld: semantic fallback needs the target's embeddings");
}

DrafterNeeds AdaPldDrafter::needs() const {
  DrafterNeeds needs;
  needs.target_logits = options_.use_branches && options_.branches > 0;
  needs.hidden_layers = {layer_};
  needs.prefill = true;  // every prompt row: anchors and successors may lie anywhere in the prompt
  if (needs.target_logits && logits_.row) {
    // The prefill's logits for its last row only (the first token's); the other prompt rows'
    // top-K come from their last-layer states when an anchor needs them.
    needs.prefill_logits_rows = 1;
    if (logits_.layer > layer_) needs.hidden_layers.push_back(logits_.layer);
  }
  return needs;
}

void AdaPldDrafter::begin(const std::vector<int32_t>& prompt, uint64_t seed) {
  text_.clear();
  where_.clear();
  distinct_.clear();
  distinct_index_.clear();
  top_.clear();
  hidden_.clear();
  hidden_norm_.clear();
  hidden_size_ = 0;
  final_hidden_.clear();
  final_rows_ = 0;
  cosines_.clear();  // the embedding rows stay: the same target's
  distinct_slots_.clear();
  retrieval_ = AdaPldRetrieval::None;
  reuse_ = "none";
  for (int32_t token : prompt) append(token, nullptr, 0, nullptr, 0);
}

void AdaPldDrafter::append(int32_t token, const float* logits_row, int64_t vocab, const float* hidden_row, int64_t hidden_size) {
  const int32_t position = static_cast<int32_t>(text_.size());
  text_.push_back(token);
  auto& positions = where_[token];
  if (positions.empty()) distinct_.push_back(token);
  distinct_index_.push_back(positions.empty() ? static_cast<int32_t>(distinct_.size()) - 1 : distinct_index_[positions[0]]);
  positions.push_back(position);
  top_.emplace_back();
  hidden_norm_.push_back(-1.0f);
  if (hidden_size_ > 0) hidden_.resize(hidden_.size() + hidden_size_, 0.0f);
  if (logits_row) top_ids_of(logits_row, vocab, options_.branches + 1, top_.back());
  if (hidden_row && hidden_size > 0) {
    if (hidden_size_ == 0) {
      hidden_size_ = hidden_size;
      hidden_.assign(text_.size() * hidden_size_, 0.0f);
    }
    if (hidden_size != hidden_size_) throw std::logic_error("adapld: hidden states changed size");
    std::copy(hidden_row, hidden_row + hidden_size, hidden_.begin() + static_cast<int64_t>(position) * hidden_size_);
    hidden_norm_.back() = static_cast<float>(std::sqrt(dot(hidden_row, hidden_row, hidden_size)));
  }
}

void AdaPldDrafter::observe_prefill(const TargetOutputs& prefill) {
  // Rows are the prompt's positions (DrafterNeeds::prefill with prefill_rows 0: all of them).
  const std::vector<int32_t> prompt = text_;
  const int64_t n = static_cast<int64_t>(prompt.size());
  begin({}, 0);
  const bool has_hidden = !prefill.hidden.empty() && prefill.hidden_size > 0;
  const int64_t hidden_rows = has_hidden ? static_cast<int64_t>(prefill.hidden[0].size()) / prefill.hidden_size : 0;
  for (int64_t p = 0; p < n; ++p) {
    const int64_t logit_row = p - (n - prefill.rows);  // the rows are the last prefill.rows positions
    const float* logits = prefill.logits && logit_row >= 0 ? prefill.logits + logit_row * prefill.vocab : nullptr;
    const int64_t hidden_row = p - (n - hidden_rows);
    const float* hidden = has_hidden && hidden_row >= 0 ? prefill.hidden[0].data() + hidden_row * prefill.hidden_size : nullptr;
    append(prompt[p], logits, prefill.vocab, hidden, prefill.hidden_size);
  }
  // The last layer's rows (the layer-l rows when l is the last layer) for the lookup.
  const size_t final_index = logits_.layer == layer_ ? 0 : 1;
  if (logits_.row && has_hidden && final_index < prefill.hidden.size() && hidden_rows == n) {
    final_hidden_ = prefill.hidden[final_index];
    final_rows_ = n;
  }
}

double AdaPldDrafter::NodeRate::estimate(const DraftBudgetOptions& prior) const {
  return (accepted + prior.prior_weight * prior.prior_acceptance) / (tried + prior.prior_weight);
}

void AdaPldDrafter::NodeRate::add(bool accepted_now) {
  accepted += accepted_now ? 1 : 0;
  tried += 1;
}

void AdaPldDrafter::observe(const StepFeedback& feedback) {
  const std::vector<int32_t>& path = feedback.result.path;
  const DraftTree& tree = feedback.tree;
  for (NodeRate* rate : {&branch_rates_[0], &branch_rates_[1], &successor_rate_}) {
    rate->accepted *= kNodeRateDrift;
    rate->tried *= kNodeRateDrift;
  }
  const int32_t taken = path.size() > 1 ? path[1] : -1;  // the accepted depth-1 node
  for (int32_t node = 1; node < tree.size(); ++node) {
    if (tree.sources[node] == DraftSource::Branch) {
      branch_rate(retrieval_ == AdaPldRetrieval::Lexical).add(node == taken);
    } else if (tree.sources[node] == DraftSource::Successor && tree.parents[node] == taken) {
      successor_rate_.add(path.size() > 2 && path[2] == node);
    }
  }
  const TargetOutputs& target = feedback.target;
  const bool has_hidden = !target.hidden.empty() && target.hidden_size > 0;
  for (size_t i = 0; i < feedback.committed_now.size(); ++i) {
    // Logits rows are tree nodes (the path's nodes are the committed ones); hidden rows are the path's.
    const float* logits = target.logits && i < path.size() ? target.logits + static_cast<int64_t>(path[i]) * target.vocab : nullptr;
    const float* hidden = has_hidden && (i + 1) * target.hidden_size <= target.hidden[0].size()
                              ? target.hidden[0].data() + i * target.hidden_size
                              : nullptr;
    append(feedback.committed_now[i], logits, target.vocab, hidden, target.hidden_size);
  }
  if (feedback.tree.size() <= 1) {
    reuse_ = "none";
  } else if (path.size() <= 1) {
    reuse_ = "mismatch";
  } else if (feedback.tree.sources[path[1]] == DraftSource::Retrieval) {
    reuse_ = "main";
  } else {
    reuse_ = path.size() >= 3 ? "branch+succ" : "branch";
  }
}

void AdaPldDrafter::sync(const std::vector<int32_t>& committed) {
  const size_t seen = text_.size();
  if (seen > committed.size() || (seen > 0 && text_[seen - 1] != committed[seen - 1])) {
    begin(committed, 0);  // another text: its states are unknown (reranking scores them -inf)
    return;
  }
  for (size_t i = seen; i < committed.size(); ++i) append(committed[i], nullptr, 0, nullptr, 0);
}

int32_t AdaPldDrafter::embedding_slot(int32_t token, float* norm) const {
  const int64_t size = embeddings_.hidden_size;
  auto [it, added] = embedding_slot_.emplace(token, static_cast<int32_t>(embedding_norms_.size()));
  if (added) {
    embedding_rows_.resize(embedding_rows_.size() + size);
    float* row = embedding_rows_.data() + embedding_rows_.size() - size;
    embeddings_.row(token, row);
    embedding_norms_.push_back(static_cast<float>(std::sqrt(dot(row, row, size))));
  }
  *norm = embedding_norms_[it->second];
  return it->second;
}

const std::vector<float>& AdaPldDrafter::embedding_cosines(int32_t query) const {
  std::vector<float>& cosines = cosines_[query];
  if (cosines.size() == distinct_.size()) return cosines;
  // Slots first (fetching a row may move the others), then one pass over contiguous rows.
  float query_norm = 0;
  const int32_t query_slot = embedding_slot(query, &query_norm);
  for (size_t i = distinct_slots_.size(); i < distinct_.size(); ++i) {
    float norm = 0;
    distinct_slots_.push_back(embedding_slot(distinct_[i], &norm));
  }
  const int64_t size = embeddings_.hidden_size;
  const float* query_row = embedding_rows_.data() + static_cast<int64_t>(query_slot) * size;
  for (size_t i = cosines.size(); i < distinct_.size(); ++i) {
    const int32_t slot = distinct_slots_[i];
    const double denominator = static_cast<double>(query_norm) * embedding_norms_[slot];
    cosines.push_back(denominator > 0 ? static_cast<float>(dot(query_row, embedding_rows_.data() + static_cast<int64_t>(slot) * size, size) / denominator)
                                      : 0.0f);
  }
  return cosines;
}

AdaPldDrafter::Candidates AdaPldDrafter::retrieve(int32_t query, int32_t end, bool semantic) const {
  Candidates out;
  auto found = where_.find(query);
  if (found != where_.end())
    for (int32_t j : found->second)
      if (j < end) out.positions.push_back(j);
  if (!out.positions.empty()) {
    out.kind = AdaPldRetrieval::Lexical;
    return out;
  }
  if (!options_.semantic || !semantic) return out;
  const std::vector<float>& cosines = embedding_cosines(query);
  for (int32_t j = 0; j < end; ++j) {
    const int32_t d = distinct_index_[j];
    if (distinct_[d] != query && cosines[d] >= options_.tau_sim) out.positions.push_back(j);
  }
  if (!out.positions.empty()) out.kind = AdaPldRetrieval::Semantic;
  return out;
}

double AdaPldDrafter::score(int32_t position, int32_t reference) const {
  const int32_t before = position - 1;
  const int32_t n = static_cast<int32_t>(hidden_norm_.size());
  if (before < 0 || before >= n || reference < 0 || reference >= n) return kNoScore;
  const float a = hidden_norm_[before], b = hidden_norm_[reference];
  if (a < 0 || b < 0) return kNoScore;
  if (a == 0 || b == 0) return 0.0;
  const float* base = hidden_.data();
  return dot(base + static_cast<int64_t>(before) * hidden_size_, base + static_cast<int64_t>(reference) * hidden_size_, hidden_size_) /
         (static_cast<double>(a) * b);
}

int32_t AdaPldDrafter::rerank(const std::vector<int32_t>& positions, int32_t reference) const {
  int32_t best = -1;
  double best_score = kNoScore;
  for (int32_t j : positions) {
    const double s = score(j, reference);
    if (best < 0 || s > best_score || (s == best_score && j > best)) {
      best = j;
      best_score = s;
    }
  }
  return best;
}

const std::vector<int32_t>& AdaPldDrafter::top_ids(int32_t position) {
  static const std::vector<int32_t> none;
  if (position < 0 || position >= static_cast<int32_t>(top_.size())) return none;
  std::vector<int32_t>& ids = top_[position];
  if (ids.empty() && position < final_rows_ && options_.use_branches && options_.branches > 0) {
    logits_row_.resize(static_cast<size_t>(logits_.vocab));
    logits_.row(final_hidden_.data() + static_cast<int64_t>(position) * hidden_size_, logits_row_.data());
    top_ids_of(logits_row_.data(), logits_.vocab, options_.branches + 1, ids);
  }
  return ids;
}

int32_t AdaPldDrafter::proposal_class() const {
  switch (retrieval_) {
    case AdaPldRetrieval::Lexical: return agreement_;
    case AdaPldRetrieval::Semantic:
    case AdaPldRetrieval::Skipped: return kSemanticClass;
    default: return 5;
  }
}

DraftTree AdaPldDrafter::propose(const DraftRequest& request) {
  sync(request.committed);
  retrieval_ = AdaPldRetrieval::None;
  candidates_ = main_ = branches_ = successors_ = 0;
  anchor_ = -1;
  DraftTree tree(request.root_token);
  const int32_t end = static_cast<int32_t>(text_.size());  // the root's position in M
  auto token_at = [&](int32_t p) { return p < end ? text_[p] : request.root_token; };

  // Without a lexical anchor the semantic search (a cosine per distinct token of the text, then a
  // rerank of every similar position: tens of microseconds on long prompts) runs only when its
  // anchor could draft something: a semantic anchor has no copy path, only branches, and the
  // budget must grant its class a node. Otherwise the tree is the root alone either way.
  const DraftBudget* budget = request.budget;
  // Whether a first branch under a semantic anchor would pay for its row (a tree of its own).
  auto semantic_branch_pays = [&] {
    double expected = 1;
    return !budget || pays(*budget, budget->draft_cost(kSemanticClass), 0, expected, branch_rate(false).estimate(budget->options()));
  };
  const bool search_semantic = options_.semantic && options_.use_branches && options_.branches > 0 && request.max_depth > 0 &&
                               request.nodes_for(kSemanticClass) > 0 && semantic_branch_pays();
  const Candidates anchors = retrieve(request.root_token, end, search_semantic);
  if (anchors.kind == AdaPldRetrieval::None && options_.semantic && !search_semantic) {
    retrieval_ = AdaPldRetrieval::Skipped;
    return tree;
  }
  retrieval_ = anchors.kind;
  candidates_ = static_cast<int32_t>(anchors.positions.size());
  if (anchors.kind == AdaPldRetrieval::None) return tree;
  const int32_t anchor = rerank(anchors.positions, end - 1);
  anchor_ = anchor;
  const bool lexical = anchors.kind == AdaPldRetrieval::Lexical;
  // How far the text before the anchor agrees with the text before the root (the anchor itself
  // counts 1, at most 3): the budget keeps an acceptance estimate per agreement, as PLD's per
  // n-gram length, so that a copy after a longer agreement may draft longer.
  agreement_ = 1;
  while (lexical && agreement_ < 3 && anchor - agreement_ >= 0 && text_[anchor - agreement_] == text_[end - agreement_]) ++agreement_;

  const int32_t nodes = std::min(request.max_nodes, request.nodes_for(proposal_class()));
  const int32_t depth = request.max_depth;
  if (nodes <= 0 || depth <= 0) return tree;

  std::vector<int32_t> main;  // M_{j*+1 .. min(j*+L, end)}, no deeper than max_depth
  if (lexical)
    for (int32_t p = anchor + 1; p <= std::min(anchor + options_.max_copy, end) && static_cast<int32_t>(main.size()) < depth; ++p)
      main.push_back(token_at(p));
  const int32_t main_nodes = std::min(static_cast<int32_t>(main.size()), nodes);
  // With a budget, each branch and successor must pay for its row (see the header).
  const int32_t cls = proposal_class();
  const double draft_ms = budget ? budget->draft_cost(cls) : 0;
  double expected = budget ? budget->expected_tokens(cls, main_nodes, depth) : 0;
  const double branch_gain = budget ? branch_rate(lexical).estimate(budget->options()) : 0;
  const double successor_gain = budget ? branch_gain * successor_rate_.estimate(budget->options()) : 0;
  auto node_pays = [&](int32_t used, double gain) { return !budget || pays(*budget, draft_ms, used, expected, gain); };

  std::vector<int32_t> branches;
  // Only when the budget leaves nodes after the main path and a branch pays there: a prompt
  // anchor's top-K costs a row through the output head.
  if (options_.use_branches && main_nodes < nodes && node_pays(main_nodes, branch_gain))
    for (int32_t id : top_ids(anchor)) {
      if (static_cast<int32_t>(branches.size()) == options_.branches) break;
      if (!main.empty() && id == main[0]) continue;
      branches.push_back(id);
    }

  // The main path first, then the branches in top-K order, then successors in branch order.
  std::vector<int32_t> branch_nodes;
  int32_t used = 0, parent = 0;
  for (; used < main_nodes; ++used, ++main_) parent = tree.add(parent, main[used], DraftSource::Retrieval, 1.0f);
  // The first branch was priced above.
  for (size_t i = 0; i < branches.size() && used < nodes && (i == 0 || node_pays(used, branch_gain)); ++i, ++used, ++branches_)
    branch_nodes.push_back(tree.add(0, branches[i], DraftSource::Branch, 1.0f));
  if (options_.use_successors && (!options_.successors_on_semantic_only || !lexical) && depth >= 2)
    for (int32_t node : branch_nodes) {
      if (used >= nodes) break;
      const Candidates followers = retrieve(tree.tokens[node], end);
      const int32_t t = rerank(followers.positions, anchor);
      if (t < 0) continue;
      if (!node_pays(used, successor_gain)) break;
      tree.add(node, token_at(t + 1), DraftSource::Successor, 1.0f);
      ++successors_;
      ++used;
    }
  return tree;
}

DraftingDetail AdaPldDrafter::step_detail() const {
  return {{"retrieval", adapld_retrieval_name(retrieval_)},
          {"candidates", candidates_},
          {"anchor", anchor_},
          {"main", main_},
          {"branches", branches_},
          {"successors", successors_},
          {"reuse", reuse_}};
}

}  // namespace specd
