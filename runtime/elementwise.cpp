// Built with -O2 although the runtime builds with -O3: these loops are written for -O2's
// vectoriser (fixed-size chunks, no epilogue) and are memory-bound, while -O3 makes this file
// take 91 s to compile instead of 31 s.
#if !defined(__clang__)
#pragma GCC optimize("O2")
#endif
#include "clamp.h"
#include "dlc_runtime.h"
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

template <typename T> T sigmoid(T v) {
  // exp of a large positive argument overflows; evaluating on the side where the exponent is
  // non-positive keeps both branches finite.
  if (v >= T(0))
    return T(1) / (T(1) + std::exp(-v));
  T e = std::exp(v);
  return e / (T(1) + e);
}

template <typename T> T softplus(T v) {
  // log(1 + exp(v)) overflows for large v; max(v, 0) + log1p(exp(-|v|)) is the same value.
  return std::max(v, T(0)) + std::log1p(std::exp(-std::fabs(v)));
}

using namespace scalar;

// Broadcasting is binary()'s walk with an operation that ignores its second operand.
struct FirstOp {
  float operator()(float a, float) const { return a; }
};

// Calls f with the operation object of `kind`: one switch for every loop shape.
template <typename F> void withBinaryOp(BinaryKind kind, F &&f) {
  switch (kind) {
#define DLC_BINARY_CASE(name)                                                                  \
  case BinaryKind::name:                                                                       \
    return f(name##Op{});
    DLC_BINARY_KINDS(DLC_BINARY_CASE)
#undef DLC_BINARY_CASE
  }
}

// Walks the output in order. Trailing dims whose strides compose are merged into one inner
// run so the common cases (same shape, scalar or row broadcast) become flat loops the compiler
// vectorises; the remaining outer dims are walked recursively, which needs no index storage
// and so handles any rank.
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

  void run(const T *a, const T *b, R *out) {
    for (int d = 0; d < outerRank; ++d)
      if (shape[d] == 0)
        return;
    if (innerLen == 0)
      return;
    walk(0, a, b, out);
  }

private:
  void walk(int dim, const T *a, const T *b, R *&out) {
    if (dim == outerRank) {
      inner(a, b, out);
      out += innerLen;
      return;
    }
    for (int64_t i = 0; i < shape[dim]; ++i)
      walk(dim + 1, a + i * aStrides[dim], b + i * bStrides[dim], out);
  }

  void inner(const T *a, const T *b, R *out) const {
    int64_t n = innerLen;
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

template <typename T> void unary(UnaryKind kind, const T *x, T *y, int64_t n) {
  switch (kind) {
  case UnaryKind::Relu:
    return map(x, y, n, [](T v) { return v < T(0.0) ? T(0.0) : v; });
  case UnaryKind::Sigmoid:
    return map(x, y, n, sigmoid<T>);
  case UnaryKind::Tanh:
    return map(x, y, n, [](T v) { return std::tanh(v); });
  case UnaryKind::Exp:
    return map(x, y, n, [](T v) { return std::exp(v); });
  case UnaryKind::Log:
    return map(x, y, n, [](T v) { return std::log(v); });
  case UnaryKind::Sqrt:
    return map(x, y, n, [](T v) { return std::sqrt(v); });
  case UnaryKind::Neg:
    return map(x, y, n, [](T v) { return -v; });
  case UnaryKind::Abs:
    return map(x, y, n, [](T v) { return std::fabs(v); });
  case UnaryKind::Erf:
    return map(x, y, n, [](T v) { return std::erf(v); });
  case UnaryKind::Reciprocal:
    return map(x, y, n, [](T v) { return T(1.0) / v; });
  case UnaryKind::Floor:
    return map(x, y, n, [](T v) { return std::floor(v); });
  case UnaryKind::Ceil:
    return map(x, y, n, [](T v) { return std::ceil(v); });
  case UnaryKind::Softplus:
    return map(x, y, n, softplus<T>);
  case UnaryKind::Sin:
    return map(x, y, n, [](T v) { return std::sin(v); });
  case UnaryKind::Cos:
    return map(x, y, n, [](T v) { return std::cos(v); });
  case UnaryKind::Tan:
    return map(x, y, n, [](T v) { return std::tan(v); });
  case UnaryKind::Asin:
    return map(x, y, n, [](T v) { return std::asin(v); });
  case UnaryKind::Acos:
    return map(x, y, n, [](T v) { return std::acos(v); });
  case UnaryKind::Atan:
    return map(x, y, n, [](T v) { return std::atan(v); });
  case UnaryKind::Sinh:
    return map(x, y, n, [](T v) { return std::sinh(v); });
  case UnaryKind::Cosh:
    return map(x, y, n, [](T v) { return std::cosh(v); });
  case UnaryKind::Asinh:
    return map(x, y, n, [](T v) { return std::asinh(v); });
  case UnaryKind::Acosh:
    return map(x, y, n, [](T v) { return std::acosh(v); });
  case UnaryKind::Atanh:
    return map(x, y, n, [](T v) { return std::atanh(v); });
  case UnaryKind::Softsign:
    return map(x, y, n, [](T v) { return v / (T(1.0) + std::fabs(v)); });
  case UnaryKind::HardSwish:
    // x * relu6(x + 3) / 6, ONNX's alpha = 1/6, beta = 0.5 form.
    return map(x, y, n, [](T v) {
      T gate = v / T(6.0) + T(0.5);
      return v * (gate < T(0.0) ? T(0.0) : gate > T(1.0) ? T(1.0) : gate);
    });
  case UnaryKind::Sign:
    return map(x, y, n, [](T v) { return static_cast<T>((v > T(0.0)) - (v < T(0.0))); });
  case UnaryKind::Round:
    // Halves to even, as ONNX defines (the default rounding mode).
    return map(x, y, n, [](T v) { return std::nearbyint(v); });
  }
}

void clipF32(const float *x, float *y, int64_t n, float lo, float hi) {
  map(x, y, n, [lo, hi](float v) { return clampValue(v, lo, hi); });
}

void applyEpilogue(const Epilogue &epilogue, float *y, int64_t n) {
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
  }
}

void leakyReluF32(const float *x, float *y, int64_t n, float alpha) {
  map(x, y, n, [alpha](float v) { return v < 0.0f ? alpha * v : v; });
}

template void unary<float>(UnaryKind, const float *, float *, int64_t);
template void unary<double>(UnaryKind, const double *, double *, int64_t);

void unaryGradF32(UnaryGradKind kind, const float *dy, const float *saved, float *dx, int64_t n) {
  switch (kind) {
  case UnaryGradKind::Relu:
    // Written as a test of y <= 0 so that a NaN input passes its gradient on, as in PyTorch.
    return zipF32(dy, saved, dx, n, [](float g, float y) { return y <= 0.0f ? 0.0f : g; });
  case UnaryGradKind::Sigmoid:
    return zipF32(dy, saved, dx, n, [](float g, float y) { return g * (1.0f - y) * y; });
  case UnaryGradKind::Tanh:
    return zipF32(dy, saved, dx, n, [](float g, float y) { return g * (1.0f - y * y); });
  case UnaryGradKind::Exp:
    return zipF32(dy, saved, dx, n, [](float g, float y) { return g * y; });
  case UnaryGradKind::Sqrt:
    return zipF32(dy, saved, dx, n, [](float g, float y) { return g / (2.0f * y); });
  case UnaryGradKind::Reciprocal:
    return zipF32(dy, saved, dx, n, [](float g, float y) { return -g * (y * y); });
  case UnaryGradKind::Log:
    return zipF32(dy, saved, dx, n, [](float g, float x) { return g / x; });
  case UnaryGradKind::Abs:
    // sign(0) = 0 picks the subgradient PyTorch uses.
    return zipF32(dy, saved, dx, n,
                  [](float g, float x) { return g * static_cast<float>((x > 0.0f) - (x < 0.0f)); });
  case UnaryGradKind::Erf:
    return zipF32(dy, saved, dx, n, [](float g, float x) {
      constexpr float twoOverSqrtPi = 1.12837916709551257390f;
      return g * (twoOverSqrtPi * std::exp(-x * x));
    });
  case UnaryGradKind::Softplus:
    return zipF32(dy, saved, dx, n, [](float g, float x) { return g * sigmoid(x); });
  case UnaryGradKind::Sin:
    return zipF32(dy, saved, dx, n, [](float g, float x) { return g * std::cos(x); });
  case UnaryGradKind::Cos:
    return zipF32(dy, saved, dx, n, [](float g, float x) { return -g * std::sin(x); });
  case UnaryGradKind::Tan:
    return zipF32(dy, saved, dx, n, [](float g, float y) { return g * (1.0f + y * y); });
  case UnaryGradKind::Asin:
    return zipF32(dy, saved, dx, n, [](float g, float x) { return g / std::sqrt(1.0f - x * x); });
  case UnaryGradKind::Acos:
    return zipF32(dy, saved, dx, n, [](float g, float x) { return -g / std::sqrt(1.0f - x * x); });
  case UnaryGradKind::Atan:
    return zipF32(dy, saved, dx, n, [](float g, float x) { return g / (1.0f + x * x); });
  case UnaryGradKind::Sinh:
    return zipF32(dy, saved, dx, n, [](float g, float x) { return g * std::cosh(x); });
  case UnaryGradKind::Cosh:
    return zipF32(dy, saved, dx, n, [](float g, float x) { return g * std::sinh(x); });
  case UnaryGradKind::Asinh:
    return zipF32(dy, saved, dx, n, [](float g, float x) { return g / std::sqrt(x * x + 1.0f); });
  case UnaryGradKind::Acosh:
    return zipF32(dy, saved, dx, n, [](float g, float x) { return g / std::sqrt(x * x - 1.0f); });
  case UnaryGradKind::Atanh:
    return zipF32(dy, saved, dx, n, [](float g, float x) { return g / (1.0f - x * x); });
  case UnaryGradKind::Softsign:
    return zipF32(dy, saved, dx, n, [](float g, float x) {
      float d = 1.0f + std::fabs(x);
      return g / (d * d);
    });
  case UnaryGradKind::HardSwish:
    // PyTorch's hardswish_backward: 0 below -3, 1 above 3, (2x + 3) / 6 between (inclusive).
    return zipF32(dy, saved, dx, n, [](float g, float x) {
      return x < -3.0f ? 0.0f : x <= 3.0f ? g * (2.0f * x + 3.0f) / 6.0f : g;
    });
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

// Elements per chunk of a fused chain: every slot's chunk of every thread stays in L1.
constexpr int64_t kFusedChunk = 256;
// Chunks per thread at least: a chain over fewer elements runs on one thread.
constexpr int64_t kFusedGrainChunks = 32;

// Fills `buffer` with elements [begin, begin + len) of a broadcast input, without a division
// per element.
void gatherFusedInput(const FusedInput &input, int64_t begin, int64_t len, float *buffer) {
  if (input.period == 1) {
    std::fill(buffer, buffer + len, input.data[0]);
    return;
  }
  int64_t withinRepeat = begin % input.repeat, index = (begin / input.repeat) % input.period;
  for (int64_t j = 0; j < len; ++j) {
    buffer[j] = input.data[index];
    if (++withinRepeat == input.repeat) {
      withinRepeat = 0;
      if (++index == input.period)
        index = 0;
    }
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

} // namespace

void fusedElementwiseF32(const FusedInput *inputs, int numInputs, const FusedStep *steps,
                         int numSteps, float *out, int64_t n) {
  const int64_t chunks = (n + kFusedChunk - 1) / kFusedChunk;
  parallelFor(chunks, kFusedGrainChunks, [&](int64_t firstChunk, int64_t endChunk) {
    alignas(64) float buffers[kFusedMaxSlots][kFusedChunk];
    const float *slots[kFusedMaxSlots];
    for (int64_t chunk = firstChunk; chunk < endChunk; ++chunk) {
      const int64_t begin = chunk * kFusedChunk, len = std::min(kFusedChunk, n - begin);
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
