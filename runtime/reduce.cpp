// Built with -O2 although the runtime builds with -O3: these loops are written for -O2's
// vectoriser (fixed-size chunks, no epilogue) and are memory-bound, while -O3 makes this file
// take 14 s to compile instead of 2 s.
#if !defined(__clang__)
#pragma GCC optimize("O2")
#endif
#include "dlc_kernels.h"
#include "gemm.h"
#include "parallel.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

namespace dlc {
namespace rt {

namespace {

// Softmax columns are processed kChunk at a time, with their statistics on the stack, so that
// every pass walks memory row by row rather than striding down one column.
constexpr int64_t kChunk = 64;
// Float blocks of this many columns or more go to the vector kernel (softmaxColumns); fewer
// would leave most of its lanes empty.
constexpr int64_t kMinVectorColumns = 16;

// e[0, n) = exp(e[0, n)): float's a vector at a time (mathRow), double's one by one.
void expInPlace(float *e, int64_t n) { mathRow(MathFunction::Exp, e, e, n); }
void expInPlace(double *e, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    e[i] = std::exp(e[i]);
}

// Softmax down each column of x[j * inner + l], j < n, l < width, the exponentials a run at a
// time: a contiguous block (width == inner, as for the last axis) in runs of kRun elements,
// else each row's `width` columns. Each element is read before its output is written, so y
// may be x.
template <typename T>
void softmaxBlock(const T *x, T *y, int64_t n, int64_t inner, int64_t width, bool log) {
  constexpr int64_t kRun = 256, kPartials = 8;
  const T inf = std::numeric_limits<T>::infinity();
  T maxv[kChunk], sum[kChunk];
  std::fill(sum, sum + width, T(0));
  const bool flat = width == inner;
  if (inner == 1) {
    // One column: partial maxima, not one dependency chain through the row.
    T partial[kPartials];
    std::fill(partial, partial + kPartials, -inf);
    for (int64_t j = 0; j < n; ++j)
      partial[j % kPartials] = std::max(partial[j % kPartials], x[j]);
    maxv[0] = *std::max_element(partial, partial + kPartials);
  } else {
    std::fill(maxv, maxv + width, -inf);
    for (int64_t j = 0; j < n; ++j)
      for (int64_t l = 0; l < width; ++l)
        maxv[l] = std::max(maxv[l], x[j * inner + l]);
  }
  // Calls f(start, len, firstColumn) for each run; a flat run wraps around the columns.
  auto forEachRun = [&](auto f) {
    if (flat) {
      for (int64_t at = 0; at < n * inner; at += kRun)
        f(at, std::min(kRun, n * inner - at), at % inner);
    } else {
      for (int64_t j = 0; j < n; ++j)
        f(j * inner, width, int64_t(0));
    }
  };
  // e = exp(x - max) of a run into `e`, added to the column sums. Subtracting the max keeps
  // exp() in (0, 1], so nothing overflows.
  auto expRun = [&](int64_t at, int64_t len, int64_t column, T *e) {
    for (int64_t t = 0, l = column; t < len; ++t, l = l + 1 == inner ? 0 : l + 1)
      e[t] = x[at + t] - maxv[l];
    expInPlace(e, len);
    if (inner == 1) {
      T partial[kPartials] = {};
      for (int64_t t = 0; t < len; ++t)
        partial[t % kPartials] += e[t];
      for (T p : partial)
        sum[0] += p;
      return;
    }
    for (int64_t t = 0, l = column; t < len; ++t, l = l + 1 == inner ? 0 : l + 1)
      sum[l] += e[t];
  };
  if (log) {
    forEachRun([&](int64_t at, int64_t len, int64_t column) {
      T e[kRun];
      expRun(at, len, column, e);
    });
    // x - max is exact for nearby values; folding max and log-sum into one offset first would
    // round away the small result's precision when the inputs are large.
    for (int64_t l = 0; l < width; ++l)
      sum[l] = std::log(sum[l]);
    for (int64_t j = 0; j < n; ++j)
      for (int64_t l = 0; l < width; ++l)
        y[j * inner + l] = (x[j * inner + l] - maxv[l]) - sum[l];
    return;
  }
  forEachRun([&](int64_t at, int64_t len, int64_t column) { expRun(at, len, column, y + at); });
  for (int64_t l = 0; l < width; ++l)
    sum[l] = T(1) / sum[l];
  for (int64_t j = 0; j < n; ++j)
    for (int64_t l = 0; l < width; ++l)
      y[j * inner + l] *= sum[l];
}

// The gradient of softmaxBlock from its output y: dx = y * (dy - sum(dy * y)), or for
// log-softmax dx = dy - exp(y) * sum(dy).
void softmaxGradBlock(const float *dy, const float *y, float *dx, int64_t n, int64_t inner,
                      int64_t width, bool log) {
  float sum[kChunk];
  std::fill(sum, sum + width, 0.0f);
  // The two forms are separate loops: at -O2 GCC does not unswitch a loop-invariant branch,
  // which would keep the loops from vectorising.
  if (log) {
    for (int64_t j = 0; j < n; ++j)
      for (int64_t l = 0; l < width; ++l)
        sum[l] += dy[j * inner + l];
    for (int64_t j = 0; j < n; ++j)
      for (int64_t l = 0; l < width; ++l)
        dx[j * inner + l] = dy[j * inner + l] - std::exp(y[j * inner + l]) * sum[l];
    return;
  }
  for (int64_t j = 0; j < n; ++j)
    for (int64_t l = 0; l < width; ++l)
      sum[l] += dy[j * inner + l] * y[j * inner + l];
  for (int64_t j = 0; j < n; ++j)
    for (int64_t l = 0; l < width; ++l)
      dx[j * inner + l] = y[j * inner + l] * (dy[j * inner + l] - sum[l]);
}

// Calls f(offset, width) for each block of up to kChunk adjacent softmax columns of an
// [outer, n, inner] view; threads take whole blocks.
template <typename F> void forEachSoftmaxBlock(int64_t outer, int64_t n, int64_t inner, F f) {
  const int64_t perOuter = (inner + kChunk - 1) / kChunk;
  parallelForWork(outer * perOuter, n * std::min(kChunk, inner), [&](int64_t first, int64_t end) {
    for (int64_t block = first; block < end; ++block) {
      const int64_t o = block / perOuter, l = block % perOuter * kChunk;
      f(o * n * inner + l, std::min(kChunk, inner - l));
    }
  });
}

// True when every label lies in [0, classes): labels are runtime data the compiler cannot
// check, so they are checked before anything is written.
bool labelsValid(const int64_t *labels, int64_t count, int64_t classes) {
  for (int64_t i = 0; i < count; ++i)
    if (labels[i] < 0 || labels[i] >= classes)
      return false;
  return true;
}

// Calls f(position, index of the position's label class in the [outer, classes, inner] view).
template <typename F>
void forEachLabel(const int64_t *labels, int64_t outer, int64_t classes, int64_t inner, F f) {
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i)
      f((o * classes + labels[o * inner + i]) * inner + i);
}

struct SumOp {
  template <typename T> T operator()(T acc, T v) const { return acc + v; }
};
// NaN propagates, as in NumPy's max/min reductions.
struct MaxOp {
  template <typename T> T operator()(T acc, T v) const {
    return (v > acc || std::isnan(v)) ? v : acc;
  }
};
struct MinOp {
  template <typename T> T operator()(T acc, T v) const {
    return (v < acc || std::isnan(v)) ? v : acc;
  }
};
struct ProdOp {
  template <typename T> T operator()(T acc, T v) const { return acc * v; }
};

// Walks x in order. Trailing input dims whose output strides compose are merged into one inner
// run, which either maps onto consecutive outputs or (stride 0) folds into one output.
// Outer dims are walked recursively, which needs no index storage and so handles any rank.
template <typename Op, typename T> class ReduceWalker {
public:
  ReduceWalker(Op op, T identity, const int64_t *shape, const int64_t *outStrides, int rank)
      : op(op), identity(identity), shape(shape), outStrides(outStrides) {
    outerRank = rank;
    while (outerRank > 0) {
      int d = outerRank - 1;
      if (shape[d] != 1) {
        if (innerLen != 1 && outStrides[d] != innerStride * innerLen)
          break;
        if (innerLen == 1)
          innerStride = outStrides[d];
        innerLen *= shape[d];
      }
      --outerRank;
    }
  }

  // Threads take whole outputs, each accumulated in the serial walk's order, so results do
  // not depend on the thread count: groups of the leading outer dims that keep their output
  // apart (a row per output of a last-axis reduction), else blocks of an inner run that maps
  // onto consecutive outputs (a reduction over a leading axis).
  void run(const T *x, T *y) {
    int64_t positions = 1;
    for (int d = 0; d < outerRank; ++d)
      positions *= shape[d];
    if (positions == 0 || innerLen == 0)
      return;
    int split = 0;
    int64_t groups = 1;
    while (split < outerRank && (outStrides[split] != 0 || shape[split] == 1))
      groups *= shape[split++];
    if (groups > 1) {
      const int64_t groupElements = positions / groups * innerLen;
      parallelForWork(groups, groupElements, [&](int64_t first, int64_t end) {
        for (int64_t g = first; g < end; ++g) {
          T *yg = y;
          int64_t rest = g;
          for (int d = split - 1; d >= 0; --d) {
            yg += (rest % shape[d]) * outStrides[d];
            rest /= shape[d];
          }
          const T *xg = x + g * groupElements;
          walk(split, xg, yg, 0, innerLen);
        }
      });
      return;
    }
    bool positionsShareOutputs = true;
    for (int d = 0; d < outerRank; ++d)
      positionsShareOutputs &= shape[d] == 1 || outStrides[d] == 0;
    if (innerStride == 1 && positionsShareOutputs) {
      // Every position adds onto the same run of outputs (a channels-last global pool): the
      // positions go in chunks, a power of two of them (even parts for two threads), each
      // chunk's sums accumulated on its own, in the walk's order, and the chunks' sums added
      // in order after. The chunks depend on the shape alone, so results do not depend on the
      // thread count. A chunk's items, up to kBlockGroups runs of its blocks, read its rows
      // once, a few at a time for every block: on two threads each takes a chunk, splitting
      // the rows as the producer did, where blocks of columns as items had both threads pull
      // every line the other wrote (EfficientNet-B0's pools over 14x14x480 ran slower on two
      // threads than on one); more threads split the chunks' blocks.
      const int64_t blocks = (innerLen + kColumns - 1) / kColumns;
      int64_t chunks = 1;
      while (chunks * 2 <= kMaxChunks && chunks * 2 * innerLen <= kPartialCapacity &&
             positions * innerLen / (chunks * 2) >= kMinWorkPerPart)
        chunks *= 2;
      T partial[kPartialCapacity];
      if (chunks > 1)
        std::fill(partial, partial + chunks * innerLen, identity);
      const int64_t blocksPerItem =
          chunks > 1 ? (blocks + kBlockGroups - 1) / kBlockGroups : 1;
      const int64_t itemsPerChunk = (blocks + blocksPerItem - 1) / blocksPerItem;
      const int64_t items = itemsPerChunk * chunks;
      const int64_t rowsInCache =
          std::max<int64_t>(1, kChunkBytesInCache / (innerLen * int64_t(sizeof(T))));
      // A thread's items of one chunk are one pass over its rows.
      parallelForWork(items, positions / chunks * kColumns * blocksPerItem,
                      [&](int64_t first, int64_t end) {
                        while (first < end) {
                          const int64_t chunk = first / itemsPerChunk;
                          const int64_t last = std::min(end, (chunk + 1) * itemsPerChunk);
                          const int64_t block0 = (first - chunk * itemsPerChunk) * blocksPerItem;
                          const int64_t blockEnd =
                              std::min((last - chunk * itemsPerChunk) * blocksPerItem, blocks);
                          const int64_t p0 = positions * chunk / chunks;
                          const int64_t p1 = positions * (chunk + 1) / chunks;
                          T *sums = chunks > 1 ? partial + chunk * innerLen : y;
                          for (int64_t p = p0; p < p1; p += rowsInCache)
                            for (int64_t block = block0; block < blockEnd; ++block)
                              columnBlock(x + p * innerLen, sums, std::min(rowsInCache, p1 - p),
                                          block * kColumns);
                          first = last;
                        }
                      });
      if (chunks > 1)
        for (int64_t chunk = 0; chunk < chunks; ++chunk)
          for (int64_t j = 0; j < innerLen; ++j)
            y[j] = op(y[j], partial[chunk * innerLen + j]);
      return;
    }
    if (innerStride != 0) {
      constexpr int64_t kBlock = 256;
      parallelForWork((innerLen + kBlock - 1) / kBlock, positions * kBlock,
                      [&](int64_t first, int64_t end) {
                        const T *xb = x;
                        walk(0, xb, y, first * kBlock, std::min(end * kBlock, innerLen));
                      });
      return;
    }
    walk(0, x, y, 0, innerLen);
  }

private:
  static constexpr int64_t kColumns = 32;
  // Up to kMaxChunks chunks of at least kMinWorkPerPart elements, their sums on the stack.
  static constexpr int64_t kMaxChunks = 8, kPartialCapacity = 4096, kBlockGroups = 4;
  // Rows of a chunk summed into every block before the next rows: half a first-level cache.
  static constexpr int64_t kChunkBytesInCache = 16384;

  // Outputs [column, column + kColumns) (fewer at the run's end) over `positions` rows of x.
  void columnBlock(const T *x, T *y, int64_t positions, int64_t column) const {
    const int64_t count = std::min(kColumns, innerLen - column);
    if (count == kColumns)
      return columnsOf<kColumns>(x, y, positions, column, count);
    // A last block of 16 (144 channels: 4 x 32 + 16) in registers too.
    const int64_t half = count >= kColumns / 2 ? kColumns / 2 : 0;
    if (half)
      columnsOf<kColumns / 2>(x, y, positions, column, half);
    if (count > half)
      columnsOf<0>(x, y, positions, column + half, count - half);
  }
  // Outputs [first, first + count) over every position: a block of Width (32 or 16) takes a
  // loop of constant length, which the compiler keeps in registers; Width 0, count of them.
  template <int64_t Width>
  void columnsOf(const T *x, T *y, int64_t positions, int64_t first, int64_t count) const {
    T acc[kColumns];
    const int64_t n = Width ? Width : count;
    for (int64_t j = 0; j < n; ++j)
      acc[j] = y[first + j];
    for (int64_t p = 0; p < positions; ++p) {
      const T *row = x + p * innerLen + first;
      for (int64_t j = 0; j < n; ++j)
        acc[j] = op(acc[j], row[j]);
    }
    for (int64_t j = 0; j < n; ++j)
      y[first + j] = acc[j];
  }

  // Elements [begin, end) of each inner run under the outer dims from `dim` on.
  void walk(int dim, const T *&x, T *y, int64_t begin, int64_t end) {
    if (dim == outerRank) {
      inner(x, y, begin, end);
      x += innerLen;
      return;
    }
    for (int64_t i = 0; i < shape[dim]; ++i)
      walk(dim + 1, x, y + i * outStrides[dim], begin, end);
  }

  void inner(const T *x, T *y, int64_t begin, int64_t end) const {
    // Consecutive outputs (a channels-last global pool's) get a loop the compiler vectorises.
    if (innerStride == 1) {
      for (int64_t i = begin; i < end; ++i)
        y[i] = op(y[i], x[i]);
      return;
    }
    if (innerStride != 0) {
      for (int64_t i = begin; i < end; ++i)
        y[i * innerStride] = op(y[i * innerStride], x[i]);
      return;
    }
    // Eight independent accumulators vectorise and lose less precision than one chain.
    T acc[8];
    std::fill(acc, acc + 8, identity);
    int64_t i = begin;
    for (; i + 8 <= end; i += 8)
      for (int64_t l = 0; l < 8; ++l)
        acc[l] = op(acc[l], x[i + l]);
    T total = *y;
    for (; i < end; ++i)
      total = op(total, x[i]);
    for (T v : acc)
      total = op(total, v);
    *y = total;
  }

  Op op;
  T identity;
  const int64_t *shape, *outStrides;
  int outerRank = 0;
  int64_t innerLen = 1, innerStride = 0;
};

template <typename Op, typename T>
void reduceWith(Op op, T init, const T *x, const int64_t *inShape, const int64_t *outStrides,
                int rank, T *y, int64_t outCount) {
  std::fill(y, y + outCount, init);
  ReduceWalker<Op, T>(op, init, inShape, outStrides, rank).run(x, y);
}

} // namespace

template <typename T>
void softmax(const T *x, T *y, int64_t outer, int64_t n, int64_t inner, bool log) {
  if constexpr (std::is_same_v<T, float>) {
    if (inner == 1) {
      // Over the last axis (attention's scores): whole rows a vector at a time.
      constexpr int64_t kWorkPerElement = 16;
      parallelForWork(outer, n * kWorkPerElement, [&](int64_t first, int64_t end) {
        softmaxRows(x + first * n, y + first * n, end - first, n, log, nullptr);
      });
      return;
    }
  }
  forEachSoftmaxBlock(outer, n, inner, [=](int64_t offset, int64_t width) {
    // Float columns a vector at a time where they fill vectors (this file's loops are
    // scalar for a block's run-time width: YOLOv8's box-bin softmax, 16 of 4 x 8400
    // columns, ran 5x slower).
    if constexpr (std::is_same_v<T, float>)
      if (width >= kMinVectorColumns)
        return softmaxColumns(x + offset, y + offset, n, inner, width, log);
    softmaxBlock(x + offset, y + offset, n, inner, width, log);
  });
}

void layerNormF32(const float *x, const float *scale, const float *bias, float *y, int64_t rows,
                  int64_t n, float epsilon, bool rms) {
  // Three vector passes over a row in L1, the first from memory.
  constexpr int64_t kWorkPerElement = 4;
  parallelForWork(rows, n * kWorkPerElement, [&](int64_t first, int64_t end) {
    layerNormRows({x + first * n, scale, bias, y + first * n, end - first, n, epsilon, rms});
  });
}

void softmaxGradF32(const float *dy, const float *y, float *dx, int64_t outer, int64_t n,
                    int64_t inner, bool log) {
  forEachSoftmaxBlock(outer, n, inner, [=](int64_t offset, int64_t width) {
    softmaxGradBlock(dy + offset, y + offset, dx + offset, n, inner, width, log);
  });
}

bool nllLossF32(const float *logp, const int64_t *labels, float *loss, int64_t outer,
                int64_t classes, int64_t inner) {
  const int64_t positions = outer * inner;
  if (!labelsValid(labels, positions, classes))
    return false;
  double sum = 0.0;
  forEachLabel(labels, outer, classes, inner, [&](int64_t i) { sum += logp[i]; });
  // The mean over no positions is NaN, as in PyTorch.
  *loss = static_cast<float>(-sum / static_cast<double>(positions));
  return true;
}

bool nllLossGradF32(const float *dloss, const int64_t *labels, float *dlogp, int64_t outer,
                    int64_t classes, int64_t inner) {
  const int64_t positions = outer * inner;
  if (!labelsValid(labels, positions, classes))
    return false;
  std::fill(dlogp, dlogp + outer * classes * inner, 0.0f);
  const float g = -*dloss / static_cast<float>(positions);
  forEachLabel(labels, outer, classes, inner, [=](int64_t i) { dlogp[i] = g; });
  return true;
}

template <typename T>
void reduce(ReduceKind kind, const T *x, const int64_t *inShape, const int64_t *outStrides,
            int rank, T *y, int64_t outCount, int64_t reducedCount) {
  constexpr T inf = std::numeric_limits<T>::infinity();
  switch (kind) {
  case ReduceKind::Sum:
    return reduceWith(SumOp{}, T(0), x, inShape, outStrides, rank, y, outCount);
  case ReduceKind::Mean: {
    reduceWith(SumOp{}, T(0), x, inShape, outStrides, rank, y, outCount);
    // The mean of nothing is NaN, as in NumPy.
    T scale = T(1) / static_cast<T>(reducedCount);
    for (int64_t i = 0; i < outCount; ++i)
      y[i] = reducedCount > 0 ? y[i] * scale : std::numeric_limits<T>::quiet_NaN();
    return;
  }
  case ReduceKind::Max:
    return reduceWith(MaxOp{}, -inf, x, inShape, outStrides, rank, y, outCount);
  case ReduceKind::Min:
    return reduceWith(MinOp{}, inf, x, inShape, outStrides, rank, y, outCount);
  case ReduceKind::Prod:
    return reduceWith(ProdOp{}, T(1), x, inShape, outStrides, rank, y, outCount);
  }
}

template <typename T>
void argReduce(bool max, bool selectLast, const T *x, int64_t *y, int64_t outer, int64_t n,
               int64_t inner) {
  // `candidate` replaces `best` when strictly better, or equal and the last index is wanted.
  auto better = [max](T candidate, T best) {
    if (std::isnan(best))
      return false;
    if (std::isnan(candidate))
      return true;
    return max ? candidate > best : candidate < best;
  };
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      const T *row = x + o * n * inner + i;
      int64_t best = 0;
      for (int64_t j = 1; j < n; ++j) {
        T v = row[j * inner], b = row[best * inner];
        if (better(v, b) || (selectLast && (v == b || (std::isnan(v) && std::isnan(b)))))
          best = j;
      }
      y[o * inner + i] = best;
    }
}

#define DLC_INSTANTIATE_FLOAT_KERNELS(T)                                                       \
  template void softmax<T>(const T *, T *, int64_t, int64_t, int64_t, bool);                   \
  template void reduce<T>(ReduceKind, const T *, const int64_t *, const int64_t *, int, T *,   \
                          int64_t, int64_t);                                                   \
  template void argReduce<T>(bool, bool, const T *, int64_t *, int64_t, int64_t, int64_t);
DLC_INSTANTIATE_FLOAT_KERNELS(float)
DLC_INSTANTIATE_FLOAT_KERNELS(double)
#undef DLC_INSTANTIATE_FLOAT_KERNELS

// Integer sums and products wrap (as NumPy's do) instead of invoking signed-overflow UB.
template <typename T> T wrapping(T a, T b, bool product) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(product ? static_cast<U>(a) * static_cast<U>(b)
                                  : static_cast<U>(a) + static_cast<U>(b));
  } else {
    return product ? a * b : a + b;
  }
}

// The running sum or product along the middle axis of an [outer, n, inner] view.
template <typename T>
void running(const T *x, T *y, int64_t outer, int64_t n, int64_t inner, bool exclusive,
             bool reverse, bool product) {
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      T acc = product ? T(1) : T(0);
      for (int64_t step = 0; step < n; ++step) {
        int64_t j = reverse ? n - 1 - step : step;
        int64_t at = (o * n + j) * inner + i;
        T v = x[at]; // read first: y may alias x
        if (exclusive) {
          y[at] = acc;
          acc = wrapping(acc, v, product);
        } else {
          acc = wrapping(acc, v, product);
          y[at] = acc;
        }
      }
    }
}

template <typename T>
void cumsum(const T *x, T *y, int64_t outer, int64_t n, int64_t inner, bool exclusive,
            bool reverse) {
  running(x, y, outer, n, inner, exclusive, reverse, false);
}

template <typename T>
void cumprod(const T *x, T *y, int64_t outer, int64_t n, int64_t inner, bool exclusive,
             bool reverse) {
  running(x, y, outer, n, inner, exclusive, reverse, true);
}

#define DLC_INSTANTIATE_RUNNING(T)                                                             \
  template void cumsum<T>(const T *, T *, int64_t, int64_t, int64_t, bool, bool);              \
  template void cumprod<T>(const T *, T *, int64_t, int64_t, int64_t, bool, bool);
DLC_INSTANTIATE_RUNNING(float)
DLC_INSTANTIATE_RUNNING(double)
DLC_INSTANTIATE_RUNNING(int32_t)
DLC_INSTANTIATE_RUNNING(int64_t)
#undef DLC_INSTANTIATE_RUNNING

} // namespace rt
} // namespace dlc
