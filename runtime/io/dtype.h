#pragma once
// Element types of safetensors files, named as the format names them ("F32", "BF16", ...).
#include <cstddef>
#include <optional>
#include <string>

namespace specd {

enum class DType { F32, F16, BF16, F64, I64, I32, I16, I8, U8, BOOL };

size_t dtype_size(DType dtype);
const char* dtype_name(DType dtype);
// nullopt for a name the format does not define or this reader does not support.
std::optional<DType> dtype_from_name(const std::string& name);
bool is_float_dtype(DType dtype);  // F32, F16, BF16, F64

}  // namespace specd
