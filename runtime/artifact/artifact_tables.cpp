#include "artifact/artifact_tables.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <map>
#include <tuple>

#include "artifact/artifact_schema_sql.h"  // generated from schemas/artifact.sql
#include "util/error.h"

namespace specd {
namespace {

void insert_prompts(sqlite::Database& db, const std::string& policy, std::vector<CalibratedPrompt> prompts) {
  std::sort(prompts.begin(), prompts.end(), [](const auto& a, const auto& b) { return a.index < b.index; });
  sqlite::Statement insert(db,
                           "INSERT INTO prompts (policy, prompt_index, prompt_id, category, prompt_tokens, new_tokens, steps, "
                           "drafted, accepted, rejections) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  for (const CalibratedPrompt& p : prompts) {
    insert.bind(1, policy).bind(2, int64_t{p.index}).bind(3, p.id).bind(4, p.category).bind(5, p.prompt_tokens);
    insert.bind(6, p.new_tokens).bind(7, p.steps).bind(8, p.drafted).bind(9, p.accepted).bind(10, p.rejections);
    insert.run();
  }
}

void insert_pairs(sqlite::Database& db, std::vector<CsdPair> pairs) {
  std::sort(pairs.begin(), pairs.end(), [](const CsdPair& a, const CsdPair& b) {
    return std::tie(a.draft_token, a.target_token) < std::tie(b.draft_token, b.target_token);
  });
  sqlite::Statement insert(db,
                           "INSERT INTO csd_pairs (draft_token, target_token, count, gap_mean, gap_min, gap_p10, gap_median, "
                           "gap_p90, gap_max) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)");
  for (const CsdPair& p : pairs) {
    insert.bind(1, int64_t{p.draft_token}).bind(2, int64_t{p.target_token}).bind(3, p.count).bind(4, p.gap_mean);
    insert.bind(5, p.gap_min).bind(6, p.gap_p10).bind(7, p.gap_median).bind(8, p.gap_p90).bind(9, p.gap_max);
    insert.run();
  }
}

void insert_thresholds(sqlite::Database& db, std::vector<Threshold> thresholds) {
  std::sort(thresholds.begin(), thresholds.end(),
            [](const Threshold& a, const Threshold& b) { return std::tie(a.policy, a.name) < std::tie(b.policy, b.name); });
  sqlite::Statement insert(db, "INSERT INTO thresholds (policy, name, value, source) VALUES (?, ?, ?, ?)");
  for (const Threshold& t : thresholds) {
    insert.bind(1, t.policy).bind(2, t.name).bind(3, t.value).bind(4, t.source);
    insert.run();
  }
}

void insert_arc(sqlite::Database& db, const ArcCalibration& arc) {
  // Rows go in primary-key order (equal contents, equal dumps); `ordinal` keeps the given order.
  std::vector<size_t> order(arc.constants.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return arc.constants[a].bucket < arc.constants[b].bucket; });
  sqlite::Statement constants(db,
                              "INSERT INTO arc_constants (bucket, ordinal, samples, rank, c_s, alpha_kappa, tau_delta) "
                              "VALUES (?, ?, ?, ?, ?, ?, ?)");
  for (size_t i : order) {
    const ArcConstants& c = arc.constants[i];
    constants.bind(1, c.bucket).bind(2, static_cast<int64_t>(i)).bind(3, c.samples).bind(4, c.rank).bind(5, c.c_s);
    constants.bind(6, c.alpha_kappa).bind(7, c.tau_delta);
    constants.run();
  }
  order.resize(arc.audit.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return std::tie(arc.audit[a].group_kind, arc.audit[a].group) < std::tie(arc.audit[b].group_kind, arc.audit[b].group);
  });
  sqlite::Statement audit(db,
                          "INSERT INTO arc_audit (group_kind, group_name, ordinal, samples, covered, coverage, wilson_low, "
                          "wilson_high, cp_low, cp_high) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  for (size_t i : order) {
    const ArcAuditRow& r = arc.audit[i];
    audit.bind(1, r.group_kind).bind(2, r.group).bind(3, static_cast<int64_t>(i)).bind(4, r.samples).bind(5, r.covered);
    audit.bind(6, r.coverage).bind(7, r.wilson_low).bind(8, r.wilson_high).bind(9, r.cp_low).bind(10, r.cp_high);
    audit.run();
  }
  sqlite::Statement gate(db,
                         "INSERT INTO arc_gate (theta, prompts, sites, relaxed, relaxed_argmax, misses, risk, risk_high, p_value, valid) "
                         "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  std::vector<ArcGateRow> rows = arc.gate;
  std::sort(rows.begin(), rows.end(), [](const ArcGateRow& a, const ArcGateRow& b) { return a.theta < b.theta; });
  for (const ArcGateRow& r : rows) {
    gate.bind(1, r.theta).bind(2, r.prompts).bind(3, r.sites).bind(4, r.relaxed).bind(5, r.relaxed_argmax).bind(6, r.misses);
    gate.bind(7, r.risk).bind(8, r.risk_high).bind(9, r.p_value).bind(10, int64_t{r.valid ? 1 : 0});
    gate.run();
  }
}

void insert_sweep(sqlite::Database& db, const SweepCalibration& sweep) {
  std::vector<SweepRun> runs = sweep.runs;
  std::sort(runs.begin(), runs.end(), [](const SweepRun& a, const SweepRun& b) { return a.index < b.index; });
  sqlite::Statement run_row(db, "INSERT INTO sweep_runs (family, run_index, point, vals, cost_curve, wall_s) VALUES (?, ?, ?, ?, ?, ?)");
  sqlite::Statement category_row(db,
                                 "INSERT INTO sweep_categories (family, run_index, category, ordinal, prompts, new_tokens, equal_to_ar, "
                                 "mat, acceptance, tokens_per_s, ar_tokens_per_s, speedup, speedup_ci95, decode_speedup, "
                                 "relaxed_per_token, rescued_per_token, nll_per_token, ar_nll_per_token, chrf_vs_ar, nll_increase_mean, "
                                 "nll_increase_sd, chrf_mean, chrf_sd, tv_mean, tv_sd) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  for (const SweepRun& r : runs) {
    run_row.bind(1, sweep.family).bind(2, int64_t{r.index}).bind(3, r.point).bind(4, nlohmann::json(r.values).dump());
    run_row.bind(5, nlohmann::json(r.cost_curve).dump()).bind(6, r.wall_s);
    run_row.run();
    // Primary-key order: by category name; `ordinal` keeps the stored order.
    std::vector<size_t> order(r.stats.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return r.stats[a].category < r.stats[b].category; });
    for (size_t i : order) {
      const SweepStats& s = r.stats[i];
      category_row.bind(1, sweep.family).bind(2, int64_t{r.index}).bind(3, s.category).bind(4, static_cast<int64_t>(i));
      category_row.bind(5, s.prompts).bind(6, s.new_tokens).bind(7, s.equal_to_ar).bind(8, s.mat).bind(9, s.acceptance);
      category_row.bind(10, s.tokens_per_s).bind(11, s.ar_tokens_per_s).bind(12, s.speedup).bind(13, s.speedup_ci95);
      category_row.bind(14, s.decode_speedup).bind(15, s.relaxed_per_token).bind(16, s.rescued_per_token);
      category_row.bind(17, s.nll_per_token).bind(18, s.ar_nll_per_token).bind(19, s.chrf_vs_ar).bind(20, s.nll_increase_mean);
      category_row.bind(21, s.nll_increase_sd).bind(22, s.chrf_mean).bind(23, s.chrf_sd).bind(24, s.tv_mean).bind(25, s.tv_sd);
      category_row.run();
    }
  }
}

int64_t single_integer(sqlite::Database& db, const std::string& sql) {
  sqlite::Statement query(db, sql);
  query.step();
  return query.int64(0);
}

}  // namespace

const char* artifact_schema_sql() { return kArtifactSchemaSql; }

void write_artifact_tables(const std::string& path, const Artifact& artifact) {
  sqlite::Database db(path, sqlite::Database::Mode::ReadWriteCreate);
  sqlite::Transaction transaction(db);
  db.exec(artifact_schema_sql());
  // Policies in primary-key order: "arc" < "csd" < "sam_corpus".
  if (artifact.arc) insert_prompts(db, kArcPolicy, artifact.arc->prompts);
  if (artifact.csd) insert_prompts(db, kCsdPolicy, artifact.csd->prompts);
  if (artifact.sam_corpus) insert_prompts(db, kSamCorpusPolicy, artifact.sam_corpus->prompts);
  if (artifact.arc) insert_arc(db, *artifact.arc);
  if (artifact.csd) insert_pairs(db, artifact.csd->pairs);
  std::vector<const SweepCalibration*> sweeps;
  for (const SweepCalibration& s : artifact.sweeps) sweeps.push_back(&s);
  std::sort(sweeps.begin(), sweeps.end(), [](const auto* a, const auto* b) { return a->family < b->family; });
  for (const SweepCalibration* s : sweeps) insert_sweep(db, *s);
  insert_thresholds(db, artifact.thresholds);
  transaction.commit();
}

ArtifactTables::ArtifactTables(const std::string& path) : path_(path), db_(path, sqlite::Database::Mode::ReadOnly) {
  const int64_t version = single_integer(db_, "PRAGMA user_version");
  if (version == 0)
    input_error(path, single_integer(db_, "SELECT count(*) FROM sqlite_master") == 0 ? "empty database, not a specd artifact"
                                                                                      : "not a specd artifact database (no schema version)");
  if (version < kOldestArtifactVersion || version > kArtifactSqliteVersion)
    input_error(path, "schema version " + std::to_string(version) + ", this specd reads " +
                          readable_versions(kArtifactSqliteVersion));
  version_ = version;
}

namespace {

// One SELECT over a table's columns, each cell read as the type the schema gives it.
class TableRows {
 public:
  TableRows(sqlite::Database& db, const std::string& path, std::string table, std::vector<std::string> columns, const std::string& rest)
      : path_(path), table_(std::move(table)), columns_(std::move(columns)), query_(db, select(table_, columns_, rest)) {}
  sqlite::Statement& query() { return query_; }
  bool step() {
    ++row_;
    return query_.step();
  }
  int64_t integer(int c) { return checked(query_.integer_value(c), c, "an integer"); }
  int32_t id(int c) {  // an index or token id: an int32 >= 0
    const int64_t v = integer(c);
    if (v < 0 || v > std::numeric_limits<int32_t>::max()) bad(c, std::to_string(v) + ", outside 0..2^31-1");
    return static_cast<int32_t>(v);
  }
  double real(int c) { return checked(query_.real_value(c), c, "a number"); }
  std::string text(int c) { return checked(query_.text_value(c), c, "a text"); }

 private:
  static std::string select(const std::string& table, const std::vector<std::string>& columns, const std::string& rest) {
    std::string sql = "SELECT ";
    for (size_t i = 0; i < columns.size(); ++i) sql += (i ? ", " : "") + columns[i];
    return sql + " FROM " + table + " " + rest;
  }
  template <typename T>
  T checked(const std::optional<T>& value, int c, const char* expected) {
    if (!value) bad(c, (query_.is_null(c) ? std::string("NULL") : std::string("of another type")) + ", not " + expected);
    return *value;
  }
  [[noreturn]] void bad(int c, const std::string& what) {
    input_error(path_, table_ + "." + columns_[static_cast<size_t>(c)] + " of row " + std::to_string(row_) + " is " + what);
  }

  const std::string& path_;
  std::string table_;
  std::vector<std::string> columns_;
  sqlite::Statement query_;
  int64_t row_ = 0;
};

}  // namespace

std::vector<ArcConstants> ArtifactTables::arc_constants() {
  if (version_ < 2) return {};  // version 1 has no arc tables
  TableRows rows(db_, path_, "arc_constants", {"bucket", "samples", "rank", "c_s", "alpha_kappa", "tau_delta"}, "ORDER BY ordinal");
  std::vector<ArcConstants> constants;
  while (rows.step()) constants.push_back({rows.text(0), rows.integer(1), rows.integer(2), rows.real(3), rows.real(4), rows.real(5)});
  return constants;
}

std::vector<ArcAuditRow> ArtifactTables::arc_audit() {
  if (version_ < 2) return {};
  TableRows rows(db_, path_, "arc_audit",
                 {"group_kind", "group_name", "samples", "covered", "coverage", "wilson_low", "wilson_high", "cp_low", "cp_high"},
                 "ORDER BY ordinal");
  std::vector<ArcAuditRow> audit;
  while (rows.step())
    audit.push_back({rows.text(0), rows.text(1), rows.integer(2), rows.integer(3), rows.real(4), rows.real(5), rows.real(6), rows.real(7),
                     rows.real(8)});
  return audit;
}

std::vector<ArcGateRow> ArtifactTables::arc_gate() {
  if (version_ < 4) return {};  // version 4 added the gate
  TableRows rows(db_, path_, "arc_gate",
                 {"theta", "prompts", "sites", "relaxed", "relaxed_argmax", "misses", "risk", "risk_high", "p_value", "valid"},
                 "ORDER BY theta DESC");
  std::vector<ArcGateRow> gate;
  while (rows.step())
    gate.push_back({rows.real(0), rows.integer(1), rows.integer(2), rows.integer(3), rows.integer(4), rows.integer(5), rows.real(6),
                    rows.real(7), rows.real(8), rows.integer(9) == 1});
  return gate;
}

std::vector<CalibratedPrompt> ArtifactTables::prompts(const std::string& policy) {
  TableRows rows(db_, path_, "prompts",
                 {"prompt_index", "prompt_id", "category", "prompt_tokens", "new_tokens", "steps", "drafted", "accepted", "rejections"},
                 "WHERE policy = ? ORDER BY prompt_index");
  rows.query().bind(1, policy);
  std::vector<CalibratedPrompt> prompts;
  while (rows.step()) {
    CalibratedPrompt p;
    p.index = rows.id(0);
    p.id = rows.text(1);
    p.category = rows.text(2);
    p.prompt_tokens = rows.integer(3);
    p.new_tokens = rows.integer(4);
    p.steps = rows.integer(5);
    p.drafted = rows.integer(6);
    p.accepted = rows.integer(7);
    p.rejections = rows.integer(8);
    prompts.push_back(std::move(p));
  }
  return prompts;
}

std::vector<CsdPair> ArtifactTables::csd_pairs() {
  TableRows rows(db_, path_, "csd_pairs",
                 {"draft_token", "target_token", "count", "gap_mean", "gap_min", "gap_p10", "gap_median", "gap_p90", "gap_max"},
                 "ORDER BY count DESC, draft_token, target_token");
  std::vector<CsdPair> pairs;
  while (rows.step()) {
    CsdPair p;
    p.draft_token = rows.id(0);
    p.target_token = rows.id(1);
    p.count = rows.integer(2);
    p.gap_mean = rows.real(3);
    p.gap_min = rows.real(4);
    p.gap_p10 = rows.real(5);
    p.gap_median = rows.real(6);
    p.gap_p90 = rows.real(7);
    p.gap_max = rows.real(8);
    pairs.push_back(p);
  }
  return pairs;
}

std::vector<SweepRun> ArtifactTables::sweep_runs(const std::string& family) {
  if (version_ < 3) return {};
  std::vector<SweepRun> runs;
  TableRows rows(db_, path_, "sweep_runs", {"run_index", "point", "vals", "cost_curve", "wall_s"}, "WHERE family = ? ORDER BY run_index");
  rows.query().bind(1, family);
  while (rows.step()) {
    SweepRun r;
    r.index = rows.id(0);
    r.point = rows.text(1);
    const std::string values = rows.text(2), cost_curve = rows.text(3);
    try {
      r.values = nlohmann::json::parse(values).get<std::vector<double>>();
      r.cost_curve = nlohmann::json::parse(cost_curve).get<std::vector<std::pair<int32_t, double>>>();
    } catch (const nlohmann::json::exception&) {
      input_error(path_, "sweep_runs " + family + " run " + std::to_string(r.index) + ": vals or cost_curve is not the JSON expected");
    }
    r.wall_s = rows.real(4);
    runs.push_back(std::move(r));
  }
  TableRows categories(db_, path_, "sweep_categories",
                       {"run_index", "category", "prompts", "new_tokens", "equal_to_ar", "mat", "acceptance", "tokens_per_s",
                        "ar_tokens_per_s", "speedup", "speedup_ci95", "decode_speedup", "relaxed_per_token", "rescued_per_token",
                        "nll_per_token", "ar_nll_per_token", "chrf_vs_ar",
                        // version 3 lacks the per-prompt columns: read as 0
                        version_ >= 4 ? "nll_increase_mean" : "0.0", version_ >= 4 ? "nll_increase_sd" : "0.0",
                        version_ >= 4 ? "chrf_mean" : "0.0", version_ >= 4 ? "chrf_sd" : "0.0",
                        // version 4 lacks the per-prompt TV columns: read as 0
                        version_ >= 5 ? "tv_mean" : "0.0", version_ >= 5 ? "tv_sd" : "0.0"},
                       "WHERE family = ? ORDER BY run_index, ordinal");
  categories.query().bind(1, family);
  std::map<int64_t, SweepRun*> by_index;
  for (SweepRun& r : runs) by_index[r.index] = &r;
  while (categories.step()) {
    const int64_t index = categories.integer(0);
    auto it = by_index.find(index);
    if (it == by_index.end()) input_error(path_, "sweep_categories of " + family + " run " + std::to_string(index) + ", which sweep_runs lacks");
    SweepStats s;
    s.category = categories.text(1);
    s.prompts = categories.integer(2), s.new_tokens = categories.integer(3), s.equal_to_ar = categories.integer(4);
    s.mat = categories.real(5), s.acceptance = categories.real(6), s.tokens_per_s = categories.real(7);
    s.ar_tokens_per_s = categories.real(8), s.speedup = categories.real(9), s.speedup_ci95 = categories.real(10);
    s.decode_speedup = categories.real(11), s.relaxed_per_token = categories.real(12), s.rescued_per_token = categories.real(13);
    s.nll_per_token = categories.real(14), s.ar_nll_per_token = categories.real(15), s.chrf_vs_ar = categories.real(16);
    s.nll_increase_mean = categories.real(17), s.nll_increase_sd = categories.real(18), s.chrf_mean = categories.real(19);
    s.chrf_sd = categories.real(20), s.tv_mean = categories.real(21), s.tv_sd = categories.real(22);
    it->second->stats.push_back(std::move(s));
  }
  return runs;
}

std::vector<std::string> ArtifactTables::sweep_families() {
  if (version_ < 3) return {};
  TableRows rows(db_, path_, "sweep_runs", {"DISTINCT family"}, "ORDER BY family");
  std::vector<std::string> families;
  while (rows.step()) families.push_back(rows.text(0));
  return families;
}

std::vector<Threshold> ArtifactTables::thresholds() {
  TableRows rows(db_, path_, "thresholds", {"policy", "name", "value", "source"}, "ORDER BY policy, name");
  std::vector<Threshold> thresholds;
  while (rows.step()) thresholds.push_back({rows.text(0), rows.text(1), rows.real(2), rows.text(3)});
  return thresholds;
}

std::vector<std::string> ArtifactTables::policies() {
  TableRows rows(db_, path_, "prompts", {"DISTINCT policy"}, "ORDER BY policy");
  std::vector<std::string> policies;
  while (rows.step()) policies.push_back(rows.text(0));
  return policies;
}

std::vector<std::string> ArtifactTables::integrity_problems(bool full) {
  sqlite::Statement query(db_, full ? "PRAGMA integrity_check" : "PRAGMA quick_check");
  std::vector<std::string> lines;
  while (query.step())
    if (query.text(0) != "ok") lines.push_back("integrity check: " + query.text(0));
  return lines;
}

std::vector<std::string> ArtifactTables::schema_problems() {
  // The expected shape comes from the compiled-in DDL, applied to an in-memory database.
  sqlite::Database expected(":memory:", sqlite::Database::Mode::ReadWriteCreate);
  expected.exec(artifact_schema_sql());
  auto columns = [](sqlite::Database& db) {
    std::map<std::string, std::vector<std::string>> tables;
    sqlite::Statement query(db,
                            "SELECT m.name, p.name, p.type, p.pk FROM sqlite_master m, pragma_table_info(m.name) p "
                            "WHERE m.type = 'table' ORDER BY m.name, p.cid");
    while (query.step())
      tables[query.text(0)].push_back(query.text(1) + " " + query.text(2) + (query.int64(3) ? " key" : ""));
    return tables;
  };
  auto want = columns(expected);
  const auto drop_columns = [&](const std::string& table, std::initializer_list<const char*> names) {
    std::vector<std::string>& kept = want[table];
    kept.erase(std::remove_if(kept.begin(), kept.end(),
                              [&](const std::string& c) {
                                for (const char* name : names)
                                  if (c.rfind(std::string(name) + " ", 0) == 0) return true;
                                return false;
                              }),
               kept.end());
  };
  if (version_ < 5) drop_columns("sweep_categories", {"tv_mean", "tv_sd"});  // version 4: the same without the per-prompt TV
  if (version_ < 4) {  // version 3: the same tables without the gate's and the sweeps' per-prompt columns
    want.erase("arc_gate");
    drop_columns("sweep_categories", {"nll_increase_mean", "nll_increase_sd", "chrf_mean", "chrf_sd"});
  }
  if (version_ < 3) {  // version 2: the same tables without the sweeps'
    want.erase("sweep_runs");
    want.erase("sweep_categories");
  }
  if (version_ < 2) {  // version 1: the same tables without ARC's
    want.erase("arc_constants");
    want.erase("arc_audit");
  }
  const auto have = columns(db_);
  std::vector<std::string> lines;
  for (const auto& [table, want_columns] : want) {
    auto it = have.find(table);
    if (it == have.end()) lines.push_back("table " + table + " is missing");
    else if (it->second != want_columns) lines.push_back("table " + table + " has other columns than schemas/artifact.sql");
  }
  for (const auto& [table, unused] : have)
    if (!want.count(table)) lines.push_back("unexpected table " + table);
  return lines;
}

}  // namespace specd
