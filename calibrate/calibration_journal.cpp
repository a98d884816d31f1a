#include "calibrate/calibration_journal.h"

#include <filesystem>

#include "io/json_reader.h"
#include "io/sha256.h"
#include "io/sqlite_db.h"
#include "util/error.h"

namespace fs = std::filesystem;

namespace specd {
namespace {

constexpr int kJournalVersion = 1;

// A scratch format read only by the run that wrote it (or its resumption), so its DDL lives here
// rather than in schemas/. Token ids are never negative: the CHECKs refuse a corrupt record whole.
constexpr const char* kJournalSql = R"sql(
CREATE TABLE identity (json TEXT NOT NULL);
CREATE TABLE prompts (
  policy TEXT NOT NULL, prompt_index INTEGER NOT NULL, prompt_id TEXT NOT NULL, category TEXT NOT NULL,
  prompt_tokens INTEGER NOT NULL, new_tokens INTEGER NOT NULL, steps INTEGER NOT NULL, drafted INTEGER NOT NULL,
  accepted INTEGER NOT NULL, rejections INTEGER NOT NULL, wall_ms REAL NOT NULL,
  PRIMARY KEY (policy, prompt_index)
) WITHOUT ROWID;
CREATE TABLE rejections (
  policy TEXT NOT NULL, prompt INTEGER NOT NULL, step INTEGER NOT NULL, depth INTEGER NOT NULL,
  draft_token INTEGER NOT NULL CHECK (draft_token >= 0), target_token INTEGER NOT NULL CHECK (target_token >= 0),
  logit_gap REAL NOT NULL,
  FOREIGN KEY (policy, prompt) REFERENCES prompts (policy, prompt_index)
);
CREATE TABLE documents (
  policy TEXT NOT NULL, prompt_index INTEGER NOT NULL,
  tokens TEXT NOT NULL,  -- JSON array of token ids
  PRIMARY KEY (policy, prompt_index),
  FOREIGN KEY (policy, prompt_index) REFERENCES prompts (policy, prompt_index)
) WITHOUT ROWID;
PRAGMA user_version = 1;
)sql";

// ARC-Decode's samples (ArcSample's fields). Created on every open, so a journal begun before the
// table existed still resumes (the other tables are unchanged).
constexpr const char* kArcSamplesSql = R"sql(
CREATE TABLE IF NOT EXISTS arc_samples (
  policy TEXT NOT NULL, prompt INTEGER NOT NULL, step INTEGER NOT NULL, depth INTEGER NOT NULL, position INTEGER NOT NULL,
  target_token INTEGER NOT NULL CHECK (target_token >= 0), draft_token INTEGER NOT NULL CHECK (draft_token >= 0),
  root_entropy REAL NOT NULL, u_emb_raw REAL NOT NULL, u_logit_raw REAL NOT NULL, js REAL NOT NULL,
  held_out INTEGER NOT NULL CHECK (held_out IN (0, 1)),
  deploy_site INTEGER NOT NULL CHECK (deploy_site IN (0, 1)), relaxed INTEGER NOT NULL CHECK (relaxed IN (0, 1)), theta REAL NOT NULL,
  FOREIGN KEY (policy, prompt) REFERENCES prompts (policy, prompt_index)
);
)sql";

// The runs of a parameter sweep, one JSON record each (sweep_run_record). Created on every open,
// as arc_samples.
constexpr const char* kSweepRunsSql = R"sql(
CREATE TABLE IF NOT EXISTS sweep_runs (run_index INTEGER PRIMARY KEY, record TEXT NOT NULL);
)sql";

// The artifact's manifest (its sha256, empty when absent) as it was just before this run wrote
// the artifact (mark_delivery). Created on every open, as arc_samples.
constexpr const char* kDeliverySql = R"sql(
CREATE TABLE IF NOT EXISTS delivery (manifest_sha256 TEXT NOT NULL);
)sql";

// The machines the runs decoded on (note_machine). Created on every open, as arc_samples.
constexpr const char* kMachinesSql = R"sql(
CREATE TABLE IF NOT EXISTS machines (seen INTEGER PRIMARY KEY, json TEXT NOT NULL UNIQUE);
)sql";

nlohmann::json sweep_run_record(const SweepRun& r) {
  nlohmann::json stats = nlohmann::json::array();
  for (const SweepStats& s : r.stats)
    stats.push_back({s.category, s.prompts, s.new_tokens, s.equal_to_ar, s.mat, s.acceptance, s.tokens_per_s, s.ar_tokens_per_s,
                     s.speedup, s.speedup_ci95, s.decode_speedup, s.relaxed_per_token, s.rescued_per_token, s.nll_per_token,
                     s.ar_nll_per_token, s.chrf_vs_ar, s.nll_increase_mean, s.nll_increase_sd, s.chrf_mean, s.chrf_sd, s.tv_mean, s.tv_sd});
  return {{"index", r.index}, {"values", r.values}, {"point", r.point}, {"stats", stats}, {"cost_curve", r.cost_curve}, {"wall_s", r.wall_s}};
}

SweepRun parse_sweep_run(const nlohmann::json& j) {
  SweepRun r;
  r.index = j.at("index").get<int32_t>();
  r.values = j.at("values").get<std::vector<double>>();
  r.point = j.at("point").get<std::string>();
  r.cost_curve = j.at("cost_curve").get<std::vector<std::pair<int32_t, double>>>();
  r.wall_s = j.at("wall_s").get<double>();
  for (const nlohmann::json& a : j.at("stats")) {
    SweepStats s;
    s.category = a.at(0).get<std::string>();
    s.prompts = a.at(1).get<int64_t>(), s.new_tokens = a.at(2).get<int64_t>(), s.equal_to_ar = a.at(3).get<int64_t>();
    s.mat = a.at(4).get<double>(), s.acceptance = a.at(5).get<double>(), s.tokens_per_s = a.at(6).get<double>();
    s.ar_tokens_per_s = a.at(7).get<double>(), s.speedup = a.at(8).get<double>(), s.speedup_ci95 = a.at(9).get<double>();
    s.decode_speedup = a.at(10).get<double>(), s.relaxed_per_token = a.at(11).get<double>(), s.rescued_per_token = a.at(12).get<double>();
    s.nll_per_token = a.at(13).get<double>(), s.ar_nll_per_token = a.at(14).get<double>(), s.chrf_vs_ar = a.at(15).get<double>();
    s.nll_increase_mean = a.at(16).get<double>(), s.nll_increase_sd = a.at(17).get<double>(), s.chrf_mean = a.at(18).get<double>();
    s.chrf_sd = a.at(19).get<double>(), s.tv_mean = a.at(20).get<double>(), s.tv_sd = a.at(21).get<double>();
    r.stats.push_back(std::move(s));
  }
  return r;
}

std::string manifest_sha256(const std::string& artifact_dir) {
  const std::string manifest = (fs::path(artifact_dir) / kManifestFile).string();
  std::error_code error;
  return fs::exists(manifest, error) ? sha256_file(manifest) : std::string();
}

int64_t single_integer(sqlite::Database& db, const std::string& sql) {
  sqlite::Statement query(db, sql);
  query.step();
  return query.int64(0);
}

// "seed: 7 there, 8 now" for the first field where the stored identity and the new one differ.
std::string describe_difference(const nlohmann::json& stored, const nlohmann::json& given) {
  const nlohmann::json patch = nlohmann::json::diff(stored, given);
  const nlohmann::json::json_pointer pointer(patch[0]["path"].get<std::string>());
  auto value = [&pointer](const nlohmann::json& j) { return j.contains(pointer) ? j.at(pointer).dump() : std::string("absent"); };
  return pointer.to_string().substr(1) + ": " + value(stored) + " there, " + value(given) + " now";
}

}  // namespace

bool CalibrationJournal::holds_work(const std::string& path) {
  std::error_code error;
  if (!fs::exists(path, error)) return false;
  try {
    // ReadExisting: a run killed inside a transaction leaves a hot journal, which only a writable
    // connection rolls back; read-only, the file would look unreadable and be kept as work.
    sqlite::Database db(path, sqlite::Database::Mode::ReadExisting);
    if (single_integer(db, "SELECT count(*) FROM sqlite_master") == 0) return false;  // killed before its first commit
    if (single_integer(db, "PRAGMA user_version") != kJournalVersion) return true;     // not ours to judge: keep it
    int64_t finished = single_integer(db, "SELECT count(*) FROM prompts");
    if (single_integer(db, "SELECT count(*) FROM sqlite_master WHERE name = 'sweep_runs'") > 0)
      finished += single_integer(db, "SELECT count(*) FROM sweep_runs");
    return finished > 0;
  } catch (const std::exception&) {
    return true;  // unreadable: refused below, never deleted
  }
}

bool CalibrationJournal::delivered(const std::string& path, const std::string& artifact_dir) {
  std::error_code error;
  if (artifact_dir.empty() || !fs::exists(path, error)) return false;
  const std::string now = manifest_sha256(artifact_dir);
  if (now.empty()) return false;  // no artifact there: the journal's work is nowhere else
  try {
    sqlite::Database db(path, sqlite::Database::Mode::ReadExisting);  // as holds_work
    if (single_integer(db, "SELECT count(*) FROM sqlite_master WHERE name = 'delivery'") == 0) return false;
    sqlite::Statement query(db, "SELECT manifest_sha256 FROM delivery");
    return query.step() && query.text(0) != now;
  } catch (const std::exception&) {
    return false;
  }
}

CalibrationJournal::CalibrationJournal(const std::string& path, const nlohmann::json& identity, bool resume, const std::string& artifact_dir)
    : path_(path), identity_(identity) {
  std::error_code error;
  bool exists = fs::exists(path_, error);
  // A run refused or killed before it finished a prompt leaves a journal with nothing in it, and a
  // run killed between writing its artifact and deleting the journal leaves one whose work is in
  // the artifact: replacing either loses nothing, and keeping it would block the next run.
  if (exists && (!holds_work(path_) || delivered(path_, artifact_dir))) {
    for (const std::string& file : {path_, path_ + "-journal"}) fs::remove(file, error);
    exists = false;
  }
  if (exists && !resume) input_error(path_, "an interrupted calibration is there: pass --resume or delete it");
  const fs::path parent = fs::path(path_).parent_path();
  if (!parent.empty()) fs::create_directories(parent, error);
  if (error) input_error(path_, "cannot create " + parent.string() + ": " + error.message());
  db_ = std::make_unique<sqlite::Database>(path_, sqlite::Database::Mode::ReadWriteCreate);
  db_->exec("PRAGMA foreign_keys = ON");
  // A run killed between creating the file and committing its first transaction leaves an empty
  // database (SQLite rolls the unfinished transaction back): nothing was recorded, so start it.
  const bool empty = exists && single_integer(*db_, "SELECT count(*) FROM sqlite_master") == 0;
  if (!exists || empty) {
    sqlite::Transaction transaction(*db_);
    db_->exec(kJournalSql);
    db_->exec(kArcSamplesSql);
    db_->exec(kSweepRunsSql);
    db_->exec(kMachinesSql);
    db_->exec(kDeliverySql);
    sqlite::Statement(*db_, "INSERT INTO identity (json) VALUES (?)").bind(1, identity_.dump()).run();
    transaction.commit();
    return;
  }
  if (single_integer(*db_, "PRAGMA user_version") != kJournalVersion)
    input_error(path_, "not a calibration journal of this specd: delete it and start again");
  sqlite::Statement query(*db_, "SELECT json FROM identity");
  nlohmann::json stored;
  if (!query.step()) input_error(path_, "damaged calibration journal (no identity): delete it and start again");
  stored = parse_json(query.text(0), path_ + ": identity");
  if (stored != identity_)
    input_error(path_, "an interrupted calibration with other settings is there (" + describe_difference(stored, identity_) +
                           "): rerun it with its settings or delete it");
  db_->exec(kArcSamplesSql);
  db_->exec(kSweepRunsSql);
  db_->exec(kMachinesSql);
  db_->exec(kDeliverySql);
}

std::vector<nlohmann::json> CalibrationJournal::note_machine(const nlohmann::json& machine) {
  sqlite::Transaction transaction(*db_);
  sqlite::Statement(*db_, "INSERT OR IGNORE INTO machines (json) VALUES (?)").bind(1, machine.dump()).run();
  transaction.commit();
  sqlite::Statement query(*db_, "SELECT json FROM machines ORDER BY seen");
  std::vector<nlohmann::json> machines;
  while (query.step()) machines.push_back(parse_json(query.text(0), path_ + ": machines"));
  return machines;
}

void CalibrationJournal::record_sweep_run(const SweepRun& run) {
  sqlite::Transaction transaction(*db_);
  sqlite::Statement(*db_, "INSERT INTO sweep_runs (run_index, record) VALUES (?, ?)")
      .bind(1, int64_t{run.index})
      .bind(2, sweep_run_record(run).dump())
      .run();
  transaction.commit();
}

std::vector<SweepRun> CalibrationJournal::sweep_runs() {
  sqlite::Statement query(*db_, "SELECT record FROM sweep_runs ORDER BY run_index");
  std::vector<SweepRun> runs;
  while (query.step()) {
    try {
      runs.push_back(parse_sweep_run(parse_json(query.text(0), path_ + ": sweep run")));
    } catch (const nlohmann::json::exception& e) {
      input_error(path_, std::string("damaged sweep run record (") + e.what() + "): delete it and start again");
    }
  }
  return runs;
}

CalibrationJournal::~CalibrationJournal() = default;

std::set<int32_t> CalibrationJournal::finished_prompts(const std::string& policy) {
  sqlite::Statement query(*db_, "SELECT prompt_index FROM prompts WHERE policy = ?");
  query.bind(1, policy);
  std::set<int32_t> done;
  while (query.step()) done.insert(static_cast<int32_t>(query.int64(0)));
  return done;
}

void CalibrationJournal::insert_prompt(const std::string& policy, const CalibratedPrompt& p) {
  sqlite::Statement insert(*db_,
                           "INSERT INTO prompts (policy, prompt_index, prompt_id, category, prompt_tokens, new_tokens, steps, "
                           "drafted, accepted, rejections, wall_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  insert.bind(1, policy).bind(2, int64_t{p.index}).bind(3, p.id).bind(4, p.category).bind(5, p.prompt_tokens);
  insert.bind(6, p.new_tokens).bind(7, p.steps).bind(8, p.drafted).bind(9, p.accepted).bind(10, p.rejections).bind(11, p.wall_ms);
  insert.run();
}

void CalibrationJournal::record_prompt(const std::string& policy, const CalibratedPrompt& prompt,
                                       const std::vector<CsdRejection>& rejections) {
  sqlite::Transaction transaction(*db_);
  insert_prompt(policy, prompt);
  sqlite::Statement insert(*db_,
                           "INSERT INTO rejections (policy, prompt, step, depth, draft_token, target_token, logit_gap) "
                           "VALUES (?, ?, ?, ?, ?, ?, ?)");
  for (const CsdRejection& r : rejections) {
    insert.bind(1, policy).bind(2, int64_t{r.prompt}).bind(3, int64_t{r.step}).bind(4, int64_t{r.depth});
    insert.bind(5, int64_t{r.draft_token}).bind(6, int64_t{r.target_token}).bind(7, double{r.logit_gap});
    insert.run();
  }
  transaction.commit();
}

void CalibrationJournal::record_document(const std::string& policy, const CalibratedPrompt& prompt,
                                         const std::vector<int32_t>& document) {
  sqlite::Transaction transaction(*db_);
  insert_prompt(policy, prompt);
  sqlite::Statement(*db_, "INSERT INTO documents (policy, prompt_index, tokens) VALUES (?, ?, ?)")
      .bind(1, policy)
      .bind(2, int64_t{prompt.index})
      .bind(3, nlohmann::json(document).dump())
      .run();
  transaction.commit();
}

void CalibrationJournal::record_arc_samples(const std::string& policy, const CalibratedPrompt& prompt,
                                            const std::vector<ArcSample>& samples) {
  sqlite::Transaction transaction(*db_);
  insert_prompt(policy, prompt);
  sqlite::Statement insert(*db_,
                           "INSERT INTO arc_samples (policy, prompt, step, depth, position, target_token, draft_token, root_entropy, "
                           "u_emb_raw, u_logit_raw, js, held_out, deploy_site, relaxed, theta) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  for (const ArcSample& x : samples) {
    insert.bind(1, policy).bind(2, int64_t{x.prompt}).bind(3, int64_t{x.step}).bind(4, int64_t{x.depth}).bind(5, x.position);
    insert.bind(6, int64_t{x.target_token}).bind(7, int64_t{x.draft_token}).bind(8, double{x.root_entropy}).bind(9, x.u_emb_raw);
    insert.bind(10, x.u_logit_raw).bind(11, x.js).bind(12, int64_t{x.held_out ? 1 : 0}).bind(13, int64_t{x.deploy_site ? 1 : 0});
    insert.bind(14, int64_t{x.relaxed ? 1 : 0}).bind(15, x.theta);
    insert.run();
  }
  transaction.commit();
}

std::vector<ArcSample> CalibrationJournal::arc_samples(const std::string& policy) {
  sqlite::Statement query(*db_,
                          "SELECT prompt, step, depth, position, target_token, draft_token, root_entropy, u_emb_raw, u_logit_raw, js, "
                          "held_out, deploy_site, relaxed, theta FROM arc_samples WHERE policy = ? ORDER BY prompt, step, rowid");
  query.bind(1, policy);
  std::vector<ArcSample> rows;
  auto int32 = [&](int column) { return static_cast<int32_t>(query.int64(column)); };
  while (query.step())
    rows.push_back({int32(0), int32(1), int32(2), query.int64(3), int32(4), int32(5), static_cast<float>(query.real(6)), query.real(7),
                    query.real(8), query.real(9), query.int64(10) != 0, query.int64(11) != 0, query.int64(12) != 0, query.real(13)});
  return rows;
}

std::vector<CalibratedPrompt> CalibrationJournal::prompts(const std::string& policy) {
  sqlite::Statement query(*db_,
                          "SELECT prompt_index, prompt_id, category, prompt_tokens, new_tokens, steps, drafted, accepted, "
                          "rejections, wall_ms FROM prompts WHERE policy = ? ORDER BY prompt_index");
  query.bind(1, policy);
  std::vector<CalibratedPrompt> rows;
  while (query.step())
    rows.push_back({static_cast<int32_t>(query.int64(0)), query.text(1), query.text(2), query.int64(3), query.int64(4),
                    query.int64(5), query.int64(6), query.int64(7), query.int64(8), query.real(9)});
  return rows;
}

std::vector<CsdRejection> CalibrationJournal::rejections(const std::string& policy) {
  sqlite::Statement query(*db_,
                          "SELECT prompt, step, depth, draft_token, target_token, logit_gap FROM rejections WHERE policy = ? "
                          "ORDER BY prompt, step, depth, rowid");
  query.bind(1, policy);
  std::vector<CsdRejection> rows;
  while (query.step())
    rows.push_back({static_cast<int32_t>(query.int64(0)), static_cast<int32_t>(query.int64(1)), static_cast<int32_t>(query.int64(2)),
                    static_cast<int32_t>(query.int64(3)), static_cast<int32_t>(query.int64(4)), static_cast<float>(query.real(5))});
  return rows;
}

std::vector<std::vector<int32_t>> CalibrationJournal::documents(const std::string& policy) {
  sqlite::Statement query(*db_, "SELECT tokens FROM documents WHERE policy = ? ORDER BY prompt_index");
  query.bind(1, policy);
  std::vector<std::vector<int32_t>> rows;
  while (query.step()) rows.push_back(parse_token_list(query.text(0), path_ + ": documents.tokens"));
  return rows;
}

void CalibrationJournal::mark_delivery(const std::string& artifact_dir) {
  sqlite::Transaction transaction(*db_);
  db_->exec("DELETE FROM delivery");
  sqlite::Statement(*db_, "INSERT INTO delivery (manifest_sha256) VALUES (?)").bind(1, manifest_sha256(artifact_dir)).run();
  transaction.commit();
}

void CalibrationJournal::remove() {
  db_.reset();
  std::error_code error;
  fs::remove(path_, error);
  if (error) input_error(path_, "cannot delete: " + error.message());
}

}  // namespace specd
