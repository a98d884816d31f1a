#include "io/hdf5_file.h"

#include <hdf5.h>
#include <unistd.h>

#include <filesystem>
#include <type_traits>
#include <utility>

#include "io/read_file.h"
#include "util/error.h"

namespace specd {
namespace {

static_assert(std::is_same_v<hid_t, int64_t>, "Hdf5File keeps hid_t as int64_t");

// One HDF5 identifier, closed with its own close function.
class Handle {
 public:
  Handle(hid_t id, herr_t (*close)(hid_t)) : id_(id), close_(close) {}
  ~Handle() {
    if (id_ >= 0) close_(id_);
  }
  Handle(Handle&& other) noexcept : id_(std::exchange(other.id_, -1)), close_(other.close_) {}
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  hid_t get() const { return id_; }
  bool ok() const { return id_ >= 0; }

 private:
  hid_t id_;
  herr_t (*close_)(hid_t);
};

void silence_hdf5() {
  static const bool silenced = [] { return H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr) >= 0; }();
  (void)silenced;
}

// The most specific message of HDF5's error stack ("truncated file: eof = ..."), or "".
std::string hdf5_reason() {
  std::string reason;
  H5Ewalk2(
      H5E_DEFAULT, H5E_WALK_UPWARD,
      [](unsigned n, const H5E_error2_t* error, void* out) -> herr_t {
        if (n == 0 && error->desc) *static_cast<std::string*>(out) = error->desc;
        return 0;
      },
      &reason);
  H5Eclear2(H5E_DEFAULT);
  return reason;
}

std::string type_name(hid_t type) {
  const size_t bits = H5Tget_size(type) * 8;
  switch (H5Tget_class(type)) {
    case H5T_INTEGER:
      return (H5Tget_sign(type) == H5T_SGN_NONE ? "uint" : "int") + std::to_string(bits);
    case H5T_FLOAT:
      return "float" + std::to_string(bits);
    case H5T_STRING:
      return "string";
    default:
      return "a non-numeric type";
  }
}

struct Element {
  const char* name;
  H5T_class_t type_class;
  size_t size;
  bool is_signed;
  hid_t memory_type;
  hid_t file_type;
};

template <typename T>
Element element();
template <>
Element element<int32_t>() { return {"int32", H5T_INTEGER, 4, true, H5T_NATIVE_INT32, H5T_STD_I32LE}; }
template <>
Element element<int64_t>() { return {"int64", H5T_INTEGER, 8, true, H5T_NATIVE_INT64, H5T_STD_I64LE}; }
template <>
Element element<float>() { return {"float32", H5T_FLOAT, 4, false, H5T_NATIVE_FLOAT, H5T_IEEE_F32LE}; }
template <>
Element element<double>() { return {"float64", H5T_FLOAT, 8, false, H5T_NATIVE_DOUBLE, H5T_IEEE_F64LE}; }

// No creation or modification times in object headers: they would make equal contents differ.
Handle untimed(hid_t property_class) {
  Handle list(H5Pcreate(property_class), H5Pclose);
  H5Pset_obj_track_times(list.get(), false);
  return list;
}

}  // namespace

Hdf5File Hdf5File::create(const std::string& path) {
  silence_hdf5();
  Handle fcpl = untimed(H5P_FILE_CREATE);
  Handle fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
  H5Pset_libver_bounds(fapl.get(), H5F_LIBVER_V18, H5F_LIBVER_V18);
  const hid_t id = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, fcpl.get(), fapl.get());
  if (id < 0) input_error(path, "cannot create HDF5 file: " + hdf5_reason());
  return Hdf5File(path, id);
}

Hdf5File Hdf5File::open_read(const std::string& path) {
  silence_hdf5();
  ::close(open_regular_file(path).fd);  // a missing or unreadable file gets the usual message
  if (H5Fis_hdf5(path.c_str()) <= 0) {
    H5Eclear2(H5E_DEFAULT);
    input_error(path, "not an HDF5 file");
  }
  const hid_t id = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (id < 0) input_error(path, "cannot open (damaged or truncated HDF5 file): " + hdf5_reason());
  return Hdf5File(path, id);
}

Hdf5File::Hdf5File(Hdf5File&& other) noexcept : path_(std::move(other.path_)), id_(std::exchange(other.id_, -1)) {}

Hdf5File& Hdf5File::operator=(Hdf5File&& other) noexcept {
  if (this != &other) {
    if (id_ >= 0) H5Fclose(id_);
    path_ = std::move(other.path_);
    id_ = std::exchange(other.id_, -1);
  }
  return *this;
}

Hdf5File::~Hdf5File() {
  if (id_ >= 0) H5Fclose(id_);
}

void Hdf5File::close() {
  const hid_t id = std::exchange(id_, -1);
  if (id >= 0 && (H5Fflush(id, H5F_SCOPE_LOCAL) < 0 || H5Fclose(id) < 0)) fail("cannot write: " + hdf5_reason());
}

void Hdf5File::fail(const std::string& what) const { input_error(path_, what); }

void Hdf5File::write_root_attribute(const std::string& name, int64_t value) {
  Handle space(H5Screate(H5S_SCALAR), H5Sclose);
  Handle attribute(H5Acreate2(id_, name.c_str(), H5T_STD_I64LE, space.get(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
  if (!attribute.ok() || H5Awrite(attribute.get(), H5T_NATIVE_INT64, &value) < 0)
    fail("cannot write attribute " + name + ": " + hdf5_reason());
}

int64_t Hdf5File::read_root_attribute(const std::string& name) const {
  if (H5Aexists(id_, name.c_str()) <= 0) fail("root attribute " + name + " is missing");
  Handle attribute(H5Aopen(id_, name.c_str(), H5P_DEFAULT), H5Aclose);
  Handle type(H5Aget_type(attribute.get()), H5Tclose);
  Handle space(H5Aget_space(attribute.get()), H5Sclose);
  int64_t value = 0;
  if (!type.ok() || H5Tget_class(type.get()) != H5T_INTEGER || H5Sget_simple_extent_npoints(space.get()) != 1 ||
      H5Aread(attribute.get(), H5T_NATIVE_INT64, &value) < 0)
    fail("root attribute " + name + " must be one integer");
  return value;
}

bool Hdf5File::exists(const std::string& object) const {
  // H5Lexists needs every parent to exist, so walk the path one link at a time.
  for (size_t end = object.find('/', 1);; end = object.find('/', end + 1)) {
    const std::string prefix = object.substr(0, end);
    if (H5Lexists(id_, prefix.c_str(), H5P_DEFAULT) <= 0) return false;
    if (end == std::string::npos) return H5Oexists_by_name(id_, object.c_str(), H5P_DEFAULT) > 0;
  }
}

int64_t Hdf5File::link_count(const std::string& group) const {
  H5G_info_t info;
  if (H5Gget_info_by_name(id_, group.c_str(), &info, H5P_DEFAULT) < 0) input_error(path_, "cannot read group " + group + ": " + hdf5_reason());
  return static_cast<int64_t>(info.nlinks);
}

void Hdf5File::ensure_parent_groups(const std::string& object) {
  Handle gcpl = untimed(H5P_GROUP_CREATE);
  for (size_t end = object.find('/', 1); end != std::string::npos; end = object.find('/', end + 1)) {
    const std::string group = object.substr(0, end);
    if (exists(group)) continue;
    Handle created(H5Gcreate2(id_, group.c_str(), H5P_DEFAULT, gcpl.get(), H5P_DEFAULT), H5Gclose);
    if (!created.ok()) fail("cannot create group " + group + ": " + hdf5_reason());
  }
}

namespace {

template <typename T>
void write_dataset(hid_t file, const std::string& path, const std::string& name, const std::vector<T>& values) {
  const Element e = element<T>();
  const hsize_t rows = values.size();
  Handle space(H5Screate_simple(1, &rows, nullptr), H5Sclose);
  Handle dcpl = untimed(H5P_DATASET_CREATE);
  Handle dataset(H5Dcreate2(file, name.c_str(), e.file_type, space.get(), H5P_DEFAULT, dcpl.get(), H5P_DEFAULT), H5Dclose);
  if (!dataset.ok() || (rows > 0 && H5Dwrite(dataset.get(), e.memory_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()) < 0))
    input_error(path, "cannot write " + name + ": " + hdf5_reason());
}

// Opens a rank-1 dataset and returns it with its row count, after checking it is there.
std::pair<hid_t, hsize_t> open_rank1(const Hdf5File& file, hid_t id, const std::string& name) {
  if (!file.exists(name)) input_error(file.path(), name + " is missing");
  const hid_t dataset = H5Dopen2(id, name.c_str(), H5P_DEFAULT);
  if (dataset < 0) input_error(file.path(), name + " cannot be opened: " + hdf5_reason());
  Handle space(H5Dget_space(dataset), H5Sclose);
  const int rank = H5Sget_simple_extent_ndims(space.get());
  hsize_t rows = 0;
  if (rank != 1) {
    H5Dclose(dataset);
    input_error(file.path(), name + " has rank " + std::to_string(rank) + ", expected 1");
  }
  H5Sget_simple_extent_dims(space.get(), &rows, nullptr);
  return {dataset, rows};
}

template <typename T>
std::vector<T> read_dataset(const Hdf5File& file, hid_t id, const std::string& name) {
  const Element e = element<T>();
  auto [raw, rows] = open_rank1(file, id, name);
  Handle dataset(raw, H5Dclose);
  Handle type(H5Dget_type(dataset.get()), H5Tclose);
  const bool same = H5Tget_class(type.get()) == e.type_class && H5Tget_size(type.get()) == e.size &&
                    (e.type_class != H5T_INTEGER || (H5Tget_sign(type.get()) == H5T_SGN_2) == e.is_signed);
  if (!same) input_error(file.path(), name + " is " + type_name(type.get()) + ", expected " + e.name);
  // A declared size the file cannot hold is refused before anything is allocated: the file's own
  // size bounds an unfiltered dataset, and deflate (HDF5's usual filter) expands at most ~1032x.
  Handle dcpl(H5Dget_create_plist(dataset.get()), H5Pclose);
  std::error_code size_error;
  const uintmax_t file_bytes = std::filesystem::file_size(file.path(), size_error);
  const long double most = static_cast<long double>(size_error ? 0 : file_bytes) * (H5Pget_nfilters(dcpl.get()) > 0 ? 1100.0L : 1.0L);
  if (static_cast<long double>(rows) * static_cast<long double>(e.size) > most)
    input_error(file.path(), name + " declares " + std::to_string(rows) + " rows, more than a file of " + std::to_string(file_bytes) +
                                 " bytes can hold (damaged or hostile file)");
  std::vector<T> values(rows);
  if (rows > 0 && H5Dread(dataset.get(), e.memory_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()) < 0)
    input_error(file.path(), name + " cannot be read (damaged or truncated file): " + hdf5_reason());
  return values;
}

}  // namespace

void Hdf5File::write(const std::string& dataset, const std::vector<int32_t>& values) {
  ensure_parent_groups(dataset);
  write_dataset(id_, path_, dataset, values);
}

void Hdf5File::write(const std::string& dataset, const std::vector<int64_t>& values) {
  ensure_parent_groups(dataset);
  write_dataset(id_, path_, dataset, values);
}

void Hdf5File::write(const std::string& dataset, const std::vector<float>& values) {
  ensure_parent_groups(dataset);
  write_dataset(id_, path_, dataset, values);
}

void Hdf5File::write(const std::string& dataset, const std::vector<double>& values) {
  ensure_parent_groups(dataset);
  write_dataset(id_, path_, dataset, values);
}

std::vector<int32_t> Hdf5File::read_int32(const std::string& dataset) const { return read_dataset<int32_t>(*this, id_, dataset); }
std::vector<int64_t> Hdf5File::read_int64(const std::string& dataset) const { return read_dataset<int64_t>(*this, id_, dataset); }
std::vector<float> Hdf5File::read_float32(const std::string& dataset) const { return read_dataset<float>(*this, id_, dataset); }
std::vector<double> Hdf5File::read_float64(const std::string& dataset) const { return read_dataset<double>(*this, id_, dataset); }

int64_t Hdf5File::length(const std::string& dataset) const {
  auto [raw, rows] = open_rank1(*this, id_, dataset);
  H5Dclose(raw);
  return static_cast<int64_t>(rows);
}

}  // namespace specd
