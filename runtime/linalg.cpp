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
// With a causal mask, blocks of this many query rows: each computes the scores of the keys up
// to its last row's, a block of rows at the start few of them.
constexpr int64_t kMaskedKeysBlockRows = 48;
// Score slots in the workspace: one per thread, for at most this many threads.
constexpr int64_t kAttentionSlots = 8;
// Packing moves each float of the keys and values by a gather or a register transpose
// (packGemmB), the time of several element operations: counted as one, GPT-2's 64 x 128 heads
// were packed by one thread while the other waited (two threads: its attention 10% faster
// counted as four).
constexpr int64_t kPackWorkPerFloat = 4;

// Each batch entry's keys and values are packed once (packGemmB) and read by all its blocks of
// queries: packing them per product cost a third of the time of Whisper's 1500-key heads.
// Entries are packed `group` at a time, enough for every slot to have a block.
struct AttentionPlan {
  int64_t rows, blocks, slots, group;
  int64_t packedKeysFloats, packedValuesFloats;
};

AttentionPlan attentionPlan(int64_t batch, int64_t queries, int64_t depth, int64_t keys,
                            int64_t valueDepth, bool skipsMaskedKeys) {
  AttentionPlan plan;
  int64_t fit = kAttentionBlockFloats / std::max<int64_t>(keys, 1) / kAttentionRowMultiple *
                kAttentionRowMultiple;
  if (skipsMaskedKeys)
    fit = std::min(fit, kMaskedKeysBlockRows);
  plan.rows = std::max<int64_t>(1, std::min(queries, std::max(fit, kAttentionRowMultiple)));
  plan.blocks = (queries + plan.rows - 1) / plan.rows;
  plan.group = std::max<int64_t>(
      1, std::min(batch, (kAttentionSlots + plan.blocks - 1) / plan.blocks));
  plan.slots = std::min(kAttentionSlots, plan.group * plan.blocks);
  plan.packedKeysFloats = int64_t(packedGemmBBytes(depth, keys) / sizeof(float));
  plan.packedValuesFloats = int64_t(packedGemmBBytes(keys, valueDepth) / sizeof(float));
  return plan;
}

// The steps between the product and the softmax, each rounding as the op it replaces does,
// on the first n scores of each row.
void scaleAndBias(const AttentionParams &p, const float *bias, float *scores, int64_t rows,
                  int64_t n) {
  for (int64_t r = 0; r < rows; ++r) {
    float *row = scores + r * p.keys;
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

size_t attentionWorkspaceBytes(int64_t batch, int64_t queries, int64_t depth, int64_t keys,
                               int64_t valueDepth, bool skipsMaskedKeys) {
  const AttentionPlan plan =
      attentionPlan(batch, queries, depth, keys, valueDepth, skipsMaskedKeys);
  return size_t(plan.slots * (plan.rows * keys + plan.rows) +
                plan.group * (plan.packedKeysFloats + plan.packedValuesFloats)) *
         sizeof(float);
}

void attentionF32(const AttentionParams &p, const float *query, const float *keys,
                  const float *values, float *out, float *workspace) {
  const AttentionPlan plan = attentionPlan(p.batch, p.queries, p.depth, p.keys, p.valueDepth,
                                           p.visibleKeys != nullptr);
  const int64_t s = p.queries, d = p.depth, t = p.keys, e = p.valueDepth, rows = plan.rows;
  float *rowSums = workspace + plan.slots * rows * t;
  float *packed = rowSums + plan.slots * rows;
  const int64_t packedEntryFloats = plan.packedKeysFloats + plan.packedValuesFloats;
  // A power-of-2 scale multiplies exactly, so the product's alpha gives the bits of the
  // unfused Mul or Div, and a bias whose rows are contiguous is the product's residual.
  int exponent = 0;
  const bool exactScale =
      std::frexp(p.scale, &exponent) == 0.5f && std::isfinite(1.0f / p.scale);
  const bool fusedScaleAndBias = exactScale && (!p.bias || p.biasColumnStride == 1);
  const float alpha = !fusedScaleAndBias ? 1.0f : p.divide ? 1.0f / p.scale : p.scale;
  // packedFrom[i]: the entry of the group whose packed keys and values entry i reads.
  int64_t packedFrom[kAttentionSlots];
  for (int64_t b0 = 0; b0 < p.batch; b0 += plan.group) {
    const int64_t entries = std::min(plan.group, p.batch - b0);
    for (int64_t i = 0; i < entries; ++i) {
      const int64_t b = b0 + i, previous = i ? packedFrom[i - 1] : 0;
      const bool shared = i && p.keyMatrix.offsets[b] == p.keyMatrix.offsets[b0 + previous] &&
                          p.values.offsets[b] == p.values.offsets[b0 + previous];
      packedFrom[i] = shared ? previous : i;
    }
    parallelForWork(2 * entries, kPackWorkPerFloat * d * t, [&](int64_t first, int64_t end) {
      for (int64_t i = first; i < end; ++i) {
        const int64_t entry = i / 2, b = b0 + entry;
        if (packedFrom[entry] != entry)
          continue;
        float *packedKeys = packed + entry * packedEntryFloats;
        if (i % 2 == 0)
          packGemmB(p.keysByRow, d, t, keys + p.keyMatrix.offsets[b], p.keyMatrix.rowStride,
                    packedKeys);
        else
          packGemmB(false, t, e, values + p.values.offsets[b], p.values.rowStride,
                    packedKeys + plan.packedKeysFloats);
      }
    });
    // One slot per thread, reused block after block so that the scores stay in its cache
    // (parallelForInSlots). Blocks go entry by entry (the same threads packed the entry's
    // keys and values), but under a causal mask the costliest blocks (the last rows, which
    // see the most keys) of every entry first.
    parallelForInSlots(
        entries * plan.blocks, plan.slots, rows * t * (d + e),
        [&](int64_t slot, int64_t item) {
          const int64_t entry = p.visibleKeys ? item % entries : item / plan.blocks;
          const int64_t block =
              p.visibleKeys ? plan.blocks - 1 - item / entries : item % plan.blocks;
          const int64_t b = b0 + entry;
          const int64_t r0 = block * rows, m = std::min(rows, s - r0);
          const float *packedKeys = packed + packedFrom[entry] * packedEntryFloats;
          const float *bias = p.bias ? p.bias + p.biasOffsets[b] + r0 * p.biasRowStride : nullptr;
          float *scores = workspace + slot * rows * t, *sums = rowSums + slot * rows;
          GemmEpilogue epilogue{};
          if (fusedScaleAndBias && bias) {
            epilogue.residual = bias;
            epilogue.ldr = p.biasRowStride;
          }
          // The keys the block's rows may see: the packed keys' first columns (a prefix of
          // their panels where the depth is one block).
          int64_t visible = t;
          if (p.visibleKeys && d <= kMaxBlockDepth)
            visible = *std::max_element(p.visibleKeys + r0, p.visibleKeys + r0 + m);
          sgemmPackedB(false, m, visible, d, alpha,
                       query + p.query.offsets[b] + r0 * p.query.rowStride, p.query.rowStride,
                       packedKeys, 0.0f, scores, t, epilogue);
          if (!fusedScaleAndBias)
            scaleAndBias(p, bias, scores, m, visible);
          if (visible == t) {
            softmaxRows(scores, scores, m, t, false, sums);
          } else {
            for (int64_t r = 0; r < m; ++r) {
              softmaxRows(scores + r * t, scores + r * t, 1, visible, false, sums + r);
              std::fill(scores + r * t + visible, scores + (r + 1) * t, 0.0f);
            }
          }
          const int64_t ldo = p.output.rowStride;
          float *outRows = out + p.output.offsets[b] + r0 * ldo;
          sgemmPackedB(false, m, e, t, 1.0f, scores, t, packedKeys + plan.packedKeysFloats, 0.0f,
                       outRows, ldo);
          for (int64_t r = 0; r < m; ++r) {
            const float normalize = 1.0f / sums[r];
            for (int64_t j = 0; j < e; ++j)
              outRows[r * ldo + j] *= normalize;
          }
        });
  }
}

namespace {
DLC_NO_CONTRACT_FUNCTION void rotaryRow(const float *x, const float *cos, const float *sin,
                                        float *y, int64_t n, int64_t cosStep, int64_t sinStep) {
  DLC_NO_CONTRACT
  const int64_t half = n / 2;
  if (cosStep == 1 && sinStep == 1) {
    for (int64_t j = 0; j < half; ++j)
      y[j] = x[j] * cos[j] + -x[j + half] * sin[j];
    for (int64_t j = half; j < n; ++j)
      y[j] = x[j] * cos[j] + x[j - half] * sin[j];
    return;
  }
  for (int64_t j = 0; j < n; ++j)
    y[j] = x[j] * cos[j * cosStep] + (j < half ? -x[j + half] : x[j - half]) * sin[j * sinStep];
}
} // namespace

void rotaryF32(const RotaryParams &p, const float *x, const float *cos, const float *sin,
               float *y) {
  int64_t rows = 1;
  for (int64_t d = 0; d < p.rank; ++d)
    rows *= p.dims[d];
  parallelForWork(rows, 2 * p.n, [&](int64_t first, int64_t end) {
    for (int64_t row = first; row < end; ++row) {
      int64_t rest = row, xAt = 0, cosAt = 0, sinAt = 0;
      for (int64_t d = p.rank - 1; d >= 0; --d) {
        const int64_t index = rest % p.dims[d];
        rest /= p.dims[d];
        xAt += index * p.inputStrides[d];
        cosAt += index * p.cosStrides[d];
        sinAt += index * p.sinStrides[d];
      }
      rotaryRow(x + xAt, cos + cosAt, sin + sinAt, y + row * p.n, p.n, p.cosStep, p.sinStep);
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
