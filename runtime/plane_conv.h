// Internal to the runtime: grouped 2-d convolutions as products over their zero-padded input
// planes (plane_conv.cpp, kernel in plane_conv_kernel.h). Used only with packed (constant)
// weights, where paddedPlanesApply (dlc_kernels.h) holds; convF32 otherwise takes im2col.
#ifndef DLC_RUNTIME_PLANE_CONV_H
#define DLC_RUNTIME_PLANE_CONV_H

#include "dlc_kernels.h"

namespace dlc {
namespace rt {

size_t planeWeightBytes(const ConvParams &p);
// w (out x in / groups x kernel) as the kernel's panels of output channels, group by group.
void packPlaneWeights(const ConvParams &p, const float *w, float *packed);
size_t planeWorkspaceBytes(const ConvParams &p);
// convF32 for paddedPlanesApply(p) and `packed` from packPlaneWeights.
void planeConvF32(const ConvParams &p, const float *x, const float *packed, const float *bias,
                  const float *residual, float *y, float *workspace);

} // namespace rt
} // namespace dlc

#endif
