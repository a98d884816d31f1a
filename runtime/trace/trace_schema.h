#pragma once
// The trace database's schema (schemas/traces.sql) and its version check.
#include "io/sqlite_db.h"

namespace specd {

// Files are written at version 5; versions 1 (no pruner or lossy-verdict columns), 2 (no
// specd_commit, no request measurement), 3 (no step detail) and 4 (no machine) are still read,
// their missing columns as trace_fields.h's `absent` values.
constexpr int kTracesSchemaVersion = 5;
constexpr int kOldestReadableTracesVersion = 1;

// The DDL of schemas/traces.sql, which ends by setting PRAGMA user_version.
const char* traces_schema_sql();

// Makes `db` ready for trace I/O and returns its schema version: with `create` (writing), an empty
// file gets the schema (in one transaction), and only the current version is
// accepted; reading also accepts the older ones. Throws InputError "PATH: schema version N, ..."
// for another version, and names the file when it is not a traces database at all.
int open_traces_schema(sqlite::Database& db, bool create);

// True for an existing SQLite file with no tables and no schema version: what a writer killed
// between creating the file and committing its schema leaves (SQLite rolls the rest back, which
// is why the file is opened read-write). False for a missing file.
bool empty_database(const std::string& path);

}  // namespace specd
