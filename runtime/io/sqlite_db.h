#pragma once
// A minimal RAII wrapper over the SQLite C API for the trace files: one connection, prepared
// statements, and transactions that roll back unless committed. Every SQLite failure becomes an
// InputError "PATH: what: sqlite message" (files the user named: locked, read-only, full, foreign).
#include <cstdint>
#include <optional>
#include <string>

struct sqlite3;
struct sqlite3_stmt;

namespace specd::sqlite {

class Database;

class Statement {
 public:
  Statement(Database& db, const std::string& sql);
  ~Statement();
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  // Binding is 1-based as in SQLite; a nullopt binds NULL.
  Statement& bind(int index, int64_t value);
  Statement& bind(int index, double value);
  Statement& bind(int index, const std::string& value);
  Statement& bind(int index, std::optional<double> value);
  Statement& bind_null(int index);
  // Steps once: true while a row is available, false when done.
  bool step();
  // Runs to completion, then resets for reuse with new bindings.
  void run();
  void reset();

  bool is_null(int column) const;
  int64_t int64(int column) const;
  double real(int column) const;
  std::string text(int column) const;  // "" for NULL
  // The value when SQLite holds the column as that type (real_value also takes an integer);
  // nullopt for NULL, text, a blob, or a real where an integer is asked: for readers that must
  // not turn a damaged cell into 0.
  std::optional<int64_t> integer_value(int column) const;
  std::optional<double> real_value(int column) const;
  std::optional<std::string> text_value(int column) const;

 private:
  Database& db_;
  sqlite3_stmt* stmt_ = nullptr;
};

class Database {
 public:
  // ReadExisting: a reader that may still have to roll back the transaction of a writer that
  // died (a hot journal), which a read-only connection cannot do; it writes nothing else. A
  // write-protected file opens read-only.
  enum class Mode { ReadOnly, ReadExisting, ReadWriteCreate };
  Database(const std::string& path, Mode mode);
  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  void exec(const std::string& sql);  // one or more statements, no results
  int64_t last_insert_rowid() const;
  const std::string& path() const { return path_; }
  sqlite3* handle() { return db_; }
  [[noreturn]] void fail(const std::string& what) const;

 private:
  std::string path_;
  sqlite3* db_ = nullptr;
};

// BEGIN IMMEDIATE on construction; ROLLBACK on destruction unless commit() ran.
class Transaction {
 public:
  explicit Transaction(Database& db);
  ~Transaction();
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  void commit();

 private:
  Database& db_;
  bool done_ = false;
};

}  // namespace specd::sqlite
