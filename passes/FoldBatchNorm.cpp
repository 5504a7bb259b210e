#include "dialects/DlcDialect.h"
#include "passes/Passes.h"

#include "mlir/IR/Builders.h"

#include <cmath>

namespace dlc {
#define GEN_PASS_DEF_FOLDBATCHNORM
#include "passes/Passes.h.inc"
} // namespace dlc

using namespace mlir;

namespace {

std::vector<float> floats(Value v) {
  return cast<dlc::ConstantOp>(v.getDefiningOp()).getFloats();
}

bool isConstant(Value v) { return v && v.getDefiningOp<dlc::ConstantOp>(); }

// The batch norm as y = x * s + t per channel, when its parameters are constants and it
// normalizes with them (batch statistics depend on the input: nothing to fold).
struct ChannelAffine {
  std::vector<float> s, t;
};
std::optional<ChannelAffine> channelAffine(dlc::BatchNormOp bn) {
  if (bn->hasAttr(dlc::kBatchStatisticsAttr))
    return std::nullopt;
  for (Value param : {bn.getScale(), bn.getBias(), bn.getMean(), bn.getVariance()})
    if (!isConstant(param))
      return std::nullopt;
  std::vector<float> scale = floats(bn.getScale()), shift = floats(bn.getBias()),
                     mean = floats(bn.getMean()), var = floats(bn.getVariance());
  const float eps = bn.getEpsilon().convertToFloat();
  ChannelAffine affine{std::vector<float>(scale.size()), std::vector<float>(scale.size())};
  for (size_t c = 0; c < scale.size(); ++c) {
    affine.s[c] = scale[c] / std::sqrt(var[c] + eps);
    affine.t[c] = shift[c] - mean[c] * affine.s[c];
  }
  return affine;
}

// b' = (b - mean) * s + bias = b * s + t, per channel.
std::vector<float> foldedBias(const ChannelAffine &affine, std::vector<float> bias) {
  bias.resize(affine.s.size(), 0.0f);
  for (size_t c = 0; c < bias.size(); ++c)
    bias[c] = bias[c] * affine.s[c] + affine.t[c];
  return bias;
}

// conv -> batch_norm becomes one conv: w' = w * s (per output channel), and the bias b'.
void fold(dlc::BatchNormOp bn) {
  auto conv = bn.getInput().getDefiningOp<dlc::ConvOp>();
  // A fused residual or activation comes before the batch norm, so it cannot fold; a
  // channels-last conv's channels are not the batch norm's dim 1.
  if (!conv || !conv->hasOneUse() || !isConstant(conv.getWeight()) ||
      (conv.getBias() && !isConstant(conv.getBias())) || conv.getResidual() ||
      conv->hasAttr(dlc::kActivationAttr) || conv.getChannelsLast())
    return;
  std::optional<ChannelAffine> affine = channelAffine(bn);
  if (!affine)
    return;
  std::vector<float> weight = floats(conv.getWeight());
  const size_t channels = affine->s.size(), perChannel = weight.size() / channels;
  for (size_t c = 0; c < channels; ++c)
    for (size_t i = 0; i < perChannel; ++i)
      weight[c * perChannel + i] *= affine->s[c];
  std::vector<float> bias =
      foldedBias(*affine, conv.getBias() ? floats(conv.getBias()) : std::vector<float>());
  OpBuilder b(bn);
  auto weightType = cast<RankedTensorType>(conv.getWeight().getType());
  auto biasType = RankedTensorType::get({int64_t(channels)}, weightType.getElementType());
  Value newWeight = dlc::ConstantOp::fromFloats(b, conv.getWeight().getLoc(), weightType,
                                                weight, "folded_weight");
  Value newBias = dlc::ConstantOp::fromFloats(b, bn.getLoc(), biasType, bias, "folded_bias");
  // The folded op keeps the batch norm's location: its result is the batch norm's value.
  auto folded = b.create<dlc::ConvOp>(bn.getLoc(), bn.getType(), conv.getInput(), newWeight,
                                      newBias, Value(), Value(), conv.getStridesAttr(),
                                      conv.getPadsAttr(), conv.getDilationsAttr(),
                                      conv.getGroupAttr(), UnitAttr());
  bn.replaceAllUsesWith(folded.getResult());
  bn.erase();
  conv.erase();
}

// A constant of one value per channel of `result` (dim 1), broadcast over the others.
bool isPerChannel(Value v, Value result) {
  auto type = cast<RankedTensorType>(v.getType());
  auto shape = cast<RankedTensorType>(result.getType()).getShape();
  if (!isConstant(v) || type.getNumElements() != shape[1] ||
      type.getRank() > int64_t(shape.size()))
    return false;
  // Aligned at the end, the dim of C elements must fall on the result's dim 1.
  const int64_t offset = int64_t(shape.size()) - type.getRank();
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (type.getDimSize(d) != 1 && d + offset != 1)
      return false;
  return true;
}

// A transposed convolution (conv_grad_input, ConvTranspose's form), with or without its
// per-channel bias Add, -> batch_norm becomes the same with its weights scaled per output
// channel and one bias Add: the upsampling blocks of FPN and UNet decoders and DB heads. The
// weight is [C_in, C_out / group, k...], output channel g * C_out / group + c' for entry
// [i, c', ...] of group g = i / (C_in / group).
void foldTransposed(dlc::BatchNormOp bn) {
  Value input = bn.getInput();
  auto add = input.getDefiningOp<dlc::AddOp>();
  Value product = input, bias;
  if (add && input.hasOneUse()) {
    for (unsigned i = 0; i < 2 && !bias; ++i)
      if (add->getOperand(i).getDefiningOp<dlc::ConvGradInputOp>() &&
          isPerChannel(add->getOperand(1 - i), input)) {
        product = add->getOperand(i);
        bias = add->getOperand(1 - i);
      }
    if (!bias)
      return;
  }
  auto transposed = product.getDefiningOp<dlc::ConvGradInputOp>();
  if (!transposed || !product.hasOneUse() || !isConstant(transposed.getWeight()) ||
      product.getType() != bn.getType())
    return;
  std::optional<ChannelAffine> affine = channelAffine(bn);
  if (!affine)
    return;
  std::vector<float> weight = floats(transposed.getWeight());
  auto weightType = cast<RankedTensorType>(transposed.getWeight().getType());
  const int64_t group = transposed.getGroup(), inChannels = weightType.getDimSize(0);
  const int64_t outPerGroup = weightType.getDimSize(1);
  const int64_t perEntry = int64_t(weight.size()) / (inChannels * outPerGroup);
  for (int64_t i = 0; i < inChannels; ++i)
    for (int64_t c = 0; c < outPerGroup; ++c) {
      const float s = affine->s[size_t(i / (inChannels / group) * outPerGroup + c)];
      for (int64_t k = 0; k < perEntry; ++k)
        weight[size_t((i * outPerGroup + c) * perEntry + k)] *= s;
    }
  std::vector<float> newBias = foldedBias(*affine, bias ? floats(bias) : std::vector<float>());
  OpBuilder b(bn);
  Value newWeight = dlc::ConstantOp::fromFloats(b, transposed.getWeight().getLoc(), weightType,
                                                weight, "folded_weight");
  SmallVector<int64_t> biasShape(cast<RankedTensorType>(bn.getType()).getRank() - 1, 1);
  biasShape[0] = int64_t(newBias.size());
  Value biasValue = dlc::ConstantOp::fromFloats(
      b, bn.getLoc(), RankedTensorType::get(biasShape, weightType.getElementType()), newBias,
      "folded_bias");
  auto folded = b.create<dlc::ConvGradInputOp>(
      transposed.getLoc(), transposed.getType(), transposed.getGrad(), newWeight,
      transposed.getStridesAttr(), transposed.getPadsAttr(), transposed.getDilationsAttr(),
      transposed.getGroupAttr());
  // The Add computes the batch norm's value: it takes the batch norm's location.
  auto sum = b.create<dlc::AddOp>(bn.getLoc(), bn.getType(), folded.getResult(), biasValue);
  bn.replaceAllUsesWith(sum.getResult());
  bn.erase();
  if (add)
    add.erase();
  transposed.erase();
}

struct FoldBatchNormPass : dlc::impl::FoldBatchNormBase<FoldBatchNormPass> {
  void runOnOperation() override {
    SmallVector<dlc::BatchNormOp> norms;
    getOperation().walk([&](dlc::BatchNormOp bn) { norms.push_back(bn); });
    for (dlc::BatchNormOp bn : norms) {
      if (bn.getInput().getDefiningOp<dlc::ConvOp>())
        fold(bn);
      else
        foldTransposed(bn);
    }
  }
};

} // namespace
