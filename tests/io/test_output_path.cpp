// Outputs are replaced by rename: a symlinked output is written through to its target (the link
// stays a link), and a FIFO, a device or a directory where a file belongs is refused before
// anything is written.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <filesystem>

#include "io/atomic_directory.h"
#include "io/atomic_file.h"
#include "io/output_path.h"
#include "test_helpers.h"
#include "test_skip.h"
#include "util/error.h"

using namespace specd;
using namespace specd::test;
namespace fs = std::filesystem;

namespace {

// No leftover temporary files beside an output.
int temporaries_in(const fs::path& dir) {
  int count = 0;
  for (const auto& entry : fs::directory_iterator(dir))
    if (entry.path().filename().string().find(".tmp-") != std::string::npos) ++count;
  return count;
}

}  // namespace

TEST_CASE("atomic file: a symlinked output is written through to its target", "[io][output]") {
  ScopedTempDir tmp("output-link");
  fs::create_directories(tmp.path() / "real");
  write_text_file(tmp.file("real/report.json"), "old");
  fs::create_symlink("real/report.json", tmp.path() / "report.json");  // relative, as users make them
  fs::create_symlink(tmp.path() / "report.json", tmp.path() / "chain.json");

  write_file_atomically(tmp.file("chain.json"), "new");
  CHECK(fs::is_symlink(tmp.path() / "report.json"));
  CHECK(fs::is_symlink(tmp.path() / "chain.json"));
  CHECK(read_text_file(tmp.file("real/report.json")) == "new");
  CHECK(temporaries_in(tmp.path()) == 0);
  CHECK(temporaries_in(tmp.path() / "real") == 0);

  SECTION("a dangling link creates its target") {
    fs::create_symlink("real/fresh.json", tmp.path() / "fresh.json");
    write_file_atomically(tmp.file("fresh.json"), "made");
    CHECK(fs::is_symlink(tmp.path() / "fresh.json"));
    CHECK(read_text_file(tmp.file("real/fresh.json")) == "made");
  }
}

TEST_CASE("atomic file: a writer killed before commit leaves the old file and no temporary", "[io][output]") {
  ScopedTempDir tmp("output-killed");
  const std::string target = tmp.file("report.json");
  write_text_file(target, "old");
  const int probe = ::open(tmp.path().c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
  if (probe < 0) SPECD_SKIP("no O_TMPFILE on this file system: the temporary is named while it is written");
  ::close(probe);

  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    try {
      AtomicFileWriter writer(target);
      writer.write(std::string(1 << 20, 'x'));
      raise(SIGKILL);  // no destructor runs, as with kill -9
    } catch (...) {
    }
    _exit(3);
  }
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  CHECK(WIFSIGNALED(status));
  CHECK(read_text_file(target) == "old");
  CHECK(temporaries_in(tmp.path()) == 0);

  // Committed, the file gets the usual permissions (0666 less the umask), as a plain create does.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  write_file_atomically(target, "new");
  write_file_atomically(tmp.file("fresh.json"), "made");
  CHECK(read_text_file(target) == "new");
  struct stat made {};
  REQUIRE(::stat(tmp.file("fresh.json").c_str(), &made) == 0);
  CHECK((made.st_mode & 0777) == (0666 & ~mask));
  CHECK(temporaries_in(tmp.path()) == 0);
}

TEST_CASE("atomic file: FIFOs, devices and directories are refused, and left alone", "[io][output]") {
  ScopedTempDir tmp("output-special");
  REQUIRE(::mkfifo(tmp.file("pipe").c_str(), 0644) == 0);
  CHECK_THROWS_WITH(write_file_atomically(tmp.file("pipe"), "x"), Catch::Contains("pipe") && Catch::Contains("is a FIFO"));
  CHECK(fs::is_fifo(tmp.path() / "pipe"));
  CHECK_THROWS_AS(write_file_atomically("/dev/full", "x"), InputError);
  CHECK_THROWS_WITH(write_file_atomically("/dev/null", "x"), Catch::Contains("character device"));
  CHECK(fs::is_character_file("/dev/null"));
  fs::create_directories(tmp.path() / "dir");
  CHECK_THROWS_WITH(write_file_atomically(tmp.file("dir"), "x"), Catch::Contains("is a directory"));
  fs::create_symlink("pipe", tmp.path() / "to-pipe");
  CHECK_THROWS_WITH(write_file_atomically(tmp.file("to-pipe"), "x"), Catch::Contains("symbolic link's target"));
  fs::create_symlink("loop-b", tmp.path() / "loop-a");
  fs::create_symlink("loop-a", tmp.path() / "loop-b");
  CHECK_THROWS_WITH(write_file_atomically(tmp.file("loop-a"), "x"), Catch::Contains("symbolic links"));
  CHECK(temporaries_in(tmp.path()) == 0);
}

TEST_CASE("atomic directory: a symlinked output directory is replaced at its target", "[io][output]") {
  ScopedTempDir tmp("output-dir-link");
  fs::create_directories(tmp.path() / "store/artifact");
  write_text_file(tmp.file("store/artifact/old.txt"), "old");
  fs::create_symlink("store/artifact", tmp.path() / "artifact");
  {
    AtomicDirectoryWriter writer(tmp.file("artifact"));
    write_text_file(writer.file("new.txt"), "new");
    writer.commit();
  }
  CHECK(fs::is_symlink(tmp.path() / "artifact"));
  CHECK(read_text_file(tmp.file("store/artifact/new.txt")) == "new");
  CHECK_FALSE(fs::exists(tmp.path() / "store/artifact/old.txt"));
  CHECK(temporaries_in(tmp.path() / "store") == 0);

  write_text_file(tmp.file("plain"), "a file");
  CHECK_THROWS_WITH(AtomicDirectoryWriter(tmp.file("plain")), Catch::Contains("is a file, not a directory"));
  CHECK(read_text_file(tmp.file("plain")) == "a file");
}

TEST_CASE("atomic directory: a dead writer's temporary directory is removed by the next writer, a live one's kept", "[io][output]") {
  ScopedTempDir tmp("output-leftovers");
  char host[256] = {};
  REQUIRE(::gethostname(host, sizeof host - 1) == 0);
  std::string tag = host;
  for (char& c : tag)
    if (c == '/' || c == '-') c = '_';
  const pid_t dead = ::fork();  // a process that has exited and been reaped: its pid names no process
  if (dead == 0) ::_exit(0);
  REQUIRE(dead > 0);
  REQUIRE(::waitpid(dead, nullptr, 0) == dead);
  const std::string base = tmp.file("artifact");
  const std::string killed = base + ".tmp-" + tag + "-" + std::to_string(dead) + "-abc123";
  const std::string live = base + ".tmp-" + tag + "-" + std::to_string(::getpid()) + "-def456";
  const std::string other_host = base + ".tmp-elsewhere-" + std::to_string(dead) + "-ghi789";
  for (const std::string& d : {killed, live, other_host}) {
    fs::create_directories(d);
    write_text_file(d + "/calibration.h5", "a full copy");
  }
  AtomicDirectoryWriter writer(base);
  write_text_file(writer.file("manifest.json"), "{}");
  writer.commit();
  CHECK(!fs::exists(killed));
  CHECK(fs::exists(live + "/calibration.h5"));        // its writer may still swap it in
  CHECK(fs::exists(other_host + "/calibration.h5"));  // another host's process cannot be checked from here
  CHECK(fs::exists(base + "/manifest.json"));
}

TEST_CASE("output checks: writable ancestors, and one identity for every spelling of a file", "[io][output]") {
  ScopedTempDir tmp("output-identity");
  write_text_file(tmp.file("file"), "x");
  CHECK_THROWS_WITH(check_output_file_writable(tmp.file("file/out.json"), "--json"), Catch::Contains("is not a directory"));
  CHECK(check_output_file_writable(tmp.file("new/deeper/out.json"), "--json") == tmp.file("new/deeper/out.json"));
  CHECK_FALSE(fs::exists(tmp.path() / "new"));  // checking creates nothing

  fs::create_directories(tmp.path() / "sub");
  fs::create_symlink("file", tmp.path() / "link");
  fs::create_hard_link(tmp.path() / "file", tmp.path() / "hard");
  const std::string id = output_identity(resolve_output_file(tmp.file("file"), "a"));
  CHECK(output_identity(resolve_output_file(tmp.file("link"), "b")) == id);
  CHECK(output_identity(resolve_output_file(tmp.file("hard"), "c")) == id);
  CHECK(output_identity(resolve_output_file(tmp.file("sub/../file"), "d")) == id);
  const std::string fresh = output_identity(resolve_output_file(tmp.file("fresh.json"), "e"));
  CHECK(output_identity(resolve_output_file(tmp.file("./fresh.json"), "f")) == fresh);
  CHECK(fresh != id);
}
