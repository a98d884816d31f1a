#include "io/sha256.h"

#include <openssl/evp.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "io/read_file.h"
#include "util/error.h"

namespace specd {

Sha256::Sha256() : ctx_(EVP_MD_CTX_new()) {
  if (!ctx_ || EVP_DigestInit_ex(ctx_, EVP_sha256(), nullptr) != 1) throw std::runtime_error("OpenSSL: cannot start SHA-256");
}

Sha256::~Sha256() { EVP_MD_CTX_free(ctx_); }

void Sha256::update(const void* data, size_t size) {
  if (size > 0 && EVP_DigestUpdate(ctx_, data, size) != 1) throw std::runtime_error("OpenSSL: SHA-256 update failed");
}

std::string Sha256::hex_digest() {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (EVP_DigestFinal_ex(ctx_, digest, &length) != 1) throw std::runtime_error("OpenSSL: SHA-256 final failed");
  static const char kHex[] = "0123456789abcdef";
  std::string hex;
  for (unsigned int i = 0; i < length; ++i) {
    hex += kHex[digest[i] >> 4];
    hex += kHex[digest[i] & 15];
  }
  return hex;
}

std::string sha256_bytes(const void* data, size_t size) {
  Sha256 hash;
  hash.update(data, size);
  return hash.hex_digest();
}

std::string sha256_bytes(const std::string& bytes) { return sha256_bytes(bytes.data(), bytes.size()); }

std::string sha256_file(const std::string& path) {
  const OpenedFile file = open_regular_file(path);
  Sha256 hash;
  std::vector<char> block(1 << 20);
  for (;;) {
    const ssize_t got = ::read(file.fd, block.data(), block.size());
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      const int error = errno;
      ::close(file.fd);
      input_error(path, std::string("cannot read: ") + std::strerror(error));
    }
    if (got == 0) break;
    hash.update(block.data(), static_cast<size_t>(got));
  }
  ::close(file.fd);
  return hash.hex_digest();
}

}  // namespace specd
