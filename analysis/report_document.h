#pragma once
// A report as data: sections of headings, paragraphs, tables and charts. render_html makes one
// self-contained page (the charts are Vega-Lite specifications drawn in the page by the inlined
// vega libraries; no network access), render_markdown its twin with the same tables and numbers.
// Section builders (sections.h) fill it from the artifact and traces alone.
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

namespace specd::report {

struct Column {
  std::string field;  // key in the rows' JSON objects
  std::string title;  // header, with units: "coverage (%)", "speed (tokens/s)"
  int decimals = -1;  // numbers: digits after the point; -1: integers as integers, others as %.4g
};

// A table's rows are JSON objects keyed by the columns' fields, so a chart drawn from a table
// reads the very numbers the table shows. A missing or null cell shows as "–".
struct Table {
  std::string caption;
  std::vector<Column> columns;
  nlohmann::json rows = nlohmann::json::array();
};

// A Vega-Lite specification without "data": the renderer sets data.values to table.rows. Every
// chart has a title, axis titles with units, and its numbers in the table beside it.
struct Chart {
  std::string title;
  nlohmann::json spec;
  Table table;
};

struct Heading {  // a subsection
  std::string text;
};

enum class Tone { Plain, Flag, NotCalibrated };
// Flag: a line the reader must not miss (a DRIFT, coverage below 1 - delta); NotCalibrated: the
// artifact holds no data for this part ("not calibrated: run specd calibrate arc ...").
struct Paragraph {
  std::string text;
  Tone tone = Tone::Plain;
};

using Block = std::variant<Heading, Paragraph, Table, Chart>;

struct Section {
  std::string id;  // HTML anchor: provenance, arc-coverage, csd-memory, sweeps, deployment, drift, what-if
  std::string title;
  std::vector<Block> blocks;
};

struct Report {
  std::string title;
  std::vector<std::string> sources;  // one line per input: "artifact artifacts/demo-pair", "traces F (3 runs)"
  std::vector<Section> sections;
};

// The text of one cell, shared by both renderers so their numbers are equal.
std::string format_cell(const nlohmann::json& value, const Column& column);

std::string render_html(const Report& report);
std::string render_markdown(const Report& report);

}  // namespace specd::report
