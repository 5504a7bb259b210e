// Tests for the CPU runtime's softmax and reduction kernels and its data movement kernels
// (copy, transpose, concat, gather, slice) against naive references, on random shapes from
// fixed seeds.
#include "dlc_runtime.h"
#include "runtime_test_util.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

using namespace dlc::rt;

//===----------------------------------------------------------------------------------------===//
// Softmax and reductions
//===----------------------------------------------------------------------------------------===//

// Softmax over element type T against a double-precision reference, within `rel`.
template <typename T> void checkSoftmax(std::mt19937 &rng, double rel) {
  // Middle axes: blocks of 64 columns and the rest (70, 130), a partial vector of columns
  // (84: 64 and 20), columns too few for vectors (3, 70's last 6).
  const int64_t shapes[][3] = {{1, 10, 1},  {3, 7, 1},   {2, 5, 3},  {2, 33, 70},
                               {1, 1, 130}, {4, 257, 1}, {2, 3, 64}, {5, 16, 1},
                               {3, 1, 1},   {2, 1500, 1}, {1, 16, 84}};
  for (const auto &s : shapes) {
    for (bool log : {false, true}) {
      for (T offset : {0.0, 1000.0}) {
        int64_t outer = s[0], n = s[1], inner = s[2];
        INFO("outer " << outer << " n " << n << " inner " << inner << " log " << log << " offset "
                      << offset << ", " << sizeof(T) << "-byte elements");
        // A large common offset overflows exp() unless the max is subtracted first.
        std::vector<T> x = randomValues<T>(rng, outer * n * inner, -10.0, 10.0);
        for (T &v : x)
          v += offset;
        std::vector<T> y(x.size());
        softmax(x.data(), y.data(), outer, n, inner, log);
        std::vector<double> want(x.size());
        for (int64_t o = 0; o < outer; ++o)
          for (int64_t l = 0; l < inner; ++l) {
            auto at = [&](int64_t j) { return static_cast<size_t>((o * n + j) * inner + l); };
            double mx = -INFINITY, sum = 0;
            for (int64_t j = 0; j < n; ++j)
              mx = std::max(mx, double(x[at(j)]));
            for (int64_t j = 0; j < n; ++j)
              sum += std::exp(x[at(j)] - mx);
            for (int64_t j = 0; j < n; ++j)
              want[at(j)] = log ? x[at(j)] - mx - std::log(sum) : std::exp(x[at(j)] - mx) / sum;
          }
        requireClose(y, want, rel, rel / 100);

        // In place.
        softmax(x.data(), x.data(), outer, n, inner, log);
        requireClose(x, want, rel, rel / 100);
      }
    }
  }
}

TEST_CASE("softmax and log-softmax are accurate and stable", "[reduce]") {
  std::mt19937 rng(13);
  checkSoftmax<float>(rng, 1e-4);
  checkSoftmax<double>(rng, 1e-12);
}

TEST_CASE("channels-last global pools over many positions sum them in chunks", "[reduce]") {
  std::mt19937 rng(15);
  // 4900 positions of 24 channels (one block, 2 chunks of positions), 4096 of 150 (five
  // blocks, the last 16 + 6 wide, 8 chunks), 196 of 480 (2 chunks), 1600 of 1100 (2 chunks,
  // as many as the partial sums' room takes), 900 of 40 (no chunks).
  for (const Shape &shape : {Shape{1, 70, 70, 24}, Shape{1, 64, 64, 150}, Shape{1, 14, 14, 480},
                             Shape{1, 40, 40, 1100}, Shape{1, 30, 30, 40}}) {
    const int64_t positions = shape[1] * shape[2], channels = shape[3];
    const Shape outStrides{0, 0, 0, 1};
    std::vector<float> x = randomFloats(rng, positions * channels, -3.0f, 3.0f);
    for (ReduceKind kind : {ReduceKind::Sum, ReduceKind::Mean, ReduceKind::Max}) {
      INFO("kind " << static_cast<int>(kind) << " shape " << describe(shape));
      std::vector<double> want(size_t(channels), kind == ReduceKind::Max ? -1e300 : 0.0),
          scale(size_t(channels), 0.0);
      for (int64_t p = 0; p < positions; ++p)
        for (int64_t c = 0; c < channels; ++c) {
          const double v = x[size_t(p * channels + c)];
          want[size_t(c)] = kind == ReduceKind::Max ? std::max(want[size_t(c)], v)
                                                    : want[size_t(c)] + v;
          scale[size_t(c)] += std::fabs(v);
        }
      if (kind == ReduceKind::Mean)
        for (size_t c = 0; c < want.size(); ++c) {
          want[c] /= double(positions);
          scale[c] /= double(positions);
        }
      std::vector<float> y(want.size(), std::numeric_limits<float>::quiet_NaN());
      reduce(kind, x.data(), shape.data(), outStrides.data(), 4, y.data(), channels, positions);
      requireClose(y, want, 1e-5, 0.0, &scale);
    }
  }
}

TEST_CASE("reductions over arbitrary axis sets", "[reduce]") {
  std::mt19937 rng(14);
  const ReduceKind kinds[] = {ReduceKind::Sum, ReduceKind::Mean, ReduceKind::Max, ReduceKind::Min};
  for (int trial = 0; trial < 120; ++trial) {
    Shape shape;
    do {
      shape.resize(static_cast<size_t>(randomInt(rng, 1, 5)));
      for (int64_t &d : shape)
        d = randomInt(rng, 1, trial % 4 == 0 ? 40 : 6);
    } while (numElements(shape) > 20000);
    std::vector<bool> reduced(shape.size());
    for (size_t d = 0; d < shape.size(); ++d)
      reduced[d] = randomInt(rng, 0, 1) == 1;
    if (trial % 10 == 0)
      std::fill(reduced.begin(), reduced.end(), true);

    Shape outShape, outStrides(shape.size(), 0);
    int64_t reducedCount = 1;
    for (size_t d = 0; d < shape.size(); ++d) {
      if (reduced[d])
        reducedCount *= shape[d];
      else
        outShape.push_back(shape[d]);
    }
    int64_t stride = 1;
    for (size_t d = shape.size(); d-- > 0;) {
      if (!reduced[d]) {
        outStrides[d] = stride;
        stride *= shape[d];
      }
    }
    const int64_t outCount = numElements(outShape);
    std::vector<float> x = randomFloats(rng, numElements(shape), -3.0f, 3.0f);

    for (ReduceKind kind : kinds) {
      INFO("kind " << static_cast<int>(kind) << " shape " << describe(shape) << " out "
                   << describe(outShape));
      std::vector<double> want(static_cast<size_t>(outCount)), scale(want.size(), 0.0);
      std::vector<bool> first(want.size(), true);
      for (int64_t i = 0; i < numElements(shape); ++i) {
        Shape idx = unravel(i, shape), outIdx;
        for (size_t d = 0; d < shape.size(); ++d)
          if (!reduced[d])
            outIdx.push_back(idx[d]);
        size_t o = static_cast<size_t>(ravel(outIdx, outShape));
        double v = x[static_cast<size_t>(i)];
        if (first[o]) {
          want[o] = v;
          first[o] = false;
        } else if (kind == ReduceKind::Max) {
          want[o] = std::max(want[o], v);
        } else if (kind == ReduceKind::Min) {
          want[o] = std::min(want[o], v);
        } else {
          want[o] += v;
        }
        scale[o] += std::fabs(v);
      }
      if (kind == ReduceKind::Mean)
        for (size_t o = 0; o < want.size(); ++o) {
          want[o] /= reducedCount;
          scale[o] /= reducedCount;
        }
      std::vector<float> y(want.size(), std::numeric_limits<float>::quiet_NaN());
      reduce(kind, x.data(), shape.data(), outStrides.data(), static_cast<int>(shape.size()),
             y.data(), outCount, reducedCount);
      requireClose(y, want, 1e-4, 0.0, &scale);
      // The double kernel accumulates in double: float's 1e-4 would not meet 1e-12.
      std::vector<double> xWide(x.begin(), x.end()), yWide(want.size(), std::nan(""));
      reduce(kind, xWide.data(), shape.data(), outStrides.data(), static_cast<int>(shape.size()),
             yWide.data(), outCount, reducedCount);
      requireClose(yWide, want, 1e-12, 0.0, &scale);
    }
  }
}

TEST_CASE("mean over the middle axes: a channels-last global pool", "[reduce]") {
  // Runs of 70 channels (two whole blocks of columns and a partial one) and of 20 (a partial
  // one only), over 6 x 5 positions of one image.
  std::mt19937 rng(15);
  for (int64_t channels : {70, 20}) {
    const Shape shape{1, 6, 5, channels};
    const int64_t outStrides[] = {0, 0, 0, 1}, positions = 30;
    const std::vector<float> x = randomFloats(rng, numElements(shape), -3.0f, 3.0f);
    std::vector<double> want(size_t(channels), 0.0), scale(want.size(), 0.0);
    for (int64_t p = 0; p < positions; ++p)
      for (int64_t c = 0; c < channels; ++c) {
        want[size_t(c)] += x[size_t(p * channels + c)] / double(positions);
        scale[size_t(c)] += std::fabs(x[size_t(p * channels + c)]) / double(positions);
      }
    std::vector<float> y(want.size(), std::numeric_limits<float>::quiet_NaN());
    reduce(ReduceKind::Mean, x.data(), shape.data(), outStrides, 4, y.data(), channels, positions);
    INFO("channels " << channels);
    requireClose(y, want, 1e-5, 0.0, &scale);
  }
}

TEST_CASE("max reduction propagates NaN, empty mean is NaN", "[reduce]") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> x = {1, 2, 3, 4, 5, 6, 7, 8, nan, 10, 11, 12, 13, 14, 15, 16, 17, 18};
  Shape shape = {18}, strides = {0};
  float y = 0;
  reduce(ReduceKind::Max, x.data(), shape.data(), strides.data(), 1, &y, 1, 18);
  CHECK(std::isnan(y));
  reduce(ReduceKind::Min, x.data(), shape.data(), strides.data(), 1, &y, 1, 18);
  CHECK(std::isnan(y));
  Shape empty = {0};
  reduce(ReduceKind::Mean, x.data(), empty.data(), strides.data(), 1, &y, 1, 0);
  CHECK(std::isnan(y));
  reduce(ReduceKind::Sum, x.data(), empty.data(), strides.data(), 1, &y, 1, 0);
  CHECK(y == 0.0f);
}

//===----------------------------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------------------------===//

namespace {

const size_t kElemSizes[] = {1, 2, 3, 4, 8, 12};

} // namespace

TEST_CASE("copyBytes", "[data]") {
  std::vector<unsigned char> a = {1, 2, 3, 4, 5}, b(5, 0);
  copyBytes(a.data(), b.data(), 5);
  CHECK(a == b);
  copyBytes(a.data(), a.data(), 5);
  copyBytes(nullptr, nullptr, 0);
  CHECK(a == b);
}

TEST_CASE("transpose permutes dims for any element size", "[data]") {
  std::mt19937 rng(15);
  for (int trial = 0; trial < 150; ++trial) {
    Shape inShape(static_cast<size_t>(randomInt(rng, 1, 5)));
    for (int64_t &d : inShape)
      d = randomInt(rng, 1, trial % 5 == 0 ? 17 : 5);
    if (trial == 0)
      inShape = {3, 0, 4};
    Shape perm(inShape.size());
    std::iota(perm.begin(), perm.end(), 0);
    // Sometimes leave trailing dims in place, which the kernel copies as whole chunks.
    int64_t keep = randomInt(rng, 0, 1) ? randomInt(rng, 0, static_cast<int64_t>(perm.size())) : 0;
    std::shuffle(perm.begin(), perm.end() - keep, rng);
    size_t elemSize = kElemSizes[randomInt(rng, 0, 5)];
    INFO("shape " << describe(inShape) << " perm " << describe(perm) << " elem " << elemSize);

    std::vector<unsigned char> x = randomBytes(rng, numElements(inShape) * elemSize);
    std::vector<unsigned char> y(x.size(), 0);
    transpose(x.data(), y.data(), elemSize, inShape.data(), perm.data(),
              static_cast<int>(inShape.size()));
    Shape outShape(inShape.size());
    for (size_t d = 0; d < perm.size(); ++d)
      outShape[d] = inShape[perm[d]];
    std::vector<unsigned char> want(x.size());
    for (int64_t i = 0; i < numElements(outShape); ++i) {
      Shape outIdx = unravel(i, outShape), inIdx(inShape.size());
      for (size_t d = 0; d < perm.size(); ++d)
        inIdx[perm[d]] = outIdx[d];
      std::memcpy(&want[i * elemSize], &x[ravel(inIdx, inShape) * elemSize], elemSize);
    }
    requireEqual(y, want);
  }
}

// 4-byte elements take 4 x 4 register transposes in strips 256 long and 8 wide: sizes on
// both sides of a quad, a strip's width and its length.
TEST_CASE("4-byte matrix transposes cover every strip and quad edge", "[data]") {
  std::mt19937 rng(17);
  for (int64_t rows : {1, 3, 4, 8, 9, 255, 256, 261})
    for (int64_t cols : {2, 5, 8, 12, 257, 300}) {
      const Shape inShape = {2, rows, cols}, perm = {0, 2, 1};
      INFO("rows " << rows << " cols " << cols);
      std::vector<unsigned char> x = randomBytes(rng, numElements(inShape) * 4);
      std::vector<unsigned char> y(x.size(), 0), want(x.size());
      transpose(x.data(), y.data(), 4, inShape.data(), perm.data(), 3);
      for (int64_t n = 0; n < 2; ++n)
        for (int64_t i = 0; i < rows; ++i)
          for (int64_t j = 0; j < cols; ++j)
            std::memcpy(&want[((n * cols + j) * rows + i) * 4], &x[((n * rows + i) * cols + j) * 4],
                        4);
      requireEqual(y, want);
      std::vector<unsigned char> matrix(static_cast<size_t>(rows * cols) * 4, 0);
      transposeMatrix(x.data(), rows, cols, matrix.data(), 4);
      requireEqual(matrix, std::vector<unsigned char>(want.begin(), want.begin() + matrix.size()));
    }
}

TEST_CASE("concat along an axis", "[data]") {
  std::mt19937 rng(16);
  for (int trial = 0; trial < 30; ++trial) {
    int count = static_cast<int>(randomInt(rng, 1, 4));
    int64_t outer = randomInt(rng, 1, 4), inner = randomInt(rng, 1, 5);
    size_t elemSize = kElemSizes[randomInt(rng, 0, 5)];
    std::vector<int64_t> axisSizes;
    std::vector<std::vector<unsigned char>> inputs;
    std::vector<const void *> ptrs;
    int64_t total = 0;
    for (int i = 0; i < count; ++i) {
      axisSizes.push_back(randomInt(rng, 0, 4));
      total += axisSizes.back();
      inputs.push_back(randomBytes(rng, outer * axisSizes.back() * inner * elemSize));
      ptrs.push_back(inputs.back().data());
    }
    std::vector<unsigned char> y(outer * total * inner * elemSize);
    concat(ptrs.data(), axisSizes.data(), count, y.data(), outer, inner, elemSize);
    std::vector<unsigned char> want;
    for (int64_t o = 0; o < outer; ++o)
      for (int i = 0; i < count; ++i) {
        size_t rowBytes = axisSizes[i] * inner * elemSize;
        want.insert(want.end(), inputs[i].begin() + o * rowBytes,
                    inputs[i].begin() + (o + 1) * rowBytes);
      }
    requireEqual(y, want);
  }
}

namespace {

template <typename Index> void checkGather(uint32_t seed) {
  std::mt19937 rng(seed);
  for (int trial = 0; trial < 40; ++trial) {
    int64_t outer = randomInt(rng, 1, 4), axisDim = randomInt(rng, 1, 6),
            inner = randomInt(rng, 1, 5), numIndices = randomInt(rng, 0, 8);
    size_t elemSize = kElemSizes[randomInt(rng, 0, 5)];
    std::vector<Index> indices;
    for (int64_t j = 0; j < numIndices; ++j)
      indices.push_back(static_cast<Index>(randomInt(rng, -axisDim, axisDim - 1)));
    std::vector<unsigned char> x = randomBytes(rng, outer * axisDim * inner * elemSize);
    std::vector<unsigned char> y(outer * numIndices * inner * elemSize, 0xee);
    REQUIRE(gather<Index>(x.data(), indices.data(), numIndices, y.data(), outer, axisDim, inner,
                          elemSize));
    std::vector<unsigned char> want;
    for (int64_t o = 0; o < outer; ++o)
      for (Index idx : indices) {
        int64_t row = idx < 0 ? idx + axisDim : idx;
        auto begin = x.begin() + ((o * axisDim + row) * inner) * elemSize;
        want.insert(want.end(), begin, begin + inner * elemSize);
      }
    requireEqual(y, want);
  }
}

} // namespace

TEST_CASE("gather with negative indices", "[data]") {
  checkGather<int32_t>(17);
  checkGather<int64_t>(18);
}

TEST_CASE("gather of single floats each taken twice (nearest 2x upsampling)", "[data]") {
  // The doubling loop, and index lists that only nearly repeat (one index off, an index
  // given as its negative twin, a third repeat) through the element gather: the same result.
  std::mt19937 rng(23);
  const int64_t outer = 37, axisDim = 21;
  std::vector<float> x(outer * axisDim);
  for (float &v : x)
    v = float(randomInt(rng, -1000, 1000));
  auto check = [&](const std::vector<int64_t> &indices) {
    std::vector<float> y(outer * indices.size(), -1.0f), want;
    REQUIRE(gather<int64_t>(x.data(), indices.data(), int64_t(indices.size()), y.data(), outer,
                            axisDim, 1, sizeof(float)));
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t idx : indices)
        want.push_back(x[o * axisDim + (idx < 0 ? idx + axisDim : idx)]);
    CHECK(y == want);
  };
  std::vector<int64_t> twice;
  for (int64_t k = 0; k < 2 * axisDim; ++k)
    twice.push_back(k / 2);
  check(twice);
  std::vector<int64_t> offByOne = twice, negative = twice, thrice;
  offByOne[7] += 1;
  negative[5] -= axisDim;
  for (int64_t k = 0; k < 3 * axisDim; ++k)
    thrice.push_back(k / 3);
  check(offByOne);
  check(negative);
  check(thrice);
}

TEST_CASE("gather refuses out-of-range indices and writes nothing", "[data]") {
  const float x[6] = {1, 2, 3, 4, 5, 6}; // [3, 2], gathered along axis 0
  for (int64_t bad : {int64_t(3), int64_t(-4), INT64_MAX, INT64_MIN}) {
    const int64_t indices[3] = {-1, bad, 0};
    float y[6] = {7, 7, 7, 7, 7, 7};
    CHECK_FALSE(gather<int64_t>(x, indices, 3, y, 1, 3, 2, sizeof(float)));
    CHECK(std::vector<float>(y, y + 6) == std::vector<float>(6, 7));
  }
  const int64_t good[3] = {-1, -3, 2};
  float y[6];
  REQUIRE(gather<int64_t>(x, good, 3, y, 1, 3, 2, sizeof(float)));
  CHECK(std::vector<float>(y, y + 6) == std::vector<float>{5, 6, 1, 2, 5, 6});
}

TEST_CASE("slice with positive and negative steps", "[data]") {
  std::mt19937 rng(19);
  for (int trial = 0; trial < 150; ++trial) {
    SliceSpec s = randomSlice(rng);
    if (trial == 0)
      s.outShape[0] = 0;
    size_t elemSize = kElemSizes[randomInt(rng, 0, 5)];
    INFO(describe(s) << " elem " << elemSize);
    std::vector<unsigned char> x = randomBytes(rng, numElements(s.inShape) * elemSize);
    std::vector<unsigned char> y(numElements(s.outShape) * elemSize, 0);
    slice(x.data(), y.data(), elemSize, s.inShape.data(), s.starts.data(), s.steps.data(),
          s.outShape.data(), static_cast<int>(s.inShape.size()));
    std::vector<unsigned char> want(y.size());
    for (int64_t i = 0; i < numElements(s.outShape); ++i)
      std::memcpy(&want[i * elemSize], &x[sliceSource(s, i) * elemSize], elemSize);
    requireEqual(y, want);
  }
}

TEST_CASE("product reduction", "[reduce]") {
  // [2, 3] reduced over dim 1 and over both dims.
  std::vector<float> x = {1, 2, 3, -4, 0.5f, 2};
  Shape shape = {2, 3}, rowStrides = {1, 0}, allStrides = {0, 0};
  std::vector<float> rows(2), all(1);
  reduce(ReduceKind::Prod, x.data(), shape.data(), rowStrides.data(), 2, rows.data(), 2, 3);
  reduce(ReduceKind::Prod, x.data(), shape.data(), allStrides.data(), 2, all.data(), 1, 6);
  CHECK(rows == std::vector<float>{6, -4});
  CHECK(all == std::vector<float>{-24});
}

TEST_CASE("argmax and argmin: first or last extreme, NaN wins", "[reduce]") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  // [outer 2, n 4, inner 1].
  std::vector<float> x = {1, 5, 5, 0, 2, nan, 7, nan};
  std::vector<int64_t> y(2);
  argReduce(true, false, x.data(), y.data(), 2, 4, 1);
  CHECK(y == std::vector<int64_t>{1, 1});
  argReduce(true, true, x.data(), y.data(), 2, 4, 1);
  CHECK(y == std::vector<int64_t>{2, 3});
  argReduce(false, false, x.data(), y.data(), 2, 4, 1);
  CHECK(y == std::vector<int64_t>{3, 1});
  // Along the first of two dims: [n 2, inner 3].
  std::vector<float> m = {1, 9, 3, 4, 2, 3};
  std::vector<int64_t> columns(3);
  argReduce(true, false, m.data(), columns.data(), 1, 2, 3);
  CHECK(columns == std::vector<int64_t>{1, 0, 0});
  argReduce(true, true, m.data(), columns.data(), 1, 2, 3);
  CHECK(columns == std::vector<int64_t>{1, 0, 1});
  // Doubles that round to one float still order.
  std::vector<double> close = {1.0, 1.0 + 1e-12, 1.0 - 1e-12};
  std::vector<int64_t> index(1);
  argReduce(true, false, close.data(), index.data(), 1, 3, 1);
  CHECK(index[0] == 1);
  argReduce(false, false, close.data(), index.data(), 1, 3, 1);
  CHECK(index[0] == 2);
}

TEST_CASE("cumsum: inclusive, exclusive, reverse, in place", "[reduce]") {
  // [outer 1, n 4, inner 2].
  std::vector<int64_t> x = {1, 10, 2, 20, 3, 30, 4, 40}, y(8);
  cumsum(x.data(), y.data(), 1, 4, 2, false, false);
  CHECK(y == std::vector<int64_t>{1, 10, 3, 30, 6, 60, 10, 100});
  cumsum(x.data(), y.data(), 1, 4, 2, true, false);
  CHECK(y == std::vector<int64_t>{0, 0, 1, 10, 3, 30, 6, 60});
  cumsum(x.data(), y.data(), 1, 4, 2, false, true);
  CHECK(y == std::vector<int64_t>{10, 100, 9, 90, 7, 70, 4, 40});
  cumsum(x.data(), y.data(), 1, 4, 2, true, true);
  CHECK(y == std::vector<int64_t>{9, 90, 7, 70, 4, 40, 0, 0});
  std::vector<float> f = {0.5f, 1.5f, 2.0f};
  cumsum(f.data(), f.data(), 1, 3, 1, false, false);
  CHECK(f == std::vector<float>{0.5f, 2.0f, 4.0f});
}

TEST_CASE("gatherElements picks along an axis, bad indices write nothing", "[data]") {
  // data [2, 3]; indices [2, 2] along axis 1, with a negative index.
  std::vector<int32_t> data = {1, 2, 3, 4, 5, 6};
  std::vector<int64_t> idx = {2, 0, -1, 1};
  Shape dataShape = {2, 3}, idxShape = {2, 2};
  std::vector<int32_t> y(4, -7);
  REQUIRE(gatherElements(data.data(), dataShape.data(), idx.data(), idxShape.data(), y.data(), 2,
                         1, sizeof(int32_t)));
  CHECK(y == std::vector<int32_t>{3, 1, 6, 5});
  // Along axis 0: y[i][j] = data[idx[i][j]][j].
  std::vector<int64_t> rows = {1, 0, 0, 1, 1, 1};
  Shape rowsShape = {2, 3};
  std::vector<int32_t> z(6);
  REQUIRE(gatherElements(data.data(), dataShape.data(), rows.data(), rowsShape.data(), z.data(),
                         2, 0, sizeof(int32_t)));
  CHECK(z == std::vector<int32_t>{4, 2, 3, 4, 5, 6});
  std::vector<int64_t> bad = {0, 3, 0, 0};
  std::fill(y.begin(), y.end(), -7);
  CHECK(!gatherElements(data.data(), dataShape.data(), bad.data(), idxShape.data(), y.data(), 2,
                        1, sizeof(int32_t)));
  CHECK(y == std::vector<int32_t>(4, -7));
}

//===----------------------------------------------------------------------------------------===//
// Scatters, GatherND and TopK
//===----------------------------------------------------------------------------------------===//

namespace {

double dot(const std::vector<float> &a, const std::vector<float> &b) {
  double sum = 0;
  for (size_t i = 0; i < a.size(); ++i)
    sum += double(a[i]) * double(b[i]);
  return sum;
}

} // namespace

// A scatter-add into zeros is the adjoint of the gather with the same indices (the gradient
// dlc builds for GatherElements and GatherND): <gather(x), dy> == <x, scatterAdd(0, dy)>.
TEST_CASE("scatter-add is the adjoint of GatherElements and GatherND", "[data][scatter]") {
  std::mt19937 rng(301);
  for (int trial = 0; trial < 30; ++trial) {
    // GatherElements over a [a, b, c] input with [a, m, c] indices along axis 1.
    int64_t a = randomInt(rng, 1, 4), b = randomInt(rng, 1, 5), c = randomInt(rng, 1, 4),
            m = randomInt(rng, 1, 6);
    int64_t xShape[3] = {a, b, c}, idxShape[3] = {a, m, c};
    std::vector<float> x = randomFloats(rng, a * b * c), dy = randomFloats(rng, a * m * c);
    std::vector<int64_t> idx(static_cast<size_t>(a * m * c));
    for (auto &i : idx)
      i = randomInt(rng, -b, b - 1); // repeats and negative indices
    std::vector<float> gathered(dy.size()), scattered(x.size(), 0.0f);
    REQUIRE(gatherElements<int64_t>(x.data(), xShape, idx.data(), idxShape, gathered.data(), 3, 1,
                                    sizeof(float)));
    REQUIRE(scatterElements<float, int64_t>(scattered.data(), xShape, idx.data(), idxShape,
                                            dy.data(), scattered.data(), 3, 1,
                                            ScatterReduction::Add));
    CHECK(dot(gathered, dy) == Approx(dot(x, scattered)).epsilon(1e-5).margin(1e-6));

    // GatherND of [n, k] index tuples into a [p, q, r] input (slices of size prod of the rest).
    int64_t p = randomInt(rng, 1, 4), q = randomInt(rng, 1, 4), r = randomInt(rng, 1, 3);
    int k = static_cast<int>(randomInt(rng, 1, 2)), n = static_cast<int>(randomInt(rng, 1, 5));
    int64_t ndShape[3] = {p, q, r};
    int64_t slice = k == 1 ? q * r : r;
    std::vector<int64_t> tuples;
    for (int t = 0; t < n; ++t) {
      tuples.push_back(randomInt(rng, -p, p - 1));
      if (k == 2)
        tuples.push_back(randomInt(rng, -q, q - 1));
    }
    std::vector<float> nd = randomFloats(rng, p * q * r), ndDy = randomFloats(rng, n * slice);
    std::vector<float> ndGathered(ndDy.size()), ndScattered(nd.size(), 0.0f);
    REQUIRE(gatherND(nd.data(), ndShape, 3, 0, tuples.data(), 1, n, k, ndGathered.data(),
                     sizeof(float)));
    REQUIRE(scatterND<float>(ndScattered.data(), ndShape, 3, tuples.data(), n, k, ndDy.data(),
                             ndScattered.data(), ScatterReduction::Add));
    CHECK(dot(ndGathered, ndDy) == Approx(dot(nd, ndScattered)).epsilon(1e-5).margin(1e-6));
  }
}

TEST_CASE("scatters combine in index order and refuse out-of-range indices", "[data][scatter]") {
  const int64_t shape[1] = {4}, idxShape[1] = {3};
  const float x[4] = {1, 2, 3, 4}, updates[3] = {10, 20, 30};
  const int64_t idx[3] = {1, -1, 1}; // element 1 twice: the later update wins (none)
  float y[4];
  REQUIRE(scatterElements<float, int64_t>(x, shape, idx, idxShape, updates, y, 1, 0,
                                          ScatterReduction::None));
  CHECK(std::vector<float>(y, y + 4) == std::vector<float>{1, 30, 3, 20});
  REQUIRE(scatterElements<float, int64_t>(x, shape, idx, idxShape, updates, y, 1, 0,
                                          ScatterReduction::Mul));
  CHECK(std::vector<float>(y, y + 4) == std::vector<float>{1, 600, 3, 80});
  REQUIRE(scatterElements<float, int64_t>(x, shape, idx, idxShape, updates, y, 1, 0,
                                          ScatterReduction::Min));
  CHECK(std::vector<float>(y, y + 4) == std::vector<float>{1, 2, 3, 4});
  const int64_t bad[3] = {0, 4, 1};
  CHECK_FALSE(scatterElements<float, int64_t>(x, shape, bad, idxShape, updates, y, 1, 0,
                                              ScatterReduction::None));
  const int64_t tuple[1] = {-5};
  CHECK_FALSE(scatterND<float>(x, shape, 1, tuple, 1, 1, updates, y, ScatterReduction::None));
  CHECK_FALSE(gatherND(x, shape, 1, 0, tuple, 1, 1, 1, y, sizeof(float)));
}

TEST_CASE("topK matches a stable sort, ties in index order", "[data][topk]") {
  std::mt19937 rng(302);
  for (int trial = 0; trial < 40; ++trial) {
    int64_t outer = randomInt(rng, 1, 3), n = randomInt(rng, 1, 9), inner = randomInt(rng, 1, 3);
    int64_t k = randomInt(rng, 0, n);
    bool largest = trial % 2 == 0;
    std::vector<int32_t> x(static_cast<size_t>(outer * n * inner));
    for (auto &v : x)
      v = static_cast<int32_t>(randomInt(rng, -3, 3)); // many ties
    std::vector<int64_t> got(static_cast<size_t>(outer * k * inner), -1);
    topK<int32_t>(x.data(), got.data(), outer, n, inner, k, largest);
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        std::vector<int64_t> order(static_cast<size_t>(n));
        std::iota(order.begin(), order.end(), 0);
        auto at = [&](int64_t j) { return x[(o * n + j) * inner + i]; };
        std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
          return largest ? at(a) > at(b) : at(a) < at(b);
        });
        for (int64_t j = 0; j < k; ++j)
          CHECK(got[(o * k + j) * inner + i] == order[j]);
      }
  }
}
