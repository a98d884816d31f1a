#include "io/sqlite_db.h"

#include <sqlite3.h>

#include "io/read_file.h"
#include "util/error.h"

namespace specd::sqlite {

Database::Database(const std::string& path, Mode mode) : path_(path) {
  const int flags = mode == Mode::ReadOnly       ? SQLITE_OPEN_READONLY
                    : mode == Mode::ReadExisting ? SQLITE_OPEN_READWRITE
                                                 : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
  // SQLite's own open would block on a FIFO; a file to read must be a regular one.
  if (mode != Mode::ReadWriteCreate) require_regular_file(path);
  if (sqlite3_open_v2(path.c_str(), &db_, flags, nullptr) != SQLITE_OK) {
    const std::string message = db_ ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close(db_);
    db_ = nullptr;
    input_error(path, "cannot open: " + message);
  }
  sqlite3_extended_result_codes(db_, 1);
  sqlite3_busy_timeout(db_, 5000);  // another process writing the same file: wait, then fail
}

Database::~Database() { sqlite3_close(db_); }

void Database::fail(const std::string& what) const { input_error(path_, what + ": " + sqlite3_errmsg(db_)); }

void Database::exec(const std::string& sql) {
  char* message = nullptr;
  if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &message) != SQLITE_OK) {
    const std::string text = message ? message : sqlite3_errmsg(db_);
    sqlite3_free(message);
    input_error(path_, text);
  }
}

int64_t Database::last_insert_rowid() const { return sqlite3_last_insert_rowid(db_); }

Statement::Statement(Database& db, const std::string& sql) : db_(db) {
  if (sqlite3_prepare_v2(db.handle(), sql.c_str(), -1, &stmt_, nullptr) != SQLITE_OK) db.fail("cannot prepare a statement");
}

Statement::~Statement() { sqlite3_finalize(stmt_); }

Statement& Statement::bind(int index, int64_t value) {
  if (sqlite3_bind_int64(stmt_, index, value) != SQLITE_OK) db_.fail("cannot bind a value");
  return *this;
}

Statement& Statement::bind(int index, double value) {
  if (sqlite3_bind_double(stmt_, index, value) != SQLITE_OK) db_.fail("cannot bind a value");
  return *this;
}

Statement& Statement::bind(int index, const std::string& value) {
  if (sqlite3_bind_text(stmt_, index, value.data(), static_cast<int>(value.size()), SQLITE_TRANSIENT) != SQLITE_OK)
    db_.fail("cannot bind a value");
  return *this;
}

Statement& Statement::bind(int index, std::optional<double> value) {
  return value ? bind(index, *value) : bind_null(index);
}

Statement& Statement::bind_null(int index) {
  if (sqlite3_bind_null(stmt_, index) != SQLITE_OK) db_.fail("cannot bind a value");
  return *this;
}

bool Statement::step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  const std::string message = sqlite3_errmsg(db_.handle());
  reset();  // leave the statement reusable after an error
  input_error(db_.path(), "statement failed: " + message);
}

void Statement::run() {
  while (step()) {
  }
  reset();
}

void Statement::reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

bool Statement::is_null(int column) const { return sqlite3_column_type(stmt_, column) == SQLITE_NULL; }
int64_t Statement::int64(int column) const { return sqlite3_column_int64(stmt_, column); }
double Statement::real(int column) const { return sqlite3_column_double(stmt_, column); }
std::optional<int64_t> Statement::integer_value(int column) const {
  if (sqlite3_column_type(stmt_, column) != SQLITE_INTEGER) return std::nullopt;
  return sqlite3_column_int64(stmt_, column);
}
std::optional<double> Statement::real_value(int column) const {
  const int type = sqlite3_column_type(stmt_, column);
  if (type != SQLITE_FLOAT && type != SQLITE_INTEGER) return std::nullopt;
  return sqlite3_column_double(stmt_, column);
}
std::optional<std::string> Statement::text_value(int column) const {
  if (sqlite3_column_type(stmt_, column) != SQLITE_TEXT) return std::nullopt;
  return text(column);
}
std::string Statement::text(int column) const {
  const auto* data = sqlite3_column_text(stmt_, column);
  return data ? std::string(reinterpret_cast<const char*>(data), static_cast<size_t>(sqlite3_column_bytes(stmt_, column)))
              : std::string();
}

Transaction::Transaction(Database& db) : db_(db) { db_.exec("BEGIN IMMEDIATE"); }

Transaction::~Transaction() {
  if (!done_) sqlite3_exec(db_.handle(), "ROLLBACK", nullptr, nullptr, nullptr);
}

void Transaction::commit() {
  db_.exec("COMMIT");
  done_ = true;
}

}  // namespace specd::sqlite
