// Internal to the runtime: a 4 x 4 register transpose of 4-byte elements, shared by the
// transposes (data.cpp) and the GEMM's packing (gemm_kernel.h, gemm.cpp). Internal linkage, for
// the reason gemm_kernel.h gives.
#ifndef DLC_RUNTIME_TRANSPOSE_QUAD_H
#define DLC_RUNTIME_TRANSPOSE_QUAD_H

#include <cstdint>
#include <cstring>
#if defined(__SSE__)
#include <xmmintrin.h>
#endif

namespace dlc {
namespace rt {
namespace {

// to[j][i] = from[i][j] for a 4 x 4 tile of 4-byte elements; strides in bytes. With
// `columnScale` (4 floats; the elements are floats), from[i][j] * columnScale[j], one rounding.
inline void transposeQuad(const char *from, int64_t fromStride, char *to, int64_t toStride,
                          const float *columnScale = nullptr) {
#if defined(__SSE__)
  __m128 r0 = _mm_loadu_ps(reinterpret_cast<const float *>(from));
  __m128 r1 = _mm_loadu_ps(reinterpret_cast<const float *>(from + fromStride));
  __m128 r2 = _mm_loadu_ps(reinterpret_cast<const float *>(from + 2 * fromStride));
  __m128 r3 = _mm_loadu_ps(reinterpret_cast<const float *>(from + 3 * fromStride));
  if (columnScale) {
    const __m128 scale = _mm_loadu_ps(columnScale);
    r0 = _mm_mul_ps(r0, scale);
    r1 = _mm_mul_ps(r1, scale);
    r2 = _mm_mul_ps(r2, scale);
    r3 = _mm_mul_ps(r3, scale);
  }
  _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
  _mm_storeu_ps(reinterpret_cast<float *>(to), r0);
  _mm_storeu_ps(reinterpret_cast<float *>(to + toStride), r1);
  _mm_storeu_ps(reinterpret_cast<float *>(to + 2 * toStride), r2);
  _mm_storeu_ps(reinterpret_cast<float *>(to + 3 * toStride), r3);
#else
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) {
      float v;
      std::memcpy(&v, from + i * fromStride + j * 4, 4);
      if (columnScale)
        v *= columnScale[j];
      std::memcpy(to + j * toStride + i * 4, &v, 4);
    }
#endif
}

// Four rows of `depth` floats (`ld` apart from `rows`) into four columns of a panel `width`
// floats wide (row p of the panel at panel + p * width): the GEMM's packing of a row-major
// operand into column panels (gemm_kernel.h's A, gemm.cpp's keys read by row). With `scale`
// (depth floats), column p times scale[p], one rounding: an unfused per-channel Mul's.
inline void packFourRows(const float *rows, int64_t ld, int64_t depth, float *panel,
                         int64_t width, const float *scale = nullptr) {
  int64_t p = 0;
  for (; p + 4 <= depth; p += 4)
    transposeQuad(reinterpret_cast<const char *>(rows + p), ld * 4,
                  reinterpret_cast<char *>(panel + p * width), width * 4,
                  scale ? scale + p : nullptr);
  for (; p < depth; ++p)
    for (int64_t r = 0; r < 4; ++r)
      panel[p * width + r] = scale ? rows[r * ld + p] * scale[p] : rows[r * ld + p];
}

} // namespace
} // namespace rt
} // namespace dlc

#endif
