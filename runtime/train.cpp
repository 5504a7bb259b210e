#include "dlc_kernels.h"
#include "scalar_ops.h"

#include <cmath>

namespace dlc {
namespace rt {

void sgdUpdateF32(float *w, const float *g, float *momentumBuf, int64_t n, float lr, float momentum,
                  float weightDecay, bool nesterov, bool firstStep) {
  for (int64_t i = 0; i < n; ++i) {
    float d = g[i] + weightDecay * w[i];
    if (momentum != 0.0f) {
      // The buffer holds nothing before the first step (PyTorch's is None); it starts at d.
      float buf = firstStep ? d : momentum * momentumBuf[i] + d;
      momentumBuf[i] = buf;
      d = nesterov ? d + momentum * buf : buf;
    }
    w[i] -= lr * d;
  }
}

void adamUpdateF32(float *w, const float *g, float *m, float *v, int64_t n, float lr, float beta1,
                   float beta2, float eps, float weightDecay, bool decoupled, float biasCorrection1,
                   float biasCorrection2) {
  const float stepSize = lr / biasCorrection1;
  const float correction2Sqrt = std::sqrt(biasCorrection2);
  const float decay = decoupled ? 1.0f - lr * weightDecay : 1.0f;
  const float coupledDecay = decoupled ? 0.0f : weightDecay;
  for (int64_t i = 0; i < n; ++i) {
    const float wi = w[i] * decay;
    const float gi = g[i] + coupledDecay * wi;
    // torch.optim.Adam moves m toward g with lerp, which for beta1 > 0.5 rounds as this does.
    const float mi = m[i] + (1.0f - beta1) * (gi - m[i]);
    const float vi = v[i] * beta2 + (1.0f - beta2) * gi * gi;
    m[i] = mi;
    v[i] = vi;
    w[i] = wi - stepSize * (mi / (std::sqrt(vi) / correction2Sqrt + eps));
  }
}

void dropoutMaskF32(uint64_t seed, uint64_t counter, float ratio, float *mask, int64_t n) {
  // Stateless (scalar_ops.h), so any element of any step can be recomputed from the seed and
  // the step number alone: the CUDA target draws the same mask.
  const uint64_t stream = scalar::dropoutStream(seed, counter);
  for (int64_t i = 0; i < n; ++i)
    mask[i] = scalar::dropoutMaskElement(stream, static_cast<uint64_t>(i), ratio);
}

} // namespace rt
} // namespace dlc
