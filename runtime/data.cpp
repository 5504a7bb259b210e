#include "dlc_kernels.h"
#include "parallel.h"
#include "transpose_quad.h"

#include <algorithm>
#include <cstring>
#include <vector>

namespace dlc {
namespace rt {

namespace {

template <size_t N>
void copyElementsStrided(const char *src, int64_t srcStride, char *dst, int64_t dstStride,
                         int64_t count) {
  // memcpy of a constant size compiles to one load and store without breaking aliasing rules.
  for (int64_t i = 0; i < count; ++i)
    std::memcpy(dst + i * dstStride, src + i * srcStride, N);
}

// Copies `count` chunks of `chunkBytes` that sit srcStride bytes apart into chunks dstStride
// bytes apart (strides may be negative).
void copyChunks(const char *src, int64_t srcStride, char *dst, int64_t dstStride, int64_t count,
                size_t chunkBytes) {
  const int64_t dense = static_cast<int64_t>(chunkBytes);
  if (srcStride == dense && dstStride == dense) {
    std::memcpy(dst, src, static_cast<size_t>(count) * chunkBytes);
    return;
  }
  switch (chunkBytes) {
  case 1:
    return copyElementsStrided<1>(src, srcStride, dst, dstStride, count);
  case 2:
    return copyElementsStrided<2>(src, srcStride, dst, dstStride, count);
  case 4:
    return copyElementsStrided<4>(src, srcStride, dst, dstStride, count);
  case 8:
    return copyElementsStrided<8>(src, srcStride, dst, dstStride, count);
  default:
    for (int64_t i = 0; i < count; ++i)
      std::memcpy(dst + i * dstStride, src + i * srcStride, chunkBytes);
  }
}

int64_t productFrom(const int64_t *shape, int begin, int end) {
  int64_t p = 1;
  for (int d = begin; d < end; ++d)
    p *= shape[d];
  return p;
}

// Shared walk for transpose, slice and slice's gradient, between a dense tensor and a strided
// view of another: dims [0, walked) of the dense tensor are iterated recursively (so any rank
// works without index storage), and each step of the innermost one is a call
// run(offset, step, count, chunkBytes): `count` chunks of chunkBytes, consecutive in the dense
// tensor, at byte `offset` of the strided one and `step` bytes apart. size(d) is dim d's
// extent, stride(d) its byte stride in the strided tensor.
template <typename SizeFn, typename StrideFn, typename Run> struct ChunkWalker {
  int walked;
  SizeFn size;
  StrideFn stride;
  size_t chunkBytes;
  Run &run;

  void walk(int dim, int64_t offset) const {
    int64_t n = size(dim), step = stride(dim);
    if (dim == walked - 1) {
      run(offset, step, n, chunkBytes);
      return;
    }
    for (int64_t i = 0; i < n; ++i)
      walk(dim + 1, offset + i * step);
  }
};

template <typename SizeFn, typename StrideFn, typename Run>
void walkChunks(int walked, SizeFn size, StrideFn stride, size_t chunkBytes, Run run) {
  if (chunkBytes == 0)
    return;
  for (int d = 0; d < walked; ++d)
    if (size(d) == 0)
      return;
  if (walked == 0) {
    run(int64_t(0), static_cast<int64_t>(chunkBytes), int64_t(1), chunkBytes);
    return;
  }
  ChunkWalker<SizeFn, StrideFn, Run>{walked, size, stride, chunkBytes, run}.walk(0, 0);
}

// Runs for walkChunks: copy the strided tensor src to the dense tensor dst, or back.
struct CopyToDense {
  const char *src;
  char *dst;
  void operator()(int64_t offset, int64_t step, int64_t count, size_t chunkBytes) {
    const int64_t dense = static_cast<int64_t>(chunkBytes);
    copyChunks(src + offset, step, dst, dense, count, chunkBytes);
    dst += count * dense;
  }
};
struct CopyFromDense {
  const char *src;
  char *dst;
  void operator()(int64_t offset, int64_t step, int64_t count, size_t chunkBytes) {
    const int64_t dense = static_cast<int64_t>(chunkBytes);
    copyChunks(src, dense, dst + offset, step, count, chunkBytes);
    src += count * dense;
  }
};

// walkChunks over the elements of x that slice() takes.
template <typename Run>
void walkSlice(size_t elemSize, const int64_t *inShape, const int64_t *starts, const int64_t *steps,
               const int64_t *outShape, int rank, Run run) {
  // An empty result may come with starts outside the input; never form those addresses.
  for (int d = 0; d < rank; ++d)
    if (outShape[d] == 0)
      return;
  // Trailing dims taken whole form contiguous chunks.
  int walked = rank;
  while (walked > 0 && starts[walked - 1] == 0 && steps[walked - 1] == 1 &&
         outShape[walked - 1] == inShape[walked - 1])
    --walked;
  int64_t base = 0;
  for (int d = 0; d < walked; ++d)
    base += starts[d] * productFrom(inShape, d + 1, rank) * static_cast<int64_t>(elemSize);
  auto size = [&](int d) { return outShape[d]; };
  // A dim taking one element never steps: its step may be any size (Slice's INT64_MAX), and
  // only steps between elements inside the input are sure to fit in int64 as byte strides.
  auto stride = [&](int d) {
    return outShape[d] == 1
               ? int64_t(0)
               : steps[d] * productFrom(inShape, d + 1, rank) * static_cast<int64_t>(elemSize);
  };
  walkChunks(walked, size, stride,
             static_cast<size_t>(productFrom(inShape, walked, rank)) * elemSize,
             [&](int64_t offset, int64_t step, int64_t count, size_t chunkBytes) {
               run(base + offset, step, count, chunkBytes);
             });
}

int64_t wrapIndex(int64_t idx, int64_t axisDim) { return idx < 0 ? idx + axisDim : idx; }

// Slices of more dims than this (none that exporters write) run on one thread.
constexpr int kMaxSliceRank = 16;

} // namespace

void copyBytes(const void *x, void *y, size_t bytes) {
  // Aliased buffers (an in-place reshape) need no copy, and memcpy forbids them.
  if (bytes != 0 && x != y)
    std::memcpy(y, x, bytes);
}

namespace {

// A block of rows and columns of a matrix transpose.
struct MatrixBlock {
  int64_t rowBegin, rowEnd, colBegin, colEnd;
};

// to[j][i] = from[i][j] over `block` of a rows x cols matrix of elemSize-byte elements, in
// 16 x 16 tiles that stay in the first-level cache (a plain loop strides through a cache line
// per element on one side); each tile row is one strided copy.
void transposeBlock(const void *from, int64_t rows, int64_t cols, void *to, size_t elemSize,
                    const MatrixBlock &block) {
  constexpr int64_t kTile = 16;
  const int64_t bytes = static_cast<int64_t>(elemSize);
  auto *src = static_cast<const char *>(from);
  auto *dst = static_cast<char *>(to);
  for (int64_t i0 = block.rowBegin; i0 < block.rowEnd; i0 += kTile)
    for (int64_t j0 = block.colBegin; j0 < block.colEnd; j0 += kTile)
      for (int64_t i = i0; i < std::min(block.rowEnd, i0 + kTile); ++i)
        copyChunks(src + (i * cols + j0) * bytes, bytes, dst + (j0 * rows + i) * bytes,
                   rows * bytes, std::min(block.colEnd, j0 + kTile) - j0, elemSize);
}

// transposeBlock for 4-byte elements (float, int32): 4 x 4 register transposes walking the
// block's long side, so each of the few rows it writes (or reads) on the short side is one
// run of consecutive lines. NHWC to NCHW writes planes whose stride is often a multiple of
// 4 KiB; 16 x 16 tiles wrote 16 lines of one cache set at a time and ran 10x slower.
void transposeBlock4(const void *from, int64_t rows, int64_t cols, void *to,
                     const MatrixBlock &block) {
  auto *src = static_cast<const char *>(from);
  auto *dst = static_cast<char *>(to);
  const int64_t srcStride = cols * 4, dstStride = rows * 4;
  const int64_t rowQuadEnd = block.rowBegin + (block.rowEnd - block.rowBegin) / 4 * 4;
  const int64_t colQuadEnd = block.colBegin + (block.colEnd - block.colBegin) / 4 * 4;
  auto quad = [&](int64_t i, int64_t j) {
    transposeQuad(src + i * srcStride + j * 4, srcStride, dst + j * dstStride + i * 4, dstStride);
  };
  if (block.rowEnd - block.rowBegin >= block.colEnd - block.colBegin) {
    for (int64_t j = block.colBegin; j < colQuadEnd; j += 4)
      for (int64_t i = block.rowBegin; i < rowQuadEnd; i += 4)
        quad(i, j);
  } else {
    for (int64_t i = block.rowBegin; i < rowQuadEnd; i += 4)
      for (int64_t j = block.colBegin; j < colQuadEnd; j += 4)
        quad(i, j);
  }
  // The edges the quads leave: the last rows, then the last columns of the quads' rows.
  if (rowQuadEnd < block.rowEnd)
    transposeBlock(from, rows, cols, to, 4,
                   {rowQuadEnd, block.rowEnd, block.colBegin, block.colEnd});
  if (colQuadEnd < block.colEnd)
    transposeBlock(from, rows, cols, to, 4, {block.rowBegin, rowQuadEnd, colQuadEnd, block.colEnd});
}

// A piece of a matrix transpose sized for threads and caches: for 4-byte elements a strip
// kStripRun long on the matrix's long side and kStripWidth wide (consecutive strips share
// the lines of their long rows), else a square for transposeBlock's tiles.
struct MatrixBlocking {
  int64_t blockRows, blockCols;

  MatrixBlocking(int64_t rows, int64_t cols, size_t elemSize) {
    constexpr int64_t kStripRun = 256, kStripWidth = 8, kSquare = 64;
    if (elemSize != 4)
      blockRows = blockCols = kSquare;
    else if (rows >= cols)
      blockRows = kStripRun, blockCols = kStripWidth;
    else
      blockRows = kStripWidth, blockCols = kStripRun;
  }
};

void transposeMatrixBlock(const void *from, int64_t rows, int64_t cols, void *to, size_t elemSize,
                          const MatrixBlock &block) {
  if (elemSize == 4)
    transposeBlock4(from, rows, cols, to, block);
  else
    transposeBlock(from, rows, cols, to, elemSize, block);
}

// A permutation that keeps `batch` leading dims and swaps the two groups of dims after them
// ([batch..., A..., B...] to [batch..., B..., A...], NCHW to NHWC and back) is a batch of
// matrix transposes: the sizes of batch, A and B, if so.
bool asMatrixTransposes(const int64_t *inShape, const int64_t *perm, int rank, int64_t &batch,
                        int64_t &rows, int64_t &cols) {
  int lead = 0;
  while (lead < rank && perm[lead] == lead)
    ++lead;
  if (lead == rank)
    return false;
  const int second = static_cast<int>(perm[lead]); // where B starts in the input
  if (second <= lead)
    return false;
  for (int d = lead; d < rank; ++d) {
    const int64_t expected = d < lead + rank - second ? second + (d - lead)
                                                      : lead + (d - (lead + rank - second));
    if (perm[d] != expected)
      return false;
  }
  batch = productFrom(inShape, 0, lead);
  rows = productFrom(inShape, lead, second);
  cols = productFrom(inShape, second, rank);
  return true;
}

} // namespace

void transposeMatrix(const void *x, int64_t rows, int64_t cols, void *y, size_t elemSize) {
  transposeMatrixBlock(x, rows, cols, y, elemSize, {0, rows, 0, cols});
}

void transpose(const void *x, void *y, size_t elemSize, const int64_t *inShape, const int64_t *perm,
               int rank) {
  int64_t matrices, matrixRows, matrixCols;
  if (asMatrixTransposes(inShape, perm, rank, matrices, matrixRows, matrixCols) &&
      matrixRows > 1 && matrixCols > 1) {
    const MatrixBlocking blocking(matrixRows, matrixCols, elemSize);
    const int64_t rowBlocks = (matrixRows + blocking.blockRows - 1) / blocking.blockRows;
    const int64_t colBlocks = (matrixCols + blocking.blockCols - 1) / blocking.blockCols;
    const int64_t matrixBytes = matrixRows * matrixCols * int64_t(elemSize);
    // Threads take runs of blocks; along the matrix's short side first, so a thread's
    // consecutive blocks share the long rows' lines.
    const bool rowsLong = matrixRows >= matrixCols;
    parallelForWork(
        matrices * rowBlocks * colBlocks, blocking.blockRows * blocking.blockCols,
        [&](int64_t first, int64_t end) {
          for (int64_t part = first; part < end; ++part) {
            const int64_t n = part / (rowBlocks * colBlocks);
            const int64_t inMatrix = part % (rowBlocks * colBlocks);
            const int64_t rowBlock = rowsLong ? inMatrix / colBlocks : inMatrix % rowBlocks;
            const int64_t colBlock = rowsLong ? inMatrix % colBlocks : inMatrix / rowBlocks;
            const int64_t r0 = rowBlock * blocking.blockRows, c0 = colBlock * blocking.blockCols;
            transposeMatrixBlock(static_cast<const char *>(x) + n * matrixBytes, matrixRows,
                                 matrixCols, static_cast<char *>(y) + n * matrixBytes, elemSize,
                                 {r0, std::min(matrixRows, r0 + blocking.blockRows), c0,
                                  std::min(matrixCols, c0 + blocking.blockCols)});
          }
        });
    return;
  }
  // Trailing output dims that keep their input position form contiguous chunks.
  int walked = rank;
  while (walked > 0 && perm[walked - 1] == walked - 1)
    --walked;
  auto size = [&](int d) { return inShape[perm[d]]; };
  auto stride = [&](int d) {
    return productFrom(inShape, static_cast<int>(perm[d]) + 1, rank) *
           static_cast<int64_t>(elemSize);
  };
  const size_t chunkBytes = static_cast<size_t>(productFrom(inShape, walked, rank)) * elemSize;
  if (walked == 0 || chunkBytes == 0) {
    walkChunks(walked, size, stride, chunkBytes,
               CopyToDense{static_cast<const char *>(x), static_cast<char *>(y)});
    return;
  }
  // Threads take whole output rows over its leading walked dims (enough of them for a few
  // rows per thread: a batch of one is one row), each row contiguous in y. The last walked dim
  // stays in the row: a row of single elements would cost an index computation per element.
  int split = 0;
  int64_t rows = 1;
  while (split < walked - 1 && rows < 256)
    rows *= size(split++);
  int64_t rowBytes = static_cast<int64_t>(chunkBytes);
  for (int d = split; d < walked; ++d)
    rowBytes *= size(d);
  auto sizeBelow = [&](int d) { return size(d + split); };
  auto strideBelow = [&](int d) { return stride(d + split); };
  parallelForWork(rows, rowBytes / static_cast<int64_t>(elemSize),
                  [&](int64_t first, int64_t end) {
                    for (int64_t row = first; row < end; ++row) {
                      int64_t offset = 0, rest = row;
                      for (int d = split - 1; d >= 0; --d) {
                        offset += rest % size(d) * stride(d);
                        rest /= size(d);
                      }
                      walkChunks(walked - split, sizeBelow, strideBelow, chunkBytes,
                                 CopyToDense{static_cast<const char *>(x) + offset,
                                             static_cast<char *>(y) + row * rowBytes});
                    }
                  });
}

void concat(const void *const *inputs, const int64_t *axisSizes, int count, void *y, int64_t outer,
            int64_t inner, size_t elemSize) {
  int64_t rowElements = 0;
  for (int i = 0; i < count; ++i)
    rowElements += axisSizes[i] * inner;
  const size_t rowBytes = static_cast<size_t>(rowElements) * elemSize;
  // Threads take pieces (one input's part of one output row), each a copy of its own.
  parallelForWork(outer * count, rowElements / (count > 0 ? count : 1) + 1,
                  [&](int64_t first, int64_t end) {
                    for (int64_t piece = first; piece < end; ++piece) {
                      const int64_t o = piece / count;
                      const int i = static_cast<int>(piece % count);
                      size_t offset = 0;
                      for (int k = 0; k < i; ++k)
                        offset += static_cast<size_t>(axisSizes[k] * inner) * elemSize;
                      size_t bytes = static_cast<size_t>(axisSizes[i] * inner) * elemSize;
                      if (bytes != 0)
                        std::memcpy(static_cast<char *>(y) + o * rowBytes + offset,
                                    static_cast<const char *>(inputs[i]) + o * bytes, bytes);
                    }
                  });
}

// gather's copies, rows of kRowBytes (0: rowBytes) bytes; threads take runs of whole rows
// of y, walked without a division per row.
template <size_t kRowBytes, typename Index>
void gatherRows(const char *src, const Index *indices, int64_t numIndices, char *dst,
                int64_t outer, int64_t axisDim, int64_t inner, size_t rowBytes) {
  const size_t bytes = kRowBytes ? kRowBytes : rowBytes;
  parallelForWork(outer * numIndices, inner, [&](int64_t first, int64_t end) {
    int64_t j = first % numIndices;
    const char *from = src + static_cast<size_t>(first / numIndices * axisDim) * bytes;
    char *to = dst + static_cast<size_t>(first) * bytes;
    for (int64_t row = first; row < end; from += static_cast<size_t>(axisDim) * bytes, j = 0) {
      const int64_t last = std::min(numIndices, j + (end - row));
      for (int64_t k = j; k < last; ++k, to += bytes)
        std::memcpy(to, from + static_cast<size_t>(wrapIndex(indices[k], axisDim)) * bytes,
                    bytes);
      row += last - j;
    }
  });
}

// Whether index k is k / 2 for every k: each row taken twice in order (a nearest 2x Resize,
// as the importer writes it: one gather per axis).
template <typename Index>
bool takesEachRowTwice(const Index *indices, int64_t numIndices, int64_t axisDim) {
  if (numIndices != 2 * axisDim)
    return false;
  for (int64_t k = 0; k < numIndices; ++k)
    if (static_cast<int64_t>(indices[k]) != k / 2)
      return false;
  return true;
}

// The gather of single floats that takesEachRowTwice (a nearest 2x upsampling along rows):
// each value stored twice, a loop the compiler vectorises. The element gather took 0.8 ns
// per output, a third of YOLOv8n's upsampling.
void doubleFloats(const float *x, float *y, int64_t outer, int64_t axisDim) {
  parallelForWork(outer, 2 * axisDim, [&](int64_t first, int64_t end) {
    for (int64_t row = first; row < end; ++row) {
      const float *from = x + row * axisDim;
      float *to = y + row * 2 * axisDim;
      for (int64_t j = 0; j < axisDim; ++j) {
        to[2 * j] = from[j];
        to[2 * j + 1] = from[j];
      }
    }
  });
}

template <typename Index>
bool gather(const void *x, const Index *indices, int64_t numIndices, void *y, int64_t outer,
            int64_t axisDim, int64_t inner, size_t elemSize) {
  // Indices are runtime data the compiler cannot check: all are checked before anything is
  // written, so a bad one leaves y untouched.
  for (int64_t j = 0; j < numIndices; ++j) {
    int64_t idx = static_cast<int64_t>(indices[j]);
    if (idx < -axisDim || idx >= axisDim)
      return false;
  }
  const size_t rowBytes = static_cast<size_t>(inner) * elemSize;
  const char *src = static_cast<const char *>(x);
  char *dst = static_cast<char *>(y);
  if (rowBytes == 0)
    return true;
  if (rowBytes == sizeof(float) && takesEachRowTwice(indices, numIndices, axisDim)) {
    doubleFloats(static_cast<const float *>(x), static_cast<float *>(y), outer, axisDim);
    return true;
  }
  // Rows of one element (nearest Resize along the last axis) copy with a constant size.
  switch (rowBytes) {
  case 4:
    gatherRows<4>(src, indices, numIndices, dst, outer, axisDim, inner, rowBytes);
    break;
  case 8:
    gatherRows<8>(src, indices, numIndices, dst, outer, axisDim, inner, rowBytes);
    break;
  default:
    gatherRows<0>(src, indices, numIndices, dst, outer, axisDim, inner, rowBytes);
  }
  return true;
}

template bool gather<int32_t>(const void *, const int32_t *, int64_t, void *, int64_t, int64_t,
                              int64_t, size_t);
template bool gather<int64_t>(const void *, const int64_t *, int64_t, void *, int64_t, int64_t,
                              int64_t, size_t);

void slice(const void *x, void *y, size_t elemSize, const int64_t *inShape, const int64_t *starts,
           const int64_t *steps, const int64_t *outShape, int rank) {
  // Threads take ranges of the first output dim longer than 1, each a slice of its own.
  int split = 0;
  while (split + 1 < rank && outShape[split] == 1)
    ++split;
  if (rank == 0 || outShape[split] <= 1 || rank > kMaxSliceRank) {
    walkSlice(elemSize, inShape, starts, steps, outShape, rank,
              CopyToDense{static_cast<const char *>(x), static_cast<char *>(y)});
    return;
  }
  const int64_t inner = productFrom(outShape, split + 1, rank);
  parallelForWork(outShape[split], inner, [&](int64_t first, int64_t end) {
    int64_t partStarts[kMaxSliceRank], partShape[kMaxSliceRank];
    std::copy(starts, starts + rank, partStarts);
    std::copy(outShape, outShape + rank, partShape);
    partStarts[split] += first * steps[split];
    partShape[split] = end - first;
    walkSlice(elemSize, inShape, partStarts, steps, partShape, rank,
              CopyToDense{static_cast<const char *>(x),
                          static_cast<char *>(y) + first * inner * int64_t(elemSize)});
  });
}

void sliceGrad(const float *dy, float *dx, const int64_t *inShape, const int64_t *starts,
               const int64_t *steps, const int64_t *outShape, int rank) {
  std::fill(dx, dx + productFrom(inShape, 0, rank), 0.0f);
  // Slice positions are distinct, so the gradient is slice() with the copies reversed.
  walkSlice(sizeof(float), inShape, starts, steps, outShape, rank,
            CopyFromDense{reinterpret_cast<const char *>(dy), reinterpret_cast<char *>(dx)});
}

template <typename Index>
void gatherGradF32(const float *dy, const Index *indices, int64_t numIndices, float *dx,
                   int64_t outer, int64_t axisDim, int64_t inner) {
  std::fill(dx, dx + outer * axisDim * inner, 0.0f);
  // Repeated indices gather one row several times, so their gradients add up.
  for (int64_t o = 0; o < outer; ++o) {
    float *block = dx + o * axisDim * inner;
    for (int64_t j = 0; j < numIndices; ++j, dy += inner) {
      float *row = block + wrapIndex(static_cast<int64_t>(indices[j]), axisDim) * inner;
      for (int64_t i = 0; i < inner; ++i)
        row[i] += dy[i];
    }
  }
}

namespace {

// Walks up to three broadcast operands over `outShape` in output order, calling
// visit(out element index, element offset of each operand); a null stride array is an unused
// operand. Recursion over the dims needs no index storage, so any rank works.
template <typename Visit>
void walkBroadcast(int dim, const int64_t *outShape, int rank, const int64_t *const strides[3],
                   const int64_t offsets[3], int64_t &next, Visit &visit) {
  if (dim == rank) {
    visit(next++, offsets);
    return;
  }
  int64_t at[3] = {offsets[0], offsets[1], offsets[2]};
  for (int64_t i = 0; i < outShape[dim]; ++i) {
    walkBroadcast(dim + 1, outShape, rank, strides, at, next, visit);
    for (int k = 0; k < 3; ++k)
      if (strides[k])
        at[k] += strides[k][dim];
  }
}

template <typename Visit>
void walkBroadcast(const int64_t *outShape, int rank, const int64_t *const strides[3],
                   Visit visit) {
  const int64_t start[3] = {0, 0, 0};
  int64_t next = 0;
  walkBroadcast(0, outShape, rank, strides, start, next, visit);
}

} // namespace

void select(const uint8_t *cond, const int64_t *condStrides, const void *a,
            const int64_t *aStrides, const void *b, const int64_t *bStrides, void *out,
            const int64_t *outShape, int rank, int64_t elementBytes) {
  const int64_t *strides[3] = {condStrides, aStrides, bStrides};
  const char *aBytes = static_cast<const char *>(a), *bBytes = static_cast<const char *>(b);
  char *outBytes = static_cast<char *>(out);
  walkBroadcast(outShape, rank, strides, [&](int64_t i, const int64_t *o) {
    const char *src = cond[o[0]] ? aBytes + o[1] * elementBytes : bBytes + o[2] * elementBytes;
    std::memcpy(outBytes + i * elementBytes, src, static_cast<size_t>(elementBytes));
  });
}

void broadcastBytes(const void *x, const int64_t *xStrides, void *y, const int64_t *outShape,
                    int rank, int64_t elementBytes) {
  const int64_t *strides[3] = {xStrides, nullptr, nullptr};
  const char *src = static_cast<const char *>(x);
  char *dst = static_cast<char *>(y);
  walkBroadcast(outShape, rank, strides, [&](int64_t i, const int64_t *o) {
    std::memcpy(dst + i * elementBytes, src + o[0] * elementBytes,
                static_cast<size_t>(elementBytes));
  });
}

namespace {

// GatherElements and ScatterElements address x through an index tensor of x's rank: element i
// of the indices (and of the gathered result or the updates) stands for x's element at i's
// multi-index with the axis coordinate replaced by indices[i].
template <typename Index> struct ElementIndexing {
  const int64_t *xShape, *indexShape;
  const Index *indices;
  int rank, axis;

  int64_t count() const {
    int64_t n = 1;
    for (int d = 0; d < rank; ++d)
      n *= indexShape[d];
    return n;
  }
  bool inRange() const {
    const int64_t axisDim = xShape[axis];
    for (int64_t i = 0, n = count(); i < n; ++i)
      if (indices[i] < -axisDim || indices[i] >= axisDim)
        return false;
    return true;
  }
  int64_t offsetOf(int64_t i) const {
    int64_t rest = i, offset = 0, stride = 1;
    for (int d = rank - 1; d >= 0; --d) {
      int64_t at = rest % indexShape[d];
      rest /= indexShape[d];
      if (d == axis)
        at = indices[i] < 0 ? indices[i] + xShape[axis] : indices[i];
      offset += at * stride;
      stride *= xShape[d];
    }
    return offset;
  }
};

} // namespace

template <typename Index>
bool gatherElements(const void *x, const int64_t *xShape, const Index *indices,
                    const int64_t *indexShape, void *y, int rank, int axis, size_t elemSize) {
  ElementIndexing<Index> at{xShape, indexShape, indices, rank, axis};
  if (!at.inRange())
    return false;
  const char *src = static_cast<const char *>(x);
  char *dst = static_cast<char *>(y);
  for (int64_t i = 0, n = at.count(); i < n; ++i)
    std::memcpy(dst + i * elemSize, src + at.offsetOf(i) * int64_t(elemSize), elemSize);
  return true;
}

namespace {

template <typename T> void combine(T &target, T update, ScatterReduction reduction) {
  switch (reduction) {
  case ScatterReduction::None:
    target = update;
    break;
  case ScatterReduction::Add:
    target = T(target + update);
    break;
  case ScatterReduction::Mul:
    target = T(target * update);
    break;
  case ScatterReduction::Max:
    target = std::max(target, update);
    break;
  case ScatterReduction::Min:
    target = std::min(target, update);
    break;
  }
}

template <typename T> void copyUnlessAliased(const T *x, T *y, int64_t count) {
  if (x != y)
    std::memcpy(y, x, static_cast<size_t>(count) * sizeof(T));
}

} // namespace

template <typename T, typename Index>
bool scatterElements(const T *x, const int64_t *xShape, const Index *indices,
                     const int64_t *indexShape, const T *updates, T *y, int rank, int axis,
                     ScatterReduction reduction) {
  ElementIndexing<Index> at{xShape, indexShape, indices, rank, axis};
  if (!at.inRange())
    return false;
  int64_t total = 1;
  for (int d = 0; d < rank; ++d)
    total *= xShape[d];
  copyUnlessAliased(x, y, total);
  for (int64_t i = 0, n = at.count(); i < n; ++i)
    combine(y[at.offsetOf(i)], updates[i], reduction);
  return true;
}

// The element offset of index tuple `tuple` (k entries over dims [first, first + k) of
// `shape`), or -1 when an entry is out of range.
static int64_t tupleOffset(const int64_t *tuple, int k, const int64_t *shape, int first, int rank) {
  int64_t offset = 0;
  for (int j = 0; j < k; ++j) {
    int64_t dim = shape[first + j], at = tuple[j];
    if (at < -dim || at >= dim)
      return -1;
    offset = offset * dim + (at < 0 ? at + dim : at);
  }
  for (int d = first + k; d < rank; ++d)
    offset *= shape[d];
  return offset;
}

template <typename T>
bool scatterND(const T *x, const int64_t *xShape, int rank, const int64_t *indices, int64_t tuples,
               int k, const T *updates, T *y, ScatterReduction reduction) {
  int64_t total = 1, sliceSize = 1;
  for (int d = 0; d < rank; ++d)
    total *= xShape[d];
  for (int d = k; d < rank; ++d)
    sliceSize *= xShape[d];
  for (int64_t t = 0; t < tuples; ++t)
    if (tupleOffset(indices + t * k, k, xShape, 0, rank) < 0)
      return false;
  copyUnlessAliased(x, y, total);
  for (int64_t t = 0; t < tuples; ++t) {
    int64_t offset = tupleOffset(indices + t * k, k, xShape, 0, rank);
    for (int64_t e = 0; e < sliceSize; ++e)
      combine(y[offset + e], updates[t * sliceSize + e], reduction);
  }
  return true;
}

bool gatherND(const void *x, const int64_t *xShape, int rank, int batchDims, const int64_t *indices,
              int64_t batches, int64_t tuples, int k, void *y, size_t elemSize) {
  int64_t batchStride = 1, sliceSize = 1;
  for (int d = batchDims; d < rank; ++d)
    batchStride *= xShape[d];
  for (int d = batchDims + k; d < rank; ++d)
    sliceSize *= xShape[d];
  for (int64_t t = 0; t < batches * tuples; ++t)
    if (tupleOffset(indices + t * k, k, xShape, batchDims, rank) < 0)
      return false;
  const char *src = static_cast<const char *>(x);
  char *dst = static_cast<char *>(y);
  const size_t sliceBytes = static_cast<size_t>(sliceSize) * elemSize;
  for (int64_t b = 0; b < batches; ++b)
    for (int64_t t = 0; t < tuples; ++t) {
      int64_t offset = tupleOffset(indices + (b * tuples + t) * k, k, xShape, batchDims, rank);
      std::memcpy(dst + (b * tuples + t) * sliceBytes,
                  src + (b * batchStride + offset) * int64_t(elemSize), sliceBytes);
    }
  return true;
}

template <typename T>
void topK(const T *x, int64_t *indices, int64_t outer, int64_t n, int64_t inner, int64_t k,
          bool largest) {
  std::vector<int64_t> order(static_cast<size_t>(n));
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      const T *line = x + o * n * inner + i;
      for (int64_t j = 0; j < n; ++j)
        order[j] = j;
      // Ties keep index order: a stable selection of the k best.
      std::partial_sort(order.begin(), order.begin() + k, order.end(), [&](int64_t a, int64_t b) {
        T va = line[a * inner], vb = line[b * inner];
        if (va != vb)
          return largest ? va > vb : va < vb;
        return a < b;
      });
      for (int64_t j = 0; j < k; ++j)
        indices[(o * k + j) * inner + i] = order[j];
    }
}

#define DLC_INSTANTIATE_SCATTER(T)                                                                 \
  template bool scatterElements<T, int32_t>(const T *, const int64_t *, const int32_t *,           \
                                            const int64_t *, const T *, T *, int, int,             \
                                            ScatterReduction);                                     \
  template bool scatterElements<T, int64_t>(const T *, const int64_t *, const int64_t *,           \
                                            const int64_t *, const T *, T *, int, int,             \
                                            ScatterReduction);                                     \
  template bool scatterND<T>(const T *, const int64_t *, int, const int64_t *, int64_t, int,       \
                             const T *, T *, ScatterReduction);                                    \
  template void topK<T>(const T *, int64_t *, int64_t, int64_t, int64_t, int64_t, bool);
DLC_INSTANTIATE_SCATTER(float)
DLC_INSTANTIATE_SCATTER(double)
DLC_INSTANTIATE_SCATTER(int64_t)
DLC_INSTANTIATE_SCATTER(int32_t)
DLC_INSTANTIATE_SCATTER(uint8_t)
DLC_INSTANTIATE_SCATTER(int8_t)
DLC_INSTANTIATE_SCATTER(int16_t)
DLC_INSTANTIATE_SCATTER(uint16_t)
DLC_INSTANTIATE_SCATTER(uint32_t)
DLC_INSTANTIATE_SCATTER(uint64_t)
#undef DLC_INSTANTIATE_SCATTER

template bool gatherElements<int32_t>(const void *, const int64_t *, const int32_t *,
                                      const int64_t *, void *, int, int, size_t);
template bool gatherElements<int64_t>(const void *, const int64_t *, const int64_t *,
                                      const int64_t *, void *, int, int, size_t);

template void gatherGradF32<int32_t>(const float *, const int32_t *, int64_t, float *, int64_t,
                                     int64_t, int64_t);
template void gatherGradF32<int64_t>(const float *, const int64_t *, int64_t, float *, int64_t,
                                     int64_t, int64_t);

} // namespace rt
} // namespace dlc
