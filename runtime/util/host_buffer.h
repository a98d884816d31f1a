#pragma once
// Host memory for weights and KV rows, without libtorch. Large buffers come straight from mmap:
// zero pages that take no memory until written, so a KV cache sized for a long context costs
// resident memory only for the rows a request writes.
#include <cstddef>
#include <cstdint>

namespace specd {

class HostBuffer {
 public:
  HostBuffer() = default;
  // `bytes` zero bytes, aligned to 64 (one cache line, one AVX-512 vector).
  explicit HostBuffer(size_t bytes);
  ~HostBuffer();
  HostBuffer(HostBuffer&& other) noexcept;
  HostBuffer& operator=(HostBuffer&& other) noexcept;
  HostBuffer(const HostBuffer&) = delete;
  HostBuffer& operator=(const HostBuffer&) = delete;

  void* data() { return data_; }
  const void* data() const { return data_; }
  template <typename T>
  T* as() { return static_cast<T*>(data_); }
  template <typename T>
  const T* as() const { return static_cast<const T*>(data_); }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

 private:
  void release() noexcept;

  void* data_ = nullptr;
  size_t size_ = 0;
  bool mapped_ = false;
};

}  // namespace specd
