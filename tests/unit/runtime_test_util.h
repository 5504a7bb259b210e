// Helpers shared by the CPU runtime unit tests (test_runtime_*.cpp): random data from fixed
// seeds, shape index arithmetic, and element-wise comparison of results against references.
// Everything here is in an anonymous namespace, so each test file gets its own copy.
#ifndef DLC_TESTS_UNIT_RUNTIME_TEST_UTIL_H
#define DLC_TESTS_UNIT_RUNTIME_TEST_UTIL_H

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <numeric>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace {

using Shape = std::vector<int64_t>;

inline int64_t randomInt(std::mt19937 &rng, int64_t lo, int64_t hi) {
  return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
}

inline std::vector<float> randomFloats(std::mt19937 &rng, int64_t n, float lo = -1.0f,
                                       float hi = 1.0f) {
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(static_cast<size_t>(n));
  for (float &x : v)
    x = dist(rng);
  return v;
}

inline int64_t numElements(const Shape &shape) {
  return std::accumulate(shape.begin(), shape.end(), int64_t{1}, std::multiplies<int64_t>());
}

// Row-major multi-index of linear index `i`.
inline Shape unravel(int64_t i, const Shape &shape) {
  Shape idx(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    idx[d] = i % shape[d];
    i /= shape[d];
  }
  return idx;
}

inline int64_t ravel(const Shape &idx, const Shape &shape) {
  int64_t i = 0;
  for (size_t d = 0; d < shape.size(); ++d)
    i = i * shape[d] + idx[d];
  return i;
}

inline std::string describe(const Shape &shape) {
  std::ostringstream os;
  os << '[';
  for (size_t d = 0; d < shape.size(); ++d)
    os << (d ? "," : "") << shape[d];
  os << ']';
  return os.str();
}

// Requires |actual[i] - expected[i]| <= rel * max(|expected[i]|, scale[i]) + abs for all i
// (scale defaults to 0), and NaN exactly where expected is NaN.
template <typename T>
void requireClose(const std::vector<T> &actual, const std::vector<double> &expected, double rel,
                  double abs = 0.0, const std::vector<double> *scale = nullptr) {
  REQUIRE(actual.size() == expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    double got = static_cast<double>(actual[i]), want = expected[i];
    if (std::isnan(want)) {
      if (!std::isnan(got))
        FAIL("element " << i << ": got " << got << ", expected NaN");
      continue;
    }
    if (std::isinf(want)) {
      if (got != want)
        FAIL("element " << i << ": got " << got << ", expected " << want);
      continue;
    }
    double mag = std::max(std::fabs(want), scale ? (*scale)[i] : 0.0);
    double tol = rel * mag + abs;
    if (!(std::fabs(got - want) <= tol))
      FAIL("element " << i << ": got " << got << ", expected " << want << " (tolerance " << tol
                      << ")");
  }
}

template <typename T>
void requireEqual(const std::vector<T> &actual, const std::vector<T> &expected) {
  REQUIRE(actual.size() == expected.size());
  for (size_t i = 0; i < actual.size(); ++i)
    if (!(actual[i] == expected[i]))
      FAIL("element " << i << ": got " << +actual[i] << ", expected " << +expected[i]);
}

inline std::vector<unsigned char> randomBytes(std::mt19937 &rng, int64_t n) {
  std::vector<unsigned char> v(static_cast<size_t>(n));
  for (unsigned char &b : v)
    b = static_cast<unsigned char>(randomInt(rng, 0, 255));
  return v;
}

} // namespace

#endif // DLC_TESTS_UNIT_RUNTIME_TEST_UTIL_H
