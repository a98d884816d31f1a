#pragma once
// Building a decoding method by name: its drafter, optional pruner, acceptor and draft limits (a
// Policy, design.md) from the options and the artifact. What each method is (draft model,
// calibration, lossless, family) is the catalog's (method_catalog.h). A new policy is one file (its
// drafter, pruner or acceptor), one entry in the catalog and one in method_registry.cpp's builders.
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "decode/speculative.h"
#include "sampling/sampler.h"
#include "speculative/acceptor.h"
#include "speculative/drafter.h"
#include "speculative/method_catalog.h"
#include "speculative/method_options.h"
#include "speculative/pruner.h"

namespace specd {

class LlamaModel;
struct Artifact;
class CorrectionMemory;
class StaticSam;

// What a factory builds from.
struct MethodContext {
  const LlamaModel& target;
  std::shared_ptr<const LlamaModel> draft;  // null when no draft model was given
  const SamplingParams& sampling;
  const MethodOptions& options;
  const Artifact* artifact;                 // null when no artifact was given
  std::string artifact_name = "artifact";   // how errors name it (its directory)
};

// Parts built once from the artifact and shared by every policy made with them (a server's
// requests): CSD's correction memory and SAM's corpus automaton. Null: each policy builds its own.
struct SharedParts {
  std::shared_ptr<CorrectionMemory> memory;
  std::shared_ptr<const StaticSam> sam_corpus;
};

struct Policy {
  std::string method;
  bool autoregressive = false;  // "ar": the loop with a drafter of nothing (decode/autoregressive.h)
  bool lossless = true;
  std::unique_ptr<Drafter> drafter;
  std::unique_ptr<Pruner> pruner;  // null: verify the whole draft
  std::unique_ptr<Acceptor> acceptor;
  int32_t max_nodes = 0, max_depth = 0;
  std::unique_ptr<DraftBudget> budget;  // null: fixed budget
  bool root_entropy = true;        // in the step traces (SpeculativeOptions::root_entropy)
  // What the drafter or acceptor borrows (SAM's fallback drafter and corpus, CSD's memory).
  std::vector<std::shared_ptr<const void>> owned;
  std::shared_ptr<CorrectionMemory> memory;  // CSD's correction memory, when the method has one
};

// Builds a method: InputError for an unknown method, a missing draft model or artifact part, a
// draft whose vocabulary differs from the target's, or an option out of range.
Policy make_policy(const std::string& method, const MethodContext& context, const SharedParts& shared = {});

// The loop's options for a request decoded with `policy`: its draft limits, budget and pruner.
SpeculativeOptions loop_options(const Policy& policy, const GenerateOptions& options);

// Decodes one prompt with a policy ("ar" included); `on_step` as SpeculativeOptions::on_step.
SpeculativeOutput decode_with(const LlamaModel& target, Policy& policy, const std::vector<int32_t>& prompt,
                              const GenerateOptions& options, decltype(SpeculativeOptions::on_step) on_step = {});

}  // namespace specd
