#pragma once
// The safetensors format: 8-byte little-endian header length N, N bytes of JSON
// {name: {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__": {str: str}},
// then the data buffer that the offsets index. Reading memory-maps the file; nothing is copied.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "io/dtype.h"
#include "io/half_precision.h"

namespace specd {

// A tensor's bytes, row-major and little-endian. `data` points into a mapped file (or the caller's
// memory when writing) and may be unaligned in files whose header length is not a multiple of 8.
struct TensorView {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;  // [] is a scalar (one element)
  const void* data = nullptr;
  size_t nbytes = 0;
};

// Element i of a float tensor (F32, F64, BF16 or F16) as float; the view's data may be unaligned.
inline float tensor_element(const TensorView& view, int64_t i) {
  const char* data = static_cast<const char*>(view.data);
  switch (view.dtype) {
    case DType::F32: { float v; std::memcpy(&v, data + 4 * i, 4); return v; }
    case DType::F64: { double v; std::memcpy(&v, data + 8 * i, 8); return static_cast<float>(v); }
    case DType::BF16: { uint16_t v; std::memcpy(&v, data + 2 * i, 2); return bf16_to_float(v); }
    case DType::F16: { uint16_t v; std::memcpy(&v, data + 2 * i, 2); return half_to_float(v); }
    default: throw std::logic_error("tensor_element: " + view.name + " is not a float tensor");
  }
}

// The largest header a file may declare (the safetensors library's own limit, 100 MB): its length
// field is read before anything else and must not size an allocation unchecked.
constexpr uint64_t kMaxSafetensorsHeaderBytes = 100'000'000;

int64_t element_count(const std::vector<int64_t>& shape);
std::string shape_string(const std::vector<int64_t>& shape);  // "[4096, 32000]"

class SafetensorsFile {
 public:
  // Maps and validates the file; any malformation throws InputError "PATH: problem".
  static SafetensorsFile open(const std::string& path);

  SafetensorsFile(SafetensorsFile&& other) noexcept;
  SafetensorsFile& operator=(SafetensorsFile&& other) noexcept;
  SafetensorsFile(const SafetensorsFile&) = delete;
  SafetensorsFile& operator=(const SafetensorsFile&) = delete;
  ~SafetensorsFile();

  const std::string& path() const { return path_; }
  // Every tensor, in the order of their data in the file.
  const std::vector<TensorView>& tensors() const { return tensors_; }
  const TensorView* find(const std::string& name) const;  // nullptr when absent
  const TensorView& get(const std::string& name) const;   // InputError naming file and tensor
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  // Gives the pages holding `tensor`'s bytes back (they count as the process's resident memory
  // once read): a loader that has copied a tensor calls this so that a model's peak memory is its
  // own weights, not those plus the file. The view stays valid: reading it again re-reads the file.
  void drop_pages(const TensorView& tensor) const { drop_pages(tensor.data, tensor.nbytes); }
  // The same for `nbytes` bytes from `data` (inside the mapping; anything else is ignored).
  void drop_pages(const void* data, size_t nbytes) const;

 private:
  SafetensorsFile() = default;
  void release() noexcept;

  std::string path_;
  void* mapping_ = nullptr;
  size_t mapping_size_ = 0;
  std::vector<TensorView> tensors_;
  std::unordered_map<std::string, size_t> index_;
  std::map<std::string, std::string> metadata_;
};

// Writes the tensors in the given order with contiguous offsets, the header padded with spaces to
// a multiple of 8 bytes as Hugging Face's writer does. Atomic: a temporary file renamed into place.
// Duplicate names or nbytes that disagree with dtype and shape throw std::invalid_argument.
void write_safetensors(const std::string& path, const std::vector<TensorView>& tensors,
                       const std::map<std::string, std::string>& metadata = {});

}  // namespace specd
