#pragma once
// Corpus text as one stream of token ids: each document encoded on its own (no special tokens)
// and followed by the end-of-text id, the way the model will see document boundaries. Encoding a
// corpus takes a while, so the ids are cached in a binary file named by a hash of the text, the
// tokenizer and the separator; a changed input gets a new name and is encoded again.
#include <cstdint>
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

namespace specd {
class Tokenizer;
}

namespace specd::training {

// The corpus format of data/corpus/build/*.txt: every document is followed by this.
inline constexpr const char* kDocumentSeparator = "<|endoftext|>\n";

std::vector<std::string_view> split_documents(std::string_view text, std::string_view separator);

std::vector<int32_t> tokenize_documents(const Tokenizer& tokenizer, std::string_view text, std::string_view separator,
                                        int32_t end_of_text, int threads);

// The ids of `text_path` from `cache_dir` when cached there, else encoded and cached (atomically).
// Says on `log` where the ids came from.
std::vector<int32_t> load_token_ids(const std::string& text_path, const std::string& tokenizer_path,
                                    const std::string& cache_dir, int threads, std::ostream& log);

// The id of the tokenizer's "<|endoftext|>" (InputError naming the file when it has none).
int32_t end_of_text_id(const Tokenizer& tokenizer, const std::string& tokenizer_path);

}  // namespace specd::training
