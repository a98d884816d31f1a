#include "speculative/correction_memory.h"

#include <algorithm>
#include <stdexcept>

namespace specd {

CorrectionMemory::CorrectionMemory(size_t capacity) : capacity_(capacity) {
  if (capacity == 0) throw std::invalid_argument("CorrectionMemory: capacity must be positive");
}

uint64_t CorrectionMemory::key(int32_t draft_token, int32_t target_token) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(draft_token)) << 32) | static_cast<uint32_t>(target_token);
}

bool CorrectionMemory::make_room() {
  if (entries_.size() < capacity_) return true;
  for (auto it = entries_.begin(); it != entries_.end();) it = it->second.count <= 1 ? entries_.erase(it) : std::next(it);
  return entries_.size() < capacity_;
}

void CorrectionMemory::set(int32_t draft_token, int32_t target_token, int64_t count) {
  auto it = entries_.find(key(draft_token, target_token));
  if (it == entries_.end()) {
    if (!make_room()) return;
    it = entries_.emplace(key(draft_token, target_token), MemoryEntry{draft_token, target_token}).first;
  }
  it->second.count = count + it->second.online;
}

int64_t CorrectionMemory::count(int32_t draft_token, int32_t target_token) const {
  auto it = entries_.find(key(draft_token, target_token));
  return it == entries_.end() ? 0 : it->second.count;
}

void CorrectionMemory::record(int32_t draft_token, int32_t target_token, float logit_gap, int32_t depth) {
  log_.push_back({draft_token, target_token, depth, logit_gap});
  auto it = entries_.find(key(draft_token, target_token));
  if (it == entries_.end()) {
    if (!make_room()) return;
    it = entries_.emplace(key(draft_token, target_token), MemoryEntry{draft_token, target_token}).first;
  }
  MemoryEntry& e = it->second;
  e.gap_min = e.online ? std::min(e.gap_min, logit_gap) : logit_gap;
  e.gap_max = e.online ? std::max(e.gap_max, logit_gap) : logit_gap;
  e.gap_sum += logit_gap;
  ++e.online;
  ++e.count;
}

std::vector<MemoryEntry> CorrectionMemory::entries() const {
  std::vector<MemoryEntry> all;
  all.reserve(entries_.size());
  for (const auto& [k, e] : entries_) all.push_back(e);
  std::sort(all.begin(), all.end(), [](const MemoryEntry& a, const MemoryEntry& b) {
    if (a.count != b.count) return a.count > b.count;
    if (a.draft_token != b.draft_token) return a.draft_token < b.draft_token;
    return a.target_token < b.target_token;
  });
  return all;
}

}  // namespace specd
