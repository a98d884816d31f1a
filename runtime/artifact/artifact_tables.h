#pragma once
// calibration.sqlite (schemas/artifact.sql): the prompts each calibration ran, CSD's correction
// memory, ARC's constants and audit, and the deployed thresholds. Written once, in one transaction, rows in primary-key
// order; read through ArtifactTables.
#include <string>
#include <vector>

#include "artifact/artifact.h"
#include "io/sqlite_db.h"

namespace specd {

// The DDL of schemas/artifact.sql, which ends by setting PRAGMA user_version.
const char* artifact_schema_sql();

// Creates PATH (which must not exist) with the schema and every row of `artifact`.
void write_artifact_tables(const std::string& path, const Artifact& artifact);

class ArtifactTables {
 public:
  // Opens read-only. InputError "PATH: schema version N, this specd reads 1 to 3" for another version,
  // "PATH: not a specd artifact database" for a foreign file, SQLite's reason for a damaged one.
  // Every reader below takes each cell as the type the schema declares: a NULL, a text where a
  // number belongs or a real where an integer does is an InputError "PATH: TABLE.COLUMN of row N
  // is ...", never a 0.
  explicit ArtifactTables(const std::string& path);

  // PRAGMA user_version, from kOldestArtifactVersion to kArtifactSqliteVersion.
  int64_t version() const { return version_; }

  // Rows in primary-key order; prompts by index, pairs as summarize_pairs orders them.
  std::vector<CalibratedPrompt> prompts(const std::string& policy);
  std::vector<CsdPair> csd_pairs();
  // ARC's constants and audit rows in the order they were written ("all" first); none in version 1.
  std::vector<ArcConstants> arc_constants();
  std::vector<ArcAuditRow> arc_audit();
  std::vector<ArcGateRow> arc_gate();  // strict (high theta) first
  // A family's sweep runs by index, each with its categories in stored order; none before version 3.
  std::vector<SweepRun> sweep_runs(const std::string& family);
  std::vector<std::string> sweep_families();  // the distinct families of sweep_runs
  std::vector<Threshold> thresholds();
  std::vector<std::string> policies();  // the distinct policies of the prompts table

  // PRAGMA quick_check (or the full integrity_check), one line per problem, "" prefix; empty when sound.
  std::vector<std::string> integrity_problems(bool full);
  // Tables and columns that differ from schemas/artifact.sql, one line each.
  std::vector<std::string> schema_problems();

 private:
  std::string path_;
  sqlite::Database db_;
  int64_t version_ = 0;
};

}  // namespace specd
