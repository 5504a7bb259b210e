#include "dlc_runtime.h"

#include <cmath>

namespace dlc {
namespace rt {

namespace {

// splitmix64's output function: a bijection on 64 bits whose every output bit depends on
// every input bit, so consecutive inputs give independent-looking outputs.
uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

constexpr uint64_t kGoldenGamma = 0x9e3779b97f4a7c15ull;

} // namespace

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
  // Element i takes the i-th output of a splitmix64 stream whose state is a hash of
  // (seed, counter): stateless, so any element of any step can be recomputed from the seed and
  // the step number alone, and steps of one seed get unrelated streams.
  const uint64_t stream = mix64(seed ^ mix64(counter + kGoldenGamma));
  const float keep = 1.0f / (1.0f - ratio);
  for (int64_t i = 0; i < n; ++i) {
    const uint64_t bits = mix64(stream + (static_cast<uint64_t>(i) + 1) * kGoldenGamma);
    // The top 24 bits give u uniform on [0, 1) exactly representable in float; P(u < ratio)
    // is ratio rounded up to a multiple of 2^-24, and ratio 0 never drops.
    const float u = static_cast<float>(bits >> 40) * (1.0f / 16777216.0f);
    mask[i] = u < ratio ? 0.0f : keep;
  }
}

} // namespace rt
} // namespace dlc
