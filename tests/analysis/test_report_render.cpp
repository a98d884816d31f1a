// The report renderers: cell texts, escaping, and report.md's tables equal to report.html's, cell
// for cell, read back from both outputs by small parsers of their own (not the renderers' code).
#include <catch2/catch.hpp>

#include <regex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/chart_scripts.h"
#include "analysis/report_document.h"
#include "report_samples.h"

namespace specd::report {
namespace {

using nlohmann::json;

struct ParsedTable {
  std::string caption;
  std::vector<std::vector<std::string>> rows;  // the header first
};

std::string html_unescape(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '&') {
      out += s[i];
      continue;
    }
    const size_t end = s.find(';', i);
    const std::string entity = s.substr(i, end - i + 1);
    if (entity == "&amp;") out += '&';
    else if (entity == "&lt;") out += '<';
    else if (entity == "&gt;") out += '>';
    else if (entity == "&quot;") out += '"';
    else if (entity == "&#39;") out += '\'';
    else FAIL("unknown entity " << entity);
    i = end;
  }
  return out;
}

// Every <table> of the page in order; the renderer puts no markup inside cells.
std::vector<ParsedTable> html_tables(const std::string& html) {
  std::vector<ParsedTable> tables;
  const std::regex table_re("<table>([\\s\\S]*?)</table>"), caption_re("<caption>([\\s\\S]*?)</caption>"),
      row_re("<tr>([\\s\\S]*?)</tr>"), cell_re("<t[hd][^>]*>([\\s\\S]*?)</t[hd]>");
  for (std::sregex_iterator t(html.begin(), html.end(), table_re), end; t != end; ++t) {
    ParsedTable parsed;
    const std::string body = (*t)[1];
    std::smatch caption;
    if (std::regex_search(body, caption, caption_re)) parsed.caption = html_unescape(caption[1]);
    for (std::sregex_iterator r(body.begin(), body.end(), row_re); r != end; ++r) {
      const std::string row = (*r)[1];
      std::vector<std::string> cells;
      for (std::sregex_iterator c(row.begin(), row.end(), cell_re); c != end; ++c) cells.push_back(html_unescape((*c)[1]));
      parsed.rows.push_back(cells);
    }
    tables.push_back(parsed);
  }
  return tables;
}

// A pipe-table row: split at unescaped '|', each cell trimmed, backslash escapes undone.
std::vector<std::string> md_cells(const std::string& line) {
  std::vector<std::string> cells;
  std::string cell;
  bool started = false;
  for (size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '\\' && i + 1 < line.size()) {
      cell += line[++i];
    } else if (line[i] == '|') {
      if (started) cells.push_back(cell.substr(cell.find_first_not_of(' ') == std::string::npos ? 0 : cell.find_first_not_of(' ')));
      started = true;
      cell.clear();
    } else {
      cell += line[i];
    }
  }
  for (std::string& c : cells) c.erase(c.find_last_not_of(' ') + 1);
  return cells;
}

std::vector<ParsedTable> md_tables(const std::string& md) {
  std::vector<ParsedTable> tables;
  std::vector<std::string> lines;
  for (size_t start = 0; start < md.size();) {
    size_t end = md.find('\n', start);
    if (end == std::string::npos) end = md.size();
    lines.push_back(md.substr(start, end - start));
    start = end + 1;
  }
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].empty() || lines[i][0] != '|' || (i > 0 && !lines[i - 1].empty() && lines[i - 1][0] == '|')) continue;
    ParsedTable t;
    // The caption is the bold line and blank line just above, when there is one.
    if (i >= 2 && lines[i - 1].empty() && lines[i - 2].size() > 4 && lines[i - 2].rfind("**", 0) == 0)
      t.caption = md_cells("|" + lines[i - 2].substr(2, lines[i - 2].size() - 4) + "|").at(0);
    for (size_t j = i; j < lines.size() && !lines[j].empty() && lines[j][0] == '|'; ++j)
      if (j != i + 1) t.rows.push_back(md_cells(lines[j]));  // j == i + 1: the alignment row
    tables.push_back(t);
  }
  return tables;
}

}  // namespace

TEST_CASE("report cells: decimals per column, integers as integers, missing as a dash", "[report][render]") {
  const Column whole{"v", "v", -1}, two{"v", "v", 2}, none{"v", "v", 0};
  CHECK(format_cell(json(42), whole) == "42");
  CHECK(format_cell(json(-7), whole) == "-7");
  CHECK(format_cell(json(18446744073709551557ULL), whole) == "18446744073709551557");
  CHECK(format_cell(json(42), two) == "42.00");
  CHECK(format_cell(json(3.14159), two) == "3.14");
  CHECK(format_cell(json(2.675), none) == "3");
  CHECK(format_cell(json(0.123456), whole) == "0.1235");
  CHECK(format_cell(json(123456.7), whole) == "1.235e+05");
  CHECK(format_cell(json(-0.001), two) == "0.00");  // no "-0.00"
  CHECK(format_cell(json(-0.5), two) == "-0.50");
  CHECK(format_cell(json(nullptr), two) == "\u2013");
  CHECK(format_cell(json(std::nan("")), two) == "\u2013");
  CHECK(format_cell(json(std::numeric_limits<double>::infinity()), two) == "\u221e");
  CHECK(format_cell(json(true), whole) == "yes");
  CHECK(format_cell(json("a\nb\tc"), whole) == "a b c");
  CHECK(format_cell(json("x | <y> & z"), whole) == "x | <y> & z");
}

TEST_CASE("report HTML: one self-contained page, text escaped, charts drawn from their tables", "[report][render]") {
  const Report r = test::sample_report();
  const std::string html = render_html(r);
  // Every script element is closed once: no data ended one early.
  size_t opened = 0, closed = 0;
  for (size_t p = html.find("<script"); p != std::string::npos; p = html.find("<script", p + 1)) ++opened;
  for (size_t p = html.find("</script"); p != std::string::npos; p = html.find("</script", p + 1)) ++closed;
  CHECK(opened == 3 + 3);  // vega, vega-lite, the drawing code; one spec per chart
  CHECK(closed == opened);
  CHECK(html.find("<b>x</b>") == std::string::npos);
  CHECK(html.find("&lt;/script&gt;&lt;b&gt;x&lt;/b&gt;") != std::string::npos);
  CHECK(html.find("<title>sample report &lt;&amp;&gt; | renderer test</title>") != std::string::npos);
  // No address to load anything from: no src or href but the page's own anchors.
  CHECK(!std::regex_search(html, std::regex("(src|href)=\"(?!#)")));
  CHECK(html.find(std::string(vega_script().substr(0, 200))) != std::string::npos);
  CHECK(html.find(std::string(vega_lite_script().substr(vega_lite_script().size() - 200))) != std::string::npos);
  for (const char* id : {"provenance", "arc-coverage", "csd-memory", "sweeps", "deployment", "drift", "what-if"})
    CHECK(html.find("<section id=\"" + std::string(id) + "\">") != std::string::npos);
  CHECK(html.find("<p class=\"flag\"") != std::string::npos);
  CHECK(html.find("<p class=\"not-calibrated\">not calibrated: run specd calibrate csd --out DIR</p>") != std::string::npos);

  // Each chart's spec is its own, with data.values = its table's rows and its title.
  std::vector<const Chart*> charts;
  for (const Section& s : r.sections)
    for (const Block& b : s.blocks)
      if (const auto* c = std::get_if<Chart>(&b)) charts.push_back(c);
  const std::regex spec_re("<script type=\"application/json\" class=\"vega-lite-spec\">([^<]*)</script>");
  size_t i = 0;
  for (std::sregex_iterator m(html.begin(), html.end(), spec_re), end; m != end; ++m, ++i) {
    REQUIRE(i < charts.size());
    const json spec = json::parse((*m)[1].str());
    CHECK(spec["data"]["values"] == charts[i]->table.rows);
    CHECK(spec["title"] == charts[i]->title);
    json rest = spec;
    rest.erase("data");
    rest.erase("title");
    CHECK(rest == charts[i]->spec);
  }
  CHECK(i == charts.size());
}

TEST_CASE("report Markdown: the same tables as the HTML, cell for cell", "[report][render]") {
  const Report r = test::sample_report();
  const std::vector<ParsedTable> html = html_tables(render_html(r)), md = md_tables(render_markdown(r));
  REQUIRE(html.size() == 5);  // two tables and three charts' tables
  REQUIRE(md.size() == html.size());
  for (size_t t = 0; t < html.size(); ++t) {
    INFO("table " << t);
    CHECK(md[t].caption == html[t].caption);
    CHECK(md[t].rows == html[t].rows);
  }
  // And the texts are format_cell's: the coverage chart's table, row 3, the hostile category.
  CHECK(html[1].rows[4][0] == "</script><b>x</b>");
  CHECK(html[1].rows[5][0] == "a|b");
  CHECK(html[1].rows[1][1] == "80.0");
  CHECK(html[3].rows[3] == std::vector<std::string>{"pld", "\u2013", "\u2013", "1.235e+05"});
  CHECK(html[0].rows[5] == std::vector<std::string>{"missing", "\u2013"});
}

TEST_CASE("report Markdown: escaping keeps text text", "[report][render]") {
  const std::string md = render_markdown(test::sample_report());
  CHECK(md.find("# sample report \\<&\\> \\| renderer test\n") == 0);
  // Inside a table cell "#" and "1." open no block: they stay as typed (so do negative numbers).
  CHECK(md.find("| # not a heading | 1. not a list |") != std::string::npos);
  CHECK(md.find("| backslash \\\\ and \\`code\\` | \\[link\\](x) \\_em\\_ \\~\\~s\\~\\~ |") != std::string::npos);
  CHECK(md.find("sam_corpus") != std::string::npos);  // word-inner underscores stay
  CHECK(md.find("> \u26a0 **DRIFT: acceptance 0.41 at deploy vs 0.62 calibrated**") != std::string::npos);
  CHECK(md.find("_not calibrated: run specd calibrate csd --out DIR_") != std::string::npos);
  CHECK(md.find("#### Chart: Pareto curve of the memory") != std::string::npos);
  CHECK(md.find("report.html") != std::string::npos);
}

}  // namespace specd::report
