#include "dialects/DlcDialect.h"
#include "passes/Passes.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/EquivalenceClasses.h"
#include "llvm/ADT/SetVector.h"

namespace dlc {
#define GEN_PASS_DEF_CHANNELSLAST
#include "passes/Passes.h.inc"
} // namespace dlc

using namespace mlir;

namespace {

constexpr int64_t kToChannelsLast[] = {0, 2, 3, 1}, kToChannelsFirst[] = {0, 3, 1, 2};

bool qualifies(dlc::ConvOp conv) {
  if (conv.getChannelsLast() || !conv.getWeight().getDefiningOp<dlc::ConstantOp>() ||
      cast<RankedTensorType>(conv.getType()).getRank() != 4)
    return false;
  return dlc::rt::channelsLastApplies(dlc::convParams(conv));
}

// Of the qualifying convolutions, the ones that are not pointwise.
bool isDepthwise(dlc::ConvOp conv) {
  auto weight = cast<RankedTensorType>(conv.getWeight().getType());
  return conv.getGroup() > 1 || weight.getDimSize(2) > 1 || weight.getDimSize(3) > 1;
}

int64_t elementsOf(Value v) { return cast<RankedTensorType>(v.getType()).getNumElements(); }

// The operands through which a convolution reads activations (the layout applies to them).
SmallVector<OpOperand *, 2> activationOperands(dlc::ConvOp conv) {
  SmallVector<OpOperand *, 2> operands{&conv.getInputMutable()};
  if (conv.getResidual())
    operands.push_back(&conv.getResidualMutable()[0]);
  return operands;
}

bool isTranspose(Operation *op, ArrayRef<int64_t> perm) {
  auto transpose = dyn_cast_or_null<dlc::TransposeOp>(op);
  return transpose && transpose.getPerm() == perm;
}

RankedTensorType permuted(Type type, ArrayRef<int64_t> perm) {
  auto tensor = cast<RankedTensorType>(type);
  SmallVector<int64_t> shape;
  for (int64_t dim : perm)
    shape.push_back(tensor.getDimSize(dim));
  return RankedTensorType::get(shape, tensor.getElementType());
}

// Convolutions that would switch layout together, in program order.
struct Group {
  SmallVector<dlc::ConvOp> convs;
  llvm::SmallPtrSet<Operation *, 16> members;

  bool isMemberRead(OpOperand &use) const {
    auto conv = dyn_cast<dlc::ConvOp>(use.getOwner());
    return conv && members.contains(conv) && llvm::is_contained(activationOperands(conv), &use);
  }

  // Values the group reads from outside, each once.
  llvm::SetVector<Value> borderInputs() const {
    llvm::SetVector<Value> inputs;
    for (dlc::ConvOp conv : convs)
      for (OpOperand *operand : activationOperands(conv))
        if (!members.contains(operand->get().getDefiningOp()))
          inputs.insert(operand->get());
    return inputs;
  }

  // Uses of a member's result outside the group.
  SmallVector<OpOperand *> outsideUses(dlc::ConvOp conv) const {
    SmallVector<OpOperand *> uses;
    for (OpOperand &use : conv.getResult().getUses())
      if (!isMemberRead(use))
        uses.push_back(&use);
    return uses;
  }

  // Elements the transposes at the border would move, not counting transposes that cancel
  // one already there.
  int64_t borderElements() const {
    int64_t elements = 0;
    for (Value input : borderInputs())
      if (!isTranspose(input.getDefiningOp(), kToChannelsFirst))
        elements += elementsOf(input);
    for (dlc::ConvOp conv : convs)
      if (llvm::any_of(outsideUses(conv), [](OpOperand *use) {
            return !isTranspose(use->getOwner(), kToChannelsLast);
          }))
        elements += elementsOf(conv.getResult());
    return elements;
  }

  // What the switch speeds up: depthwise outputs (pointwise ones cost about the same in
  // either layout).
  int64_t depthwiseElements() const {
    int64_t elements = 0;
    for (dlc::ConvOp conv : convs)
      if (isDepthwise(conv))
        elements += elementsOf(conv.getResult());
    return elements;
  }

  void switchLayout() {
    OpBuilder b(convs.front());
    for (Value input : borderInputs()) {
      b.setInsertionPointAfterValue(input);
      Value channelsLast =
          b.create<dlc::TransposeOp>(input.getLoc(), permuted(input.getType(), kToChannelsLast),
                                     input, b.getDenseI64ArrayAttr(kToChannelsLast));
      input.replaceUsesWithIf(channelsLast, [&](OpOperand &use) { return isMemberRead(use); });
    }
    for (dlc::ConvOp conv : convs) {
      SmallVector<OpOperand *> uses = outsideUses(conv);
      Type channelsFirstType = conv.getType();
      conv.getResult().setType(permuted(channelsFirstType, kToChannelsLast));
      conv.setChannelsLast(true);
      if (uses.empty())
        continue;
      b.setInsertionPointAfter(conv);
      Value channelsFirst =
          b.create<dlc::TransposeOp>(conv.getLoc(), channelsFirstType, conv.getResult(),
                                     b.getDenseI64ArrayAttr(kToChannelsFirst));
      for (OpOperand *use : uses)
        use->set(channelsFirst);
    }
  }
};

struct ChannelsLastPass : dlc::impl::ChannelsLastBase<ChannelsLastPass> {
  void runOnOperation() override {
    SmallVector<dlc::ConvOp> candidates;
    getOperation().walk([&](dlc::ConvOp conv) {
      if (qualifies(conv))
        candidates.push_back(conv);
    });
    // Convolutions feeding one another in one block share a group.
    llvm::EquivalenceClasses<Operation *> groups;
    for (dlc::ConvOp conv : candidates)
      groups.insert(conv);
    for (dlc::ConvOp conv : candidates)
      for (OpOperand *operand : activationOperands(conv)) {
        Operation *producer = operand->get().getDefiningOp();
        if (producer && groups.findValue(producer) != groups.end() &&
            producer->getBlock() == conv->getBlock())
          groups.unionSets(producer, conv);
      }
    // Groups in the order of their first convolution, so the transposes come out the same on
    // every run.
    llvm::SmallPtrSet<Operation *, 16> done;
    for (dlc::ConvOp first : candidates) {
      Operation *leader = groups.getLeaderValue(first);
      if (!done.insert(leader).second)
        continue;
      Group group;
      for (dlc::ConvOp conv : candidates)
        if (groups.getLeaderValue(conv) == leader) {
          group.convs.push_back(conv);
          group.members.insert(conv);
        }
      // Measured: a depthwise output element computed channels-last saves about what moving
      // one element through a transpose costs (ShuffleNetV2's units, whose border transposes
      // move twice their depthwise output, ran 15% slower channels-last).
      if (group.borderElements() > group.depthwiseElements())
        continue;
      group.switchLayout();
    }
  }
};

} // namespace
