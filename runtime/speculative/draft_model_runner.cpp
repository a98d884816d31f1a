#include "speculative/draft_model_runner.h"

#include <ATen/ATen.h>

#include <stdexcept>

#include "model/llama_model.h"

namespace specd {

DraftModelRunner::DraftModelRunner(std::shared_ptr<const LlamaModel> model) : model_(std::move(model)) {
  // Room past the context for the rows of a draft tree, whose siblings share positions. Allocated
  // once: a request starts by emptying it, not by allocating and zeroing a new one (that cost a
  // request of the demo pair ~2%, whether or not it ever drafted).
  cache_ = model_->new_cache(model_->context_length() + kTreeRows);
}

void DraftModelRunner::reset() {
  cache_.truncate(0);
  cached_.clear();
}

void DraftModelRunner::truncate(int64_t length) {
  if (length < static_cast<int64_t>(cached_.size())) cached_.resize(static_cast<size_t>(length));
  if (length < cache_.length()) cache_.truncate(length);
}

at::Tensor DraftModelRunner::sync(const std::vector<int32_t>& tokens) {
  if (tokens.empty()) throw std::logic_error("DraftModelRunner::sync: no tokens");
  if (static_cast<int64_t>(tokens.size()) > model_->context_length()) throw std::logic_error("DraftModelRunner::sync: past the draft context");
  size_t common = 0;
  while (common < cached_.size() && common < tokens.size() && cached_[common] == tokens[common]) ++common;
  // Re-run at least the last token: its logits are what the caller needs.
  if (common == tokens.size()) --common;
  truncate(static_cast<int64_t>(common));
  ForwardRequest request;
  request.tokens.assign(tokens.begin() + common, tokens.end());
  request.logits = LogitsWanted::Last;
  at::Tensor logits = model_->forward(cache_, request).logits.to(at::kCPU).contiguous();
  cached_.assign(tokens.begin(), tokens.end());
  return logits[0];
}

}  // namespace specd
