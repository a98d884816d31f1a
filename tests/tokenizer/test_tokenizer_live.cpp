// The live cross-check: ids and decodes that tests/reference/encode.js has just produced with
// Hugging Face's library (see tests/tokenizer_live.cmake). Without the environment variables
// (a plain Catch2 run of this hidden test) it fails: it has nothing to compare, and passing would
// claim a check that did not happen. tests/reference/live_check.cmake, its one caller in ctest, sets them.
#include <catch2/catch.hpp>

#include <cstdlib>

#include "test_tokenizer_support.h"

using namespace specd;
using namespace specd::test;

TEST_CASE("tokenizer agrees with a fresh Hugging Face run", "[.][tokenizer-live]") {
  const char* tokenizer_path = std::getenv("SPECD_TOKENIZER_LIVE_JSON");
  const char* records_path = std::getenv("SPECD_TOKENIZER_LIVE_RECORDS");
  if (!tokenizer_path || !records_path) {
    FAIL("SPECD_TOKENIZER_LIVE_JSON / SPECD_TOKENIZER_LIVE_RECORDS not set: nothing to compare "
         "(ctest's tokenizer-live.* tests set them)");
  }
  const Tokenizer tokenizer = Tokenizer::from_file(tokenizer_path);
  const auto records = read_golden(records_path);
  REQUIRE(!records.empty());
  const ConformanceReport report = check_conformance(tokenizer, records);
  INFO(report.records << " records from " << records_path);
  INFO("first id mismatch: " << report.first_id_mismatch);
  INFO("first decode mismatch: " << report.first_decode_mismatch);
  CHECK(report.id_mismatches == 0);
  CHECK(report.decode_mismatches == 0);
}
