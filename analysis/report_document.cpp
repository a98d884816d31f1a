// The two renderers of a Report. Both print every cell through format_cell, so report.md shows
// exactly the texts of report.html's tables (tests/report/check_report.js compares them), and
// every chart is drawn from its own table's rows.
#include "analysis/report_document.h"

#include <cctype>
#include <cmath>
#include <cstdio>

#include "analysis/chart_scripts.h"
#include "util/format.h"

namespace specd::report {

namespace {

using nlohmann::json;

constexpr const char* kMissing = "\u2013";  // en dash

// ---- cells ----

// "-0.00" reads as a sign the value does not have.
std::string without_negative_zero(std::string s) {
  if (s.size() > 1 && s[0] == '-' && s.find_first_not_of("0.", 1) == std::string::npos) s.erase(0, 1);
  return s;
}

std::string format_number(double v, int decimals) {
  if (std::isnan(v)) return kMissing;
  if (std::isinf(v)) return v > 0 ? "\u221e" : "-\u221e";
  return without_negative_zero(decimals >= 0 ? strprintf("%.*f", decimals, v) : strprintf("%.4g", v));
}

// Tabs and line breaks would break a Markdown row: one space, in both renderers.
std::string one_line(const std::string& s) {
  std::string out = s;
  for (char& c : out)
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  return out;
}

bool is_number_column(const Table& table, const Column& column) {
  bool any = false;
  for (const json& row : table.rows) {
    if (!row.is_object()) continue;
    const auto it = row.find(column.field);
    if (it == row.end() || it->is_null()) continue;
    if (!it->is_number()) return false;
    any = true;
  }
  return any;
}

const json& cell_value(const json& row, const std::string& field) {
  static const json null_value;
  if (!row.is_object()) return null_value;
  const auto it = row.find(field);
  return it == row.end() ? null_value : *it;
}

// ---- HTML ----

std::string html_escape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

// JSON inside <script type="application/json">: '<', '>' and '&' occur only inside JSON strings,
// where \u escapes mean the same, so no "</script>" or "<!--" can end or bend the element.
std::string script_json(const json& value) {
  const std::string text = value.dump(-1, ' ', false, json::error_handler_t::replace);
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '<': out += "\\u003c"; break;
      case '>': out += "\\u003e"; break;
      case '&': out += "\\u0026"; break;
      default: out += c;
    }
  }
  return out;
}

// A library inlined into <script>: "</script" may only occur inside its strings, regular
// expressions or comments, where "<\/script" means the same.
std::string script_text(std::string_view code) {
  std::string out;
  out.reserve(code.size());
  for (size_t i = 0; i < code.size(); ++i) {
    if (code[i] == '<' && i + 8 <= code.size() && code[i + 1] == '/') {
      std::string word(code.substr(i + 2, 6));
      for (char& c : word) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      if (word == "script") {
        out += "<\\/";
        ++i;
        continue;
      }
    }
    out += code[i];
  }
  return out;
}

const char* kStyle = R"css(
:root { --ink: #1b1f24; --muted: #656d76; --line: #d0d7de; --flag: #b42318; --flag-bg: #fef3f2; }
* { box-sizing: border-box; }
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink);
       max-width: 1280px; margin: 0 auto; padding: 1rem 2rem 4rem; }
h1 { font-size: 1.6rem; margin: .5rem 0 1rem; }
h2 { font-size: 1.3rem; border-bottom: 1px solid var(--line); padding-bottom: .25rem; margin-top: 2.5rem; }
h3 { font-size: 1.05rem; margin: 1.5rem 0 .5rem; }
.meta { color: var(--muted); font-size: .9rem; }
.meta ul, nav ol { margin: .25rem 0; }
nav { border: 1px solid var(--line); border-radius: 6px; padding: .5rem 1rem; display: inline-block; }
nav h2 { border: none; margin: 0; font-size: 1rem; }
p.flag { color: var(--flag); background: var(--flag-bg); border: 1px solid var(--flag);
         border-left-width: 6px; border-radius: 4px; padding: .4rem .7rem; font-weight: 600; }
p.flag .mark { margin-right: .4rem; }
p.not-calibrated { color: var(--muted); font-style: italic; }
.table-wrap { overflow-x: auto; max-width: 100%; }
table { border-collapse: collapse; margin: .5rem 0 1rem; font-size: .88rem; }
caption { caption-side: top; text-align: left; font-weight: 600; padding: .2rem 0; }
th, td { border: 1px solid var(--line); padding: .2rem .5rem; vertical-align: top; }
th { background: #f6f8fa; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
figure.chart { margin: 1rem 0; display: flex; flex-wrap: wrap; gap: 1rem 2rem; align-items: flex-start; }
figure.chart .vega { min-width: 300px; }
.chart-error { color: var(--flag); }
footer { margin-top: 3rem; color: var(--muted); font-size: .85rem; }
)css";

// Draws every figure's Vega-Lite spec as SVG; window.specdCharts settles when all are drawn
// (the browser test waits on it). A chart that fails says so in place and on the console.
const char* kDrawCharts = R"js(
window.specdCharts = Promise.all(Array.from(document.querySelectorAll('figure.chart')).map(function (figure) {
  var target = figure.querySelector('.vega');
  try {
    var spec = JSON.parse(figure.querySelector('script.vega-lite-spec').textContent);
    var view = new vega.View(vega.parse(vegaLite.compile(spec).spec), {
      renderer: 'svg', container: target, hover: true, logLevel: vega.Warn });
    return view.runAsync().catch(function (e) { fail(target, e); });
  } catch (e) {
    fail(target, e);
    return Promise.resolve();
  }
}));
function fail(target, e) {
  console.error('chart failed: ' + e);
  var p = document.createElement('p');
  p.className = 'chart-error';
  p.textContent = 'chart failed: ' + e;
  target.appendChild(p);
}
)js";

void html_table(std::string& out, const Table& table) {
  out += "<div class=\"table-wrap\"><table>";
  if (!table.caption.empty()) out += "<caption>" + html_escape(table.caption) + "</caption>";
  out += "<thead><tr>";
  for (const Column& c : table.columns) out += "<th>" + html_escape(one_line(c.title)) + "</th>";
  out += "</tr></thead><tbody>\n";
  std::vector<bool> numeric;
  for (const Column& c : table.columns) numeric.push_back(is_number_column(table, c));
  for (const json& row : table.rows) {
    out += "<tr>";
    for (size_t i = 0; i < table.columns.size(); ++i) {
      const Column& c = table.columns[i];
      out += numeric[i] ? "<td class=\"num\">" : "<td>";
      out += html_escape(format_cell(cell_value(row, c.field), c)) + "</td>";
    }
    out += "</tr>\n";
  }
  out += "</tbody></table></div>\n";
}

// The spec as drawn: the table's rows as its data, and the chart's title unless the spec has one.
json chart_spec(const Chart& chart) {
  json spec = chart.spec.is_object() ? chart.spec : json::object();
  spec["data"] = {{"values", chart.table.rows}};
  if (!spec.contains("title")) spec["title"] = chart.title;
  return spec;
}

void html_block(std::string& out, const Block& block, int& chart_index) {
  if (const auto* h = std::get_if<Heading>(&block)) {
    out += "<h3>" + html_escape(h->text) + "</h3>\n";
  } else if (const auto* p = std::get_if<Paragraph>(&block)) {
    switch (p->tone) {
      case Tone::Plain: out += "<p>" + html_escape(p->text) + "</p>\n"; break;
      case Tone::Flag:
        out += "<p class=\"flag\" role=\"alert\"><span class=\"mark\">\u26a0</span>" + html_escape(p->text) + "</p>\n";
        break;
      case Tone::NotCalibrated: out += "<p class=\"not-calibrated\">" + html_escape(p->text) + "</p>\n"; break;
    }
  } else if (const auto* t = std::get_if<Table>(&block)) {
    html_table(out, *t);
  } else if (const auto* c = std::get_if<Chart>(&block)) {
    const std::string id = "chart-" + std::to_string(++chart_index);
    out += "<figure class=\"chart\" id=\"" + id + "\">\n<div class=\"vega\" data-title=\"" +
           html_escape(c->title) + "\"></div>\n";
    html_table(out, c->table);
    out += "<script type=\"application/json\" class=\"vega-lite-spec\">" + script_json(chart_spec(*c)) +
           "</script>\n</figure>\n";
  }
}

// ---- Markdown ----

bool is_alnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }

// Inline text with every character that could start markup backslash-escaped (CommonMark allows
// escaping any ASCII punctuation), '|' included so that a cell cannot split its row. Word-inner
// underscores stay as they are: they never make emphasis, and sam_corpus reads better.
// at_line_start: the text may begin a Markdown line, where "#", "-", "1." open blocks; inside a
// table cell they do not, and numbers stay as typed.
std::string md_escape(const std::string& raw, bool at_line_start = true) {
  const std::string s = one_line(raw);
  std::string out;
  out.reserve(s.size() + 8);
  size_t start = s.find_first_not_of(' ');
  if (start == std::string::npos) return "";
  size_t end = s.find_last_not_of(' ') + 1;
  for (size_t i = start; i < end; ++i) {
    const char c = s[i];
    const bool first = at_line_start && i == start;
    bool escape = false;
    switch (c) {
      case '\\': case '`': case '*': case '[': case ']': case '<': case '>': case '|': case '~':
        escape = true;
        break;
      case '_': escape = !(i > start && i + 1 < end && is_alnum(s[i - 1]) && is_alnum(s[i + 1])); break;
      case '&': escape = i + 1 < end && (is_alnum(s[i + 1]) || s[i + 1] == '#'); break;
      case '#': case '-': case '+': case '=': escape = first; break;
      case '.': case ')': {  // "1." or "1)" at the start opens a list
        size_t j = start;
        while (j < i && std::isdigit(static_cast<unsigned char>(s[j]))) ++j;
        escape = at_line_start && j == i && i > start;
        break;
      }
      default: break;
    }
    if (escape) out += '\\';
    out += c;
  }
  return out;
}

void md_table(std::string& out, const Table& table) {
  if (!table.caption.empty()) out += "**" + md_escape(table.caption) + "**\n\n";
  if (table.columns.empty()) return;
  out += "|";
  for (const Column& c : table.columns) out += " " + md_escape(c.title, false) + " |";
  out += "\n|";
  for (const Column& c : table.columns) out += is_number_column(table, c) ? " ---: |" : " --- |";
  out += "\n";
  for (const json& row : table.rows) {
    out += "|";
    for (const Column& c : table.columns) out += " " + md_escape(format_cell(cell_value(row, c.field), c), false) + " |";
    out += "\n";
  }
  out += "\n";
}

void md_block(std::string& out, const Block& block) {
  if (const auto* h = std::get_if<Heading>(&block)) {
    out += "### " + md_escape(h->text) + "\n\n";
  } else if (const auto* p = std::get_if<Paragraph>(&block)) {
    const std::string text = md_escape(p->text);
    if (text.empty()) return;
    switch (p->tone) {
      case Tone::Plain: out += text + "\n\n"; break;
      case Tone::Flag: out += "> \u26a0 **" + text + "**\n\n"; break;
      case Tone::NotCalibrated: out += "_" + text + "_\n\n"; break;
    }
  } else if (const auto* t = std::get_if<Table>(&block)) {
    md_table(out, *t);
  } else if (const auto* c = std::get_if<Chart>(&block)) {
    out += "#### Chart: " + md_escape(c->title) + "\n\n(The chart is drawn in report.html; its numbers:)\n\n";
    md_table(out, c->table);
  }
}

}  // namespace

std::string format_cell(const json& value, const Column& column) {
  switch (value.type()) {
    case json::value_t::null: return kMissing;
    case json::value_t::boolean: return value.get<bool>() ? "yes" : "no";
    case json::value_t::number_integer:
      if (column.decimals < 0) return std::to_string(value.get<int64_t>());
      return format_number(value.get<double>(), column.decimals);
    case json::value_t::number_unsigned:
      if (column.decimals < 0) return std::to_string(value.get<uint64_t>());
      return format_number(value.get<double>(), column.decimals);
    case json::value_t::number_float: return format_number(value.get<double>(), column.decimals);
    case json::value_t::string: return one_line(value.get<std::string>());
    default: return one_line(value.dump(-1, ' ', false, json::error_handler_t::replace));
  }
}

std::string render_html(const Report& report) {
  std::string out;
  out.reserve(vega_script().size() + vega_lite_script().size() + (1 << 16));
  out += "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  // Nothing may leave the page: scripts and styles are inline, and nothing else loads.
  out += "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; script-src 'unsafe-inline' "
         "'unsafe-eval'; style-src 'unsafe-inline'; img-src data:\">\n";
  out += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  out += "<title>" + html_escape(report.title) + "</title>\n<style>" + std::string(kStyle) + "</style>\n</head>\n<body>\n";
  out += "<h1>" + html_escape(report.title) + "</h1>\n";
  out += "<div class=\"meta\"><p>Sources:</p><ul id=\"sources\">\n";
  for (const std::string& s : report.sources) out += "<li>" + html_escape(s) + "</li>\n";
  out += "</ul></div>\n<nav id=\"contents\"><h2>Contents</h2><ol>\n";
  for (const Section& s : report.sections)
    out += "<li><a href=\"#" + html_escape(s.id) + "\">" + html_escape(s.title) + "</a></li>\n";
  out += "</ol></nav>\n";
  int chart_index = 0;
  for (const Section& s : report.sections) {
    out += "<section id=\"" + html_escape(s.id) + "\">\n<h2>" + html_escape(s.title) + "</h2>\n";
    for (const Block& b : s.blocks) html_block(out, b, chart_index);
    out += "</section>\n";
  }
  out += "<footer>Charts drawn in this page by Vega " + std::string(vega_version()) + " and Vega-Lite " +
         std::string(vega_lite_version()) + " (inlined; no network access). report.md holds the same tables.</footer>\n";
  out += "<script>" + script_text(vega_script()) + "</script>\n";
  out += "<script>" + script_text(vega_lite_script()) + "</script>\n";
  out += "<script>" + std::string(kDrawCharts) + "</script>\n</body>\n</html>\n";
  return out;
}

std::string render_markdown(const Report& report) {
  std::string out = "# " + md_escape(report.title) + "\n\nSources:\n\n";
  for (const std::string& s : report.sources) out += "- " + md_escape(s) + "\n";
  out += "\nContents:\n\n";
  for (size_t i = 0; i < report.sections.size(); ++i)
    out += std::to_string(i + 1) + ". " + md_escape(report.sections[i].title) + "\n";
  out += "\nThe charts are drawn in report.html; here each chart is its table.\n\n";
  for (const Section& s : report.sections) {
    out += "## " + md_escape(s.title) + "\n\n";
    for (const Block& b : s.blocks) md_block(out, b);
  }
  return out;
}

}  // namespace specd::report
