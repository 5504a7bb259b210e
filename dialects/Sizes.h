// Checked size arithmetic. Every element count, byte size, offset and arena sum the compiler
// derives from a model goes through these functions: shapes come from untrusted files, and a
// product that wraps around int64 would otherwise plan a tiny buffer for a huge tensor.
// Lean on purpose (no MLIR): the importer, the dialect, the passes and codegen all include it.
#ifndef DLC_DIALECTS_SIZES_H
#define DLC_DIALECTS_SIZES_H

#include <cstdint>
#include <optional>
#include <string>

namespace dlc {

// The largest tensor, and the largest arena, dlc plans: 1 TiB. Anything above is refused
// at compile time; it is far beyond any real model and leaves int64 sums of many such sizes
// far from overflow.
constexpr int64_t kMaxTensorBytes = int64_t(1) << 40;
inline const char kMaxTensorBytesText[] = "1 TiB (2^40 bytes)";

// nullopt when an operand is negative or the result leaves int64.
inline std::optional<int64_t> checkedMul(int64_t a, int64_t b) {
  int64_t r;
  if (a < 0 || b < 0 || __builtin_mul_overflow(a, b, &r))
    return std::nullopt;
  return r;
}
inline std::optional<int64_t> checkedAdd(int64_t a, int64_t b) {
  int64_t r;
  if (a < 0 || b < 0 || __builtin_add_overflow(a, b, &r))
    return std::nullopt;
  return r;
}

// Product of `dims` (any range of integers); nullopt on a negative dim or overflow. A zero
// dim makes the product 0 whatever the other dims are.
template <typename Dims> std::optional<int64_t> checkedElementCount(const Dims &dims) {
  bool empty = false;
  for (auto d : dims) {
    if (d < 0)
      return std::nullopt;
    empty |= d == 0;
  }
  if (empty)
    return 0;
  int64_t count = 1;
  for (auto d : dims) {
    auto next = checkedMul(count, static_cast<int64_t>(d));
    if (!next)
      return std::nullopt;
    count = *next;
  }
  return count;
}

// Bytes of a dense tensor; nullopt on a negative dim, overflow, or above kMaxTensorBytes. The
// limit holds for the nonzero dims of an empty tensor too, so that every partial product of an
// accepted shape (a reduced extent, a plane, a row) fits in int64 wherever it is computed: a
// [0, 3, 2^63-1, 5] tensor holds nothing, yet its last two dims multiply beyond int64.
template <typename Dims>
std::optional<int64_t> checkedTensorBytes(const Dims &dims, int64_t elementBytes) {
  int64_t extentBytes = elementBytes;
  bool empty = false;
  for (auto d : dims) {
    if (d < 0)
      return std::nullopt;
    empty |= d == 0;
    auto next = d == 0 ? std::optional<int64_t>(extentBytes)
                       : checkedMul(extentBytes, static_cast<int64_t>(d));
    if (!next || *next > kMaxTensorBytes)
      return std::nullopt;
    extentBytes = *next;
  }
  return empty ? 0 : extentBytes;
}

// "[2,3,4]", for messages.
template <typename Dims> std::string dimsString(const Dims &dims) {
  std::string s = "[";
  bool first = true;
  for (auto d : dims) {
    s += (first ? "" : ",") + std::to_string(static_cast<int64_t>(d));
    first = false;
  }
  return s + "]";
}

} // namespace dlc

#endif
