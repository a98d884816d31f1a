// Progress is drawn in place only on a terminal, and never outlives its work: done() and the
// destructor (an error unwinding) erase the line, so what follows starts on a clean line.
// Elsewhere it logs whole lines, at most one per interval.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "util/progress.h"

using namespace specd;

namespace {

std::string contents(std::FILE* file) {
  std::fflush(file);
  std::rewind(file);
  std::string text;
  for (int c; (c = std::fgetc(file)) != EOF;) text += static_cast<char>(c);
  return text;
}

const std::string kErase = "\r\033[K";

}  // namespace

TEST_CASE("progress on a terminal is erased when an error unwinds it", "[progress]") {
  std::FILE* out = std::tmpfile();
  REQUIRE(out);
  try {
    Progress progress(3, "bench", "requests", out, /*interactive=*/true);
    progress.note("measuring");
    progress.step("ar");
    throw std::runtime_error("a bad request");
  } catch (const std::runtime_error&) {
  }
  const std::string text = contents(out);
  CHECK(text.find("bench: ar 1/3") != std::string::npos);
  CHECK(text.find('\n') == std::string::npos);
  CHECK(text.size() >= kErase.size());
  CHECK(text.substr(text.size() - kErase.size()) == kErase);  // the line is gone before the error
  std::fclose(out);
}

TEST_CASE("progress on a terminal erases itself when done, once", "[progress]") {
  std::FILE* out = std::tmpfile();
  REQUIRE(out);
  {
    Progress progress(2, "calibrate", "prompts", out, true);
    progress.step("prompt");
    progress.step("prompt");
    progress.done();
  }
  const std::string text = contents(out);
  CHECK(text.substr(text.size() - kErase.size()) == kErase);
  CHECK(text.find(kErase + kErase) == std::string::npos);  // the destructor adds nothing after done()
  std::fclose(out);
}

TEST_CASE("progress elsewhere writes nothing within the log interval", "[progress]") {
  std::FILE* out = std::tmpfile();
  REQUIRE(out);
  {
    Progress progress(2, "bench", "requests", out, /*interactive=*/false);
    progress.note("measuring");
    progress.step("ar");
  }
  CHECK(contents(out).empty());
  std::fclose(out);
}

TEST_CASE("progress elsewhere logs whole lines at most once per interval", "[progress]") {
  std::FILE* out = std::tmpfile();
  REQUIRE(out);
  {
    Progress progress(3, "calibrate", "prompts", out, /*interactive=*/false, /*log_interval_s=*/0);
    progress.note("loading");  // notes are for terminals only
    progress.step("prompt 0");
    progress.step("prompt 1");
  }
  const std::string text = contents(out);
  CHECK(text.find('\r') == std::string::npos);
  CHECK(text.find("\033[K") == std::string::npos);
  CHECK(text.find("loading") == std::string::npos);
  CHECK(text.rfind("calibrate: prompt 0 1/3, ", 0) == 0);
  CHECK(text.find("\ncalibrate: prompt 1 2/3, ") != std::string::npos);
  CHECK(std::count(text.begin(), text.end(), '\n') == 2);
  CHECK(text.back() == '\n');
  std::fclose(out);
}
