// Built with -O2 although the runtime builds with -O3: these loops are written for -O2's
// vectoriser (fixed-size chunks, no epilogue) and are memory-bound, while -O3 makes this file
// take 91 s to compile instead of 31 s.
#if !defined(__clang__)
#pragma GCC optimize("O2")
#endif
#include "clamp.h"
#include "dlc_kernels.h"
#include "parallel.h"
#include "scalar_ops.h"

#include <algorithm>
#include <cmath>
#include <type_traits>

namespace dlc {
namespace rt {

namespace {

// GCC's -O2 cost model only vectorises loops that need no scalar epilogue, so the bulk of each
// loop runs in fixed chunks of kLanes. Staging a chunk's inputs in locals before storing lets
// the output alias an input (in-place kernels) without blocking that.
constexpr int64_t kLanes = 8;

template <typename T, typename F> void map(const T *x, T *y, int64_t n, F f) {
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    T t[kLanes];
    for (int64_t l = 0; l < kLanes; ++l)
      t[l] = x[i + l];
    for (int64_t l = 0; l < kLanes; ++l)
      y[i + l] = f(t[l]);
  }
  for (; i < n; ++i)
    y[i] = f(x[i]);
}

// out[i] = op(a[i * SA], b[i * SB]) with each stride 0 (broadcast) or 1.
template <int64_t SA, int64_t SB, typename T, typename R, typename Op>
void binaryRun(Op op, const T *a, const T *b, R *out, int64_t n) {
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    T ta[kLanes], tb[kLanes];
    for (int64_t l = 0; l < kLanes; ++l) {
      ta[l] = a[(i + l) * SA];
      tb[l] = b[(i + l) * SB];
    }
    for (int64_t l = 0; l < kLanes; ++l)
      out[i + l] = op(ta[l], tb[l]);
  }
  for (; i < n; ++i)
    out[i] = op(a[i * SA], b[i * SB]);
}

// A unary op's gradient is a function of dy and one tensor saved from the forward pass.
template <typename F> void zipF32(const float *dy, const float *saved, float *dx, int64_t n, F f) {
  binaryRun<1, 1>(f, dy, saved, dx, n);
}

using namespace scalar;

// Broadcasting is binary()'s walk with an operation that ignores its second operand.
struct FirstOp {
  float operator()(float a, float) const { return a; }
};

// Calls f with the operation object of `kind`: one switch for every loop shape.
template <typename F> void withBinaryOp(BinaryKind kind, F &&f) {
  switch (kind) {
#define DLC_BINARY_CASE(name, onFloats)                                                        \
  case BinaryKind::name:                                                                       \
    return f(name##Op{});
    DLC_BINARY_KINDS(DLC_BINARY_CASE)
#undef DLC_BINARY_CASE
  }
}

// Trailing dims whose strides compose are merged into one inner run so the common cases (same
// shape, scalar or row broadcast) become flat loops the compiler vectorises; each run's start
// in the operands comes from its row number over the remaining outer dims (any rank).
template <typename T, typename R, typename Op> class BinaryWalker {
public:
  BinaryWalker(Op op, const int64_t *aStrides, const int64_t *bStrides, const int64_t *shape,
               int rank)
      : op(op), aStrides(aStrides), bStrides(bStrides), shape(shape) {
    outerRank = rank;
    while (outerRank > 0) {
      int d = outerRank - 1;
      if (shape[d] != 1) {
        if (innerLen != 1 && (aStrides[d] != innerA * innerLen || bStrides[d] != innerB * innerLen))
          break;
        if (innerLen == 1) {
          innerA = aStrides[d];
          innerB = bStrides[d];
        }
        innerLen *= shape[d];
      }
      --outerRank;
    }
  }

  // Threads take whole inner runs (rows), or blocks of the one run when there is no outer dim.
  // (One loop with one innerRun for both: each copy of it is compiled per op and type.)
  void run(const T *a, const T *b, R *out) {
    constexpr int64_t kBlock = 1024;
    int64_t rows = 1;
    for (int d = 0; d < outerRank; ++d)
      rows *= shape[d];
    if (rows == 0 || innerLen == 0)
      return;
    const bool blocks = rows == 1;
    const int64_t units = blocks ? (innerLen + kBlock - 1) / kBlock : rows;
    parallelForWork(units, blocks ? kBlock : innerLen, [&](int64_t first, int64_t end) {
      for (int64_t unit = first; unit < end; ++unit) {
        const T *ra = a, *rb = b;
        int64_t begin = unit * kBlock, len = std::min(kBlock, innerLen - begin);
        if (blocks) {
          ra += begin * innerA;
          rb += begin * innerB;
        } else {
          for (int64_t d = outerRank - 1, rest = unit; d >= 0; --d) {
            ra += (rest % shape[d]) * aStrides[d];
            rb += (rest % shape[d]) * bStrides[d];
            rest /= shape[d];
          }
          begin = unit * innerLen;
          len = innerLen;
        }
        innerRun(ra, rb, out + begin, len);
      }
    });
  }

private:
  void innerRun(const T *a, const T *b, R *out, int64_t n) const {
    if (innerA == 1 && innerB == 1) {
      binaryRun<1, 1>(op, a, b, out, n);
    } else if (innerA == 1 && innerB == 0) {
      binaryRun<1, 0>(op, a, b, out, n);
    } else if (innerA == 0 && innerB == 1) {
      binaryRun<0, 1>(op, a, b, out, n);
    } else {
      for (int64_t i = 0; i < n; ++i)
        out[i] = op(a[i * innerA], b[i * innerB]);
    }
  }

  Op op;
  const int64_t *aStrides, *bStrides, *shape;
  int outerRank = 0;
  int64_t innerLen = 1, innerA = 0, innerB = 0;
};

template <typename T, typename R, typename Op>
void runBinary(Op op, const T *a, const int64_t *aStrides, const T *b, const int64_t *bStrides,
               R *out, const int64_t *outShape, int rank) {
  BinaryWalker<T, R, Op>(op, aStrides, bStrides, outShape, rank).run(a, b, out);
}

} // namespace

namespace {
template <typename T> void unaryRange(UnaryKind kind, const T *x, T *y, int64_t n) {
  switch (kind) {
#define DLC_UNARY_CASE(name, gradFrom)                                                         \
  case UnaryKind::name:                                                                        \
    return map(x, y, n, scalar::name##Unary());
    DLC_UNARY_KINDS(DLC_UNARY_CASE)
#undef DLC_UNARY_CASE
  }
}
} // namespace

// (One parallel loop around the kinds' switch: one per kind made this file compile twice as
// long.)
template <typename T> void unaryOn(CpuIsa isa, UnaryKind kind, const T *x, T *y, int64_t n) {
  if constexpr (std::is_same_v<T, float>) {
    MathFunction function;
    if (vectorMathOf(kind, function))
      return mathF32On(isa, function, x, y, n);
  }
  parallelElements(n, [&](int64_t begin, int64_t end) {
    unaryRange(kind, x + begin, y + begin, end - begin);
  });
}

template <typename T> void unary(UnaryKind kind, const T *x, T *y, int64_t n) {
  unaryOn(selectedCpuIsa(), kind, x, y, n);
}

void clipF32(const float *x, float *y, int64_t n, float lo, float hi) {
  map(x, y, n, [lo, hi](float v) { return scalar::clampValue(v, lo, hi); });
}

void applyEpilogue(const Epilogue &epilogue, float *y, int64_t n) {
  MathFunction function;
  if (epilogueMath(epilogue, function))
    return mathF32(function, y, y, n);
  switch (epilogue.activation) {
  case Activation::None:
    return;
  case Activation::Relu:
    return unary(UnaryKind::Relu, y, y, n);
  case Activation::Clip:
    return clipF32(y, y, n, epilogue.min, epilogue.max);
  case Activation::LeakyRelu:
    return leakyReluF32(y, y, n, epilogue.alpha);
  case Activation::Sigmoid:
    return unary(UnaryKind::Sigmoid, y, y, n);
  case Activation::Tanh:
    return unary(UnaryKind::Tanh, y, y, n);
  case Activation::Silu: // one pass, the bits of the unfused Sigmoid and Mul
  case Activation::HardSwish:
    return; // epilogueMath, above
  }
}

void leakyReluF32(const float *x, float *y, int64_t n, float alpha) {
  map(x, y, n, [alpha](float v) { return scalar::leakyReluValue(v, alpha); });
}

template void unary<float>(UnaryKind, const float *, float *, int64_t);
template void unary<double>(UnaryKind, const double *, double *, int64_t);
template void unaryOn<float>(CpuIsa, UnaryKind, const float *, float *, int64_t);
template void unaryOn<double>(CpuIsa, UnaryKind, const double *, double *, int64_t);

namespace {
template <GradFrom from, typename Unary>
void unaryGradOf(Unary unary, const float *dy, const float *saved, float *dx, int64_t n) {
  if constexpr (from != GradFrom::None)
    zipF32(dy, saved, dx, n, [unary](float g, float s) { return unary.grad(g, s); });
}
} // namespace

void unaryGradF32(UnaryKind kind, const float *dy, const float *saved, float *dx, int64_t n) {
  switch (kind) {
#define DLC_UNARY_GRAD_CASE(name, gradFrom)                                                    \
  case UnaryKind::name:                                                                        \
    return unaryGradOf<GradFrom::gradFrom>(scalar::name##Unary(), dy, saved, dx, n);
    DLC_UNARY_KINDS(DLC_UNARY_GRAD_CASE)
#undef DLC_UNARY_GRAD_CASE
  }
}

void clipGradF32(const float *dy, const float *x, float *dx, int64_t n, float lo, float hi) {
  // torch.clamp passes the gradient at the bounds too, and none for a NaN input.
  zipF32(dy, x, dx, n, [lo, hi](float g, float v) { return v >= lo && v <= hi ? g : 0.0f; });
}

void leakyReluGradF32(const float *dy, const float *x, float *dx, int64_t n, float alpha) {
  zipF32(dy, x, dx, n, [alpha](float g, float v) { return v > 0.0f ? g : g * alpha; });
}

template <typename T>
void binary(BinaryKind kind, const T *a, const int64_t *aStrides, const T *b,
            const int64_t *bStrides, T *out, const int64_t *outShape, int rank) {
  withBinaryOp(kind, [&](auto op) { runBinary(op, a, aStrides, b, bStrides, out, outShape, rank); });
}

namespace {

// Chunks (kFusedChunk: every slot's chunk of every thread stays in L1) per thread at least: a
// chain over fewer elements runs on one thread.
constexpr int64_t kFusedGrainChunks = 32;

// Fills `buffer` with elements [begin, begin + len) of a broadcast input, without a division
// per element.
void gatherFusedInput(const FusedInput &input, int64_t begin, int64_t len, float *buffer) {
  if (input.period == 1) {
    std::fill(buffer, buffer + len, input.data[0]);
    return;
  }
  // Runs, not elements: a repeat-1 input is copied a period's span at a time, any other
  // filled a repeat's span at a time.
  int64_t withinRepeat = begin % input.repeat, index = (begin / input.repeat) % input.period;
  for (int64_t j = 0; j < len;) {
    if (input.repeat == 1) {
      const int64_t run = std::min(len - j, input.period - index);
      std::copy(input.data + index, input.data + index + run, buffer + j);
      j += run;
      index = 0;
      continue;
    }
    const int64_t run = std::min(len - j, input.repeat - withinRepeat);
    std::fill(buffer + j, buffer + j + run, input.data[index]);
    j += run;
    withinRepeat = 0;
    if (++index == input.period)
      index = 0;
  }
}

void runFusedStep(const FusedStep &step, const float *const *slots, float *out, int64_t len) {
  switch (step.kind) {
  case FusedStepKind::Unary:
    return unary(step.unary, slots[step.a], out, len);
  case FusedStepKind::Binary:
    return withBinaryOp(step.binary,
                        [&](auto op) { binaryRun<1, 1>(op, slots[step.a], slots[step.b], out, len); });
  case FusedStepKind::Clip:
    return clipF32(slots[step.a], out, len, step.p0, step.p1);
  case FusedStepKind::LeakyRelu:
    return leakyReluF32(slots[step.a], out, len, step.p0);
  }
}

// f(begin, len) over [0, n) in chunks, the chunks split over the threads.
template <typename F> void forEachFusedChunk(int64_t n, F &&f) {
  const int64_t chunks = (n + kFusedChunk - 1) / kFusedChunk;
  parallelFor(chunks, kFusedGrainChunks, [&](int64_t firstChunk, int64_t endChunk) {
    for (int64_t chunk = firstChunk; chunk < endChunk; ++chunk)
      f(chunk * kFusedChunk, std::min(kFusedChunk, n - chunk * kFusedChunk));
  });
}

} // namespace

void fusedInputChunk(const FusedInput &input, int64_t begin, int64_t len, float *buffer) {
  gatherFusedInput(input, begin, len, buffer);
}

void fusedChainF32(const FusedChainVersions &chain, const float *const *inputs, float *out,
                   int64_t n) {
  const FusedChain run = chain.versions[int(selectedCpuIsa())];
  forEachFusedChunk(n, [&](int64_t begin, int64_t len) { run(inputs, out, begin, len); });
}

void fusedElementwiseF32(const FusedInput *inputs, int numInputs, const FusedStep *steps,
                         int numSteps, float *out, int64_t n) {
  forEachFusedChunk(n, [&](int64_t begin, int64_t len) {
    alignas(64) float buffers[kFusedMaxSlots][kFusedChunk];
    const float *slots[kFusedMaxSlots];
    for (int i = 0; i < numInputs; ++i) {
      const FusedInput &input = inputs[i];
      if (input.repeat == 1 && input.period >= n) {
        slots[i] = input.data + begin;
      } else {
        gatherFusedInput(input, begin, len, buffers[i]);
        slots[i] = buffers[i];
      }
    }
    for (int s = 0; s < numSteps; ++s) {
      float *result = s + 1 == numSteps ? out + begin : buffers[numInputs + s];
      runFusedStep(steps[s], slots, result, len);
      slots[numInputs + s] = result;
    }
  });
}

template <typename T>
void compare(CompareKind kind, const T *a, const int64_t *aStrides, const T *b,
             const int64_t *bStrides, uint8_t *out, const int64_t *outShape, int rank) {
  switch (kind) {
  case CompareKind::Equal:
    return runBinary(EqualOp{}, a, aStrides, b, bStrides, out, outShape, rank);
  case CompareKind::Less:
    return runBinary(LessOp{}, a, aStrides, b, bStrides, out, outShape, rank);
  case CompareKind::LessEqual:
    return runBinary(LessEqualOp{}, a, aStrides, b, bStrides, out, outShape, rank);
  case CompareKind::Greater:
    return runBinary(GreaterOp{}, a, aStrides, b, bStrides, out, outShape, rank);
  case CompareKind::GreaterEqual:
    return runBinary(GreaterEqualOp{}, a, aStrides, b, bStrides, out, outShape, rank);
  }
}

#define DLC_INSTANTIATE_BINARY(T)                                                           \
  template void binary<T>(BinaryKind, const T *, const int64_t *, const T *, const int64_t *,  \
                          T *, const int64_t *, int);                                          \
  template void compare<T>(CompareKind, const T *, const int64_t *, const T *,                 \
                           const int64_t *, uint8_t *, const int64_t *, int);
DLC_INSTANTIATE_BINARY(float)
DLC_INSTANTIATE_BINARY(double)
DLC_INSTANTIATE_BINARY(int32_t)
DLC_INSTANTIATE_BINARY(int64_t)
DLC_INSTANTIATE_BINARY(int8_t)
DLC_INSTANTIATE_BINARY(uint8_t)
DLC_INSTANTIATE_BINARY(int16_t)
DLC_INSTANTIATE_BINARY(uint16_t)
DLC_INSTANTIATE_BINARY(uint32_t)
DLC_INSTANTIATE_BINARY(uint64_t)
#undef DLC_INSTANTIATE_BINARY

void broadcastF32(const float *x, const int64_t *xStrides, float *y, const int64_t *outShape,
                  int rank) {
  runBinary(FirstOp{}, x, xStrides, x, xStrides, y, outShape, rank);
}

} // namespace rt
} // namespace dlc
