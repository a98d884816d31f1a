// specd-train eval's measures on models with known answers: a model against itself agrees
// everywhere, and its perplexity is the training module's cross-entropy on the same text.
#include "catch_torch.h"
#include "fixture_models.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "hf_checkpoint.h"
#include "pair_eval.h"
#include "token_data.h"
#include "tokenizer/tokenizer.h"
#include "trainer.h"

using namespace specd;
using namespace specd::training;

namespace {

std::string tokenizer_path() { return std::string(SPECD_SOURCE_DIR) + "/tests/fixtures/tiny_byte_tokenizer.json"; }

std::string write_model(const std::string& dir, uint64_t seed) {
  ModelShape shape;
  shape.layers = 2;
  shape.hidden = 32;
  shape.heads = 4;
  shape.kv_heads = 2;
  shape.ffn = 48;
  shape.context = 64;
  torch::manual_seed(seed);
  TrainLlama model(make_model_config(shape, 301, 300));
  torch::NoGradGuard no_grad;
  for (auto& p : model->parameters())
    if (p.dim() == 2) p.normal_(0.0, 0.3);
  save_hf_model(model, dir, DType::F32, tokenizer_path());
  return dir;
}

}  // namespace

TEST_CASE("pair evaluation: self-agreement is total and perplexity matches the training module", "[training]") {
  std::string dir = test::fixture_dir("training-pair-eval");
  std::string a = write_model(dir + "/a", 1), b = write_model(dir + "/b", 2);
  std::string text = dir + "/eval.txt";
  std::ofstream(text) << "import os\n\ndef main():\n    print(os.getcwd())\n<|endoftext|>\n"
                      << "Debian is a free operating system, developed by volunteers.\n<|endoftext|>\n";
  std::ostringstream log;

  PairEvalOptions o;
  o.target_dir = a;
  o.draft_dir = a;
  o.text = text;
  o.tokens = 1000;
  o.threads = 1;
  PairEval self = evaluate_pair(o, log);
  CHECK(self.tokens > 63);
  CHECK(self.chunks == (self.tokens + 62) / 63);
  CHECK(self.greedy_agreement == 1.0);
  CHECK(self.expected_acceptance == Approx(1.0).epsilon(1e-5));
  CHECK(self.draft.nll == self.target.nll);

  // The first chunk (64 tokens, 63 predictions) by the training module.
  o.tokens = 63;
  PairEval first = evaluate_pair(o, log);
  REQUIRE(first.chunks == 1);
  Tokenizer tokenizer = Tokenizer::from_file(tokenizer_path());
  std::ifstream in(text);
  std::string content((std::istreambuf_iterator<char>(in)), {});
  auto ids = tokenize_documents(tokenizer, content, kDocumentSeparator, 300, 1);
  auto window = torch::tensor(std::vector<int64_t>(ids.begin(), ids.begin() + 64), torch::kLong);
  TrainLlama model = load_hf_model(a);
  torch::NoGradGuard no_grad;
  auto logits = model->forward(window.narrow(0, 0, 63).unsqueeze(0))[0];
  double ce = torch::nn::functional::cross_entropy(logits, window.narrow(0, 1, 63)).item<double>();
  CHECK(first.target.nll == Approx(ce).epsilon(1e-5));

  o.draft_dir = b;
  PairEval pair = evaluate_pair(o, log);
  CHECK(pair.greedy_agreement < 1.0);
  CHECK(pair.expected_acceptance < 0.99);
  CHECK(pair.draft.nll != pair.target.nll);
}
