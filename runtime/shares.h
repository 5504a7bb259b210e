// Internal to the runtime: splitting items into near-equal shares.
#ifndef DLC_RUNTIME_SHARES_H
#define DLC_RUNTIME_SHARES_H

#include <cstdint>

namespace dlc {
namespace rt {

// Where share `index` of `parts` near-equal shares of [0, total) starts, rounded up to a
// multiple of `align` (whole tiles: no share but the last begins or ends with an edge tile);
// share `parts` starts at total. Rounding up keeps every share within `align` - 1 of
// total / parts and none above ceil(total / parts / align) * align.
inline int64_t shareStart(int64_t total, int64_t parts, int64_t index, int64_t align = 1) {
  const int64_t start = (total * index / parts + align - 1) / align * align;
  return start < total ? start : total;
}

} // namespace rt
} // namespace dlc

#endif
