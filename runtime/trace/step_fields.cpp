#include "trace/step_fields.h"

#include <optional>

namespace specd {
namespace {

int64_t integer_of(const TraceCell& cell) { return std::holds_alternative<int64_t>(cell) ? std::get<int64_t>(cell) : 0; }
std::string text_of(const TraceCell& cell) { return std::holds_alternative<std::string>(cell) ? std::get<std::string>(cell) : ""; }
TraceCell text_or_null(const std::string& text) { return text.empty() ? TraceCell{} : TraceCell{text}; }

// Accessors for the plain members: M is the member, cast to and from the cell's type.
template <typename T, T StepTrace::*M>
TraceCell get_integer(const StepTrace& s) { return static_cast<int64_t>(s.*M); }
template <typename T, T StepTrace::*M>
void set_integer(StepTrace& s, const TraceCell& c, const std::string&) { s.*M = static_cast<T>(integer_of(c)); }
template <double StepTrace::*M>
TraceCell get_real(const StepTrace& s) { return s.*M; }
template <double StepTrace::*M>
void set_real(StepTrace& s, const TraceCell& c, const std::string&) { s.*M = std::holds_alternative<double>(c) ? std::get<double>(c) : 0.0; }
template <std::string StepTrace::*M>
TraceCell get_text(const StepTrace& s) { return s.*M; }
template <std::string StepTrace::*M>
void set_text(StepTrace& s, const TraceCell& c, const std::string&) { s.*M = text_of(c); }
template <std::string StepTrace::*M>
TraceCell get_json(const StepTrace& s) { return text_or_null(s.*M); }

}  // namespace

const std::vector<StepField>& step_fields() {
  using K = StepFieldKind;
  static const std::vector<StepField> fields{
      {"drafter", K::Text, 1, nullptr, get_text<&StepTrace::drafter>, set_text<&StepTrace::drafter>},
      {"draft_size", K::Integer, 1, nullptr, get_integer<int32_t, &StepTrace::draft_size>, set_integer<int32_t, &StepTrace::draft_size>},
      {"accepted_length", K::Integer, 1, nullptr, get_integer<int32_t, &StepTrace::accepted_length>,
       set_integer<int32_t, &StepTrace::accepted_length>},
      {"accepted_sources", K::Text, 1, nullptr, get_text<&StepTrace::accepted_sources>, set_text<&StepTrace::accepted_sources>},
      {"root_entropy", K::Real, 1, nullptr,
       [](const StepTrace& s) { return s.root_entropy ? TraceCell{*s.root_entropy} : TraceCell{}; },
       [](StepTrace& s, const TraceCell& c, const std::string&) {
         s.root_entropy = std::holds_alternative<double>(c) ? std::optional<double>(std::get<double>(c)) : std::nullopt;
       }},
      {"draft_ms", K::Real, 1, nullptr, get_real<&StepTrace::draft_ms>, set_real<&StepTrace::draft_ms>},
      {"verify_ms", K::Real, 1, nullptr, get_real<&StepTrace::verify_ms>, set_real<&StepTrace::verify_ms>},
      {"accept_ms", K::Real, 1, nullptr, get_real<&StepTrace::accept_ms>, set_real<&StepTrace::accept_ms>},
      {"lossless", K::Flag, 1, nullptr, get_integer<bool, &StepTrace::lossless>,
       [](StepTrace& s, const TraceCell& c, const std::string&) { s.lossless = integer_of(c) != 0; }},
      // version 2: the pruner stage and lossy verdicts
      {"pruned", K::Integer, 2, "0", get_integer<int32_t, &StepTrace::pruned>, set_integer<int32_t, &StepTrace::pruned>},
      {"rescued", K::Integer, 2, "0", get_integer<int32_t, &StepTrace::rescued>, set_integer<int32_t, &StepTrace::rescued>},
      {"relaxed", K::Integer, 2, "0", get_integer<int32_t, &StepTrace::relaxed>, set_integer<int32_t, &StepTrace::relaxed>},
      {"accepted_verdicts", K::Text, 2, "''", get_text<&StepTrace::accepted_verdicts>, set_text<&StepTrace::accepted_verdicts>},
      {"decision_scores", K::Json, 2, "NULL", get_json<&StepTrace::decision_scores>, set_text<&StepTrace::decision_scores>},
      // version 4: what the drafter, the pruner and the acceptor measured
      {"detail", K::Json, 4, "NULL", [](const StepTrace& s) { return text_or_null(step_detail_json(s.detail)); },
       [](StepTrace& s, const TraceCell& c, const std::string& where) { s.detail = parse_step_detail(text_of(c), where); }},
  };
  return fields;
}

}  // namespace specd
