// Per-element definitions shared by the CPU kernels and the generated CUDA kernels: the binary
// operations (ONNX's integer rules: wrapping arithmetic, x / 0 == 0, Python's modulo, shifts
// past the width), the float16 / bfloat16 conversions and dropout's random numbers. One
// definition serves both targets, so a CUDA kernel computes exactly what the CPU kernel does.
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
