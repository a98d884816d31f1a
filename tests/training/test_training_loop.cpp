// The training loop end to end on a tiny model and a tiny text: the loss falls, a stopped and
// resumed run ends exactly where an uninterrupted one does, and corpus text becomes documents
// separated by the end-of-text token.
#include "catch_torch.h"
#include "fixture_models.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "hf_checkpoint.h"
#include "token_data.h"
#include "tokenizer/tokenizer.h"
#include "trainer.h"
#include "util/error.h"

using namespace specd;
using namespace specd::training;

namespace {

std::string tokenizer_path() { return std::string(SPECD_SOURCE_DIR) + "/tests/fixtures/tiny_byte_tokenizer.json"; }

// A few repetitive documents in the corpus format: easy to learn in a handful of steps.
std::string write_corpus(const std::string& dir, const std::string& name, int documents) {
  std::ostringstream text;
  for (int d = 0; d < documents; ++d) {
    text << "def add_" << d << "(a, b):\n    return a + b\n\n";
    text << "The quick brown fox jumps over the lazy dog number " << d << ".\n";
    text << "<|endoftext|>\n";
  }
  std::string path = dir + "/" + name;
  std::ofstream(path) << text.str();
  return path;
}

TrainOptions tiny_run(const std::string& dir) {
  std::filesystem::create_directories(dir);
  TrainOptions o;
  o.out_dir = dir + "/model";
  o.text = write_corpus(dir, "train.txt", 40);
  o.eval_text = write_corpus(dir, "eval.txt", 6);
  o.tokenizer = tokenizer_path();
  o.shape.layers = 2;
  o.shape.hidden = 32;
  o.shape.heads = 4;
  o.shape.kv_heads = 2;
  o.shape.ffn = 64;
  o.shape.context = 64;
  o.batch = 4;
  o.seq = 32;
  o.steps = 8;
  o.warmup = 2;
  o.lr = 1e-2;
  o.min_lr = 1e-3;
  o.eval_every = 4;
  o.eval_tokens = 512;
  o.checkpoint_every = 100;
  o.log_every = 2;
  o.threads = 1;
  o.dtype = DType::F32;
  return o;
}

std::vector<double> eval_losses(const std::string& model_dir) {
  std::ifstream in(model_dir + "/training.json");
  auto report = nlohmann::json::parse(in);
  std::vector<double> losses;
  for (const auto& entry : report["history"])
    if (entry.contains("eval_loss")) losses.push_back(entry["eval_loss"]);
  return losses;
}

}  // namespace

TEST_CASE("documents are encoded separately, each followed by the end-of-text id", "[training]") {
  Tokenizer tokenizer = Tokenizer::from_file(tokenizer_path());
  std::string text = "ab<|endoftext|>\ncd\n<|endoftext|>\n";
  auto docs = split_documents(text, kDocumentSeparator);
  REQUIRE(docs.size() == 2);
  CHECK(docs[0] == "ab");
  CHECK(docs[1] == "cd\n");
  auto ids = tokenize_documents(tokenizer, text, kDocumentSeparator, 300, 2);
  std::vector<int32_t> want = tokenizer.encode("ab", false);
  want.push_back(300);
  auto second = tokenizer.encode("cd\n", false);
  want.insert(want.end(), second.begin(), second.end());
  want.push_back(300);
  CHECK(ids == want);
}

TEST_CASE("token ids are cached under a name that changes with the text", "[training]") {
  std::string dir = test::fixture_dir("training-token-cache");
  std::string text = write_corpus(dir, "corpus.txt", 3);
  std::ostringstream log;
  auto first = load_token_ids(text, tokenizer_path(), dir + "/cache", 1, log);
  REQUIRE(std::distance(std::filesystem::directory_iterator(dir + "/cache"), {}) == 1);
  CHECK(load_token_ids(text, tokenizer_path(), dir + "/cache", 1, log) == first);
  write_corpus(dir, "corpus.txt", 4);
  auto changed = load_token_ids(text, tokenizer_path(), dir + "/cache", 1, log);
  CHECK(changed.size() > first.size());
  CHECK(std::distance(std::filesystem::directory_iterator(dir + "/cache"), {}) == 2);
}

TEST_CASE("a few steps on a tiny model lower the evaluation loss and write a loadable model", "[training]") {
  std::string dir = test::fixture_dir("training-loop-loss");
  TrainOptions o = tiny_run(dir);
  o.steps = 30;
  o.eval_every = 10;
  o.warmup = 3;
  std::ostringstream log;
  TrainSummary summary = train(o, log);
  INFO(log.str());
  REQUIRE(summary.finished);
  CHECK(summary.tokens_trained == 30 * 4 * 32);
  auto losses = eval_losses(o.out_dir);
  REQUIRE(losses.size() == 4);              // steps 0, 10, 20, 30
  CHECK(losses.front() > std::log(301.0) - 0.5);  // about uniform at initialization
  CHECK(losses.back() < losses.front() - 1.5);
  CHECK(log.str().find("tok/s") != std::string::npos);
  CHECK(load_hf_model(o.out_dir)->config().num_hidden_layers == 2);
}

TEST_CASE("a stopped and resumed run ends with exactly the weights of an uninterrupted run", "[training]") {
  std::string dir = test::fixture_dir("training-loop-resume");
  std::ostringstream log;

  TrainOptions whole = tiny_run(dir + "/whole");
  REQUIRE(train(whole, log).finished);

  TrainOptions split = whole;
  split.out_dir = dir + "/split/model";
  split.stop_after = 3;
  TrainSummary first = train(split, log);
  CHECK_FALSE(first.finished);
  CHECK(first.steps_done == 3);
  CHECK_FALSE(std::filesystem::exists(split.out_dir + "/model.safetensors"));

  // Starting again without --resume would throw away the state: refused.
  CHECK_THROWS_AS(train(split, log), InputError);
  // So would resuming with another recipe.
  TrainOptions changed = split;
  changed.resume = true;
  changed.lr = 2e-2;
  CHECK_THROWS_WITH(train(changed, log), Catch::Contains("cannot resume: lr"));

  split.resume = true;
  split.stop_after = -1;
  TrainSummary second = train(split, log);
  CHECK(second.finished);
  CHECK(second.steps_done == 8);

  auto want = load_hf_model(whole.out_dir)->named_parameters();
  auto got = load_hf_model(split.out_dir)->named_parameters();
  for (const auto& item : want) {
    CAPTURE(item.key());
    CHECK(torch::equal(got[item.key()], item.value()));
  }
}

TEST_CASE("a draft distilled from a teacher trains against the teacher's distribution", "[training]") {
  std::string dir = test::fixture_dir("training-loop-distill");
  std::ostringstream log;
  TrainOptions teacher = tiny_run(dir + "/teacher");
  teacher.eval_text = "";
  teacher.steps = 10;
  REQUIRE(train(teacher, log).finished);

  TrainOptions student = teacher;
  student.out_dir = dir + "/student";
  student.shape.layers = 1;
  student.shape.hidden = 16;
  student.shape.heads = 2;
  student.shape.kv_heads = 1;
  student.distill_from = teacher.out_dir;
  student.distill_weight = 0.5;
  student.steps = 6;
  TrainSummary summary = train(student, log);
  INFO(log.str());
  CHECK(summary.finished);

  std::ifstream in(student.out_dir + "/training.json");
  auto report = nlohmann::json::parse(in);
  CHECK(report["recipe"]["distill_from"] == teacher.out_dir);
}
