#include "speculative/draft_model_runner.h"

#include <algorithm>
#include <stdexcept>

#include "model/llama_model.h"

namespace specd {

namespace {

// The first allocation's rows of context (the demo pair's whole context).
constexpr int64_t kInitialContextRows = 512;

int64_t initial_rows(const LlamaModel& model) { return std::min(model.context_length(), kInitialContextRows) + DraftModelRunner::kTreeRows; }
int64_t most_rows(const LlamaModel& model) { return model.context_length() + DraftModelRunner::kTreeRows; }

// The capacity that holds `rows`, doubling from `capacity`: every runner steps through the same
// sizes, so capacity_for can tell in advance where one ends.
int64_t grown_capacity(const LlamaModel& model, int64_t capacity, int64_t rows) {
  while (capacity < rows && capacity < most_rows(model)) capacity = std::min(most_rows(model), 2 * capacity);
  return capacity;
}

}  // namespace

DraftModelRunner::DraftModelRunner(std::shared_ptr<const LlamaModel> model) : model_(std::move(model)) {
  // Room past the text for the rows of a draft tree, whose siblings share positions. Kept across
  // requests: a request starts by emptying it, not by allocating and zeroing a new one (that cost
  // a request of the demo pair ~2%, whether or not it ever drafted).
  cache_ = model_->new_cache(initial_rows(*model_));
}

int64_t DraftModelRunner::capacity_for(const LlamaModel& model, int64_t rows) {
  return grown_capacity(model, initial_rows(model), rows);
}

void DraftModelRunner::reserve(int64_t rows) {
  if (rows <= cache_.capacity()) return;
  if (rows > most_rows(*model_)) throw std::logic_error("DraftModelRunner: more rows than the context and a draft tree");
  cache_.reserve(grown_capacity(*model_, cache_.capacity(), rows));
}

void DraftModelRunner::make_room(const ForwardRequest& request) { reserve(cache_.length() + static_cast<int64_t>(request.tokens.size())); }

ForwardResult DraftModelRunner::forward(const ForwardRequest& request) {
  make_room(request);
  return model_->forward(cache_, request);
}

void DraftModelRunner::reset() {
  cache_.truncate(0);
  cached_.clear();
}

void DraftModelRunner::truncate(int64_t length) {
  if (length < static_cast<int64_t>(cached_.size())) cached_.resize(static_cast<size_t>(length));
  if (length < cache_.length()) cache_.truncate(length);
}

void DraftModelRunner::keep_path(const std::vector<int64_t>& rows, const std::vector<int32_t>& tokens) {
  if (rows.size() != tokens.size()) throw std::logic_error("DraftModelRunner::keep_path: a row per token");
  const int64_t base = length();
  std::vector<int64_t> offsets;
  for (int64_t row : rows) offsets.push_back(row - base);
  cache_.commit_path(base, offsets);  // throws unless the offsets increase within the appended rows
  cached_.insert(cached_.end(), tokens.begin(), tokens.end());
}

int64_t DraftModelRunner::rows_to_sync(const std::vector<int32_t>& committed) const {
  size_t common = 0;
  while (common < cached_.size() && common < committed.size() && cached_[common] == committed[common]) ++common;
  return static_cast<int64_t>(committed.size() - common) + 1;
}

ForwardRequest DraftModelRunner::sync_request(const std::vector<int32_t>& tokens) {
  if (tokens.empty()) throw std::logic_error("DraftModelRunner::sync: no tokens");
  if (static_cast<int64_t>(tokens.size()) > model_->context_length()) throw std::logic_error("DraftModelRunner::sync: past the draft context");
  size_t common = 0;
  while (common < cached_.size() && common < tokens.size() && cached_[common] == tokens[common]) ++common;
  // Re-run at least the last token: its logits are what the caller needs.
  if (common == tokens.size()) --common;
  truncate(static_cast<int64_t>(common));
  ForwardRequest request;
  request.tokens.assign(tokens.begin() + common, tokens.end());
  last_sync_rows_ = static_cast<int64_t>(request.tokens.size());
  request.logits = LogitsWanted::Last;
  reserve(cache_.length() + last_sync_rows_);
  syncing_ = tokens;
  return request;
}

std::vector<float> DraftModelRunner::sync_done(ForwardResult result) {
  cached_ = std::move(syncing_);
  syncing_.clear();
  return std::move(result.logits.values);
}

std::vector<float> DraftModelRunner::sync(const std::vector<int32_t>& tokens) {
  const ForwardRequest request = sync_request(tokens);
  return sync_done(model_->forward(cache_, request));
}

}  // namespace specd
