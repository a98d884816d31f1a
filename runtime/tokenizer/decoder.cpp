#include "tokenizer/decoder.h"

#include <nlohmann/json.hpp>

#include "tokenizer/byte_level_alphabet.h"
#include "tokenizer/metaspace.h"
#include "tokenizer/pattern.h"
#include "io/json_reader.h"
#include "util/error.h"
#include "util/utf8.h"

namespace specd {
namespace {

const char* const kReplacementCharacter = "\xEF\xBF\xBD";

// All tokens become one string of their bytes; tokens that are not byte-level symbols (added
// tokens such as "<|im_end|>") keep their own bytes.
class ByteLevelDecoder : public Decoder {
 public:
  void decode_chain(std::vector<std::string>& tokens) const override {
    std::string bytes;
    for (const auto& token : tokens) {
      std::string token_bytes;
      bytes += from_byte_level(token, token_bytes) ? token_bytes : token;
    }
    tokens.assign(1, utf8_lossy(bytes));
  }
};

class MetaspaceDecoder : public Decoder {
 public:
  explicit MetaspaceDecoder(MetaspaceOptions options)
      : options_(std::move(options)), marker_(Pattern::literal(options_.replacement)) {}
  void decode_chain(std::vector<std::string>& tokens) const override {
    for (std::size_t i = 0; i < tokens.size(); ++i) {
      // Every marker of the first token goes, not just a leading one: HF's rule.
      const bool drop = i == 0 && options_.prepend_scheme != PrependScheme::Never;
      tokens[i] = marker_.replace_all(tokens[i], drop ? "" : " ");
    }
  }

 private:
  MetaspaceOptions options_;
  Pattern marker_;
};

class ReplaceDecoder : public Decoder {
 public:
  ReplaceDecoder(Pattern pattern, std::string content)
      : pattern_(std::move(pattern)), content_(std::move(content)) {}
  void decode_chain(std::vector<std::string>& tokens) const override {
    for (auto& token : tokens) token = pattern_.replace_all(token, content_);
  }

 private:
  Pattern pattern_;
  std::string content_;
};

// Runs of <0xXX> tokens become the text they spell, or one U+FFFD per byte if not valid UTF-8.
class ByteFallbackDecoder : public Decoder {
 public:
  void decode_chain(std::vector<std::string>& tokens) const override {
    std::vector<std::string> out;
    std::string pending;
    std::size_t pending_count = 0;
    const auto flush = [&] {
      if (pending_count == 0) return;
      if (is_valid_utf8(pending)) {
        out.push_back(pending);
      } else {
        for (std::size_t i = 0; i < pending_count; ++i) out.emplace_back(kReplacementCharacter);
      }
      pending.clear();
      pending_count = 0;
    };
    for (auto& token : tokens) {
      int byte = byte_token_value(token);
      if (byte >= 0) {
        pending += static_cast<char>(byte);
        ++pending_count;
      } else {
        flush();
        out.push_back(std::move(token));
      }
    }
    flush();
    tokens = std::move(out);
  }

 private:
  static int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  }
  // The byte of a "<0xXX>" token, or -1.
  static int byte_token_value(const std::string& token) {
    if (token.size() != 6 || token.compare(0, 3, "<0x") != 0 || token[5] != '>') return -1;
    const int high = hex_digit(token[3]), low = hex_digit(token[4]);
    return high < 0 || low < 0 ? -1 : high * 16 + low;
  }
};

class FuseDecoder : public Decoder {
 public:
  void decode_chain(std::vector<std::string>& tokens) const override {
    std::string joined;
    for (const auto& token : tokens) joined += token;
    tokens.assign(1, std::move(joined));
  }
};

// Removes up to `start` leading and `stop` trailing copies of one character from each token.
class StripDecoder : public Decoder {
 public:
  StripDecoder(std::string content, std::size_t start, std::size_t stop)
      : content_(std::move(content)), start_(start), stop_(stop) {}
  void decode_chain(std::vector<std::string>& tokens) const override {
    const std::size_t width = content_.size();
    for (auto& token : tokens) {
      std::size_t begin = 0, end = token.size();
      for (std::size_t i = 0; i < start_ && end - begin >= width &&
                              token.compare(begin, width, content_) == 0;
           ++i) {
        begin += width;
      }
      for (std::size_t i = 0; i < stop_ && end - begin >= width &&
                              token.compare(end - width, width, content_) == 0;
           ++i) {
        end -= width;
      }
      token = token.substr(begin, end - begin);
    }
  }

 private:
  std::string content_;
  std::size_t start_;
  std::size_t stop_;
};

class SequenceDecoder : public Decoder {
 public:
  explicit SequenceDecoder(std::vector<std::unique_ptr<Decoder>> steps)
      : steps_(std::move(steps)) {}
  void decode_chain(std::vector<std::string>& tokens) const override {
    for (const auto& step : steps_) step->decode_chain(tokens);
  }

 private:
  std::vector<std::unique_ptr<Decoder>> steps_;
};

}  // namespace

std::unique_ptr<Decoder> make_decoder(const nlohmann::json& config, const std::string& where) {
  if (config.is_null()) return nullptr;
  const std::string type = config.at("type").get<std::string>();
  if (type == "ByteLevel") return std::make_unique<ByteLevelDecoder>();
  if (type == "Metaspace") {
    return std::make_unique<MetaspaceDecoder>(parse_metaspace_options(config, where));
  }
  if (type == "Replace") {
    return std::make_unique<ReplaceDecoder>(
        Pattern::from_json(config.at("pattern"), where + ": decoder Replace"),
        config.at("content").get<std::string>());
  }
  if (type == "ByteFallback") return std::make_unique<ByteFallbackDecoder>();
  if (type == "Fuse") return std::make_unique<FuseDecoder>();
  if (type == "Strip") {
    // HF's content is one character; an empty one would strip nothing, start/stop times over.
    const std::string content = config.at("content").get<std::string>();
    if (content.empty()) input_error(where, "decoder Strip needs a non-empty content");
    // Counts of characters: a float, a negative number or 1e76 is refused, not converted (UB).
    const JsonObjectReader strip(config, where, "decoder.");
    constexpr int64_t kMaxCount = 1 << 20;
    return std::make_unique<StripDecoder>(content, static_cast<std::size_t>(strip.integer_in("start", 0, kMaxCount)),
                                          static_cast<std::size_t>(strip.integer_in("stop", 0, kMaxCount)));
  }
  if (type == "Sequence") {
    std::vector<std::unique_ptr<Decoder>> steps;
    for (const auto& step : config.at("decoders")) {
      if (auto decoder = make_decoder(step, where)) steps.push_back(std::move(decoder));
    }
    return std::make_unique<SequenceDecoder>(std::move(steps));
  }
  input_error(where, "unsupported decoder type " + single_quoted(type));
}

}  // namespace specd
