// specd calibrate sweep as a user runs it, on fixture models at T = 0 with a fixed draft budget:
// the same sweep twice gives equal deterministic columns (MAT, acceptance, outputs equal to AR,
// NLL, chrF vs AR; speeds vary and are not compared) and a choice that recomputes from the stored
// runs; a sweep killed with SIGKILL and resumed equals an uninterrupted one on those columns;
// shards merged equal the unsharded sweep; a bad --grid is refused in one line leaving nothing;
// generate --artifact deploys the chosen point unless a flag is typed.
#include "catch_torch.h"

#include <chrono>
#include <filesystem>

#include "artifact/artifact_reader.h"
#include "calibrate/calibration_journal.h"
#include "calibrate/sweep_choice.h"
#include "io/sqlite_db.h"
#include "cli_helpers.h"
#include "fixture_models.h"

using namespace specd;
using namespace specd::test;

namespace {

std::string own(const std::string& name) { return name + "-" + std::to_string(getpid()); }

struct Fixture {
  std::string target, prompts;
};

// A target with the tiny tokenizer and 4 calibration prompts in two categories (repetitive text,
// so PLD finds matches).
const Fixture& fixture() {
  static const Fixture f = [] {
    Fixture made;
    made.target = model_with_tokenizer(own("sweep-target"));
    made.prompts = fixture_dir(own("sweep-prompts")) + "/prompts.jsonl";
    std::string lines;
    int i = 0;
    for (const char* text : {"the the the the", "abc abc abc", "for i in for i in", "x = 1; x = 1;"}) {
      lines += std::string("{\"id\": \"s-") + std::to_string(i) + "\", \"category\": \"" + (i % 2 ? "code" : "prose") +
               "\", \"prompt\": \"" + text + "\", \"max_new_tokens\": 24}\n";
      ++i;
    }
    write_text(made.prompts, lines);
    return made;
  }();
  return f;
}

std::string fresh(const std::string& name) {
  static const std::string base = fixture_dir(own("sweep-out"));
  const std::string dir = base + "/" + name;
  remove_tree(dir);
  std::filesystem::remove(dir + ".sweep-journal.sqlite");
  return dir;
}

std::string sweep(const std::string& out, const std::string& extra = "", const std::string& work = "--repeats 1") {
  return "calibrate sweep --policy pld --grid tokens=2,4 --grid match=earliest,latest --threads 1 --draft-budget fixed " + work +
         " --target " + fixture().target + " --prompts " + fixture().prompts + " --out " + out + " " + extra;
}

// What does not depend on timing.
void require_same_deterministic(const std::vector<SweepRun>& a, const std::vector<SweepRun>& b) {
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    CAPTURE(i);
    CHECK(a[i].index == b[i].index);
    CHECK((a[i].values == b[i].values));
    CHECK(a[i].point == b[i].point);
    REQUIRE(a[i].stats.size() == b[i].stats.size());
    for (size_t c = 0; c < a[i].stats.size(); ++c) {
      const SweepStats &x = a[i].stats[c], &y = b[i].stats[c];
      CAPTURE(x.category);
      CHECK(x.category == y.category);
      CHECK(x.prompts == y.prompts);
      CHECK(x.new_tokens == y.new_tokens);
      CHECK(x.equal_to_ar == y.equal_to_ar);
      CHECK(x.mat == y.mat);
      CHECK(x.acceptance == y.acceptance);
      CHECK(x.relaxed_per_token == y.relaxed_per_token);
      CHECK(x.nll_per_token == y.nll_per_token);
      CHECK(x.ar_nll_per_token == y.ar_nll_per_token);
      CHECK(x.chrf_vs_ar == y.chrf_vs_ar);
      CHECK(x.nll_increase_mean == y.nll_increase_mean);
      CHECK(x.nll_increase_sd == y.nll_increase_sd);
      CHECK(x.chrf_mean == y.chrf_mean);
      CHECK(x.chrf_sd == y.chrf_sd);
    }
  }
}

// The stored choice is the one the stored runs give, and the thresholds hold its grid values.
void require_choice_recomputes(const Artifact& a) {
  REQUIRE(a.sweeps.size() == 1);
  const SweepCalibration& s = a.sweeps[0];
  const SweepChoice again = choose_sweep_run(s);
  CHECK((again.run == s.chosen));
  CHECK(again.reason == s.choice);
  REQUIRE(s.chosen);
  const SweepRun& chosen = s.runs.at(*s.chosen);
  std::vector<Threshold> expected;
  for (size_t axis = 0; axis < s.grid.size(); ++axis) expected.push_back({"pld", s.grid[axis].name, chosen.values[axis], s.choice});
  std::vector<Threshold> pld;
  for (const Threshold& t : a.thresholds)
    if (t.policy == "pld") pld.push_back(t);
  std::sort(expected.begin(), expected.end(), [](const auto& x, const auto& y) { return x.name < y.name; });
  CHECK((pld == expected));
}

const Artifact& first_sweep() {
  static const Artifact a = [] {
    const std::string out = fresh("first");
    CliResult r = run_cli(sweep(out));
    CAPTURE(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(r.out.find("sensitivity: best") != std::string::npos);
    CHECK(r.out.find("<- chosen") != std::string::npos);
    CHECK(r.out.find("fastest lossless") != std::string::npos);
    return read_artifact(out);
  }();
  return a;
}

}  // namespace

TEST_CASE("calibrate sweep: twice gives equal deterministic columns, and the choice recomputes from the runs", "[calibrate][sweep]") {
  const Artifact& a = first_sweep();
  REQUIRE(a.sweeps.size() == 1);
  const SweepCalibration& s = a.sweeps[0];
  CHECK(s.family == "pld");
  CHECK(s.lossless);
  CHECK(s.planned_runs == 5);
  REQUIRE(s.runs.size() == 5);
  CHECK(s.runs[0].point == "tokens=10 match=earliest");  // the base point: the defaults
  CHECK(s.runs[1].point == "tokens=2 match=earliest");   // the first axis varies slowest
  CHECK(s.runs[2].point == "tokens=2 match=latest");
  CHECK(s.runs[4].point == "tokens=4 match=latest");
  for (const SweepRun& r : s.runs) {
    CAPTURE(r.point);
    REQUIRE(r.stats.size() == 3);  // code, prose, overall
    CHECK(r.stats.back().category == "overall");
    CHECK(r.overall().prompts == 4);
    CHECK(r.overall().equal_to_ar == 4);  // lossless at T = 0
    CHECK(r.overall().chrf_vs_ar == 100);
    CHECK(r.overall().nll_per_token == Approx(r.overall().ar_nll_per_token).epsilon(1e-6));
    // The contract's inputs, per prompt, stored through the journal: every output equals AR's.
    CHECK(r.overall().chrf_mean == 100);
    CHECK(r.overall().chrf_sd == 0);
    CHECK(r.overall().nll_increase_mean == Approx(0).margin(1e-9));
    CHECK(r.overall().mat >= 1);
    CHECK(!r.cost_curve.empty());
  }
  require_choice_recomputes(a);

  const std::string two = fresh("second");
  REQUIRE(run_cli(sweep(two)).exit_code == 0);
  const Artifact b = read_artifact(two);
  require_same_deterministic(a.sweeps[0].runs, b.sweeps[0].runs);
  require_choice_recomputes(b);
  CHECK(run_cli("artifact verify " + two + " --target " + fixture().target).exit_code == 0);
  CliResult shown = run_cli("artifact inspect " + two);
  CAPTURE(shown.err);
  CHECK(shown.out.find("sweep pld (lossless)") != std::string::npos);
  CHECK(shown.out.find("chosen: run") != std::string::npos);
}

TEST_CASE("calibrate sweep: killed with SIGKILL and resumed, it equals an uninterrupted sweep", "[calibrate][sweep]") {
  // Longer runs than the other cases, and kill times spread over an uninterrupted sweep's
  // duration, so that some kills land with runs finished and one in flight.
  const std::string work = "--repeats 3 --max-new-tokens 120";
  const std::string reference = fresh("uninterrupted");
  const auto start = std::chrono::steady_clock::now();
  REQUIRE(run_cli(sweep(reference, "", work)).exit_code == 0);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const Artifact expected = read_artifact(reference);
  // Kill points searched by bisection over the duration: a kill before the first finished run
  // moves later, one after the artifact was written moves earlier.
  int resumed_with_runs_done = 0;
  double early = 0.2, late = 1.0;
  for (int attempt = 0; attempt < 10 && resumed_with_runs_done < 2; ++attempt) {
    const double fraction = (early + late) / 2;
    const std::string out = fresh("killed-" + std::to_string(attempt));
    const std::string command = "timeout -s KILL " + std::to_string(fraction * seconds) + " " + std::string(SPECD_CLI) + " " +
                                sweep(out, "", work) + " > /dev/null 2>&1";
    std::system(command.c_str());
    if (!std::filesystem::exists(out + "/manifest.json")) {
      CHECK(!std::filesystem::exists(out));  // nothing partial beside the journal
      // Without --resume a sweep with finished runs is not silently restarted (an empty journal is replaced).
      if (CalibrationJournal::holds_work(out + ".sweep-journal.sqlite")) {
        require_one_line_error(run_cli(sweep(out, "", work)), "--resume");
        // Begun on another machine, its runs' speeds would not compare with this one's: refused.
        sqlite::Database db(out + ".sweep-journal.sqlite", sqlite::Database::Mode::ReadWriteCreate);
        std::string identity;
        {
          sqlite::Statement stored(db, "SELECT json FROM identity");
          REQUIRE(stored.step());
          identity = stored.text(0);
        }
        db.exec("UPDATE identity SET json = json_set(json, '$.machine.cpu', 'another CPU')");
        require_one_line_error(run_cli(sweep(out, "--resume", work)), "(machine/cpu: \"another CPU\" there, ");
        sqlite::Statement(db, "UPDATE identity SET json = ?").bind(1, identity).run();
      }
      CliResult resumed = run_cli(sweep(out, "--resume", work));
      CAPTURE(resumed.err);
      REQUIRE(resumed.exit_code == 0);
      if (resumed.err.find("resuming, ") != std::string::npos) ++resumed_with_runs_done;
      else early = fraction;
    } else {
      late = fraction;
    }
    // Killed between writing the artifact and deleting the journal, the journal stays, known as
    // delivered, and does not block the next sweep into OUT.
    const std::string journal = out + ".sweep-journal.sqlite";
    CHECK((!std::filesystem::exists(journal) || CalibrationJournal::delivered(journal, out)));
    const Artifact a = read_artifact(out);
    require_same_deterministic(expected.sweeps[0].runs, a.sweeps[0].runs);
    require_choice_recomputes(a);
  }
  CHECK(resumed_with_runs_done >= 1);  // kills did land between finished runs
}

TEST_CASE("calibrate sweep: with the auto budget every run starts from the one cost curve measured for the sweep", "[calibrate][sweep]") {
  // Runs compare speeds, and the budget sizes drafts from its curve: a curve timed per run made
  // one policy's runs differ by a fifth (the large pair's csd sweep).
  const std::string out = fresh("auto-budget");
  CliResult r = run_cli("calibrate sweep --policy pld --grid tokens=2,4 --threads 1 --repeats 1 --target " + fixture().target +
                        " --prompts " + fixture().prompts + " --out " + out);
  CAPTURE(r.err);
  REQUIRE(r.exit_code == 0);
  const Artifact a = read_artifact(out);
  REQUIRE(a.sweeps.size() == 1);
  const std::vector<SweepRun>& runs = a.sweeps[0].runs;
  REQUIRE(runs.size() == 3);  // the base point and the two of the grid
  REQUIRE(runs[0].cost_curve.size() >= 2);
  for (const SweepRun& run : runs) {
    CAPTURE(run.point);
    CHECK(run.cost_curve == runs[0].cost_curve);
  }
}

TEST_CASE("calibrate sweep: shards merged equal the unsharded sweep", "[calibrate][sweep]") {
  const std::string s0 = fresh("shard-0"), s1 = fresh("shard-1"), merged = fresh("merged");
  CliResult r0 = run_cli(sweep(s0, "--shard 0/2"));
  CAPTURE(r0.err);
  REQUIRE(r0.exit_code == 0);
  REQUIRE(run_cli(sweep(s1, "--shard 1/2")).exit_code == 0);
  const Artifact shard1 = read_artifact(s1);
  REQUIRE(shard1.sweeps[0].runs.size() == 2);  // runs 1 and 3
  CHECK_FALSE(shard1.sweeps[0].chosen);
  CHECK(shard1.thresholds.empty());
  CliResult r = run_cli("artifact merge --out " + merged + " " + s1 + " " + s0);
  CAPTURE(r.err);
  REQUIRE(r.exit_code == 0);
  const Artifact m = read_artifact(merged);
  require_same_deterministic(first_sweep().sweeps[0].runs, m.sweeps[0].runs);
  require_choice_recomputes(m);
  CHECK(m.sweeps[0].provenance.shards.size() == 2);
}

TEST_CASE("calibrate sweep: a bad --grid or --policy is refused in one line, leaving nothing", "[calibrate][sweep]") {
  const std::string out = fresh("bad");
  auto refused = [&](const std::string& grid, const std::string& mention) {
    const std::string command = "calibrate sweep --policy pld " + grid + " --threads 1 --target " + fixture().target + " --prompts " +
                                fixture().prompts + " --out " + out;
    require_one_line_error(run_cli(command), mention);
    CHECK(!std::filesystem::exists(out));
    CHECK(!std::filesystem::exists(out + ".sweep-journal.sqlite"));
  };
  refused("--grid nope=1,2", "--grid: 'nope' is not a parameter of pld (known: ");
  refused("--grid tokens=2,x", "--grid: tokens: 'x' is not a number");
  refused("--grid tokens=2.5", "--grid: tokens must be a whole number");
  refused("--grid match=middle", "--grid: match must be one of earliest, latest");
  refused("--grid tokens", "--grid: must be NAME=v1,v2,...");
  refused("--grid tokens=2,2", "given twice");
  refused("--grid tokens=0", "--grid: tokens must be in [1, 1024] (got 0)");  // the parameter table's range
  // Values in range that do not go together: refused when the point's policy is built, before measuring.
  refused("--grid min_ngram=1,5", "--grid: min_ngram=5: pld: max_ngram must be at least min_ngram");
  refused("--grid theta=0.1", "'theta' is not a parameter of pld");
  // 100 x 100 x 10 x 2 = 200,000 points: refused before the grid is expanded.
  std::string many, fewer;
  for (int v = 1; v <= 100; ++v) many += (v > 1 ? "," : "") + std::to_string(v);
  for (int v = 1; v <= 10; ++v) fewer += (v > 1 ? "," : "") + std::to_string(v);
  refused("--grid tokens=" + many + " --grid max_ngram=" + many + " --grid min_ngram=" + fewer + " --grid match=earliest,latest",
          "--grid: more than 10000 points");
  refused("", "--grid: give at least one");
  require_one_line_error(run_cli("calibrate sweep --policy ar --grid tokens=1 --out " + out), "--policy: ar has no parameters");
  require_one_line_error(run_cli("calibrate sweep --policy zz --grid tokens=1 --out " + out), "--policy: unknown method 'zz'");
  CHECK(!std::filesystem::exists(out));
}

TEST_CASE("calibrate sweep: generate --artifact deploys the chosen point, a typed flag wins", "[calibrate][sweep]") {
  const Artifact& a = first_sweep();
  const SweepCalibration& s = a.sweeps[0];
  REQUIRE(s.chosen);
  const SweepRun& chosen = s.runs.at(*s.chosen);
  const std::string dir = fresh("deploy");
  REQUIRE(run_cli(sweep(dir)).exit_code == 0);
  const Artifact deployed = read_artifact(dir);
  const SweepRun& run = deployed.sweeps[0].runs.at(*deployed.sweeps[0].chosen);
  (void)chosen;
  const std::string tokens = std::to_string(static_cast<int>(run.values[0]));
  const std::string generate = "generate --method pld --threads 1 --model " + fixture().target + " --prompt 'the the the' --max-new-tokens 8 --artifact " + dir;
  CliResult r = run_cli(generate);
  CAPTURE(r.err);
  REQUIRE(r.exit_code == 0);
  const std::string all = r.out + r.err;
  CHECK(all.find("tokens=" + tokens + " (artifact (sweep run " + std::to_string(run.index)) != std::string::npos);
  CHECK(all.find("max_ngram=3 (default)") != std::string::npos);  // not in the grid: the default stays
  CliResult typed = run_cli(generate + " --pld-tokens 3");
  REQUIRE(typed.exit_code == 0);
  const std::string typed_all = typed.out + typed.err;
  CHECK(typed_all.find("tokens=3 (option --pld-tokens)") != std::string::npos);
  CHECK(typed_all.find("match=" + std::string(run.values[1] >= 0.5 ? "latest" : "earliest") + " (artifact (sweep run") != std::string::npos);
}
