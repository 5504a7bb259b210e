// Internal to the runtime: Winograd's tile transforms (winograd.cpp) for one vector type V,
// compiled once per instruction set like gemm_kernel.h (gemm.cpp, isa_*.cpp), kLanes tiles at
// a time. No standard library here, for the reason pool_kernel.h gives.
#ifndef DLC_RUNTIME_WINOGRAD_KERNEL_H
#define DLC_RUNTIME_WINOGRAD_KERNEL_H

#include "gemm.h"

#include <cstring>

namespace dlc {
namespace rt {
namespace {

// The two tile sizes, written as their 1-D transforms: the 2-D ones apply each to the columns
// and then to the rows of a tile. F(2x2, 3x3) takes 4x4 input tiles to 2x2 outputs (16
// multiplications per 4 outputs), F(4x4, 3x3) 6x6 tiles to 4x4 outputs (36 per 16: 1.8x fewer,
// for more additions and a larger rounding error, which the unit tests bound). Their matrices
// are Lavin and Gray's ("Fast Algorithms for Convolutional Neural Networks", 2015), with the
// interpolation points 0, 1, -1 (and 2, -2 for F(4x4)) and infinity.
struct F2x2 {
  static constexpr int kOut = 2, kTile = 4;
  // r = B^T d.
  template <typename T> static void input(const T (&d)[kTile], T (&r)[kTile]) {
    r[0] = d[0] - d[2];
    r[1] = d[1] + d[2];
    r[2] = d[2] - d[1];
    r[3] = d[1] - d[3];
  }
  // o = A^T m.
  template <typename T> static void output(const T (&m)[kTile], T (&o)[kOut]) {
    o[0] = m[0] + m[1] + m[2];
    o[1] = m[1] - m[2] - m[3];
  }
  // u = G g, in double (the weights are transformed once, when they are packed).
  static void weights(const double (&g)[3], double (&u)[kTile]) {
    u[0] = g[0];
    u[1] = 0.5 * (g[0] + g[1] + g[2]);
    u[2] = 0.5 * (g[0] - g[1] + g[2]);
    u[3] = g[2];
  }
};

struct F4x4 {
  static constexpr int kOut = 4, kTile = 6;
  template <typename T> static void input(const T (&d)[kTile], T (&r)[kTile]) {
    const T a = d[3] + d[4], b = d[1] + d[2], c = d[4] - d[3], e = d[1] - d[2];
    const T f = d[4] - d[2], h = d[3] - d[1];
    r[0] = 4.0f * d[0] - 5.0f * d[2] + d[4];
    r[1] = a - 4.0f * b;
    r[2] = c + 4.0f * e;
    r[3] = f + 2.0f * h;
    r[4] = f - 2.0f * h;
    r[5] = 4.0f * d[1] - 5.0f * d[3] + d[5];
  }
  template <typename T> static void output(const T (&m)[kTile], T (&o)[kOut]) {
    const T a = m[1] + m[2], b = m[1] - m[2], c = m[3] + m[4], e = m[3] - m[4];
    o[0] = m[0] + a + c;
    o[1] = b + 2.0f * e;
    o[2] = a + 4.0f * c;
    o[3] = b + 8.0f * e + m[5];
  }
  static void weights(const double (&g)[3], double (&u)[kTile]) {
    u[0] = g[0] / 4;
    u[1] = -(g[0] + g[1] + g[2]) / 6;
    u[2] = -(g[0] - g[1] + g[2]) / 6;
    u[3] = g[0] / 24 + g[1] / 12 + g[2] / 6;
    u[4] = g[0] / 24 - g[1] / 12 + g[2] / 6;
    u[5] = g[2];
  }
};

// v = B^T d B for the input tile d (T: one tile's floats or a vector of tiles' lanes).
template <class F, typename T>
inline void transformInputTile(const T (&d)[F::kTile][F::kTile], T (&v)[F::kTile * F::kTile]) {
  constexpr int kTile = F::kTile;
  T r[kTile][kTile]; // B^T d, column by column
  for (int j = 0; j < kTile; ++j) {
    T column[kTile], out[kTile];
    for (int i = 0; i < kTile; ++i)
      column[i] = d[i][j];
    F::input(column, out);
    for (int i = 0; i < kTile; ++i)
      r[i][j] = out[i];
  }
  for (int i = 0; i < kTile; ++i) { // (B^T d) B, row by row
    T out[kTile];
    F::input(r[i], out);
    for (int j = 0; j < kTile; ++j)
      v[kTile * i + j] = out[j];
  }
}

// The output tile A^T m A + bias of the products m.
template <class F, typename T>
inline void transformOutputTile(const T (&m)[F::kTile * F::kTile], float bias,
                                T (&y)[F::kOut][F::kOut]) {
  constexpr int kOut = F::kOut, kTile = F::kTile;
  T r[kOut][kTile]; // A^T m, column by column
  for (int j = 0; j < kTile; ++j) {
    T column[kTile], out[kOut];
    for (int i = 0; i < kTile; ++i)
      column[i] = m[kTile * i + j];
    F::output(column, out);
    for (int i = 0; i < kOut; ++i)
      r[i][j] = out[i];
  }
  for (int i = 0; i < kOut; ++i) { // (A^T m) A, row by row
    T out[kOut];
    F::output(r[i], out);
    for (int j = 0; j < kOut; ++j)
      y[i][j] = out[j] + bias;
  }
}

// What the output transform does to each output after the bias and the fused residual (if
// any): clamps to [lo, hi] (Relu, Clip, or nothing) in the order of clipF32 and Relu, so NaN
// passes through as it does there. Other activations run over the finished output.
template <typename T> inline T clampOutput(T value, float lo, float hi) {
  value = value < lo ? lo : value;
  return value > hi ? hi : value;
}

// Four floats of a GCC vector, compiled for the instruction set of the including translation
// unit (SSE or VEX encodings).
struct Lanes4 {
  typedef float Vec __attribute__((vector_size(16)));
  static constexpr int64_t kLanes = 4;
  static Vec load(const float *p) {
    Vec v;
    std::memcpy(&v, p, sizeof v);
    return v;
  }
  static void store(float *p, Vec v) { std::memcpy(p, &v, sizeof v); }
  static Vec loadPartial(const float *p, int64_t n) {
    Vec v{};
    for (int64_t l = 0; l < n; ++l)
      v[l] = p[l];
    return v;
  }
  static void storePartial(float *p, Vec v, int64_t n) {
    for (int64_t l = 0; l < n; ++l)
      p[l] = v[l];
  }
};

// The transforms of runs of tiles, lanes across the tiles of a run: V's (the instruction set's
// widest vectors, masked at the end of a run) unless the run fills less than three quarters
// of one, then four lanes (ResNet's 14x14 maps: 7 tiles of F(2x2) per tile row).
template <class Wide> struct WinogradTiles {
  // Columns [0, width) of one row into kOut phases (phaseStride apart): column kOut k + j to
  // phase j at k, source[c] for c in [lo, hi) and zero elsewhere, through whole wide vectors
  // to as far as their last reaches. kOut vectors of columns at a time are split in registers
  // (Wide::deinterleave, twice for kOut 4): a scalar move per column took half of a detector's
  // input transforms.
  template <int kOut>
  static void splitRow(const float *source, int64_t lo, int64_t hi, int64_t width,
                       float *phases, int64_t phaseStride) {
    using Vec = typename Wide::Vec;
    constexpr int64_t kLanes = Wide::kLanes;
    static_assert(kOut == 2 || kOut == 4, "F(2x2) and F(4x4)");
    for (int64_t c = 0; c < width; c += kOut * kLanes) {
      Vec v[kOut];
      for (int k = 0; k < kOut; ++k) {
        const int64_t begin = c + k * kLanes;
        const int64_t firstLane = lo > begin ? lo - begin : 0;
        const int64_t endLane = hi - begin < kLanes ? hi - begin : kLanes;
        if (firstLane == 0 && endLane == kLanes)
          v[k] = Wide::load(source + begin);
        else if (endLane <= firstLane)
          v[k] = Wide::zero();
        else
          v[k] = Wide::loadLanes(Wide::zero(), source + begin + firstLane, firstLane,
                                 endLane - firstLane);
      }
      Vec split[kOut];
      if constexpr (kOut == 2) {
        Wide::deinterleave(v[0], v[1], split[0], split[1]);
      } else {
        Vec even01, odd01, even23, odd23;
        Wide::deinterleave(v[0], v[1], even01, odd01);
        Wide::deinterleave(v[2], v[3], even23, odd23);
        Wide::deinterleave(even01, even23, split[0], split[2]);
        Wide::deinterleave(odd01, odd23, split[1], split[3]);
      }
      for (int j = 0; j < kOut; ++j)
        Wide::store(phases + j * phaseStride + c / kOut, split[j]);
    }
  }

  // Transforms a.count tiles along one tile row into a.out[pos * a.stride + q]: tile q reads
  // input rows a.firstRow + i and columns a.firstColumn + kOut q + j, zero outside the plane.
  template <class F, class V> static void input(const WinogradInputArgs &a) {
    constexpr int kOut = F::kOut, kTile = F::kTile;
    // Each row's columns apart by their remainder modulo kOut: tile q reads column j of its
    // row at phases[j % kOut][q + j / kOut], contiguous across tiles. Filled (zeros beyond
    // the tiles) as far as whole vectors of tiles read, and splitRow's stores reach.
    constexpr int64_t kBlock = 64;
    float phases[kTile][kOut][kBlock + Wide::kLanes];
    for (int64_t q0 = 0; q0 < a.count; q0 += kBlock) {
      const int64_t n = a.count - q0 < kBlock ? a.count - q0 : kBlock;
      const int64_t vectors = (n + V::kLanes - 1) / V::kLanes * V::kLanes;
      const int64_t width = kOut * (vectors - 1) + kTile, first = a.firstColumn + kOut * q0;
      for (int i = 0; i < kTile; ++i) {
        const int64_t row = a.firstRow + i;
        // Columns [lo, hi) of the run lie inside the plane.
        int64_t lo = width, hi = width;
        if (row >= 0 && row < a.inRows) {
          lo = first < 0 ? (-first < width ? -first : width) : 0;
          hi = a.inCols - first < width ? a.inCols - first : width;
          hi = hi < lo ? lo : hi;
        }
        splitRow<kOut>(a.plane + row * a.inCols + first, lo, hi, width, phases[i][0],
                       kBlock + Wide::kLanes);
      }
      float *out = a.out + q0;
      for (int64_t next = 0; next < n; next += V::kLanes) {
        // A last partial vector of a run with a whole vector of tiles instead ends at its
        // last tile, redoing some (their transforms are stored again, unchanged).
        const int64_t q = next + V::kLanes > n && n >= V::kLanes ? n - V::kLanes : next;
        typename V::Vec d[kTile][kTile], v[kTile * kTile];
        for (int i = 0; i < kTile; ++i)
          for (int j = 0; j < kTile; ++j)
            d[i][j] = V::load(phases[i][j % kOut] + q + j / kOut);
        transformInputTile<F>(d, v);
        const int64_t lanes = n - q < V::kLanes ? n - q : V::kLanes;
        for (int pos = 0; pos < kTile * kTile; ++pos) {
          if (lanes == V::kLanes)
            V::store(out + pos * a.stride + q, v[pos]);
          else
            V::storePartial(out + pos * a.stride + q, v[pos], lanes);
        }
      }
    }
  }

  // a[0], b[0], a[1], b[1], ... in two vectors (low, then high lanes): two columns of kLanes
  // tiles side by side, by shuffles (through memory they cost a scalar move each).
  template <class V>
  static void interleave(typename V::Vec a, typename V::Vec b, typename V::Vec &low,
                         typename V::Vec &high) {
    if constexpr (V::kLanes == 4) {
      low = __builtin_shufflevector(a, b, 0, 4, 1, 5);
      high = __builtin_shufflevector(a, b, 2, 6, 3, 7);
    } else if constexpr (V::kLanes == 8) {
      low = __builtin_shufflevector(a, b, 0, 8, 1, 9, 2, 10, 3, 11);
      high = __builtin_shufflevector(a, b, 4, 12, 5, 13, 6, 14, 7, 15);
    } else {
      static_assert(V::kLanes == 16, "4, 8 or 16 lanes");
      low = __builtin_shufflevector(a, b, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7,
                                    23);
      high = __builtin_shufflevector(a, b, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14,
                                     30, 15, 31);
    }
  }

  // row[kOut l + j] = y[j][l]: the output row of kLanes tiles, their columns in order. For
  // kOut 4, pairs of columns two apart first (0 with 2, 1 with 3), then those pairs.
  template <class V, int kOut>
  static void columnsInOrder(const typename V::Vec (&y)[kOut], float *row) {
    using Vec = typename V::Vec;
    if constexpr (kOut == 2) {
      Vec low, high;
      interleave<V>(y[0], y[1], low, high);
      V::store(row, low);
      V::store(row + V::kLanes, high);
    } else {
      static_assert(kOut == 4, "F(2x2) and F(4x4)");
      Vec even[2], odd[2], out[4];
      interleave<V>(y[0], y[2], even[0], even[1]);
      interleave<V>(y[1], y[3], odd[0], odd[1]);
      interleave<V>(even[0], odd[0], out[0], out[1]);
      interleave<V>(even[1], odd[1], out[2], out[3]);
      for (int v = 0; v < 4; ++v)
        V::store(row + v * V::kLanes, out[v]);
    }
  }

  // Writes a.count output tiles along one tile row (tile q's rows start at a.origin + kOut q,
  // its residual's at a.residual + kOut q; only a.rows rows and a.columns columns from
  // a.origin exist) from the products a.m[pos * a.stride + q].
  template <class F, class V> static void output(const WinogradOutputArgs &a) {
    constexpr int kOut = F::kOut, kPositions = F::kTile * F::kTile;
    for (int64_t q = 0; q < a.count; q += V::kLanes) {
      const int64_t lanes = a.count - q < V::kLanes ? a.count - q : V::kLanes;
      typename V::Vec products[kPositions], y[kOut][kOut];
      for (int pos = 0; pos < kPositions; ++pos)
        products[pos] = V::load(a.m + pos * a.stride + q);
      transformOutputTile<F>(products, a.bias, y);
      // The row's outputs these tiles cover.
      const int64_t covered =
          a.columns - kOut * q < lanes * kOut ? a.columns - kOut * q : lanes * kOut;
      for (int i = 0; i < a.rows; ++i) {
        // Tile q + l's columns are output columns kOut (q + l) + j: the lanes transposed.
        alignas(64) float row[V::kLanes * kOut];
        columnsInOrder<V, kOut>(y[i], row);
        const int64_t offset = i * a.outCols + kOut * q;
        for (int64_t v = 0; v * V::kLanes < covered; ++v) {
          const int64_t left = covered - v * V::kLanes;
          const int64_t count = left < V::kLanes ? left : V::kLanes;
          float *target = a.origin + offset + v * V::kLanes;
          typename V::Vec value = V::load(row + v * V::kLanes);
          if (a.residual) {
            const float *residual = a.residual + offset + v * V::kLanes;
            value += count == V::kLanes ? V::load(residual) : V::loadPartial(residual, count);
          }
          value = clampOutput(value, a.lo, a.hi);
          if (count == V::kLanes)
            V::store(target, value);
          else
            V::storePartial(target, value, count);
        }
      }
    }
  }

  template <class F, class Args> static void dispatch(const Args &a) {
    if (4 * a.count >= 3 * Wide::kLanes)
      return run<F, Wide>(a);
    run<F, Lanes4>(a);
  }
  template <class F, class V> static void run(const WinogradInputArgs &a) { input<F, V>(a); }
  template <class F, class V> static void run(const WinogradOutputArgs &a) { output<F, V>(a); }
  template <class Args> static void run(const Args &a) {
    if (a.tile == F4x4::kTile)
      dispatch<F4x4>(a);
    else
      dispatch<F2x2>(a);
  }
};

} // namespace
} // namespace rt
} // namespace dlc

#endif
