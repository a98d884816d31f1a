#pragma once
// A hand-made Report for the renderers' tests: the seven section ids, several kinds of Vega-Lite
// chart (layered points + error bars + a rule, bars, lines), and cells that need escaping in HTML
// and in Markdown ("</script>", pipes, '&', '<', emphasis marks, list and heading starts), missing
// and null cells, and numbers at every decimals setting. tests/analysis/test_report_render.cpp checks
// its rendering in C++, tests/report/check_report.js in a browser.
#include <nlohmann/json.hpp>

#include "analysis/report_document.h"

namespace specd::test {

inline report::Report sample_report() {
  using namespace specd::report;
  using nlohmann::json;
  Report r;
  r.title = "sample report <&> | renderer test";
  r.sources = {"artifact tests/sample & <co>", "traces t.sqlite (3 runs)"};

  Table coverage{"coverage by category (95% Wilson) | held out",
                 {{"category", "category", -1}, {"coverage", "coverage (%)", 1}, {"lo", "lower (%)", 1},
                  {"hi", "upper (%)", 1}, {"n", "samples", -1}, {"target", "1 - delta (%)", 1}},
                 json::array()};
  const char* categories[] = {"code", "qa", "math & logic", "</script><b>x</b>", "a|b"};
  for (int i = 0; i < 5; ++i)
    coverage.rows.push_back({{"category", categories[i]}, {"coverage", 80.0 + i * 3.25}, {"lo", 70.0 + i * 3},
                             {"hi", 88.5 + i * 2}, {"n", 40 + i}, {"target", 90.0}});
  json coverage_spec = {
      {"width", 320},
      {"layer",
       {{{"mark", {{"type", "errorbar"}, {"ticks", true}}},
         {"encoding", {{"x", {{"field", "category"}, {"type", "nominal"}, {"title", "category"}}},
                       {"y", {{"field", "lo"}, {"type", "quantitative"}, {"title", "coverage (%)"}}},
                       {"y2", {{"field", "hi"}}}}}},
        {{"mark", {{"type", "point"}, {"filled", true}}},
         {"encoding", {{"x", {{"field", "category"}, {"type", "nominal"}}},
                       {"y", {{"field", "coverage"}, {"type", "quantitative"}}}}}},
        {{"mark", {{"type", "rule"}, {"color", "firebrick"}}},
         {"encoding", {{"y", {{"field", "target"}, {"type", "quantitative"}}}}}}}}};
  r.sections.push_back({"verdict", "Verdict per deployed policy", {Paragraph{"sd runs at 1.25x AR; csd is *outside* its contract", Tone::Flag}}});
  r.sections.push_back({"provenance", "The pair and its provenance",
                        {Paragraph{"fingerprints *match*; seed 18446744073709551557; sam_corpus & csd"},
                         Table{"manifest",
                               {{"key", "key", -1}, {"value", "value", -1}},
                               json::array({{{"key", "tool_version"}, {"value", "0.1.0"}},
                                             {{"key", "# not a heading"}, {"value", "1. not a list"}},
                                             {{"key", "backslash \\ and `code`"}, {"value", "[link](x) _em_ ~~s~~"}},
                                             {{"key", "verified"}, {"value", true}},
                                             {{"key", "missing"}}})}}});
  r.sections.push_back({"arc-coverage", "ARC coverage",
                        {Heading{"held-out coverage against 1 - delta"},
                         Chart{"coverage per category against 1 - delta", coverage_spec, coverage},
                         Paragraph{"coverage below 1 - delta in 'code': 80.0% < 90.0%", Tone::Flag}}});
  Table pareto{"cumulative share of rejections by pair rank",
               {{"rank", "pair rank", -1}, {"share", "cumulative share (%)", 2}},
               json::array()};
  for (int i = 1; i <= 12; ++i) pareto.rows.push_back({{"rank", i}, {"share", 100.0 * (1.0 - 1.0 / (i + 1))}});
  json line_spec = {{"mark", {{"type", "line"}, {"point", true}}},
                    {"encoding", {{"x", {{"field", "rank"}, {"type", "quantitative"}, {"title", "pair rank"}}},
                                  {"y", {{"field", "share"}, {"type", "quantitative"}, {"title", "cumulative share (%)"}}}}}};
  r.sections.push_back({"csd-memory", "CSD memory",
                        {Chart{"Pareto curve of the memory", line_spec, pareto},
                         Paragraph{"not calibrated: run specd calibrate csd --out DIR", Tone::NotCalibrated}}});
  Table speed{"speed per policy",
              {{"policy", "policy", -1}, {"speed", "speed (tokens/s)", 0}, {"delta", "change (%)", 2}, {"ratio", "ratio", -1}},
              json::array({{{"policy", "ar"}, {"speed", 100.4}, {"delta", -0.001}, {"ratio", 1}},
                            {{"policy", "csd"}, {"speed", 151.5}, {"delta", 51.0}, {"ratio", 1.50892}},
                            {{"policy", "pld"}, {"speed", nullptr}, {"delta", nullptr}, {"ratio", 123456.7}}})};
  json bar_spec = {{"mark", "bar"},
                   {"encoding", {{"x", {{"field", "policy"}, {"type", "nominal"}, {"title", "policy"}}},
                                 {"y", {{"field", "speed"}, {"type", "quantitative"}, {"title", "speed (tokens/s)"}}}}}};
  r.sections.push_back({"sweeps", "Sweeps", {Chart{"speed per policy", bar_spec, speed}}});
  r.sections.push_back({"deployment", "Deployment", {Paragraph{"no deploy traces given", Tone::NotCalibrated}}});
  r.sections.push_back({"drift", "Drift check", {Paragraph{"DRIFT: acceptance 0.41 at deploy vs 0.62 calibrated", Tone::Flag}}});
  r.sections.push_back({"what-if", "What-if", {Table{"", {{"x", "x (nats)", 3}}, json::array({{{"x", 0.5}}, {{"x", -0.0001}}})}}});
  return r;
}

}  // namespace specd::test
