#include "dlc_kernels.h"
#include "gemm.h"
#include "parallel.h"

#include <algorithm>
#include <cmath>

namespace dlc {
namespace rt {

void detF32(const float *x, float *y, int64_t count, int64_t m, void *workspace) {
  double *lu = static_cast<double *>(workspace);
  for (int64_t i = 0; i < count; ++i) {
    std::copy(x + i * m * m, x + (i + 1) * m * m, lu);
    double det = 1.0;
    for (int64_t col = 0; col < m; ++col) {
      int64_t pivot = col;
      for (int64_t r = col + 1; r < m; ++r)
        if (std::fabs(lu[r * m + col]) > std::fabs(lu[pivot * m + col]))
          pivot = r;
      if (pivot != col) {
        std::swap_ranges(lu + col * m, lu + (col + 1) * m, lu + pivot * m);
        det = -det;
      }
      det *= lu[col * m + col];
      if (det == 0.0)
        break;
      for (int64_t r = col + 1; r < m; ++r) {
        double factor = lu[r * m + col] / lu[col * m + col];
        for (int64_t c = col + 1; c < m; ++c)
          lu[r * m + c] -= factor * lu[col * m + c];
      }
    }
    y[i] = static_cast<float>(det);
  }
}

void batchedMatmulF32(const float *a, const int64_t *aOffsets, const float *b,
                      const int64_t *bOffsets, float *c, int64_t batch, int64_t m, int64_t n,
                      int64_t k) {
  auto products = [&](int64_t first, int64_t end) {
    for (int64_t i = first; i < end; ++i)
      sgemm(false, false, m, n, k, 1.0f, a + aOffsets[i], k, b + bOffsets[i], n, 0.0f,
            c + i * m * n, n);
  };
  // Threads take whole products (attention's heads) when there are enough to go round; else
  // each product splits its own rows or columns (sgemm). A product computes every element the
  // same way on any split, so results do not depend on the thread count.
  if (batch >= activeThreadCount())
    parallelForWork(batch, m * n * k, products);
  else
    products(0, batch);
}

namespace {
// A block of query rows' scores is at most this many floats (512 KB: in L2 beside the keys
// and values it is multiplied with), and whole 12-row tiles of the GEMM.
constexpr int64_t kAttentionBlockFloats = 128 * 1024, kAttentionRowMultiple = 12;
// Blocks in the workspace at once: threads take whole blocks.
constexpr int64_t kAttentionSlots = 8;

int64_t attentionBlockRows(int64_t queries, int64_t keys) {
  const int64_t fit = kAttentionBlockFloats / std::max<int64_t>(keys, 1) /
                      kAttentionRowMultiple * kAttentionRowMultiple;
  return std::min(queries, std::max(fit, kAttentionRowMultiple));
}

int64_t attentionSlots(int64_t batch, int64_t queries, int64_t keys) {
  const int64_t rows = attentionBlockRows(queries, keys);
  return std::min(kAttentionSlots, batch * ((queries + rows - 1) / rows));
}

// The steps between the product and the softmax, each rounding as the op it replaces does.
void scaleAndBias(const AttentionParams &p, const float *bias, float *scores, int64_t rows) {
  const int64_t n = p.keys;
  for (int64_t r = 0; r < rows; ++r) {
    float *row = scores + r * n;
    if (p.divide)
      for (int64_t j = 0; j < n; ++j)
        row[j] /= p.scale;
    else if (p.scale != 1.0f)
      for (int64_t j = 0; j < n; ++j)
        row[j] *= p.scale;
    if (!bias)
      continue;
    const float *biasRow = bias + r * p.biasRowStride;
    if (p.biasColumnStride == 1)
      for (int64_t j = 0; j < n; ++j)
        row[j] += biasRow[j];
    else
      for (int64_t j = 0; j < n; ++j)
        row[j] += biasRow[j * p.biasColumnStride];
  }
}
} // namespace

size_t attentionWorkspaceBytes(int64_t batch, int64_t queries, int64_t keys) {
  return size_t(attentionSlots(batch, queries, keys) * attentionBlockRows(queries, keys) * keys) *
         sizeof(float);
}

void attentionF32(const AttentionParams &p, const float *query, const float *keys,
                  const float *values, float *out, float *workspace) {
  const int64_t rows = attentionBlockRows(p.queries, p.keys);
  const int64_t blocks = (p.queries + rows - 1) / rows, items = p.batch * blocks;
  const int64_t slots = attentionSlots(p.batch, p.queries, p.keys);
  const int64_t s = p.queries, d = p.depth, t = p.keys, e = p.valueDepth;
  for (int64_t i0 = 0; i0 < items; i0 += slots)
    parallelFor(std::min(slots, items - i0), 1, [&](int64_t first, int64_t end) {
      for (int64_t slot = first; slot < end; ++slot) {
        const int64_t item = i0 + slot, b = item / blocks, r0 = item % blocks * rows;
        const int64_t m = std::min(rows, s - r0);
        float *scores = workspace + slot * rows * t;
        sgemm(false, false, m, t, d, 1.0f, query + (b * s + r0) * d, d, keys + b * d * t, t,
              0.0f, scores, t);
        scaleAndBias(p, p.bias ? p.bias + p.biasOffsets[b] + r0 * p.biasRowStride : nullptr,
                     scores, m);
        softmaxRows(scores, scores, m, t, false);
        sgemm(false, false, m, e, t, 1.0f, scores, t, values + b * t * e, e, 0.0f,
              out + (b * s + r0) * e, e);
      }
    });
}

namespace {
// Each product row accumulated in Acc: uint32_t makes int32 sums wrap modulo 2^32 (as int32
// accumulation does in ONNX runtimes) without UB; double is exact enough for float64.
template <typename T, typename Acc>
void plainBatchedMatmul(const T *a, const int64_t *aOffsets, const T *b, const int64_t *bOffsets,
                        T *c, int64_t batch, int64_t m, int64_t n, int64_t k) {
  for (int64_t i = 0; i < batch; ++i) {
    const T *ai = a + aOffsets[i], *bi = b + bOffsets[i];
    T *ci = c + i * m * n;
    for (int64_t r = 0; r < m; ++r) {
      Acc *row = reinterpret_cast<Acc *>(ci + r * n);
      for (int64_t j = 0; j < n; ++j)
        row[j] = 0;
      for (int64_t p = 0; p < k; ++p) {
        Acc x = Acc(ai[r * k + p]);
        const T *brow = bi + p * n;
        for (int64_t j = 0; j < n; ++j)
          row[j] += x * Acc(brow[j]);
      }
    }
  }
}
} // namespace

void batchedMatmulI32(const int32_t *a, const int64_t *aOffsets, const int32_t *b,
                      const int64_t *bOffsets, int32_t *c, int64_t batch, int64_t m, int64_t n,
                      int64_t k) {
  plainBatchedMatmul<int32_t, uint32_t>(a, aOffsets, b, bOffsets, c, batch, m, n, k);
}

void batchedMatmulF64(const double *a, const int64_t *aOffsets, const double *b,
                      const int64_t *bOffsets, double *c, int64_t batch, int64_t m, int64_t n,
                      int64_t k) {
  plainBatchedMatmul<double, double>(a, aOffsets, b, bOffsets, c, batch, m, n, k);
}

} // namespace rt
} // namespace dlc
