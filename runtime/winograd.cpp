#include "winograd.h"

#include "parallel.h"
#include "window.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <vector>

namespace dlc {
namespace rt {

namespace {

// A 4x4 input tile gives a 2x2 output tile; its transform has 16 positions, each one GEMM.
constexpr int64_t kPositions = 16;
// Fewer tiles than this per thread make GEMMs too narrow to fill the kernels' register tiles;
// such convolutions split the 16 positions' GEMMs over the threads instead.
constexpr int64_t kMinTilesPerPart = 32;

// Convolutions with fewer channels than this spend more on the transforms than they save, and
// with fewer tiles than the widest kernel's register tile (32 columns) they leave much of
// every GEMM tile empty (ResNet's 7x7 maps: 16 tiles).
constexpr int64_t kMinChannels = 16, kMinTiles = 32;

// Without a limit of the caller's, pieces of tiles fill 4 MiB: the GEMMs are as wide as the
// pieces, and ResNet-18 ran 5% faster than with im2col's 1 MiB (its arena: 4.2 -> 6.6 MB).
constexpr int64_t kDefaultWorkspaceBytes = int64_t(4) << 20;

struct Tiling {
  int64_t channels, outChannels, inRows, inCols, outRows, outCols, padTop, padLeft;
  int64_t tileCols, perImage, tiles;
  // Tiles transformed at once: their input and product matrices fill the workspace.
  int64_t chunk;

  explicit Tiling(const ConvParams &p)
      : channels(p.window.channels), outChannels(p.outChannels), inRows(p.window.in[1]),
        inCols(p.window.in[2]), outRows(p.window.out[1]), outCols(p.window.out[2]),
        padTop(p.window.padBegin[1]), padLeft(p.window.padBegin[2]), tileCols((outCols + 1) / 2),
        perImage((outRows + 1) / 2 * tileCols), tiles(p.window.batch * perImage) {
    const int64_t tileBytes = kPositions * (channels + outChannels) * int64_t(sizeof(float));
    const int64_t limit = p.workspaceLimit > 0 ? p.workspaceLimit : kDefaultWorkspaceBytes;
    chunk = std::clamp<int64_t>(limit / tileBytes, 1, std::max<int64_t>(tiles, 1));
  }
  int64_t inPlane() const { return inRows * inCols; }
  int64_t outPlane() const { return outRows * outCols; }
};

// Calls run(t, n, tileRow, tileCol, count) for each run of tiles [t, t + count) in [t0, t1)
// that lies along one row of one image's tiles.
template <typename Run> void forEachTileRun(const Tiling &s, int64_t t0, int64_t t1, Run run) {
  for (int64_t t = t0; t < t1;) {
    const int64_t n = t / s.perImage, tile = t % s.perImage;
    const int64_t tileRow = tile / s.tileCols, tileCol = tile % s.tileCols;
    const int64_t count = std::min(t1 - t, s.tileCols - tileCol);
    run(t, n, tileRow, tileCol, count);
    t += count;
  }
}

// Four tiles at once (SSE2 on any x86-64): GCC does not vectorise the tile loops by itself
// (their loads overlap from one tile to the next).
typedef float Lanes __attribute__((vector_size(16)));
constexpr int64_t kLanes = 4;
inline Lanes loadLanes(const float *p) {
  Lanes v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline void storeLanes(float *p, Lanes v) { std::memcpy(p, &v, sizeof v); }
inline float loadLanes1(const float *p) { return *p; }
inline void storeLanes1(float *p, float v) { *p = v; }

// v = B^T d B for the 4x4 input tile d (T: one tile's floats or four tiles' lanes).
template <typename T> inline void transformInputTile(const T (&d)[4][4], T (&v)[16]) {
  T r[4][4]; // B^T d
  for (int j = 0; j < 4; ++j) {
    r[0][j] = d[0][j] - d[2][j];
    r[1][j] = d[1][j] + d[2][j];
    r[2][j] = d[2][j] - d[1][j];
    r[3][j] = d[1][j] - d[3][j];
  }
  for (int i = 0; i < 4; ++i) { // (B^T d) B
    v[4 * i + 0] = r[i][0] - r[i][2];
    v[4 * i + 1] = r[i][1] + r[i][2];
    v[4 * i + 2] = r[i][2] - r[i][1];
    v[4 * i + 3] = r[i][1] - r[i][3];
  }
}

// Stores the 16 transformed values of one tile (or of kLanes consecutive ones) at
// out[pos * stride].
inline void storePositions(const float (&v)[16], float *out, int64_t stride) {
  for (int pos = 0; pos < 16; ++pos)
    storeLanes1(out + pos * stride, v[pos]);
}
inline void storePositions(const Lanes (&v)[16], float *out, int64_t stride) {
  for (int pos = 0; pos < 16; ++pos)
    storeLanes(out + pos * stride, v[pos]);
}

// Transforms `count` tiles of one tile row that lie wholly inside the input: tile q's rows
// start at origin + 2 * q. A loop of its own so that it vectorises across tiles.
void transformInteriorTiles(const float *__restrict origin, int64_t inCols, int64_t count,
                            float *__restrict out, int64_t stride) {
  // Each row's even and odd columns apart: tile q reads even[q], odd[q], even[q + 1],
  // odd[q + 1], contiguous across tiles.
  constexpr int64_t kBlock = 64;
  float even[4][kBlock + kLanes], odd[4][kBlock + kLanes];
  for (int64_t q0 = 0; q0 < count; q0 += kBlock) {
    const int64_t n = std::min(kBlock, count - q0);
    for (int i = 0; i < 4; ++i) {
      const float *row = origin + i * inCols + 2 * q0;
      for (int64_t q = 0; q <= n; ++q) {
        even[i][q] = row[2 * q];
        odd[i][q] = row[2 * q + 1];
      }
    }
    auto transform = [&](int64_t q, auto load) {
      using T = decltype(load(even[0]));
      T d[4][4], v[16];
      for (int i = 0; i < 4; ++i) {
        d[i][0] = load(even[i] + q);
        d[i][1] = load(odd[i] + q);
        d[i][2] = load(even[i] + q + 1);
        d[i][3] = load(odd[i] + q + 1);
      }
      transformInputTile(d, v);
      storePositions(v, out + q0 + q, stride);
    };
    int64_t q = 0;
    for (; q + kLanes <= n; q += kLanes)
      transform(q, loadLanes);
    for (; q < n; ++q)
      transform(q, loadLanes1);
  }
}

// v[pos][c][t - t0] = (B^T d B)[pos] for the 4x4 input tile d of each channel c and tile t.
void transformInput(const Tiling &s, const float *x, int64_t t0, int64_t t1, float *v) {
  const int64_t nt = t1 - t0, positionStride = s.channels * nt;
  // Tile columns whose four input columns all exist.
  const int64_t colLo = std::min((s.padLeft + 1) / 2, s.tileCols);
  const int64_t lastStart = s.inCols - 4 + s.padLeft; // 2 * col may be at most this
  const int64_t colHi =
      std::clamp<int64_t>(lastStart < 0 ? 0 : lastStart / 2 + 1, colLo, s.tileCols);
  for (int64_t c = 0; c < s.channels; ++c) {
    float *vc = v + c * nt;
    forEachTileRun(
        s, t0, t1, [&](int64_t t, int64_t n, int64_t tileRow, int64_t tileCol, int64_t count) {
          const float *plane = x + (n * s.channels + c) * s.inPlane();
          const int64_t iy0 = 2 * tileRow - s.padTop;
          int64_t lo = tileCol + count, hi = lo; // the interior part of the run
          if (iy0 >= 0 && iy0 + 4 <= s.inRows) {
            lo = std::clamp(colLo, tileCol, tileCol + count);
            hi = std::clamp(colHi, lo, tileCol + count);
            transformInteriorTiles(plane + iy0 * s.inCols + 2 * lo - s.padLeft, s.inCols, hi - lo,
                                   vc + (t - t0) + (lo - tileCol), positionStride);
          }
          for (int64_t col = tileCol; col < tileCol + count; ++col) {
            if (col == lo)
              col = hi;
            if (col == tileCol + count)
              break;
            const int64_t ix0 = 2 * col - s.padLeft;
            float d[4][4], transformed[16];
            for (int i = 0; i < 4; ++i)
              for (int j = 0; j < 4; ++j) {
                const int64_t iy = iy0 + i, ix = ix0 + j;
                d[i][j] = iy >= 0 && ix >= 0 && iy < s.inRows && ix < s.inCols
                              ? plane[iy * s.inCols + ix]
                              : 0.0f;
              }
            transformInputTile(d, transformed);
            storePositions(transformed, vc + (t - t0) + (col - tileCol), positionStride);
          }
        });
  }
}

// The 2x2 output tile A^T m A + bias of the products m.
template <typename T> inline void transformOutputTile(const T (&m)[16], float bias, T (&y)[2][2]) {
  T r[2][4]; // A^T m
  for (int j = 0; j < 4; ++j) {
    r[0][j] = m[j] + m[4 + j] + m[8 + j];
    r[1][j] = m[4 + j] - m[8 + j] - m[12 + j];
  }
  for (int i = 0; i < 2; ++i) {
    y[i][0] = r[i][0] + r[i][1] + r[i][2] + bias;
    y[i][1] = r[i][1] - r[i][2] - r[i][3] + bias;
  }
}

// What the output transform does to each output after the bias: adds the fused residual (if
// any) and clamps to [lo, hi] (Relu, Clip, or nothing) in the order of clipF32 and Relu, so
// NaN passes through as it does there. Other activations run over the finished output.
struct Finish {
  float lo, hi;
  template <typename T> T operator()(T value, const float *residual) const;
};
template <> inline float Finish::operator()(float value, const float *residual) const {
  if (residual)
    value += *residual;
  value = value < lo ? lo : value;
  return value > hi ? hi : value;
}
template <> inline Lanes Finish::operator()(Lanes value, const float *residual) const {
  if (residual)
    value += loadLanes(residual);
  value = value < lo ? lo : value;
  return value > hi ? hi : value;
}

// Writes `count` whole output tiles of one tile row: tile q's rows start at origin + 2 * q
// (and its residual's at residual + 2 * q).
void transformWholeTiles(const float *__restrict m, int64_t stride, int64_t count, float bias,
                         const Finish &finish, const float *__restrict residual,
                         float *__restrict origin, int64_t outCols) {
  auto at = [&](const float *row, int64_t offset) { return row ? row + offset : nullptr; };
  int64_t q = 0;
  for (; q + kLanes <= count; q += kLanes) {
    Lanes products[16], y[2][2];
    for (int pos = 0; pos < 16; ++pos)
      products[pos] = loadLanes(m + pos * stride + q);
    transformOutputTile(products, bias, y);
    // Tile q + l's two columns are output columns 2 (q + l) and 2 (q + l) + 1.
    for (int i = 0; i < 2; ++i) {
      const int64_t offset = i * outCols + 2 * q;
      storeLanes(origin + offset, finish(__builtin_shufflevector(y[i][0], y[i][1], 0, 4, 1, 5),
                                         at(residual, offset)));
      storeLanes(origin + offset + kLanes,
                 finish(__builtin_shufflevector(y[i][0], y[i][1], 2, 6, 3, 7),
                        at(residual, offset + kLanes)));
    }
  }
  for (; q < count; ++q) {
    float products[16], y[2][2];
    for (int pos = 0; pos < 16; ++pos)
      products[pos] = m[pos * stride + q];
    transformOutputTile(products, bias, y);
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 2; ++j) {
        const int64_t offset = i * outCols + 2 * q + j;
        origin[offset] = finish(y[i][j], at(residual, offset));
      }
  }
}

// y's 2x2 tiles t0..t1 from m[pos][k][t - t0], the products of output channel k.
void transformOutput(const Tiling &s, const float *m, int64_t t0, int64_t t1, const float *bias,
                     const Finish &finish, const float *residual, float *y) {
  const int64_t nt = t1 - t0, positionStride = s.outChannels * nt;
  const int64_t wholeCols = s.outCols / 2; // tile columns with both output columns
  for (int64_t k = 0; k < s.outChannels; ++k) {
    const float b = bias ? bias[k] : 0.0f;
    const float *mk = m + k * nt;
    forEachTileRun(s, t0, t1,
                   [&](int64_t t, int64_t n, int64_t tileRow, int64_t tileCol, int64_t count) {
                     const int64_t planeOffset = (n * s.outChannels + k) * s.outPlane();
                     float *plane = y + planeOffset;
                     const float *residualPlane = residual ? residual + planeOffset : nullptr;
                     const int64_t oy0 = 2 * tileRow;
                     int64_t whole = 0;
                     if (oy0 + 2 <= s.outRows) {
                       whole = std::clamp<int64_t>(wholeCols - tileCol, 0, count);
                       const int64_t origin = oy0 * s.outCols + 2 * tileCol;
                       transformWholeTiles(mk + (t - t0), positionStride, whole, b, finish,
                                           residualPlane ? residualPlane + origin : nullptr,
                                           plane + origin, s.outCols);
                     }
                     for (int64_t q = whole; q < count; ++q) {
                       float products[16], tile[2][2];
                       for (int pos = 0; pos < 16; ++pos)
                         products[pos] = mk[pos * positionStride + (t - t0) + q];
                       transformOutputTile(products, b, tile);
                       const int64_t ox0 = 2 * (tileCol + q);
                       for (int i = 0; i < 2 && oy0 + i < s.outRows; ++i)
                         for (int j = 0; j < 2 && ox0 + j < s.outCols; ++j) {
                           const int64_t offset = (oy0 + i) * s.outCols + ox0 + j;
                           plane[offset] =
                               finish(tile[i][j], residualPlane ? residualPlane + offset : nullptr);
                         }
                     }
                   });
  }
}

int64_t positionFloats(const ConvParams &p) {
  return int64_t(packedGemmABytes(p.outChannels, p.window.channels) / sizeof(float));
}

} // namespace

bool winogradApplies(const ConvParams &p) {
  const WindowParams &w = p.window;
  return p.groups == 1 && isPlanar(w) && w.kernel[1] == 3 && w.kernel[2] == 3 && w.stride[1] == 1 &&
         w.stride[2] == 1 && w.dilation[1] == 1 && w.dilation[2] == 1 &&
         w.channels >= kMinChannels && p.outChannels >= kMinChannels &&
         Tiling(p).tiles >= kMinTiles;
}

size_t winogradWeightBytes(const ConvParams &p) {
  return size_t(kPositions * positionFloats(p)) * sizeof(float);
}

void packWinogradWeights(const ConvParams &p, const float *w, float *packed) {
  const int64_t outChannels = p.outChannels, channels = p.window.channels;
  const int64_t matrix = outChannels * channels;
  std::vector<float> u(size_t(kPositions * matrix));
  for (int64_t k = 0; k < outChannels; ++k) {
    for (int64_t c = 0; c < channels; ++c) {
      const float *g = w + (k * channels + c) * 9;
      float r[4][3]; // G g
      for (int j = 0; j < 3; ++j) {
        r[0][j] = g[j];
        r[1][j] = 0.5f * (g[j] + g[3 + j] + g[6 + j]);
        r[2][j] = 0.5f * (g[j] - g[3 + j] + g[6 + j]);
        r[3][j] = g[6 + j];
      }
      float *out = u.data() + k * channels + c;
      for (int i = 0; i < 4; ++i) { // (G g) G^T
        out[(4 * i + 0) * matrix] = r[i][0];
        out[(4 * i + 1) * matrix] = 0.5f * (r[i][0] + r[i][1] + r[i][2]);
        out[(4 * i + 2) * matrix] = 0.5f * (r[i][0] - r[i][1] + r[i][2]);
        out[(4 * i + 3) * matrix] = r[i][2];
      }
    }
  }
  for (int64_t pos = 0; pos < kPositions; ++pos)
    packGemmA(false, outChannels, channels, u.data() + pos * matrix, channels,
              packed + pos * positionFloats(p));
}

size_t winogradWorkspaceBytes(const ConvParams &p) {
  const Tiling s(p);
  return size_t(s.chunk * kPositions * (s.channels + s.outChannels)) * sizeof(float);
}

void winogradConvF32(const ConvParams &p, const float *x, const float *packed, const float *bias,
                     const float *residual, float *y, float *workspace) {
  const Tiling s(p);
  const float infinity = std::numeric_limits<float>::infinity();
  Finish finish{-infinity, infinity};
  const Activation activation = p.epilogue.activation;
  if (activation == Activation::Relu)
    finish.lo = 0.0f;
  else if (activation == Activation::Clip)
    finish = {p.epilogue.min, p.epilogue.max};
  const int64_t uFloats = positionFloats(p);

  // Tiles [t0, t1), their matrices in `block`.
  auto convolveTiles = [&](int64_t t0, int64_t t1, float *block) {
    const int64_t nt = t1 - t0;
    float *v = block, *m = block + kPositions * s.channels * nt;
    transformInput(s, x, t0, t1, v);
    // (Inside a part of the split by tiles below, this loop runs on the part's thread.)
    parallelForWork(kPositions, s.outChannels * nt * s.channels, [&](int64_t first, int64_t end) {
      for (int64_t pos = first; pos < end; ++pos)
        sgemmPackedA(s.outChannels, nt, s.channels, 1.0f, packed + pos * uFloats, false,
                     v + pos * s.channels * nt, nt, 0.0f, m + pos * s.outChannels * nt, nt);
    });
    transformOutput(s, m, t0, t1, bias, finish, residual, y);
  };

  // Each thread takes a contiguous run of tiles and its own share of the workspace, in which
  // it convolves its tiles a few at a time, in equal pieces. The GEMMs compute every column
  // alike wherever a piece starts, so results do not depend on the thread count.
  const int64_t parts = std::clamp<int64_t>(
      std::min(s.tiles / kMinTilesPerPart, s.chunk / kMinTilesPerPart), 1, activeThreadCount());
  const int64_t partChunk = s.chunk / parts;
  const int64_t partFloats = partChunk * kPositions * (s.channels + s.outChannels);
  parallelFor(parts, 1, [&](int64_t begin, int64_t end) {
    for (int64_t part = begin; part < end; ++part) {
      const int64_t first = s.tiles * part / parts, last = s.tiles * (part + 1) / parts;
      const int64_t pieces = (last - first + partChunk - 1) / partChunk;
      for (int64_t piece = 0; piece < pieces; ++piece)
        convolveTiles(first + (last - first) * piece / pieces,
                      first + (last - first) * (piece + 1) / pieces, workspace + part * partFloats);
    }
  });
  if (activation != Activation::None && activation != Activation::Relu &&
      activation != Activation::Clip)
    parallelFor(p.window.batch * s.outChannels, 1, [&](int64_t begin, int64_t end) {
      applyEpilogue(p.epilogue, y + begin * s.outPlane(), (end - begin) * s.outPlane());
    });
}

} // namespace rt
} // namespace dlc
