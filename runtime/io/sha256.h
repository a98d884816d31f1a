#pragma once
// SHA-256 (OpenSSL's EVP), printed as 64 lowercase hex digits: the hashes that tie an artifact to
// its files and to the models it was calibrated for.
#include <cstddef>
#include <string>

struct evp_md_ctx_st;

namespace specd {

// Streaming: update() any number of times, then hex_digest() once.
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;

  void update(const void* data, size_t size);
  void update(const std::string& bytes) { update(bytes.data(), bytes.size()); }
  std::string hex_digest();

 private:
  evp_md_ctx_st* ctx_;
};

std::string sha256_bytes(const void* data, size_t size);
std::string sha256_bytes(const std::string& bytes);
// Reads the file in blocks; InputError naming the path when it cannot be read.
std::string sha256_file(const std::string& path);

}  // namespace specd
