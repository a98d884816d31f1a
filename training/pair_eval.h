#pragma once
// Quality of a target/draft pair measured with the runtime's own LlamaModel on held-out text:
// each model's perplexity, how often the draft's greedy token equals the target's given the same
// prefix, and the acceptance rate rejection sampling would have at temperature 1.
#include <cstdint>
#include <iosfwd>
#include <string>

#include <nlohmann/json.hpp>

namespace specd::training {

struct PairEvalOptions {
  std::string target_dir, draft_dir;
  std::string text;       // documents separated as in the corpus (see token_data.h)
  std::string tokenizer;  // empty: TARGET/tokenizer.json
  std::string cache_dir;  // token id cache; empty: no cache file is written
  int64_t tokens = 65536; // predictions scored per model (fewer when the text is shorter)
  int threads = 2;
};

struct ModelScore {
  int64_t parameters = 0;
  double nll = 0;  // mean negative log-likelihood, nats per token
  double perplexity() const;
};

struct PairEval {
  int64_t tokens = 0;   // scored predictions
  int64_t chunks = 0;   // independent forwards of at most `context` tokens
  int64_t context = 0;
  ModelScore target, draft;
  double greedy_agreement = 0;     // fraction of positions with argmax(draft) == argmax(target)
  double expected_acceptance = 0;  // mean over positions of sum_v min(p_target, p_draft)
  double seconds = 0;
};

// The text is cut into consecutive chunks of the models' (smaller) context length; each chunk is
// one fresh forward and scores its tokens 2..n. InputError when the pair's vocabularies differ.
PairEval evaluate_pair(const PairEvalOptions& options, std::ostream& log);

nlohmann::json to_json(const PairEval& eval, const PairEvalOptions& options);
void print_table(std::ostream& out, const PairEval& eval, const PairEvalOptions& options);

}  // namespace specd::training
