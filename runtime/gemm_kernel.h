// The blocked GEMM written once over a vector type: each instruction-set translation unit
// (gemm.cpp, isa_avx2.cpp, isa_avx512.cpp) selects its target, defines its vector traits V
// and includes this file. Everything has internal linkage, so the linker can never merge a
// wide-target copy of a function into code that runs on a narrower CPU.
//
// V provides: Vec, kLanes (floats per Vec), kRows (rows of the register tile), zero(),
// load(p), store(p, v) (unaligned), broadcast(x) and fma(a, b, c) = a * b + c; for the
// depthwise kernels also loadPartial(p, n) / storePartial(p, v, n) (the first n lanes, the
// others neither read nor written) and max(a, b) = a > b ? a : b, min(a, b) = a < b ? a : b;
// for max pooling (pool_kernel.h) maxOrNan(kept, v): v where v > kept or v is NaN, else kept.
#ifndef DLC_RUNTIME_GEMM_KERNEL_H
#define DLC_RUNTIME_GEMM_KERNEL_H

#include "gemm.h"
#include "shares.h"
#include "transpose_quad.h"

namespace dlc {
namespace rt {
namespace {

inline int64_t smaller(int64_t a, int64_t b) { return a < b ? a : b; }

inline bool hasEpilogue(const GemmEpilogue &e) {
  return e.rowBias || e.columnBias || e.residual || e.clamp;
}
// The epilogue of the part of C from (row, column) on.
inline GemmEpilogue epilogueFrom(const GemmEpilogue &e, int64_t row, int64_t column) {
  GemmEpilogue part = e;
  if (e.rowBias)
    part.rowBias += row;
  if (e.columnBias)
    part.columnBias += column;
  if (e.residual)
    part.residual += row * e.ldr + column;
  return part;
}
// Element (i, j) finished; the clamp is scalar::clampValue (not included here: its inline
// definition compiled for a wide target could be linked into every caller).
inline float finishElement(const GemmEpilogue &e, float v, int64_t i, int64_t j) {
  if (e.rowBias)
    v += e.rowBias[i];
  if (e.columnBias)
    v += e.columnBias[j];
  if (e.residual)
    v += e.residual[i * e.ldr + j];
  if (e.clamp) {
    v = v < e.lo ? e.lo : v;
    v = v > e.hi ? e.hi : v;
  }
  return v;
}

template <class V> struct BlockedGemm {
  using Vec = typename V::Vec;
  // The register tile is kMR rows by two vectors: kMR * 2 accumulators, two B vectors and one
  // broadcast A value fill the register file (15 of 16, or 27 of 32 with AVX-512).
  static constexpr int64_t kMR = V::kRows;
  static constexpr int64_t kNR = 2 * V::kLanes;
  // Shorter tiles for a last block of few rows: m = 8 takes one 8-row tile on AVX-512 rather
  // than a 12-row one a third padding (the MLP's batch), and one 6-row and one 4-row on AVX2.
  static constexpr int64_t kSmallRows = 4, kMidRows = 8;
  // A kKC x kNR panel of B stays in L1 while the ir loop walks the kMC x kKC block of A (in
  // L2); the packed kKC x kNC block of B is reused by every block of A. The buffers live on
  // the stack (at most 224 KiB) because kernels do not allocate.
  static constexpr int64_t kKC = kMaxBlockDepth;
  static constexpr int64_t kMC = kGemmRowBlock;
  static_assert(kMC % kMR == 0, "row blocks are whole tiles");
  static constexpr int64_t kNC = 128;
  static_assert(kNC % kNR == 0, "column blocks are whole panels");
  static_assert(kPackRows % kMR == 0 && kPackCols % kNR == 0,
                "tiles divide the ahead-of-time packed panels");
  // A network's weights outgrow the caches (ResNet-50's 100 MB), so an A packed ahead of time
  // streams from memory, each panel met by one or two column tiles of a small map, and the
  // hardware prefetcher alone left the tiles waiting on it (ResNet-50's 7x7 1x1 convs took
  // 1.3x their time with the weights in cache). The kernel asks for A's data this many floats
  // ahead: about 85 k steps of a 12-row panel; the next panel follows in the packed layout.
  // Measured on one thread, ResNet-50's convs: 8% faster on Zen 5 (its 14x14 3x3 convs 23%),
  // 10% on Sapphire Rapids, 9% through the AVX2 kernels; 512 or 2048 floats ahead gained less.
  // A packed at run time is in cache, where the extra load only slowed BERT.
  static constexpr int64_t kPrefetchAhead = 1024;
  // What a tile asks the memory for besides its own operands (see microTile).
  enum class Prefetch { None, AheadInA, NextPanelOfB };
  // C at most this wide reads A in place (readsRowsOfA). One thread, weights (B) packed,
  // against packing A: ConvNeXt-T's 3136x96x384 product 25% faster with AVX-512 (16% with
  // AVX2), 784x192x768 15% (11%); from 384 columns on no gain, from 768 a few % slower.
  static constexpr int64_t kRowsOfAMaxColumns = 256;

  // Rows [i0, i0+mc) x columns [p0, p0+kc) of op(A) as kMR-row panels, each stored column by
  // column; rows past mc are zero so the micro-kernel never sees a ragged edge.
  static void packA(const GemmArgs &g, int64_t i0, int64_t p0, int64_t mc, int64_t kc,
                    float *dst) {
    for (int64_t ir = 0; ir < mc; ir += kMR, dst += kMR * kc) {
      const int64_t mr = smaller(kMR, mc - ir);
      if (g.transA) {
        for (int64_t p = 0; p < kc; ++p) {
          const float *src = g.a + (p0 + p) * g.lda + i0 + ir;
          const float scale = g.scaleA ? g.scaleA[p0 + p] : 1.0f;
          for (int64_t i = 0; i < kMR; ++i)
            dst[p * kMR + i] = i < mr ? (g.scaleA ? src[i] * scale : src[i]) : 0.0f;
        }
        continue;
      }
      // Whole groups of four rows by register transposes, four k steps at a time; the
      // element loops below take the rest. (A scaled A packed element by element took a
      // fifth of EfficientNet's squeeze-and-excitation projections.)
      int64_t i = 0;
      for (; i + 4 <= mr; i += 4)
        packFourRows(g.a + (i0 + ir + i) * g.lda + p0, g.lda, kc, dst + i, kMR,
                     g.scaleA ? g.scaleA + p0 : nullptr);
      for (; i < kMR; ++i) {
        const float *src = g.a + (i0 + ir + i) * g.lda + p0;
        if (i >= mr)
          for (int64_t p = 0; p < kc; ++p)
            dst[p * kMR + i] = 0.0f;
        else if (g.scaleA)
          for (int64_t p = 0; p < kc; ++p)
            dst[p * kMR + i] = src[p] * g.scaleA[p0 + p];
        else
          for (int64_t p = 0; p < kc; ++p)
            dst[p * kMR + i] = src[p];
      }
    }
  }

  // Rows [p0, p0+kc) x columns [j0, j0+nc) of op(B) as kNR-column panels, each stored row by
  // row and zero-padded to kNR columns.
  static void packB(const GemmArgs &g, int64_t p0, int64_t j0, int64_t kc, int64_t nc,
                    float *dst) {
    for (int64_t jr = 0; jr < nc; jr += kNR, dst += kNR * kc) {
      const int64_t nr = smaller(kNR, nc - jr);
      if (g.transB) {
        for (int64_t j = 0; j < kNR; ++j) {
          const float *src = g.b + (j0 + jr + j) * g.ldb + p0;
          for (int64_t p = 0; p < kc; ++p)
            dst[p * kNR + j] = j < nr ? src[p] : 0.0f;
        }
      } else if (nr == kNR) {
        for (int64_t p = 0; p < kc; ++p) {
          const float *src = g.b + (p0 + p) * g.ldb + j0 + jr;
          Vec low = V::load(src), high = V::load(src + V::kLanes);
          if (g.scaleB) {
            const Vec scale = V::broadcast(g.scaleB[p0 + p]);
            low = low * scale;
            high = high * scale;
          }
          V::store(dst + p * kNR, low);
          V::store(dst + p * kNR + V::kLanes, high);
        }
      } else {
        for (int64_t p = 0; p < kc; ++p) {
          const float *src = g.b + (p0 + p) * g.ldb + j0 + jr;
          const float scale = g.scaleB ? g.scaleB[p0 + p] : 1.0f;
          for (int64_t j = 0; j < kNR; ++j)
            dst[p * kNR + j] = j < nr ? (g.scaleB ? src[j] * scale : src[j]) : 0.0f;
        }
      }
    }
  }

  // C tile (mr x nr at c) = alpha * A panel * B panel + beta * C tile, the panels' k steps
  // aStep and bStep floats apart. The accumulators stay in registers for all kc steps (the
  // fixed-size loops unroll fully); beta == 0 never reads C, which may be uninitialised.
  // R is kMR, or a shorter tile's rows (tileFor). Not inlined, and alpha and beta read
  // through a pointer after the loop: a float live across the loop takes a vector register and
  // GCC then spills a B vector instead.
  // Half h (kLanes columns) of row i of a full tile, finished as finishElement does: the
  // same operations in the same order (V::max and V::min return their second operand for a
  // NaN, as the scalar comparisons do).
  static Vec finishVector(const GemmEpilogue &e, Vec v, int64_t i, int64_t h) {
    if (e.rowBias)
      v = v + V::broadcast(e.rowBias[i]);
    if (e.columnBias)
      v = v + V::load(e.columnBias + h * V::kLanes);
    if (e.residual)
      v = v + V::load(e.residual + i * e.ldr + h * V::kLanes);
    if (e.clamp)
      v = V::min(V::broadcast(e.hi), V::max(V::broadcast(e.lo), v));
    return v;
  }

  // finishVector for the first `lanes` lanes of half h (the others are not read).
  static Vec finishPartialVector(const GemmEpilogue &e, Vec v, int64_t i, int64_t h,
                                 int64_t lanes) {
    if (e.rowBias)
      v = v + V::broadcast(e.rowBias[i]);
    if (e.columnBias)
      v = v + V::loadPartial(e.columnBias + h * V::kLanes, lanes);
    if (e.residual)
      v = v + V::loadPartial(e.residual + i * e.ldr + h * V::kLanes, lanes);
    if (e.clamp)
      v = V::min(V::broadcast(e.hi), V::max(V::broadcast(e.lo), v));
    return v;
  }

  // `epilogue` (or null: none) is the tile's part of the product's, applied once the tile
  // holds its last k block's sums. Prefetch::AheadInA: A is packed ahead of time (a layer's
  // weights), and read from memory rather than cache (see kPrefetchAhead).
  // Prefetch::NextPanelOfB: B is packed ahead of time and the tiles of a panel bring the next
  // packed panel (kPackCols wide: the next column tile's, or with narrower tiles the next
  // few's) into L2, each tile a slice of its k rows: from nextB, one row (kPackCols floats, the
  // panel's rows are contiguous) every `prefetchEvery` k steps.
  // Weights outgrow the caches (BERT-base's 340 MB), and that panel's first tile would wait
  // on memory at each k step (the panel's other tiles read it from L1): the hardware
  // prefetcher alone did not hide it. One thread, weights from memory (bench/gemm.py --cold):
  // BERT-base's 128x3072x768 product 111 -> 138 GFLOP/s, 128x768x3072 and DeiT-S's
  // 197x1536x384 5-12% faster; with the weights in cache no change. The first tile alone
  // bringing the whole next panel asked for two lines every k step, more misses than a core
  // keeps in flight: spread over the panel's tiles, the same products ran another 5-20%
  // faster (128x3072x768 138 -> 155 GFLOP/s; AVX2 2-7%), and one thread of HF BERT-base on
  // 128 tokens 16%, GPT-2 10%. RowsOfA: A is read where it lies, the tile's row i at
  // a + i * lda and its k steps aStep = 1 apart, not from a panel.
  template <int64_t R, int64_t Halves, Prefetch Ahead, bool RowsOfA>
  __attribute__((noinline)) static void microTile(int64_t kc, const float *__restrict a,
                                                  int64_t aStep, int64_t lda,
                                                  const float *__restrict b, int64_t bStep,
                                                  float *c, int64_t ldc, int64_t mr, int64_t nr,
                                                  const float *alphaBeta,
                                                  const GemmEpilogue *epilogue,
                                                  const float *nextB, int64_t prefetchEvery) {
    Vec acc[R][Halves];
#pragma GCC unroll 16
    for (int64_t i = 0; i < R; ++i)
#pragma GCC unroll 2
      for (int64_t h = 0; h < Halves; ++h)
        acc[i][h] = V::zero();
    int64_t countdown = 1;
#pragma GCC unroll 4
    for (int64_t p = 0; p < kc; ++p, a += aStep, b += bStep) {
      if constexpr (Ahead == Prefetch::AheadInA)
        __builtin_prefetch(a + kPrefetchAhead);
      if constexpr (Ahead == Prefetch::NextPanelOfB)
        if (--countdown == 0) {
          countdown = prefetchEvery;
          for (int64_t line = 0; line < kPackCols; line += kFloatsPerLine)
            __builtin_prefetch(nextB + line, 0, 2);
          nextB += kPackCols;
        }
      Vec bh[Halves];
#pragma GCC unroll 2
      for (int64_t h = 0; h < Halves; ++h)
        bh[h] = V::load(b + h * V::kLanes);
#pragma GCC unroll 16
      for (int64_t i = 0; i < R; ++i) {
        const Vec ai = V::broadcast(RowsOfA ? a[i * lda] : a[i]);
#pragma GCC unroll 2
        for (int64_t h = 0; h < Halves; ++h)
          acc[i][h] = V::fma(ai, bh[h], acc[i][h]);
      }
    }
    const float alpha = alphaBeta[0], beta = alphaBeta[1];
    const Vec alphaV = V::broadcast(alpha), betaV = V::broadcast(beta);
    if (mr == R && nr == Halves * V::kLanes) {
#pragma GCC unroll 16
      for (int64_t i = 0; i < R; ++i) {
        float *row = c + i * ldc;
#pragma GCC unroll 2
        for (int64_t h = 0; h < Halves; ++h) {
          Vec v = acc[i][h] * alphaV;
          if (beta != 0.0f)
            v = V::fma(betaV, V::load(row + h * V::kLanes), v);
          if (epilogue)
            v = finishVector(*epilogue, v, i, h);
          V::store(row + h * V::kLanes, v);
        }
      }
      return;
    }
    // An edge tile: only the rows and columns that exist are read and written, with partial
    // vectors (the same operations as a full tile, lane by lane).
#pragma GCC unroll 16
    for (int64_t i = 0; i < R; ++i) {
      if (i >= mr)
        break;
      float *row = c + i * ldc;
#pragma GCC unroll 2
      for (int64_t h = 0; h < Halves; ++h) {
        const int64_t lanes = smaller(V::kLanes, nr - h * V::kLanes);
        if (lanes <= 0)
          break;
        Vec v = acc[i][h] * alphaV;
        if (beta != 0.0f)
          v = V::fma(betaV, V::loadPartial(row + h * V::kLanes, lanes), v);
        if (epilogue)
          v = finishPartialVector(*epilogue, v, i, h, lanes);
        V::storePartial(row + h * V::kLanes, v, lanes);
      }
    }
  }

  // The shortest register tile that holds mr rows, and the narrowest that holds nr columns:
  // a product's last panel of a few columns (196 positions of a 14x14 map are six panels and
  // 4 columns; 112 output channels three and 16) computed one vector wide, not two.
  using MicroTile = void (*)(int64_t, const float *, int64_t, int64_t, const float *, int64_t,
                             float *, int64_t, int64_t, int64_t, const float *,
                             const GemmEpilogue *, const float *, int64_t);
  template <int64_t Halves, Prefetch Ahead> static MicroTile tileFor(int64_t mr) {
    if (kMR > kSmallRows && mr <= kSmallRows)
      return microTile<kSmallRows, Halves, Ahead, false>;
    if constexpr (kMR > kMidRows)
      if (mr <= kMidRows)
        return microTile<kMidRows, Halves, Ahead, false>;
    return microTile<kMR, Halves, Ahead, false>;
  }
  template <Prefetch Ahead> static MicroTile tileFor(int64_t mr, int64_t nr) {
    return nr <= V::kLanes ? tileFor<1, Ahead>(mr) : tileFor<2, Ahead>(mr);
  }
  static MicroTile tileFor(int64_t mr, int64_t nr, Prefetch ahead) {
    switch (ahead) {
    case Prefetch::AheadInA:
      return tileFor<Prefetch::AheadInA>(mr, nr);
    case Prefetch::NextPanelOfB:
      return tileFor<Prefetch::NextPanelOfB>(mr, nr);
    case Prefetch::None:
      break;
    }
    return tileFor<Prefetch::None>(mr, nr);
  }

  // Whether the row tiles read A where it lies instead of packing it: a packing pass costs a
  // gather per element, which few column tiles (a narrow C) do not repay. Only whole kMR-row
  // tiles do (a shorter tile's rows past the edge do not exist); the last rows are packed.
  static bool readsRowsOfA(const GemmArgs &g) {
    return !g.packedA.data && !g.transA && !g.scaleA && g.n <= kRowsOfAMaxColumns;
  }

  // The first float of the tile panel at row (or column) `first` of a packed operand's
  // k block starting at pc, `width` being its panel width.
  static const float *packedPanel(const PackedOperand &op, int64_t width, int64_t pc, int64_t kc,
                                  int64_t first) {
    return op.data + pc * op.padded + first / width * width * kc + first % width;
  }

  // The register tiles of C rows [ic, ic+mc) x columns [jc, jc+nc) over k block [pc, pc+kc),
  // reading A and B from their packed operands or from the block buffers.
  static void tiles(const GemmArgs &g, int64_t pc, int64_t kc, int64_t ic, int64_t mc, int64_t jc,
                    int64_t nc, const float *bufferA, const float *bufferB) {
    const bool rowsOfA = readsRowsOfA(g);
    // Later k blocks accumulate onto what the first one stored; the last one finishes.
    const float alphaBeta[2] = {g.alpha, pc == 0 ? g.beta : 1.0f};
    const bool finishes = pc + kc >= g.k && hasEpilogue(g.epilogue);
    for (int64_t jr = 0; jr < nc; jr += kNR) {
      const float *b = g.packedB.data
                           ? packedPanel(g.packedB, kPackCols, pc, kc, g.packedB.first + jc + jr)
                           : bufferB + jr * kc;
      const int64_t bStep = g.packedB.data ? kPackCols : kNR;
      // The tiles of each packed panel of weights prefetch the next one (microTile), a slice
      // of its kc rows each.
      const int64_t column = g.packedB.first + jc + jr;
      const float *nextB = g.packedB.data && column % kPackCols == 0 && jc + jr + kPackCols < g.n
                               ? packedPanel(g.packedB, kPackCols, pc, kc, column + kPackCols)
                               : nullptr;
      const int64_t tileCount = (mc + kMR - 1) / kMR;
      for (int64_t ir = 0; ir < mc; ir += kMR) {
        const int64_t mr = smaller(kMR, mc - ir), tile = ir / kMR;
        const int64_t sliceFirst = kc * tile / tileCount;
        const int64_t sliceRows = kc * (tile + 1) / tileCount - sliceFirst;
        const bool inPlace = rowsOfA && mr == kMR;
        const float *a = g.packedA.data
                             ? packedPanel(g.packedA, kPackRows, pc, kc, g.packedA.first + ic + ir)
                         : inPlace ? g.a + (ic + ir) * g.lda + pc
                         : rowsOfA ? bufferA
                                   : bufferA + ir * kc;
        const int64_t aStep = g.packedA.data ? kPackRows : inPlace ? 1 : kMR;
        const GemmEpilogue tileEpilogue =
            finishes ? epilogueFrom(g.epilogue, ic + ir, jc + jr) : GemmEpilogue{};
        const Prefetch ahead = g.packedA.data           ? Prefetch::AheadInA
                               : nextB && sliceRows > 0 ? Prefetch::NextPanelOfB
                                                        : Prefetch::None;
        const int64_t nr = smaller(kNR, nc - jr);
        const MicroTile microTileOf =
            !inPlace ? tileFor(mr, nr, ahead)
            : ahead == Prefetch::NextPanelOfB ? microTile<kMR, 2, Prefetch::NextPanelOfB, true>
                                              : microTile<kMR, 2, Prefetch::None, true>;
        microTileOf(kc, a, aStep, g.lda, b, bStep, g.c + (ic + ir) * g.ldc + jc + jr, g.ldc, mr,
                    nr, alphaBeta, finishes ? &tileEpilogue : nullptr,
                    nextB ? nextB + sliceFirst * kPackCols : nullptr,
                    sliceRows > 0 ? kc / sliceRows : 0);
      }
    }
  }

  // One row of A times packed B (a classifier head on one image): a register tile would be
  // one useful row in kSmallRows, each k step waiting on the last. Per kNR columns, the k steps
  // go round four partial sums, added pairwise at the end: a summation order of its own, the
  // same on any thread split (parts are whole columns).
  static void rowTimesPackedB(const GemmArgs &g) {
    constexpr int64_t kChains = 4;
    const int64_t depth = gemmBlockDepth(g.k);
    const Vec alphaV = V::broadcast(g.alpha), betaV = V::broadcast(g.beta);
    for (int64_t jc = 0; jc < g.n; jc += kNR) {
      Vec acc[kChains][2];
      for (int64_t chain = 0; chain < kChains; ++chain)
        acc[chain][0] = acc[chain][1] = V::zero();
      for (int64_t pc = 0; pc < g.k; pc += depth) {
        const int64_t kc = smaller(depth, g.k - pc);
        const float *b = packedPanel(g.packedB, kPackCols, pc, kc, g.packedB.first + jc);
        auto step = [&](Vec(&chain)[2], int64_t p) {
          const int64_t at = pc + p;
          const float value = g.transA ? g.a[at * g.lda] : g.a[at];
          const Vec a = V::broadcast(g.scaleA ? value * g.scaleA[at] : value);
          chain[0] = V::fma(a, V::load(b + p * kPackCols), chain[0]);
          chain[1] = V::fma(a, V::load(b + p * kPackCols + V::kLanes), chain[1]);
        };
        int64_t p = 0;
        for (; p + kChains <= kc; p += kChains)
          for (int64_t chain = 0; chain < kChains; ++chain)
            step(acc[chain], p + chain);
        for (; p < kc; ++p)
          step(acc[0], p);
      }
      const int64_t nr = smaller(kNR, g.n - jc);
      const GemmEpilogue epilogue = epilogueFrom(g.epilogue, 0, jc);
      alignas(64) float tile[kNR];
      for (int64_t h = 0; h < 2; ++h) {
        Vec v = ((acc[0][h] + acc[1][h]) + (acc[2][h] + acc[3][h])) * alphaV;
        if (nr == kNR) {
          float *c = g.c + jc + h * V::kLanes;
          if (g.beta != 0.0f)
            v = V::fma(betaV, V::load(c), v);
          V::store(c, hasEpilogue(epilogue) ? finishVector(epilogue, v, 0, h) : v);
        } else {
          V::store(tile + h * V::kLanes, v);
        }
      }
      if (nr == kNR)
        continue;
      for (int64_t j = 0; j < nr; ++j) {
        float v = g.beta == 0.0f ? tile[j] : tile[j] + g.beta * g.c[jc + j];
        g.c[jc + j] = hasEpilogue(epilogue) ? finishElement(epilogue, v, 0, j) : v;
      }
    }
  }

  static void run(const GemmArgs &g) {
    if (g.m == 1 && g.packedB.data && !g.packedA.data)
      return rowTimesPackedB(g);
    alignas(64) float bufferA[kMC * kKC];
    alignas(64) float bufferB[kKC * kNC];
    const int64_t depth = gemmBlockDepth(g.k);
    if (g.packedA.data) {
      // Nothing of A to pack: each block of B is packed once and meets every block of A.
      for (int64_t jc = 0; jc < g.n; jc += kNC) {
        const int64_t nc = smaller(kNC, g.n - jc);
        for (int64_t pc = 0; pc < g.k; pc += depth) {
          const int64_t kc = smaller(depth, g.k - pc);
          if (!g.packedB.data)
            packB(g, pc, jc, kc, nc, bufferB);
          for (int64_t ic = 0; ic < g.m; ic += kMC)
            tiles(g, pc, kc, ic, smaller(kMC, g.m - ic), jc, nc, nullptr,
                  g.packedB.data ? nullptr : bufferB);
        }
      }
      return;
    }
    // Each block of A is packed once (4x4 register transposes when A is not transposed), or read
    // in place (readsRowsOfA), and meets every block of B, which packs with plain vector copies.
    // Rows in near-equal blocks starting at whole tiles: a short last block would stream
    // every panel of B for a few rows (101 as 96 + 5 took 10% longer). Boundaries rounded up
    // to a tile are at most kMC apart, since m / rowBlocks <= kMC.
    const int64_t rowBlocks = (g.m + kMC - 1) / kMC;
    auto rowBoundary = [&](int64_t block) { return shareStart(g.m, rowBlocks, block, kMR); };
    for (int64_t pc = 0; pc < g.k; pc += depth) {
      const int64_t kc = smaller(depth, g.k - pc);
      for (int64_t block = 0; block < rowBlocks; ++block) {
        const int64_t ic = rowBoundary(block), mc = rowBoundary(block + 1) - ic;
        if (!readsRowsOfA(g))
          packA(g, ic, pc, mc, kc, bufferA);
        else if (mc % kMR)
          packA(g, ic + mc / kMR * kMR, pc, mc % kMR, kc, bufferA);
        for (int64_t jc = 0; jc < g.n; jc += kNC) {
          const int64_t nc = smaller(kNC, g.n - jc);
          if (!g.packedB.data)
            packB(g, pc, jc, kc, nc, bufferB);
          tiles(g, pc, kc, ic, mc, jc, nc, bufferA, g.packedB.data ? nullptr : bufferB);
        }
      }
    }
  }
};

} // namespace
} // namespace rt
} // namespace dlc

#endif
