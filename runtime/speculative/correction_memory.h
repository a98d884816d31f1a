#pragma once
// CSD's Online Correction Memory (the CSD paper §4.2): how often the target rejected drafted token x for
// token t, per pair (x, t). Loaded from the artifact's calibrated table, then updated by every
// rejection while decoding (Algorithm 1, line 18) and shared by the requests of one process, so
// a run adapts to its own workload. `specd ... --save-memory DIR` writes it back as an artifact.
//
// Bounded: at `capacity` pairs, a new pair first drops every pair seen only once (the long tail,
// which the frequency threshold never rescues); when none is, the new pair is not stored.
#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace specd {

struct MemoryEntry {
  int32_t draft_token = 0, target_token = 0;
  int64_t count = 0;             // calibrated + online
  int64_t online = 0;            // of which recorded in this process
  double gap_sum = 0;            // logit gaps z(x) - z(t) of the online records
  float gap_min = 0, gap_max = 0;
};

class CorrectionMemory {
 public:
  explicit CorrectionMemory(size_t capacity = size_t{1} << 20);

  // A calibrated pair's count (replaces what the memory held for it).
  void set(int32_t draft_token, int32_t target_token, int64_t count);
  int64_t count(int32_t draft_token, int32_t target_token) const;
  // One more rejection of draft_token for target_token, with its logit gap and the drafted
  // token's depth in its draft (1 = first drafted token).
  void record(int32_t draft_token, int32_t target_token, float logit_gap, int32_t depth);

  // Every online record, in order (what --save-memory adds to the artifact's rejections).
  struct Record {
    int32_t draft_token, target_token, depth;
    float logit_gap;
  };
  const std::vector<Record>& online_log() const { return log_; }

  size_t size() const { return entries_.size(); }
  size_t capacity() const { return capacity_; }
  int64_t online_records() const { return static_cast<int64_t>(log_.size()); }
  // Every pair, by count descending, then draft and target token ascending.
  std::vector<MemoryEntry> entries() const;

 private:
  static uint64_t key(int32_t draft_token, int32_t target_token);
  bool make_room();

  size_t capacity_;
  std::unordered_map<uint64_t, MemoryEntry> entries_;
  std::vector<Record> log_;
};

}  // namespace specd
