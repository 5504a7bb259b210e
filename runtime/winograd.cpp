#include "winograd.h"

#include "clamp.h"
#include "parallel.h"
#include "window.h"
#include "winograd_kernel.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <vector>

namespace dlc {
namespace rt {

namespace {

// Fewer tiles than this per thread make GEMMs too narrow to fill the kernels' register tiles;
// such convolutions split the positions' GEMMs over the threads instead.
constexpr int64_t kMinTilesPerPart = 32;

// Convolutions with fewer channels than this spend more on the transforms than they save, and
// with fewer tiles than the widest kernel's register tile (32 columns) they leave much of
// every GEMM tile empty (ResNet's 7x7 maps: 16 tiles of 2x2).
constexpr int64_t kMinChannels = 16, kMinTiles = 32;

// Without a limit of the caller's, pieces of tiles fill 4 MiB: the GEMMs are as wide as the
// pieces, and ResNet-18 ran 5% faster than with im2col's 1 MiB (its arena: 4.2 -> 6.6 MB).
constexpr int64_t kDefaultWorkspaceBytes = int64_t(4) << 20;

template <class F> struct Tiling {
  static constexpr int64_t kPositions = F::kTile * F::kTile;
  int64_t channels, outChannels, inRows, inCols, outRows, outCols, padTop, padLeft;
  int64_t tileCols, perImage, tiles;
  // Tiles transformed at once: their input and product matrices fill the workspace.
  int64_t chunk;

  explicit Tiling(const ConvParams &p)
      : channels(p.window.channels), outChannels(p.outChannels), inRows(p.window.in[1]),
        inCols(p.window.in[2]), outRows(p.window.out[1]), outCols(p.window.out[2]),
        padTop(p.window.padBegin[1]), padLeft(p.window.padBegin[2]),
        tileCols((outCols + F::kOut - 1) / F::kOut),
        perImage((outRows + F::kOut - 1) / F::kOut * tileCols), tiles(p.window.batch * perImage) {
    const int64_t tileBytes = kPositions * (channels + outChannels) * int64_t(sizeof(float));
    const int64_t limit = p.workspaceLimit > 0 ? p.workspaceLimit : kDefaultWorkspaceBytes;
    chunk = std::clamp<int64_t>(limit / tileBytes, 1, std::max<int64_t>(tiles, 1));
  }
  int64_t inPlane() const { return inRows * inCols; }
  int64_t outPlane() const { return outRows * outCols; }
};

// The tile size p takes: F(4x4) on maps at least kMinF4x4Columns wide (the shape alone
// decides: the compiler packs the weights for it), else F(2x2); either only with enough tiles
// to fill the GEMMs. Measured on one thread against F(2x2), AVX-512 and AVX2 alike: 28 to 40
// columns 20-30% faster (64-128 channels), although their 7 to 10 tiles a row fill AVX-512's
// 16 lanes too little (they transform 4 at a time there); 24 columns 5%.
enum class TileSize { None, F2x2, F4x4 };
constexpr int64_t kMinF4x4Columns = 24;
TileSize tileSizeOf(const ConvParams &p) {
  // Few channels: the transforms outweigh the saved products, and the padded planes win.
  if (!winogradShaped(p) || paddedPlanesApply(p))
    return TileSize::None;
  if (p.window.out[2] >= kMinF4x4Columns && Tiling<F4x4>(p).tiles >= kMinTiles)
    return TileSize::F4x4;
  return Tiling<F2x2>(p).tiles >= kMinTiles ? TileSize::F2x2 : TileSize::None;
}

// Calls run(t, n, tileRow, tileCol, count) for each run of tiles [t, t + count) in [t0, t1)
// that lies along one row of one image's tiles.
template <class F, typename Run>
void forEachTileRun(const Tiling<F> &s, int64_t t0, int64_t t1, Run run) {
  for (int64_t t = t0; t < t1;) {
    const int64_t n = t / s.perImage, tile = t % s.perImage;
    const int64_t tileRow = tile / s.tileCols, tileCol = tile % s.tileCols;
    const int64_t count = std::min(t1 - t, s.tileCols - tileCol);
    run(t, n, tileRow, tileCol, count);
    t += count;
  }
}

// v[pos][c][t - t0] = (B^T d B)[pos] for the input tile d of each channel c and tile t.
template <class F>
void transformInput(const Tiling<F> &s, const float *x, int64_t t0, int64_t t1, float *v) {
  const int64_t nt = t1 - t0, positionStride = s.channels * nt;
  parallelForWork(s.channels, nt * Tiling<F>::kPositions, [&](int64_t first, int64_t end) {
    for (int64_t c = first; c < end; ++c)
      forEachTileRun(
          s, t0, t1, [&](int64_t t, int64_t n, int64_t tileRow, int64_t tileCol, int64_t count) {
            winogradInput({F::kTile, x + (n * s.channels + c) * s.inPlane(), s.inRows, s.inCols,
                           F::kOut * tileRow - s.padTop, F::kOut * tileCol - s.padLeft, count,
                           v + c * nt + (t - t0), positionStride});
          });
  });
}

// y's tiles t0..t1 from m[pos][k][t - t0], the products of output channel k.
template <class F>
void transformOutput(const Tiling<F> &s, const float *m, int64_t t0, int64_t t1,
                     const float *bias, float lo, float hi, const float *residual, float *y) {
  const int64_t nt = t1 - t0, positionStride = s.outChannels * nt;
  parallelForWork(s.outChannels, nt * Tiling<F>::kPositions, [&](int64_t first, int64_t end) {
    for (int64_t k = first; k < end; ++k)
      forEachTileRun(
          s, t0, t1, [&](int64_t t, int64_t n, int64_t tileRow, int64_t tileCol, int64_t count) {
            const int64_t planeOffset = (n * s.outChannels + k) * s.outPlane();
            const int64_t oy0 = F::kOut * tileRow, ox0 = F::kOut * tileCol;
            const int64_t origin = planeOffset + oy0 * s.outCols + ox0;
            winogradOutput({F::kTile, m + k * nt + (t - t0), positionStride, count,
                            bias ? bias[k] : 0.0f, lo, hi, residual ? residual + origin : nullptr,
                            y + origin, s.outCols, std::min<int64_t>(F::kOut, s.outRows - oy0),
                            s.outCols - ox0});
          });
  });
}

int64_t positionFloats(const ConvParams &p) {
  return int64_t(packedGemmABytes(p.outChannels, p.window.channels) / sizeof(float));
}

template <class F> void packWeights(const ConvParams &p, const float *w, float *packed) {
  constexpr int kTile = F::kTile, kPositions = kTile * kTile;
  const int64_t outChannels = p.outChannels, channels = p.window.channels;
  const int64_t matrix = outChannels * channels;
  std::vector<float> u(size_t(kPositions * matrix));
  for (int64_t k = 0; k < outChannels; ++k) {
    for (int64_t c = 0; c < channels; ++c) {
      const float *g = w + (k * channels + c) * 9;
      double r[kTile][3]; // G g, column by column
      for (int j = 0; j < 3; ++j) {
        const double column[3] = {g[j], g[3 + j], g[6 + j]};
        double out[kTile];
        F::weights(column, out);
        for (int i = 0; i < kTile; ++i)
          r[i][j] = out[i];
      }
      float *out = u.data() + k * channels + c;
      for (int i = 0; i < kTile; ++i) { // (G g) G^T, row by row
        double transformed[kTile];
        F::weights(r[i], transformed);
        for (int j = 0; j < kTile; ++j)
          out[(kTile * i + j) * matrix] = float(transformed[j]);
      }
    }
  }
  for (int64_t pos = 0; pos < kPositions; ++pos)
    packGemmA(false, outChannels, channels, u.data() + pos * matrix, channels,
              packed + pos * positionFloats(p));
}

template <class F> size_t workspaceBytes(const ConvParams &p) {
  const Tiling<F> s(p);
  return size_t(s.chunk * Tiling<F>::kPositions * (s.channels + s.outChannels)) * sizeof(float);
}

template <class F>
void convolve(const ConvParams &p, const float *x, const float *packed, const float *bias,
              const float *residual, float *y, float *workspace) {
  constexpr int64_t kPositions = Tiling<F>::kPositions;
  const Tiling<F> s(p);
  const Activation activation = p.epilogue.activation;
  // A Relu or Clip clamps in the output transform; without one the clamp passes everything.
  float lo, hi;
  if (!epilogueClamp(p.epilogue, lo, hi)) {
    hi = std::numeric_limits<float>::infinity();
    lo = -hi;
  }
  const int64_t uFloats = positionFloats(p);

  // Tiles [t0, t1), their matrices in `block`.
  auto convolveTiles = [&](int64_t t0, int64_t t1, float *block) {
    const int64_t nt = t1 - t0;
    // The products first: the output transform reads whole vectors, up to 15 floats past
    // the last product, which land in this thread's (consumed) transformed input.
    float *m = block, *v = block + kPositions * s.outChannels * nt;
    transformInput(s, x, t0, t1, v);
    // Inside a part of the split by tiles below, this loop and the transforms' run on the
    // part's thread; where the tiles make one part, they take every thread.
    parallelForWork(kPositions, s.outChannels * nt * s.channels, [&](int64_t first, int64_t end) {
      for (int64_t pos = first; pos < end; ++pos)
        sgemmPackedA(s.outChannels, nt, s.channels, 1.0f, packed + pos * uFloats, false,
                     v + pos * s.channels * nt, nt, 0.0f, m + pos * s.outChannels * nt, nt);
    });
    transformOutput(s, m, t0, t1, bias, lo, hi, residual, y);
  };

  // The tiles go in equal pieces, each thread convolving one piece at a time in its own share
  // of the workspace and taking the next as it finishes (parallelForInSlots: a faster thread
  // convolves more). The GEMMs compute every column alike wherever a piece starts, so results
  // do not depend on the thread count.
  const int64_t workers = std::clamp<int64_t>(
      std::min(s.tiles / kMinTilesPerPart, s.chunk / kMinTilesPerPart), 1, activeThreadCount());
  const int64_t pieceTiles = s.chunk / workers;
  const int64_t pieces = (s.tiles + pieceTiles - 1) / pieceTiles;
  const int64_t slotFloats = pieceTiles * kPositions * (s.channels + s.outChannels);
  parallelForInSlots(
      pieces, workers, kPositions * s.outChannels * s.channels * pieceTiles,
      [&](int64_t slot, int64_t piece) {
        convolveTiles(s.tiles * piece / pieces, s.tiles * (piece + 1) / pieces,
                      workspace + slot * slotFloats);
      });
  if (activation != Activation::None && activation != Activation::Relu &&
      activation != Activation::Clip)
    parallelFor(p.window.batch * s.outChannels, 1, [&](int64_t begin, int64_t end) {
      applyEpilogue(p.epilogue, y + begin * s.outPlane(), (end - begin) * s.outPlane());
    });
}

} // namespace

bool winogradShaped(const ConvParams &p) {
  const WindowParams &w = p.window;
  return p.groups == 1 && isPlanar(w) && w.kernel[1] == 3 && w.kernel[2] == 3 &&
         w.stride[1] == 1 && w.stride[2] == 1 && w.dilation[1] == 1 && w.dilation[2] == 1 &&
         w.channels >= kMinChannels && p.outChannels >= kMinChannels;
}

bool winogradApplies(const ConvParams &p) { return tileSizeOf(p) != TileSize::None; }

int64_t winogradPositions(const ConvParams &p) {
  switch (tileSizeOf(p)) {
  case TileSize::F4x4:
    return Tiling<F4x4>::kPositions;
  case TileSize::F2x2:
    return Tiling<F2x2>::kPositions;
  case TileSize::None:
    break;
  }
  return 0;
}

size_t winogradWeightBytes(const ConvParams &p) {
  return size_t(winogradPositions(p) * positionFloats(p)) * sizeof(float);
}

void packWinogradWeights(const ConvParams &p, const float *w, float *packed) {
  if (tileSizeOf(p) == TileSize::F4x4)
    packWeights<F4x4>(p, w, packed);
  else
    packWeights<F2x2>(p, w, packed);
}

size_t winogradWorkspaceBytes(const ConvParams &p) {
  return tileSizeOf(p) == TileSize::F4x4 ? workspaceBytes<F4x4>(p) : workspaceBytes<F2x2>(p);
}

void winogradConvF32(const ConvParams &p, const float *x, const float *packed, const float *bias,
                     const float *residual, float *y, float *workspace) {
  if (tileSizeOf(p) == TileSize::F4x4)
    convolve<F4x4>(p, x, packed, bias, residual, y, workspace);
  else
    convolve<F2x2>(p, x, packed, bias, residual, y, workspace);
}

} // namespace rt
} // namespace dlc
