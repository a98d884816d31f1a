#include "pair_eval.h"

#include <ATen/ATen.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <iterator>
#include <sstream>

#include "io/expected_tensors.h"
#include "io/read_file.h"
#include "model/llama_model.h"
#include "token_data.h"
#include "tokenizer/tokenizer.h"
#include "util/error.h"

namespace specd::training {
namespace {

int64_t parameter_count(const ModelConfig& cfg) {
  int64_t count = 0;
  for (const ExpectedTensor& t : expected_tensors(cfg)) count += element_count(t.shape);
  return count;
}

at::Tensor log_probs(const LlamaModel& model, const std::vector<int64_t>& tokens) {
  KvCache cache = model.new_cache(static_cast<int64_t>(tokens.size()));
  ForwardRequest request;
  request.tokens = tokens;
  FloatRows logits = model.forward(cache, request).logits;
  return at::log_softmax(at::from_blob(logits.values.data(), {logits.rows, logits.cols}, at::kFloat), -1);
}

std::string millions(int64_t n) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(2) << static_cast<double>(n) / 1e6 << "M";
  return out.str();
}

}  // namespace

double ModelScore::perplexity() const { return std::exp(nll); }

PairEval evaluate_pair(const PairEvalOptions& o, std::ostream& log) {
  auto start = std::chrono::steady_clock::now();
  const DeviceSpec device{"cpu", o.threads};
  auto target = LlamaModel::load(o.target_dir, device);
  auto draft = LlamaModel::load(o.draft_dir, device);
  if (target->config().vocab_size != draft->config().vocab_size)
    input_error(o.draft_dir, "vocabulary size " + std::to_string(draft->config().vocab_size) + " differs from the target's " +
                                 std::to_string(target->config().vocab_size));
  const std::string tokenizer_path = o.tokenizer.empty() ? (std::filesystem::path(o.target_dir) / "tokenizer.json").string() : o.tokenizer;
  std::vector<int32_t> ids;
  if (o.cache_dir.empty()) {
    Tokenizer tokenizer = Tokenizer::from_file(tokenizer_path);
    const std::string text = read_whole_file(o.text);
    ids = tokenize_documents(tokenizer, text, kDocumentSeparator, end_of_text_id(tokenizer, tokenizer_path), o.threads);
  } else {
    ids = load_token_ids(o.text, tokenizer_path, o.cache_dir, o.threads, log);
  }

  PairEval eval;
  eval.context = std::min(target->context_length(), draft->context_length());
  eval.target.parameters = parameter_count(target->config());
  eval.draft.parameters = parameter_count(draft->config());
  c10::InferenceMode guard;
  double target_nll = 0, draft_nll = 0, agree = 0, overlap = 0;
  for (size_t begin = 0; begin + 1 < ids.size() && eval.tokens < o.tokens;) {
    const int64_t scored = std::min({eval.context - 1, static_cast<int64_t>(ids.size() - begin) - 1, o.tokens - eval.tokens});
    std::vector<int64_t> chunk(ids.begin() + begin, ids.begin() + begin + scored + 1);
    at::Tensor next = at::tensor(std::vector<int64_t>(chunk.begin() + 1, chunk.end()), at::kLong).unsqueeze(1);
    chunk.pop_back();
    at::Tensor lp_target = log_probs(*target, chunk), lp_draft = log_probs(*draft, chunk);
    target_nll -= lp_target.gather(1, next).sum().item<double>();
    draft_nll -= lp_draft.gather(1, next).sum().item<double>();
    agree += lp_target.argmax(1).eq(lp_draft.argmax(1)).sum().item<double>();
    overlap += at::minimum(lp_target, lp_draft).exp().sum().item<double>();
    eval.tokens += scored;
    eval.chunks += 1;
    begin += scored + 1;
    if (eval.chunks % 20 == 0) log << "eval: " << eval.tokens << "/" << o.tokens << " tokens" << std::endl;
  }
  if (eval.tokens == 0) input_error(o.text, "holds too few tokens to evaluate");
  const double n = static_cast<double>(eval.tokens);
  eval.target.nll = target_nll / n;
  eval.draft.nll = draft_nll / n;
  eval.greedy_agreement = agree / n;
  eval.expected_acceptance = overlap / n;
  eval.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return eval;
}

nlohmann::json to_json(const PairEval& e, const PairEvalOptions& o) {
  auto model = [](const ModelScore& s, const std::string& dir) {
    return nlohmann::json{{"dir", dir}, {"parameters", s.parameters}, {"nll_nats_per_token", s.nll}, {"perplexity", s.perplexity()}};
  };
  return {{"text", o.text},
          {"tokens", e.tokens},
          {"chunks", e.chunks},
          {"context", e.context},
          {"target", model(e.target, o.target_dir)},
          {"draft", model(e.draft, o.draft_dir)},
          {"greedy_agreement", e.greedy_agreement},
          {"expected_acceptance_t1", e.expected_acceptance},
          {"seconds", e.seconds}};
}

void print_table(std::ostream& out, const PairEval& e, const PairEvalOptions& o) {
  out << "eval text " << o.text << ": " << e.tokens << " tokens scored in " << e.chunks << " chunks of up to "
      << e.context << " tokens (" << std::fixed << std::setprecision(1) << e.seconds << " s)\n\n";
  out << std::left << std::setw(8) << "model" << std::right << std::setw(12) << "parameters" << std::setw(20)
      << "NLL (nats/token)" << std::setw(12) << "perplexity" << "\n";
  auto row = [&](const char* name, const ModelScore& s) {
    out << std::left << std::setw(8) << name << std::right << std::setw(12) << millions(s.parameters) << std::setw(20)
        << std::setprecision(4) << s.nll << std::setw(12) << std::setprecision(2) << s.perplexity() << "\n";
  };
  row("target", e.target);
  row("draft", e.draft);
  out << "\ndraft/target greedy top-1 agreement:            " << std::setprecision(1) << 100 * e.greedy_agreement << " %\n";
  out << "expected acceptance at T=1 (mean sum min(p,q)): " << 100 * e.expected_acceptance << " %\n"
      << std::defaultfloat;
}

}  // namespace specd::training
