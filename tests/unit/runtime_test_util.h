// Helpers shared by the CPU runtime unit tests (test_runtime_*.cpp): random data, windows and
// slices from fixed seeds, shape index arithmetic, and element-wise comparison of results
// against references. Everything here is in an anonymous namespace, so each test file gets its
// own copy.
#ifndef DLC_TESTS_UNIT_RUNTIME_TEST_UTIL_H
#define DLC_TESTS_UNIT_RUNTIME_TEST_UTIL_H

#include "dlc_kernels.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <numeric>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace {

using Shape = std::vector<int64_t>;

// Every kernel instruction set this CPU can run ($DLC_CPU narrows the list), from the
// baseline up.
inline std::vector<dlc::rt::CpuIsa> runnableIsas() {
  using dlc::rt::CpuIsa;
  std::vector<CpuIsa> isas;
  for (CpuIsa isa : {CpuIsa::Baseline, CpuIsa::Avx2, CpuIsa::Avx512})
    if (isa <= dlc::rt::selectedCpuIsa())
      isas.push_back(isa);
  return isas;
}

// A convolution window over the trailing in.size() dims, every one with the same kernel,
// stride, dilation and (begin, end) pads; the rest are size 1.
inline dlc::rt::ConvParams convParams(int64_t batch, int64_t channels, int64_t outChannels, int64_t groups,
                      std::initializer_list<int64_t> in, int64_t kernel, int64_t stride,
                      int64_t dilation, int64_t padBegin, int64_t padEnd) {
  dlc::rt::ConvParams p{};
  p.window.batch = batch;
  p.window.channels = channels;
  p.outChannels = outChannels;
  p.groups = groups;
  dlc::rt::WindowParams &w = p.window;
  for (int d = 0; d < 3; ++d)
    w.in[d] = w.out[d] = w.kernel[d] = w.stride[d] = w.dilation[d] = 1;
  int d = 3 - static_cast<int>(in.size());
  for (int64_t size : in) {
    w.in[d] = size;
    w.kernel[d] = kernel;
    w.stride[d] = stride;
    w.dilation[d] = dilation;
    w.padBegin[d] = padBegin;
    w.out[d] = (size + padBegin + padEnd - (kernel - 1) * dilation - 1) / stride + 1;
    ++d;
  }
  return p;
}

// A 3x3, stride-1, pad-1 convolution of one image of size x size (a Winograd candidate).
inline dlc::rt::ConvParams conv3x3(int64_t channels, int64_t outChannels, int64_t size) {
  return convParams(1, channels, outChannels, 1, {size, size}, 3, 1, 1, 1, 1);
}

inline int64_t randomInt(std::mt19937 &rng, int64_t lo, int64_t hi) {
  return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
}

template <typename T>
std::vector<T> randomValues(std::mt19937 &rng, int64_t n, T lo = T(-1), T hi = T(1)) {
  std::uniform_real_distribution<T> dist(lo, hi);
  std::vector<T> v(static_cast<size_t>(n));
  for (T &x : v)
    x = dist(rng);
  return v;
}

inline std::vector<float> randomFloats(std::mt19937 &rng, int64_t n, float lo = -1.0f,
                                       float hi = 1.0f) {
  return randomValues<float>(rng, n, lo, hi);
}

// The code of the value nearest to x >= 0 among `finite` (a format's non-negative finite values
// with their codes, ascending), ties to the even code; the largest when x lies beyond them.
template <typename Code>
Code nearestCode(const std::vector<std::pair<double, Code>> &finite, double x) {
  auto above = std::lower_bound(finite.begin(), finite.end(), std::make_pair(x, Code(0)),
                                [](const auto &a, const auto &b) { return a.first < b.first; });
  if (above == finite.end())
    return finite.back().second;
  if (above == finite.begin() || above->first == x)
    return above->second;
  auto below = above - 1;
  double up = above->first - x, down = x - below->first;
  return up < down ? above->second : down < up ? below->second
         : (above->second & 1) ? below->second : above->second;
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

// A random window over `spatialRank` trailing dims; leading unused dims are 1 with no padding,
// as the compiler emits them. `padEnd` receives the end pads.
inline dlc::rt::WindowParams randomWindow(std::mt19937 &rng, int spatialRank, int64_t maxIn,
                                          int64_t maxKernel, bool ceilMode, int64_t padEnd[3]) {
  dlc::rt::WindowParams w{};
  w.batch = randomInt(rng, 1, 2);
  w.channels = randomInt(rng, 1, 3);
  for (int d = 0; d < 3; ++d) {
    w.in[d] = w.out[d] = w.kernel[d] = w.stride[d] = w.dilation[d] = 1;
    w.padBegin[d] = padEnd[d] = 0;
  }
  for (int d = 3 - spatialRank; d < 3; ++d) {
    for (;;) {
      w.kernel[d] = randomInt(rng, 1, maxKernel);
      w.stride[d] = randomInt(rng, 1, 3);
      w.dilation[d] = randomInt(rng, 1, 2);
      int64_t extent = (w.kernel[d] - 1) * w.dilation[d] + 1;
      w.padBegin[d] = randomInt(rng, 0, std::min<int64_t>(2, extent - 1));
      padEnd[d] = randomInt(rng, 0, std::min<int64_t>(2, extent - 1));
      w.in[d] = randomInt(rng, 1, maxIn);
      int64_t span = w.in[d] + w.padBegin[d] + padEnd[d] - extent;
      if (span < 0)
        continue;
      w.out[d] = (ceilMode ? (span + w.stride[d] - 1) / w.stride[d] : span / w.stride[d]) + 1;
      // ONNX drops a ceil-mode window that would start inside the end padding.
      if (ceilMode && (w.out[d] - 1) * w.stride[d] >= w.in[d] + w.padBegin[d])
        --w.out[d];
      break;
    }
  }
  return w;
}

inline std::string describe(const dlc::rt::WindowParams &w, const int64_t padEnd[3]) {
  std::ostringstream os;
  os << "N" << w.batch << " C" << w.channels;
  for (int d = 0; d < 3; ++d)
    os << " | in " << w.in[d] << " out " << w.out[d] << " k " << w.kernel[d] << " s " << w.stride[d]
       << " d " << w.dilation[d] << " pad " << w.padBegin[d] << "/" << padEnd[d];
  return os.str();
}

// Input coordinate of kernel tap k for output o along dim d.
inline int64_t tapPosition(const dlc::rt::WindowParams &w, int d, int64_t o, int64_t k) {
  return o * w.stride[d] - w.padBegin[d] + k * w.dilation[d];
}

// A strided slice of a random input of rank 1 to 4: positive and negative steps, and some
// dims taken whole (which lets the kernel copy contiguous chunks).
struct SliceSpec {
  Shape inShape, starts, steps, outShape;
};

inline SliceSpec randomSlice(std::mt19937 &rng) {
  SliceSpec s;
  s.inShape.resize(static_cast<size_t>(randomInt(rng, 1, 4)));
  for (int64_t &d : s.inShape)
    d = randomInt(rng, 1, 7);
  s.starts.resize(s.inShape.size());
  s.steps.resize(s.inShape.size());
  s.outShape.resize(s.inShape.size());
  for (size_t d = 0; d < s.inShape.size(); ++d) {
    if (randomInt(rng, 0, 3) == 0) {
      s.starts[d] = 0;
      s.steps[d] = 1;
      s.outShape[d] = s.inShape[d];
      continue;
    }
    do
      s.steps[d] = randomInt(rng, -3, 3);
    while (s.steps[d] == 0);
    s.starts[d] = randomInt(rng, 0, s.inShape[d] - 1);
    int64_t available = s.steps[d] > 0 ? (s.inShape[d] - s.starts[d] + s.steps[d] - 1) / s.steps[d]
                                       : s.starts[d] / -s.steps[d] + 1;
    s.outShape[d] = randomInt(rng, 1, available);
  }
  return s;
}

inline std::string describe(const SliceSpec &s) {
  return "in " + describe(s.inShape) + " starts " + describe(s.starts) + " steps " +
         describe(s.steps) + " out " + describe(s.outShape);
}

// The index into the sliced tensor of element i of the slice.
inline int64_t sliceSource(const SliceSpec &s, int64_t i) {
  Shape idx = unravel(i, s.outShape);
  for (size_t d = 0; d < idx.size(); ++d)
    idx[d] = s.starts[d] + idx[d] * s.steps[d];
  return ravel(idx, s.inShape);
}

} // namespace

#endif // DLC_TESTS_UNIT_RUNTIME_TEST_UTIL_H
