# The report in a real browser (issue 12): make_report_fixture writes a fixture artifact with every
# calibration, one with CSD alone, a traces file, a bench JSON, and the renderers' hand-made report;
# `specd report` renders the artifacts; tests/report/check_report.js opens each page from disk in
# Debian's chromium-headless-shell (puppeteer-core) and checks it (see its header), writing a
# screenshot beside each report under build/report-test/. scripts/setup.sh installs chromium and
# node_modules; without them these tests fail (not skip). Label report-browser: one Chromium
# launch per page, a few seconds each.
find_program(SPECD_NODE_EXECUTABLE NAMES node nodejs)
if(NOT SPECD_NODE_EXECUTABLE)
  set(SPECD_NODE_EXECUTABLE node)  # the test then fails naming it: run scripts/setup.sh
endif()

add_executable(make_report_fixture ${CMAKE_CURRENT_SOURCE_DIR}/report/make_report_fixture.cpp)
target_link_libraries(make_report_fixture PRIVATE specd_analysis specd_calibrate)
target_include_directories(make_report_fixture PRIVATE ${SPECD_TEST_INCLUDES})
target_compile_definitions(make_report_fixture PRIVATE SPECD_BINARY_DIR="${PROJECT_BINARY_DIR}")

set(SPECD_REPORT_TEST_DIR ${CMAKE_BINARY_DIR}/report-test)
set(SPECD_REPORT_CHECK ${CMAKE_CURRENT_SOURCE_DIR}/report/check_report.js)

add_test(NAME report.fixture COMMAND make_report_fixture ${SPECD_REPORT_TEST_DIR}/inputs)
set_tests_properties(report.fixture PROPERTIES FIXTURES_SETUP specd_report_inputs LABELS report)

# name | specd report arguments after --artifact | check_report.js arguments (arguments comma-separated)
set(SPECD_REPORT_CASES
  "full|${SPECD_REPORT_TEST_DIR}/inputs/full,--traces,${SPECD_REPORT_TEST_DIR}/inputs/traces.sqlite,--bench,${SPECD_REPORT_TEST_DIR}/inputs/bench.json|--min-charts,1,--charts-in,arc-coverage,--charts-in,csd-memory,--charts-in,sweeps,--charts-in,deployment,--charts-in,drift,--charts-in,what-if"
  "csd-only|${SPECD_REPORT_TEST_DIR}/inputs/csd-only,--traces,${SPECD_REPORT_TEST_DIR}/inputs/traces.sqlite|--not-calibrated,arc-coverage")
foreach(report_case IN LISTS SPECD_REPORT_CASES)
  string(REGEX MATCH "^([^|]*)\\|([^|]*)\\|(.*)$" ignored "${report_case}")
  set(name ${CMAKE_MATCH_1})
  string(REPLACE "," ";" report_args "${CMAKE_MATCH_2}")
  string(REPLACE "," ";" check_args "${CMAKE_MATCH_3}")
  add_test(NAME report.render.${name}
    COMMAND specd report --artifact ${report_args} --no-model --out ${SPECD_REPORT_TEST_DIR}/${name})
  set_tests_properties(report.render.${name} PROPERTIES
    FIXTURES_REQUIRED specd_report_inputs FIXTURES_SETUP specd_report_${name} LABELS report)
  add_test(NAME report.browser.${name}
    COMMAND ${SPECD_NODE_EXECUTABLE} ${SPECD_REPORT_CHECK} --dir ${SPECD_REPORT_TEST_DIR}/${name}
      --screenshot ${SPECD_REPORT_TEST_DIR}/${name}.png ${check_args})
  set_tests_properties(report.browser.${name} PROPERTIES
    FIXTURES_REQUIRED specd_report_${name} LABELS "report;report-browser" TIMEOUT 120)
endforeach()

# The renderers alone, on a hand-made report with several charts and hostile text.
add_test(NAME report.browser.sample
  COMMAND ${SPECD_NODE_EXECUTABLE} ${SPECD_REPORT_CHECK} --dir ${SPECD_REPORT_TEST_DIR}/inputs/sample
    --screenshot ${SPECD_REPORT_TEST_DIR}/sample.png --min-charts 3 --not-calibrated csd-memory)
set_tests_properties(report.browser.sample PROPERTIES
  FIXTURES_REQUIRED specd_report_inputs LABELS "report;report-browser" TIMEOUT 120)
