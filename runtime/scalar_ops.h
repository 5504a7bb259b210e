// Per-element definitions shared by the CPU kernels and the generated CUDA kernels: the unary
// kinds and their gradients, the binary operations (ONNX's integer rules: wrapping arithmetic, x / 0 == 0, Python's modulo, shifts
// past the width), the float16 / bfloat16 / float8 / float4 conversions and dropout's random
// numbers. One definition serves both targets, so a CUDA kernel computes exactly what the CPU
// kernel does.
// Under nvcc every function here is __host__ __device__; it needs no CUDA header and no
// library beside the C math functions.
#ifndef DLC_SCALAR_OPS_H
#define DLC_SCALAR_OPS_H

#ifdef __CUDACC_RTC__
#include "dlc_cuda_rtc.h" // NVRTC (the CUDA target's kernels compiled at create time)
#else
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <type_traits>
#endif

#ifdef __CUDACC__
#define DLC_HOST_DEVICE __host__ __device__
#else
#define DLC_HOST_DEVICE
#endif

namespace dlc {
namespace rt {

// How Cast rounds a float to float8 e8m0 (ONNX's round_mode).
enum class Rounding { Up, Down, Nearest };

// ---- unary kinds: one record each ----
// Every unary kind once, with what its derivative is computed from: the forward Output (so
// the forward op may still run in place), the forward Input, or None (no gradient kernel).
// The runtime's UnaryKind, the compiler's kind names (an ODS op names its kind), the CPU
// kernels, the CUDA kernels and the gradient rules all come from this list and the
// <Name>Unary record below it: a new kind is one line here, one record, one ODS line.
#define DLC_UNARY_KINDS(X)                                                                     \
  X(Relu, Output) X(Sigmoid, Output) X(Tanh, Output) X(Exp, Output) X(Log, Input)              \
  X(Sqrt, Output) X(Neg, None) X(Abs, Input) X(Erf, Input) X(Reciprocal, Output) X(Floor, None) \
  X(Ceil, None) X(Softplus, Input) X(Sin, Input) X(Cos, Input) X(Tan, Output) X(Asin, Input)    \
  X(Acos, Input) X(Atan, Input) X(Sinh, Input) X(Cosh, Input) X(Asinh, Input) X(Acosh, Input)  \
  X(Atanh, Input) X(Softsign, Input) X(HardSwish, Input) X(Sign, None) X(Round, None)        \
  X(Mish, Input)
#define DLC_UNARY_ENUMERATOR(name, gradFrom) name,
enum class UnaryKind { DLC_UNARY_KINDS(DLC_UNARY_ENUMERATOR) };
#undef DLC_UNARY_ENUMERATOR
enum class GradFrom { Output, Input, None };

namespace scalar {

template <typename T> DLC_HOST_DEVICE inline bool isNan(T v) {
  if constexpr (std::is_floating_point_v<T>)
    return v != v;
  else
    return false;
}

// Integer arithmetic wraps (as NumPy's does) instead of invoking signed-overflow UB.
template <typename T> using Unsigned = std::make_unsigned_t<T>;

// Sign tests that are simply false for unsigned types (no always-false comparisons).
template <typename T> DLC_HOST_DEVICE inline bool isNegative(T v) {
  if constexpr (std::is_signed_v<T>)
    return v < 0;
  else
    return false;
}
template <typename T> DLC_HOST_DEVICE inline bool isMinusOne(T v) {
  if constexpr (std::is_signed_v<T>)
    return v == -1;
  else
    return false;
}

// pow and fmod of float in float (powf, fmodf), of double in double.
template <typename T> DLC_HOST_DEVICE inline T power(T a, T b) {
  if constexpr (std::is_same_v<T, float>)
    return powf(a, b);
  else
    return pow(a, b);
}
template <typename T> DLC_HOST_DEVICE inline T remainderOf(T a, T b) {
  if constexpr (std::is_same_v<T, float>)
    return fmodf(a, b);
  else
    return fmod(a, b);
}

struct AddOp {
  template <typename T> DLC_HOST_DEVICE T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>)
      return static_cast<T>(static_cast<Unsigned<T>>(a) + static_cast<Unsigned<T>>(b));
    else
      return a + b;
  }
};
struct SubOp {
  template <typename T> DLC_HOST_DEVICE T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>)
      return static_cast<T>(static_cast<Unsigned<T>>(a) - static_cast<Unsigned<T>>(b));
    else
      return a - b;
  }
};
struct MulOp {
  template <typename T> DLC_HOST_DEVICE T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>)
      return static_cast<T>(static_cast<Unsigned<T>>(a) * static_cast<Unsigned<T>>(b));
    else
      return a * b;
  }
};
struct DivOp {
  template <typename T> DLC_HOST_DEVICE T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>) {
      // Both cases trap on x86; NumPy yields 0 for x / 0 and wraps MIN / -1.
      if (b == 0)
        return 0;
      if (isMinusOne(b))
        return static_cast<T>(Unsigned<T>(0) - static_cast<Unsigned<T>>(a));
      return static_cast<T>(a / b);
    } else {
      return a / b;
    }
  }
};
struct PowOp {
  template <typename T> DLC_HOST_DEVICE T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>) {
      // A negative exponent gives |result| <= 1, truncated toward zero like a cast of std::pow.
      if (isNegative(b))
        return a == 1 ? T(1) : isMinusOne(a) ? T((b & 1) ? -1 : 1) : T(0);
      Unsigned<T> result = 1, base = static_cast<Unsigned<T>>(a);
      for (T e = b; e != 0; e >>= 1) {
        if (e & 1)
          result *= base;
        base *= base;
      }
      return static_cast<T>(result);
    } else {
      return power(a, b);
    }
  }
};
// NaN propagates, as in NumPy's maximum/minimum and ONNX Max/Min.
struct MaxOp {
  template <typename T> DLC_HOST_DEVICE T operator()(T a, T b) const {
    return (a > b || isNan(a)) ? a : b;
  }
};
struct MinOp {
  template <typename T> DLC_HOST_DEVICE T operator()(T a, T b) const {
    return (a < b || isNan(a)) ? a : b;
  }
};
// Bitwise on integers; on bool (0/1 bytes) the same operations are logical And, Or, Xor. The
// dialect only allows them on integer and bool tensors.
struct AndOp {
  template <typename T> DLC_HOST_DEVICE T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>)
      return a & b;
    else
      return T(0);
  }
};
struct OrOp {
  template <typename T> DLC_HOST_DEVICE T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>)
      return a | b;
    else
      return T(0);
  }
};
struct XorOp {
  template <typename T> DLC_HOST_DEVICE T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>)
      return a ^ b;
    else
      return T(0);
  }
};
// Shifts; a shift by a negative amount or the width or more gives 0 (-1 for a negative
// value shifted right), as ONNX's reference does. Right shifts of signed values keep the sign.
struct ShiftLeftOp {
  template <typename T> DLC_HOST_DEVICE T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>)
      return (isNegative(b) || uint64_t(b) >= sizeof(T) * 8) ? T(0) : T(Unsigned<T>(a) << b);
    else
      return T(0);
  }
};
struct ShiftRightOp {
  template <typename T> DLC_HOST_DEVICE T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>) {
      bool negative = isNegative(a);
      if (isNegative(b) || uint64_t(b) >= sizeof(T) * 8)
        return negative ? T(-1) : T(0);
      // Sign-filling without relying on the implementation's >> of negative values.
      return negative ? T(~(Unsigned<T>(~a) >> b)) : T(Unsigned<T>(a) >> b);
    } else {
      return T(0);
    }
  }
};
// The remainder with the divisor's sign (Python's %, ONNX Mod with fmod=0) ...
struct ModOp {
  template <typename T> DLC_HOST_DEVICE T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>) {
      if (b == 0)
        return 0;
      if (isMinusOne(b)) // MIN % -1 traps on x86
        return 0;
      T r = static_cast<T>(a % b);
      return (r != 0 && (isNegative(r) != isNegative(b))) ? T(r + b) : r;
    } else {
      T r = remainderOf(a, b);
      return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
    }
  }
};
// ... and with the dividend's sign (C's fmod and %, ONNX Mod with fmod=1).
struct FModOp {
  template <typename T> DLC_HOST_DEVICE T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>)
      return (b == 0 || isMinusOne(b)) ? T(0) : T(a % b);
    else
      return remainderOf(a, b);
  }
};
struct EqualOp {
  template <typename T> DLC_HOST_DEVICE uint8_t operator()(T a, T b) const { return a == b; }
};
struct LessOp {
  template <typename T> DLC_HOST_DEVICE uint8_t operator()(T a, T b) const { return a < b; }
};
struct LessEqualOp {
  template <typename T> DLC_HOST_DEVICE uint8_t operator()(T a, T b) const { return a <= b; }
};
struct GreaterOp {
  template <typename T> DLC_HOST_DEVICE uint8_t operator()(T a, T b) const { return a > b; }
};
struct GreaterEqualOp {
  template <typename T> DLC_HOST_DEVICE uint8_t operator()(T a, T b) const { return a >= b; }
};


// Clip's (and Relu's) clamp, shared by the elementwise kernel, the fused chains and the
// epilogues that apply it inside other kernels, so they agree on every input (a NaN passes
// through, as ONNX Clip); and LeakyRelu's.
DLC_HOST_DEVICE inline float clampValue(float v, float lo, float hi) {
  const float clamped = v < lo ? lo : v;
  return clamped > hi ? hi : clamped;
}
DLC_HOST_DEVICE inline float leakyReluValue(float v, float alpha) {
  return v < 0.0f ? alpha * v : v;
}

// ---- unary kinds' definitions (DLC_UNARY_KINDS above) ----
// The C math function of float in float (expf), of double in double (exp).
#define DLC_MATH_FUNCTION(name)                                                                \
  template <typename T> DLC_HOST_DEVICE inline T name##Of(T v) {                              \
    if constexpr (std::is_same_v<T, float>)                                                    \
      return name##f(v);                                                                       \
    else                                                                                       \
      return name(v);                                                                          \
  }
DLC_MATH_FUNCTION(exp) DLC_MATH_FUNCTION(log) DLC_MATH_FUNCTION(log1p) DLC_MATH_FUNCTION(sqrt)
DLC_MATH_FUNCTION(fabs) DLC_MATH_FUNCTION(erf) DLC_MATH_FUNCTION(floor) DLC_MATH_FUNCTION(ceil)
DLC_MATH_FUNCTION(tanh) DLC_MATH_FUNCTION(sin) DLC_MATH_FUNCTION(cos) DLC_MATH_FUNCTION(tan)
DLC_MATH_FUNCTION(asin) DLC_MATH_FUNCTION(acos) DLC_MATH_FUNCTION(atan) DLC_MATH_FUNCTION(sinh)
DLC_MATH_FUNCTION(cosh) DLC_MATH_FUNCTION(asinh) DLC_MATH_FUNCTION(acosh)
DLC_MATH_FUNCTION(atanh) DLC_MATH_FUNCTION(nearbyint)
#undef DLC_MATH_FUNCTION

// Each record: operator() is the op for float and double; grad(g, s) is dy * f'(x) in float,
// from s, the forward output or input (as its GradFrom says).
struct ReluUnary {
  template <typename T> DLC_HOST_DEVICE T operator()(T v) const { return v < T(0) ? T(0) : v; }
  // A test of y <= 0, so that a NaN input passes its gradient on, as in PyTorch.
  DLC_HOST_DEVICE float grad(float g, float y) const { return y <= 0.0f ? 0.0f : g; }
};
struct SigmoidUnary {
  // exp of a large positive argument overflows; evaluating on the side where the exponent is
  // non-positive keeps both branches finite.
  template <typename T> DLC_HOST_DEVICE T operator()(T v) const {
    if (v >= T(0))
      return T(1) / (T(1) + expOf(-v));
    T e = expOf(v);
    return e / (T(1) + e);
  }
  DLC_HOST_DEVICE float grad(float g, float y) const { return g * (1.0f - y) * y; }
};
struct TanhUnary {
  template <typename T> DLC_HOST_DEVICE T operator()(T v) const { return tanhOf(v); }
  DLC_HOST_DEVICE float grad(float g, float y) const { return g * (1.0f - y * y); }
};
struct ExpUnary {
  template <typename T> DLC_HOST_DEVICE T operator()(T v) const { return expOf(v); }
  DLC_HOST_DEVICE float grad(float g, float y) const { return g * y; }
};
struct LogUnary {
  template <typename T> DLC_HOST_DEVICE T operator()(T v) const { return logOf(v); }
  DLC_HOST_DEVICE float grad(float g, float x) const { return g / x; }
};
struct SqrtUnary {
  template <typename T> DLC_HOST_DEVICE T operator()(T v) const { return sqrtOf(v); }
  DLC_HOST_DEVICE float grad(float g, float y) const { return g / (2.0f * y); }
};
// Its gradient is a Neg of dy (no kernel of its own).
struct NegUnary {
  template <typename T> DLC_HOST_DEVICE T operator()(T v) const { return -v; }
};
struct AbsUnary {
  template <typename T> DLC_HOST_DEVICE T operator()(T v) const { return fabsOf(v); }
  // sign(0) = 0 picks the subgradient PyTorch uses.
  DLC_HOST_DEVICE float grad(float g, float x) const {
    return g * static_cast<float>((x > 0.0f) - (x < 0.0f));
  }
};
struct ErfUnary {
  template <typename T> DLC_HOST_DEVICE T operator()(T v) const { return erfOf(v); }
  DLC_HOST_DEVICE float grad(float g, float x) const {
    return g * (1.12837916709551257390f * expf(-x * x)); // 2 / sqrt(pi)
  }
};
struct ReciprocalUnary {
  template <typename T> DLC_HOST_DEVICE T operator()(T v) const { return T(1) / v; }
  DLC_HOST_DEVICE float grad(float g, float y) const { return -g * (y * y); }
};
struct FloorUnary {
  template <typename T> DLC_HOST_DEVICE T operator()(T v) const { return floorOf(v); }
};
struct CeilUnary {
  template <typename T> DLC_HOST_DEVICE T operator()(T v) const { return ceilOf(v); }
};
struct SoftplusUnary {
  // log(1 + exp(v)) overflows for large v; max(v, 0) + log1p(exp(-|v|)) is the same value.
  template <typename T> DLC_HOST_DEVICE T operator()(T v) const {
    return (v < T(0) ? T(0) : v) + log1pOf(expOf(-fabsOf(v)));
  }
  DLC_HOST_DEVICE float grad(float g, float x) const { return g * SigmoidUnary()(x); }
};
struct SinUnary {
  template <typename T> DLC_HOST_DEVICE T operator()(T v) const { return sinOf(v); }
  DLC_HOST_DEVICE float grad(float g, float x) const { return g * cosf(x); }
};
struct CosUnary {
  template <typename T> DLC_HOST_DEVICE T operator()(T v) const { return cosOf(v); }
  DLC_HOST_DEVICE float grad(float g, float x) const { return -g * sinf(x); }
};
struct TanUnary {
  template <typename T> DLC_HOST_DEVICE T operator()(T v) const { return tanOf(v); }
  DLC_HOST_DEVICE float grad(float g, float y) const { return g * (1.0f + y * y); }
};
struct AsinUnary {
  template <typename T> DLC_HOST_DEVICE T operator()(T v) const { return asinOf(v); }
  DLC_HOST_DEVICE float grad(float g, float x) const { return g / sqrtf(1.0f - x * x); }
};
struct AcosUnary {
  template <typename T> DLC_HOST_DEVICE T operator()(T v) const { return acosOf(v); }
  DLC_HOST_DEVICE float grad(float g, float x) const { return -g / sqrtf(1.0f - x * x); }
};
struct AtanUnary {
  template <typename T> DLC_HOST_DEVICE T operator()(T v) const { return atanOf(v); }
  DLC_HOST_DEVICE float grad(float g, float x) const { return g / (1.0f + x * x); }
};
struct SinhUnary {
  template <typename T> DLC_HOST_DEVICE T operator()(T v) const { return sinhOf(v); }
  DLC_HOST_DEVICE float grad(float g, float x) const { return g * coshf(x); }
};
struct CoshUnary {
  template <typename T> DLC_HOST_DEVICE T operator()(T v) const { return coshOf(v); }
  DLC_HOST_DEVICE float grad(float g, float x) const { return g * sinhf(x); }
};
struct AsinhUnary {
  template <typename T> DLC_HOST_DEVICE T operator()(T v) const { return asinhOf(v); }
  DLC_HOST_DEVICE float grad(float g, float x) const { return g / sqrtf(x * x + 1.0f); }
};
struct AcoshUnary {
  template <typename T> DLC_HOST_DEVICE T operator()(T v) const { return acoshOf(v); }
  DLC_HOST_DEVICE float grad(float g, float x) const { return g / sqrtf(x * x - 1.0f); }
};
struct AtanhUnary {
  template <typename T> DLC_HOST_DEVICE T operator()(T v) const { return atanhOf(v); }
  DLC_HOST_DEVICE float grad(float g, float x) const { return g / (1.0f - x * x); }
};
struct SoftsignUnary {
  template <typename T> DLC_HOST_DEVICE T operator()(T v) const {
    return v / (T(1) + fabsOf(v));
  }
  DLC_HOST_DEVICE float grad(float g, float x) const {
    float d = 1.0f + fabsf(x);
    return g / (d * d);
  }
};
struct HardSwishUnary {
  // x * relu6(x + 3) / 6, ONNX's alpha = 1/6, beta = 0.5 form.
  template <typename T> DLC_HOST_DEVICE T operator()(T v) const {
    T gate = v / T(6) + T(0.5);
    return v * (gate < T(0) ? T(0) : gate > T(1) ? T(1) : gate);
  }
  // PyTorch's hardswish_backward: 0 below -3, 1 above 3, (2x + 3) / 6 between (inclusive).
  DLC_HOST_DEVICE float grad(float g, float x) const {
    return x < -3.0f ? 0.0f : x <= 3.0f ? g * (2.0f * x + 3.0f) / 6.0f : g;
  }
};
struct SignUnary {
  template <typename T> DLC_HOST_DEVICE T operator()(T v) const {
    return static_cast<T>((v > T(0)) - (v < T(0)));
  }
};
struct RoundUnary {
  // Halves to even, as ONNX defines (the default rounding mode).
  template <typename T> DLC_HOST_DEVICE T operator()(T v) const { return nearbyintOf(v); }
};

struct MishUnary {
  // x * tanh(softplus(x)), each step rounded as the three ops ONNX's definition composes.
  template <typename T> DLC_HOST_DEVICE T operator()(T v) const {
    return v * tanhOf(SoftplusUnary()(v));
  }
  // PyTorch's mish_backward: tanh(softplus(x)) + x * sigmoid(x) * (1 - tanh(softplus(x))^2).
  DLC_HOST_DEVICE float grad(float g, float x) const {
    float t = tanhf(SoftplusUnary()(x));
    return g * (t + x * SigmoidUnary()(x) * (1.0f - t * t));
  }
};

// What `kind`'s derivative is computed from.
DLC_HOST_DEVICE constexpr GradFrom unaryGradFrom(UnaryKind kind) {
  switch (kind) {
#define DLC_UNARY_GRAD_FROM(name, gradFrom)                                                    \
  case UnaryKind::name:                                                                        \
    return GradFrom::gradFrom;
    DLC_UNARY_KINDS(DLC_UNARY_GRAD_FROM)
#undef DLC_UNARY_GRAD_FROM
  }
  return GradFrom::None;
}

// `v` as a `To`, as Cast converts: a float to an integer truncates toward zero and saturates
// at the integer's range, NaN giving 0. (C++ leaves an out-of-range conversion undefined; x86
// gives the lowest value, GPUs saturate: this one definition makes both targets agree.)
template <typename To, typename From> DLC_HOST_DEVICE inline To convertValue(From v) {
  if constexpr (std::is_floating_point_v<From> && std::is_integral_v<To>) {
    // (std::numeric_limits is host-only constexpr in CUDA.)
    constexpr To highest =
        std::is_signed_v<To> ? To(Unsigned<To>(~Unsigned<To>(0)) >> 1) : To(~To(0));
    constexpr To lowest = std::is_signed_v<To> ? To(-highest - 1) : To(0);
    if (v != v)
      return To(0);
    // Exact or rounded up to the next power of two: at or past it, the conversion saturates.
    if (v >= From(highest))
      return highest;
    if (v <= From(lowest))
      return lowest;
    return To(v);
  } else {
    return To(v);
  }
}

// A float's bits and back (memcpy: the one bit cast valid in C++17 host and device code).
DLC_HOST_DEVICE inline float floatFromBits(uint32_t bits) {
  float f;
  memcpy(&f, &bits, 4);
  return f;
}
DLC_HOST_DEVICE inline uint32_t bitsOf(float value) {
  uint32_t bits;
  memcpy(&bits, &value, 4);
  return bits;
}

// IEEE binary16 <-> float32, rounding to nearest even (NaN stays NaN, overflow gives inf).
DLC_HOST_DEVICE inline float halfToFloat(uint16_t bits) {
  uint32_t sign = uint32_t(bits & 0x8000) << 16, exponent = (bits >> 10) & 0x1f,
           mantissa = bits & 0x3ff;
  if (exponent == 0) // zero or subnormal: mantissa * 2^-24, exact in float
    return (sign ? -1.0f : 1.0f) * ldexpf(float(mantissa), -24);
  return floatFromBits(exponent == 0x1f ? sign | 0x7f800000u | (mantissa << 13) // inf, NaN
                                        : sign | ((exponent + 112) << 23) | (mantissa << 13));
}

DLC_HOST_DEVICE inline uint16_t floatToHalf(float value) {
  uint32_t bits = bitsOf(value);
  uint16_t sign = uint16_t((bits >> 16) & 0x8000);
  uint32_t magnitude = bits & 0x7fffffffu;
  if (magnitude > 0x7f800000u) // NaN: keep it quiet
    return uint16_t(sign | 0x7e00);
  if (magnitude >= 0x47800000u) // >= 65536 (or inf): rounds to inf
    return uint16_t(sign | 0x7c00);
  if (magnitude < 0x38800000u) {               // below 2^-14: subnormal half, round to nearest even
    float scaled = fabsf(value) * 16777216.0f; // in units of 2^-24, exact
    float rounded = nearbyintf(scaled);        // ties to even in the default mode
    return uint16_t(sign | uint16_t(rounded));
  }
  // Normal: rebias the exponent, round the 13 dropped mantissa bits to nearest even; a carry
  // into the exponent (or to inf) is the right result.
  uint32_t half = ((magnitude >> 13) - (112u << 10));
  uint32_t dropped = magnitude & 0x1fff;
  if (dropped > 0x1000 || (dropped == 0x1000 && (half & 1)))
    ++half;
  return uint16_t(sign | half);
}

// bfloat16 is float32's top half: widening is exact, narrowing rounds to nearest even.
DLC_HOST_DEVICE inline float bfloatToFloat(uint16_t bits) {
  return floatFromBits(uint32_t(bits) << 16);
}

DLC_HOST_DEVICE inline uint16_t floatToBfloat(float value) {
  uint32_t bits = bitsOf(value);
  if (value != value)
    return uint16_t((bits >> 16) | 0x40); // keep it quiet
  bits += 0x7fff + ((bits >> 16) & 1);    // round to nearest even; a carry gives inf
  return uint16_t(bits >> 16);
}

// The small float formats of ONNX (float8, and float4 in a byte's low bits): exponent and
// mantissa widths, bias, and how each spends its special codes.
enum class Specials {
  Ieee,         // all-ones exponent: infinity (mantissa 0) or NaN
  OnlyNan,      // "fn": only S.1111.111 is NaN, no infinity
  UnsignedZero, // "fnuz": the negative-zero code is the only NaN, no infinity
  None,         // finite only (float4 e2m1): conversions always saturate
};
struct MiniFloatFormat {
  int exponentBits, mantissaBits, bias;
  Specials specials;
  DLC_HOST_DEVICE uint32_t signBit() const { return 1u << (exponentBits + mantissaBits); }
};
enum class MiniFloat { E4M3FN, E4M3FNUZ, E5M2, E5M2FNUZ, E2M1 };
// (A function, not constexpr tables: nvcc refuses host constexpr objects in device code.)
DLC_HOST_DEVICE inline MiniFloatFormat miniFloatFormat(MiniFloat type) {
  switch (type) {
  case MiniFloat::E4M3FN:
    return {4, 3, 7, Specials::OnlyNan};
  case MiniFloat::E4M3FNUZ:
    return {4, 3, 8, Specials::UnsignedZero};
  case MiniFloat::E5M2:
    return {5, 2, 15, Specials::Ieee};
  case MiniFloat::E5M2FNUZ:
    return {5, 2, 16, Specials::UnsignedZero};
  default:
    return {2, 1, 1, Specials::None};
  }
}

DLC_HOST_DEVICE inline bool signBitOf(double x) {
  uint64_t bits;
  memcpy(&bits, &x, 8);
  return bits >> 63;
}

DLC_HOST_DEVICE inline double largestFinite(MiniFloatFormat f) {
  int topExponent = (1 << f.exponentBits) - (f.specials == Specials::Ieee ? 2 : 1) - f.bias;
  int topMantissa = (1 << f.mantissaBits) - (f.specials == Specials::OnlyNan ? 2 : 1);
  return ldexp(1.0 + ldexp(double(topMantissa), -f.mantissaBits), topExponent);
}

DLC_HOST_DEVICE inline double decodeMiniFloat(MiniFloatFormat f, uint8_t bits) {
  const uint32_t sign = bits & f.signBit(), magnitudeBits = bits & (f.signBit() - 1);
  const int allOnes = (1 << f.exponentBits) - 1;
  int exponent = int(magnitudeBits >> f.mantissaBits);
  int mantissa = int(magnitudeBits & ((1u << f.mantissaBits) - 1));
  bool special = f.specials == Specials::UnsignedZero ? bits == f.signBit()
                 : f.specials == Specials::OnlyNan    ? magnitudeBits == f.signBit() - 1
                 : f.specials == Specials::Ieee       ? exponent == allOnes
                                                      : false;
  if (special)
    return f.specials == Specials::Ieee && mantissa == 0 ? (sign ? -double(INFINITY) : INFINITY)
                                                         : double(NAN);
  int scale = 1 - f.bias - f.mantissaBits; // of the subnormals' unit; normals add exponent - 1
  double magnitude = exponent == 0
                         ? ldexp(double(mantissa), scale)
                         : ldexp(double(mantissa | (1 << f.mantissaBits)), scale + exponent - 1);
  return sign ? -magnitude : magnitude;
}

// Round to nearest even, independent of the floating-point environment.
DLC_HOST_DEVICE inline double roundHalfEven(double q) {
  double r = floor(q), rest = q - r;
  if (rest > 0.5 || (rest == 0.5 && fmod(r, 2.0) != 0.0))
    r += 1.0;
  return r;
}

DLC_HOST_DEVICE inline uint8_t encodeMiniFloat(MiniFloatFormat f, double x, bool saturate) {
  const int m = f.mantissaBits;
  const uint32_t signBit = f.signBit(), allOnes = (1u << f.exponentBits) - 1;
  // NaN codes as ml_dtypes (ONNX's reference) writes them; float4 has none and takes -0.
  uint32_t nan = f.specials == Specials::UnsignedZero ? signBit
                 : f.specials == Specials::OnlyNan    ? signBit - 1
                 : f.specials == Specials::Ieee       ? (allOnes << m) | (1u << (m - 1))
                                                      : signBit;
  if (x != x)
    return uint8_t(nan);
  uint32_t sign = signBitOf(x) ? signBit : 0;
  uint32_t overflow = f.specials == Specials::Ieee      ? sign | (allOnes << m)
                      : f.specials == Specials::OnlyNan ? sign | (signBit - 1)
                                                        : signBit;
  double magnitude = fabs(x), largest = largestFinite(f);
  if ((saturate || f.specials == Specials::None) && magnitude > largest)
    magnitude = largest;
  if (magnitude == double(INFINITY))
    return uint8_t(overflow);
  // Round in units of the quantum of magnitude's binade (subnormals share the lowest one);
  // values that round past the largest finite one overflow.
  int binade;
  frexp(magnitude, &binade);
  int exponent = binade - 1 > 1 - f.bias ? binade - 1 : 1 - f.bias;
  double units = roundHalfEven(ldexp(magnitude, m - exponent));
  if (ldexp(units, exponent - m) > largest)
    return uint8_t(overflow);
  if (units == 0.0)
    return uint8_t(f.specials == Specials::UnsignedZero ? 0 : sign);
  uint32_t mantissa = uint32_t(units);
  if (mantissa >= (2u << m)) { // rounding carried into the next binade
    mantissa >>= 1;
    ++exponent;
  }
  uint32_t biased = mantissa >= (1u << m) ? uint32_t(exponent + f.bias) : 0;
  return uint8_t(sign | (biased << m) | (mantissa & ((1u << m) - 1)));
}

// float8 e8m0 holds only an exponent: 2^(bits - 127), 0xFF NaN. Rounding follows the float32
// bits as ONNX's reference does: up adds one to the exponent when any mantissa bit is set,
// nearest rounds on the guard bit (ties away from a zero exponent), down truncates; without
// `saturate` a carry past 0xFE gives NaN.
DLC_HOST_DEVICE inline uint8_t encodeE8M0(double x, bool saturate, Rounding rounding) {
  uint32_t bits = bitsOf(float(x));
  uint32_t exponent = (bits >> 23) & 0xff;
  if (exponent == 0xff)
    return 0xff;
  bool up = false;
  if (rounding == Rounding::Up)
    up = (bits & 0x7fffff) != 0;
  else if (rounding == Rounding::Nearest)
    up = (bits & 0x400000) && ((bits & 0x200000) || (bits & 0x1fffff) || exponent > 0);
  if (up && !(saturate && exponent == 0xfe))
    ++exponent;
  return uint8_t(exponent);
}

DLC_HOST_DEVICE inline double decodeE8M0(uint8_t bits) {
  return bits == 0xff ? double(NAN) : ldexp(1.0, int(bits) - 127);
}

// The 4- and 2-bit integers (a byte each): the low `bits` bits of v, sign-extended when
// `isSigned`.
DLC_HOST_DEVICE inline int64_t wrapToBits(int64_t v, int bits, bool isSigned) {
  int64_t low = int64_t(uint64_t(v) & ((uint64_t(1) << bits) - 1));
  bool negative = isSigned && low >= (int64_t(1) << (bits - 1));
  return negative ? low - (int64_t(1) << bits) : low;
}

// A float's truncation as far as a 4- or 2-bit integer keeps it: its low 8 bits exactly, for
// any magnitude (fmod is exact); NaN and infinities give 0.
DLC_HOST_DEVICE inline int64_t truncatedLowByte(double v) {
  return v - v == 0.0 ? int64_t(fmod(trunc(v), 256.0)) : 0;
}

// Dropout's masks (dlc::rt::dropoutMaskF32 and the CUDA target's kernel) come from a
// counter-based generator: element i of the mask of seed s at step t is a pure function of
// (s, t, i), so either target, any thread and any order draws the same bits.

// splitmix64's output function: a bijection on 64 bits whose every output bit depends on
// every input bit, so consecutive inputs give independent-looking outputs.
DLC_HOST_DEVICE inline uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

constexpr uint64_t kGoldenGamma = 0x9e3779b97f4a7c15ull;

// The state of the splitmix64 stream that the mask of `seed` draws from at step `counter`: a
// hash of both, so steps of one seed get unrelated streams.
DLC_HOST_DEVICE inline uint64_t dropoutStream(uint64_t seed, uint64_t counter) {
  return mix64(seed ^ mix64(counter + kGoldenGamma));
}

// Element i of a mask drawn from `stream` (the stream's i-th output): 0 with probability
// `ratio`, else 1 / (1 - ratio).
DLC_HOST_DEVICE inline float dropoutMaskElement(uint64_t stream, uint64_t i, float ratio) {
  const uint64_t bits = mix64(stream + (i + 1) * kGoldenGamma);
  // The top 24 bits give u uniform on [0, 1) exactly representable in float; P(u < ratio)
  // is ratio rounded up to a multiple of 2^-24, and ratio 0 never drops.
  const float u = static_cast<float>(bits >> 40) * (1.0f / 16777216.0f);
  return u < ratio ? 0.0f : 1.0f / (1.0f - ratio);
}

} // namespace scalar
} // namespace rt
} // namespace dlc

#endif // DLC_SCALAR_OPS_H
