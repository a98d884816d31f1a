#pragma once
// A small RAII layer over the HDF5 C API for one-dimensional datasets of int32, int64 and float32
// and integer attributes on the root group. Writes are reproducible: no object timestamps, the
// 1.8 file format bounds, contiguous layout, so equal contents give equal bytes. Every failure is
// an InputError "PATH: problem" naming the file (and the dataset), HDF5's own error stack is not
// printed.
#include <cstdint>
#include <string>
#include <vector>

namespace specd {

class Hdf5File {
 public:
  static Hdf5File create(const std::string& path);  // truncates an existing file
  static Hdf5File open_read(const std::string& path);

  Hdf5File(Hdf5File&& other) noexcept;
  Hdf5File& operator=(Hdf5File&& other) noexcept;
  Hdf5File(const Hdf5File&) = delete;
  Hdf5File& operator=(const Hdf5File&) = delete;
  ~Hdf5File();

  const std::string& path() const { return path_; }

  void write_root_attribute(const std::string& name, int64_t value);
  int64_t read_root_attribute(const std::string& name) const;  // InputError when absent or not an integer

  // Absolute object paths, e.g. "/csd/rejections/step". Missing parent groups are created.
  void write(const std::string& dataset, const std::vector<int32_t>& values);
  void write(const std::string& dataset, const std::vector<int64_t>& values);
  void write(const std::string& dataset, const std::vector<float>& values);
  void write(const std::string& dataset, const std::vector<double>& values);

  bool exists(const std::string& object) const;  // a group or dataset at that path
  // How many links the group holds, from its header alone: iterating a damaged file's links can
  // crash inside libhdf5 1.10 (found by fuzzing), counting them does not read the links.
  // InputError naming the file when the group cannot be read.
  int64_t link_count(const std::string& group) const;
  // Rank-1 datasets of exactly that type; InputError "PATH: DATASET is missing" / "...is float32,
  // expected int32" / "...has rank 2, expected 1" / "...cannot be read".
  std::vector<int32_t> read_int32(const std::string& dataset) const;
  std::vector<int64_t> read_int64(const std::string& dataset) const;
  std::vector<float> read_float32(const std::string& dataset) const;
  std::vector<double> read_float64(const std::string& dataset) const;
  int64_t length(const std::string& dataset) const;  // rows of a rank-1 dataset

  // Flushes and closes; errors surface here rather than in the destructor.
  void close();

 private:
  Hdf5File(std::string path, int64_t id) : path_(std::move(path)), id_(id) {}
  [[noreturn]] void fail(const std::string& what) const;
  void ensure_parent_groups(const std::string& object);

  std::string path_;
  int64_t id_ = -1;  // hid_t
};

}  // namespace specd
