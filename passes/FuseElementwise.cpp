#include "dialects/DlcDialect.h"
#include "passes/Passes.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallPtrSet.h"

namespace dlc {
#define GEN_PASS_DEF_FUSEELEMENTWISE
#include "passes/Passes.h.inc"
} // namespace dlc

using namespace mlir;

namespace {

// A chain of m ops reads at most m + 1 values from outside (every op but the last feeds
// another), so this many ops always fit the runtime's slots.
constexpr size_t kMaxChainOps = (dlc::rt::kFusedMaxSlots - 1) / 2;

struct ChainStep {
  StringRef kind;
  SmallVector<float, 2> params;
};

bool isF32Tensor(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  return type && type.getElementType().isF32();
}

// The step `op` becomes in a chain, when it can join one: a float32 elementwise op whose
// operands the fused kernel can read (the result's type, or a broadcast it can index).
std::optional<ChainStep> chainStep(Operation *op) {
  if (op->getNumResults() != 1 || !isF32Tensor(op->getResult(0)))
    return std::nullopt;
  auto outShape = cast<RankedTensorType>(op->getResult(0).getType()).getShape();
  for (Value operand : op->getOperands())
    if (!isF32Tensor(operand) ||
        !dlc::fusedInputIndexing(cast<RankedTensorType>(operand.getType()).getShape(), outShape))
      return std::nullopt;
  if (auto clip = dyn_cast<dlc::ClipOp>(op))
    return ChainStep{"Clip", {clip.getMin().convertToFloat(), clip.getMax().convertToFloat()}};
  if (auto leaky = dyn_cast<dlc::LeakyReluOp>(op))
    return ChainStep{"LeakyRelu", {leaky.getAlpha().convertToFloat()}};
  auto kernel = dyn_cast<dlc::KernelKindInterface>(op);
  if (!kernel)
    return std::nullopt;
  StringRef kind = kernel.getKernelKind();
  if (op->hasTrait<OpTrait::Elementwise>() && op->getNumOperands() == 1 &&
      dlc::isFusedUnaryKind(kind))
    return ChainStep{kind, {}};
  // The broadcasting binary ops are the in-place ones with two operands and a kernel kind.
  if (isa<dlc::InPlaceInterface>(op) && op->getNumOperands() == 2 && dlc::isFusedBinaryKind(kind))
    return ChainStep{kind, {}};
  return std::nullopt;
}

// The ops that join `last`'s chain: producers of its operands (transitively) of the same type,
// in its block, whose every use is in the chain, so that no value but the last is needed
// outside it, and with no state update before `last` (the chain reads its inputs there).
SmallVector<Operation *> growChain(Operation *last, const llvm::DenseSet<Operation *> &claimed) {
  SmallVector<Operation *> chain{last};
  llvm::SmallPtrSet<Operation *, 16> inChain{last};
  Type type = last->getResult(0).getType();
  // A producer whose other users join later is picked up by a later sweep.
  for (bool grew = true; grew && chain.size() < kMaxChainOps;) {
    grew = false;
    for (size_t i = 0; i < chain.size() && chain.size() < kMaxChainOps; ++i)
      for (Value operand : chain[i]->getOperands()) {
        Operation *producer = operand.getDefiningOp();
        if (!producer || inChain.contains(producer) || claimed.contains(producer) ||
            producer->getBlock() != last->getBlock() || operand.getType() != type ||
            !chainStep(producer) ||
            !llvm::all_of(operand.getUsers(),
                          [&](Operation *user) { return inChain.contains(user); }) ||
            dlc::stateUpdateBetween(producer, last)) // a walk over the block: checked last
          continue;
        chain.push_back(producer);
        inChain.insert(producer);
        grew = true;
        if (chain.size() == kMaxChainOps)
          break;
      }
  }
  return chain;
}

void fuseChain(Operation *last, SmallVector<Operation *> chain) {
  llvm::sort(chain, [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  llvm::SmallPtrSet<Operation *, 16> inChain(chain.begin(), chain.end());
  SmallVector<Value> inputs;
  llvm::DenseMap<Value, int64_t> slotOf;
  for (Operation *op : chain)
    for (Value operand : op->getOperands())
      if (!inChain.contains(operand.getDefiningOp()) &&
          slotOf.try_emplace(operand, inputs.size()).second)
        inputs.push_back(operand);
  SmallVector<std::string> steps;
  for (Operation *op : chain) {
    ChainStep step = *chainStep(op);
    SmallVector<int64_t, 2> slots;
    for (Value operand : op->getOperands())
      slots.push_back(slotOf.at(operand));
    slotOf[op->getResult(0)] = int64_t(inputs.size() + steps.size());
    steps.push_back(dlc::fusedStepText(step.kind, slots, step.params));
  }
  OpBuilder b(last);
  SmallVector<StringRef> stepRefs(steps.begin(), steps.end());
  auto fused = b.create<dlc::FusedElementwiseOp>(last->getLoc(), last->getResult(0).getType(),
                                                 inputs, b.getStrArrayAttr(stepRefs));
  last->getResult(0).replaceAllUsesWith(fused.getResult());
  for (Operation *op : llvm::reverse(chain))
    op->erase();
}

struct FuseElementwisePass : dlc::impl::FuseElementwiseBase<FuseElementwisePass> {
  void runOnOperation() override {
    SmallVector<Operation *> candidates;
    getOperation().walk([&](Operation *op) {
      if (chainStep(op))
        candidates.push_back(op);
    });
    // From the last op back, so each chain is grown from its end. Fused ops are erased; the
    // claimed set keeps them from being visited again.
    llvm::DenseSet<Operation *> claimed;
    for (Operation *last : llvm::reverse(candidates)) {
      if (claimed.contains(last))
        continue;
      SmallVector<Operation *> chain = growChain(last, claimed);
      if (chain.size() < 2)
        continue;
      claimed.insert(chain.begin(), chain.end());
      fuseChain(last, std::move(chain));
    }
  }
};

} // namespace
