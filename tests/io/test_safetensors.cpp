#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <functional>
#include <limits>
#include <random>

#include "io/checkpoint.h"
#include "io/half_precision.h"
#include "io/safetensors.h"
#include "test_helpers.h"
#include "util/error.h"

using namespace specd;
using specd::test::input_error_message;
using specd::test::ScopedTempDir;

namespace {


// Tensors with seeded random bytes; the storage outlives the views.
struct TensorSet {
  std::vector<std::vector<unsigned char>> storage;
  std::vector<TensorView> views;

  void add(const std::string& name, DType dtype, std::vector<int64_t> shape, uint32_t seed) {
    const size_t nbytes = static_cast<size_t>(element_count(shape)) * dtype_size(dtype);
    std::mt19937 rng(seed);
    std::vector<unsigned char> bytes(nbytes);
    for (unsigned char& b : bytes) b = static_cast<unsigned char>(rng());
    storage.push_back(std::move(bytes));
    views.push_back({name, dtype, std::move(shape), storage.back().data(), nbytes});
  }
};

void require_same_tensor(const TensorView& expected, const TensorView& actual) {
  CHECK(actual.name == expected.name);
  CHECK(actual.dtype == expected.dtype);
  CHECK(actual.shape == expected.shape);
  REQUIRE(actual.nbytes == expected.nbytes);
  if (expected.nbytes > 0) CHECK(std::memcmp(actual.data, expected.data, expected.nbytes) == 0);
}

// A safetensors file from raw parts, for malformed cases. `declared_length` overrides the header
// length field when non-negative.
void write_raw_safetensors(const std::string& path, const std::string& header, size_t data_bytes,
                           int64_t declared_length = -1) {
  const uint64_t length = declared_length >= 0 ? static_cast<uint64_t>(declared_length) : header.size();
  std::string bytes;
  for (int i = 0; i < 8; ++i) bytes += static_cast<char>((length >> (8 * i)) & 0xff);
  bytes += header;
  bytes += std::string(data_bytes, '\x01');
  specd::test::write_text_file(path, bytes);
}

uint32_t float_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

float bits_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

}  // namespace

TEST_CASE("safetensors round trip is bit-identical for every dtype and shape", "[safetensors]") {
  ScopedTempDir dir("safetensors-roundtrip");
  TensorSet set;
  const DType dtypes[] = {DType::F32, DType::F16, DType::BF16, DType::F64, DType::I64,
                          DType::I32, DType::I16, DType::I8,   DType::U8,  DType::BOOL};
  uint32_t seed = 1;
  for (DType dtype : dtypes) {
    const std::string base = std::string("t.") + dtype_name(dtype);
    set.add(base + ".matrix", dtype, {3, 5}, seed++);
    set.add(base + ".scalar", dtype, {}, seed++);
    set.add(base + ".empty", dtype, {4, 0, 2}, seed++);
    set.add(base + ".cube", dtype, {2, 3, 7}, seed++);
  }
  const std::map<std::string, std::string> metadata = {{"format", "pt"}, {"note", "ünïcödé \"q\""}};
  const std::string path = dir.file("all.safetensors");
  write_safetensors(path, set.views, metadata);

  const SafetensorsFile file = SafetensorsFile::open(path);
  CHECK(file.path() == path);
  CHECK(file.metadata() == metadata);
  REQUIRE(file.tensors().size() == set.views.size());
  for (const TensorView& expected : set.views) {
    const TensorView* actual = file.find(expected.name);
    REQUIRE(actual != nullptr);
    require_same_tensor(expected, *actual);
  }
  CHECK(file.get("t.F32.scalar").nbytes == 4);

  // Hugging Face pads the header so the data starts 8-byte aligned.
  const std::string raw = specd::test::read_text_file(path);
  uint64_t header_length = 0;
  for (int i = 0; i < 8; ++i) header_length |= static_cast<uint64_t>(static_cast<unsigned char>(raw[i])) << (8 * i);
  CHECK(header_length % 8 == 0);
  CHECK(raw.find("__metadata__") != std::string::npos);
}

TEST_CASE("safetensors keeps many tensors in write order and leaves no temporary file",
          "[safetensors]") {
  ScopedTempDir dir("safetensors-many");
  TensorSet set;
  for (int i = 0; i < 300; ++i) {
    set.add("layer." + std::to_string((i * 7919) % 300) + ".w", DType::F32, {i % 5 + 1, 3},
            static_cast<uint32_t>(i));
  }
  const std::string path = dir.file("many.safetensors");
  write_safetensors(path, set.views);

  const SafetensorsFile file = SafetensorsFile::open(path);
  CHECK(file.metadata().empty());
  REQUIRE(file.tensors().size() == 300);
  for (size_t i = 0; i < 300; ++i) require_same_tensor(set.views[i], file.tensors()[i]);

  size_t entries = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    (void)entry;
    ++entries;
  }
  CHECK(entries == 1);
}

TEST_CASE("safetensors files stay valid when moved", "[safetensors]") {
  ScopedTempDir dir("safetensors-move");
  TensorSet set;
  set.add("a", DType::BF16, {8}, 7);
  const std::string path = dir.file("a.safetensors");
  write_safetensors(path, set.views);
  SafetensorsFile first = SafetensorsFile::open(path);
  SafetensorsFile second = std::move(first);
  std::vector<SafetensorsFile> files;
  files.push_back(std::move(second));
  files.push_back(SafetensorsFile::open(path));
  require_same_tensor(set.views[0], files[0].get("a"));
  require_same_tensor(set.views[0], files[1].get("a"));
}

TEST_CASE("safetensors lookups of absent tensors", "[safetensors]") {
  ScopedTempDir dir("safetensors-absent");
  TensorSet set;
  set.add("present", DType::F32, {2}, 1);
  const std::string path = dir.file("x.safetensors");
  write_safetensors(path, set.views);
  const SafetensorsFile file = SafetensorsFile::open(path);
  CHECK(file.find("absent") == nullptr);
  const std::string message = input_error_message([&] { file.get("absent"); });
  CHECK(message == path + ": no tensor 'absent'");
}

TEST_CASE("safetensors writer refuses inconsistent tensors and unwritable paths", "[safetensors]") {
  ScopedTempDir dir("safetensors-writer-errors");
  const float values[4] = {1, 2, 3, 4};
  const TensorView good{"w", DType::F32, {4}, values, sizeof values};
  const TensorView short_bytes{"w", DType::F32, {5}, values, sizeof values};
  CHECK_THROWS_AS(write_safetensors(dir.file("a.safetensors"), {short_bytes}), std::invalid_argument);
  CHECK_THROWS_AS(write_safetensors(dir.file("a.safetensors"), {good, good}), std::invalid_argument);
  CHECK_FALSE(std::filesystem::exists(dir.file("a.safetensors")));

  const std::string unwritable = dir.file("no-such-dir/a.safetensors");
  const std::string message = input_error_message([&] { write_safetensors(unwritable, {good}); });
  CHECK(message.rfind(unwritable + ": cannot create file", 0) == 0);
}

TEST_CASE("malformed safetensors files are InputErrors naming the file", "[safetensors]") {
  ScopedTempDir dir("safetensors-malformed");
  const std::string path = dir.file("bad.safetensors");
  auto open_error = [&] { return input_error_message([&] { SafetensorsFile::open(path); }); };
  auto expect = [&](const std::string& fragment) {
    const std::string message = open_error();
    INFO(message);
    CHECK(message.rfind(path + ": ", 0) == 0);
    CHECK(message.find(fragment) != std::string::npos);
    CHECK(message.find('\n') == std::string::npos);
  };
  const std::string good_entry = R"("w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]})";

  SECTION("missing file") {
    expect("cannot open");
  }
  SECTION("a directory") {
    std::filesystem::create_directory(path);
    expect("not a regular file");
  }
  SECTION("shorter than the length field") {
    specd::test::write_text_file(path, "abcde");
    expect("too short");
  }
  SECTION("header length beyond the file") {
    write_raw_safetensors(path, "{" + good_entry + "}", 8, 1000);
    expect("header length 1000 exceeds the file size");
  }
  SECTION("data truncated") {
    write_raw_safetensors(path, "{" + good_entry + "}", 5);
    expect("beyond the data buffer");
  }
  SECTION("a valid file cut short") {
    const float values[2] = {1, 2};
    write_safetensors(path, {{"w", DType::F32, {2}, values, sizeof values}});
    std::filesystem::resize_file(path, std::filesystem::file_size(path) - 1);
    expect("beyond the data buffer");
  }
  SECTION("invalid JSON") {
    write_raw_safetensors(path, "{\"w\": {\"dtype\": ", 8);
    expect("invalid JSON at byte");
  }
  SECTION("header not an object") {
    write_raw_safetensors(path, "[1, 2]", 0);
    expect("header is not a JSON object");
  }
  SECTION("entry missing data_offsets") {
    write_raw_safetensors(path, R"({"w":{"dtype":"F32","shape":[2]}})", 8);
    expect("tensor 'w': missing field 'data_offsets'");
  }
  SECTION("entry missing dtype") {
    write_raw_safetensors(path, R"({"w":{"shape":[2],"data_offsets":[0,8]}})", 8);
    expect("tensor 'w': missing field 'dtype'");
  }
  SECTION("unknown dtype") {
    write_raw_safetensors(path, R"({"w":{"dtype":"F8_E4M3","shape":[2],"data_offsets":[0,2]}})", 2);
    expect("tensor 'w': unknown dtype 'F8_E4M3'");
  }
  SECTION("negative dimension") {
    write_raw_safetensors(path, R"({"w":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})", 8);
    expect("tensor 'w': field 'shape'");
  }
  SECTION("offsets not a pair") {
    write_raw_safetensors(path, R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0]}})", 8);
    expect("tensor 'w': field 'data_offsets'");
  }
  SECTION("end before begin") {
    write_raw_safetensors(path, R"({"w":{"dtype":"U8","shape":[0],"data_offsets":[8,4]}})", 8);
    expect("end before begin");
  }
  SECTION("offsets beyond the buffer") {
    write_raw_safetensors(path, R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}})", 8);
    expect("data_offsets [8, 16] beyond the data buffer of 8 bytes");
  }
  SECTION("byte count disagrees with dtype and shape") {
    write_raw_safetensors(path, R"({"w":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", 8);
    expect("hold 8 bytes but F32 [3] needs 12");
  }
  SECTION("shape too large to count") {
    write_raw_safetensors(
        path, R"({"w":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,8]}})", 8);
    expect("is too large");
  }
  SECTION("overlapping tensors") {
    write_raw_safetensors(path,
                          R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                          R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
                          12);
    expect("tensors 'a' and 'b' overlap");
  }
  SECTION("non-string metadata") {
    write_raw_safetensors(path, R"({"__metadata__":{"n":1},)" + good_entry + "}", 8);
    expect("__metadata__ value of 'n' is not a string");
  }
  SECTION("control characters in a name stay on one line") {
    write_raw_safetensors(path, R"({"bad\nname":{"dtype":"X","shape":[],"data_offsets":[0,0]}})", 0);
    expect("tensor 'bad?name'");
  }
}

TEST_CASE("sharded checkpoints round trip through the index", "[safetensors]") {
  ScopedTempDir dir("checkpoint-sharded");
  TensorSet set;
  for (int i = 0; i < 10; ++i) set.add("w" + std::to_string(i), DType::F16, {16, 4}, i + 100);
  const std::vector<std::string> shards = write_sharded_checkpoint(dir.path().string(), set.views, 300);
  REQUIRE(shards.size() == 5);  // 128 bytes each: two per shard
  CHECK(shards[0] == "model-00001-of-00005.safetensors");
  CHECK(std::filesystem::exists(dir.file("model.safetensors.index.json")));

  const Checkpoint checkpoint = Checkpoint::open_dir(dir.path().string());
  CHECK(checkpoint.source() == dir.file("model.safetensors.index.json"));
  CHECK(checkpoint.names().size() == 10);
  for (int i = 0; i < 10; ++i) {
    const std::string name = "w" + std::to_string(i);
    require_same_tensor(set.views[static_cast<size_t>(i)], checkpoint.get(name));
    CHECK(checkpoint.file_of(name) == dir.file(shards[static_cast<size_t>(i / 2)]));
  }
  CHECK(checkpoint.find("w10") == nullptr);
  CHECK(checkpoint.file_of("w10") == checkpoint.source());
  CHECK(input_error_message([&] { checkpoint.get("w10"); }) ==
        checkpoint.source() + ": no tensor 'w10'");
}

TEST_CASE("single-file checkpoints", "[safetensors]") {
  ScopedTempDir dir("checkpoint-single");
  TensorSet set;
  set.add("b", DType::BF16, {3}, 1);
  set.add("a", DType::F32, {2, 2}, 2);
  write_safetensors(dir.file("model.safetensors"), set.views);
  const Checkpoint checkpoint = Checkpoint::open_dir(dir.path().string());
  CHECK(checkpoint.names() == std::vector<std::string>{"a", "b"});
  CHECK(checkpoint.file_of("a") == dir.file("model.safetensors"));
  require_same_tensor(set.views[0], checkpoint.get("b"));
}

TEST_CASE("checkpoint directory errors name the file", "[safetensors]") {
  ScopedTempDir dir("checkpoint-errors");
  const std::string root = dir.path().string();
  const std::string index = dir.file("model.safetensors.index.json");

  SECTION("no weights") {
    CHECK(input_error_message([&] { Checkpoint::open_dir(root); }) ==
          root + ": no model.safetensors or model.safetensors.index.json");
  }
  SECTION("not a directory") {
    CHECK(input_error_message([&] { Checkpoint::open_dir(dir.file("nope")); }) ==
          dir.file("nope") + ": not a directory");
  }
  SECTION("index without weight_map") {
    specd::test::write_text_file(index, R"({"metadata": {}})");
    CHECK(input_error_message([&] { Checkpoint::open_dir(root); }) ==
          index + ": missing field 'weight_map'");
  }
  SECTION("index that is not JSON") {
    specd::test::write_text_file(index, "{");
    CHECK(input_error_message([&] { Checkpoint::open_dir(root); }).rfind(index + ": invalid JSON", 0) == 0);
  }
  SECTION("index naming a missing shard") {
    specd::test::write_text_file(index, R"({"weight_map": {"w": "gone.safetensors"}})");
    CHECK(input_error_message([&] { Checkpoint::open_dir(root); })
              .rfind(dir.file("gone.safetensors") + ": cannot open", 0) == 0);
  }
  SECTION("index naming a tensor its shard lacks") {
    const float v[1] = {1};
    write_safetensors(dir.file("s.safetensors"), {{"w", DType::F32, {1}, v, sizeof v}});
    specd::test::write_text_file(index, R"({"weight_map": {"w": "s.safetensors", "x": "s.safetensors"}})");
    CHECK(input_error_message([&] { Checkpoint::open_dir(root); }) ==
          dir.file("s.safetensors") +
              ": tensor 'x' listed in model.safetensors.index.json is not in this shard");
  }
  SECTION("a tensor in two shards") {
    const float v[1] = {1};
    write_safetensors(dir.file("s1.safetensors"), {{"w", DType::F32, {1}, v, sizeof v}});
    write_safetensors(dir.file("s2.safetensors"), {{"w", DType::F32, {1}, v, sizeof v},
                                                   {"x", DType::F32, {1}, v, sizeof v}});
    specd::test::write_text_file(index, R"({"weight_map": {"w": "s1.safetensors", "x": "s2.safetensors"}})");
    CHECK(input_error_message([&] { Checkpoint::open_dir(root); }).find("tensor 'w' is also in") !=
          std::string::npos);
  }
}

TEST_CASE("half conversions are exact on every half value", "[safetensors][half]") {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const float f = half_to_float(static_cast<uint16_t>(h));
    const bool is_nan = (h & 0x7c00) == 0x7c00 && (h & 0x3ff) != 0;
    if (is_nan) {
      REQUIRE(std::isnan(f));
      REQUIRE(std::isnan(half_to_float(float_to_half(f))));
    } else {
      REQUIRE(float_to_half(f) == h);
    }
  }
  CHECK(half_to_float(0x3c00) == 1.0f);
  CHECK(half_to_float(0xc000) == -2.0f);
  CHECK(half_to_float(0x7bff) == 65504.0f);
  CHECK(half_to_float(0x0001) == std::ldexp(1.0f, -24));
  CHECK(half_to_float(0x0400) == std::ldexp(1.0f, -14));
  CHECK(half_to_float(0x3555) == 0.333251953125f);
  CHECK(half_to_float(0x7c00) == std::numeric_limits<float>::infinity());
  CHECK(half_to_float(0xfc00) == -std::numeric_limits<float>::infinity());
  CHECK(std::signbit(half_to_float(0x8000)));
}

TEST_CASE("float to half rounds to nearest even", "[safetensors][half]") {
  const float inf = std::numeric_limits<float>::infinity();
  CHECK(float_to_half(1.0f + std::ldexp(1.0f, -11)) == 0x3c00);      // tie, even is down
  CHECK(float_to_half(1.0f + 3 * std::ldexp(1.0f, -11)) == 0x3c02);  // tie, even is up
  CHECK(float_to_half(1.0f + std::ldexp(1.0f, -11) + std::ldexp(1.0f, -20)) == 0x3c01);
  CHECK(float_to_half(65504.0f) == 0x7bff);
  CHECK(float_to_half(65519.0f) == 0x7bff);
  CHECK(float_to_half(65520.0f) == 0x7c00);  // halfway to 65536, rounds to even: infinity
  CHECK(float_to_half(1e10f) == 0x7c00);
  CHECK(float_to_half(-1e10f) == 0xfc00);
  CHECK(float_to_half(inf) == 0x7c00);
  CHECK(float_to_half(-inf) == 0xfc00);
  const uint16_t nan = float_to_half(std::numeric_limits<float>::quiet_NaN());
  CHECK((nan & 0x7c00) == 0x7c00);
  CHECK((nan & 0x3ff) != 0);
  CHECK(float_to_half(bits_float(0x7f800001)) != 0x7c00);  // a signalling nan stays a nan
  CHECK(float_to_half(-0.0f) == 0x8000);
  // Subnormals: units of 2^-24.
  CHECK(float_to_half(std::ldexp(1.0f, -24)) == 0x0001);
  CHECK(float_to_half(std::ldexp(1.0f, -25)) == 0x0000);                // tie with zero
  CHECK(float_to_half(std::ldexp(1.0f, -25) * 1.0001f) == 0x0001);
  CHECK(float_to_half(std::ldexp(3.0f, -25)) == 0x0002);                // tie, even is up
  CHECK(float_to_half(std::ldexp(5.0f, -25)) == 0x0002);                // tie, even is down
  CHECK(float_to_half(std::ldexp(2047.0f, -25)) == 0x0400);             // largest subnormal + half
  CHECK(float_to_half(std::ldexp(1.0f, -30)) == 0x0000);
  CHECK(float_to_half(std::numeric_limits<float>::denorm_min()) == 0x0000);
}

TEST_CASE("float to half picks the nearest half, ties to even, for random floats",
          "[safetensors][half]") {
  std::mt19937 rng(42);
  std::uniform_real_distribution<double> exponent(-27, 17);
  for (int i = 0; i < 200000; ++i) {
    const float x = static_cast<float>(std::exp2(exponent(rng))) * (rng() % 2 ? 1 : -1);
    const uint16_t h = float_to_half(x);
    const double error = std::fabs(static_cast<double>(half_to_float(h)) - x);
    // Neighbours by magnitude; a result of infinity is fine only beyond 65520.
    for (int step : {-1, 1}) {
      const uint16_t other = static_cast<uint16_t>(h + step);
      if ((other & 0x7fff) >= 0x7c00 || (other & 0x8000) != (h & 0x8000)) continue;
      const double other_error = std::fabs(static_cast<double>(half_to_float(other)) - x);
      INFO("x=" << x << " h=" << h);
      if (std::isinf(half_to_float(h))) {
        REQUIRE(std::fabs(x) >= 65520.0f);
      } else {
        REQUIRE(error <= other_error);
        if (error == other_error) REQUIRE((h & 1) == 0);
      }
    }
  }
}

TEST_CASE("bfloat16 conversions", "[safetensors][half]") {
  for (uint32_t b = 0; b < 0x10000; ++b) {
    const float f = bf16_to_float(static_cast<uint16_t>(b));
    REQUIRE(float_bits(f) == b << 16);
    if (std::isnan(f)) {
      REQUIRE(std::isnan(bf16_to_float(float_to_bf16(f))));
    } else {
      REQUIRE(float_to_bf16(f) == b);
    }
  }
  CHECK(float_to_bf16(1.0f) == 0x3f80);
  CHECK(float_to_bf16(bits_float(0x3f808000)) == 0x3f80);  // tie, even is down
  CHECK(float_to_bf16(bits_float(0x3f818000)) == 0x3f82);  // tie, even is up
  CHECK(float_to_bf16(bits_float(0x3f808001)) == 0x3f81);
  CHECK(float_to_bf16(std::numeric_limits<float>::max()) == 0x7f80);  // rounds up to infinity
  CHECK(float_to_bf16(-std::numeric_limits<float>::infinity()) == 0xff80);
  CHECK(float_to_bf16(bits_float(0x00018000)) == 0x0002);  // subnormal tie
  CHECK(float_to_bf16(bits_float(0x00017fff)) == 0x0001);
  const uint16_t nan = float_to_bf16(bits_float(0x7f800001));  // nan payload only in the low bits
  CHECK((nan & 0x7f80) == 0x7f80);
  CHECK((nan & 0x7f) != 0);
}
