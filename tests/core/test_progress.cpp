// Progress is drawn only on a terminal, and never outlives its work: done() and the destructor
// (an error unwinding) erase the line, so what follows starts on a clean line.
#include <catch2/catch.hpp>

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

TEST_CASE("progress elsewhere writes nothing", "[progress]") {
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
