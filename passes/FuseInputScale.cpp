#include "dialects/DlcDialect.h"
#include "passes/Passes.h"

namespace dlc {
#define GEN_PASS_DEF_FUSEINPUTSCALE
#include "passes/Passes.h.inc"
} // namespace dlc

using namespace mlir;

namespace {

// Whether `scale` is one factor per image and channel of the 2-d map `x`, channels-last or
// channels-first.
bool isChannelScale(Value scale, Value x, bool channelsLast) {
  auto scaleType = cast<RankedTensorType>(scale.getType());
  auto xType = cast<RankedTensorType>(x.getType());
  if (!scaleType.getElementType().isF32() || xType.getRank() != 4)
    return false;
  const int64_t n = xType.getDimSize(0);
  return channelsLast
             ? scaleType.getShape() == ArrayRef<int64_t>{n, 1, 1, xType.getDimSize(3)}
             : scaleType.getShape() == ArrayRef<int64_t>{n, xType.getDimSize(1), 1, 1};
}

// A 2-d convolution whose outputs each read one input position (a 1x1 window, no stride or
// padding), of one group and more than one input channel (of one, the runtime takes it as
// depthwise): its kernels scale the channels they read.
bool isPointwise(dlc::ConvOp conv) {
  auto weight = cast<RankedTensorType>(conv.getWeight().getType());
  auto isOne = [](int64_t v) { return v == 1; };
  return conv.getGroup() == 1 && weight.getRank() == 4 && weight.getDimSize(1) > 1 &&
         weight.getDimSize(2) == 1 &&
         weight.getDimSize(3) == 1 && llvm::all_of(conv.getStrides(), isOne) &&
         llvm::all_of(conv.getPads(), [](int64_t pad) { return pad == 0; });
}

// The scale and the scaled value of a Mul the convolution can take over: the Mul's only use
// is the input of a pointwise convolution without a scale, in its block.
std::optional<std::pair<Value, Value>> fusableScale(dlc::MulOp mul) {
  if (!mul.getResult().hasOneUse())
    return std::nullopt;
  OpOperand &use = *mul.getResult().getUses().begin();
  auto conv = dyn_cast<dlc::ConvOp>(use.getOwner());
  if (!conv || &use != &conv.getInputMutable() || conv.getInputScale() || conv.getPlanarInput() ||
      conv->getBlock() != mul->getBlock() || !isPointwise(conv))
    return std::nullopt;
  // Channels-first, the scale goes into the GEMM's packing of the input, which only the
  // product of packed weights always takes: without them, the unfused convolution's product
  // (a dot per output, or rows few enough for axpys) would sum in another order than the
  // fused one.
  if (!conv.getChannelsLast() && (!conv.getWeight().getDefiningOp<dlc::ConstantOp>() ||
                                  !dlc::rt::convPacksWeights(dlc::convParams(conv))))
    return std::nullopt;
  for (unsigned i = 0; i < 2; ++i) {
    Value x = mul->getOperand(i), scale = mul->getOperand(1 - i);
    if (x.getType() == mul.getType() && isChannelScale(scale, x, conv.getChannelsLast()))
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
