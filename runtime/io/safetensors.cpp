#include "io/safetensors.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <unordered_set>
#include <utility>

#include <nlohmann/json.hpp>

#include "io/atomic_file.h"
#include "io/json_reader.h"
#include "io/read_file.h"
#include "util/error.h"

namespace specd {

using nlohmann::json;

namespace {

// Bytes of a tensor of this dtype and shape; false on a negative dimension or overflow.
bool checked_nbytes(const std::vector<int64_t>& shape, DType dtype, uint64_t& nbytes) {
  uint64_t total = dtype_size(dtype);
  for (int64_t dim : shape) {
    if (dim < 0 || __builtin_mul_overflow(total, static_cast<uint64_t>(dim), &total)) return false;
  }
  nbytes = total;
  return true;
}

bool is_non_negative_integer(const json& value) { return value.is_number_unsigned(); }

struct Placed {
  TensorView view;
  uint64_t begin;
  uint64_t end;
};

Placed parse_entry(const std::string& path, const std::string& name, const json& entry,
                   const unsigned char* buffer, uint64_t buffer_size) {
  const std::string tensor = "tensor " + single_quoted(name) + ": ";
  auto fail = [&](const std::string& problem) { input_error(path, tensor + problem); };
  if (!entry.is_object()) fail("entry is not a JSON object");
  for (const char* key : {"dtype", "shape", "data_offsets"}) {
    if (!entry.contains(key)) fail(std::string("missing field '") + key + "'");
  }

  Placed placed;
  placed.view.name = name;
  const json& dtype = entry["dtype"];
  if (!dtype.is_string()) fail("field 'dtype' must be a string");
  const std::optional<DType> parsed = dtype_from_name(dtype.get<std::string>());
  if (!parsed) fail("unknown dtype " + single_quoted(dtype.get<std::string>()));
  placed.view.dtype = *parsed;

  const json& shape = entry["shape"];
  if (!shape.is_array()) fail("field 'shape' must be an array of non-negative integers");
  for (const json& dim : shape) {
    if (!is_non_negative_integer(dim) ||
        dim.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      fail("field 'shape' must be an array of non-negative integers");
    }
    placed.view.shape.push_back(static_cast<int64_t>(dim.get<uint64_t>()));
  }

  const json& offsets = entry["data_offsets"];
  if (!offsets.is_array() || offsets.size() != 2 || !is_non_negative_integer(offsets[0]) ||
      !is_non_negative_integer(offsets[1])) {
    fail("field 'data_offsets' must be [begin, end] with non-negative integers");
  }
  placed.begin = offsets[0].get<uint64_t>();
  placed.end = offsets[1].get<uint64_t>();
  const std::string span =
      "data_offsets [" + std::to_string(placed.begin) + ", " + std::to_string(placed.end) + "]";
  if (placed.end < placed.begin) fail(span + " end before begin");
  if (placed.end > buffer_size) {
    fail(span + " beyond the data buffer of " + std::to_string(buffer_size) + " bytes (truncated?)");
  }
  uint64_t expected = 0;
  if (!checked_nbytes(placed.view.shape, placed.view.dtype, expected)) {
    fail("shape " + shape_string(placed.view.shape) + " is too large");
  }
  const uint64_t nbytes = placed.end - placed.begin;
  if (nbytes != expected) {
    fail(span + " hold " + std::to_string(nbytes) + " bytes but " + dtype_name(placed.view.dtype) +
         " " + shape_string(placed.view.shape) + " needs " + std::to_string(expected));
  }
  placed.view.data = buffer + placed.begin;
  placed.view.nbytes = static_cast<size_t>(nbytes);
  return placed;
}

}  // namespace

int64_t element_count(const std::vector<int64_t>& shape) {
  int64_t count = 1;
  for (int64_t dim : shape) count *= dim;
  return count;
}

std::string shape_string(const std::vector<int64_t>& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) text += ", ";
    text += std::to_string(shape[i]);
  }
  return text + "]";
}

void SafetensorsFile::drop_pages(const void* start, size_t nbytes) const {
  const auto* base = static_cast<const char*>(mapping_);
  const auto* data = static_cast<const char*>(start);
  if (mapping_ == nullptr || nbytes == 0 || data < base || data + nbytes > base + mapping_size_) return;
  // Whole pages from the one holding the first byte: a page shared with the next tensor is read
  // again from the file if that tensor is.
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  const size_t first = static_cast<size_t>(data - base) / page * page;
  const size_t end = std::min(mapping_size_, static_cast<size_t>(data - base) + nbytes);
  ::madvise(const_cast<char*>(base) + first, end - first, MADV_DONTNEED);
}

SafetensorsFile SafetensorsFile::open(const std::string& path) {
  SafetensorsFile file;
  file.path_ = path;

  const auto [fd, size] = open_regular_file(path);
  if (size < 8) {
    ::close(fd);
    input_error(path, "file of " + std::to_string(size) +
                          " bytes is too short for the 8-byte header length (truncated?)");
  }
  void* mapping = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  const int map_error = errno;
  ::close(fd);
  if (mapping == MAP_FAILED) input_error(path, std::string("cannot map: ") + std::strerror(map_error));
  file.mapping_ = mapping;  // from here on the destructor unmaps, also when validation throws
  file.mapping_size_ = size;

  const auto* bytes = static_cast<const unsigned char*>(mapping);
  uint64_t header_size = 0;
  for (int i = 0; i < 8; ++i) header_size |= static_cast<uint64_t>(bytes[i]) << (8 * i);
  if (header_size > kMaxSafetensorsHeaderBytes) {
    input_error(path, "header length " + std::to_string(header_size) + " exceeds the limit of " +
                          std::to_string(kMaxSafetensorsHeaderBytes) + " bytes");
  }
  if (header_size > size - 8) {
    input_error(path, "header length " + std::to_string(header_size) + " exceeds the file size " +
                          std::to_string(size) + " (truncated?)");
  }
  const json header = parse_json(
      std::string_view(reinterpret_cast<const char*>(bytes + 8), static_cast<size_t>(header_size)), path);
  if (!header.is_object()) input_error(path, "header is not a JSON object");

  const unsigned char* buffer = bytes + 8 + header_size;
  const uint64_t buffer_size = size - 8 - header_size;
  std::vector<Placed> placed;
  for (const auto& [key, value] : header.items()) {
    if (key == "__metadata__") {
      if (!value.is_object()) input_error(path, "__metadata__ is not a JSON object");
      for (const auto& [meta_key, meta_value] : value.items()) {
        if (!meta_value.is_string()) {
          input_error(path, "__metadata__ value of " + single_quoted(meta_key) + " is not a string");
        }
        file.metadata_[meta_key] = meta_value.get<std::string>();
      }
      continue;
    }
    placed.push_back(parse_entry(path, key, value, buffer, buffer_size));
  }

  std::sort(placed.begin(), placed.end(), [](const Placed& a, const Placed& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  for (size_t i = 1; i < placed.size(); ++i) {
    if (placed[i].begin < placed[i - 1].end) {
      input_error(path, "tensors " + single_quoted(placed[i - 1].view.name) + " and " +
                            single_quoted(placed[i].view.name) + " overlap in the data buffer");
    }
  }
  for (Placed& p : placed) {
    file.index_.emplace(p.view.name, file.tensors_.size());
    file.tensors_.push_back(std::move(p.view));
  }
  return file;
}

SafetensorsFile::SafetensorsFile(SafetensorsFile&& other) noexcept { *this = std::move(other); }

SafetensorsFile& SafetensorsFile::operator=(SafetensorsFile&& other) noexcept {
  if (this != &other) {
    release();
    path_ = std::move(other.path_);
    mapping_ = std::exchange(other.mapping_, nullptr);
    mapping_size_ = std::exchange(other.mapping_size_, 0);
    tensors_ = std::move(other.tensors_);
    index_ = std::move(other.index_);
    metadata_ = std::move(other.metadata_);
  }
  return *this;
}

SafetensorsFile::~SafetensorsFile() { release(); }

void SafetensorsFile::release() noexcept {
  if (mapping_ != nullptr) ::munmap(mapping_, mapping_size_);
  mapping_ = nullptr;
  mapping_size_ = 0;
}

const TensorView* SafetensorsFile::find(const std::string& name) const {
  auto it = index_.find(name);
  return it == index_.end() ? nullptr : &tensors_[it->second];
}

const TensorView& SafetensorsFile::get(const std::string& name) const {
  const TensorView* view = find(name);
  if (view == nullptr) input_error(path_, "no tensor " + single_quoted(name));
  return *view;
}

void write_safetensors(const std::string& path, const std::vector<TensorView>& tensors,
                       const std::map<std::string, std::string>& metadata) {
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  std::unordered_set<std::string> names;
  uint64_t offset = 0;
  for (const TensorView& t : tensors) {
    uint64_t nbytes = 0;
    if (t.name == "__metadata__" || !names.insert(t.name).second) {
      throw std::invalid_argument("write_safetensors: duplicate or reserved tensor name " + t.name);
    }
    if (!checked_nbytes(t.shape, t.dtype, nbytes) || nbytes != t.nbytes ||
        (t.data == nullptr && nbytes > 0)) {
      throw std::invalid_argument("write_safetensors: tensor " + t.name + " of " +
                                  dtype_name(t.dtype) + " " + shape_string(t.shape) + " has " +
                                  std::to_string(t.nbytes) + " bytes");
    }
    header[t.name] = {{"dtype", dtype_name(t.dtype)},
                      {"shape", t.shape},
                      {"data_offsets", {offset, offset + nbytes}}};
    offset += nbytes;
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');

  unsigned char length[8];
  for (int i = 0; i < 8; ++i) length[i] = static_cast<unsigned char>(text.size() >> (8 * i));
  AtomicFileWriter out(path);
  out.write(length, sizeof length);
  out.write(text);
  for (const TensorView& t : tensors) out.write(t.data, t.nbytes);
  out.commit();
}

}  // namespace specd
