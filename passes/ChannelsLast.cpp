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

RankedTensorType tensorOf(Value v) { return cast<RankedTensorType>(v.getType()); }
int64_t elementsOf(Value v) { return tensorOf(v).getNumElements(); }

bool qualifies(dlc::ConvOp conv) {
  if (conv.getChannelsLast() || !conv.getWeight().getDefiningOp<dlc::ConstantOp>() ||
      tensorOf(conv).getRank() != 4)
    return false;
  return dlc::rt::channelsLastApplies(dlc::convParams(conv));
}

// Of the qualifying convolutions, the ones that are not pointwise.
bool isDepthwise(dlc::ConvOp conv) {
  auto weight = tensorOf(conv.getWeight());
  return conv.getGroup() > 1 || weight.getDimSize(2) > 1 || weight.getDimSize(3) > 1;
}

// Ops that compute the same values in either layout when every rank-4 operand and the result
// are permuted alike: elementwise ops, broadcasting ones included (squeeze-and-excitation's
// per-channel scale), whose other operands are single values (HardSwish's constants). They
// join the convolutions around them, so activations and attention blocks between two
// convolutions no longer cut a group in two.
bool isLayoutFree(Operation *op) {
  if (op->getNumResults() != 1 ||
      !(op->hasTrait<OpTrait::Elementwise>() || op->hasTrait<dlc::BinaryKindOp>()))
    return false;
  auto result = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  return result && result.getRank() == 4 &&
         llvm::all_of(op->getOperandTypes(), [](Type type) {
           auto tensor = dyn_cast<RankedTensorType>(type);
           return tensor && (tensor.getRank() == 4 ||
                             (tensor.hasStaticShape() && tensor.getNumElements() == 1));
         });
}

// A gather of rows or columns (nearest Resize, as the importer writes it): channels-last each
// index copies a run of channels instead of one element.
bool isSpatialGather(dlc::GatherOp gather) {
  return tensorOf(gather.getInput()).getRank() == 4 &&
         tensorOf(gather.getIndices()).getRank() == 1 &&
         (gather.getAxis() == 2 || gather.getAxis() == 3);
}

bool isCandidate(Operation *op) {
  if (auto conv = dyn_cast<dlc::ConvOp>(op))
    return qualifies(conv);
  if (auto gather = dyn_cast<dlc::GatherOp>(op))
    return isSpatialGather(gather);
  // Channels-last, a global average pool is a mean over the middle axes.
  if (auto pool = dyn_cast<dlc::GlobalAvgPoolOp>(op))
    return tensorOf(pool.getInput()).getRank() == 4;
  return isLayoutFree(op);
}

// The operands whose layout switches with the op's: a convolution's activations (not its
// weight or bias), every rank-4 operand of the others.
SmallVector<OpOperand *, 2> layoutOperands(Operation *op) {
  SmallVector<OpOperand *, 2> operands;
  if (auto conv = dyn_cast<dlc::ConvOp>(op)) {
    operands.push_back(&conv.getInputMutable());
    if (conv.getResidual())
      operands.push_back(&conv.getResidualMutable()[0]);
    return operands;
  }
  for (OpOperand &operand : op->getOpOperands())
    if (tensorOf(operand.get()).getRank() == 4)
      operands.push_back(&operand);
  return operands;
}

// Whether an [N, C, H, W] tensor has the same bytes channels-last: one channel, or one
// position (squeeze-and-excitation's vectors). Its layout changes as a reshape, which moves
// nothing.
bool keepsBytes(Type channelsFirst) {
  auto shape = cast<RankedTensorType>(channelsFirst).getShape();
  return shape[1] == 1 || shape[2] * shape[3] == 1;
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

// `value` in the other layout: a reshape where the bytes stay, else a transpose.
Value relayout(OpBuilder &b, Value value, ArrayRef<int64_t> perm, bool toChannelsLast) {
  Type channelsFirst = toChannelsLast ? value.getType() : permuted(value.getType(), perm);
  RankedTensorType type = permuted(value.getType(), perm);
  if (keepsBytes(channelsFirst))
    return b.create<dlc::ReshapeOp>(value.getLoc(), type, value);
  return b.create<dlc::TransposeOp>(value.getLoc(), type, value, b.getDenseI64ArrayAttr(perm));
}

// Ops that would switch layout together, in program order.
struct Group {
  SmallVector<Operation *> ops;
  llvm::SmallPtrSet<Operation *, 16> members;

  bool isMemberRead(OpOperand &use) const {
    return members.contains(use.getOwner()) &&
           llvm::is_contained(layoutOperands(use.getOwner()), &use);
  }

  // Values the group reads from outside, each once.
  llvm::SetVector<Value> borderInputs() const {
    llvm::SetVector<Value> inputs;
    for (Operation *op : ops)
      for (OpOperand *operand : layoutOperands(op))
        if (!members.contains(operand->get().getDefiningOp()))
          inputs.insert(operand->get());
    return inputs;
  }

  // Uses of a member's result outside the group.
  SmallVector<OpOperand *> outsideUses(Operation *op) const {
    SmallVector<OpOperand *> uses;
    for (OpOperand &use : op->getResult(0).getUses())
      if (!isMemberRead(use))
        uses.push_back(&use);
    return uses;
  }

  // Elements the transposes at the border would move, not counting reshapes and transposes
  // that cancel one already there.
  int64_t borderElements() const {
    int64_t elements = 0;
    for (Value input : borderInputs())
      if (!keepsBytes(input.getType()) && !isTranspose(input.getDefiningOp(), kToChannelsFirst))
        elements += elementsOf(input);
    for (Operation *op : ops)
      if (!keepsBytes(op->getResult(0).getType()) &&
          llvm::any_of(outsideUses(op), [](OpOperand *use) {
            return !isTranspose(use->getOwner(), kToChannelsLast);
          }))
        elements += elementsOf(op->getResult(0));
    return elements;
  }

  // What the switch speeds up: depthwise outputs (pointwise ones cost about the same in
  // either layout, elementwise ops exactly the same).
  int64_t depthwiseElements() const {
    int64_t elements = 0;
    for (Operation *op : ops)
      if (auto conv = dyn_cast<dlc::ConvOp>(op); conv && isDepthwise(conv))
        elements += elementsOf(conv.getResult());
    return elements;
  }

  bool hasConv() const {
    return llvm::any_of(ops, [](Operation *op) { return isa<dlc::ConvOp>(op); });
  }

  void switchLayout() {
    OpBuilder b(ops.front());
    for (Value input : borderInputs()) {
      b.setInsertionPointAfterValue(input);
      Value channelsLast = relayout(b, input, kToChannelsLast, true);
      input.replaceUsesWithIf(channelsLast, [&](OpOperand &use) { return isMemberRead(use); });
    }
    // Replaced pools are erased last: `members` would take a new op at a freed address for one.
    SmallVector<Operation *> replaced;
    for (Operation *op : ops) {
      SmallVector<OpOperand *> uses = outsideUses(op);
      Value result = op->getResult(0);
      result.setType(permuted(result.getType(), kToChannelsLast));
      if (auto conv = dyn_cast<dlc::ConvOp>(op)) {
        conv.setChannelsLast(true);
      } else if (auto gather = dyn_cast<dlc::GatherOp>(op)) {
        gather.setAxis(gather.getAxis() - 1); // H, W: dims 2, 3 channels-first, 1, 2 last
      } else if (auto pool = dyn_cast<dlc::GlobalAvgPoolOp>(op)) {
        b.setInsertionPoint(pool);
        Value mean = b.create<dlc::ReduceMeanOp>(pool.getLoc(), result.getType(), pool.getInput(),
                                                 b.getDenseI64ArrayAttr({1, 2}));
        result.replaceAllUsesWith(mean);
        replaced.push_back(pool);
        result = mean;
      }
      if (uses.empty())
        continue;
      b.setInsertionPointAfterValue(result);
      Value channelsFirst = relayout(b, result, kToChannelsFirst, false);
      for (OpOperand *use : uses)
        use->set(channelsFirst);
    }
    for (Operation *op : replaced)
      op->erase();
  }
};

// Candidates that read one another's results in one block form a group; groups come in the
// order of their first op, so the transposes come out the same on every run.
SmallVector<Group> groupsOf(ArrayRef<Operation *> candidates) {
  llvm::EquivalenceClasses<Operation *> classes;
  for (Operation *op : candidates)
    classes.insert(op);
  for (Operation *op : candidates)
    for (OpOperand *operand : layoutOperands(op)) {
      Operation *producer = operand->get().getDefiningOp();
      if (producer && classes.findValue(producer) != classes.end() &&
          producer->getBlock() == op->getBlock())
        classes.unionSets(producer, op);
    }
  SmallVector<Group> groups;
  DenseMap<Operation *, size_t> groupOfLeader;
  for (Operation *op : candidates) {
    auto [it, inserted] = groupOfLeader.try_emplace(classes.getLeaderValue(op), groups.size());
    if (inserted)
      groups.emplace_back();
    Group &group = groups[it->second];
    group.ops.push_back(op);
    group.members.insert(op);
  }
  return groups;
}

struct ChannelsLastPass : dlc::impl::ChannelsLastBase<ChannelsLastPass> {
  void runOnOperation() override {
    SmallVector<Operation *> candidates;
    getOperation().walk([&](Operation *op) {
      if (isCandidate(op))
        candidates.push_back(op);
    });
    // Measured: a depthwise output element computed channels-last saves about what moving
    // one element through a transpose costs (ShuffleNetV2's units, whose border transposes
    // move twice their depthwise output, ran 15% slower channels-last).
    llvm::SmallPtrSet<Operation *, 16> switched;
    for (Group &group : groupsOf(candidates))
      if (group.hasConv() && group.borderElements() <= group.depthwiseElements()) {
        switched.insert(group.ops.begin(), group.ops.end());
        group.switchLayout();
      }
    // Of the rest, the parts that change no bytes switch for free: a pointwise convolution
    // over one position (squeeze-and-excitation's) is then a row times packed weights rather
    // than a product one column wide.
    SmallVector<Operation *> bytesKept;
    for (Operation *op : candidates)
      if (!switched.contains(op) && keepsBytes(op->getResult(0).getType()) &&
          llvm::all_of(layoutOperands(op),
                       [](OpOperand *operand) { return keepsBytes(operand->get().getType()); }))
        bytesKept.push_back(op);
    for (Group &group : groupsOf(bytesKept))
      if (group.hasConv())
        group.switchLayout();
  }
};

} // namespace
