// Internal to the runtime: 3x3 stride-1 convolutions by Winograd's minimal filtering,
// F(4x4, 3x3) or F(2x2, 3x3). Each 4x4 (2x2) block of output takes 36 (16) multiplications per
// input channel instead of 144 (36): the input is cut into overlapping 6x6 (4x4) tiles, each
// transformed (B^T d B), multiplied by the transformed weights (G g G^T, computed once, when
// the compiler packs the weights) as one GEMM per tile position of (out channels x in
// channels) by (in channels x tiles), and transformed back (A^T m A). Used only with packed
// (constant) weights; convF32 otherwise takes im2col.
#ifndef DLC_RUNTIME_WINOGRAD_H
#define DLC_RUNTIME_WINOGRAD_H

#include "dlc_kernels.h"

namespace dlc {
namespace rt {

// Whether p has the shape Winograd serves (3x3, stride 1, enough channels); winogradApplies(p)
// (dlc_kernels.h) says whether it takes this path when its weights are packed, which the
// padded planes may take instead.
bool winogradShaped(const ConvParams &p);
// Transformed positions per tile: 36 for F(4x4, 3x3), taken where its tiles fill the GEMMs,
// 16 for F(2x2, 3x3) on smaller maps; 0 where Winograd does not apply.
int64_t winogradPositions(const ConvParams &p);
size_t winogradWeightBytes(const ConvParams &p);
// Transforms w (out x in x 3 x 3) and packs each of the 16 transformed matrices as sgemm's A.
void packWinogradWeights(const ConvParams &p, const float *w, float *packed);
size_t winogradWorkspaceBytes(const ConvParams &p);
// convF32 for winogradApplies(p) and `packed` from packWinogradWeights.
void winogradConvF32(const ConvParams &p, const float *x, const float *packed, const float *bias,
                     const float *residual, float *y, float *workspace);

} // namespace rt
} // namespace dlc

#endif
