#include "trace/trace_schema.h"

#include <filesystem>
#include <tuple>
#include <utility>

#include "trace/traces_schema_sql.h"  // generated from schemas/traces.sql
#include "util/error.h"

namespace specd {

namespace {

std::pair<int64_t, int64_t> version_and_tables(sqlite::Database& db) {
  sqlite::Statement version(db, "PRAGMA user_version");
  version.step();
  sqlite::Statement tables(db, "SELECT count(*) FROM sqlite_master");
  tables.step();
  return std::make_pair(version.int64(0), tables.int64(0));
}

}  // namespace

const char* traces_schema_sql() { return kTracesSchemaSql; }

bool empty_database(const std::string& path) {
  std::error_code error;
  if (!std::filesystem::exists(path, error)) return false;
  sqlite::Database db(path, sqlite::Database::Mode::ReadExisting);
  return version_and_tables(db) == std::make_pair(int64_t{0}, int64_t{0});
}

int open_traces_schema(sqlite::Database& db, bool create) {
  db.exec("PRAGMA foreign_keys = ON");
  auto [version, tables] = version_and_tables(db);
  if (version == 0 && tables == 0 && create) {
    sqlite::Transaction transaction(db);
    std::tie(version, tables) = version_and_tables(db);  // another writer may have been first
    if (version == 0 && tables == 0) db.exec(traces_schema_sql());
    transaction.commit();
    std::tie(version, tables) = version_and_tables(db);
  }
  if (version == 0)
    input_error(db.path(), tables == 0 ? "empty database, not a specd traces file" : "not a specd traces file (no schema version)");
  if (create && version != kTracesSchemaVersion)
    input_error(db.path(), "schema version " + std::to_string(version) + ", this specd writes " + std::to_string(kTracesSchemaVersion) +
                               " (write the traces to a new file)");
  if (version < kOldestReadableTracesVersion || version > kTracesSchemaVersion)
    input_error(db.path(), "schema version " + std::to_string(version) + ", this specd reads " +
                               std::to_string(kOldestReadableTracesVersion) + " to " + std::to_string(kTracesSchemaVersion));
  // A rollback journal, not WAL: a reader opening the file read-only then leaves no -wal/-shm
  // files behind (files of older specd versions were WAL; writing turns them back). Set only once
  // the file is known to be ours, and outside any transaction as SQLite requires.
  if (create) db.exec("PRAGMA journal_mode = DELETE");
  return static_cast<int>(version);
}

}  // namespace specd
