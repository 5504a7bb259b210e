#include "dialects/DlcDialect.h"
#include "passes/AliasGroups.h"
#include "passes/Passes.h"

#include "mlir/IR/Builders.h"

namespace dlc {
#define GEN_PASS_DEF_INPLACELEGALIZATION
#include "passes/Passes.h.inc"
} // namespace dlc

using namespace mlir;

namespace {

// The alignment the planner gives every value (kernels may count on it), which a view
// inside its operand keeps only at a multiple of it.
constexpr int64_t kViewAlignment = 64;

// A view shares its operand's memory, so it must not make a graph output live in a graph
// input's or weight's memory, nor two different graph outputs share one buffer.
bool canView(const dlc::AliasGroups &groups, Operation *op, int64_t offset) {
  Value operand = op->getOperand(0), result = op->getResult(0);
  return offset % kViewAlignment == 0 &&
         !(dlc::AliasGroups::isGraphOutput(result) && groups.groupHasExternal(operand));
}

bool canWriteOver(const dlc::AliasGroups &groups, Operation *op, Value operand) {
  if (dlc::AliasGroups::isExternalMemory(operand) || !operand.getDefiningOp() ||
      dlc::AliasGroups::bytes(operand) != dlc::AliasGroups::bytes(op->getResult(0)))
    return false;
  // The whole group must be dead after this op: nothing reads the old contents later.
  return !groups.groupHasExternal(operand) && groups.groupLastUse(operand) == groups.index(op) &&
         groups.offset(operand) == 0 &&
         groups.groupBytes(operand) == dlc::AliasGroups::bytes(operand);
}

struct InplaceLegalizationPass
    : dlc::impl::InplaceLegalizationBase<InplaceLegalizationPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    dlc::AliasGroups groups(func);
    Builder builder(func.getContext());
    for (Operation &op : func.getBody().front()) {
      if (std::optional<int64_t> offset = dlc::viewByteOffset(&op);
          offset && !op.hasAttr(dlc::kViewAttr) && canView(groups, &op, *offset)) {
        op.setAttr(dlc::kViewAttr, builder.getUnitAttr());
        groups.merge(op.getOperand(0), op.getResult(0), *offset);
        continue;
      }
      auto inplace = dyn_cast<dlc::InPlaceInterface>(&op);
      if (!inplace || op.hasAttr(dlc::kInPlaceAttr))
        continue;
      for (unsigned index : inplace.getInPlaceOperands()) {
        if (!canWriteOver(groups, &op, op.getOperand(index)))
          continue;
        op.setAttr(dlc::kInPlaceAttr, builder.getI64IntegerAttr(index));
        groups.merge(op.getOperand(index), op.getResult(0), 0);
        break;
      }
    }
  }
};

} // namespace
