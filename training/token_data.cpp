#include "token_data.h"

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <thread>

#include "io/atomic_file.h"
#include "io/read_file.h"
#include "tokenizer/tokenizer.h"
#include "util/error.h"

namespace specd::training {
namespace {

constexpr char kMagic[8] = {'S', 'P', 'D', 'I', 'D', 'S', '0', '1'};

// FNV-1a, 64 bits: a cache key, not a security boundary.
uint64_t fnv1a(std::string_view bytes, uint64_t hash = 1469598103934665603ull) {
  for (unsigned char c : bytes) hash = (hash ^ c) * 1099511628211ull;
  return hash;
}

std::string hex(uint64_t value) {
  char buffer[17];
  std::snprintf(buffer, sizeof buffer, "%016llx", static_cast<unsigned long long>(value));
  return buffer;
}

bool read_cache(const std::string& path, std::vector<int32_t>& ids) {
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error)) return false;  // absent (or not a file): tokenize again
  const uint64_t size = std::filesystem::file_size(path, error);
  std::ifstream in(path, std::ios::binary);
  if (!in || error) return false;
  char magic[8];
  uint64_t count = 0;
  if (!in.read(magic, 8) || std::memcmp(magic, kMagic, 8) || !in.read(reinterpret_cast<char*>(&count), 8)) return false;
  // The count is checked against the file's size before it sizes anything: a damaged cache is
  // rebuilt, never trusted with an allocation.
  if (count > (size - 16) / 4 || 16 + count * 4 != size) return false;
  ids.resize(count);
  return static_cast<bool>(in.read(reinterpret_cast<char*>(ids.data()), static_cast<std::streamsize>(count * 4)));
}

void write_cache(const std::string& path, const std::vector<int32_t>& ids) {
  AtomicFileWriter out(path);
  uint64_t count = ids.size();
  out.write(kMagic, 8);
  out.write(&count, 8);
  out.write(ids.data(), ids.size() * sizeof(int32_t));
  out.commit();
}

}  // namespace

std::vector<std::string_view> split_documents(std::string_view text, std::string_view separator) {
  std::vector<std::string_view> docs;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find(separator, start);
    if (end == std::string_view::npos) end = text.size();
    if (end > start) docs.push_back(text.substr(start, end - start));
    start = end == text.size() ? end : end + separator.size();
  }
  return docs;
}

std::vector<int32_t> tokenize_documents(const Tokenizer& tokenizer, std::string_view text, std::string_view separator,
                                        int32_t end_of_text, int threads) {
  std::vector<std::string_view> docs = split_documents(text, separator);
  std::vector<std::vector<int32_t>> encoded(docs.size());
  threads = std::max(1, threads);
  // Documents are independent: encode them on several threads, every thread its own stride.
  auto work = [&](int first) {
    for (size_t i = first; i < docs.size(); i += threads) encoded[i] = tokenizer.encode(docs[i], false);
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(work, t);
  work(0);
  for (auto& thread : pool) thread.join();

  std::vector<int32_t> ids;
  for (const auto& doc : encoded) {
    ids.insert(ids.end(), doc.begin(), doc.end());
    ids.push_back(end_of_text);
  }
  return ids;
}

int32_t end_of_text_id(const Tokenizer& tokenizer, const std::string& tokenizer_path) {
  auto id = tokenizer.token_to_id("<|endoftext|>");
  if (!id) input_error(tokenizer_path, "has no <|endoftext|> token");
  return *id;
}

std::vector<int32_t> load_token_ids(const std::string& text_path, const std::string& tokenizer_path,
                                    const std::string& cache_dir, int threads, std::ostream& log) {
  std::string text = read_whole_file(text_path);
  std::string tokenizer_json = read_whole_file(tokenizer_path);
  uint64_t key = fnv1a(kDocumentSeparator, fnv1a(tokenizer_json, fnv1a(text)));
  std::string stem = std::filesystem::path(text_path).stem().string();
  std::string cache_path = (std::filesystem::path(cache_dir) / (stem + "-" + hex(key) + ".ids")).string();

  std::vector<int32_t> ids;
  if (read_cache(cache_path, ids)) {
    log << "tokens: " << text_path << ": " << ids.size() << " ids from cache " << cache_path << "\n";
    return ids;
  }
  auto start = std::chrono::steady_clock::now();
  Tokenizer tokenizer = Tokenizer::from_file(tokenizer_path);
  ids = tokenize_documents(tokenizer, text, kDocumentSeparator, end_of_text_id(tokenizer, tokenizer_path), threads);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::filesystem::create_directories(cache_dir);
  write_cache(cache_path, ids);
  log << "tokens: " << text_path << ": " << text.size() << " bytes -> " << ids.size() << " ids in " << seconds
            << " s, cached as " << cache_path << "\n";
  return ids;
}

}  // namespace specd::training
