#pragma once
// A draft model with its own KV cache, kept in step with the committed text: sync() makes the
// cache hold exactly a given token sequence, reusing the longest cached prefix, and returns the
// logits after its last token. The cache holds the context plus kTreeRows rows of a draft tree at
// most, and is grown to that on demand: sized by what requests use, not by the config's
// max_position_embeddings.
#include <cstdint>
#include <memory>
#include <vector>

#include "model/kv_cache.h"

namespace specd {

class LlamaModel;
struct ForwardRequest;
struct ForwardResult;

class DraftModelRunner {
 public:
  // Rows past the committed text a drafter may feed in one step (a tree's levels, a chain).
  static constexpr int64_t kTreeRows = 1024;

  explicit DraftModelRunner(std::shared_ptr<const LlamaModel> model);
  // The rows the cache of a runner of `model` has once it has held `rows` (it starts with room
  // for a short text and a tree, and doubles, up to the context and a tree).
  static int64_t capacity_for(const LlamaModel& model, int64_t rows);

  const LlamaModel& model() const { return *model_; }
  void reset();  // empties the cache for a new request (keeps its memory)
  // Logits [vocab] after the last of `tokens`.
  std::vector<float> sync(const std::vector<int32_t>& tokens);
  // sync() in two halves, for a caller that runs the forward itself (batched with other
  // requests'): sync_request() returns the forward that brings the cache to `tokens` (the cache
  // grown to hold it); once it has run on forward_cache(), sync_done() takes its result.
  ForwardRequest sync_request(const std::vector<int32_t>& tokens);
  std::vector<float> sync_done(ForwardResult result);
  KvCache& forward_cache() { return cache_; }
  // Grows the cache so that `request` fits on top of it, for a caller running it on forward_cache().
  void make_room(const ForwardRequest& request);
  // Drops cached rows past the first `length` (also rows a caller appended beyond the synced tokens).
  void truncate(int64_t length);
  // Of the rows a caller appended beyond the synced tokens (a tree's levels), keeps `rows` (cache
  // rows, increasing: a path from the synced text down) as the synced continuation `tokens`, and
  // drops the rest: each row's key and value are those its token has at its position after the
  // text, so the next sync need not feed them again.
  void keep_path(const std::vector<int64_t>& rows, const std::vector<int32_t>& tokens);
  // Runs `request` on top of the cache (rows past the synced tokens, which truncate drops),
  // growing the cache first when it needs more rows.
  ForwardResult forward(const ForwardRequest& request);
  const KvCache& cache() const { return cache_; }
  int64_t length() const { return static_cast<int64_t>(cached_.size()); }
  int64_t last_sync_rows() const { return last_sync_rows_; }  // rows the last sync() fed
  // Rows sync(committed + root) would feed now: the text past the longest cached prefix, and the root.
  int64_t rows_to_sync(const std::vector<int32_t>& committed) const;

 private:
  void reserve(int64_t rows);

  std::shared_ptr<const LlamaModel> model_;
  KvCache cache_;
  std::vector<int32_t> cached_;  // the tokens whose rows the cache holds
  std::vector<int32_t> syncing_;  // between sync_request() and sync_done(): the tokens it brings
  int64_t last_sync_rows_ = 0;
};

}  // namespace specd
