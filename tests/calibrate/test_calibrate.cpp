// Calibration as a user runs it (specd calibrate csd, specd artifact merge): the same command
// twice gives the same tables and arrays; shards merged equal the unsharded run; a run killed
// with SIGKILL at random points and resumed equals an uninterrupted one, with nothing lost or
// counted twice; the artifact is refused for another pair.
#include "catch_torch.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <random>

#include "artifact/artifact_reader.h"
#include "calibrate/calibration_journal.h"
#include "io/sha256.h"
#include "io/sqlite_db.h"
#include "stats/arc_fit.h"
#include "stats/arc_gate.h"
#include "util/machine.h"
#include "cli_helpers.h"
#include "fixture_models.h"

using namespace specd;
using namespace specd::test;

namespace {

struct Pair {
  std::string target, draft, prompts;
};

// Fixture names of this process: ctest runs the test cases in parallel processes.
std::string own(const std::string& name) { return name + "-" + std::to_string(getpid()); }

// A target and a different draft sharing the tiny tokenizer, and 7 calibration prompts.
const Pair& pair() {
  static const Pair p = [] {
    Pair made;
    made.target = model_with_tokenizer(own("calibrate-target"));
    made.draft = write_model(own("calibrate-draft"), tiny_config("llama"), DType::F32, 99);
    std::filesystem::copy_file(tiny_tokenizer(), made.draft + "/tokenizer.json", std::filesystem::copy_options::overwrite_existing);
    made.prompts = fixture_dir(own("calibrate-prompts")) + "/prompts.jsonl";
    std::string lines;
    for (const char* text : {"def the thing", "the quick fox", "import os", "for i in range", "the the the", "class A:", "x = 1"})
      lines += std::string("{\"id\": \"p-") + text[0] + std::to_string(lines.size()) + "\", \"category\": \"calibration\", \"prompt\": \"" +
               text + "\", \"max_new_tokens\": 40}\n";
    write_text(made.prompts, lines);
    return made;
  }();
  return p;
}

// One thread: ctest runs other test processes beside this one, and two spinning worker pools on
// two cores slow both down many times over.
std::string calibrate(const std::string& out, const std::string& extra = "") {
  return "calibrate csd --threads 1 --target " + pair().target + " --draft " + pair().draft + " --prompts " + pair().prompts +
         " --out " + out + " " + extra;
}

std::string fresh(const std::string& name) {
  static const std::string base = fixture_dir(own("calibrate-out"));
  const std::string dir = base + "/" + name;
  remove_tree(dir);
  std::filesystem::remove(dir + ".csd-journal.sqlite");
  std::filesystem::remove(dir + ".arc-journal.sqlite");
  return dir;
}

// The tables and arrays of the CSD calibration (provenance aside: times and command lines differ).
void require_same_calibration(const Artifact& a, const Artifact& b) {
  REQUIRE(a.csd);
  REQUIRE(b.csd);
  CHECK((a.csd->prompts == b.csd->prompts));
  CHECK((a.csd->rejections == b.csd->rejections));
  CHECK((a.csd->pairs == b.csd->pairs));
  CHECK((a.thresholds == b.thresholds));
  CHECK((a.target == b.target));
  CHECK((a.draft == b.draft));
}

}  // namespace

TEST_CASE("calibrate csd: the same command twice gives the same tables and arrays", "[calibrate]") {
  const std::string one = fresh("twice-1"), two = fresh("twice-2");
  CliResult r = run_cli(calibrate(one));
  CAPTURE(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("Pareto shape") != std::string::npos);
  REQUIRE(run_cli(calibrate(two)).exit_code == 0);
  const Artifact a = read_artifact(one), b = read_artifact(two);
  require_same_calibration(a, b);
  CHECK(a.csd->prompts.size() == 7);
  CHECK(!a.csd->rejections.empty());
  CHECK(slurp(one + "/calibration.h5") == slurp(two + "/calibration.h5"));
  CHECK(run_cli("artifact verify " + one + " --target " + pair().target + " --draft " + pair().draft).exit_code == 0);
  // Where it ran: the provenance names the machine, and inspect prints it beside the decoding time.
  const nlohmann::json here = machine_json(read_cpuinfo(), 1, "cpu");
  CHECK(a.csd->provenance.machine == here);
  const CliResult inspect = run_cli("artifact inspect " + one);
  REQUIRE(inspect.exit_code == 0);
  CHECK(inspect.out.find("prompts/min on " + machine_text(here) + "\n") != std::string::npos);
}

TEST_CASE("calibrate csd: shards merged equal the unsharded run", "[calibrate]") {
  const std::string whole = fresh("whole"), s0 = fresh("shard-0"), s1 = fresh("shard-1"), s2 = fresh("shard-2"), merged = fresh("merged");
  REQUIRE(run_cli(calibrate(whole)).exit_code == 0);
  REQUIRE(run_cli(calibrate(s0, "--shard 0/3")).exit_code == 0);
  REQUIRE(run_cli(calibrate(s1, "--shard 1/3")).exit_code == 0);
  REQUIRE(run_cli(calibrate(s2, "--shard 2/3")).exit_code == 0);
  CHECK(read_artifact(s1).csd->prompts.size() == 2);  // prompts 1 and 4
  CliResult r = run_cli("artifact merge --out " + merged + " " + s2 + " " + s0 + " " + s1);
  CAPTURE(r.err);
  REQUIRE(r.exit_code == 0);
  const Artifact m = read_artifact(merged);
  require_same_calibration(read_artifact(whole), m);
  CHECK(m.csd->provenance.shards.size() == 3);
  // A shard missing is refused.
  require_one_line_error(run_cli("artifact merge --out " + fresh("merged-bad") + " " + s0 + " " + s1), "csd shard 2 is missing");
  // artifact diff: the merge holds the whole run's data; a shard does not.
  CHECK(run_cli("artifact diff " + merged + " " + whole).exit_code == 0);
  const CliResult differs = run_cli("artifact diff " + s0 + " " + whole);
  CHECK(differs.exit_code == 1);
  CHECK(differs.out.find("csd.rejections: ") != std::string::npos);
  // Merging onto an existing artifact would drop what it holds: refused, the artifact as it was.
  const std::string manifest_before = slurp(whole + "/manifest.json");
  require_one_line_error(run_cli("artifact merge --out " + whole + " " + s2 + " " + s0 + " " + s1), "--out: " + whole + " exists");
  CHECK(slurp(whole + "/manifest.json") == manifest_before);
}

TEST_CASE("calibrate csd --samples-per-prompt: K seeds per prompt extend the K = 1 run, and shards split the decodes", "[calibrate]") {
  const std::string one = fresh("k1"), three = fresh("k3"), s0 = fresh("k3-shard-0"), s1 = fresh("k3-shard-1"), merged = fresh("k3-merged");
  REQUIRE(run_cli(calibrate(one)).exit_code == 0);
  CliResult r = run_cli(calibrate(three, "--samples-per-prompt 3"));
  CAPTURE(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("21 decodes (3 per prompt)") != std::string::npos);
  const Artifact a = read_artifact(one), b = read_artifact(three);
  REQUIRE(b.csd->prompts.size() == 21);
  CHECK(b.csd->provenance.options.at("samples_per_prompt") == 3);
  // Sample k of prompt i is unit k * 7 + i, decoded with seed + k * 7 + i: the first 7 units are the
  // K = 1 run, and every prompt appears once per sample.
  for (size_t u = 0; u < 21; ++u) CHECK(b.csd->prompts[u].id == a.csd->prompts[u % 7].id);
  const std::vector<CalibratedPrompt> first(b.csd->prompts.begin(), b.csd->prompts.begin() + 7);
  CHECK((first == a.csd->prompts));
  std::vector<CsdRejection> first_rejections;
  for (const CsdRejection& x : b.csd->rejections)
    if (x.prompt < 7) first_rejections.push_back(x);
  CHECK((first_rejections == a.csd->rejections));
  // Other seeds give other texts: the later samples are not copies of the first.
  bool differs = false;
  for (size_t u = 7; u < 21; ++u) differs = differs || !(b.csd->prompts[u].new_tokens == b.csd->prompts[u % 7].new_tokens &&
                                                         b.csd->prompts[u].rejections == b.csd->prompts[u % 7].rejections);
  CHECK(differs);
  // Shards own decodes (unit % N), whatever their prompt; merged, they equal the whole.
  REQUIRE(run_cli(calibrate(s0, "--samples-per-prompt 3 --shard 0/2")).exit_code == 0);
  REQUIRE(run_cli(calibrate(s1, "--samples-per-prompt 3 --shard 1/2")).exit_code == 0);
  CHECK(read_artifact(s0).csd->prompts.size() == 11);
  REQUIRE(run_cli("artifact merge --out " + merged + " " + s0 + " " + s1).exit_code == 0);
  require_same_calibration(b, read_artifact(merged));
  CHECK(run_cli("artifact verify " + merged + " --target " + pair().target + " --draft " + pair().draft).exit_code == 0);
  // A shard of another K is another calibration.
  const std::string other = fresh("k1-shard-1");
  REQUIRE(run_cli(calibrate(other, "--shard 1/2")).exit_code == 0);
  require_one_line_error(run_cli("artifact merge --out " + fresh("k-mixed") + " " + s0 + " " + other), "options/samples_per_prompt differs");
  require_one_line_error(run_cli(calibrate(fresh("k-zero"), "--samples-per-prompt 0")), "--samples-per-prompt");
  require_one_line_error(run_cli(calibrate(fresh("k-greedy"), "--samples-per-prompt 2 --temperature 0")), "--samples-per-prompt");
}

// Each calibration reads the artifact when it starts and writes its part when it ends; two running
// at once into one artifact must both land (the writer's lock, calibrate/artifact_update.h).
TEST_CASE("calibrate: two calibrations writing one artifact at once both land", "[calibrate]") {
  const std::string out = fresh("together");
  std::filesystem::remove(out + ".sam-corpus-journal.sqlite");
  const std::string sam = "calibrate sam-corpus --threads 1 --target " + pair().target + " --draft " + pair().draft + " --prompts " + pair().prompts + " --out " + out;
  const std::string both = "sh -c '" + std::string(SPECD_CLI) + " " + calibrate(out) + " > /dev/null & first=$!; " + SPECD_CLI + " " + sam +
                           " > /dev/null; second=$?; wait $first; exit $(( $? * 16 + second ))'";
  for (int round = 0; round < 2; ++round) {  // into a new artifact, then into the one just written
    INFO("round " << round);
    REQUIRE(std::system(both.c_str()) == 0);
    const Artifact artifact = read_artifact(out);
    CHECK(artifact.csd.has_value());
    CHECK(artifact.sam_corpus.has_value());
  }
  // A symlinked --out is refused: a calibration replaces the artifact's directory whole.
  std::filesystem::create_directory_symlink(out, out + "-link");
  require_one_line_error(run_cli(calibrate(out + "-link")), "is a symbolic link");
  std::filesystem::remove(out + "-link");
}

TEST_CASE("calibrate csd: killed with SIGKILL at random points and resumed, it equals an uninterrupted run", "[calibrate]") {
  const std::string reference = fresh("uninterrupted");
  const auto start = std::chrono::steady_clock::now();
  REQUIRE(run_cli(calibrate(reference)).exit_code == 0);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const Artifact expected = read_artifact(reference);

  std::mt19937 rng(3);
  bool moved = false;  // a journal was moved to another machine
  for (int attempt = 0; attempt < 3; ++attempt) {
    const std::string out = fresh("killed-" + std::to_string(attempt));
    const double at = std::uniform_real_distribution<double>(0.2, 0.9)(rng) * seconds;
    char limit[32];
    std::snprintf(limit, sizeof limit, "%.2f", at);
    // timeout -s KILL: no handler runs, as with kill -9 (or a machine that loses power).
    const std::string command = "timeout -s KILL " + std::string(limit) + " " + std::string(SPECD_CLI) + " " + calibrate(out) +
                                " > /dev/null 2>&1";
    const int status = std::system(command.c_str());
    CAPTURE(attempt, at, status);
    if (std::filesystem::exists(out + "/manifest.json")) {
      // It finished before the kill: nothing to resume, and it is complete.
      require_same_calibration(expected, read_artifact(out));
      continue;
    }
    CHECK(!std::filesystem::exists(out));  // no partial artifact is ever visible
    // Without --resume an interrupted calibration with finished prompts is not silently restarted.
    bool elsewhere = false;
    if (CalibrationJournal::holds_work(out + ".csd-journal.sqlite")) {
      require_one_line_error(run_cli(calibrate(out)), "--resume");
      // The first interrupted run: as if it had run on another CPU. Resuming keeps its prompts (they
      // do not depend on the machine), but the decoding time then mixes two machines' and the
      // provenance names none.
      elsewhere = !moved;
      if (elsewhere) {
        sqlite::Database db(out + ".csd-journal.sqlite", sqlite::Database::Mode::ReadWriteCreate);
        db.exec("UPDATE machines SET json = json_set(json, '$.cpu', 'another CPU')");
        moved = true;
      }
    }
    CliResult resumed = run_cli(calibrate(out, "--resume"));
    CAPTURE(resumed.err);
    REQUIRE(resumed.exit_code == 0);
    const Artifact finished = read_artifact(out);
    require_same_calibration(expected, finished);
    CHECK(finished.csd->provenance.machine.is_null() == elsewhere);
    CHECK((resumed.err.find("resumed on another machine than it began on (another CPU, ") != std::string::npos) == elsewhere);
    CHECK(!std::filesystem::exists(out + ".csd-journal.sqlite"));  // removed once the artifact is written
  }
}

TEST_CASE("calibrate csd: bad input and an artifact of another pair are refused in one line", "[calibrate]") {
  const std::string out = fresh("refusals");
  REQUIRE(run_cli(calibrate(out, "--max-prompts 2")).exit_code == 0);
  // Another target: the artifact names the pair it was made for.
  const std::string other = write_model(own("calibrate-other"), tiny_config("llama"), DType::F32, 5);
  std::filesystem::copy_file(tiny_tokenizer(), other + "/tokenizer.json", std::filesystem::copy_options::overwrite_existing);
  require_one_line_error(run_cli("generate --model " + other + " --draft " + pair().draft + " --prompt 'def' --method csd --artifact " + out),
                         out);
  const CliResult verify = run_cli("artifact verify " + out + " --target " + other);
  CHECK(verify.exit_code == 2);  // one line per problem
  CHECK(verify.out.find(out + "/manifest.json: target embedding") != std::string::npos);
  require_one_line_error(run_cli(calibrate(fresh("bad-shard"), "--shard 3/3")), "--shard");
  require_one_line_error(run_cli(calibrate(fresh("bad-gamma"), "--gamma 0")), "--gamma");
  require_one_line_error(run_cli("generate --model " + pair().target + " --draft " + pair().draft + " --prompt 'def' --method csd"),
                         "artifact");
  // csd deploys from it: the stats line says LOSSY.
  CliResult csd = run_cli("generate --model " + pair().target + " --draft " + pair().draft + " --prompt 'def the' --method csd --artifact " +
                          out + " --max-new-tokens 16 --draft-budget fixed");
  CAPTURE(csd.err);
  REQUIRE(csd.exit_code == 0);
  CHECK(csd.err.find("LOSSY") != std::string::npos);
}

TEST_CASE("csd --save-memory writes the memory as decoding left it: a new artifact with the online rejections", "[calibrate]") {
  const std::string out = fresh("memory-base"), saved = fresh("memory-saved");
  REQUIRE(run_cli(calibrate(out, "--max-prompts 3")).exit_code == 0);
  const Artifact before = read_artifact(out);
  CliResult r = run_cli("generate --model " + pair().target + " --draft " + pair().draft + " --prompt 'the quick fox' --method csd --artifact " +
                        out + " --max-new-tokens 40 --draft-budget fixed --save-memory " + saved);
  CAPTURE(r.err);
  REQUIRE(r.exit_code == 0);
  const Artifact after = read_artifact(saved);
  REQUIRE(after.csd);
  REQUIRE(after.csd->prompts.size() == before.csd->prompts.size() + 1);
  const CalibratedPrompt& online = after.csd->prompts.back();
  CHECK(online.id == "online");
  CHECK(online.rejections > 0);
  CHECK(after.csd->rejections.size() == before.csd->rejections.size() + static_cast<size_t>(online.rejections));
  int64_t before_total = 0, after_total = 0;
  for (const CsdPair& p : before.csd->pairs) before_total += p.count;
  for (const CsdPair& p : after.csd->pairs) after_total += p.count;
  CHECK(after_total == before_total + online.rejections);
  CHECK(after.csd->provenance.options.contains("online_update"));
  CHECK(run_cli("artifact verify " + saved + " --target " + pair().target + " --draft " + pair().draft).exit_code == 0);
  // Only the csd methods keep a memory.
  require_one_line_error(run_cli("generate --model " + pair().target + " --draft " + pair().draft + " --prompt 'x' --method sd --save-memory " +
                                 fresh("memory-bad")),
                         "--save-memory");
}

namespace {

// Two workload categories of two prompts each: the held-out audit prompts.
const std::string& audit_prompts() {
  static const std::string dir = [] {
    const std::string made = fixture_dir(own("calibrate-audit"));
    write_text(made + "/code.jsonl", "{\"id\": \"c-1\", \"category\": \"code\", \"prompt\": \"def f(x):\", \"max_new_tokens\": 40}\n"
                                     "{\"id\": \"c-2\", \"category\": \"code\", \"prompt\": \"import sys\", \"max_new_tokens\": 40}\n");
    write_text(made + "/prose.jsonl", "{\"id\": \"p-1\", \"category\": \"prose\", \"prompt\": \"the quick\", \"max_new_tokens\": 40}\n"
                                      "{\"id\": \"p-2\", \"category\": \"prose\", \"prompt\": \"the the\", \"max_new_tokens\": 40}\n");
    return made;
  }();
  return dir;
}

// The paper's candidate samples only: shardable, as the merge tests need.
const std::string kCandidates = "--sites candidates";

std::string calibrate_arc(const std::string& out, const std::string& extra = "") {
  return "calibrate arc --threads 1 --target " + pair().target + " --draft " + pair().draft + " --prompts " + pair().prompts +
         " --audit-prompts " + audit_prompts() + " --audit-per-category 2 --delta 0.1 --buckets depth --out " + out + " " + extra;
}

void require_same_arc(const Artifact& a, const Artifact& b) {
  REQUIRE(a.arc);
  REQUIRE(b.arc);
  CHECK((a.arc->prompts == b.arc->prompts));
  CHECK((a.arc->samples == b.arc->samples));
  CHECK((a.arc->whitening == b.arc->whitening));
  CHECK((a.arc->constants == b.arc->constants));
  CHECK((a.arc->audit == b.arc->audit));
}

}  // namespace

TEST_CASE("calibrate arc --sites candidates: twice equal, shards merged equal the whole, resumed after SIGKILL equal, audit reproduces it", "[calibrate][arc]") {
  const std::string whole = fresh("arc-whole");
  CliResult r = run_cli(calibrate_arc(whole, kCandidates));
  CAPTURE(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("held-out coverage of JS <= U_min") != std::string::npos);
  const Artifact expected = read_artifact(whole);
  REQUIRE(expected.arc->prompts.size() == 11);  // 7 calibration prompts, then 4 audit prompts
  CHECK(expected.arc->prompts.back().category == "prose");
  CHECK(expected.arc->audit.size() >= 3);  // all, code, prose, then depths
  CHECK(run_cli("artifact verify " + whole + " --target " + pair().target + " --draft " + pair().draft).exit_code == 0);
  CliResult audit = run_cli("audit arc --artifact " + whole);
  CAPTURE(audit.out);
  CHECK(audit.exit_code == 0);
  CHECK(audit.out.find("equal to the stored constants") != std::string::npos);

  const std::string again = fresh("arc-again");
  REQUIRE(run_cli(calibrate_arc(again, kCandidates)).exit_code == 0);
  require_same_arc(expected, read_artifact(again));
  CHECK(slurp(whole + "/calibration.h5") == slurp(again + "/calibration.h5"));

  const std::string s0 = fresh("arc-shard-0"), s1 = fresh("arc-shard-1"), merged = fresh("arc-merged");
  REQUIRE(run_cli(calibrate_arc(s0, kCandidates + " --shard 0/2")).exit_code == 0);
  REQUIRE(run_cli(calibrate_arc(s1, kCandidates + " --shard 1/2")).exit_code == 0);
  CHECK(read_artifact(s0).arc->constants.empty());  // a shard holds samples; the merge fits
  require_one_line_error(run_cli("generate --model " + pair().target + " --draft " + pair().draft +
                                 " --prompt 'def' --method arc --temperature 1 --artifact " + s0),
                         "merge the shards");
  REQUIRE(run_cli("artifact merge --out " + merged + " " + s1 + " " + s0).exit_code == 0);
  require_same_arc(expected, read_artifact(merged));

  const std::string killed = fresh("arc-killed");
  const std::string command = "timeout -s KILL 1 " + std::string(SPECD_CLI) + " " + calibrate_arc(killed, kCandidates) + " > /dev/null 2>&1";
  const int status = std::system(command.c_str());
  CAPTURE(status);
  if (!std::filesystem::exists(killed + "/manifest.json")) {
    CHECK(!std::filesystem::exists(killed));
    CliResult resumed = run_cli(calibrate_arc(killed, kCandidates + " --resume"));
    CAPTURE(resumed.err);
    REQUIRE(resumed.exit_code == 0);
  }
  require_same_arc(expected, read_artifact(killed));
}

TEST_CASE("calibrate arc --sites deploy: the arc policy's own sites on the odd prompts, the gate from them, twice equal, resumed equal", "[calibrate][arc]") {
  const std::string gate = " --theta-grid 0.9,0.3 --js-tolerance 0.3 --risk 0.5";
  const std::string out = fresh("arc-deploy");
  CliResult r = run_cli(calibrate_arc(out, gate));
  CAPTURE(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("gate on deploy sites") != std::string::npos);
  CHECK(r.out.find("deployed theta = ") != std::string::npos);
  const Artifact a = read_artifact(out);
  REQUIRE(a.arc);
  REQUIRE(a.arc->constants.size() >= 1);
  const ArcConstants& k = a.arc->constants.front();
  // Prompts 0, 2, 4, 6 are the pilot's (candidate samples), 1, 3, 5 the arc policy's, block
  // (prompt / 2) % 2 of the grid: theta 0.9 for 1 and 5, 0.3 for 3. Audit prompts (7..) stay candidates.
  int64_t sites = 0, candidates = 0;
  std::map<std::pair<int32_t, int64_t>, double> best_lts;  // per (prompt, position): the highest LTS among the siblings
  auto lts_of = [&](const ArcSample& s) { return 1 - arc_bound(k, s.u_emb_raw, s.u_logit_raw) / k.tau_delta; };
  for (const ArcSample& s : a.arc->samples) {
    if (!s.deploy_site) {
      ++candidates;
      CHECK(s.theta == 0);
      CHECK(!s.relaxed);
      CHECK((s.held_out || s.prompt % 2 == 0));
      continue;
    }
    ++sites;
    CHECK(s.prompt % 2 == 1);
    CHECK(s.prompt < 7);
    CHECK(!s.held_out);
    CHECK(s.theta == (s.prompt == 3 ? 0.3 : 0.9));
    if (s.draft_token == s.target_token) {
      CHECK(s.js == 0);
      CHECK(s.u_emb_raw == 0);
    }
    double& best = best_lts.try_emplace({s.prompt, s.position}, -1e300).first->second;
    best = std::max(best, lts_of(s));
  }
  CHECK(sites > 0);
  CHECK(candidates > 0);
  // The gate's decisions, recomputed from the stored raw bounds (the second pass's logits, so up to
  // float rounding): a relaxed child reached theta and is the best-scored of its siblings.
  for (const ArcSample& s : a.arc->samples)
    if (s.relaxed) {
      CHECK(lts_of(s) >= s.theta - 1e-3);
      CHECK(lts_of(s) >= best_lts[{s.prompt, s.position}] - 1e-3);
    }
  // The gate rows and the deployed threshold are functions of what is stored.
  const ArcGateOptions options = arc_gate_options_of(*a.arc, out);
  CHECK(options.thetas == std::vector<double>{0.9, 0.3});
  CHECK((a.arc->gate == fit_arc_gate(a.arc->samples, options)));
  const ArcGateChoice choice = choose_arc_gate(a.arc->gate, options);
  bool deployed = false;
  for (const Threshold& t : a.thresholds)
    if (t.policy == "arc" && t.name == "theta") {
      deployed = true;
      CHECK(t.value == choice.theta);
      CHECK(t.source == choice.reason);
    }
  CHECK(deployed);
  CHECK(run_cli("artifact verify " + out + " --target " + pair().target + " --draft " + pair().draft).exit_code == 0);
  CliResult audit = run_cli("audit arc --artifact " + out);
  CAPTURE(audit.out);
  CHECK(audit.exit_code == 0);
  CHECK(audit.out.find("gate recomputed from the stored deploy sites: equal") != std::string::npos);
  // The arc method deploys the calibrated theta and names its source.
  CliResult generated = run_cli("generate --model " + pair().target + " --draft " + pair().draft +
                                " --prompt 'def' --method arc --temperature 1 --max-new-tokens 8 --artifact " + out);
  CAPTURE(generated.err);
  CHECK(generated.exit_code == 0);
  CHECK((generated.out + generated.err).find("(artifact (calibrate arc") != std::string::npos);

  // At deploy (theta 0.3 given, over the artifact's): every relaxed token counted, t_d = t_m
  // apart, the contract's misses over the substituted ones, and request-clustered intervals.
  const std::string traces = out + ".deploy.sqlite";
  CliResult bench = run_cli("bench --threads 1 --model " + pair().target + " --draft " + pair().draft + " --artifact " + out +
                            " --methods arc --arc-theta 0.3 --temperature 1 --draft-budget fixed --max-prompts 2 --repeats 1 --workloads " +
                            audit_prompts() + " --traces " + traces);
  CAPTURE(bench.err);
  REQUIRE(bench.exit_code == 0);
  CliResult deploy = run_cli("audit arc --threads 1 --artifact " + out + " --traces " + traces + " --model " + pair().target + " --workloads " +
                             audit_prompts());
  CAPTURE(deploy.out);
  CAPTURE(deploy.err);
  CHECK((deploy.exit_code == 0 || deploy.exit_code == 1));  // 1: a DRIFT line, reported
  long long relaxed = -1, argmax = -1;
  const size_t at = deploy.out.find(" relaxed tokens: ");
  REQUIRE(at != std::string::npos);
  REQUIRE(std::sscanf(deploy.out.c_str() + deploy.out.rfind('\n', at) + 1, " %lld relaxed tokens: %lld with t_d = t_m", &relaxed, &argmax) == 2);
  CHECK(relaxed > 0);
  CHECK(argmax <= relaxed);
  CHECK(deploy.out.find("request-clustered") != std::string::npos);
  CHECK(deploy.out.find("the gate's contract: JS > 0.3 nats on at most 0.5") != std::string::npos);
  // The contract's "all" row counts exactly the substituted relaxed tokens.
  const size_t contract = deploy.out.find("the gate's contract");
  const size_t row = deploy.out.find("\n    all ", contract);
  REQUIRE(row != std::string::npos);
  long long requests = -1, tokens = -1;
  REQUIRE(std::sscanf(deploy.out.c_str() + row, " all all %lld %lld", &requests, &tokens) == 2);
  CHECK(tokens == relaxed - argmax);
  CHECK(requests >= 1);

  const std::string again = fresh("arc-deploy-again");
  REQUIRE(run_cli(calibrate_arc(again, gate)).exit_code == 0);
  require_same_arc(a, read_artifact(again));
  CHECK((read_artifact(again).arc->gate == a.arc->gate));

  // Sharded in two stages: the pilot's shards merge into a pilot (the whole run's constants, no
  // gate, deployable only with a typed theta); the deploy stage's shards, run with that pilot
  // (3 shards against the pilot's 2), merge into what the unsharded run wrote, gate and theta included.
  const std::string p0 = fresh("arc-pilot-0"), p1 = fresh("arc-pilot-1"), pilot = fresh("arc-pilot");
  REQUIRE(run_cli(calibrate_arc(p0, gate + " --stage pilot --shard 0/2")).exit_code == 0);
  REQUIRE(run_cli(calibrate_arc(p1, gate + " --stage pilot --shard 1/2")).exit_code == 0);
  CliResult pilot_merge = run_cli("artifact merge --out " + pilot + " " + p1 + " " + p0);
  CAPTURE(pilot_merge.err);
  REQUIRE(pilot_merge.exit_code == 0);
  const Artifact piloted = read_artifact(pilot);
  REQUIRE(piloted.arc);
  CHECK(is_arc_pilot(*piloted.arc));
  CHECK(!has_deploy_sites(*piloted.arc));
  CHECK(piloted.arc->gate.empty());
  CHECK(piloted.thresholds.empty());
  CHECK((piloted.arc->constants == a.arc->constants));
  CHECK(std::none_of(piloted.arc->samples.begin(), piloted.arc->samples.end(), [](const ArcSample& s) { return s.deploy_site; }));
  const std::string generate_arc = "generate --model " + pair().target + " --draft " + pair().draft +
                                   " --prompt 'def' --method arc --temperature 1 --max-new-tokens 4 --artifact " + pilot;
  require_one_line_error(run_cli(generate_arc), "is a pilot");
  CHECK(run_cli(generate_arc + " --arc-theta 0.5").exit_code == 0);
  require_one_line_error(run_cli(calibrate_arc(fresh("arc-from-shard"), gate + " --stage deploy --pilot " + p0)), "merge the pilot's shards");
  require_one_line_error(run_cli(calibrate_arc(fresh("arc-from-other"), " --theta-grid 0.9,0.5 --js-tolerance 0.3 --risk 0.5 --stage deploy --pilot " + pilot)),
                         "other settings");
  std::vector<std::string> deploy_shards;
  for (int i = 0; i < 3; ++i) {
    deploy_shards.push_back(fresh("arc-deploy-shard-" + std::to_string(i)));
    CliResult shard = run_cli(calibrate_arc(deploy_shards.back(), gate + " --stage deploy --pilot " + pilot + " --shard " + std::to_string(i) + "/3"));
    CAPTURE(shard.err);
    REQUIRE(shard.exit_code == 0);
  }
  const std::string staged = fresh("arc-deploy-merged");
  CliResult deploy_merge = run_cli("artifact merge --out " + staged + " " + deploy_shards[2] + " " + deploy_shards[0] + " " + deploy_shards[1]);
  CAPTURE(deploy_merge.err);
  REQUIRE(deploy_merge.exit_code == 0);
  CHECK(deploy_merge.out.find("arc gate: theta ") != std::string::npos);
  const Artifact merged = read_artifact(staged);
  require_same_arc(a, merged);
  CHECK((merged.arc->gate == a.arc->gate));
  CHECK((merged.thresholds == a.thresholds));
  CHECK(run_cli("artifact diff " + staged + " " + out).exit_code == 0);
  // Unsharded, the deploy stage writes the same.
  const std::string one_deploy = fresh("arc-deploy-stage");
  REQUIRE(run_cli(calibrate_arc(one_deploy, gate + " --stage deploy --pilot " + pilot)).exit_code == 0);
  require_same_arc(a, read_artifact(one_deploy));
  CHECK((read_artifact(one_deploy).thresholds == a.thresholds));

  const std::string killed = fresh("arc-deploy-killed");
  const std::string command = "timeout -s KILL 1 " + std::string(SPECD_CLI) + " " + calibrate_arc(killed, gate) + " > /dev/null 2>&1";
  const int status = std::system(command.c_str());
  CAPTURE(status);
  if (!std::filesystem::exists(killed + "/manifest.json")) {
    CliResult resumed = run_cli(calibrate_arc(killed, gate + " --resume"));
    CAPTURE(resumed.err);
    REQUIRE(resumed.exit_code == 0);
  }
  require_same_arc(a, read_artifact(killed));

  require_one_line_error(run_cli(calibrate_arc(fresh("arc-deploy-shard"), "--shard 0/2")), "--shard");
  require_one_line_error(run_cli(calibrate_arc(fresh("arc-bad-stage"), "--stage half")), "--stage");
  require_one_line_error(run_cli(calibrate_arc(fresh("arc-stage-candidates"), kCandidates + " --stage pilot")), "--stage");
  require_one_line_error(run_cli(calibrate_arc(fresh("arc-deploy-no-pilot"), "--stage deploy")), "--pilot");
  require_one_line_error(run_cli(calibrate_arc(fresh("arc-pilot-no-stage"), "--pilot " + out)), "--pilot");
  require_one_line_error(run_cli(calibrate_arc(fresh("arc-bad-sites"), "--sites all")), "--sites");
  require_one_line_error(run_cli(calibrate_arc(fresh("arc-bad-grid"), "--theta-grid 0.9,x")), "--theta-grid");
  require_one_line_error(run_cli(calibrate_arc(fresh("arc-bad-grid2"), "--theta-grid 0.5,0.5")), "--theta-grid");
  require_one_line_error(run_cli(calibrate_arc(fresh("arc-bad-tolerance"), "--js-tolerance 0.7")), "--js-tolerance");
  require_one_line_error(run_cli(calibrate_arc(fresh("arc-bad-risk"), "--risk 0")), "--risk");
  require_one_line_error(run_cli(calibrate_arc(fresh("arc-bad-confidence"), "--confidence 0.4")), "--confidence");
}

TEST_CASE("calibrate arc: bad options are refused in one line naming them", "[calibrate][arc]") {
  require_one_line_error(run_cli(calibrate_arc(fresh("arc-bad-delta"), "--delta 1.5")), "--delta");
  require_one_line_error(run_cli(calibrate_arc(fresh("arc-bad-rule"), "--rule loose")), "--rule");
  require_one_line_error(run_cli(calibrate_arc(fresh("arc-bad-buckets"), "--buckets entropy:0.5")), "--buckets");
  require_one_line_error(run_cli(calibrate_arc(fresh("arc-bad-k"), "--candidates 1")), "--candidates");
  require_one_line_error(run_cli("audit arc --artifact " + fresh("arc-none")), "arc-none");
}

TEST_CASE("calibrate arc --samples-per-prompt: every calibration and audit prompt K times, the audit's decodes held out", "[calibrate][arc]") {
  const std::string out = fresh("arc-k2");
  CliResult r = run_cli(calibrate_arc(out, "--samples-per-prompt 2"));
  CAPTURE(r.err);
  REQUIRE(r.exit_code == 0);
  const Artifact a = read_artifact(out);
  // 7 calibration prompts then 4 audit prompts, twice: unit u is sample u / 11 of prompt u % 11.
  REQUIRE(a.arc->prompts.size() == 22);
  for (size_t u = 0; u < 22; ++u) CHECK(a.arc->prompts[u].id == a.arc->prompts[u % 11].id);
  REQUIRE(!a.arc->samples.empty());
  for (const ArcSample& s : a.arc->samples) CHECK(s.held_out == (s.prompt % 11 >= 7));
  CHECK(run_cli("artifact verify " + out + " --target " + pair().target + " --draft " + pair().draft).exit_code == 0);
}

TEST_CASE("deploy refuses an artifact verify refuses: a threshold out of its range, in one line naming the file and field", "[calibrate]") {
  const std::string out = fresh("tampered");
  REQUIRE(run_cli(calibrate(out, "--max-prompts 2")).exit_code == 0);
  {
    sqlite::Database db(out + "/calibration.sqlite", sqlite::Database::Mode::ReadWriteCreate);
    db.exec("UPDATE thresholds SET value = -3 WHERE policy = 'csd' AND name = 'lambda'");
  }
  // Sealed again, as a tamperer would: only the value's own check can find it.
  nlohmann::json manifest = nlohmann::json::parse(slurp(out + "/manifest.json"));
  manifest["files"]["calibration.sqlite"]["sha256"] = sha256_file(out + "/calibration.sqlite");
  write_text(out + "/manifest.json", manifest.dump(2));
  const std::string expected = out + "/calibration.sqlite: thresholds (csd, lambda): ";
  const CliResult verify = run_cli("artifact verify " + out);
  CHECK(verify.exit_code == 2);
  CHECK(verify.out.rfind(expected, 0) == 0);
  for (const std::string method : {"csd", "sd"}) {
    const CliResult deploy = run_cli("generate --model " + pair().target + " --draft " + pair().draft + " --prompt 'def' --method " + method +
                                     " --max-new-tokens 4 --artifact " + out);
    require_one_line_error(deploy, expected);
  }
}
