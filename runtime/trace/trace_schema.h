#pragma once
// The trace database's schema (schemas/traces.sql) and its version check.
#include "trace/sqlite_db.h"

namespace specd {

constexpr int kTracesSchemaVersion = 1;

// The DDL of schemas/traces.sql, which ends by setting PRAGMA user_version.
const char* traces_schema_sql();

// Makes `db` ready for trace I/O: with `create`, an empty file gets WAL mode and the schema (in one
// transaction). Throws InputError "PATH: schema version N, this specd reads M" for another
// version, and names the file when it is not a traces database at all.
void open_traces_schema(sqlite::Database& db, bool create);

}  // namespace specd
