#include <catch2/catch.hpp>

#include <cmath>
#include <functional>

#include "io/checkpoint.h"
#include "io/expected_tensors.h"
#include "io/model_config.h"
#include "io/rope_frequencies.h"
#include "test_helpers.h"
#include "util/error.h"

using namespace specd;
using nlohmann::json;
using specd::test::input_error_message;
using specd::test::ScopedTempDir;

namespace {


// config.json files as published on the Hugging Face hub (abridged of nothing that matters).
const char* kLlama2_7B = R"({
  "_name_or_path": "meta-llama/Llama-2-7b-hf",
  "architectures": ["LlamaForCausalLM"],
  "bos_token_id": 1,
  "eos_token_id": 2,
  "hidden_act": "silu",
  "hidden_size": 4096,
  "initializer_range": 0.02,
  "intermediate_size": 11008,
  "max_position_embeddings": 4096,
  "model_type": "llama",
  "num_attention_heads": 32,
  "num_hidden_layers": 32,
  "num_key_value_heads": 32,
  "pretraining_tp": 1,
  "rms_norm_eps": 1e-05,
  "rope_scaling": null,
  "tie_word_embeddings": false,
  "torch_dtype": "float16",
  "transformers_version": "4.31.0.dev0",
  "use_cache": true,
  "vocab_size": 32000
})";

const char* kLlama31_8B_Instruct = R"({
  "architectures": ["LlamaForCausalLM"],
  "attention_bias": false,
  "attention_dropout": 0.0,
  "bos_token_id": 128000,
  "eos_token_id": [128001, 128008, 128009],
  "hidden_act": "silu",
  "hidden_size": 4096,
  "initializer_range": 0.02,
  "intermediate_size": 14336,
  "max_position_embeddings": 131072,
  "mlp_bias": false,
  "model_type": "llama",
  "num_attention_heads": 32,
  "num_hidden_layers": 32,
  "num_key_value_heads": 8,
  "pretraining_tp": 1,
  "rms_norm_eps": 1e-05,
  "rope_scaling": {
    "factor": 8.0,
    "low_freq_factor": 1.0,
    "high_freq_factor": 4.0,
    "original_max_position_embeddings": 8192,
    "rope_type": "llama3"
  },
  "rope_theta": 500000.0,
  "tie_word_embeddings": false,
  "torch_dtype": "bfloat16",
  "transformers_version": "4.42.3",
  "use_cache": true,
  "vocab_size": 128256
})";

const char* kMistral_7B = R"({
  "architectures": ["MistralForCausalLM"],
  "bos_token_id": 1,
  "eos_token_id": 2,
  "hidden_act": "silu",
  "hidden_size": 4096,
  "initializer_range": 0.02,
  "intermediate_size": 14336,
  "max_position_embeddings": 32768,
  "model_type": "mistral",
  "num_attention_heads": 32,
  "num_hidden_layers": 32,
  "num_key_value_heads": 8,
  "rms_norm_eps": 1e-05,
  "rope_theta": 10000.0,
  "sliding_window": 4096,
  "tie_word_embeddings": false,
  "torch_dtype": "bfloat16",
  "transformers_version": "4.34.0.dev0",
  "use_cache": true,
  "vocab_size": 32000
})";

const char* kQwen2_05B = R"({
  "architectures": ["Qwen2ForCausalLM"],
  "attention_dropout": 0.0,
  "bos_token_id": 151643,
  "eos_token_id": 151643,
  "hidden_act": "silu",
  "hidden_size": 896,
  "initializer_range": 0.02,
  "intermediate_size": 4864,
  "max_position_embeddings": 131072,
  "max_window_layers": 24,
  "model_type": "qwen2",
  "num_attention_heads": 14,
  "num_hidden_layers": 24,
  "num_key_value_heads": 2,
  "rms_norm_eps": 1e-06,
  "rope_theta": 1000000.0,
  "sliding_window": 131072,
  "tie_word_embeddings": true,
  "torch_dtype": "bfloat16",
  "transformers_version": "4.40.1",
  "use_cache": true,
  "use_sliding_window": false,
  "vocab_size": 151936
})";

ModelConfig parse(const std::string& text) { return ModelConfig::from_json(json::parse(text), "config.json"); }

// The error from parsing `base` with `edit` applied.
std::string config_error(const char* base, const std::function<void(json&)>& edit) {
  json j = json::parse(base);
  edit(j);
  return input_error_message([&] { ModelConfig::from_json(j, "m/config.json"); });
}

// theta^(-2i/d), written out independently of the library.
std::vector<double> plain_inverse_frequencies(double theta, int64_t head_dim) {
  std::vector<double> f;
  for (int64_t i = 0; i < head_dim; i += 2) f.push_back(std::exp(-std::log(theta) * i / head_dim));
  return f;
}

ModelConfig tiny_config() {
  return parse(R"({"model_type": "llama", "vocab_size": 16, "hidden_size": 8,
                   "intermediate_size": 12, "num_hidden_layers": 2, "num_attention_heads": 2,
                   "num_key_value_heads": 1, "max_position_embeddings": 64, "rms_norm_eps": 1e-5})");
}

// A checkpoint directory holding the expected tensors of `config` in `dtype`, zero-filled, with
// `edit` applied to the list first.
struct CheckpointFixture {
  std::vector<std::vector<unsigned char>> storage;
  std::vector<TensorView> views;

  CheckpointFixture(const ModelConfig& config, DType dtype,
                    const std::function<void(std::vector<ExpectedTensor>&)>& edit = nullptr) {
    std::vector<ExpectedTensor> tensors = expected_tensors(config);
    if (edit) edit(tensors);
    storage.reserve(tensors.size());
    for (const ExpectedTensor& e : tensors) {
      const size_t nbytes = static_cast<size_t>(element_count(e.shape)) * dtype_size(dtype);
      storage.emplace_back(nbytes, 0);
      views.push_back({e.name, dtype, e.shape, storage.back().data(), nbytes});
    }
  }
};

std::string check_error(const ModelConfig& config, const std::string& dir) {
  return input_error_message([&] { check_checkpoint(config, Checkpoint::open_dir(dir)); });
}

}  // namespace

TEST_CASE("Llama-2-7B config", "[config]") {
  const ModelConfig c = parse(kLlama2_7B);
  CHECK(c.model_type == "llama");
  CHECK(c.vocab_size == 32000);
  CHECK(c.hidden_size == 4096);
  CHECK(c.intermediate_size == 11008);
  CHECK(c.num_hidden_layers == 32);
  CHECK(c.num_attention_heads == 32);
  CHECK(c.num_key_value_heads == 32);
  CHECK(c.head_dim == 128);
  CHECK(c.max_position_embeddings == 4096);
  CHECK(c.rope_theta == 10000.0);
  CHECK(c.rms_norm_eps == 1e-5);
  CHECK(c.rope_scaling.type == RopeScalingType::None);
  CHECK_FALSE(c.tie_word_embeddings);
  CHECK_FALSE(c.qkv_bias);
  CHECK_FALSE(c.o_proj_bias);
  CHECK_FALSE(c.sliding_window);
  CHECK(c.bos_token_id == 1);
  CHECK(c.eos_token_ids == std::vector<int64_t>{2});
  CHECK_FALSE(c.pad_token_id);
  CHECK(c.torch_dtype == "float16");
}

TEST_CASE("Llama-3.1-8B-Instruct config with llama3 rope scaling", "[config]") {
  const ModelConfig c = parse(kLlama31_8B_Instruct);
  CHECK(c.num_key_value_heads == 8);
  CHECK(c.head_dim == 128);
  CHECK(c.rope_theta == 500000.0);
  CHECK(c.rope_scaling.type == RopeScalingType::Llama3);
  CHECK(c.rope_scaling.factor == 8.0);
  CHECK(c.rope_scaling.low_freq_factor == 1.0);
  CHECK(c.rope_scaling.high_freq_factor == 4.0);
  CHECK(c.rope_scaling.original_max_position_embeddings == 8192);
  CHECK(c.eos_token_ids == std::vector<int64_t>{128001, 128008, 128009});
  CHECK(c.torch_dtype == "bfloat16");
}

TEST_CASE("Mistral-7B config keeps its sliding window", "[config]") {
  const ModelConfig c = parse(kMistral_7B);
  CHECK(c.model_type == "mistral");
  CHECK(c.sliding_window == 4096);
  CHECK(c.num_key_value_heads == 8);
  CHECK(c.intermediate_size == 14336);
  CHECK_FALSE(c.qkv_bias);

  json j = json::parse(kMistral_7B);
  j["sliding_window"] = nullptr;  // as in Mistral-7B v0.2 and later
  CHECK_FALSE(ModelConfig::from_json(j, "config.json").sliding_window);
}

TEST_CASE("Qwen2-0.5B config has q/k/v biases and tied embeddings", "[config]") {
  const ModelConfig c = parse(kQwen2_05B);
  CHECK(c.model_type == "qwen2");
  CHECK(c.head_dim == 64);
  CHECK(c.num_key_value_heads == 2);
  CHECK(c.rope_theta == 1000000.0);
  CHECK(c.rms_norm_eps == 1e-6);
  CHECK(c.tie_word_embeddings);
  CHECK(c.qkv_bias);
  CHECK_FALSE(c.o_proj_bias);
  CHECK_FALSE(c.sliding_window);  // use_sliding_window is false
}

TEST_CASE("configs round trip through to_json and config.json", "[config]") {
  ScopedTempDir dir("config-roundtrip");
  for (const char* text : {kLlama2_7B, kLlama31_8B_Instruct, kMistral_7B, kQwen2_05B}) {
    const ModelConfig c = parse(text);
    CHECK(ModelConfig::from_json(c.to_json(), "to_json") == c);
    write_hf_config(dir.path().string(), c);
    CHECK(ModelConfig::from_file(dir.file("config.json")) == c);
  }
  ModelConfig linear = parse(kLlama2_7B);
  linear.rope_scaling.type = RopeScalingType::Linear;
  linear.rope_scaling.factor = 4.0;
  linear.qkv_bias = linear.o_proj_bias = true;
  linear.eos_token_ids.clear();
  linear.pad_token_id = 0;
  CHECK(ModelConfig::from_json(linear.to_json(), "to_json") == linear);
  CHECK(linear.to_json()["architectures"][0] == "LlamaForCausalLM");
}

TEST_CASE("config defaults follow transformers", "[config]") {
  const ModelConfig c = parse(R"({"model_type": "llama", "vocab_size": 100, "hidden_size": 64,
    "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 4,
    "max_position_embeddings": 256})");
  CHECK(c.num_key_value_heads == 4);
  CHECK(c.head_dim == 16);
  CHECK(c.rope_theta == 10000.0);
  CHECK(c.rms_norm_eps == 1e-6);
  CHECK_FALSE(c.tie_word_embeddings);
  CHECK(c.eos_token_ids.empty());
  CHECK(c.torch_dtype.empty());
}

TEST_CASE("rope_scaling forms", "[config]") {
  auto with_scaling = [](const json& scaling) {
    json j = json::parse(kLlama2_7B);
    j["rope_scaling"] = scaling;
    return ModelConfig::from_json(j, "config.json").rope_scaling;
  };
  const RopeScaling legacy_linear = with_scaling({{"type", "linear"}, {"factor", 2.0}});
  CHECK(legacy_linear.type == RopeScalingType::Linear);
  CHECK(legacy_linear.factor == 2.0);
  CHECK(with_scaling({{"rope_type", "linear"}, {"factor", 4}}).factor == 4.0);
  CHECK(with_scaling({{"rope_type", "default"}}).type == RopeScalingType::None);
  CHECK(with_scaling(nullptr).type == RopeScalingType::None);

  // transformers 5 writes rope_parameters instead of rope_theta and rope_scaling.
  json v5 = json::parse(kLlama31_8B_Instruct);
  v5["rope_parameters"] = v5["rope_scaling"];
  v5["rope_parameters"]["rope_theta"] = 500000.0;
  v5.erase("rope_scaling");
  v5.erase("rope_theta");
  CHECK(ModelConfig::from_json(v5, "config.json") == parse(kLlama31_8B_Instruct));
}

TEST_CASE("bad configs are one-line InputErrors naming file and field", "[config]") {
  const char* base = kLlama2_7B;
  CHECK(config_error(base, [](json& j) { j.erase("hidden_size"); }) ==
        "m/config.json: missing field 'hidden_size'");
  CHECK(config_error(base, [](json& j) { j["hidden_size"] = "4096"; }) ==
        "m/config.json: field 'hidden_size' must be an integer");
  CHECK(config_error(base, [](json& j) { j["num_hidden_layers"] = 32.5; }) ==
        "m/config.json: field 'num_hidden_layers' must be an integer");
  CHECK(config_error(base, [](json& j) { j["vocab_size"] = 0; }) ==
        "m/config.json: field 'vocab_size' must be positive, not 0");
  CHECK(config_error(base, [](json& j) { j["rms_norm_eps"] = "small"; }) ==
        "m/config.json: field 'rms_norm_eps' must be a number");
  CHECK(config_error(base, [](json& j) { j["tie_word_embeddings"] = 1; }) ==
        "m/config.json: field 'tie_word_embeddings' must be true or false");
  CHECK(config_error(base, [](json& j) { j["model_type"] = "gpt2"; }) ==
        "m/config.json: unsupported model_type 'gpt2' (supported: llama, mistral, qwen2)");
  CHECK(config_error(base, [](json& j) { j.erase("model_type"); }) ==
        "m/config.json: missing field 'model_type'");
  CHECK(config_error(base, [](json& j) { j["num_key_value_heads"] = 5; }) ==
        "m/config.json: field 'num_key_value_heads' (5) must divide num_attention_heads (32)");
  CHECK(config_error(base, [](json& j) { j["hidden_size"] = 4100; }) ==
        "m/config.json: field 'hidden_size' is not a multiple of num_attention_heads and head_dim "
        "is not set");
  CHECK(config_error(base, [](json& j) { j["hidden_act"] = "gelu"; }) ==
        "m/config.json: field 'hidden_act' is 'gelu'; only 'silu' is supported");
  CHECK(config_error(base, [](json& j) { j["mlp_bias"] = true; }) ==
        "m/config.json: field 'mlp_bias' true is not supported");
  CHECK(config_error(base, [](json& j) { j["eos_token_id"] = json::array({2, "x"}); }) ==
        "m/config.json: field 'eos_token_id' must be an integer or a list of integers");
  CHECK(config_error(base, [](json& j) { j = json::array(); }) == "m/config.json: not a JSON object");
}

TEST_CASE("bad rope_scaling is an InputError naming the file", "[config]") {
  const char* base = kLlama2_7B;
  CHECK(config_error(base, [](json& j) { j["rope_scaling"] = {{"type", "yarn"}, {"factor", 4.0}}; }) ==
        "m/config.json: unsupported rope_scaling type 'yarn' (supported: default, linear, llama3)");
  CHECK(config_error(base, [](json& j) { j["rope_scaling"] = {{"rope_type", "dynamic"}, {"factor", 2}}; })
            .find("unsupported rope_scaling type 'dynamic'") != std::string::npos);
  CHECK(config_error(base, [](json& j) { j["rope_scaling"] = {{"rope_type", "linear"}}; }) ==
        "m/config.json: missing field 'rope_scaling.factor'");
  CHECK(config_error(base, [](json& j) { j["rope_scaling"] = {{"factor", 2.0}}; }) ==
        "m/config.json: missing field 'rope_scaling.rope_type'");
  CHECK(config_error(base, [](json& j) { j["rope_scaling"] = {{"type", "linear"}, {"factor", -1}}; }) ==
        "m/config.json: field 'rope_scaling.factor' must be a positive number");
  CHECK(config_error(base, [](json& j) { j["rope_scaling"] = "default"; }) ==
        "m/config.json: field 'rope_scaling' must be an object or null");
  CHECK(config_error(kLlama31_8B_Instruct, [](json& j) { j["rope_scaling"].erase("low_freq_factor"); }) ==
        "m/config.json: missing field 'rope_scaling.low_freq_factor'");
  CHECK(config_error(kLlama31_8B_Instruct, [](json& j) { j["rope_scaling"]["high_freq_factor"] = 1.0; }) ==
        "m/config.json: field 'rope_scaling.high_freq_factor' must be greater than low_freq_factor");
}

TEST_CASE("config files that cannot be read name the path", "[config]") {
  ScopedTempDir dir("config-files");
  const std::string path = dir.file("config.json");
  CHECK(input_error_message([&] { ModelConfig::from_file(path); }).rfind(path + ": cannot open", 0) == 0);
  specd::test::write_text_file(path, "{\"model_type\": \"llama\",\n");
  CHECK(input_error_message([&] { ModelConfig::from_file(path); }).rfind(path + ": invalid JSON", 0) == 0);
  specd::test::write_text_file(path, kMistral_7B);
  CHECK(ModelConfig::from_file(path).model_type == "mistral");
}

TEST_CASE("rope inverse frequencies without scaling and with linear scaling", "[config][rope]") {
  ModelConfig c = parse(kLlama2_7B);
  const std::vector<double> expected = plain_inverse_frequencies(10000.0, 128);
  const std::vector<double> actual = rope_inverse_frequencies(c);
  REQUIRE(actual.size() == 64);
  CHECK(actual[0] == 1.0);
  for (size_t i = 0; i < 64; ++i) CHECK(actual[i] == Approx(expected[i]).epsilon(1e-12));
  CHECK(actual[1] == Approx(std::pow(10000.0, -2.0 / 128)).epsilon(1e-12));

  c.rope_scaling.type = RopeScalingType::Linear;
  c.rope_scaling.factor = 4.0;
  const std::vector<double> scaled = rope_inverse_frequencies(c);
  for (size_t i = 0; i < 64; ++i) CHECK(scaled[i] == Approx(expected[i] / 4.0).epsilon(1e-12));
}

TEST_CASE("rope inverse frequencies with llama3 scaling", "[config][rope]") {
  const ModelConfig c = parse(kLlama31_8B_Instruct);
  const std::vector<double> base = plain_inverse_frequencies(500000.0, 128);
  const std::vector<double> actual = rope_inverse_frequencies(c);
  REQUIRE(actual.size() == 64);

  // Llama 3.1: a pair whose wave fits more than high_freq_factor=4 times into the original 8192
  // positions keeps its frequency, one fitting fewer than low_freq_factor=1 times is slowed 8x,
  // and in between the two are mixed linearly in the number of periods.
  int kept = 0, slowed = 0, mixed = 0;
  for (size_t i = 0; i < 64; ++i) {
    const double periods = 8192.0 * base[i] / (2 * M_PI);
    double expected;
    if (periods > 4.0) {
      expected = base[i];
      ++kept;
    } else if (periods < 1.0) {
      expected = base[i] / 8.0;
      ++slowed;
    } else {
      const double weight = (periods - 1.0) / (4.0 - 1.0);
      expected = weight * base[i] + (1 - weight) * base[i] / 8.0;
      ++mixed;
    }
    CHECK(actual[i] == Approx(expected).epsilon(1e-12));
  }
  // Worked out by hand: 500000^(i/64) * 2*pi < 2048 for i <= 28 and > 8192 for i >= 35.
  CHECK(kept == 29);
  CHECK(mixed == 6);
  CHECK(slowed == 29);
  CHECK(actual[0] == 1.0);
  CHECK(actual[63] == Approx(base[63] / 8.0).epsilon(1e-12));
}

TEST_CASE("expected tensors of real configs", "[config]") {
  const std::vector<ExpectedTensor> llama2 = expected_tensors(parse(kLlama2_7B));
  CHECK(llama2.size() == 1 + 32 * 9 + 1 + 1);
  CHECK(llama2.front().name == "model.embed_tokens.weight");
  CHECK(llama2.front().shape == std::vector<int64_t>{32000, 4096});
  CHECK(llama2.back().name == "lm_head.weight");

  const std::vector<ExpectedTensor> llama3 = expected_tensors(parse(kLlama31_8B_Instruct));
  auto find = [](const std::vector<ExpectedTensor>& list, const std::string& name) {
    for (const ExpectedTensor& e : list) {
      if (e.name == name) return e.shape;
    }
    return std::vector<int64_t>{-1};
  };
  CHECK(find(llama3, "model.layers.31.self_attn.k_proj.weight") == std::vector<int64_t>{1024, 4096});
  CHECK(find(llama3, "model.layers.0.self_attn.o_proj.weight") == std::vector<int64_t>{4096, 4096});
  CHECK(find(llama3, "model.layers.0.mlp.down_proj.weight") == std::vector<int64_t>{4096, 14336});
  CHECK(find(llama3, "model.layers.0.mlp.gate_proj.weight") == std::vector<int64_t>{14336, 4096});
  CHECK(find(llama3, "model.layers.0.input_layernorm.weight") == std::vector<int64_t>{4096});

  const std::vector<ExpectedTensor> qwen = expected_tensors(parse(kQwen2_05B));
  CHECK(qwen.size() == 1 + 24 * 12 + 1);  // q/k/v biases, no lm_head: tied
  CHECK(find(qwen, "model.layers.0.self_attn.q_proj.bias") == std::vector<int64_t>{896});
  CHECK(find(qwen, "model.layers.0.self_attn.k_proj.weight") == std::vector<int64_t>{128, 896});
  CHECK(find(qwen, "model.layers.0.self_attn.o_proj.bias") == std::vector<int64_t>{-1});
  CHECK(find(qwen, "lm_head.weight") == std::vector<int64_t>{-1});

  json biased = json::parse(kLlama2_7B);
  biased["attention_bias"] = true;
  const std::vector<ExpectedTensor> with_bias = expected_tensors(ModelConfig::from_json(biased, "c"));
  CHECK(with_bias.size() == llama2.size() + 32 * 4);
  CHECK(find(with_bias, "model.layers.3.self_attn.o_proj.bias") == std::vector<int64_t>{4096});

  CHECK(expected_tensors(parse(kMistral_7B)).size() == 291);
}

TEST_CASE("check_checkpoint accepts matching checkpoints", "[config]") {
  const ModelConfig config = tiny_config();
  for (DType dtype : {DType::F32, DType::F16, DType::BF16}) {
    ScopedTempDir dir("check-ok");
    CheckpointFixture fixture(config, dtype, [](std::vector<ExpectedTensor>& t) {
      t.push_back({"model.layers.0.self_attn.rotary_emb.inv_freq", {2}});
    });
    write_safetensors(dir.file("model.safetensors"), fixture.views);
    CHECK(check_error(config, dir.path().string()).empty());
  }
  ScopedTempDir sharded("check-sharded");
  CheckpointFixture fixture(config, DType::BF16);
  write_sharded_checkpoint(sharded.path().string(), fixture.views, 512);
  CHECK(check_error(config, sharded.path().string()).empty());

  ModelConfig tied = config;
  tied.tie_word_embeddings = true;
  ScopedTempDir tied_dir("check-tied");
  write_safetensors(tied_dir.file("model.safetensors"), fixture.views);  // lm_head.weight too
  CHECK(check_error(tied, tied_dir.path().string()).empty());
}

TEST_CASE("check_checkpoint names file, tensor and the mismatch", "[config]") {
  const ModelConfig config = tiny_config();
  ScopedTempDir dir("check-bad");
  const std::string file = dir.file("model.safetensors");
  const std::string root = dir.path().string();

  SECTION("wrong shape") {
    CheckpointFixture fixture(config, DType::F32, [](std::vector<ExpectedTensor>& t) {
      for (ExpectedTensor& e : t) {
        if (e.name == "model.layers.1.self_attn.k_proj.weight") e.shape = {8, 8};
      }
    });
    write_safetensors(file, fixture.views);
    CHECK(check_error(config, root) ==
          file + ": tensor 'model.layers.1.self_attn.k_proj.weight' has shape [8, 8], expected "
                 "[4, 8] from config.json");
  }
  SECTION("wrong dtype") {
    CheckpointFixture fixture(config, DType::I32);
    write_safetensors(file, fixture.views);
    CHECK(check_error(config, root) ==
          file + ": tensor 'model.embed_tokens.weight' has dtype I32, expected F32, F16 or BF16");
  }
  SECTION("missing tensor") {
    CheckpointFixture fixture(config, DType::F32, [](std::vector<ExpectedTensor>& t) {
      t.erase(t.begin() + 5);  // model.layers.0.self_attn.o_proj.weight
    });
    write_safetensors(file, fixture.views);
    CHECK(check_error(config, root) ==
          file + ": missing tensor 'model.layers.0.self_attn.o_proj.weight' of shape [8, 8] "
                 "required by config.json");
  }
  SECTION("missing tensor in a sharded checkpoint names the index") {
    CheckpointFixture fixture(config, DType::F32, [](std::vector<ExpectedTensor>& t) { t.pop_back(); });
    write_sharded_checkpoint(root, fixture.views, 256);
    CHECK(check_error(config, root) ==
          dir.file("model.safetensors.index.json") +
              ": missing tensor 'lm_head.weight' of shape [16, 8] required by config.json");
  }
  SECTION("wrong shape in a shard names the shard") {
    CheckpointFixture fixture(config, DType::F32, [](std::vector<ExpectedTensor>& t) {
      t.back().shape = {17, 8};
    });
    const std::vector<std::string> shards = write_sharded_checkpoint(root, fixture.views, 256);
    CHECK(check_error(config, root).rfind(dir.file(shards.back()) + ": tensor 'lm_head.weight'", 0) == 0);
  }
  SECTION("unexpected tensor") {
    CheckpointFixture fixture(config, DType::F32, [](std::vector<ExpectedTensor>& t) {
      t.push_back({"model.layers.2.mlp.up_proj.weight", {12, 8}});
    });
    write_safetensors(file, fixture.views);
    CHECK(check_error(config, root) ==
          file + ": unexpected tensor 'model.layers.2.mlp.up_proj.weight' for a llama model of "
                 "this config");
  }
  SECTION("tied model with a wrongly shaped lm_head") {
    ModelConfig tied = config;
    tied.tie_word_embeddings = true;
    CheckpointFixture fixture(config, DType::F32, [](std::vector<ExpectedTensor>& t) {
      t.back().shape = {16, 4};
    });
    write_safetensors(file, fixture.views);
    CHECK(check_error(tied, root) ==
          file + ": tensor 'lm_head.weight' has shape [16, 4], expected [16, 8] from config.json");
  }
}

TEST_CASE("absurd sizes in config.json are refused at load against a stated limit", "[config][limits]") {
  const char* base = kLlama2_7B;
  CHECK(config_error(base, [](json& j) { j["max_position_embeddings"] = 2000000000; }) ==
        "m/config.json: field 'max_position_embeddings' is 2000000000, above the limit of 16777216");
  CHECK(config_error(base, [](json& j) { j["hidden_size"] = int64_t{1} << 40; }) ==
        "m/config.json: field 'hidden_size' is 1099511627776, above the limit of 1048576");
  CHECK(config_error(base, [](json& j) { j["intermediate_size"] = -5; }) ==
        "m/config.json: field 'intermediate_size' must be positive, not -5");
  CHECK(config_error(base, [](json& j) { j["num_hidden_layers"] = 0; }) ==
        "m/config.json: field 'num_hidden_layers' must be positive, not 0");
  CHECK(config_error(base, [](json& j) { j["num_hidden_layers"] = 100000; }) ==
        "m/config.json: field 'num_hidden_layers' is 100000, above the limit of 1024");
  CHECK(config_error(base, [](json& j) { j["vocab_size"] = uint64_t{1} << 63; }) ==
        "m/config.json: field 'vocab_size' is too large");
  CHECK(config_error(base, [](json& j) { j["model_type"] = "mistral"; j["sliding_window"] = int64_t{1} << 30; }) ==
        "m/config.json: field 'sliding_window' is 1073741824, above the limit of 16777216");
  // Each size within its limit, their products beyond int32 and beyond the parameter limit.
  CHECK(config_error(base, [](json& j) { j["num_attention_heads"] = 65536; j["num_key_value_heads"] = 65536; j["head_dim"] = 65536; }) ==
        "m/config.json: field 'num_attention_heads' times head_dim is 4294967296, above the limit of 1048576");
  CHECK(config_error(base, [](json& j) {
          j["vocab_size"] = 16777216;
          j["hidden_size"] = 1048576;
          j["num_attention_heads"] = 16;
          j["num_key_value_heads"] = 16;
        }) == "m/config.json: the sizes ask for 177030030163968 weights, above the limit of 1099511627776");
}
