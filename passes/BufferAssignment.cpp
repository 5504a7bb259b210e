#include "dialects/DlcDialect.h"
#include "passes/Passes.h"

#include "mlir/IR/Builders.h"

namespace dlc {
#define GEN_PASS_DEF_ASSIGNBUFFERS
#include "passes/Passes.h.inc"
} // namespace dlc

using namespace mlir;

namespace {
constexpr int64_t kAlignment = 64;

int64_t alignUp(int64_t bytes) { return (bytes + kAlignment - 1) / kAlignment * kAlignment; }

int64_t tensorBytes(Value v) {
  auto type = cast<RankedTensorType>(v.getType());
  int64_t bits = type.getElementType().getIntOrFloatBitWidth();
  return type.getNumElements() * (bits == 1 ? 8 : bits) / 8;
}

bool isGraphOutput(Value v) {
  return llvm::any_of(v.getUsers(), [](Operation *user) { return isa<func::ReturnOp>(user); });
}

struct AssignBuffersPass : dlc::impl::AssignBuffersBase<AssignBuffersPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    Builder builder(func.getContext());
    int64_t arenaBytes = 0;
    auto reserve = [&](int64_t bytes) {
      int64_t offset = arenaBytes;
      arenaBytes += alignUp(std::max<int64_t>(bytes, 1));
      return builder.getI64IntegerAttr(offset);
    };
    func.walk([&](Operation *op) {
      if (op->getNumResults() != 1 || isa<dlc::ConstantOp>(op) ||
          op->getName().getDialectNamespace() != dlc::DlcDialect::getDialectNamespace())
        return;
      if (!isGraphOutput(op->getResult(0)))
        op->setAttr(dlc::kArenaOffsetAttr, reserve(tensorBytes(op->getResult(0))));
      if (auto workspace = dyn_cast<dlc::WorkspaceInterface>(op))
        if (int64_t bytes = workspace.getWorkspaceBytes())
          op->setAttr(dlc::kWorkspaceOffsetAttr, reserve(bytes));
    });
    func->setAttr(dlc::kArenaBytesAttr, builder.getI64IntegerAttr(arenaBytes));
  }
};
} // namespace
