#include "method_options.h"

#include "util/error.h"

namespace specd::cli {

void add_method_options(po::options_description& desc, MethodArgs& args) {
  MethodOptions& m = args.options;
  desc.add_options()
      ("draft", po::value(&args.draft_dir)->default_value(data_dir() + "/models/demo-draft"), "draft model directory (sd, sd-tree, sam's fallback)")
      ("gamma", po::value(&m.gamma)->default_value(4), "sd: drafted chain length")
      ("tree-top-k", po::value(&m.tree.top_k)->default_value(4), "sd-tree: children per expanded node")
      ("tree-depth", po::value(&m.tree.depth)->default_value(5), "sd-tree: levels")
      ("tree-nodes", po::value(&m.tree.nodes)->default_value(16), "sd-tree: drafted nodes per step")
      ("pld-max-ngram", po::value(&m.pld.max_ngram)->default_value(3), "pld: longest n-gram matched")
      ("pld-min-ngram", po::value(&m.pld.min_ngram)->default_value(1), "pld: shortest n-gram matched")
      ("pld-tokens", po::value(&m.pld.num_pred_tokens)->default_value(10), "pld: tokens copied")
      ("pld-match", po::value(&args.pld_match)->default_value("earliest"), "pld: which occurrence to copy from, earliest or latest")
      ("sam-threshold", po::value(&m.sam.len_threshold)->default_value(5), "sam: shortest match used")
      ("sam-predicts", po::value(&m.sam.n_predicts)->default_value(40), "sam: draft length counting the root")
      ("sam-corpus", po::value(&args.sam_corpus_path),
       "sam: static corpus (specd calibrate sam-corpus), searched beside the prompt and output")
      ("sam-len-bias", po::value(&m.sam.len_bias)->default_value(5), "sam: static matches count this much shorter")
      ("draft-budget", po::value(&args.budget_mode)->default_value("auto"),
       "auto: each step drafts as many nodes as pay for their verification (measured cost curve, "
       "online acceptance); fixed: always the options' full length");
}

void finish_method_options(MethodArgs& args) {
  if (args.budget_mode != "auto" && args.budget_mode != "fixed")
    input_error("--draft-budget", "must be auto or fixed, not '" + args.budget_mode + "'");
  args.options.adaptive_budget = args.budget_mode == "auto";
  if (args.pld_match != "earliest" && args.pld_match != "latest")
    input_error("--pld-match", "must be earliest or latest, not '" + args.pld_match + "'");
  args.options.pld.match = args.pld_match == "latest" ? PldMatch::Latest : PldMatch::Earliest;
  validate(args.options.sam);
  validate(args.options.pld);
}

void load_sam_corpus(MethodArgs& args, const std::string& tokenizer_path, const ModelConfig& target) {
  const std::string& path = args.sam_corpus_path;
  if (path.empty()) return;
  SamCorpus corpus = read_sam_corpus(path);
  if (corpus.tokenizer_fnv1a != file_fnv1a(tokenizer_path))
    input_error(path, "was made with another tokenizer than " + tokenizer_path + " (rebuild it with specd calibrate sam-corpus)");
  if (corpus.vocab_size != target.vocab_size)
    input_error(path, "holds ids of a " + std::to_string(corpus.vocab_size) + "-token vocabulary; the target has " +
                          std::to_string(target.vocab_size));
  const int32_t separator = target.eos_token_ids.empty() ? 0 : static_cast<int32_t>(target.eos_token_ids[0]);
  args.options.sam_corpus = std::make_shared<const StaticSam>(corpus, separator);
}

}  // namespace specd::cli
