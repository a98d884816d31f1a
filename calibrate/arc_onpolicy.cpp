#include "calibrate/arc_onpolicy.h"

#include <variant>

#include "methods/method_registry.h"
#include "model/llama_model.h"

namespace specd {

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
