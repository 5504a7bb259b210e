#include "dialects/DlcDialect.h"
#include "passes/Passes.h"

#include "mlir/IR/Builders.h"

namespace dlc {
#define GEN_PASS_DEF_FUSEEPILOGUES
#include "passes/Passes.h.inc"
} // namespace dlc

using namespace mlir;

namespace {

// The convolution or Gemm whose only use is `activation`'s input, if any.
Operation *fusableProducer(Operation *activation) {
  Value input = activation->getOperand(0);
  Operation *producer = input.getDefiningOp();
  if (!producer || !isa<dlc::ConvOp, dlc::GemmOp>(producer) || !input.hasOneUse() ||
      producer->hasAttr(dlc::kActivationAttr) || input.getType() != activation->getResult(0).getType() ||
      !cast<RankedTensorType>(input.getType()).getElementType().isF32())
    return nullptr;
  return producer;
}

void fuse(Operation *activation, Operation *producer) {
  Builder b(activation->getContext());
  if (auto clip = dyn_cast<dlc::ClipOp>(activation)) {
    producer->setAttr(dlc::kActivationAttr, b.getStringAttr("clip"));
    producer->setAttr(dlc::kActivationMinAttr, clip.getMinAttr());
    producer->setAttr(dlc::kActivationMaxAttr, clip.getMaxAttr());
  } else {
    producer->setAttr(dlc::kActivationAttr, b.getStringAttr("relu"));
  }
  activation->getResult(0).replaceAllUsesWith(producer->getResult(0));
  activation->erase();
}

struct FuseEpiloguesPass : dlc::impl::FuseEpiloguesBase<FuseEpiloguesPass> {
  void runOnOperation() override {
    SmallVector<std::pair<Operation *, Operation *>> fusions;
    getOperation().walk([&](Operation *op) {
      if (isa<dlc::ReluOp, dlc::ClipOp>(op))
        if (Operation *producer = fusableProducer(op))
          fusions.push_back({op, producer});
    });
    for (auto [activation, producer] : fusions)
      fuse(activation, producer);
  }
};

} // namespace
