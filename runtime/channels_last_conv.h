// Internal to the runtime: the channels-last (N, H, W, C) convolutions, where the layout pass
// switched them (channelsLastApplies, dlc_kernels.h): depthwise ones and those over planar
// input row by row, pointwise ones as blocks of pixels times the packed weights
// (channels_last_conv.cpp, kernels in depthwise_kernel.h, planar_input_kernel.h and
// pointwise_kernel.h). Used only with packed (constant) weights.
#ifndef DLC_RUNTIME_CHANNELS_LAST_CONV_H
#define DLC_RUNTIME_CHANNELS_LAST_CONV_H

#include "dlc_kernels.h"

namespace dlc {
namespace rt {

// A depthwise convolution with one output channel per input channel (a 1-channel pointwise
// one with several outputs counts as depthwise, with a channel multiplier, and is not one).
bool isChannelsLastDepthwise(const ConvParams &p);
// convF32 for p.channelsLast: the weights packed tap-major (depthwise) or as GEMM B
// (pointwise); inputScale (pointwise only, or null) multiplies each image's input channels.
void depthwiseChannelsLastF32(const ConvParams &p, const float *x, const float *packedW,
                              const float *bias, const float *residual, float *y);
// The weights packed with the output channels innermost (PlanarInputRowArgs); x is planar.
void planarInputChannelsLastF32(const ConvParams &p, const float *x, const float *packedW,
                                const float *bias, const float *residual, float *y);
void pointwiseChannelsLastF32(const ConvParams &p, const float *x, const float *packedW,
                              const float *bias, const float *residual, float *y,
                              const float *inputScale);

} // namespace rt
} // namespace dlc

#endif
