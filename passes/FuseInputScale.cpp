#include "dialects/DlcDialect.h"
#include "passes/Passes.h"

namespace dlc {
#define GEN_PASS_DEF_FUSEINPUTSCALE
#include "passes/Passes.h.inc"
} // namespace dlc

using namespace mlir;

namespace {

// Whether `scale` is one factor per image and channel of the channels-last `x`.
bool isChannelScale(Value scale, Value x) {
  auto scaleType = cast<RankedTensorType>(scale.getType());
  auto xType = cast<RankedTensorType>(x.getType());
  return scaleType.getElementType().isF32() && xType.getRank() == 4 &&
         scaleType.getShape() ==
             ArrayRef<int64_t>{xType.getDimSize(0), 1, 1, xType.getDimSize(3)};
}

// The scale and the scaled value of a Mul the convolution can take over: the Mul's only use
// is the input of a channels-last pointwise convolution without a scale, in its block.
std::optional<std::pair<Value, Value>> fusableScale(dlc::MulOp mul) {
  if (!mul.getResult().hasOneUse())
    return std::nullopt;
  OpOperand &use = *mul.getResult().getUses().begin();
  auto conv = dyn_cast<dlc::ConvOp>(use.getOwner());
  if (!conv || &use != &conv.getInputMutable() || !conv.getChannelsLast() ||
      conv.getInputScale() || conv->getBlock() != mul->getBlock() || conv.getGroup() != 1)
    return std::nullopt;
  auto weight = cast<RankedTensorType>(conv.getWeight().getType());
  if (weight.getDimSize(2) != 1 || weight.getDimSize(3) != 1)
    return std::nullopt;
  for (unsigned i = 0; i < 2; ++i) {
    Value x = mul->getOperand(i), scale = mul->getOperand(1 - i);
    if (x.getType() == mul.getType() && isChannelScale(scale, x))
      return std::make_pair(scale, x);
  }
  return std::nullopt;
}

struct FuseInputScalePass : dlc::impl::FuseInputScaleBase<FuseInputScalePass> {
  void runOnOperation() override {
    SmallVector<dlc::MulOp> muls;
    getOperation().walk([&](dlc::MulOp mul) { muls.push_back(mul); });
    for (dlc::MulOp mul : muls) {
      auto fusion = fusableScale(mul);
      if (!fusion)
        continue;
      // The Mul's operands come before it, so before the conv, which stays in place.
      auto conv = cast<dlc::ConvOp>(*mul.getResult().getUsers().begin());
      conv.getInputMutable().assign(fusion->second);
      conv.getInputScaleMutable().assign(fusion->first);
      mul.erase();
    }
  }
};

} // namespace
