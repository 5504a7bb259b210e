// Checked size arithmetic (dialects/Sizes.h) against 128-bit reference arithmetic.
#include "dialects/Sizes.h"

#include <catch2/catch.hpp>

#include <random>
#include <vector>

namespace {

// The exact byte count in 128 bits, or -1 when a dim is negative; with `skipZeros`, of the
// nonzero dims only (what the limit applies to).
__int128 exactBytes(const std::vector<int64_t> &dims, int64_t elementBytes, bool skipZeros) {
  const __int128 huge = __int128(1) << 100; // far above any limit
  __int128 product = elementBytes;
  for (int64_t d : dims)
    if (d < 0)
      return -1;
  for (int64_t d : dims)
    if (d != 0 || !skipZeros)
      product = d != 0 && product > huge / d ? huge : product * d; // saturates, never wraps
  return product;
}

} // namespace

TEST_CASE("checked tensor bytes agree with exact arithmetic", "[sizes]") {
  std::mt19937_64 rng(7);
  const int64_t edges[] = {0, 1, 2, 3, 1 << 20, int64_t(1) << 31, int64_t(1) << 32,
                           int64_t(1) << 38, int64_t(1) << 40, INT64_MAX, -1, INT64_MIN};
  for (int trial = 0; trial < 20000; ++trial) {
    std::vector<int64_t> dims(rng() % 5);
    for (int64_t &d : dims)
      d = rng() % 3 ? static_cast<int64_t>(rng() % 4096) : edges[rng() % std::size(edges)];
    int64_t elementBytes = int64_t(1) << (rng() % 4);
    __int128 exact = exactBytes(dims, elementBytes, false);
    __int128 extent = exactBytes(dims, elementBytes, true);
    auto checked = dlc::checkedTensorBytes(dims, elementBytes);
    bool fits = extent >= 0 && extent <= dlc::kMaxTensorBytes;
    INFO("dims " << dlc::dimsString(dims) << " x " << elementBytes);
    REQUIRE(checked.has_value() == fits);
    if (fits)
      REQUIRE(*checked == static_cast<int64_t>(exact));
  }
}

TEST_CASE("checked add and multiply refuse overflow and negatives", "[sizes]") {
  CHECK(dlc::checkedMul(int64_t(1) << 31, int64_t(1) << 31) == int64_t(1) << 62);
  CHECK_FALSE(dlc::checkedMul(int64_t(1) << 32, int64_t(1) << 31));
  CHECK_FALSE(dlc::checkedMul(-1, 2));
  CHECK(dlc::checkedAdd(INT64_MAX - 1, 1) == INT64_MAX);
  CHECK_FALSE(dlc::checkedAdd(INT64_MAX, 1));
  CHECK_FALSE(dlc::checkedAdd(0, -1));
  CHECK(dlc::checkedElementCount(std::vector<int64_t>{}) == 1);
  CHECK(dlc::checkedTensorBytes(std::vector<int64_t>{int64_t(1) << 38}, 4) == dlc::kMaxTensorBytes);
  CHECK_FALSE(dlc::checkedTensorBytes(std::vector<int64_t>{(int64_t(1) << 38) + 1}, 4));
  // Empty, yet its other dims multiply beyond int64 (a fuzzed GlobalMaxPool input).
  CHECK_FALSE(dlc::checkedTensorBytes(std::vector<int64_t>{0, 3, INT64_MAX, 5}, 4));
  CHECK(dlc::checkedTensorBytes(std::vector<int64_t>{0, 3, 7}, 4) == 0);
  CHECK(dlc::dimsString(std::vector<int64_t>{2, 3}) == "[2,3]");
}
