// Softmax, layer normalization and reductions.
#include "compiler/codegen/Emitter.h"
#include "dialects/DlcDialect.h"

using namespace mlir;

namespace dlc {
namespace {

// ", outer, n, inner" of `v` viewed around `axis`.
std::string aroundAxis(Value v, int64_t axis) {
  auto shape = tensorType(v).getShape();
  auto [outer, inner] = outerInner(shape, axis);
  int64_t n = shape.empty() ? 1 : shape[axis];
  return ", " + std::to_string(outer) + ", " + std::to_string(n) + ", " + std::to_string(inner);
}

LogicalResult emitSoftmax(Operation *op, KernelEmitter &e) {
  auto softmax = cast<SoftmaxOp>(op);
  e.line("dlc::rt::softmax(" + e.ptr(softmax.getInput()) + ", " + e.ptr(softmax.getOutput()) +
         aroundAxis(softmax.getInput(), softmax.getAxis()) + ", " +
         (softmax.getLog() ? "true" : "false") + ");");
  return success();
}

LogicalResult emitLayerNorm(Operation *op, KernelEmitter &e) {
  auto norm = cast<LayerNormOp>(op);
  auto shape = tensorType(norm.getInput()).getShape();
  auto optional = [&](Value v) { return v ? e.ptr(v) : std::string("nullptr"); };
  e.line("dlc::rt::layerNormF32(" + e.ptr(norm.getInput()) + ", " + optional(norm.getScale()) +
         ", " + optional(norm.getBias()) + ", " + e.ptr(norm.getOutput()) + ", " +
         std::to_string(product(shape.drop_back())) + ", " + std::to_string(shape.back()) + ", " +
         floatLiteral(norm.getEpsilon().convertToFloat()) + ", " +
         (norm.getRms() ? "true" : "false") + ");");
  return success();
}

LogicalResult emitSoftmaxGrad(Operation *op, KernelEmitter &e) {
  auto grad = cast<SoftmaxGradOp>(op);
  e.line("dlc::rt::softmaxGradF32(" + e.ptr(grad.getGrad()) + ", " +
         e.ptr(grad.getOutputValue()) + ", " + e.ptr(grad.getOutput()) +
         aroundAxis(grad.getGrad(), grad.getAxis()) + ", " + (grad.getLog() ? "true" : "false") +
         ");");
  return success();
}

// Both directions view the log-probabilities as [N, C, rest] around the class dim.
LogicalResult emitNllLoss(Operation *op, KernelEmitter &e) {
  bool forward = isa<NllLossOp>(op);
  Value logProbs = forward ? op->getOperand(0) : op->getResult(0);
  e.fallibleCall(std::string("dlc::rt::") + (forward ? "nllLossF32(" : "nllLossGradF32(") +
                     e.ptr(op->getOperand(0)) + ", " + e.ptr(op->getOperand(1)) + ", " +
                     e.ptr(op->getResult(0)) + aroundAxis(logProbs, 1) + ")",
                 "label out of range");
  return success();
}

LogicalResult emitReduce(Operation *op, KernelEmitter &e) {
  auto axes = cast<DenseI64ArrayAttr>(op->getAttr("axes")).asArrayRef();
  auto shape = tensorType(op->getOperand(0)).getShape();
  // Output strides over the input's dims, with the reduced dims kept as size 1.
  SmallVector<int64_t> kept(shape);
  int64_t reduced = 1;
  for (int64_t axis : axes) {
    kept[axis] = 1;
    reduced *= shape[axis];
  }
  SmallVector<int64_t> outStrides = stridesOf(kept);
  for (int64_t axis : axes)
    outStrides[axis] = 0;
  std::string inShape = e.array(shape), strides = e.array(outStrides);
  e.line("dlc::rt::reduce(dlc::rt::ReduceKind::" +
         cast<KernelKindInterface>(op).getKernelKind().str() + ", " + e.ptr(op->getOperand(0)) +
         ", " + inShape + ", " + strides + ", " + std::to_string(shape.size()) + ", " +
         e.ptr(op->getResult(0)) + ", " +
         std::to_string(tensorType(op->getResult(0)).getNumElements()) + ", " +
         std::to_string(reduced) + ");");
  return success();
}

LogicalResult emitArgReduce(Operation *op, KernelEmitter &e) {
  int64_t axis = cast<IntegerAttr>(op->getAttr("axis")).getInt();
  bool last = cast<BoolAttr>(op->getAttr("select_last_index")).getValue();
  e.line(std::string("dlc::rt::argReduce(") + (isa<ArgMaxOp>(op) ? "true" : "false") + ", " +
         (last ? "true" : "false") + ", " + e.ptr(op->getOperand(0)) + ", " +
         e.ptr(op->getResult(0)) + aroundAxis(op->getOperand(0), axis) + ");");
  return success();
}

// dlc.cumsum and dlc.cumprod: the runtime function of the op's name.
LogicalResult emitRunning(Operation *op, KernelEmitter &e) {
  int64_t axis = cast<IntegerAttr>(op->getAttr("axis")).getInt();
  auto flag = [&](const char *name) {
    return cast<BoolAttr>(op->getAttr(name)).getValue() ? "true" : "false";
  };
  e.line("dlc::rt::" + op->getName().stripDialect().str() + "(" + e.ptr(op->getOperand(0)) +
         ", " + e.ptr(op->getResult(0)) + aroundAxis(op->getOperand(0), axis) + ", " +
         flag("exclusive") + ", " + flag("reverse") + ");");
  return success();
}

} // namespace

void addReductionEmitters(EmitterTable &table) {
  table.forOp<ArgMaxOp>() = emitArgReduce;
  table.forOp<ArgMinOp>() = emitArgReduce;
  table.forOp<CumSumOp>() = emitRunning;
  table.forOp<CumProdOp>() = emitRunning;
  table.forOp<SoftmaxOp>() = emitSoftmax;
  table.forOp<LayerNormOp>() = emitLayerNorm;
  table.forOp<SoftmaxGradOp>() = emitSoftmaxGrad;
  table.forOp<NllLossOp>() = emitNllLoss;
  table.forOp<NllLossGradOp>() = emitNllLoss;
  for (const std::string &name : opsOfFamily(OpFamily::Reduce))
    table[name] = emitReduce;
}

} // namespace dlc
