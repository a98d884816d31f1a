#include "trace/step_detail.h"

#include <cstdint>
#include <limits>

#include <nlohmann/json.hpp>

#include "io/json_reader.h"
#include "util/error.h"

namespace specd {
namespace {

using ordered = nlohmann::ordered_json;

ordered value_json(const DetailValue& v) {
  return std::visit([](const auto& x) -> ordered {
    if constexpr (std::is_same_v<std::decay_t<decltype(x)>, std::monostate>) return nullptr;
    else return x;
  }, v.value);
}

// Objects keep the key order earlier specd versions wrote, so the column's text stays the same.
ordered drafting_json(const DraftingDetail& drafting) {
  ordered j = ordered::object();
  for (const auto& [name, v] : drafting) j[name] = value_json(v);
  return j;
}

ordered acceptance_json(const ArcAcceptance& a) {
  ordered nodes = ordered::array();
  for (const LtsNode& n : a.lts)
    nodes.push_back({{"depth", n.depth}, {"lts", n.lts}, {"node", n.node}, {"relaxed", n.relaxed},
                     {"target", n.target}, {"token", n.token}, {"u_emb", n.u_emb}, {"u_logit", n.u_logit}});
  return {{"lts", nodes}};
}

ordered acceptance_json(const CsdAcceptance& a) {
  ordered rescues = ordered::array();
  for (const CsdRescue& r : a.rescues) rescues.push_back({{"draft", r.draft}, {"gap", r.gap}, {"target", r.target}});
  return {{"rescues", rescues}};
}

ordered acceptance_json(const RespecAcceptance& a) {
  return {{"chains", a.chains},         {"greedy_prefix", a.greedy_prefix}, {"accepted", a.accepted},
          {"tries", a.tries},           {"relaxed", a.gaps.size()},          {"gaps", a.gaps}};
}

// A required field that is a number, or null for NaN (how JSON writes a NaN).
double number_or_nan(const nlohmann::json& object, const JsonObjectReader& r, const std::string& key) {
  if (object.contains(key) && object[key].is_null()) return std::numeric_limits<double>::quiet_NaN();
  return r.number(key);
}

const nlohmann::json& array_field(const JsonObjectReader& r, const std::string& key) {
  const nlohmann::json& value = r.at(key);
  if (!value.is_array()) r.fail(key, "must be an array");
  return value;
}

template <typename Json>
void require_object(const Json& value, const std::string& where, const std::string& field) {
  if (!value.is_object()) input_error(where, "field " + single_quoted(field) + " must be a JSON object");
}

DraftingDetail parse_drafting(const ordered& value, const std::string& where) {
  require_object(value, where, "detail.drafting");
  DraftingDetail drafting;
  for (const auto& [name, v] : value.items()) {
    if (v.is_null()) drafting.emplace_back(name, nullptr);
    else if (v.is_boolean()) drafting.emplace_back(name, v.get<bool>());
    else if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))
      input_error(where, "field " + single_quoted("detail.drafting." + name) + " is too large");
    else if (v.is_number_integer()) drafting.emplace_back(name, v.get<int64_t>());
    else if (v.is_number()) drafting.emplace_back(name, v.get<double>());
    else if (v.is_string()) drafting.emplace_back(name, v.get<std::string>());
    else input_error(where, "field " + single_quoted("detail.drafting." + name) + " must be null, a boolean, a number or a string");
  }
  return drafting;
}

PruningDetail parse_pruning(const nlohmann::json& value, const std::string& where) {
  require_object(value, where, "detail.pruning");
  const JsonObjectReader r(value, where, "detail.pruning.");
  PruningDetail p;
  p.pruner = r.string("pruner");
  p.root_entropy_normalized = r.number("root_entropy_normalized");
  p.drafted = r.integer("drafted");
  p.kept = r.integer("kept");
  return p;
}

AcceptanceDetail parse_acceptance(const nlohmann::json& value, const std::string& where) {
  require_object(value, where, "detail.acceptance");
  const JsonObjectReader r(value, where, "detail.acceptance.");
  // Calls read(object, its reader) for each object of the array `key`.
  auto each_object = [&](const std::string& key, const auto& read) {
    const nlohmann::json& items = array_field(r, key);
    for (size_t i = 0; i < items.size(); ++i) {
      const std::string field = "detail.acceptance." + key + "[" + std::to_string(i) + "]";
      require_object(items[i], where, field);
      read(items[i], JsonObjectReader(items[i], where, field + "."));
    }
  };
  if (value.contains("lts")) {
    ArcAcceptance a;
    each_object("lts", [&](const nlohmann::json& object, const JsonObjectReader& n) {
      a.lts.push_back(LtsNode{n.integer_in("node", 0, INT32_MAX), n.integer_in("depth", 0, INT32_MAX),
                              n.integer_in("token", 0, INT32_MAX), n.integer_in("target", 0, INT32_MAX),
                              n.number("u_emb"), n.number("u_logit"), number_or_nan(object, n, "lts"), n.boolean("relaxed", false)});
    });
    return a;
  }
  if (value.contains("rescues")) {
    CsdAcceptance a;
    each_object("rescues", [&](const nlohmann::json& object, const JsonObjectReader& x) {
      a.rescues.push_back(CsdRescue{x.integer_in("draft", 0, INT32_MAX), x.integer_in("target", 0, INT32_MAX), number_or_nan(object, x, "gap")});
    });
    return a;
  }
  if (value.contains("chains")) {
    RespecAcceptance a;
    a.chains = r.integer("chains");
    a.greedy_prefix = r.integer("greedy_prefix");
    a.accepted = r.integer("accepted");
    a.tries = r.integer("tries");
    for (const nlohmann::json& gap : array_field(r, "gaps")) {
      if (!gap.is_number()) r.fail("gaps", "must be an array of numbers");
      a.gaps.push_back(gap.get<double>());
    }
    return a;
  }
  input_error(where, "field 'detail.acceptance' is none of ARC's (lts), CSD's (rescues) or ReSpec's (chains)");
}

}  // namespace

std::ostream& operator<<(std::ostream& out, const DetailValue& value) { return out << value_json(value).dump(); }

const DetailValue* drafting_value(const DraftingDetail& drafting, const std::string& name) {
  for (const auto& [key, value] : drafting)
    if (key == name) return &value;
  return nullptr;
}

std::string step_detail_json(const StepDetail& detail) {
  if (detail.empty()) return "";
  ordered j = ordered::object();
  if (!detail.drafting.empty()) j["drafting"] = drafting_json(detail.drafting);
  if (detail.pruning) {
    const PruningDetail& p = *detail.pruning;
    j["pruning"] = {{"pruner", p.pruner},
                    {"root_entropy_normalized", p.root_entropy_normalized},
                    {"drafted", p.drafted},
                    {"kept", p.kept},
                    {"pruned_fraction", p.drafted > 0 ? static_cast<double>(p.drafted - p.kept) / p.drafted : 0.0}};
  }
  if (!std::holds_alternative<std::monostate>(detail.acceptance))
    j["acceptance"] = std::visit([](const auto& a) -> ordered {
      if constexpr (std::is_same_v<std::decay_t<decltype(a)>, std::monostate>) return nullptr;
      else return acceptance_json(a);
    }, detail.acceptance);
  return j.dump();
}

StepDetail parse_step_detail(const std::string& text, const std::string& where) {
  StepDetail detail;
  if (text.empty()) return detail;
  // Ordered: a drafter's values keep the order it named them in.
  const ordered j = parse_ordered_json(text, where + " detail");
  if (!j.is_object()) input_error(where, "field 'detail' must be a JSON object");
  for (const auto& [key, value] : j.items()) {
    if (key == "drafting") detail.drafting = parse_drafting(value, where);
    else if (key == "pruning") detail.pruning = parse_pruning(nlohmann::json(value), where);
    else if (key == "acceptance") detail.acceptance = parse_acceptance(nlohmann::json(value), where);
    else input_error(where, "field 'detail' has an unknown member " + single_quoted(key) + " (drafting, pruning and acceptance are known)");
  }
  return detail;
}

}  // namespace specd
