#include "trace/trace_fields.h"

#include <optional>

#include <nlohmann/json.hpp>

#include "io/json_reader.h"

namespace specd {
namespace {

int64_t integer_of(const TraceCell& cell) { return std::holds_alternative<int64_t>(cell) ? std::get<int64_t>(cell) : 0; }
std::string text_of(const TraceCell& cell) { return std::holds_alternative<std::string>(cell) ? std::get<std::string>(cell) : ""; }
TraceCell text_or_null(const std::string& text) { return text.empty() ? TraceCell{} : TraceCell{text}; }

// Accessors of plain members (R::*M), cast to and from the cell's type.
template <typename R, typename T, T R::*M>
TraceCell get_integer(const R& r) { return static_cast<int64_t>(r.*M); }
template <typename R, typename T, T R::*M>
void set_integer(R& r, const TraceCell& c, const std::string&) { r.*M = static_cast<T>(integer_of(c)); }
template <typename R, double R::*M>
TraceCell get_real(const R& r) { return r.*M; }
template <typename R, double R::*M>
void set_real(R& r, const TraceCell& c, const std::string&) { r.*M = std::holds_alternative<double>(c) ? std::get<double>(c) : 0.0; }
template <typename R, std::string R::*M>
TraceCell get_text(const R& r) { return r.*M; }
template <typename R, std::string R::*M>
TraceCell get_text_or_null(const R& r) { return text_or_null(r.*M); }
template <typename R, std::string R::*M>
void set_text(R& r, const TraceCell& c, const std::string&) { r.*M = text_of(c); }

}  // namespace

void bind_cell(sqlite::Statement& statement, int index, const TraceCell& cell) {
  if (const auto* integer = std::get_if<int64_t>(&cell)) statement.bind(index, *integer);
  else if (const auto* real = std::get_if<double>(&cell)) statement.bind(index, *real);
  else if (const auto* text = std::get_if<std::string>(&cell)) statement.bind(index, *text);
  else statement.bind_null(index);
}

TraceCell read_cell(const sqlite::Statement& statement, int column, FieldKind kind) {
  if (statement.is_null(column)) return {};
  if (kind == FieldKind::Integer || kind == FieldKind::Flag) return statement.int64(column);
  if (kind == FieldKind::Real) return statement.real(column);
  return statement.text(column);
}

const std::vector<TraceField<RunInfo>>& run_fields() {
  using K = FieldKind;
  using R = RunInfo;
  static const std::vector<TraceField<R>> fields{
      {"command_line", K::Text, 1, nullptr, get_text<R, &R::command_line>, set_text<R, &R::command_line>},
      {"target_model", K::Text, 1, nullptr, get_text<R, &R::target_model>, set_text<R, &R::target_model>},
      {"draft_model", K::Text, 1, nullptr, get_text_or_null<R, &R::draft_model>, set_text<R, &R::draft_model>},
      {"method", K::Text, 1, nullptr, get_text<R, &R::method>, set_text<R, &R::method>},
      {"options_json", K::Text, 1, nullptr, get_text<R, &R::options_json>, set_text<R, &R::options_json>},
      {"specd_version", K::Text, 1, nullptr, get_text<R, &R::specd_version>, set_text<R, &R::specd_version>},
      // version 3
      {"specd_commit", K::Text, 3, "NULL", get_text_or_null<R, &R::specd_commit>, set_text<R, &R::specd_commit>},
      // version 5
      {"machine", K::Text, 5, "NULL", get_text_or_null<R, &R::machine_json>, set_text<R, &R::machine_json>},
  };
  return fields;
}

const std::vector<TraceField<TraceRequest>>& request_fields() {
  using K = FieldKind;
  using R = TraceRequest;
  auto ignore = [](R&, const TraceCell&, const std::string&) {};  // follows from the output tokens
  static const std::vector<TraceField<R>> fields{
      {"workload", K::Text, 1, nullptr, [](const R& r) -> TraceCell { return r.info.workload; },
       [](R& r, const TraceCell& c, const std::string&) { r.info.workload = text_of(c); }},
      {"category", K::Text, 1, nullptr, [](const R& r) -> TraceCell { return r.info.category; },
       [](R& r, const TraceCell& c, const std::string&) { r.info.category = text_of(c); }},
      {"prompt_tokens", K::Integer, 1, nullptr, [](const R& r) -> TraceCell { return r.info.prompt_tokens; },
       [](R& r, const TraceCell& c, const std::string&) { r.info.prompt_tokens = integer_of(c); }},
      {"new_tokens", K::Integer, 1, nullptr, [](const R& r) -> TraceCell { return static_cast<int64_t>(r.outcome.output_tokens.size()); },
       ignore},
      {"wall_ms", K::Real, 1, nullptr, [](const R& r) -> TraceCell { return r.outcome.wall_ms; },
       [](R& r, const TraceCell& c, const std::string&) { r.outcome.wall_ms = std::holds_alternative<double>(c) ? std::get<double>(c) : 0.0; }},
      {"output_hash", K::Text, 1, nullptr, [](const R& r) -> TraceCell { return token_hash(r.outcome.output_tokens); },
       set_text<R, &R::output_hash>},
      {"output_tokens", K::Json, 1, nullptr, [](const R& r) -> TraceCell { return nlohmann::json(r.outcome.output_tokens).dump(); },
       [](R& r, const TraceCell& c, const std::string& where) { r.outcome.output_tokens = parse_token_list(text_of(c), where + " output_tokens"); }},
      // version 3
      {"measurement", K::Text, 3, "NULL", [](const R& r) { return text_or_null(r.outcome.measurement); },
       [](R& r, const TraceCell& c, const std::string&) { r.outcome.measurement = text_of(c); }},
  };
  return fields;
}

const std::vector<TraceField<StepTrace>>& step_fields() {
  using K = FieldKind;
  using S = StepTrace;
  static const std::vector<TraceField<S>> fields{
      {"drafter", K::Text, 1, nullptr, get_text<S, &S::drafter>, set_text<S, &S::drafter>},
      {"draft_size", K::Integer, 1, nullptr, get_integer<S, int32_t, &S::draft_size>, set_integer<S, int32_t, &S::draft_size>},
      {"accepted_length", K::Integer, 1, nullptr, get_integer<S, int32_t, &S::accepted_length>, set_integer<S, int32_t, &S::accepted_length>},
      {"accepted_sources", K::Text, 1, nullptr, get_text<S, &S::accepted_sources>, set_text<S, &S::accepted_sources>},
      {"root_entropy", K::Real, 1, nullptr, [](const S& s) { return s.root_entropy ? TraceCell{*s.root_entropy} : TraceCell{}; },
       [](S& s, const TraceCell& c, const std::string&) {
         s.root_entropy = std::holds_alternative<double>(c) ? std::optional<double>(std::get<double>(c)) : std::nullopt;
       }},
      {"draft_ms", K::Real, 1, nullptr, get_real<S, &S::draft_ms>, set_real<S, &S::draft_ms>},
      {"verify_ms", K::Real, 1, nullptr, get_real<S, &S::verify_ms>, set_real<S, &S::verify_ms>},
      {"accept_ms", K::Real, 1, nullptr, get_real<S, &S::accept_ms>, set_real<S, &S::accept_ms>},
      {"lossless", K::Flag, 1, nullptr, get_integer<S, bool, &S::lossless>,
       [](S& s, const TraceCell& c, const std::string&) { s.lossless = integer_of(c) != 0; }},
      // version 2: the pruner stage and lossy verdicts
      {"pruned", K::Integer, 2, "0", get_integer<S, int32_t, &S::pruned>, set_integer<S, int32_t, &S::pruned>},
      {"rescued", K::Integer, 2, "0", get_integer<S, int32_t, &S::rescued>, set_integer<S, int32_t, &S::rescued>},
      {"relaxed", K::Integer, 2, "0", get_integer<S, int32_t, &S::relaxed>, set_integer<S, int32_t, &S::relaxed>},
      {"accepted_verdicts", K::Text, 2, "''", get_text<S, &S::accepted_verdicts>, set_text<S, &S::accepted_verdicts>},
      {"decision_scores", K::Json, 2, "NULL", get_text_or_null<S, &S::decision_scores>, set_text<S, &S::decision_scores>},
      // version 4: what the drafter, the pruner and the acceptor measured
      {"detail", K::Json, 4, "NULL", [](const S& s) { return text_or_null(step_detail_json(s.detail)); },
       [](S& s, const TraceCell& c, const std::string& where) { s.detail = parse_step_detail(text_of(c), where); }},
  };
  return fields;
}

}  // namespace specd
