#include "io/dtype.h"

namespace specd {
namespace {

struct DTypeInfo {
  DType dtype;
  const char* name;
  size_t size;
};

constexpr DTypeInfo kDTypes[] = {
    {DType::F32, "F32", 4}, {DType::F16, "F16", 2}, {DType::BF16, "BF16", 2},
    {DType::F64, "F64", 8}, {DType::I64, "I64", 8}, {DType::I32, "I32", 4},
    {DType::I16, "I16", 2}, {DType::I8, "I8", 1},   {DType::U8, "U8", 1},
    {DType::BOOL, "BOOL", 1},
};

const DTypeInfo& info(DType dtype) { return kDTypes[static_cast<int>(dtype)]; }

}  // namespace

size_t dtype_size(DType dtype) { return info(dtype).size; }

const char* dtype_name(DType dtype) { return info(dtype).name; }

std::optional<DType> dtype_from_name(const std::string& name) {
  for (const DTypeInfo& d : kDTypes) {
    if (name == d.name) return d.dtype;
  }
  return std::nullopt;
}

bool is_float_dtype(DType dtype) {
  return dtype == DType::F32 || dtype == DType::F16 || dtype == DType::BF16 || dtype == DType::F64;
}

}  // namespace specd
