#include "dialects/DlcDialect.h"
#include "passes/Passes.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/BitVector.h"

namespace dlc {
#define GEN_PASS_DEF_OPTIMIZERLOWERING
#include "passes/Passes.h.inc"
} // namespace dlc

using namespace mlir;

namespace {

struct OptimizerLoweringPass : dlc::impl::OptimizerLoweringBase<OptimizerLoweringPass> {
  using OptimizerLoweringBase::OptimizerLoweringBase;

  // A new state argument holding one of `weight`'s optimizer moments (zero at the start).
  BlockArgument addMoment(func::FuncOp func, BlockArgument weight, StringRef suffix) {
    Builder b(func.getContext());
    auto name = func.getArgAttrOfType<StringAttr>(weight.getArgNumber(), dlc::kTensorNameAttr);
    unsigned index = func.getNumArguments();
    func.insertArgument(index, weight.getType(),
                        b.getDictionaryAttr({b.getNamedAttr(dlc::kTensorNameAttr,
                                                            b.getStringAttr(name.str() + "." +
                                                                            suffix.str())),
                                             b.getNamedAttr(dlc::kStateAttr, b.getUnitAttr())}),
                        weight.getLoc());
    return func.getArgument(index);
  }

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    SmallVector<unsigned> gradientResults;
    for (unsigned i = 0; i < func.getNumResults(); ++i)
      if (func.getResultAttr(i, dlc::kGradientOfAttr))
        gradientResults.push_back(i);
    if (gradientResults.empty())
      return;
    if (optimizer != "sgd" && optimizer != "adam" && optimizer != "adamw") {
      func.emitError("unknown optimizer '") << optimizer << "' (sgd, adam or adamw)";
      return signalPassFailure();
    }
    Block &body = func.getBody().front();
    auto ret = cast<func::ReturnOp>(body.getTerminator());
    Builder attrs(func.getContext());
    unsigned hyperIndex = func.getNumArguments();
    auto hyperType = RankedTensorType::get({4}, attrs.getF32Type());
    func.insertArgument(hyperIndex, hyperType,
                        attrs.getDictionaryAttr(
                            {attrs.getNamedAttr(dlc::kTensorNameAttr, attrs.getStringAttr("hyper")),
                             attrs.getNamedAttr(dlc::kHyperAttr, attrs.getUnitAttr())}),
                        func.getLoc());
    Value hyper = func.getArgument(hyperIndex);

    for (unsigned resultIndex : gradientResults) {
      int64_t argIndex =
          func.getResultAttrOfType<IntegerAttr>(resultIndex, dlc::kGradientOfAttr).getInt();
      BlockArgument weight = func.getArgument(argIndex);
      Value grad = ret.getOperand(resultIndex);
      // After the last op (other than the return) that reads the weight or defines the
      // gradient: nothing reads the old weight afterwards, and the gradient dies here.
      Operation *after = grad.getDefiningOp();
      for (Operation *user : weight.getUsers())
        if (!isa<func::ReturnOp>(user) && (!after || after->isBeforeInBlock(user)))
          after = user;
      OpBuilder b(func.getContext());
      if (after)
        b.setInsertionPointAfter(after);
      else
        b.setInsertionPointToStart(&body);
      Location loc = weight.getLoc();
      if (optimizer == "sgd") {
        Value buffer = momentum != 0.0f ? addMoment(func, weight, "momentum_buffer") : Value();
        b.create<dlc::SgdUpdateOp>(loc, weight, grad, hyper, buffer,
                                   b.getF32FloatAttr(momentum), b.getF32FloatAttr(weightDecay),
                                   b.getBoolAttr(nesterov));
      } else {
        Value expAvg = addMoment(func, weight, "exp_avg");
        Value expAvgSq = addMoment(func, weight, "exp_avg_sq");
        b.create<dlc::AdamUpdateOp>(loc, weight, grad, expAvg, expAvgSq, hyper,
                                    b.getF32FloatAttr(beta1), b.getF32FloatAttr(beta2),
                                    b.getF32FloatAttr(eps), b.getF32FloatAttr(weightDecay),
                                    b.getBoolAttr(optimizer == "adamw"));
      }
    }
    llvm::BitVector drop(func.getNumResults());
    for (unsigned i : gradientResults)
      drop.set(i);
    ret->eraseOperands(drop);
    func.eraseResults(drop);
  }
};

} // namespace
