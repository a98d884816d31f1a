// specd-train: trains the demo target and draft models and measures the pair's quality.
// This file parses options and routes to a subcommand; errors a user can fix exit with code 2.
#include <boost/program_options.hpp>

#include <cstring>
#include <iostream>

#include "io/dtype.h"
#include "pair_eval.h"
#include "speed.h"
#include "trainer.h"
#include "util/error.h"

namespace po = boost::program_options;
using namespace specd;
using namespace specd::training;

namespace {

// Returns false after printing the usage when --help was given.
bool parse(int argc, char** argv, const po::options_description& options, po::variables_map& vm, const char* usage) {
  po::store(po::command_line_parser(argc, argv).options(options).run(), vm);
  if (vm.count("help")) {
    std::cout << usage << "\n\n" << options << "\n";
    return false;
  }
  po::notify(vm);
  return true;
}

int run_train(int argc, char** argv) {
  TrainOptions o;
  std::string dtype = "bf16";
  int64_t shard_mb = 0;
  po::options_description files("files");
  files.add_options()
      ("help,h", "show this help")
      ("config-out", po::value(&o.out_dir)->required(), "Hugging Face directory to write (config.json, model.safetensors, tokenizer.json, training.json)")
      ("text", po::value(&o.text)->required(), "training text: documents each followed by a line <|endoftext|>")
      ("eval-text", po::value(&o.eval_text), "held-out text for the periodic evaluation")
      ("tokenizer", po::value(&o.tokenizer)->required(), "tokenizer.json (must define <|endoftext|>)")
      ("state-dir", po::value(&o.state_dir), "resumable training state (default CONFIG_OUT/train-state)")
      ("cache-dir", po::value(&o.cache_dir), "token id cache (default: the state directory)")
      ("resume", po::bool_switch(&o.resume), "continue from the saved state when there is one")
      ("stop-after", po::value(&o.stop_after), "save the state and stop once this many steps are done");
  po::options_description model("model");
  model.add_options()
      ("layers", po::value(&o.shape.layers)->default_value(o.shape.layers), "decoder layers")
      ("hidden", po::value(&o.shape.hidden)->default_value(o.shape.hidden), "hidden size")
      ("heads", po::value(&o.shape.heads)->default_value(o.shape.heads), "attention heads")
      ("kv-heads", po::value(&o.shape.kv_heads)->default_value(o.shape.kv_heads), "key/value heads")
      ("ffn", po::value(&o.shape.ffn)->default_value(o.shape.ffn), "MLP intermediate size")
      ("context", po::value(&o.shape.context)->default_value(o.shape.context), "max_position_embeddings")
      ("rope-theta", po::value(&o.shape.rope_theta)->default_value(o.shape.rope_theta), "RoPE base")
      ("dtype", po::value(&dtype)->default_value(dtype), "weights written: bf16, f16 or f32")
      ("max-shard-mb", po::value(&shard_mb)->default_value(0), "write the weights as shards of at most this many MB (0: one file)");
  po::options_description optim("optimization");
  optim.add_options()
      ("steps", po::value(&o.steps)->default_value(o.steps), "optimizer steps")
      ("batch", po::value(&o.batch)->default_value(o.batch), "sequences per step")
      ("seq", po::value(&o.seq)->default_value(o.seq), "tokens per sequence")
      ("lr", po::value(&o.lr)->default_value(o.lr), "peak learning rate")
      ("min-lr", po::value(&o.min_lr)->default_value(o.min_lr), "learning rate at the last step")
      ("warmup", po::value(&o.warmup)->default_value(o.warmup), "linear warmup steps")
      ("weight-decay", po::value(&o.weight_decay)->default_value(o.weight_decay), "AdamW decay of matrices")
      ("clip", po::value(&o.clip)->default_value(o.clip), "gradient norm clip")
      ("seed", po::value(&o.seed)->default_value(o.seed), "initialization and batch order")
      ("distill-from", po::value(&o.distill_from), "teacher Hugging Face directory (frozen)")
      ("distill-weight", po::value(&o.distill_weight)->default_value(o.distill_weight), "a in (1-a) CE + a KL(teacher||student)")
      ("grow-from", po::value(&o.grow_from), "start from this trained model grown to the shape above (function-preserving)");
  po::options_description run("run");
  run.add_options()
      ("eval-every", po::value(&o.eval_every)->default_value(o.eval_every), "steps between evaluations")
      ("eval-tokens", po::value(&o.eval_tokens)->default_value(o.eval_tokens), "tokens per evaluation")
      ("checkpoint-every", po::value(&o.checkpoint_every)->default_value(o.checkpoint_every), "steps between saved states")
      ("log-every", po::value(&o.log_every)->default_value(o.log_every), "steps between progress lines")
      ("threads", po::value(&o.threads)->default_value(o.threads), "CPU threads");
  po::options_description all;
  all.add(files).add(model).add(optim).add(run);
  po::variables_map vm;
  if (!parse(argc, argv, all, vm, "usage: specd-train train --config-out DIR --text FILE --tokenizer FILE [options]")) return 0;
  auto parsed = dtype_from_name(dtype == "bf16" ? "BF16" : dtype == "f16" ? "F16" : dtype == "f32" ? "F32" : "");
  if (!parsed) throw InputError("--dtype must be bf16, f16 or f32");
  o.dtype = *parsed;
  if (shard_mb < 0) throw InputError("--max-shard-mb must not be negative");
  o.max_shard_bytes = static_cast<size_t>(shard_mb) * 1000 * 1000;
  TrainSummary summary = train(o, std::cerr);
  return summary.finished ? 0 : 3;
}

int run_eval(int argc, char** argv) {
  PairEvalOptions o;
  bool as_json = false;
  po::options_description options("options");
  options.add_options()
      ("help,h", "show this help")
      ("target", po::value(&o.target_dir)->required(), "target model directory")
      ("draft", po::value(&o.draft_dir)->required(), "draft model directory")
      ("text", po::value(&o.text)->required(), "evaluation text: documents each followed by a line <|endoftext|>")
      ("tokenizer", po::value(&o.tokenizer), "tokenizer.json (default TARGET/tokenizer.json)")
      ("cache-dir", po::value(&o.cache_dir), "cache the token ids here")
      ("tokens", po::value(&o.tokens)->default_value(o.tokens), "predictions to score")
      ("threads", po::value(&o.threads)->default_value(o.threads), "CPU threads")
      ("json", po::bool_switch(&as_json), "print JSON instead of a table");
  po::variables_map vm;
  if (!parse(argc, argv, options, vm, "usage: specd-train eval --target DIR --draft DIR --text FILE [options]")) return 0;
  if (o.tokens <= 0) throw InputError("--tokens must be positive");
  PairEval eval = evaluate_pair(o, std::cerr);
  if (as_json) {
    std::cout << to_json(eval, o).dump(2) << "\n";
  } else {
    print_table(std::cout, eval, o);
  }
  return 0;
}

int run_speed(int argc, char** argv) {
  SpeedOptions o;
  std::string teacher;
  po::options_description options("options");
  options.add_options()
      ("help,h", "show this help")
      ("layers", po::value(&o.shape.layers)->default_value(o.shape.layers), "decoder layers")
      ("hidden", po::value(&o.shape.hidden)->default_value(o.shape.hidden), "hidden size")
      ("heads", po::value(&o.shape.heads)->default_value(o.shape.heads), "attention heads")
      ("kv-heads", po::value(&o.shape.kv_heads)->default_value(o.shape.kv_heads), "key/value heads")
      ("ffn", po::value(&o.shape.ffn)->default_value(o.shape.ffn), "MLP intermediate size")
      ("vocab", po::value(&o.vocab)->default_value(o.vocab), "vocabulary size")
      ("batch", po::value(&o.batch)->default_value(o.batch), "sequences per step")
      ("seq", po::value(&o.seq)->default_value(o.seq), "tokens per sequence")
      ("steps", po::value(&o.steps)->default_value(o.steps), "measured steps")
      ("threads", po::value(&o.threads)->default_value(o.threads), "CPU threads")
      ("distill", po::bool_switch(&o.distill), "add the forward of a teacher of the default (target) shape");
  po::variables_map vm;
  if (!parse(argc, argv, options, vm, "usage: specd-train speed [options]   (training tokens/s on random tokens)")) return 0;
  o.shape.context = std::max(o.shape.context, o.seq);
  o.teacher.context = o.shape.context;
  SpeedResult r = measure_training_speed(o);
  std::cout << r.parameters << " parameters, batch " << o.batch << " x seq " << o.seq << ", " << o.threads
            << " threads: " << r.seconds_per_step << " s/step, " << static_cast<int64_t>(r.tokens_per_second) << " tokens/s\n";
  return 0;
}

void usage(std::ostream& out) {
  out << "usage: specd-train <command> [options]   (specd-train <command> --help for its options)\n\n"
         "commands:\n"
         "  train   train a Llama model (or distill a draft) and write a Hugging Face directory\n"
         "  speed   training tokens/s of a model shape on random tokens\n"
         "  eval    perplexity of a target and a draft, and their greedy agreement, on held-out text\n";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h")) {
    usage(argc < 2 ? std::cerr : std::cout);
    return argc < 2 ? 2 : 0;
  }
  const std::string command = argv[1];
  try {
    if (command == "train") return run_train(argc - 1, argv + 1);
    if (command == "eval") return run_eval(argc - 1, argv + 1);
    if (command == "speed") return run_speed(argc - 1, argv + 1);
    std::cerr << "specd-train: unknown command '" << command << "'\n";
    usage(std::cerr);
    return 2;
  } catch (const InputError& e) {
    std::cerr << "specd-train " << command << ": " << e.what() << "\n";
    return 2;
  } catch (const po::error& e) {
    std::cerr << "specd-train " << command << ": " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "specd-train " << command << ": internal error: " << e.what() << "\n";
    return 1;
  }
}
