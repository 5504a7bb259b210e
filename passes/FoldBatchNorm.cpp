#include "dialects/DlcDialect.h"
#include "passes/Passes.h"

#include "mlir/IR/Builders.h"

#include <cmath>
#include <cstring>

namespace dlc {
#define GEN_PASS_DEF_FOLDBATCHNORM
#include "passes/Passes.h.inc"
} // namespace dlc

using namespace mlir;

namespace {

std::vector<float> floats(Value v) {
  std::vector<char> bytes = cast<dlc::ConstantOp>(v.getDefiningOp()).getBytes();
  std::vector<float> out(bytes.size() / sizeof(float));
  std::memcpy(out.data(), bytes.data(), out.size() * sizeof(float));
  return out;
}

ArrayRef<char> asBytes(const std::vector<float> &v) {
  return ArrayRef<char>(reinterpret_cast<const char *>(v.data()), v.size() * sizeof(float));
}

bool isConstant(Value v) { return v && v.getDefiningOp<dlc::ConstantOp>(); }

// conv -> batch_norm with constant parameters becomes one conv:
//   s = scale / sqrt(var + eps);  w' = w * s (per output channel);  b' = (b - mean) * s + bias
void fold(dlc::BatchNormOp bn) {
  auto conv = bn.getInput().getDefiningOp<dlc::ConvOp>();
  // Batch statistics depend on the input: nothing to fold.
  // A fused residual or activation comes before the batch norm, so it cannot fold; a
  // channels-last conv's channels are not the batch norm's dim 1.
  if (bn->hasAttr(dlc::kBatchStatisticsAttr) || !conv || !conv->hasOneUse() ||
      !isConstant(conv.getWeight()) || (conv.getBias() && !isConstant(conv.getBias())) ||
      conv.getResidual() || conv->hasAttr(dlc::kActivationAttr) || conv.getChannelsLast())
    return;
  for (Value param : {bn.getScale(), bn.getBias(), bn.getMean(), bn.getVariance()})
    if (!isConstant(param))
      return;
  std::vector<float> scale = floats(bn.getScale()), shift = floats(bn.getBias()),
                     mean = floats(bn.getMean()), var = floats(bn.getVariance()),
                     weight = floats(conv.getWeight());
  size_t channels = scale.size(), perChannel = weight.size() / channels;
  std::vector<float> bias = conv.getBias() ? floats(conv.getBias())
                                           : std::vector<float>(channels, 0.0f);
  float eps = bn.getEpsilon().convertToFloat();
  for (size_t c = 0; c < channels; ++c) {
    float s = scale[c] / std::sqrt(var[c] + eps);
    for (size_t i = 0; i < perChannel; ++i)
      weight[c * perChannel + i] *= s;
    bias[c] = (bias[c] - mean[c]) * s + shift[c];
  }
  OpBuilder b(bn);
  auto weightType = cast<RankedTensorType>(conv.getWeight().getType());
  auto biasType = RankedTensorType::get({int64_t(channels)}, weightType.getElementType());
  Value newWeight = dlc::ConstantOp::fromBytes(b, conv.getWeight().getLoc(), weightType,
                                               asBytes(weight), "folded_weight");
  Value newBias = dlc::ConstantOp::fromBytes(b, bn.getLoc(), biasType, asBytes(bias),
                                             "folded_bias");
  // The folded op keeps the batch norm's location: its result is the batch norm's value.
  auto folded = b.create<dlc::ConvOp>(bn.getLoc(), bn.getType(), conv.getInput(), newWeight,
                                      newBias, Value(), Value(), conv.getStridesAttr(),
                                      conv.getPadsAttr(), conv.getDilationsAttr(),
                                      conv.getGroupAttr(), UnitAttr());
  bn.replaceAllUsesWith(folded.getResult());
  bn.erase();
  conv.erase();
}

struct FoldBatchNormPass : dlc::impl::FoldBatchNormBase<FoldBatchNormPass> {
  void runOnOperation() override {
    SmallVector<dlc::BatchNormOp> norms;
    getOperation().walk([&](dlc::BatchNormOp bn) { norms.push_back(bn); });
    for (dlc::BatchNormOp bn : norms)
      fold(bn);
  }
};

} // namespace
