// Optimizer steps: in-place updates of weights and moments in the model's state buffer.
// `hyper` holds [lr, first step, 1 - beta1^t, 1 - beta2^t], set by the generated train step.
#include "compiler/codegen/Emitter.h"
#include "dialects/DlcDialect.h"

using namespace mlir;

namespace dlc {
namespace {

std::string flag(bool value) { return value ? "true" : "false"; }

LogicalResult emitSgd(Operation *op, KernelEmitter &e) {
  auto sgd = cast<SgdUpdateOp>(op);
  std::string hyper = e.ptr(sgd.getHyper());
  e.line("dlc::rt::sgdUpdateF32(" + e.ptr(sgd.getWeight()) + ", " + e.ptr(sgd.getGrad()) + ", " +
         (sgd.getMomentumBuffer() ? e.ptr(sgd.getMomentumBuffer()) : "nullptr") + ", " +
         std::to_string(tensorType(sgd.getWeight()).getNumElements()) + ", " + hyper + "[0], " +
         floatLiteral(sgd.getMomentum().convertToFloat()) + ", " +
         floatLiteral(sgd.getWeightDecay().convertToFloat()) + ", " + flag(sgd.getNesterov()) +
         ", " + hyper + "[1] != 0.0f);");
  return success();
}

LogicalResult emitAdam(Operation *op, KernelEmitter &e) {
  auto adam = cast<AdamUpdateOp>(op);
  std::string hyper = e.ptr(adam.getHyper());
  e.line("dlc::rt::adamUpdateF32(" + e.ptr(adam.getWeight()) + ", " + e.ptr(adam.getGrad()) +
         ", " + e.ptr(adam.getExpAvg()) + ", " + e.ptr(adam.getExpAvgSq()) + ", " +
         std::to_string(tensorType(adam.getWeight()).getNumElements()) + ", " + hyper + "[0], " +
         floatLiteral(adam.getBeta1().convertToFloat()) + ", " +
         floatLiteral(adam.getBeta2().convertToFloat()) + ", " +
         floatLiteral(adam.getEps().convertToFloat()) + ", " +
         floatLiteral(adam.getWeightDecay().convertToFloat()) + ", " +
         flag(adam.getDecoupled()) + ", " + hyper + "[2], " + hyper + "[3]);");
  return success();
}

} // namespace

void addOptimizerEmitters(EmitterTable &table) {
  table.forOp<SgdUpdateOp>() = emitSgd;
  table.forOp<AdamUpdateOp>() = emitAdam;
}

} // namespace dlc
