// Reading and writing NumPy .npy files (format versions 1.0 and 2.0), for the tools and tests
// that feed models and compare their outputs. Only little-endian, C-order arrays of the dtypes
// dlc_dtype names are supported; the host is assumed little-endian.
#ifndef DLC_NPY_H
#define DLC_NPY_H

#include "dlc_runtime.h"

#include <cstdint>
#include <string>
#include <vector>

namespace dlc {
namespace npy {

struct Array {
  dlc_dtype dtype;
  std::vector<int64_t> shape; // empty for a 0-d array
  std::vector<unsigned char> data;
};

// Returns false and, when `error` is non-null, a message naming the file and the problem. `out`
// is only written on success.
bool load(const char *path, Array &out, std::string *error);
// Writes `rank` dims of `shape` (may be null when rank is 0) and the matching data bytes.
bool save(const char *path, dlc_dtype dtype, const int64_t *shape, int rank, const void *data,
          std::string *error);

// .npy has no bfloat16, float8 or 4- and 2-bit dtypes: their bits arrive as integers or raw
// bytes of the same width. When `wanted` is one of these types and `array` holds such bits,
// retags the array as `wanted` and returns true; otherwise changes nothing.
bool adoptStoredType(Array &array, dlc_dtype wanted);

} // namespace npy
} // namespace dlc

#endif // DLC_NPY_H
