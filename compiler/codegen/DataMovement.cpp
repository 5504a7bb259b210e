// Ops that move or select elements (scatters may combine them); all take any element type.
#include "compiler/codegen/Emitter.h"
#include "dialects/DlcDialect.h"

using namespace mlir;

namespace dlc {
namespace {

int64_t elementSize(Value v) { return elementBytes(tensorType(v).getElementType()); }

LogicalResult emitReshape(Operation *op, KernelEmitter &e) {
  auto type = tensorType(op->getResult(0));
  e.line("dlc::rt::copyBytes(" + e.ptr(op->getOperand(0)) + ", " + e.ptr(op->getResult(0)) + ", " +
         std::to_string(tensorBytes(type)) + ");");
  return success();
}

LogicalResult emitTranspose(Operation *op, KernelEmitter &e) {
  auto transpose = cast<TransposeOp>(op);
  auto shape = tensorType(transpose.getInput()).getShape();
  std::string inShape = e.array(shape), perm = e.array(transpose.getPerm());
  e.line("dlc::rt::transpose(" + e.ptr(transpose.getInput()) + ", " + e.ptr(transpose.getOutput()) +
         ", " + std::to_string(elementSize(transpose.getInput())) + ", " + inShape + ", " + perm +
         ", " + std::to_string(shape.size()) + ");");
  return success();
}

LogicalResult emitConcat(Operation *op, KernelEmitter &e) {
  auto concat = cast<ConcatOp>(op);
  auto shape = tensorType(concat.getOutput()).getShape();
  int64_t axis = concat.getAxis();
  auto [outer, inner] = outerInner(shape, axis);
  std::string pointers;
  SmallVector<int64_t> sizes;
  for (Value in : concat.getInputs()) {
    pointers += (pointers.empty() ? "" : ", ") + e.ptr(in);
    sizes.push_back(tensorType(in).getDimSize(axis));
  }
  std::string sizesName = e.array(sizes);
  e.line("const void *const inputs_[] = {" + pointers + "};");
  e.line("dlc::rt::concat(inputs_, " + sizesName + ", " + std::to_string(sizes.size()) + ", " +
         e.ptr(concat.getOutput()) + ", " + std::to_string(outer) + ", " + std::to_string(inner) +
         ", " + std::to_string(elementSize(concat.getOutput())) + ");");
  return success();
}

LogicalResult emitGather(Operation *op, KernelEmitter &e) {
  auto gather = cast<GatherOp>(op);
  auto shape = tensorType(gather.getInput()).getShape();
  int64_t axis = gather.getAxis();
  auto [outer, inner] = outerInner(shape, axis);
  e.fallibleCall("dlc::rt::gather(" + e.ptr(gather.getInput()) + ", " + e.ptr(gather.getIndices()) +
                     ", " + std::to_string(tensorType(gather.getIndices()).getNumElements()) +
                     ", " + e.ptr(gather.getOutput()) + ", " + std::to_string(outer) + ", " +
                     std::to_string(shape[axis]) + ", " + std::to_string(inner) + ", " +
                     std::to_string(elementSize(gather.getInput())) + ")",
                 "index out of range");
  return success();
}

LogicalResult emitGatherElements(Operation *op, KernelEmitter &e) {
  auto gather = cast<GatherElementsOp>(op);
  auto indexShape = tensorType(gather.getIndices()).getShape();
  if (tensorType(gather.getOutput()).getNumElements() == 0)
    return success();
  e.fallibleCall("dlc::rt::gatherElements(" + e.ptr(gather.getInput()) + ", " +
                     e.array(tensorType(gather.getInput()).getShape()) + ", " +
                     e.ptr(gather.getIndices()) + ", " + e.array(indexShape) + ", " +
                     e.ptr(gather.getOutput()) + ", " + std::to_string(indexShape.size()) + ", " +
                     std::to_string(gather.getAxis()) + ", " +
                     std::to_string(elementSize(gather.getInput())) + ")",
                 "index out of range");
  return success();
}

std::string scatterReduction(StringRef reduction) {
  std::string kind = reduction.str();
  kind[0] = std::toupper(kind[0]);
  return "dlc::rt::ScatterReduction::" + kind;
}

LogicalResult emitScatterElements(Operation *op, KernelEmitter &e) {
  auto scatter = cast<ScatterElementsOp>(op);
  auto indexShape = tensorType(scatter.getIndices()).getShape();
  Type element = tensorType(scatter.getInput()).getElementType();
  e.fallibleCall("dlc::rt::scatterElements<" + cType(element) + ">(" + e.ptr(scatter.getInput()) +
                     ", " + e.array(tensorType(scatter.getInput()).getShape()) + ", " +
                     e.ptr(scatter.getIndices()) + ", " + e.array(indexShape) + ", " +
                     e.ptr(scatter.getUpdates()) + ", " + e.ptr(scatter.getOutput()) + ", " +
                     std::to_string(indexShape.size()) + ", " + std::to_string(scatter.getAxis()) +
                     ", " + scatterReduction(scatter.getReduction()) + ")",
                 "index out of range");
  return success();
}

LogicalResult emitScatterND(Operation *op, KernelEmitter &e) {
  auto scatter = cast<ScatterNDOp>(op);
  auto x = tensorType(scatter.getInput());
  auto indexShape = tensorType(scatter.getIndices()).getShape();
  int64_t k = indexShape.back();
  e.fallibleCall("dlc::rt::scatterND<" + cType(x.getElementType()) + ">(" +
                     e.ptr(scatter.getInput()) + ", " + e.array(x.getShape()) + ", " +
                     std::to_string(x.getRank()) + ", " + e.ptr(scatter.getIndices()) + ", " +
                     std::to_string(k ? tensorType(scatter.getIndices()).getNumElements() / k
                                      : tensorType(scatter.getIndices()).getNumElements()) +
                     ", " + std::to_string(k) + ", " + e.ptr(scatter.getUpdates()) + ", " +
                     e.ptr(scatter.getOutput()) + ", " + scatterReduction(scatter.getReduction()) +
                     ")",
                 "index out of range");
  return success();
}

LogicalResult emitGatherND(Operation *op, KernelEmitter &e) {
  auto gather = cast<GatherNDOp>(op);
  auto x = tensorType(gather.getInput());
  auto indexShape = tensorType(gather.getIndices()).getShape();
  int64_t batchDims = gather.getBatchDims(), k = indexShape.back();
  if (tensorType(gather.getOutput()).getNumElements() == 0)
    return success();
  int64_t batches = 1, tuples = 1;
  for (int64_t d = 0; d + 1 < (int64_t)indexShape.size(); ++d)
    (d < batchDims ? batches : tuples) *= indexShape[d];
  e.fallibleCall("dlc::rt::gatherND(" + e.ptr(gather.getInput()) + ", " + e.array(x.getShape()) +
                     ", " + std::to_string(x.getRank()) + ", " + std::to_string(batchDims) + ", " +
                     e.ptr(gather.getIndices()) + ", " + std::to_string(batches) + ", " +
                     std::to_string(tuples) + ", " + std::to_string(k) + ", " +
                     e.ptr(gather.getOutput()) + ", " +
                     std::to_string(elementSize(gather.getInput())) + ")",
                 "index out of range");
  return success();
}

LogicalResult emitTopK(Operation *op, KernelEmitter &e) {
  auto topK = cast<TopKOp>(op);
  auto x = tensorType(topK.getInput());
  int64_t axis = topK.getAxis();
  auto [outer, inner] = outerInner(x.getShape(), axis);
  if (tensorType(topK.getOutput()).getNumElements() == 0)
    return success();
  e.line("dlc::rt::topK<" + cType(x.getElementType()) + ">(" + e.ptr(topK.getInput()) + ", " +
         e.ptr(topK.getOutput()) + ", " + std::to_string(outer) + ", " +
         std::to_string(x.getDimSize(axis)) + ", " + std::to_string(inner) + ", " +
         std::to_string(tensorType(topK.getOutput()).getDimSize(axis)) + ", " +
         (topK.getLargest() ? "true" : "false") + ");");
  return success();
}

LogicalResult emitSlice(Operation *op, KernelEmitter &e) {
  auto slice = cast<SliceOp>(op);
  auto in = tensorType(slice.getInput()).getShape();
  auto out = tensorType(slice.getOutput()).getShape();
  if (tensorType(slice.getOutput()).getNumElements() == 0)
    return success();
  std::string inShape = e.array(in), starts = e.array(slice.getStarts()),
              steps = e.array(slice.getSteps()), outShape = e.array(out);
  e.line("dlc::rt::slice(" + e.ptr(slice.getInput()) + ", " + e.ptr(slice.getOutput()) + ", " +
         std::to_string(elementSize(slice.getInput())) + ", " + inShape + ", " + starts + ", " +
         steps + ", " + outShape + ", " + std::to_string(in.size()) + ");");
  return success();
}

LogicalResult emitSliceGrad(Operation *op, KernelEmitter &e) {
  auto grad = cast<SliceGradOp>(op);
  auto in = tensorType(grad.getOutput()).getShape();
  std::string inShape = e.array(in), starts = e.array(grad.getStarts()),
              steps = e.array(grad.getSteps()),
              outShape = e.array(tensorType(grad.getGrad()).getShape());
  e.line("dlc::rt::sliceGrad(" + e.ptr(grad.getGrad()) + ", " + e.ptr(grad.getOutput()) + ", " +
         inShape + ", " + starts + ", " + steps + ", " + outShape + ", " +
         std::to_string(in.size()) + ");");
  return success();
}

LogicalResult emitGatherGrad(Operation *op, KernelEmitter &e) {
  auto grad = cast<GatherGradOp>(op);
  auto shape = tensorType(grad.getOutput()).getShape();
  int64_t axis = grad.getAxis();
  auto [outer, inner] = outerInner(shape, axis);
  e.line("dlc::rt::gatherGradF32(" + e.ptr(grad.getGrad()) + ", " + e.ptr(grad.getIndices()) +
         ", " + std::to_string(tensorType(grad.getIndices()).getNumElements()) + ", " +
         e.ptr(grad.getOutput()) + ", " + std::to_string(outer) + ", " +
         std::to_string(shape[axis]) + ", " + std::to_string(inner) + ");");
  return success();
}

LogicalResult emitBroadcast(Operation *op, KernelEmitter &e) {
  auto out = tensorType(op->getResult(0)).getShape();
  std::string strides = e.array(broadcastStrides(tensorType(op->getOperand(0)).getShape(), out));
  std::string shape = e.array(out);
  Type element = tensorType(op->getResult(0)).getElementType();
  if (element.isF32()) {
    e.line("dlc::rt::broadcastF32(" + e.ptr(op->getOperand(0)) + ", " + strides + ", " +
           e.ptr(op->getResult(0)) + ", " + shape + ", " + std::to_string(out.size()) + ");");
  } else {
    e.line("dlc::rt::broadcastBytes(" + e.ptr(op->getOperand(0)) + ", " + strides + ", " +
           e.ptr(op->getResult(0)) + ", " + shape + ", " + std::to_string(out.size()) + ", " +
           std::to_string(elementBytes(element)) + ");");
  }
  return success();
}

} // namespace

void addDataMovementEmitters(EmitterTable &table) {
  table.forOp<ReshapeOp>() = emitReshape;
  table.forOp<TransposeOp>() = emitTranspose;
  table.forOp<GatherElementsOp>() = emitGatherElements;
  table.forOp<ScatterElementsOp>() = emitScatterElements;
  table.forOp<ScatterNDOp>() = emitScatterND;
  table.forOp<GatherNDOp>() = emitGatherND;
  table.forOp<TopKOp>() = emitTopK;
  table.forOp<ConcatOp>() = emitConcat;
  table.forOp<GatherOp>() = emitGather;
  table.forOp<SliceOp>() = emitSlice;
  table.forOp<SliceGradOp>() = emitSliceGrad;
  table.forOp<GatherGradOp>() = emitGatherGrad;
  table.forOp<BroadcastOp>() = emitBroadcast;
}

} // namespace dlc
