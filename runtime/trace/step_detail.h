#pragma once
// What a step's drafter, pruner and acceptor measured beyond the step's counts, typed. The decode
// loop gathers it as values; the trace's `detail` column stores it as one JSON object
// (schemas/traces.sql), written and read only here.
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace specd {

// One value a drafter reports about its step: null, a flag, an integer, a number or a label.
struct DetailValue {
  std::variant<std::monostate, bool, int64_t, double, std::string> value;

  DetailValue(std::nullptr_t = nullptr) {}
  DetailValue(bool flag) : value(flag) {}
  template <typename T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
  DetailValue(T integer) : value(static_cast<int64_t>(integer)) {}
  DetailValue(double number) : value(number) {}
  DetailValue(std::string label) : value(std::move(label)) {}
  DetailValue(const char* label) : value(std::string(label)) {}
  const std::string* label() const { return std::get_if<std::string>(&value); }
  bool operator==(const DetailValue& other) const { return value == other.value; }
};
// As JSON (null, true, 3, 0.5, "label"): for messages and test output.
std::ostream& operator<<(std::ostream& out, const DetailValue& value);

// What a drafter reports about its step, as named values in the order it names them (ReSpec:
// trigger, h_min, key, ...; AdaPLD: retrieval, candidates, ..., reuse). Any drafter may report
// its own: the trace keeps them as the "drafting" object and bench's drafting statistics count
// the labels (bench/drafting_stats.h).
using DraftingDetail = std::vector<std::pair<std::string, DetailValue>>;
// The value named `name`, or null when the drafter reported none.
const DetailValue* drafting_value(const DraftingDetail& drafting, const std::string& name);

// The pruner's view of the step: H_m and the nodes it kept (pruned fraction derived).
struct PruningDetail {
  std::string pruner;
  double root_entropy_normalized = 0;
  int64_t drafted = 0, kept = 0;
};

// ARC-Decode's LTS terms of one evaluated draft node (speculative/arc_acceptor.h).
struct LtsNode {
  int64_t node = 0, depth = 0, token = 0;
  int64_t target = 0;  // the target's top token at the parent
  double u_emb = 0, u_logit = 0;
  double lts = 0;      // NaN (JSON null) when it is not a number (a zero tau_delta)
  bool relaxed = false;
};
struct ArcAcceptance {
  std::vector<LtsNode> lts;
};

// One CSD rescue: the drafted token kept, the token the lossless rule emitted instead (t*), and
// the logit gap z(draft) - z(target) in nats.
struct CsdRescue {
  int64_t draft = 0, target = 0;
  double gap = 0;
};
struct CsdAcceptance {
  std::vector<CsdRescue> rescues;
};

// ReSpec's relaxed verification of its chains (speculative/respec_acceptor.h).
struct RespecAcceptance {
  int64_t chains = 0, greedy_prefix = 0, accepted = 0, tries = 0;
  std::vector<double> gaps;  // per relaxed token: log p(top1) - log p(token)
};

using AcceptanceDetail = std::variant<std::monostate, ArcAcceptance, CsdAcceptance, RespecAcceptance>;

struct StepDetail {
  DraftingDetail drafting;
  std::optional<PruningDetail> pruning;
  AcceptanceDetail acceptance;

  bool empty() const {
    return drafting.empty() && !pruning && std::holds_alternative<std::monostate>(acceptance);
  }
};

// The trace column's JSON text; "" for an empty detail (stored as NULL).
std::string step_detail_json(const StepDetail& detail);
// Reads the column back; "" is an empty detail. InputError "WHERE: detail.FIELD ..." naming the
// field on invalid JSON, a wrong type, a missing field or an object of no known shape.
StepDetail parse_step_detail(const std::string& json, const std::string& where);

}  // namespace specd
