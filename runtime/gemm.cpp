// sgemm: the instruction set chosen once per process by CPUID, the work split over the
// calling model's threads, and the portable builds of the blocked kernel, of the depthwise
// row kernels, of the channels-last pointwise kernel, of planar max pooling and of the vector
// math.
#include "depthwise_kernel.h"
#include "gemm_kernel.h"
#include "parallel.h"
#include "planar_input_kernel.h"
#include "plane_conv_kernel.h"
#include "pointwise_kernel.h"
#include "pool_kernel.h"
#include "vector_math.h"
#include "winograd_kernel.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <utility>

namespace dlc {
namespace rt {

namespace {

// Four lanes and GCC's generic vectors: SSE2 on any x86-64 and plain code elsewhere. No fused
// multiply-add, which baseline x86-64 lacks.
struct Portable {
  typedef float Vec __attribute__((vector_size(16)));
  static constexpr int64_t kLanes = 4, kRows = 6;
  static Vec zero() { return Vec{0.0f, 0.0f, 0.0f, 0.0f}; }
  static Vec load(const float *p) {
    Vec v;
    std::memcpy(&v, p, sizeof v);
    return v;
  }
  static void store(float *p, Vec v) { std::memcpy(p, &v, sizeof v); }
  static Vec broadcast(float x) { return Vec{x, x, x, x}; }
  static Vec fma(Vec a, Vec b, Vec c) { return a * b + c; }
  static Vec loadPartial(const float *p, int64_t n) {
    Vec v = zero();
    std::memcpy(&v, p, sizeof(float) * n);
    return v;
  }
  static void storePartial(float *p, Vec v, int64_t n) { std::memcpy(p, &v, sizeof(float) * n); }
  // Lanes [first, first + n) of v to p[0, n), and p[0, n) into those lanes of `into`.
  static void storeLanes(float *p, Vec v, int64_t first, int64_t n) {
    std::memcpy(p, reinterpret_cast<const float *>(&v) + first, sizeof(float) * n);
  }
  static Vec loadLanes(Vec into, const float *p, int64_t first, int64_t n) {
    std::memcpy(reinterpret_cast<float *>(&into) + first, p, sizeof(float) * n);
    return into;
  }
  static Vec max(Vec a, Vec b) { return a > b ? a : b; }
  static Vec min(Vec a, Vec b) { return a < b ? a : b; }
  static Vec maxOrNan(Vec kept, Vec v) { return ((v > kept) | (v != v)) ? v : kept; }
  // Lanes 0, 2 of a then of b, and lanes 1, 3.
  static void deinterleave(Vec a, Vec b, Vec &even, Vec &odd) {
    even = __builtin_shufflevector(a, b, 0, 2, 4, 6);
    odd = __builtin_shufflevector(a, b, 1, 3, 5, 7);
  }
};

using BlockedFn = void (*)(const GemmArgs &);

// The kernels built for one instruction set.
struct IsaKernels {
  BlockedFn blocked;
  void (*depthwiseRow)(const DepthwiseRowArgs &);
  void (*depthwiseNhwcRow)(const DepthwiseNhwcRowArgs &);
  void (*planarInputRow)(const PlanarInputRowArgs &);
  void (*math)(MathFunction, const float *, float *, int64_t);
  void (*softmaxRows)(const float *, float *, int64_t, int64_t, bool, float *);
  void (*softmaxColumns)(const float *, float *, int64_t, int64_t, int64_t, bool);
  void (*pointwiseNhwc)(const PointwiseNhwcArgs &);
  void (*maxPoolPlanes)(const MaxPoolPlanesArgs &);
  void (*planeConv)(const PlaneConvArgs &);
  void (*planePhases)(const PlanePhasesArgs &);
  void (*winogradInput)(const WinogradInputArgs &);
  void (*winogradOutput)(const WinogradOutputArgs &);
  void (*layerNormRows)(const LayerNormRowsArgs &);
};

IsaKernels kernelsFor(CpuIsa isa) {
#if defined(__x86_64__)
  if (isa == CpuIsa::Avx512)
    return {sgemmBlockedAvx512, depthwiseRowAvx512, depthwiseNhwcRowAvx512,
            planarInputRowAvx512, mathAvx512, softmaxRowsAvx512, softmaxColumnsAvx512,
            pointwiseNhwcAvx512, maxPoolPlanesAvx512, planeConvAvx512,
            planePhasesAvx512, winogradInputAvx512, winogradOutputAvx512,
            layerNormRowsAvx512};
  if (isa == CpuIsa::Avx2)
    return {sgemmBlockedAvx2, depthwiseRowAvx2, depthwiseNhwcRowAvx2,
            planarInputRowAvx2, mathAvx2, softmaxRowsAvx2, softmaxColumnsAvx2,
            pointwiseNhwcAvx2, maxPoolPlanesAvx2, planeConvAvx2,
            planePhasesAvx2, winogradInputAvx2, winogradOutputAvx2,
            layerNormRowsAvx2};
#endif
  (void)isa;
  return {sgemmBlockedBaseline, depthwiseRowBaseline, depthwiseNhwcRowBaseline,
          planarInputRowBaseline, mathBaseline, softmaxRowsBaseline, softmaxColumnsBaseline,
          pointwiseNhwcBaseline, maxPoolPlanesBaseline, planeConvBaseline,
          planePhasesBaseline, winogradInputBaseline, winogradOutputBaseline,
          layerNormRowsBaseline};
}

// Eight independent partial sums break the add dependency chain.
float dot(const float *x, const float *y, int64_t k) {
  float partial[8] = {};
  int64_t p = 0;
  for (; p + 8 <= k; p += 8)
    for (int64_t l = 0; l < 8; ++l)
      partial[l] += x[p + l] * y[p + l];
  float sum = 0.0f;
  for (; p < k; ++p)
    sum += x[p] * y[p];
  for (int64_t l = 0; l < 8; ++l)
    sum += partial[l];
  return sum;
}

void scaleC(float *c, int64_t ldc, int64_t m, int64_t n, float beta) {
  for (int64_t i = 0; i < m; ++i) {
    float *row = c + i * ldc;
    if (beta == 0.0f)
      std::fill(row, row + n, 0.0f);
    else
      for (int64_t j = 0; j < n; ++j)
        row[j] *= beta;
  }
}

// y += s * x in fixed chunks of 8, which vectorise without a scalar epilogue per chunk.
void axpy(float s, const float *__restrict x, float *__restrict y, int64_t n) {
  int64_t j = 0;
  for (; j + 8 <= n; j += 8)
    for (int64_t l = 0; l < 8; ++l)
      y[j + l] += s * x[j + l];
  for (; j < n; ++j)
    y[j] += s * x[j];
}

// A few rows of C: dot products against B's rows (transposed B) or axpys of them, which
// stream B contiguously and multiply no padding.
void gemmFewRows(const GemmArgs &g) {
  for (int64_t i = 0; i < g.m; ++i) {
    float *row = g.c + i * g.ldc;
    if (g.transB) {
      for (int64_t j = 0; j < g.n; ++j) {
        const float *ai = g.a + (g.transA ? i : i * g.lda);
        float v = 0.0f;
        if (g.transA)
          for (int64_t p = 0; p < g.k; ++p)
            v += ai[p * g.lda] * g.b[j * g.ldb + p];
        else
          v = dot(ai, g.b + j * g.ldb, g.k);
        row[j] = g.beta == 0.0f ? g.alpha * v : g.alpha * v + g.beta * row[j];
      }
      continue;
    }
    scaleC(row, g.ldc, 1, g.n, g.beta);
    for (int64_t p = 0; p < g.k; ++p)
      axpy(g.alpha * (g.transA ? g.a[p * g.lda + i] : g.a[i * g.lda + p]), g.b + p * g.ldb, row,
           g.n);
  }
}

// A grid of rowParts x columnParts contiguous parts of C. Every element of C sees the same
// products in the same order whatever the split, so results do not depend on the thread
// count. Where more parts cost no extra packing, there are at least two per thread: the
// threads claim them as they finish (parallelRun), so a faster core takes more.
struct GemmSplit {
  const GemmArgs *whole;
  BlockedFn blocked;
  int rowParts, columnParts;
  // Parts start at multiples of every kernel's tile, so no part begins with an edge tile.
  static constexpr int64_t kColumnAlign = 32, kRowAlign = 12;
  static constexpr int kPartsPerThread = 2;
  // A column part narrower than this packs its rows of A for too few columns (DeiT-S's
  // 197x1536x384 10% slower in two parts of 192 than in one).
  static constexpr int64_t kMinPartColumns = 256;

  // Weights packed ahead of time (B) are split by rows until each part has at most one block
  // of rows, then by columns: a part of more rows walks its columns of the weights once per
  // block of rows, and each column part packs all of its rows of A. Two threads, weights from
  // memory: BERT-base's 128x3072x768 and 128x768x3072 17-20% faster by rows (each walking all
  // the weights, which the other then finds in L3) than by columns, Whisper-size 1500x1536x384
  // 20%; 64 rows 14% slower by rows. Row parts come in multiples of the thread count, so that
  // equally fast threads get equal shares. Weights packed ahead as A (convolutions) split
  // B's columns, which each part packs for itself. Otherwise one part per thread along the
  // longer dimension: any other split packs an operand twice.
  static GemmSplit of(const GemmArgs *g, BlockedFn blocked, int threads) {
    const int wanted = threads * kPartsPerThread;
    const int columnsFit = int(std::max<int64_t>(1, g->n / kMinPartColumns));
    if (g->packedB.data && !g->packedA.data) {
      const int64_t rowBlocks = (g->m + kGemmRowBlock - 1) / kGemmRowBlock;
      if (rowBlocks >= wanted)
        return {g, blocked, int((rowBlocks + threads - 1) / threads * threads), 1};
      int rows = int(std::min<int64_t>(threads, rowBlocks));
      while (threads % rows)
        --rows;
      const int columns = threads / rows;
      return {g, blocked, rows,
              std::max(columns, std::min(wanted / rows, columnsFit) / columns * columns)};
    }
    if (g->packedA.data && g->n >= g->m)
      return {g, blocked, 1, std::max(threads, std::min(wanted, columnsFit) / threads * threads)};
    return g->n >= g->m ? GemmSplit{g, blocked, 1, threads} : GemmSplit{g, blocked, threads, 1};
  }

  // [begin, end) of `total` in part `part` of `parts`, at whole tiles.
  static std::pair<int64_t, int64_t> range(int64_t total, int parts, int part, int64_t align) {
    return {shareStart(total, parts, part, align), shareStart(total, parts, part + 1, align)};
  }

  static void runPart(void *context, int part) {
    const GemmSplit &s = *static_cast<const GemmSplit *>(context);
    GemmArgs g = *s.whole;
    const auto [row0, row1] = range(g.m, s.rowParts, part / s.columnParts, kRowAlign);
    const auto [column0, column1] = range(g.n, s.columnParts, part % s.columnParts, kColumnAlign);
    if (row0 == row1 || column0 == column1)
      return;
    g.m = row1 - row0;
    g.n = column1 - column0;
    if (g.packedA.data)
      g.packedA.first += row0;
    else
      g.a += g.transA ? row0 : row0 * g.lda;
    if (g.packedB.data)
      g.packedB.first += column0;
    else
      g.b += g.transB ? column0 * g.ldb : column0;
    g.c += row0 * g.ldc + column0;
    g.epilogue = epilogueFrom(g.epilogue, row0, column0);
    s.blocked(g);
  }
};

// Below this many multiply-adds waking the other threads costs more than it saves: each part
// packs its own panels, which small products do not amortize.
constexpr int64_t kParallelMinWork = int64_t(1) << 20;

// The epilogue over the whole of C, for the products the blocked kernel (which applies it
// to each register tile) does not compute.
void finishC(const GemmArgs &g) {
  if (!hasEpilogue(g.epilogue))
    return;
  for (int64_t i = 0; i < g.m; ++i)
    for (int64_t j = 0; j < g.n; ++j)
      g.c[i * g.ldc + j] = finishElement(g.epilogue, g.c[i * g.ldc + j], i, j);
}

void sgemmWith(BlockedFn blocked, const GemmArgs &g) {
  if (g.m <= 0 || g.n <= 0)
    return;
  if (g.k <= 0 || g.alpha == 0.0f) {
    scaleC(g.c, g.ldc, g.m, g.n, g.beta);
    finishC(g);
    return;
  }
  // The unblocked forms split over the outputs they compute one by one: each is computed the
  // same way on any split.
  if (g.n == 1 && !g.transA && (g.transB || g.ldb == 1) && !g.packedA.data && !g.packedB.data &&
      !g.scaleA && !g.scaleB) {
    // Matrix-vector product: both operands are contiguous rows, so each output is one dot.
    parallelForWork(g.m, g.k, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        float v = g.alpha * dot(g.a + i * g.lda, g.b, g.k);
        g.c[i * g.ldc] = g.beta == 0.0f ? v : v + g.beta * g.c[i * g.ldc];
      }
    });
    finishC(g);
    return;
  }
  if (g.m < kGemmFewRows && !g.packedA.data && !g.packedB.data && !g.scaleA && !g.scaleB) {
    // Columns in runs of whole 8-float axpy chunks.
    constexpr int64_t kColumns = 64;
    parallelForWork((g.n + kColumns - 1) / kColumns, kColumns * g.m * g.k,
                    [&](int64_t begin, int64_t end) {
                      GemmArgs part = g;
                      const int64_t first = begin * kColumns;
                      part.n = std::min(g.n, end * kColumns) - first;
                      part.b += g.transB ? first * g.ldb : first;
                      part.c += first;
                      gemmFewRows(part);
                    });
    finishC(g);
    return;
  }
  // Products of fewer rows than a register tile stream B for little arithmetic (a
  // classifier's one row reads its weights from memory once): they split as if they had a
  // tile's rows (ResNet-18's 512 x 1000 head ran on one thread, 1.8x ONNX Runtime's time on
  // two).
  const int threads = activeThreadCount();
  if (threads > 1 && std::max(g.m, GemmSplit::kRowAlign) * g.n * g.k >= kParallelMinWork) {
    GemmSplit split = GemmSplit::of(&g, blocked, threads);
    parallelRun(split.rowParts * split.columnParts, GemmSplit::runPart, &split);
    return;
  }
  blocked(g);
}

CpuIsa detectCpuIsa();

const IsaKernels &selectedKernels() {
  static const IsaKernels kernels = kernelsFor(selectedCpuIsa());
  return kernels;
}

CpuIsa detectCpuIsa() {
#if defined(__x86_64__)
  __builtin_cpu_init();
  CpuIsa best = __builtin_cpu_supports("avx512f")                                    ? CpuIsa::Avx512
                : __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") ? CpuIsa::Avx2
                                                                                   : CpuIsa::Baseline;
#else
  CpuIsa best = CpuIsa::Baseline;
#endif
  // $DLC_CPU may only narrow the choice: a wider set than the CPU has would crash.
  if (const char *forced = std::getenv("DLC_CPU")) {
    for (CpuIsa isa : {CpuIsa::Baseline, CpuIsa::Avx2, CpuIsa::Avx512})
      if (std::strcmp(forced, cpuIsaName(isa)) == 0 && isa < best)
        best = isa;
  }
  return best;
}

} // namespace

void sgemmBlockedBaseline(const GemmArgs &g) { BlockedGemm<Portable>::run(g); }
void depthwiseRowBaseline(const DepthwiseRowArgs &r) { DepthwiseRow<Portable>::run(r); }

void depthwiseRow(const DepthwiseRowArgs &r) { selectedKernels().depthwiseRow(r); }
void depthwiseRowOn(CpuIsa isa, const DepthwiseRowArgs &r) { kernelsFor(isa).depthwiseRow(r); }
void depthwiseNhwcRowBaseline(const DepthwiseNhwcRowArgs &r) {
  DepthwiseNhwcRow<Portable>::run(r);
}
void depthwiseNhwcRow(const DepthwiseNhwcRowArgs &r) { selectedKernels().depthwiseNhwcRow(r); }
void depthwiseNhwcRowOn(CpuIsa isa, const DepthwiseNhwcRowArgs &r) {
  kernelsFor(isa).depthwiseNhwcRow(r);
}
void planarInputRowBaseline(const PlanarInputRowArgs &r) { PlanarInputRow<Portable>::run(r); }
void planarInputRow(const PlanarInputRowArgs &r) { selectedKernels().planarInputRow(r); }
void planarInputRowOn(CpuIsa isa, const PlanarInputRowArgs &r) {
  kernelsFor(isa).planarInputRow(r);
}
void pointwiseNhwcBaseline(const PointwiseNhwcArgs &a) { PointwiseNhwc<Portable>::run(a); }
void pointwiseNhwc(const PointwiseNhwcArgs &a) { selectedKernels().pointwiseNhwc(a); }
void pointwiseNhwcOn(CpuIsa isa, const PointwiseNhwcArgs &a) { kernelsFor(isa).pointwiseNhwc(a); }
void maxPoolPlanesBaseline(const MaxPoolPlanesArgs &a) { MaxPoolPlanar<Portable>::run(a); }
void maxPoolPlanes(const MaxPoolPlanesArgs &a) { selectedKernels().maxPoolPlanes(a); }
void maxPoolPlanesOn(CpuIsa isa, const MaxPoolPlanesArgs &a) { kernelsFor(isa).maxPoolPlanes(a); }
void planeConvBaseline(const PlaneConvArgs &a) { PlaneConv<Portable>::run(a); }
void planeConv(const PlaneConvArgs &a) { selectedKernels().planeConv(a); }
void planeConvOn(CpuIsa isa, const PlaneConvArgs &a) { kernelsFor(isa).planeConv(a); }
void planePhasesBaseline(const PlanePhasesArgs &a) { PlanePhases<Portable>::run(a); }
void planePhases(const PlanePhasesArgs &a) { selectedKernels().planePhases(a); }
void planePhasesOn(CpuIsa isa, const PlanePhasesArgs &a) { kernelsFor(isa).planePhases(a); }
void winogradInputBaseline(const WinogradInputArgs &a) { WinogradTiles<Portable>::run(a); }
void winogradOutputBaseline(const WinogradOutputArgs &a) { WinogradTiles<Portable>::run(a); }
void winogradInput(const WinogradInputArgs &a) { selectedKernels().winogradInput(a); }
void winogradOutput(const WinogradOutputArgs &a) { selectedKernels().winogradOutput(a); }
void mathBaseline(MathFunction function, const float *x, float *y, int64_t n) {
  VectorMath<Portable>::run(function, x, y, n);
}
void softmaxRowsBaseline(const float *x, float *y, int64_t rows, int64_t n, bool log,
                         float *sums) {
  VectorMath<Portable>::softmaxRows(x, y, rows, n, log, sums);
}
void softmaxColumnsBaseline(const float *x, float *y, int64_t n, int64_t inner, int64_t width,
                            bool log) {
  VectorMath<Portable>::softmaxColumns(x, y, n, inner, width, log);
}
void softmaxColumns(const float *x, float *y, int64_t n, int64_t inner, int64_t width, bool log) {
  selectedKernels().softmaxColumns(x, y, n, inner, width, log);
}
void softmaxColumnsOn(CpuIsa isa, const float *x, float *y, int64_t n, int64_t inner,
                      int64_t width, bool log) {
  kernelsFor(isa).softmaxColumns(x, y, n, inner, width, log);
}
void layerNormRowsBaseline(const LayerNormRowsArgs &a) { VectorMath<Portable>::layerNormRows(a); }
void layerNormRows(const LayerNormRowsArgs &a) { selectedKernels().layerNormRows(a); }
void layerNormRowsOn(CpuIsa isa, const LayerNormRowsArgs &a) { kernelsFor(isa).layerNormRows(a); }
void softmaxRows(const float *x, float *y, int64_t rows, int64_t n, bool log, float *sums) {
  selectedKernels().softmaxRows(x, y, rows, n, log, sums);
}
void softmaxRowsOn(CpuIsa isa, const float *x, float *y, int64_t rows, int64_t n, bool log,
                   float *sums) {
  kernelsFor(isa).softmaxRows(x, y, rows, n, log, sums);
}

namespace {
// Each element's result depends only on its value, so any split gives the same bits. The
// functions cost tens of operations an element.
constexpr int64_t kMathWorkPerElement = 32;
void mathSplit(void (*math)(MathFunction, const float *, float *, int64_t),
               MathFunction function, const float *x, float *y, int64_t n) {
  parallelForWork(n, kMathWorkPerElement, [&](int64_t begin, int64_t end) {
    math(function, x + begin, y + begin, end - begin);
  });
}
} // namespace

void mathRow(MathFunction function, const float *x, float *y, int64_t n) {
  selectedKernels().math(function, x, y, n);
}
void mathF32(MathFunction function, const float *x, float *y, int64_t n) {
  mathSplit(selectedKernels().math, function, x, y, n);
}
void mathF32On(CpuIsa isa, MathFunction function, const float *x, float *y, int64_t n) {
  mathSplit(kernelsFor(isa).math, function, x, y, n);
}

const char *cpuIsaName(CpuIsa isa) {
  switch (isa) {
  case CpuIsa::Avx512:
    return "avx512";
  case CpuIsa::Avx2:
    return "avx2";
  case CpuIsa::Baseline:
    break;
  }
  return "baseline";
}

CpuIsa selectedCpuIsa() {
  // A plain check at first use rather than an ifunc: ifunc resolvers run before sanitizer
  // runtimes are initialised.
  static const CpuIsa selected = detectCpuIsa();
  return selected;
}

void sgemmOn(CpuIsa isa, const GemmArgs &g) { sgemmWith(kernelsFor(isa).blocked, g); }

void sgemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k, float alpha, const float *a,
           int64_t lda, const float *b, int64_t ldb, float beta, float *c, int64_t ldc) {
  sgemmWith(selectedKernels().blocked, {transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, {}, {}, {}});
}

namespace {
int64_t roundUp(int64_t x, int64_t multiple) { return (x + multiple - 1) / multiple * multiple; }

// Packs `rows` rows by k of op(X) (element (r, p) is x[p * ld + r] when `trans`, else
// x[r * ld + p]) in the layout of kPackRows / kPackCols (gemm.h), `width` wide. Packing runs
// ahead of time for weights and at run time for attention's keys and values, so a transposed
// X, whose panel rows are runs of memory, is copied a run at a time, and an X whose rows are
// the panel's columns (keys read in place from split heads) by 4 x 4 register transposes.
void packOperand(bool trans, int64_t rows, int64_t k, const float *x, int64_t ld, int64_t width,
                 float *dst) {
  const int64_t padded = roundUp(rows, width), blockDepth = gemmBlockDepth(k);
  for (int64_t block = 0; block < k; block += blockDepth) {
    const int64_t depth = std::min(blockDepth, k - block);
    for (int64_t r0 = 0; r0 < padded; r0 += width) {
      const int64_t count = std::min(width, rows - r0);
      float *panel = dst + block * padded + r0 * depth;
      if (trans) {
        for (int64_t p = 0; p < depth; ++p) {
          float *out = panel + p * width;
          std::copy(x + (block + p) * ld + r0, x + (block + p) * ld + r0 + count, out);
          std::fill(out + count, out + width, 0.0f);
        }
        continue;
      }
      int64_t i = 0;
      for (; i + 4 <= count; i += 4)
        packFourRows(x + (r0 + i) * ld + block, ld, depth, panel + i, width);
      for (; i < width; ++i)
        for (int64_t p = 0; p < depth; ++p)
          panel[p * width + i] = i < count ? x[(r0 + i) * ld + block + p] : 0.0f;
    }
  }
}
} // namespace

size_t packedGemmABytes(int64_t m, int64_t k) {
  return size_t(roundUp(m, kPackRows) * k) * sizeof(float);
}
size_t packedGemmBBytes(int64_t k, int64_t n) {
  return size_t(roundUp(n, kPackCols) * k) * sizeof(float);
}

void packGemmA(bool transA, int64_t m, int64_t k, const float *a, int64_t lda, float *packed) {
  // op(A)(i, p) is a[i * lda + p], or a[p * lda + i] transposed.
  packOperand(transA, m, k, a, lda, kPackRows, packed);
}

void packGemmB(bool transB, int64_t k, int64_t n, const float *b, int64_t ldb, float *packed) {
  // Column j of op(B) is row j of B transposed, so B packs like A with the flag inverted.
  packOperand(!transB, n, k, b, ldb, kPackCols, packed);
}

void sgemmPackedA(int64_t m, int64_t n, int64_t k, float alpha, const float *packedA,
                  bool transB, const float *b, int64_t ldb, float beta, float *c, int64_t ldc,
                  const GemmEpilogue &epilogue) {
  sgemmWith(selectedKernels().blocked, {false, transB, m, n, k, alpha, nullptr, 0, b, ldb, beta, c, ldc,
                                {packedA, roundUp(m, kPackRows), 0}, {}, epilogue});
}

void sgemmPackedB(bool transA, int64_t m, int64_t n, int64_t k, float alpha, const float *a,
                  int64_t lda, const float *packedB, float beta, float *c, int64_t ldc,
                  const GemmEpilogue &epilogue) {
  sgemmWith(selectedKernels().blocked, {transA, false, m, n, k, alpha, a, lda, nullptr, 0, beta, c, ldc,
                                {}, {packedB, roundUp(n, kPackCols), 0}, epilogue});
}

} // namespace rt
} // namespace dlc
