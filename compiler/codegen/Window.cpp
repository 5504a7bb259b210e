// Convolution, pooling and batch normalization.
#include "compiler/codegen/Emitter.h"
#include "dialects/DlcDialect.h"

using namespace mlir;

namespace dlc {
namespace {

std::string triple(const int64_t (&v)[3]) { return "{" + list(ArrayRef<int64_t>(v, 3)) + "}"; }

std::string windowLiteral(const dlc::rt::WindowParams &p) {
  return "{" + std::to_string(p.batch) + ", " + std::to_string(p.channels) + ", " +
         triple(p.in) + ", " + triple(p.out) + ", " + triple(p.kernel) + ", " +
         triple(p.stride) + ", " + triple(p.padBegin) + ", " + triple(p.dilation) + "}";
}

LogicalResult emitConv(Operation *op, KernelEmitter &e) {
  auto conv = cast<ConvOp>(op);
  dlc::rt::ConvParams p = convParams(conv);
  e.line("static const dlc::rt::ConvParams params = {" + windowLiteral(p.window) + ", " +
         std::to_string(p.outChannels) + ", " + std::to_string(p.groups) + ", " +
         std::to_string(p.workspaceLimit) + "};");
  e.line("dlc::rt::convF32(params, " + e.ptr(conv.getInput()) + ", " + e.ptr(conv.getWeight()) +
         ", " + (conv.getBias() ? e.ptr(conv.getBias()) : "nullptr") + ", " +
         e.ptr(conv.getOutput()) + ", " + e.workspace(op) + ");");
  return success();
}

LogicalResult emitPool(Operation *op, KernelEmitter &e) {
  e.line("static const dlc::rt::WindowParams params = " + windowLiteral(windowParams(op)) + ";");
  std::string args = e.ptr(op->getOperand(0)) + ", " + e.ptr(op->getResult(0)) + ");";
  if (auto avg = dyn_cast<AvgPoolOp>(op)) {
    // End pads matter for count_include_pad when ceil_mode extends the last window.
    auto pads = avg.getPads();
    SmallVector<int64_t> padEnd(3 - pads.size() / 2, 0);
    padEnd.append(pads.begin() + pads.size() / 2, pads.end());
    std::string padEndName = e.array(padEnd);
    e.line("dlc::rt::avgPoolF32(params, " + padEndName + ", " +
           (avg.getCountIncludePad() ? "true" : "false") + ", " + args);
  }
  else
    e.line("dlc::rt::maxPoolF32(params, " + args);
  return success();
}

LogicalResult emitGlobalAvgPool(Operation *op, KernelEmitter &e) {
  auto shape = tensorType(op->getOperand(0)).getShape();
  int64_t spatial = product(shape.drop_front(2));
  e.line("dlc::rt::globalAvgPoolF32(" + e.ptr(op->getOperand(0)) + ", " +
         e.ptr(op->getResult(0)) + ", " + std::to_string(shape[0] * shape[1]) + ", " +
         std::to_string(spatial) + ");");
  return success();
}

LogicalResult emitBatchNorm(Operation *op, KernelEmitter &e) {
  auto bn = cast<BatchNormOp>(op);
  auto shape = tensorType(bn.getInput()).getShape();
  int64_t spatial = product(shape.drop_front(2));
  e.line("dlc::rt::batchNormF32(" + e.ptr(bn.getInput()) + ", " + e.ptr(bn.getScale()) + ", " +
         e.ptr(bn.getBias()) + ", " + e.ptr(bn.getMean()) + ", " + e.ptr(bn.getVariance()) +
         ", " + floatLiteral(bn.getEpsilon().convertToFloat()) + ", " + e.ptr(bn.getOutput()) +
         ", " + std::to_string(shape[0]) + ", " + std::to_string(shape[1]) + ", " +
         std::to_string(spatial) + ");");
  return success();
}

} // namespace

void addWindowEmitters(EmitterTable &table) {
  table["dlc.conv"] = emitConv;
  table["dlc.max_pool"] = emitPool;
  table["dlc.avg_pool"] = emitPool;
  table["dlc.global_avg_pool"] = emitGlobalAvgPool;
  table["dlc.batch_norm"] = emitBatchNorm;
}

} // namespace dlc
