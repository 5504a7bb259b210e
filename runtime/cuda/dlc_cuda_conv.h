// A dlc convolution as cuDNN's N-d descriptors describe it: a pure function of the
// convolution's parameters, shared by the compiler (which decides at compile time whether
// cuDNN can run a convolution) and the CUDA runtime (which builds the descriptors at create
// time). Needs no CUDA header.
#ifndef DLC_CUDA_CONV_H
#define DLC_CUDA_CONV_H

#include "dlc_kernels.h"

#include <stdint.h>

namespace dlc {
namespace cuda {

struct CudnnConvShape {
  // 2 (NCHW) or 3 (NCDHW) spatial dims: cuDNN takes no fewer than 2, so a 1-d convolution
  // gets a leading height of 1, and a 2-d one is never widened to 3 (slower algorithms).
  int spatial;
  int input[5], filter[5], output[5]; // N C spatial..., K C/groups spatial..., N K spatial...
  int pad[3], stride[3], dilation[3];
  int groups;
};

// cuDNN's shape of convolution `p` (channels-first, float32), or false when cuDNN cannot run
// it as dlc defines it: a dim or a tensor's element count beyond int, or padding that is not the
// same at both ends of a dim (cuDNN pads symmetrically, so its output size would differ from
// `p.window.out`).
inline bool cudnnConvShape(const dlc::rt::ConvParams &p, CudnnConvShape &shape) {
  // Unused trailing dims are zero: the compiler prints the whole shape into generated code,
  // which must not depend on what the memory held before.
  shape = CudnnConvShape{};
  const dlc::rt::WindowParams &w = p.window;
  const int64_t limit = 0x7fffffff;
  // The first of WindowParams' three spatial dims is 1 for 1-d and 2-d convolutions.
  const bool flat = w.in[0] == 1 && w.out[0] == 1 && w.kernel[0] == 1 && w.padBegin[0] == 0;
  shape.spatial = flat ? 2 : 3;
  const int first = flat ? 1 : 0;
  const int64_t lead[3][2] = {{w.batch, w.channels},
                              {p.outChannels, p.groups ? w.channels / p.groups : 0},
                              {w.batch, p.outChannels}};
  int *dims[3] = {shape.input, shape.filter, shape.output};
  for (int t = 0; t < 3; ++t) {
    for (int i = 0; i < 2; ++i) {
      if (lead[t][i] < 1 || lead[t][i] > limit)
        return false;
      dims[t][i] = int(lead[t][i]);
    }
  }
  for (int d = first; d < 3; ++d) {
    const int64_t values[] = {w.in[d],       w.kernel[d], w.out[d],
                              w.padBegin[d], w.stride[d], w.dilation[d]};
    for (int64_t v : values)
      if (v < 0 || v > limit)
        return false;
    const int at = d - first;
    shape.input[2 + at] = int(w.in[d]);
    shape.filter[2 + at] = int(w.kernel[d]);
    shape.output[2 + at] = int(w.out[d]);
    shape.pad[at] = int(w.padBegin[d]);
    shape.stride[at] = int(w.stride[d]);
    shape.dilation[at] = int(w.dilation[d]);
    if (w.stride[d] < 1 || w.dilation[d] < 1)
      return false;
    // The output size cuDNN computes with the same padding at the end.
    const int64_t extent = w.in[d] + 2 * w.padBegin[d] - w.dilation[d] * (w.kernel[d] - 1) - 1;
    if (extent < 0 || extent / w.stride[d] + 1 != w.out[d])
      return false;
  }
  // cuDNN's strides and element counts are ints too.
  for (const int *tensor : dims) {
    int64_t elements = 1;
    for (int d = 0; d < shape.spatial + 2; ++d)
      if ((elements *= tensor[d]) > limit)
        return false;
  }
  shape.groups = int(p.groups);
  return p.groups >= 1 && w.channels % p.groups == 0 && p.outChannels % p.groups == 0 &&
         !p.channelsLast;
}

} // namespace cuda
} // namespace dlc

#endif // DLC_CUDA_CONV_H
