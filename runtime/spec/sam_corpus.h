#pragma once
// SAM-Decoding's static corpus (../shared/research/algorithms.md §1.3): token documents the target
// itself generated offline (`specd calibrate sam-corpus`: greedy answers to the calibration
// prompts), indexed once by a suffix automaton that decoding never updates. Per request only a
// match cursor moves, fed the prompt and every committed token.
//
// File (JSON, written atomically): {"format": "specd-sam-corpus", "version": 1,
// "tokenizer_fnv1a": "<16 hex digits>", "vocab_size": N, "source": "...", "documents": [[ids]...]}.
// The tokenizer hash ties the ids to one vocabulary: a corpus of another tokenizer is refused.
#include <cstdint>
#include <string>
#include <vector>

#include "spec/suffix_automaton.h"

namespace specd {

struct SamCorpus {
  std::string tokenizer_fnv1a;  // FNV-1a 64 of the tokenizer.json bytes
  int64_t vocab_size = 0;
  std::string source;           // how it was made (model, prompts, options), for people
  std::vector<std::vector<int32_t>> documents;
};

// FNV-1a 64 of a file's bytes as 16 hex digits (InputError naming the file if unreadable).
std::string file_fnv1a(const std::string& path);

// InputError naming the file and the problem on anything malformed.
SamCorpus read_sam_corpus(const std::string& path);
void write_sam_corpus(const std::string& path, const SamCorpus& corpus);

// The automaton over all documents, each followed by `separator` (the EOS id, as in the
// reference), and a cursor per request.
class StaticSam {
 public:
  StaticSam(const SamCorpus& corpus, int32_t separator);
  const SuffixAutomaton& automaton() const { return automaton_; }
  int64_t tokens() const { return automaton_.size(); }

 private:
  SuffixAutomaton automaton_;
};

}  // namespace specd
