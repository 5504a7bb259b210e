#include "dialects/DlcDialect.h"
#include "passes/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"

namespace dlc {
#define GEN_PASS_DEF_AUTODIFF
#include "passes/Passes.h.inc"
} // namespace dlc

using namespace mlir;

namespace {

std::string argName(func::FuncOp func, unsigned index) {
  auto name = func.getArgAttrOfType<StringAttr>(index, dlc::kTensorNameAttr);
  return name ? name.str() : "#" + std::to_string(index);
}

struct AutodiffPass : dlc::impl::AutodiffBase<AutodiffPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.getNumResults() == 0 || !func.getResultAttr(0, "dlc.loss"))
      return;
    auto lossType = dyn_cast<RankedTensorType>(func.getResultTypes()[0]);
    if (!lossType || lossType.getRank() != 0 || !lossType.getElementType().isF32()) {
      func.emitError("the loss must be a scalar f32 tensor, got ") << func.getResultTypes()[0];
      return signalPassFailure();
    }
    Block &body = func.getBody().front();
    auto ret = cast<func::ReturnOp>(body.getTerminator());

    // Values that depend on a trainable argument, each with one such argument (for errors).
    llvm::DenseMap<Value, unsigned> source;
    for (BlockArgument arg : body.getArguments())
      if (func.getArgAttr(arg.getArgNumber(), dlc::kTrainableAttr))
        source[arg] = arg.getArgNumber();
    for (Operation &op : body)
      for (Value operand : op.getOperands())
        if (auto it = source.find(operand); it != source.end()) {
          for (Value result : op.getResults())
            if (isa<FloatType>(cast<RankedTensorType>(result.getType()).getElementType()))
              source.try_emplace(result, it->second);
        }

    OpBuilder b(ret);
    llvm::DenseMap<Value, Value> grads;
    auto accumulate = [&](Value v, Value grad, Location loc) {
      auto [it, fresh] = grads.try_emplace(v, grad);
      if (!fresh)
        it->second = b.create<dlc::AddOp>(loc, v.getType(), it->second, grad);
    };
    Value loss = ret.getOperand(0);
    if (!source.count(loss)) {
      func.emitError("the loss does not depend on any trainable weight");
      return signalPassFailure();
    }
    auto lossSeed = DenseElementsAttr::get(lossType, 1.0f);
    grads[loss] = b.create<dlc::ConstantOp>(func.getLoc(), lossType, lossSeed);

    SmallVector<Operation *> reversed;
    for (Operation &op : body.without_terminator())
      reversed.push_back(&op);
    for (Operation *op : llvm::reverse(reversed)) {
      if (op->getNumResults() != 1)
        continue;
      auto gradIt = grads.find(op->getResult(0));
      if (gradIt == grads.end())
        continue;
      Value grad = gradIt->second;
      SmallVector<bool> needed;
      bool any = false;
      for (Value operand : op->getOperands()) {
        needed.push_back(source.count(operand) != 0);
        any |= needed.back();
      }
      if (!any)
        continue;
      auto differentiable = dyn_cast<dlc::GradientInterface>(op);
      if (!differentiable) {
        op->emitError("has no gradient, but lies on the path from trainable weight '")
            << argName(func, source.lookup(op->getResult(0))) << "' to the loss";
        return signalPassFailure();
      }
      SmallVector<Value> operandGrads(op->getNumOperands());
      if (failed(differentiable.buildGradients(b, grad, needed, operandGrads)))
        return signalPassFailure();
      for (auto [operand, operandGrad] : llvm::zip(op->getOperands(), operandGrads))
        if (operandGrad)
          accumulate(operand, operandGrad, op->getLoc());
    }

    // One result per trainable argument the loss depends on, in argument order.
    SmallVector<Value> results(ret.getOperands());
    for (BlockArgument arg : body.getArguments()) {
      auto it = grads.find(arg);
      if (it == grads.end() || !func.getArgAttr(arg.getArgNumber(), dlc::kTrainableAttr))
        continue;
      unsigned index = func.getNumResults();
      func.insertResult(index, arg.getType(),
                        b.getDictionaryAttr(b.getNamedAttr(
                            dlc::kGradientOfAttr, b.getI64IntegerAttr(arg.getArgNumber()))));
      results.push_back(it->second);
    }
    ret->setOperands(results);
  }
};

} // namespace
