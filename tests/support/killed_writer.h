// A SQLite writer killed inside a transaction whose page cache already spilled into the file: it
// leaves a hot journal, which the next connection that may write has to roll back.
#pragma once

#include <catch2/catch.hpp>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <functional>
#include <string>

#include "io/sqlite_db.h"

namespace specd::test {

// Runs insert(0), insert(1), ... in one uncommitted transaction of a child process, then SIGKILLs
// it. Each statement should write a row of about 1 KB, so that 200 of them overflow a one-page cache.
inline void kill_writer_inside_transaction(const std::string& path, const std::function<std::string(int)>& insert) {
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    sqlite::Database db(path, sqlite::Database::Mode::ReadExisting);
    db.exec("PRAGMA cache_size = 1");
    db.exec("BEGIN IMMEDIATE");
    for (int i = 0; i < 200; ++i) db.exec(insert(i));
    kill(getpid(), SIGKILL);
  }
  int status = 0;
  waitpid(child, &status, 0);
  REQUIRE(WIFSIGNALED(status));
  REQUIRE(std::filesystem::exists(path + "-journal"));
}

}  // namespace specd::test
