#pragma once
// The columns of a step record, declared once. The steps table (schemas/traces.sql) holds them
// after its key (run_id, request, step), in this order; the sink's INSERT, the reader's SELECT
// (a file of an older schema version reads a column it lacks as `absent`) and the CSV and JSON
// Lines exports all come from this table. A test checks it against the schema's columns.
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "trace/trace_records.h"

namespace specd {

// What a column holds: Flag is an integer 0/1 (a boolean in JSON); Json is text holding a JSON
// array or object (embedded as JSON in JSON Lines), NULL when empty.
enum class StepFieldKind { Integer, Real, Text, Flag, Json };

// One cell: NULL (monostate), an integer, a real or text.
using TraceCell = std::variant<std::monostate, int64_t, double, std::string>;

struct StepField {
  const char* name;      // the SQL column, the CSV header and the JSON key
  StepFieldKind kind;
  int since;             // the schema version that added the column
  const char* absent;    // SQL read in its place from older versions ("0", "''", "NULL")
  TraceCell (*get)(const StepTrace& step);
  // Stores a cell read back; `where` names the step for an InputError on a malformed value.
  void (*set)(StepTrace& step, const TraceCell& cell, const std::string& where);
};

const std::vector<StepField>& step_fields();

}  // namespace specd
