// The artifact directory is written atomically: readers see the old directory or the complete new
// one, and a failed write leaves neither a partial DIR nor a temporary directory.
#include <catch2/catch.hpp>

#include <filesystem>

#include "artifact/artifact_reader.h"
#include "artifact_fixtures.h"
#include "calibrate/artifact_writer.h"
#include "util/error.h"

using namespace specd;
using test::ScopedTempDir;
namespace fs = std::filesystem;

namespace {

std::vector<std::string> entries(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace

TEST_CASE("artifact write: rewriting an existing directory swaps it whole", "[artifact][atomic]") {
  ScopedTempDir tmp("atomic");
  const std::string dir = tmp.file("pairs/demo");  // missing parents are created
  Artifact first = test::synthetic_artifact(4);
  write_artifact(dir, first);
  test::write_text_file(dir + "/stale.txt", "from an older layout");
  Artifact second = test::synthetic_artifact(9, 11);
  write_artifact(dir + "/", second);  // a trailing slash names the same directory
  CHECK(read_artifact(dir) == second);
  CHECK(entries(dir) == std::vector<std::string>{"calibration.h5", "calibration.sqlite", "manifest.json"});
  CHECK(entries(tmp.file("pairs")) == std::vector<std::string>{"demo"});  // the old contents are gone
}

TEST_CASE("artifact write: a failed write leaves no directory and no temporary one", "[artifact][atomic]") {
  ScopedTempDir tmp("atomic");
  Artifact broken = test::synthetic_artifact(4);
  broken.thresholds.push_back(broken.thresholds.front());  // SQLite refuses the duplicate key mid-write

  SECTION("a new directory") {
    CHECK_THROWS_WITH(write_artifact(tmp.file("art"), broken), Catch::Contains("UNIQUE constraint failed: thresholds"));
    CHECK(entries(tmp.path()).empty());
  }
  SECTION("over an existing artifact, which stays as it was") {
    const Artifact good = test::synthetic_artifact(4);
    write_artifact(tmp.file("art"), good);
    CHECK_THROWS_AS(write_artifact(tmp.file("art"), broken), InputError);
    CHECK(entries(tmp.path()) == std::vector<std::string>{"art"});
    CHECK(read_artifact(tmp.file("art")) == good);
  }
  SECTION("a parent that is a file") {
    test::write_text_file(tmp.file("file"), "x");
    CHECK_THROWS_WITH(write_artifact(tmp.file("file/art"), test::synthetic_artifact(2)), Catch::StartsWith(tmp.file("file/art") + ": cannot create"));
    CHECK(entries(tmp.path()) == std::vector<std::string>{"file"});
  }
  SECTION("a directory that is not an artifact is never replaced") {
    fs::create_directories(tmp.file("home/docs"));
    CHECK_THROWS_WITH(write_artifact(tmp.file("home"), test::synthetic_artifact(2)),
                      tmp.file("home") + ": exists and is not a specd artifact (no manifest.json); not replacing it");
    CHECK(entries(tmp.file("home")) == std::vector<std::string>{"docs"});
    test::write_text_file(tmp.file("plain"), "x");
    CHECK_THROWS_WITH(write_artifact(tmp.file("plain"), test::synthetic_artifact(2)), tmp.file("plain") + ": exists and is not a directory");
  }
}
