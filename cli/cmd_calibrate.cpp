// specd calibrate: offline work per model pair, written into the pair's artifact directory
// (runtime/artifact/artifact.h). csd: the rejection pairs of standard speculative decoding (CSD's
// correction memory); sam-corpus: the target's greedy answers (SAM-Decoding's static corpus).
// Parsing, loading and printing only: the work is in calibrate/.
#include <algorithm>
#include <cmath>
#include <optional>
#include <sstream>
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>

#include "artifact/artifact_reader.h"
#include "artifact/csd_pairs.h"
#include "artifact/fingerprint.h"
#include "arc_tables.h"
#include "calibrate_common.h"
#include "stats/arc_fit.h"
#include "speculative/method_params.h"
#include "stats/arc_gate.h"
#include "calibrate/arc_onpolicy.h"
#include "calibrate/arc_samples.h"
#include "calibrate/artifact_writer.h"
#include "calibrate/calibration_journal.h"
#include "calibrate/calibration_runs.h"
#include "commands.h"
#include "io/output_path.h"
#include "io/sha256.h"
#include "method_options.h"
#include "model/llama_model.h"
#include "model_files.h"
#include "options.h"
#include "run_metadata.h"
#include "util/error.h"
#include "util/machine.h"
#include "util/progress.h"
#include "workload/workload.h"

namespace specd::cli {
namespace {

void set_threshold(Artifact& artifact, const std::string& policy, const std::string& name, double value, const std::string& source) {
  for (Threshold& t : artifact.thresholds)
    if (t.policy == policy && t.name == name) return;  // a swept value stays
  artifact.thresholds.push_back(Threshold{policy, name, value, source});
}

// Decoding time over the prompts, across resumed runs (the journal keeps each prompt's).
double total_wall_ms(const std::vector<CalibratedPrompt>& prompts) {
  double total = 0;
  for (const CalibratedPrompt& p : prompts) total += p.wall_ms;
  return total;
}

std::string token_text(const Tokenizer& tokenizer, int32_t id) {
  std::string text = tokenizer.decode({id}, /*skip_special_tokens=*/false);
  std::string shown;
  for (char c : text) shown += c == '\n' ? std::string("\\n") : c == '\t' ? std::string("\\t") : std::string(1, c);
  return "'" + shown + "'";
}

int run_csd(const Args& args) {
  CommonArgs a;
  CalibrationRunOptions options;
  options.sampling.temperature = 0.6;
  po::options_description desc("specd calibrate csd");
  add_common(desc, a, /*with_draft=*/true);
  desc.add_options()
      ("gamma", po::value(&options.gamma)->default_value(6), "draft chain length")
      ("temperature", po::value(&options.sampling.temperature)->default_value(0.6), "sampling temperature of the calibration runs")
      ("top-k", po::value(&options.sampling.top_k)->default_value(0), "target and draft top-k")
      ("top-p", po::value(&options.sampling.top_p)->default_value(1.0), "target and draft top-p")
      ("seed", po::value(&options.sampling.seed)->default_value(0), "prompt i is decoded with seed + i (see --samples-per-prompt)");
  add_samples_per_prompt(desc, a);
  po::variables_map vm;
  if (!parse(args, desc, vm,
             "usage: specd calibrate csd [--target T] [--draft D] [--prompts F] --out DIR [--samples-per-prompt K] [--resume] [--shard I/N|auto[/N]]"))
    return 0;
  check_sampling_options(options.sampling);
  check_samples_per_prompt(a, options.sampling);
  if (options.gamma < 1) input_error("--gamma", "must be at least 1");
  CalibrationProvenance provenance;
  const std::vector<WorkloadItem> items = prepare(a, provenance, joined(args, "csd"));
  options.shard_index = a.shard_index;
  options.shard_count = a.shard_count;
  options.max_new_tokens = a.max_new_tokens;
  options.samples_per_prompt = a.samples_per_prompt;
  provenance.seed = options.sampling.seed;
  provenance.temperature = options.sampling.temperature;
  provenance.top_k = options.sampling.top_k;
  provenance.top_p = options.sampling.top_p;
  provenance.options = {{"gamma", options.gamma}, {"max_new_tokens", a.max_new_tokens}, {"samples_per_prompt", a.samples_per_prompt}};

  ModelFiles files = open_model_files(a.target_dir, "", a.device);
  a.draft_dir = draft_dir_for(a.draft_dir, a.target_dir);
  std::shared_ptr<const LlamaModel> draft = LlamaModel::load(a.draft_dir, a.device);
  if (draft->config().vocab_size != files.model->config().vocab_size)
    input_error(a.draft_dir, "the draft's vocabulary differs from the target's");
  Artifact artifact = artifact_for(a.out, a.target_dir, a.draft_dir);
  const std::string journal_path = a.out + ".csd-journal.sqlite";
  CalibrationJournal journal(journal_path, identity(kCsdPolicy, artifact, provenance), a.resume, a.out);
  note_machine(journal, provenance, "calibrate csd");

  const size_t owned = shard_units(static_cast<int64_t>(items.size()), a.samples_per_prompt, a.shard_index, a.shard_count).size();
  const size_t already = journal.finished_prompts(kCsdPolicy).size();
  if (already) std::fprintf(stderr, "calibrate csd: resuming, %zu of %zu decodes already done\n", already, owned);
  Progress progress(static_cast<int64_t>(owned - already), "calibrate csd", "decodes");
  collect_csd_rejections(*files.model, draft, files.tokenizer, items, files.stop_tokens, options, journal, progress);
  progress.done();

  CsdCalibration csd;
  csd.provenance = provenance;
  csd.prompts = journal.prompts(kCsdPolicy);
  csd.rejections = journal.rejections(kCsdPolicy);
  const double wall_ms = total_wall_ms(csd.prompts);
  int64_t drafted = 0, accepted = 0, tokens = 0;
  for (const CalibratedPrompt& p : csd.prompts) drafted += p.drafted, accepted += p.accepted, tokens += p.new_tokens;
  csd.provenance.wall_s = wall_ms / 1000.0;
  csd.pairs = summarize_pairs(csd.rejections);
  deliver_to_artifact(journal, a.out, a.target_dir, a.draft_dir, [&](Artifact& current) {
    current.csd = csd;
    set_threshold(current, kCsdPolicy, "lambda", 6, "paper default (the CSD paper 5.1)");
    set_threshold(current, kCsdPolicy, "tau", 0.01, "paper default (the CSD paper 5.1)");
  });

  const auto& pairs = csd.pairs;
  const double minutes = wall_ms / 60000.0;
  std::printf("wrote %s: CSD calibration of %s with %s, shard %d/%d\n", a.out.c_str(), a.target_dir.c_str(), a.draft_dir.c_str(),
              a.shard_index, a.shard_count);
  std::printf("  %zu decodes (%d per prompt), %lld new tokens, %.1f%% of %lld drafted tokens accepted (gamma %d, T=%.2f)\n",
              csd.prompts.size(), a.samples_per_prompt, static_cast<long long>(tokens), drafted ? 100.0 * accepted / drafted : 0.0, static_cast<long long>(drafted), options.gamma,
              options.sampling.temperature);
  std::printf("  %zu rejections in %zu distinct (draft, target) pairs; decoding took %.1f s: %.1f decodes/min, %.0f rejections/min\n",
              csd.rejections.size(), pairs.size(), wall_ms / 1000.0, minutes > 0 ? csd.prompts.size() / minutes : 0.0,
              minutes > 0 ? csd.rejections.size() / minutes : 0.0);
  std::printf("  Pareto shape: the top 20%% of pairs cover %.1f%% of the rejections (the paper saw 69%%)\n",
              100.0 * pareto_share(pairs, 0.2));
  std::printf("  top pairs (draft -> target: count, median logit gap z(draft) - z(target) in nats):\n");
  for (size_t i = 0; i < std::min<size_t>(10, pairs.size()); ++i)
    std::printf("    %-14s -> %-14s %5lld  %6.2f\n", token_text(files.tokenizer, pairs[i].draft_token).c_str(),
                token_text(files.tokenizer, pairs[i].target_token).c_str(), static_cast<long long>(pairs[i].count), pairs[i].gap_median);
  return 0;
}

// What identifies the audit prompts (their ids, categories and texts), for the provenance and --resume.
std::string items_digest(const std::vector<WorkloadItem>& items) {
  std::string all;
  for (const WorkloadItem& item : items) {
    all += item.id + '\n' + item.category + '\n' + std::to_string(item.max_new_tokens) + '\n';
    for (const std::string& turn : item.turns) all += turn + '\0';
  }
  return sha256_bytes(all);
}

// "0.9,0.7,0.5": the grid of --theta-grid, strict first as given; each value read as the arc
// method's theta parameter.
std::vector<double> parse_theta_grid(const std::string& text) {
  const MethodParam& theta = *find_param("arc", "theta");
  std::vector<double> grid;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    const double v = parse_param_value(theta, item, "--theta-grid");
    if (std::find(grid.begin(), grid.end(), v) != grid.end()) input_error("--theta-grid", "repeats " + item);
    grid.push_back(v);
  }
  if (grid.empty()) input_error("--theta-grid", "is empty");
  return grid;
}

int run_arc(const Args& args) {
  CommonArgs a;
  ArcSampleOptions options;
  options.run.sampling.temperature = 1.0;
  double delta = 0.05;
  std::string audit_dir = data_dir() + "/workloads", buckets_text, rule = "paper";
  int64_t audit_per_category = 4;
  std::string sites = "deploy", theta_grid = "0.9,0.7,0.5,0.3,0.1", stage_text = "all", pilot_dir;
  ArcGateOptions gate;
  po::options_description desc("specd calibrate arc");
  add_common(desc, a, /*with_draft=*/true);
  desc.add_options()
      ("delta", po::value(&delta)->default_value(0.05), "risk level: constants are (1 - delta) conformal quantiles")
      ("temperature", po::value(&options.run.sampling.temperature)->default_value(1.0), "sampling temperature calibrated for (arc refuses other settings)")
      ("top-k", po::value(&options.run.sampling.top_k)->default_value(0), "target top-k calibrated for")
      ("top-p", po::value(&options.run.sampling.top_p)->default_value(1.0), "target top-p calibrated for")
      ("seed", po::value(&options.run.sampling.seed)->default_value(0), "prompt i is decoded with seed + i (see --samples-per-prompt)")
      ("candidates", po::value(&options.top_k)->default_value(10), "K: t_d is drawn from the target's top-K, and JS is taken over the union of both top-K")
      ("mu", po::value(&options.mu)->default_value(1e-4), "JS smoothing added to each token of that union")
      ("epsilon", po::value(&options.epsilon)->default_value(1e-6), "clamp of the processed probabilities before the log")
      ("rule", po::value(&rule)->default_value("paper"),
       "paper: c'_s and alpha*kappa at 1 - delta (Algorithm 1; JS <= U_min then holds only at 1 - 2 delta); split: both at 1 - delta/2, so that it holds at 1 - delta")
      ("buckets", po::value(&buckets_text)->default_value("none"), "constants per bucket besides 'all': depth, entropy:E1,E2,..., or depth+entropy:...")
      ("audit-prompts", po::value(&audit_dir)->default_value(audit_dir), "held-out audit prompts: a workload directory (one file per category)")
      ("audit-per-category", po::value(&audit_per_category)->default_value(4), "audit prompts per category (0: no audit)")
      ("tree-top-k", po::value(&options.tree.top_k)->default_value(options.tree.top_k), "draft tree of the sd-tree runs: children per node")
      ("tree-depth", po::value(&options.tree.depth)->default_value(options.tree.depth), "draft tree depth")
      ("tree-nodes", po::value(&options.tree.nodes)->default_value(options.tree.nodes), "draft tree nodes")
      ("sites", po::value(&sites)->default_value(sites),
       "deploy: the constants from candidate samples on the even calibration prompts (the pilot), then the arc policy itself on the odd "
       "ones, one gate threshold per prompt block, and the gate chosen where it acts; candidates: the paper's candidate samples only")
      ("stage", po::value(&stage_text)->default_value(stage_text),
       "deploy sites: all (the pilot, then the deploy sites; unsharded), pilot (the pilot alone; shardable, merge its shards), "
       "deploy (the deploy sites with --pilot's constants; shardable, merging its shards gives the whole calibration)")
      ("pilot", po::value(&pilot_dir), "--stage deploy: the finished pilot (merged pilot shards, or a whole calibration of the same settings)")
      ("theta-grid", po::value(&theta_grid)->default_value(theta_grid), "deploy sites: the LTS thresholds tried, each on its own prompts")
      ("js-tolerance", po::value(&gate.js_tolerance)->default_value(gate.js_tolerance), "deploy sites: a relaxed token misses when its next-step JS exceeds this (nats)")
      ("risk", po::value(&gate.risk)->default_value(gate.risk), "deploy sites: the share of relaxed tokens allowed to miss")
      ("confidence", po::value(&gate.confidence)->default_value(gate.confidence), "deploy sites: confidence of that bound, family-wise over the grid");
  add_samples_per_prompt(desc, a);
  po::variables_map vm;
  if (!parse(args, desc, vm, "usage: specd calibrate arc [--target T] [--draft D] [--prompts F] --out DIR [--delta 0.05] [--temperature T] [--resume] [--shard I/N|auto[/N]]"))
    return 0;
  check_sampling_options(options.run.sampling);
  check_samples_per_prompt(a, options.run.sampling);
  if (!(delta > 0 && delta < 1)) input_error("--delta", "must be in (0, 1)");
  if (options.top_k < 2) input_error("--candidates", "must be at least 2 (t_d differs from t_m)");
  if (!(options.mu > 0 && options.mu < 0.01)) input_error("--mu", "must be in (0, 0.01)");
  if (!(options.epsilon > 0 && options.epsilon < 0.01)) input_error("--epsilon", "must be in (0, 0.01)");
  if (audit_per_category < 0) input_error("--audit-per-category", "must not be negative");
  if (options.tree.top_k < 1 || options.tree.depth < 1 || options.tree.nodes < options.tree.depth)
    input_error("--tree-nodes", "the tree needs top-k and depth >= 1 and at least depth nodes");
  const ArcBuckets buckets = parse_arc_buckets(buckets_text, "--buckets");
  if (rule != "paper" && rule != "split") input_error("--rule", "must be paper or split (got '" + rule + "')");
  const bool deploy_sites = sites == "deploy";
  if (!deploy_sites && sites != "candidates") input_error("--sites", "must be deploy or candidates (got '" + sites + "')");
  const ArcStage stage = parse_arc_stage(stage_text, "--stage");
  if (stage != ArcStage::all && !deploy_sites) input_error("--stage", "stages are those of --sites deploy");
  if ((stage == ArcStage::deploy) != !pilot_dir.empty()) input_error("--pilot", "is given with --stage deploy, and only with it");
  if (deploy_sites) {
    gate.thetas = parse_theta_grid(theta_grid);
    if (!(gate.js_tolerance > 0 && gate.js_tolerance < std::log(2.0))) input_error("--js-tolerance", "must be in (0, ln 2)");
    if (!(gate.risk > 0 && gate.risk < 1)) input_error("--risk", "must be in (0, 1)");
    if (!(gate.confidence > 0.5 && gate.confidence < 1)) input_error("--confidence", "must be in (0.5, 1)");
  }
  CalibrationProvenance provenance;
  const std::vector<WorkloadItem> items = prepare(a, provenance, joined(args, "arc"));
  // The deploy sites need the pilot's constants, which need every pilot sample: sharded, the two
  // stages run one after the other, with a merge between.
  if (deploy_sites && stage == ArcStage::all && a.shard_count > 1)
    input_error("--shard", "the deploy sites need the whole pilot's constants: shard --stage pilot, merge its shards, then shard --stage deploy "
                           "--pilot MERGED (docs/cluster.md)");
  const std::vector<WorkloadItem> audit_items =
      audit_per_category > 0 ? read_workload_suite(audit_dir, {}, audit_per_category) : std::vector<WorkloadItem>{};
  options.run.shard_index = a.shard_index;
  options.run.shard_count = a.shard_count;
  options.run.max_new_tokens = a.max_new_tokens;
  provenance.seed = options.run.sampling.seed;
  provenance.temperature = options.run.sampling.temperature;
  provenance.top_k = options.run.sampling.top_k;
  provenance.top_p = options.run.sampling.top_p;
  provenance.options = {{"delta", delta}, {"rule", rule}, {"candidates", options.top_k}, {"mu", options.mu}, {"epsilon", options.epsilon},
                        {"buckets", buckets_text}, {"tree", {{"top_k", options.tree.top_k}, {"depth", options.tree.depth}, {"nodes", options.tree.nodes}}},
                        {"audit_prompts", portable_path(audit_dir)}, {"audit_per_category", audit_per_category},
                        {"audit_prompts_sha256", items_digest(audit_items)},
                        {"max_new_tokens", a.max_new_tokens}, {"samples_per_prompt", a.samples_per_prompt}, {"sites", sites}};
  if (deploy_sites)
    provenance.options.update({{"theta_grid", gate.thetas}, {"js_tolerance", gate.js_tolerance}, {"risk", gate.risk},
                               {"confidence", gate.confidence}});
  // A pilot is marked as one (it deploys nothing); a deploy stage's settings are the whole run's.
  if (stage == ArcStage::pilot) provenance.options["stage"] = "pilot";

  ModelFiles files = open_model_files(a.target_dir, "", a.device);
  a.draft_dir = draft_dir_for(a.draft_dir, a.target_dir);
  std::shared_ptr<const LlamaModel> draft = LlamaModel::load(a.draft_dir, a.device);
  if (draft->config().vocab_size != files.model->config().vocab_size)
    input_error(a.draft_dir, "the draft's vocabulary differs from the target's");
  Artifact artifact = artifact_for(a.out, a.target_dir, a.draft_dir);
  // The journal of a deploy stage is not the whole run's (it lacks the pilot's units).
  CalibrationProvenance journaled = provenance;
  if (stage == ArcStage::deploy) journaled.options["stage"] = "deploy";
  CalibrationJournal journal(a.out + ".arc-journal.sqlite", identity(kArcPolicy, artifact, journaled), a.resume, a.out);
  note_machine(journal, provenance, "calibrate arc");

  // The prompts are the calibration prompts followed by the audit prompts (held out), each
  // decoded K times; a shard owns unit % N. With deploy sites the odd calibration prompts are
  // decoded by the arc policy instead, prompt block b = (prompt / 2) % |grid| at the b-th theta,
  // and each stage's units are dealt to the shards in turn (unit % N would give an even N's shards
  // only pilot units or only deploy units). A stage decodes its own units; a deploy stage takes
  // the pilot's from --pilot.
  std::vector<ArcPromptWork> work;
  std::vector<ArcDeployWork> deploy_work;
  std::vector<int32_t> pilot_units;
  const int32_t deal = deploy_sites ? a.shard_count : 1;
  int64_t pilot_dealt = 0, deploy_dealt = 0;
  for (const CalibrationUnit& unit : shard_units(static_cast<int64_t>(items.size() + audit_items.size()), a.samples_per_prompt,
                                                 deal > 1 ? 0 : a.shard_index, deal > 1 ? 1 : a.shard_count)) {
    const bool held_out = unit.prompt >= static_cast<int32_t>(items.size());
    int64_t& dealt = deploy_sites && !is_arc_pilot_unit(unit.prompt, held_out) ? deploy_dealt : pilot_dealt;
    if (dealt++ % deal != a.shard_index % deal) continue;
    if (deploy_sites && !is_arc_pilot_unit(unit.prompt, held_out)) {
      if (stage != ArcStage::pilot)
        deploy_work.push_back({unit.index, &items[unit.prompt], gate.thetas[static_cast<size_t>(unit.prompt / 2) % gate.thetas.size()]});
    } else if (stage == ArcStage::deploy) {
      pilot_units.push_back(unit.index);
    } else {
      work.push_back({unit.index, held_out ? &audit_items[unit.prompt - items.size()] : &items[unit.prompt], held_out});
    }
  }
  ArcCalibration pilot_part;
  std::optional<ArcCalibration> pilot;
  if (stage == ArcStage::deploy) {
    const Artifact pilot_artifact = read_artifact(pilot_dir);
    take_arc_pilot(pilot_artifact, artifact, provenance, pilot_units, pilot_dir, pilot_part);
    pilot = *pilot_artifact.arc;
  }
  const size_t planned = work.size() + deploy_work.size();
  const size_t already = journal.finished_prompts(kArcPolicy).size();
  if (already) std::fprintf(stderr, "calibrate arc: resuming, %zu of %zu decodes already done\n", already, planned);
  Progress progress(static_cast<int64_t>(planned - already), "calibrate arc", "decodes");
  progress.note("whitening the target's embedding table");
  const std::vector<float> whitening = embedding_whitening(*files.model);
  collect_arc_samples(*files.model, draft, files.tokenizer, work, files.stop_tokens, whitening, options, journal, progress);

  ArcCalibration arc;
  arc.provenance = provenance;
  arc.delta = delta;
  arc.top_k = options.top_k;
  arc.mu = options.mu;
  arc.epsilon = options.epsilon;
  arc.whitening = whitening;
  if (!deploy_work.empty()) {
    // The pilot's constants (deploy sites never enter them) drive the on-policy runs.
    if (!pilot) {
      arc.prompts = journal.prompts(kArcPolicy);
      arc.samples = journal.arc_samples(kArcPolicy);
      fit_arc(arc, buckets, a.out);
    } else if (pilot->whitening != whitening) {
      input_error(pilot_dir, "the pilot's whitening differs from this target's");
    }
    progress.note("deploy sites: the arc policy on " + std::to_string(deploy_work.size()) + " prompts");
    collect_arc_deploy_sites(*files.model, draft, files.tokenizer, deploy_work, files.stop_tokens, pilot ? *pilot : arc, options, journal,
                             progress);
  }
  progress.done();
  // This run's decodes (their wall time is its own: a deploy stage's excludes its pilot's).
  arc.prompts = journal.prompts(kArcPolicy);
  arc.samples = journal.arc_samples(kArcPolicy);
  const double wall_ms = total_wall_ms(arc.prompts);
  // A deploy stage's time includes its pilot units' share of the pilot's (pro rata: the pilot's
  // artifact keeps no per-prompt times), so the merged shards add up to the whole calibration's.
  const double pilot_share_s =
      pilot ? pilot->provenance.wall_s * static_cast<double>(pilot_units.size()) / static_cast<double>(std::max<size_t>(1, pilot->prompts.size())) : 0.0;
  arc.provenance.wall_s = wall_ms / 1000.0 + pilot_share_s;
  if (pilot && !arc.provenance.machine.is_null() && !same_machine(pilot->provenance.machine, arc.provenance.machine)) {
    const std::string there = machine_text(pilot->provenance.machine);
    std::fprintf(stderr, "calibrate arc: the pilot ran on another machine (%s); this stage's time includes its share, so the provenance names none\n",
                 there.empty() ? "not recorded" : there.c_str());
    arc.provenance.machine = nullptr;
  }
  const size_t decodes = arc.prompts.size();
  int64_t calibration = 0, held_out = 0;
  for (const ArcSample& s : arc.samples) (s.held_out ? held_out : calibration) += 1;
  arc.prompts.insert(arc.prompts.end(), pilot_part.prompts.begin(), pilot_part.prompts.end());
  arc.samples.insert(arc.samples.end(), pilot_part.samples.begin(), pilot_part.samples.end());
  sort_arc_rows(arc);
  // A shard's samples are a part of the quantiles' input: `artifact merge` fits the whole.
  if (a.shard_count == 1) fit_arc(arc, buckets, a.out);
  std::optional<ArcGateChoice> choice;
  deliver_to_artifact(journal, a.out, a.target_dir, a.draft_dir, [&](Artifact& current) {
    current.arc = arc;
    // The gate's threshold follows its calibration (a shard's is chosen by the merge).
    if (a.shard_count == 1) choice = apply_arc_gate(current, a.out);
  });

  const double minutes = wall_ms / 60000.0;
  std::printf("wrote %s: ARC-Decode calibration of %s with %s, shard %d/%d, T=%.2f top-k %d top-p %.2f\n", a.out.c_str(),
              a.target_dir.c_str(), a.draft_dir.c_str(), a.shard_index, a.shard_count, options.run.sampling.temperature,
              options.run.sampling.top_k, options.run.sampling.top_p);
  std::printf("  %zu decodes (%d per prompt): %lld calibration samples, %lld held-out samples; %.1f s of decoding and probing: %.0f samples/min\n",
              decodes, a.samples_per_prompt, static_cast<long long>(calibration), static_cast<long long>(held_out), wall_ms / 1000.0,
              minutes > 0 ? (calibration + held_out) / minutes : 0.0);
  if (stage == ArcStage::deploy)
    std::printf("  with the pilot's %zu decodes from %s (their share of its decoding time: %.1f s)\n", pilot_part.prompts.size(), pilot_dir.c_str(),
                pilot_share_s);
  if (a.shard_count > 1) {
    std::printf("  a shard: its constants%s are fitted when the shards are merged (specd artifact merge)\n",
                stage == ArcStage::deploy ? " and gate" : "");
    return 0;
  }
  print_constants(arc.constants, delta);
  if (!arc.audit.empty()) print_audit(arc.audit, delta, "held-out");
  if (stage == ArcStage::pilot)
    std::printf("  a pilot: its constants drive the deploy sites (specd calibrate arc --stage deploy --pilot %s)\n", a.out.c_str());
  if (choice) {
    print_gate(arc.gate, gate.js_tolerance, gate.risk, gate.confidence);
    std::printf("  deployed theta = %g: %s\n", choice->theta, choice->reason.c_str());
  }
  return 0;
}

int run_sam_corpus(const Args& args) {
  CommonArgs a;
  po::options_description desc("specd calibrate sam-corpus");
  add_common(desc, a, /*with_draft=*/false);
  desc.add_options()("draft", po::value(&a.draft_dir), "the pair's draft model, when the artifact is for a pair (binds it)");
  po::variables_map vm;
  if (!parse(args, desc, vm, "usage: specd calibrate sam-corpus [--target T] [--prompts F] --out DIR [--resume] [--shard I/N|auto[/N]]")) return 0;
  CalibrationProvenance provenance;
  const std::vector<WorkloadItem> items = prepare(a, provenance, joined(args, "sam-corpus"));
  provenance.options = {{"max_new_tokens", a.max_new_tokens}};
  ModelFiles files = open_model_files(a.target_dir, "", a.device);
  Artifact artifact = artifact_for(a.out, a.target_dir, a.draft_dir);
  CalibrationJournal journal(a.out + ".sam-corpus-journal.sqlite", identity(kSamCorpusPolicy, artifact, provenance), a.resume, a.out);
  note_machine(journal, provenance, "calibrate sam-corpus");
  CalibrationRunOptions options;
  options.shard_index = a.shard_index;
  options.shard_count = a.shard_count;
  options.max_new_tokens = a.max_new_tokens;
  const size_t owned = shard_units(static_cast<int64_t>(items.size()), 1, a.shard_index, a.shard_count).size();
  Progress progress(static_cast<int64_t>(owned - journal.finished_prompts(kSamCorpusPolicy).size()), "calibrate sam-corpus", "prompts");
  collect_sam_corpus(*files.model, files.tokenizer, items, files.stop_tokens, options, journal, progress);
  progress.done();
  SamCorpusCalibration corpus;
  corpus.provenance = provenance;
  corpus.prompts = journal.prompts(kSamCorpusPolicy);
  corpus.documents = journal.documents(kSamCorpusPolicy);
  int64_t tokens = 0;
  for (const CalibratedPrompt& p : corpus.prompts) tokens += p.new_tokens;
  const double wall_ms = total_wall_ms(corpus.prompts);
  corpus.provenance.wall_s = wall_ms / 1000.0;
  deliver_to_artifact(journal, a.out, a.target_dir, a.draft_dir, [&](Artifact& current) {
    current.sam_corpus = corpus;
  });
  const double minutes = wall_ms / 60000.0;
  std::printf("wrote %s: SAM static corpus, shard %d/%d, %zu documents, %lld tokens; decoding took %.1f s: %.1f prompts/min, %.0f tokens/min\n",
              a.out.c_str(), a.shard_index, a.shard_count, corpus.documents.size(), static_cast<long long>(tokens), wall_ms / 1000.0,
              minutes > 0 ? corpus.documents.size() / minutes : 0.0, minutes > 0 ? tokens / minutes : 0.0);
  return 0;
}

}  // namespace

int run_calibrate(const Args& args) {
  const std::string usage = "usage: specd calibrate csd|arc|sam-corpus|sweep [options]   (specd calibrate PART --help)";
  if (args.empty() || args[0] == "--help" || args[0] == "-h") {
    std::printf("%s\n\ncsd          CSD's correction memory: rejection pairs of standard speculative decoding\n"
                "arc          ARC-Decode's constants (whitening, c'_s, alpha*kappa, tau_delta) and their held-out coverage audit\n"
                "sam-corpus   SAM-Decoding's static corpus: the target's greedy answers to calibration prompts\n"
                "sweep        a method's parameter grid measured against AR; the fastest run (within drift bounds) is deployed\n", usage.c_str());
    return 0;
  }
  const Args rest(args.begin() + 1, args.end());
  if (args[0] == "csd") return run_csd(rest);
  if (args[0] == "arc") return run_arc(rest);
  if (args[0] == "sam-corpus") return run_sam_corpus(rest);
  if (args[0] == "sweep") return run_calibrate_sweep(rest);
  input_error("calibrate", "unknown part '" + args[0] + "' (known: csd, arc, sam-corpus, sweep)");
}

}  // namespace specd::cli
