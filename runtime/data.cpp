#include "dlc_runtime.h"

#include <cstring>

namespace dlc {
namespace rt {

namespace {

template <size_t N>
void copyElementsStrided(const char *src, int64_t srcStride, char *dst, int64_t count) {
  // memcpy of a constant size compiles to one load and store without breaking aliasing rules.
  for (int64_t i = 0; i < count; ++i)
    std::memcpy(dst + i * static_cast<int64_t>(N), src + i * srcStride, N);
}

// Copies `count` chunks of `chunkBytes` that sit srcStride bytes apart (stride may be negative)
// into consecutive memory at dst.
void copyChunks(const char *src, int64_t srcStride, char *dst, int64_t count, size_t chunkBytes) {
  if (srcStride == static_cast<int64_t>(chunkBytes)) {
    std::memcpy(dst, src, static_cast<size_t>(count) * chunkBytes);
    return;
  }
  switch (chunkBytes) {
  case 1:
    return copyElementsStrided<1>(src, srcStride, dst, count);
  case 2:
    return copyElementsStrided<2>(src, srcStride, dst, count);
  case 4:
    return copyElementsStrided<4>(src, srcStride, dst, count);
  case 8:
    return copyElementsStrided<8>(src, srcStride, dst, count);
  default:
    for (int64_t i = 0; i < count; ++i)
      std::memcpy(dst + i * static_cast<int64_t>(chunkBytes), src + i * srcStride, chunkBytes);
  }
}

int64_t productFrom(const int64_t *shape, int begin, int end) {
  int64_t p = 1;
  for (int d = begin; d < end; ++d)
    p *= shape[d];
  return p;
}

// Shared walk for transpose and slice: output dims [0, walked) are iterated recursively (so
// any rank works without index storage) and every step of the innermost one copies a chunk of
// chunkBytes. size(d) is output dim d's extent, stride(d) its source byte stride.
template <typename SizeFn, typename StrideFn> struct ChunkWalker {
  int walked;
  SizeFn size;
  StrideFn stride;
  size_t chunkBytes;

  void walk(int dim, const char *src, char *&dst) const {
    int64_t n = size(dim), step = stride(dim);
    if (dim == walked - 1) {
      copyChunks(src, step, dst, n, chunkBytes);
      dst += n * static_cast<int64_t>(chunkBytes);
      return;
    }
    for (int64_t i = 0; i < n; ++i)
      walk(dim + 1, src + i * step, dst);
  }
};

template <typename SizeFn, typename StrideFn>
void walkChunks(const char *src, char *dst, int walked, SizeFn size, StrideFn stride,
                size_t chunkBytes) {
  if (chunkBytes == 0)
    return;
  for (int d = 0; d < walked; ++d)
    if (size(d) == 0)
      return;
  if (walked == 0) {
    std::memcpy(dst, src, chunkBytes);
    return;
  }
  ChunkWalker<SizeFn, StrideFn>{walked, size, stride, chunkBytes}.walk(0, src, dst);
}

} // namespace

void copyBytes(const void *x, void *y, size_t bytes) {
  // Aliased buffers (an in-place reshape) need no copy, and memcpy forbids them.
  if (bytes != 0 && x != y)
    std::memcpy(y, x, bytes);
}

void transpose(const void *x, void *y, size_t elemSize, const int64_t *inShape, const int64_t *perm,
               int rank) {
  // Trailing output dims that keep their input position form contiguous chunks.
  int walked = rank;
  while (walked > 0 && perm[walked - 1] == walked - 1)
    --walked;
  auto size = [&](int d) { return inShape[perm[d]]; };
  auto stride = [&](int d) {
    return productFrom(inShape, static_cast<int>(perm[d]) + 1, rank) *
           static_cast<int64_t>(elemSize);
  };
  walkChunks(static_cast<const char *>(x), static_cast<char *>(y), walked, size, stride,
             static_cast<size_t>(productFrom(inShape, walked, rank)) * elemSize);
}

void concat(const void *const *inputs, const int64_t *axisSizes, int count, void *y, int64_t outer,
            int64_t inner, size_t elemSize) {
  char *dst = static_cast<char *>(y);
  for (int64_t o = 0; o < outer; ++o) {
    for (int i = 0; i < count; ++i) {
      size_t bytes = static_cast<size_t>(axisSizes[i] * inner) * elemSize;
      if (bytes == 0)
        continue;
      std::memcpy(dst, static_cast<const char *>(inputs[i]) + o * bytes, bytes);
      dst += bytes;
    }
  }
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
  for (int64_t o = 0; o < outer; ++o) {
    const char *block = src + static_cast<size_t>(o * axisDim) * rowBytes;
    for (int64_t j = 0; j < numIndices; ++j, dst += rowBytes) {
      int64_t idx = static_cast<int64_t>(indices[j]);
      if (idx < 0)
        idx += axisDim;
      std::memcpy(dst, block + static_cast<size_t>(idx) * rowBytes, rowBytes);
    }
  }
  return true;
}

template bool gather<int32_t>(const void *, const int32_t *, int64_t, void *, int64_t, int64_t,
                              int64_t, size_t);
template bool gather<int64_t>(const void *, const int64_t *, int64_t, void *, int64_t, int64_t,
                              int64_t, size_t);

void slice(const void *x, void *y, size_t elemSize, const int64_t *inShape, const int64_t *starts,
           const int64_t *steps, const int64_t *outShape, int rank) {
  // An empty result may come with starts outside the input; never form those addresses.
  for (int d = 0; d < rank; ++d)
    if (outShape[d] == 0)
      return;
  // Trailing dims taken whole form contiguous chunks.
  int walked = rank;
  while (walked > 0 && starts[walked - 1] == 0 && steps[walked - 1] == 1 &&
         outShape[walked - 1] == inShape[walked - 1])
    --walked;
  const char *src = static_cast<const char *>(x);
  for (int d = 0; d < walked; ++d)
    src += starts[d] * productFrom(inShape, d + 1, rank) * static_cast<int64_t>(elemSize);
  auto size = [&](int d) { return outShape[d]; };
  auto stride = [&](int d) {
    return steps[d] * productFrom(inShape, d + 1, rank) * static_cast<int64_t>(elemSize);
  };
  walkChunks(src, static_cast<char *>(y), walked, size, stride,
             static_cast<size_t>(productFrom(inShape, walked, rank)) * elemSize);
}

} // namespace rt
} // namespace dlc
