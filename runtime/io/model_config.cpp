#include "io/model_config.h"

#include <cmath>
#include <filesystem>
#include <map>

#include "io/atomic_file.h"
#include "io/json_reader.h"
#include "util/error.h"

namespace specd {

using nlohmann::json;

namespace {

int64_t positive_integer(const JsonObjectReader& reader, const std::string& key, int64_t value, int64_t limit) {
  if (value <= 0) reader.fail(key, "must be positive, not " + std::to_string(value));
  if (value > limit) reader.fail(key, "is " + std::to_string(value) + ", above the limit of " + std::to_string(limit));
  return value;
}

int64_t positive_integer(const JsonObjectReader& reader, const std::string& key, int64_t limit) {
  return positive_integer(reader, key, reader.integer(key), limit);
}

// Weights the config asks for; each factor is bounded, so the sum cannot overflow int64.
int64_t parameter_count(const ModelConfig& c) {
  const int64_t q_rows = c.num_attention_heads * c.head_dim, kv_rows = c.num_key_value_heads * c.head_dim;
  const int64_t per_layer = 2 * c.hidden_size + (q_rows + 2 * kv_rows) * c.hidden_size + c.hidden_size * q_rows +
                            3 * c.intermediate_size * c.hidden_size;
  return c.vocab_size * c.hidden_size * (c.tie_word_embeddings ? 1 : 2) + c.num_hidden_layers * per_layer + c.hidden_size;
}

double positive_number(const JsonObjectReader& reader, const std::string& key, double value) {
  if (!(value > 0) || !std::isfinite(value)) reader.fail(key, "must be a positive number");
  return value;
}

RopeScaling parse_rope_scaling(const json& value, const std::string& where,
                               const std::string& field) {
  if (value.is_null()) return {};
  if (!value.is_object()) input_error(where, "field '" + field + "' must be an object or null");
  const JsonObjectReader reader(value, where, field + ".");
  // transformers wrote "type" before it wrote "rope_type".
  const std::string type = reader.has("rope_type") || !reader.has("type")
                               ? reader.string("rope_type")
                               : reader.string("type");
  RopeScaling scaling;
  if (type == "default") return scaling;
  if (type == "linear") {
    scaling.type = RopeScalingType::Linear;
    scaling.factor = positive_number(reader, "factor", reader.number("factor"));
    return scaling;
  }
  if (type == "llama3") {
    scaling.type = RopeScalingType::Llama3;
    scaling.factor = positive_number(reader, "factor", reader.number("factor"));
    scaling.low_freq_factor =
        positive_number(reader, "low_freq_factor", reader.number("low_freq_factor"));
    scaling.high_freq_factor =
        positive_number(reader, "high_freq_factor", reader.number("high_freq_factor"));
    if (scaling.high_freq_factor <= scaling.low_freq_factor) {
      reader.fail("high_freq_factor", "must be greater than low_freq_factor");
    }
    scaling.original_max_position_embeddings =
        positive_integer(reader, "original_max_position_embeddings", kMaxPositions);
    return scaling;
  }
  input_error(where, "unsupported " + field + " type " + single_quoted(type) +
                         " (supported: default, linear, llama3)");
}

std::vector<int64_t> parse_token_ids(const JsonObjectReader& reader, const json& object,
                                     const std::string& key) {
  if (!reader.has(key)) return {};
  const json& value = object.at(key);
  if (!value.is_array()) return {reader.integer(key)};
  std::vector<int64_t> ids;
  for (const json& id : value) {
    if (!id.is_number_integer()) reader.fail(key, "must be an integer or a list of integers");
    ids.push_back(id.get<int64_t>());
  }
  return ids;
}

json rope_scaling_json(const RopeScaling& scaling) {
  switch (scaling.type) {
    case RopeScalingType::None:
      return nullptr;
    case RopeScalingType::Linear:
      return {{"rope_type", "linear"}, {"factor", scaling.factor}};
    case RopeScalingType::Llama3:
      return {{"rope_type", "llama3"},
              {"factor", scaling.factor},
              {"low_freq_factor", scaling.low_freq_factor},
              {"high_freq_factor", scaling.high_freq_factor},
              {"original_max_position_embeddings", scaling.original_max_position_embeddings}};
  }
  return nullptr;
}

template <typename T>
json optional_json(const std::optional<T>& value) {
  return value ? json(*value) : json(nullptr);
}

}  // namespace

bool RopeScaling::operator==(const RopeScaling& o) const {
  return type == o.type && factor == o.factor && low_freq_factor == o.low_freq_factor &&
         high_freq_factor == o.high_freq_factor &&
         original_max_position_embeddings == o.original_max_position_embeddings;
}

bool ModelConfig::operator==(const ModelConfig& o) const {
  return model_type == o.model_type && vocab_size == o.vocab_size &&
         hidden_size == o.hidden_size && intermediate_size == o.intermediate_size &&
         num_hidden_layers == o.num_hidden_layers && num_attention_heads == o.num_attention_heads &&
         num_key_value_heads == o.num_key_value_heads && head_dim == o.head_dim &&
         max_position_embeddings == o.max_position_embeddings && rope_theta == o.rope_theta &&
         rms_norm_eps == o.rms_norm_eps && rope_scaling == o.rope_scaling &&
         tie_word_embeddings == o.tie_word_embeddings && qkv_bias == o.qkv_bias &&
         o_proj_bias == o.o_proj_bias && sliding_window == o.sliding_window &&
         bos_token_id == o.bos_token_id && eos_token_ids == o.eos_token_ids &&
         pad_token_id == o.pad_token_id && torch_dtype == o.torch_dtype;
}

ModelConfig ModelConfig::from_json(const json& object, const std::string& where) {
  if (!object.is_object()) input_error(where, "not a JSON object");
  const JsonObjectReader reader(object, where);
  ModelConfig c;
  c.model_type = reader.string("model_type");
  const bool llama = c.model_type == "llama", mistral = c.model_type == "mistral",
             qwen2 = c.model_type == "qwen2";
  if (!llama && !mistral && !qwen2) {
    input_error(where, "unsupported model_type " + single_quoted(c.model_type) +
                           " (supported: llama, mistral, qwen2)");
  }
  if (reader.has("hidden_act") && reader.string("hidden_act") != "silu") {
    reader.fail("hidden_act", "is " + single_quoted(reader.string("hidden_act")) + "; only 'silu' is supported");
  }

  c.vocab_size = positive_integer(reader, "vocab_size", kMaxVocabSize);
  c.hidden_size = positive_integer(reader, "hidden_size", kMaxModelWidth);
  c.intermediate_size = positive_integer(reader, "intermediate_size", kMaxModelWidth);
  c.num_hidden_layers = positive_integer(reader, "num_hidden_layers", kMaxHiddenLayers);
  c.num_attention_heads = positive_integer(reader, "num_attention_heads", kMaxModelWidth);
  c.num_key_value_heads = positive_integer(
      reader, "num_key_value_heads",
      reader.optional_integer("num_key_value_heads").value_or(c.num_attention_heads), kMaxModelWidth);
  if (c.num_attention_heads % c.num_key_value_heads != 0) {
    reader.fail("num_key_value_heads", "(" + std::to_string(c.num_key_value_heads) +
                                           ") must divide num_attention_heads (" +
                                           std::to_string(c.num_attention_heads) + ")");
  }
  if (reader.has("head_dim")) {
    c.head_dim = positive_integer(reader, "head_dim", kMaxModelWidth);
  } else {
    if (c.hidden_size % c.num_attention_heads != 0) {
      reader.fail("hidden_size", "is not a multiple of num_attention_heads and head_dim is not set");
    }
    c.head_dim = c.hidden_size / c.num_attention_heads;
  }
  if (c.head_dim % 2 != 0) reader.fail("head_dim", "must be even for rotary embeddings");
  if (c.num_attention_heads * c.head_dim > kMaxModelWidth) {
    reader.fail("num_attention_heads", "times head_dim is " + std::to_string(c.num_attention_heads * c.head_dim) +
                                           ", above the limit of " + std::to_string(kMaxModelWidth));
  }
  c.max_position_embeddings = positive_integer(reader, "max_position_embeddings", kMaxPositions);
  c.rms_norm_eps = positive_number(reader, "rms_norm_eps",
                                   reader.optional_number("rms_norm_eps").value_or(1e-6));
  c.tie_word_embeddings = reader.boolean("tie_word_embeddings", false);

  // transformers 5 moved rope_theta and the scaling into "rope_parameters".
  const bool has_rope_parameters = !reader.has("rope_scaling") && reader.has("rope_parameters");
  if (has_rope_parameters) {
    const json& parameters = object.at("rope_parameters");
    c.rope_scaling = parse_rope_scaling(parameters, where, "rope_parameters");
    const JsonObjectReader rope_reader(parameters, where, "rope_parameters.");
    if (rope_reader.has("rope_theta")) {
      c.rope_theta = positive_number(rope_reader, "rope_theta", rope_reader.number("rope_theta"));
    }
  } else if (reader.has("rope_scaling")) {
    c.rope_scaling = parse_rope_scaling(object.at("rope_scaling"), where, "rope_scaling");
  }
  if (reader.has("rope_theta")) {
    c.rope_theta = positive_number(reader, "rope_theta", reader.number("rope_theta"));
  }

  if (qwen2) c.qkv_bias = true;
  if (llama) c.qkv_bias = c.o_proj_bias = reader.boolean("attention_bias", false);
  if (reader.boolean("mlp_bias", false)) reader.fail("mlp_bias", "true is not supported");
  if (mistral && reader.has("sliding_window")) {
    c.sliding_window = positive_integer(reader, "sliding_window", kMaxPositions);
  }
  if (qwen2 && reader.boolean("use_sliding_window", false)) {
    reader.fail("use_sliding_window", "true is not supported");
  }

  if (parameter_count(c) > kMaxParameters) {
    input_error(where, "the sizes ask for " + std::to_string(parameter_count(c)) + " weights, above the limit of " +
                           std::to_string(kMaxParameters));
  }

  c.bos_token_id = reader.optional_integer("bos_token_id");
  c.eos_token_ids = parse_token_ids(reader, object, "eos_token_id");
  c.pad_token_id = reader.optional_integer("pad_token_id");
  // transformers 5 writes "dtype" where older versions wrote "torch_dtype".
  c.torch_dtype = reader.optional_string("torch_dtype")
                      .value_or(reader.optional_string("dtype").value_or(""));
  return c;
}

ModelConfig ModelConfig::from_file(const std::string& path) {
  return from_json(read_json_file(path), path);
}

json ModelConfig::to_json() const {
  static const std::map<std::string, std::string> kArchitectures = {
      {"llama", "LlamaForCausalLM"}, {"mistral", "MistralForCausalLM"}, {"qwen2", "Qwen2ForCausalLM"}};
  auto architecture = kArchitectures.find(model_type);
  json j = {
      {"architectures", json::array({architecture == kArchitectures.end() ? "" : architecture->second})},
      {"model_type", model_type},
      {"vocab_size", vocab_size},
      {"hidden_size", hidden_size},
      {"intermediate_size", intermediate_size},
      {"num_hidden_layers", num_hidden_layers},
      {"num_attention_heads", num_attention_heads},
      {"num_key_value_heads", num_key_value_heads},
      {"head_dim", head_dim},
      {"max_position_embeddings", max_position_embeddings},
      {"rope_theta", rope_theta},
      {"rope_scaling", rope_scaling_json(rope_scaling)},
      {"rms_norm_eps", rms_norm_eps},
      {"hidden_act", "silu"},
      {"tie_word_embeddings", tie_word_embeddings},
      {"bos_token_id", optional_json(bos_token_id)},
      {"pad_token_id", optional_json(pad_token_id)},
  };
  if (eos_token_ids.empty()) {
    j["eos_token_id"] = nullptr;
  } else if (eos_token_ids.size() == 1) {
    j["eos_token_id"] = eos_token_ids[0];
  } else {
    j["eos_token_id"] = eos_token_ids;
  }
  if (model_type == "llama") {
    j["attention_bias"] = qkv_bias;
    j["mlp_bias"] = false;
  }
  if (model_type == "mistral") j["sliding_window"] = optional_json(sliding_window);
  if (model_type == "qwen2") j["use_sliding_window"] = false;
  if (!torch_dtype.empty()) j["torch_dtype"] = torch_dtype;
  return j;
}

void write_hf_config(const std::string& dir, const ModelConfig& config) {
  write_file_atomically((std::filesystem::path(dir) / "config.json").string(),
                        config.to_json().dump(2) + "\n");
}

}  // namespace specd
