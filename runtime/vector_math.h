// exp, log, tanh, sigmoid, erf and SiLU of float, written once over a vector of lanes: the baseline
// build (gemm.cpp's portable kernels, 4 lanes), isa_avx2.cpp (8) and isa_avx512.cpp (16) each
// include it with their vector traits V, as they do gemm_kernel.h. Every lane runs the same
// operations in the same order, so a result depends on the instruction set only through V::fma
// (fused on AVX2 and AVX-512, a multiply and an add on the baseline): AVX2 and AVX-512 give the
// same bits. docs/kernels.md ("Transcendental functions") states the accuracy the unit tests
// hold them to.
//
// V provides Vec (a GCC vector of floats), fma(a, b, c) = a * b + c and loadPartial(p, n) /
// storePartial(p, v, n) (the first n lanes; gemm_kernel.h). Comparisons of
// vectors give int32 masks; `mask ? a : b` selects per lane; (I)f and (F)i reinterpret bits.
// Where V also has scaleByPowerOf2(p, n) (AVX-512's vscalefps: p * 2^n for integral n, rounded
// once), exp uses it instead of building the power of 2 from integer bits: the same bits, a
// third fewer instructions. V says so with kScalesByPowerOf2: detecting the function itself
// names its vector types as template arguments, which GCC warns about (-Wignored-attributes).
//
// The polynomials were fitted on this file's intervals (weighted least squares iterated toward
// the minimax error, in double, then rounded to float): each approximates its function to a
// few 1e-9 relative, far below float's rounding.
#ifndef DLC_RUNTIME_VECTOR_MATH_H
#define DLC_RUNTIME_VECTOR_MATH_H

#include "gemm.h"

#include <cstring>
#include <type_traits>

namespace dlc {
namespace rt {
namespace {

template <class V, class = void> struct HasScaleByPowerOf2 : std::false_type {};
template <class V>
struct HasScaleByPowerOf2<V, std::void_t<decltype(V::kScalesByPowerOf2)>> : std::true_type {};

template <class V> struct VectorMath {
  using F = typename V::Vec;
  typedef int32_t I __attribute__((vector_size(sizeof(F))));
  static constexpr int64_t kLanes = sizeof(F) / sizeof(float);

  static F splat(float v) { return F{} + v; }
  static F withSignOf(F magnitude, F sign) {
    return (F)((I)magnitude | ((I)sign & int32_t(0x80000000u)));
  }
  static F abs(F x) { return (F)((I)x & 0x7fffffff); }
  // v in its first `count` lanes (0 <= count <= kLanes), `fill` in the others: a partial
  // vector (V::loadPartial) made whole without a round trip through memory, which stalled
  // each softmax row of DeiT's 197 keys on a store forwarding and two memcpy calls.
  static F firstLanesOr(F v, int64_t count, F fill) {
    static constexpr float kLaneIndices[16] = {0, 1, 2,  3,  4,  5,  6,  7,
                                               8, 9, 10, 11, 12, 13, 14, 15};
    static_assert(kLanes <= 16, "a lane index for every lane");
    F lane;
    std::memcpy(&lane, kLaneIndices, sizeof lane);
    return lane < float(count) ? v : fill;
  }
  // Horner's rule, highest coefficient last: c[0] + x * (c[1] + x * (...)).
  template <size_t N> static F poly(F x, const float (&c)[N]) {
    F acc = splat(c[N - 1]);
    for (size_t k = N - 1; k-- > 0;)
      acc = V::fma(acc, x, splat(c[k]));
    return acc;
  }

  // ln 2 in two parts: kLn2Hi has 9 significant bits, so n * kLn2Hi is exact for |n| < 2^14.
  static constexpr float kLn2Hi = 0.693359375f, kLn2Lo = -2.12194440e-4f;

  // e^x = 2^n * e^r with n = round(x / ln 2), |r| <= ln 2 / 2; e^r = 1 + r + r^2 P(r). 2^n is
  // applied as two factors so that results in the subnormal range round once, at the end.
  // Past 89 e^x is +inf anyway (clamped there, the power of 2 stays finite until the end).
  static F exp(F x) { return expUpTo89(x > 89.0f ? splat(89.0f) : x); }
  // exp for x <= 89 or NaN, such as softmax's x - max.
  static F expUpTo89(F x) {
    static constexpr float kP[] = {0.49999994f, 0.166665211f, 0.041668389f, 0.00836871099f,
                                   0.00138146046f};
    // Below -104 e^x rounds to 0, which those lanes get at the end, computed meanwhile from 0:
    // the underflow of 2^n (n about -150) would cost a microcode assist per vector (the
    // softmax of causally masked rows, -3.4e38 on half of them, ran 8x slower). NaN passes
    // the test unchanged.
    const auto underflows = x < -104.0f;
    x = underflows ? splat(0.0f) : x;
    // Adding 1.5 * 2^23 rounds to an integer (to nearest even) and leaves it in the low bits.
    const F kRound = splat(12582912.0f);
    F shifted = V::fma(x, splat(1.44269504f), kRound);
    F n = shifted - kRound;
    F r = V::fma(n, splat(-kLn2Hi), x);
    r = V::fma(n, splat(-kLn2Lo), r);
    F p = V::fma(r * r, poly(r, kP), r) + 1.0f;
    F e;
    if constexpr (HasScaleByPowerOf2<V>::value) {
      e = V::scaleByPowerOf2(p, n);
    } else {
      I ni = (I)shifted - (I)kRound;
      I half = ni >> 1;
      F scaleA = (F)((half + 127) << 23), scaleB = (F)((ni - half + 127) << 23);
      e = p * scaleA * scaleB;
    }
    return underflows ? splat(0.0f) : e;
  }

  // log x = e ln 2 + log(1 + f) with x = 2^e (1 + f), sqrt(1/2) <= 1 + f < sqrt(2);
  // log(1 + f) = f - f^2 / 2 + f^3 Q(f).
  static F log(F x) {
    static constexpr float kQ[] = {0.333333313f,  -0.250008225f, 0.200012267f, -0.16623354f,
                                   0.142017737f, -0.131602377f, 0.127614871f, -0.0763423741f};
    I subnormal = x < 1.17549435e-38f;
    F scaled = subnormal ? x * 8388608.0f : x; // 2^23
    I bits = (I)scaled;
    I e = ((bits >> 23) & 0xff) - 127 + (subnormal & -23);
    F m = (F)((bits & 0x007fffff) | 0x3f800000);
    I above = m > 1.41421356f;
    m = above ? m * 0.5f : m;
    e -= above; // a true mask is -1
    F f = m - 1.0f;
    F ef = __builtin_convertvector(e, F);
    F z = f * f;
    F y = f * z * poly(f, kQ);
    y = V::fma(ef, splat(kLn2Lo), y);
    y = V::fma(z, splat(-0.5f), y);
    F result = V::fma(ef, splat(kLn2Hi), f + y);
    const float inf = __builtin_inff();
    result = x == inf ? splat(inf) : result;
    result = x == 0.0f ? splat(-inf) : result;
    result = x < 0.0f ? splat(__builtin_nanf("")) : result;
    return x != x ? x : result;
  }

  // tanh x = x + x^3 R(x^2) for |x| < 0.625, else sign(x) (1 - 2 / (e^{2|x|} + 1)).
  static F tanh(F x) {
    static constexpr float kR[] = {-0.333332807f, 0.133314416f, -0.0537397005f, 0.0206390489f,
                                   -0.00570494728f};
    F a = abs(x);
    F s = x * x;
    // Both forms on |x|, the sign put back: -0 stays -0.
    F small = V::fma(a * s, poly(s, kR), a);
    F large = 1.0f - 2.0f / (exp(a + a) + 1.0f);
    return withSignOf(a < 0.625f ? small : large, x); // NaN takes the large form: NaN
  }

  // 1 / (1 + e^-x) for x >= 0 and e^x / (1 + e^x) below, so that e^ never overflows.
  static F sigmoid(F x) {
    F e = expUpTo89(-abs(x));
    return (x >= 0.0f ? splat(1.0f) : e) / (1.0f + e);
  }

  static F silu(F x) { return x * sigmoid(x); }

  // The HardSwish epilogue (dlc_kernels.h): HardSigmoid as imported, its scale and shift each
  // rounded (the empty asm keeps the compiler from fusing them into one multiply-add), clamped
  // as scalar::clampValue clamps (a NaN passes), times x.
  static F hardSwish(F x) {
    F scaled = x * float(1.0 / 6.0);
#if defined(__x86_64__)
    asm("" : "+x"(scaled));
#endif
    const F linear = scaled + 0.5f;
    const F low = linear < 0.0f ? splat(0.0f) : linear;
    return x * (low > 1.0f ? splat(1.0f) : low);
  }

  // erf x = x + x P(x^2) for |x| < 1 (P(0) = 2 / sqrt(pi) - 1: the 1 added last rounds
  // once), else sign(x) (1 - e^{Q(|x| - 1)}) with Q fitted to log erfc; from |x| = 3.92,
  // erfc is below half an ulp of 1.
  static F erf(F x) {
    static constexpr float kP[] = {0.128379167f,   -0.37612626f,   0.112836003f,
                                   -0.0268544443f, 0.00518953521f, -0.000802083872f,
                                   7.88910911e-05f};
    static constexpr float kQ[] = {-1.84960556f,   -2.63896751f,    -0.843106866f,
                                   -0.0415646248f, 0.0100495601f,   -0.00201645261f,
                                   0.000293017772f, -2.30580808e-05f, 2.12175848e-07f};
    F a = abs(x);
    F small = V::fma(x, poly(x * x, kP), x);
    F t = (a > 3.92f ? splat(3.92f) : a) - 1.0f;
    F large = withSignOf(1.0f - exp(poly(t, kQ)), x);
    return a < 1.0f ? small : large; // NaN takes the large form, which keeps it
  }

  // y[0, n) = fn(x[0, n)), the last partial vector through a zero-padded copy, so every
  // element gets the same operations wherever it sits. (A function, not a lambda: GCC does
  // not compile lambdas for the target of the region that includes this file.)
  template <F (*fn)(F)> static void map(const float *x, float *y, int64_t n) {
    int64_t i = 0;
    for (; i + kLanes <= n; i += kLanes) {
      F v;
      std::memcpy(&v, x + i, sizeof v);
      v = fn(v);
      std::memcpy(y + i, &v, sizeof v);
    }
    if (i < n) {
      F v{};
      std::memcpy(&v, x + i, sizeof(float) * (n - i));
      v = fn(v);
      std::memcpy(y + i, &v, sizeof(float) * (n - i));
    }
  }

  // Softmax, or log-softmax, of each of `rows` contiguous rows of n floats. A row's sum is
  // kept as kGroup partial sums (element i in partial i % kGroup) added up in a fixed order,
  // and its maximum is exact, so the result depends on the vector width no more than exp's
  // does. NaN in a row makes the whole row NaN, through its sum. With `sums`, y keeps the
  // exponentials exp(x - row max) and sums[r] gets row r's sum: the reader normalizes (attention
  // scales its output rows, a pass over the scores fewer).
  static constexpr int64_t kGroup = 16, kVectorsPerGroup = kGroup / kLanes;
  static void softmaxRows(const float *x, float *y, int64_t rows, int64_t n, bool log,
                          float *sums) {
    for (int64_t r = 0; r < rows; ++r)
      softmaxRow(x + r * n, y + r * n, n, log, sums ? sums + r : nullptr);
  }
  // Softmax, or log-softmax, down each of `width` columns of x[j * inner + l], j < n (a
  // softmax over a middle axis: YOLOv8's box bins), a vector of columns at a time. Each
  // column's sum runs in row order, as the scalar form's (reduce.cpp); NaN in a column makes
  // it all NaN, through its sum. y may be x.
  static void softmaxColumns(const float *x, float *y, int64_t n, int64_t inner, int64_t width,
                             bool log) {
    for (int64_t c = 0; c < width; c += kLanes) {
      const int64_t count = width - c < kLanes ? width - c : kLanes;
      auto load = [count](const float *p) -> F {
        if (count < kLanes)
          return V::loadPartial(p, count);
        F v;
        std::memcpy(&v, p, sizeof v);
        return v;
      };
      auto store = [count](float *p, F v) {
        if (count < kLanes)
          V::storePartial(p, v, count);
        else
          std::memcpy(p, &v, sizeof v);
      };
      F max = splat(-__builtin_inff());
      for (int64_t j = 0; j < n; ++j) {
        const F v = load(x + j * inner + c);
        max = v > max ? v : max;
      }
      F sum{};
      for (int64_t j = 0; j < n; ++j) {
        const F e = expUpTo89(load(x + j * inner + c) - max);
        sum += e;
        if (!log)
          store(y + j * inner + c, e);
      }
      if (log) {
        float lanes[kLanes];
        std::memcpy(lanes, &sum, sizeof lanes);
        for (float &lane : lanes)
          lane = __builtin_logf(lane);
        F logSum;
        std::memcpy(&logSum, lanes, sizeof logSum);
        for (int64_t j = 0; j < n; ++j)
          store(y + j * inner + c, (load(x + j * inner + c) - max) - logSum);
        continue;
      }
      const F scale = splat(1.0f) / sum;
      for (int64_t j = 0; j < n; ++j)
        store(y + j * inner + c, load(y + j * inner + c) * scale);
    }
  }
  // Four running maxima: one would wait on each max's latency (attention's long rows).
  static float rowMax(const float *x, int64_t n) {
    const float inf = __builtin_inff();
    constexpr int64_t kChains = 4;
    F vmax[kChains];
    for (F &chain : vmax)
      chain = splat(-inf);
    int64_t i = 0;
    for (; i + kChains * kLanes <= n; i += kChains * kLanes)
      for (int64_t c = 0; c < kChains; ++c) {
        F v;
        std::memcpy(&v, x + i + c * kLanes, sizeof v);
        vmax[c] = v > vmax[c] ? v : vmax[c];
      }
    for (; i + kLanes <= n; i += kLanes) {
      F v;
      std::memcpy(&v, x + i, sizeof v);
      vmax[0] = v > vmax[0] ? v : vmax[0];
    }
    if (i < n) {
      const F v = firstLanesOr(V::loadPartial(x + i, n - i), n - i, splat(-inf));
      vmax[0] = v > vmax[0] ? v : vmax[0];
    }
    // Chains, then lanes, combined pairwise: a serial scan of the lanes cost as much as a
    // quarter of a 1500-float row's softmax.
    for (int64_t c = 1; c < kChains; ++c)
      vmax[0] = vmax[c] > vmax[0] ? vmax[c] : vmax[0];
    float lanes[kLanes];
    std::memcpy(lanes, vmax, sizeof lanes);
    for (int64_t width = kLanes / 2; width > 0; width /= 2)
      for (int64_t l = 0; l < width; ++l)
        lanes[l] = lanes[l + width] > lanes[l] ? lanes[l + width] : lanes[l];
    return lanes[0];
  }
  // e = exp(x[0, kGroup) - max) into `e` (when not null), added to `sums`.
  static void expGroup(const float *x, F shift, float *e, F (&sums)[kVectorsPerGroup]) {
    for (int64_t j = 0; j < kVectorsPerGroup; ++j) {
      F v;
      std::memcpy(&v, x + j * kLanes, sizeof v);
      v = expUpTo89(v - shift);
      if (e)
        std::memcpy(e + j * kLanes, &v, sizeof v);
      sums[j] += v;
    }
  }
  static void softmaxRow(const float *x, float *y, int64_t n, bool log, float *sum) {
    const float max = rowMax(x, n);
    const F shift = splat(max);
    F sums[kVectorsPerGroup] = {};
    int64_t i = 0;
    for (; i + kGroup <= n; i += kGroup)
      expGroup(x + i, shift, log ? nullptr : y + i, sums);
    // The last partial group by partial vectors, whose missing lanes' exponentials count as 0.
    for (int64_t j = 0; i < n && j < kVectorsPerGroup; ++j) {
      const int64_t first = i + j * kLanes;
      const int64_t count = first >= n ? 0 : n - first < kLanes ? n - first : kLanes;
      const F v =
          firstLanesOr(expUpTo89(V::loadPartial(x + first, count) - shift), count, F{});
      sums[j] += v;
      if (!log && count)
        V::storePartial(y + first, v, count);
    }
    float partial[kGroup];
    std::memcpy(partial, sums, sizeof partial);
    for (int64_t width = kGroup / 2; width > 0; width /= 2)
      for (int64_t t = 0; t < width; ++t)
        partial[t] += partial[t + width];
    if (log) {
      // x - max is exact for nearby values; folding max and log-sum into one offset first
      // would round away a small result's precision when the inputs are large.
      const float logSum = __builtin_logf(partial[0]);
      for (int64_t t = 0; t < n; ++t)
        y[t] = (x[t] - max) - logSum;
      return;
    }
    if (sum) {
      *sum = partial[0];
      return;
    }
    const float scale = 1.0f / partial[0];
    for (int64_t t = 0; t < n; ++t)
      y[t] *= scale;
  }

  // The sum over a row of x - shift, or (Squares) of its squares, in kGroup partial sums
  // added pairwise, as softmax's; the last partial group is padded with `shift`, which adds 0.
  template <bool Squares> static float shiftedSum(const float *x, int64_t n, float shift) {
    const F s = splat(shift);
    F sums[kVectorsPerGroup] = {};
    float padded[kGroup];
    for (int64_t i = 0; i < n; i += kGroup) {
      const float *group = x + i;
      if (i + kGroup > n) {
        for (int64_t t = 0; t < kGroup; ++t)
          padded[t] = i + t < n ? x[i + t] : shift;
        group = padded;
      }
      for (int64_t j = 0; j < kVectorsPerGroup; ++j) {
        F v;
        std::memcpy(&v, group + j * kLanes, sizeof v);
        v -= s;
        sums[j] += Squares ? v * v : v;
      }
    }
    float partial[kGroup];
    std::memcpy(partial, sums, sizeof partial);
    for (int64_t width = kGroup / 2; width > 0; width /= 2)
      for (int64_t t = 0; t < width; ++t)
        partial[t] += partial[t + width];
    return partial[0];
  }

  // Layer normalization, a row at a time: the mean, then the variance of the centered values
  // (two passes, so a large mean costs no precision), then y, all over a row in L1. RMSNorm
  // takes the mean of the squares of x itself.
  static void layerNormRows(const LayerNormRowsArgs &a) {
    const float inverseCount = 1.0f / float(a.n);
    for (int64_t r = 0; r < a.rows; ++r) {
      const float *x = a.x + r * a.n;
      float *y = a.y + r * a.n;
      const float mean = a.rms ? 0.0f : shiftedSum<false>(x, a.n, 0.0f) * inverseCount;
      const float variance = shiftedSum<true>(x, a.n, mean) * inverseCount;
      const float inverseDeviation = 1.0f / __builtin_sqrtf(variance + a.epsilon);
      const F m = splat(mean), d = splat(inverseDeviation);
      int64_t i = 0;
      for (; i + kLanes <= a.n; i += kLanes) {
        F v;
        std::memcpy(&v, x + i, sizeof v);
        v = (v - m) * d;
        if (a.scale) {
          F scale;
          std::memcpy(&scale, a.scale + i, sizeof scale);
          v *= scale;
        }
        if (a.bias) {
          F bias;
          std::memcpy(&bias, a.bias + i, sizeof bias);
          v += bias;
        }
        std::memcpy(y + i, &v, sizeof v);
      }
      for (; i < a.n; ++i) {
        float v = (x[i] - mean) * inverseDeviation;
        if (a.scale)
          v *= a.scale[i];
        if (a.bias)
          v += a.bias[i];
        y[i] = v;
      }
    }
  }

  // One vector's function, for kernels that finish their sums with it in registers (run's
  // dispatch, a vector at a time: a class template over the function, to share one switch,
  // names the vector type as a template argument, which GCC warns about).
  static F apply(MathFunction function, F x) {
    switch (function) {
    case MathFunction::Exp:
      return exp(x);
    case MathFunction::Log:
      return log(x);
    case MathFunction::Tanh:
      return tanh(x);
    case MathFunction::Sigmoid:
      return sigmoid(x);
    case MathFunction::Erf:
      return erf(x);
    case MathFunction::Silu:
      return silu(x);
    case MathFunction::HardSwish:
      break;
    }
    return hardSwish(x);
  }

  static void run(MathFunction function, const float *x, float *y, int64_t n) {
    switch (function) {
    case MathFunction::Exp:
      return map<exp>(x, y, n);
    case MathFunction::Log:
      return map<log>(x, y, n);
    case MathFunction::Tanh:
      return map<tanh>(x, y, n);
    case MathFunction::Sigmoid:
      return map<sigmoid>(x, y, n);
    case MathFunction::Erf:
      return map<erf>(x, y, n);
    case MathFunction::Silu:
      return map<silu>(x, y, n);
    case MathFunction::HardSwish:
      return map<hardSwish>(x, y, n);
    }
  }
};

} // namespace
} // namespace rt
} // namespace dlc

#endif
