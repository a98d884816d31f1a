// Workload files: well-formed lines load; each malformed line is named with its line number.
#include <catch2/catch.hpp>

#include "test_helpers.h"
#include "util/error.h"
#include "workload/workload.h"

using namespace specd;

TEST_CASE("workload lines with a prompt or turns load", "[workload]") {
  test::ScopedTempDir dir("workload-ok");
  std::string path = dir.file("w.jsonl");
  test::write_text_file(path,
                        "{\"id\": \"qa-1\", \"category\": \"qa\", \"prompt\": \"Q: why?\\nA:\", \"max_new_tokens\": 64, "
                        "\"source\": \"python3.11-doc faq\", \"license\": \"PSF-2.0\"}\n\n"
                        "{\"id\": \"mt-1\", \"category\": \"multi_turn\", \"turns\": [\"first\", \"second\"], \"max_new_tokens\": 32}\n");
  auto items = read_workload(path);
  REQUIRE(items.size() == 2);
  CHECK(items[0].turns == std::vector<std::string>{"Q: why?\nA:"});
  CHECK(items[0].license == "PSF-2.0");
  CHECK(items[1].turns.size() == 2);
  CHECK(items[1].max_new_tokens == 32);
}

TEST_CASE("a malformed workload line is named with its number", "[workload]") {
  test::ScopedTempDir dir("workload-bad");
  std::string path = dir.file("w.jsonl");
  const std::string good = "{\"id\": \"a\", \"category\": \"qa\", \"prompt\": \"p\", \"max_new_tokens\": 8}\n";
  auto error_for = [&](const std::string& bad_line) {
    test::write_text_file(path, good + bad_line + "\n");
    try {
      read_workload(path);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK_THAT(error_for("{\"id\": \"b\", \"category\": \"qa\", \"prompt\": \"p\""), Catch::StartsWith(path + ":2: "));
  CHECK_THAT(error_for("{\"id\": \"b\", \"category\": \"qa\", \"max_new_tokens\": 8}"), Catch::Contains("'prompt' and 'turns'"));
  CHECK_THAT(error_for("{\"id\": \"b\", \"category\": \"qa\", \"prompt\": \"p\", \"max_new_tokens\": 0}"), Catch::Contains("max_new_tokens"));
  CHECK_THAT(error_for("{\"category\": \"qa\", \"prompt\": \"p\", \"max_new_tokens\": 8}"), Catch::Contains("'id'"));
  CHECK_THAT(error_for("[1, 2]"), Catch::Contains("JSON object"));
  CHECK_THROWS_WITH(read_workload(dir.file("none.jsonl")), Catch::Contains("cannot open: No such file"));
}
