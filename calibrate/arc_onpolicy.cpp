#include "calibrate/arc_onpolicy.h"

#include <algorithm>
#include <map>
#include <set>
#include <variant>

#include "calibrate/artifact_merge.h"
#include "methods/method_registry.h"
#include "model/llama_model.h"
#include "util/error.h"

namespace specd {

ArcStage parse_arc_stage(const std::string& text, const std::string& where) {
  if (text == "all") return ArcStage::all;
  if (text == "pilot") return ArcStage::pilot;
  if (text == "deploy") return ArcStage::deploy;
  input_error(where, "must be all, pilot or deploy (got '" + text + "')");
}

void take_arc_pilot(const Artifact& pilot, const Artifact& pair, const CalibrationProvenance& settings, const std::vector<int32_t>& units,
                    const std::string& where, ArcCalibration& into) {
  if (!pilot.arc) input_error(where, "holds no ARC calibration to take a pilot from");
  const ArcCalibration& arc = *pilot.arc;
  if (portable_fingerprint(pilot.target) != portable_fingerprint(pair.target) ||
      portable_fingerprint(pilot.draft) != portable_fingerprint(pair.draft))
    input_error(where, "is a pilot of another target or draft");
  if (arc.provenance.shard_count != 1)
    input_error(where, "is shard " + std::to_string(arc.provenance.shard_index) + " of " + std::to_string(arc.provenance.shard_count) +
                           " of a pilot: merge the pilot's shards first (specd artifact merge)");
  CalibrationProvenance ours = arc.provenance;
  ours.options.erase("stage");
  if (calibration_settings(ours) != calibration_settings(settings))
    input_error(where, "is a pilot of other settings (prompts, seed, sampling or options differ from this run's)");
  if (arc.constants.empty()) input_error(where, "holds no fitted ARC constants");
  std::map<int32_t, const CalibratedPrompt*> rows;
  for (const CalibratedPrompt& p : arc.prompts) rows[p.index] = &p;
  for (int32_t unit : units) {
    const auto row = rows.find(unit);
    if (row == rows.end()) input_error(where, "lacks the pilot's unit " + std::to_string(unit) + " (a pilot merged from some of its shards?)");
    into.prompts.push_back(*row->second);
  }
  const std::set<int32_t> owned(units.begin(), units.end());
  for (const ArcSample& s : arc.samples)
    if (!s.deploy_site && owned.count(s.prompt)) into.samples.push_back(s);
}

std::optional<ArcGateChoice> apply_arc_gate(Artifact& artifact, const std::string& where) {
  if (!artifact.arc || !has_deploy_sites(*artifact.arc)) return std::nullopt;
  const ArcGateChoice choice = choose_arc_gate(artifact.arc->gate, arc_gate_options_of(*artifact.arc, where));
  auto& rows = artifact.thresholds;
  const auto is_theta = [](const Threshold& t) { return t.policy == kArcPolicy && t.name == "theta"; };
  rows.erase(std::remove_if(rows.begin(), rows.end(), [&](const Threshold& t) { return is_theta(t) && t.source.rfind("calibrate arc", 0) == 0; }),
             rows.end());
  if (std::none_of(rows.begin(), rows.end(), is_theta)) rows.push_back(Threshold{kArcPolicy, "theta", choice.theta, choice.reason});
  return choice;
}

void collect_arc_deploy_sites(const LlamaModel& target, std::shared_ptr<const LlamaModel> draft, const Tokenizer& tokenizer,
                              const std::vector<ArcDeployWork>& work, const std::vector<int32_t>& stop_tokens,
                              const ArcCalibration& pilot, const ArcSampleOptions& options, CalibrationJournal& journal,
                              Progress& progress) {
  const std::set<int32_t> done = journal.finished_prompts(kArcPolicy);
  // The policy reads its constants from an artifact, as a deployment does.
  Artifact artifact;
  artifact.arc = pilot;
  for (const ArcDeployWork& w : work) {
    if (done.count(w.index)) continue;
    MethodOptions arc;
    arc.tree = options.tree;
    arc.adaptive_budget = false;
    arc.arc_theta = w.theta;
    auto make = [&](const SamplingParams& sampling) {
      return make_policy("arc", MethodContext{target, draft, sampling, arc, &artifact, "the pilot's constants"});
    };
    // Every child the gate scored (all children of a node the target rejected), relaxed or not.
    auto collect = [&](const DraftTree&, const AcceptResult& result, int32_t step, int64_t root_position, std::vector<ArcSite>& sites) {
      if (const auto* scored = std::get_if<ArcAcceptance>(&result.detail))
        for (const LtsNode& node : scored->lts) {
          ArcSite site{step, static_cast<int32_t>(node.depth), root_position + node.depth, root_position, static_cast<int32_t>(node.token)};
          site.deploy_site = true;
          site.relaxed = node.relaxed;
          site.theta = w.theta;
          sites.push_back(site);
        }
    };
    decode_arc_prompt(target, tokenizer, ArcPromptWork{w.index, w.item, false}, stop_tokens, pilot.whitening, options, make, collect,
                      journal);
    progress.step("prompt");
  }
}

}  // namespace specd
