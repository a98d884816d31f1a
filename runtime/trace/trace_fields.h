#pragma once
// The columns of each trace record, declared once. schemas/traces.sql holds them in the same order
// after each table's key; the sink's INSERTs, the reader's SELECTs (a file of an older schema
// version reads a column it lacks as `absent`) and the steps' CSV and JSON Lines exports all come
// from these tables. A test checks each against its table in the schema, column for column.
#include <climits>
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "io/sqlite_db.h"
#include "trace/trace_records.h"

namespace specd {

// What a column holds: Flag is an integer 0/1 (a boolean in JSON); Json is text holding a JSON
// array or object (embedded as JSON in JSON Lines), NULL when empty.
enum class FieldKind { Integer, Real, Text, Flag, Json };

// One cell: NULL (monostate), an integer, a real or text.
using TraceCell = std::variant<std::monostate, int64_t, double, std::string>;

template <typename Record>
struct TraceField {
  const char* name;      // the SQL column, the CSV header and the JSON key
  FieldKind kind;
  int since;             // the schema version that added the column
  const char* absent;    // SQL read in its place from older versions ("0", "''", "NULL"); null for version-1 columns
  TraceCell (*get)(const Record& record);
  // Stores a cell read back; `where` names the record for an InputError on a malformed value.
  void (*set)(Record& record, const TraceCell& cell, const std::string& where);
};

// runs, after id, created_at and finished_at (the sink's own).
const std::vector<TraceField<RunInfo>>& run_fields();
// requests, after run_id and request; new_tokens and output_hash follow from the output tokens.
const std::vector<TraceField<TraceRequest>>& request_fields();
// steps, after run_id, request and step.
const std::vector<TraceField<StepTrace>>& step_fields();

// "a, b, ..." of the fields' names, each after `prefix`; a column newer than `version` as its
// `absent` value instead.
template <typename Record>
std::string field_list(const std::vector<TraceField<Record>>& fields, const std::string& prefix = "", int version = INT_MAX) {
  std::string list;
  for (const auto& field : fields)
    list += (list.empty() ? "" : ", ") + (field.since <= version ? prefix + field.name : std::string(field.absent));
  return list;
}

void bind_cell(sqlite::Statement& statement, int index, const TraceCell& cell);
TraceCell read_cell(const sqlite::Statement& statement, int column, FieldKind kind);

// Binds the record's fields to parameters first, first + 1, ...
template <typename Record>
void bind_fields(sqlite::Statement& statement, int first, const std::vector<TraceField<Record>>& fields, const Record& record) {
  for (const auto& field : fields) bind_cell(statement, first++, field.get(record));
}

// Reads columns first, first + 1, ... into the record.
template <typename Record>
void read_fields(const sqlite::Statement& statement, int first, const std::vector<TraceField<Record>>& fields, Record& record,
                 const std::string& where) {
  for (const auto& field : fields) field.set(record, read_cell(statement, first++, field.kind), where);
}

}  // namespace specd
