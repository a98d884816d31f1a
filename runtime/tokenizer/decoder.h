#pragma once
// tokenizer.json "decoder": turns token strings back into text (ByteLevel, Metaspace, and the
// SentencePiece chain Replace + ByteFallback + Fuse + Strip).
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

namespace specd {

class Decoder {
 public:
  virtual ~Decoder() = default;
  // Rewrites the token strings; later steps of a Sequence see what earlier ones produced.
  virtual void decode_chain(std::vector<std::string>& tokens) const = 0;
};

// nullptr for a JSON null; InputError("<where>: ...") for unsupported types.
std::unique_ptr<Decoder> make_decoder(const nlohmann::json& config, const std::string& where);

}  // namespace specd
