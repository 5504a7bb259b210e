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

void declareConvParams(const dlc::rt::ConvParams &p, KernelEmitter &e) {
  e.line("static const dlc::rt::ConvParams params = {" + windowLiteral(p.window) + ", " +
         std::to_string(p.outChannels) + ", " + std::to_string(p.groups) + ", " +
         std::to_string(p.workspaceLimit) + ", " + (p.packedWeights ? "true" : "false") + ", " +
         epilogueLiteral(p.epilogue) + ", " + (p.channelsLast ? "true" : "false") + ", " +
         (p.planarInput ? "true" : "false") + "};");
}

LogicalResult emitConv(Operation *op, KernelEmitter &e) {
  auto conv = cast<ConvOp>(op);
  dlc::rt::ConvParams params = convParams(conv);
  OpOperand &weightUse = conv.getWeightMutable();
  std::optional<WeightPacking> packing = weightPacking(weightUse);
  params.packedWeights = packing.has_value();
  params.epilogue = epilogueOf(op);
  declareConvParams(params, e);
  e.line("dlc::rt::convF32(params, " + e.ptr(conv.getInput()) + ", " +
         (packing ? e.packedWeight(weightUse, *packing) : e.ptr(conv.getWeight())) + ", " +
         (conv.getBias() ? e.ptr(conv.getBias()) : "nullptr") + ", " +
         (conv.getResidual() ? e.ptr(conv.getResidual()) : "nullptr") + ", " +
         e.ptr(conv.getOutput()) + ", " + e.workspace(op) +
         (conv.getInputScale() ? ", " + e.ptr(conv.getInputScale()) : "") + ");");
  return success();
}

LogicalResult emitConvGradInput(Operation *op, KernelEmitter &e) {
  auto grad = cast<ConvGradInputOp>(op);
  declareConvParams(convParams(grad), e);
  e.line("dlc::rt::convBackwardDataF32(params, " + e.ptr(grad.getGrad()) + ", " +
         e.ptr(grad.getWeight()) + ", " + e.ptr(grad.getOutput()) + ", " + e.workspace(op) +
         ");");
  return success();
}

LogicalResult emitConvGradWeight(Operation *op, KernelEmitter &e) {
  auto grad = cast<ConvGradWeightOp>(op);
  declareConvParams(convParams(grad), e);
  e.line("dlc::rt::convBackwardFilterF32(params, " + e.ptr(grad.getInput()) + ", " +
         e.ptr(grad.getGrad()) + ", " + e.ptr(grad.getOutput()) + ", " + e.workspace(op) +
         ");");
  return success();
}

// Declares `params` for a pool over `input` making `output`.
void declareWindowParams(Operation *op, Value input, Value output, KernelEmitter &e) {
  e.line("static const dlc::rt::WindowParams params = " +
         windowLiteral(windowParams(op, input, output)) + ";");
}

// End pads matter for count_include_pad when ceil_mode extends the last window.
std::string avgPoolPadEnd(ArrayRef<int64_t> pads, KernelEmitter &e) {
  SmallVector<int64_t> padEnd(3 - pads.size() / 2, 0);
  padEnd.append(pads.begin() + pads.size() / 2, pads.end());
  return e.array(padEnd);
}

LogicalResult emitPool(Operation *op, KernelEmitter &e) {
  declareWindowParams(op, op->getOperand(0), op->getResult(0), e);
  std::string args = e.ptr(op->getOperand(0)) + ", " + e.ptr(op->getResult(0)) + ");";
  if (auto avg = dyn_cast<AvgPoolOp>(op))
    e.line("dlc::rt::avgPoolF32(params, " + avgPoolPadEnd(avg.getPads(), e) + ", " +
           (avg.getCountIncludePad() ? "true" : "false") + ", " + args);
  else
    e.line("dlc::rt::maxPoolF32(params, " + args);
  return success();
}

LogicalResult emitMaxPoolIndices(Operation *op, KernelEmitter &e) {
  auto pool = cast<MaxPoolIndicesOp>(op);
  declareWindowParams(op, pool.getInput(), pool.getOutput(), e);
  e.line("dlc::rt::maxPoolIndicesF32(params, " + e.ptr(pool.getInput()) + ", " +
         e.ptr(pool.getOutput()) + ", " + (pool.getColumnMajor() ? "true" : "false") + ");");
  return success();
}

LogicalResult emitMaxPoolGrad(Operation *op, KernelEmitter &e) {
  auto grad = cast<MaxPoolGradOp>(op);
  declareWindowParams(op, grad.getInput(), grad.getGrad(), e);
  e.line("dlc::rt::maxPoolGradF32(params, " + e.ptr(grad.getInput()) + ", " +
         e.ptr(grad.getGrad()) + ", " + e.ptr(grad.getOutput()) + ");");
  return success();
}

LogicalResult emitAvgPoolGrad(Operation *op, KernelEmitter &e) {
  auto grad = cast<AvgPoolGradOp>(op);
  declareWindowParams(op, grad.getOutput(), grad.getGrad(), e);
  e.line("dlc::rt::avgPoolGradF32(params, " + avgPoolPadEnd(grad.getPads(), e) + ", " +
         (grad.getCountIncludePad() ? "true" : "false") + ", " + e.ptr(grad.getGrad()) + ", " +
         e.ptr(grad.getOutput()) + ");");
  return success();
}

// Both directions: the larger of operand and result is the pool's input.
LogicalResult emitGlobalAvgPool(Operation *op, KernelEmitter &e) {
  bool forward = isa<GlobalAvgPoolOp>(op);
  auto shape = tensorType(forward ? op->getOperand(0) : op->getResult(0)).getShape();
  int64_t spatial = product(shape.drop_front(2));
  e.line(std::string("dlc::rt::") + (forward ? "globalAvgPoolF32(" : "globalAvgPoolGradF32(") +
         e.ptr(op->getOperand(0)) + ", " + e.ptr(op->getResult(0)) + ", " +
         std::to_string(shape[0] * shape[1]) + ", " + std::to_string(spatial) + ");");
  return success();
}

// ", N, C, spatial" of an [N, C, ...] tensor.
std::string batchChannelsSpatial(Value input) {
  auto shape = tensorType(input).getShape();
  return ", " + std::to_string(shape[0]) + ", " + std::to_string(shape[1]) + ", " +
         std::to_string(product(shape.drop_front(2)));
}

void addBatchNormTrainingEmitters(EmitterTable &table) {
  table.forOp<BatchNormStatsOp>() = [](Operation *op, KernelEmitter &e) {
    auto stats = cast<BatchNormStatsOp>(op);
    e.line("dlc::rt::batchNormStatsF32(" + e.ptr(stats.getInput()) + ", " +
           floatLiteral(stats.getEpsilon().convertToFloat()) + ", " + e.ptr(stats.getOutput()) +
           batchChannelsSpatial(stats.getInput()) + ");");
    return success();
  };
  table.forOp<BatchNormApplyOp>() = [](Operation *op, KernelEmitter &e) {
    auto bn = cast<BatchNormApplyOp>(op);
    e.line("dlc::rt::batchNormApplyF32(" + e.ptr(bn.getInput()) + ", " + e.ptr(bn.getStats()) +
           ", " + e.ptr(bn.getScale()) + ", " + e.ptr(bn.getBias()) + ", " +
           e.ptr(bn.getOutput()) + batchChannelsSpatial(bn.getInput()) + ");");
    return success();
  };
  table.forOp<BatchNormGradInputOp>() = [](Operation *op, KernelEmitter &e) {
    auto bn = cast<BatchNormGradInputOp>(op);
    e.line("dlc::rt::batchNormGradInputF32(" + e.ptr(bn.getGrad()) + ", " +
           e.ptr(bn.getInput()) + ", " + e.ptr(bn.getStats()) + ", " + e.ptr(bn.getScale()) +
           ", " + e.ptr(bn.getOutput()) + batchChannelsSpatial(bn.getInput()) + ");");
    return success();
  };
  table.forOp<BatchNormGradParamsOp>() = [](Operation *op, KernelEmitter &e) {
    auto bn = cast<BatchNormGradParamsOp>(op);
    e.line("dlc::rt::batchNormGradParamsF32(" + e.ptr(bn.getGrad()) + ", " +
           e.ptr(bn.getInput()) + ", " + e.ptr(bn.getStats()) + ", " + e.ptr(bn.getOutput()) +
           batchChannelsSpatial(bn.getInput()) + ");");
    return success();
  };
  table.forOp<BatchNormRunningUpdateOp>() = [](Operation *op, KernelEmitter &e) {
    auto update = cast<BatchNormRunningUpdateOp>(op);
    e.line("dlc::rt::batchNormRunningUpdateF32(" + e.ptr(update.getRunningMean()) +
           ", " + e.ptr(update.getRunningVar()) + ", " + e.ptr(update.getStats()) + ", " +
           floatLiteral(update.getMomentum().convertToFloat()) + ", " +
           std::to_string(tensorType(update.getStats()).getDimSize(1)) + ", " +
           std::to_string(update.getCount()) + ");");
    return success();
  };
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

std::string roiAlignFailure() {
  return "batch index out of range, non-finite region, or a region beyond " +
         std::to_string(dlc::rt::kMaxRoiSamplesPerAxis) + " samples per bin axis";
}

void addWindowEmitters(EmitterTable &table) {
  table.forOp<ConvOp>() = emitConv;
  table.forOp<ConvGradInputOp>() = emitConvGradInput;
  table.forOp<ConvGradWeightOp>() = emitConvGradWeight;
  table.forOp<MaxPoolOp>() = emitPool;
  table.forOp<MaxPoolIndicesOp>() = emitMaxPoolIndices;
  table.forOp<RoiAlignOp>() = [](Operation *op, KernelEmitter &e) {
    auto roi = cast<RoiAlignOp>(op);
    auto x = tensorType(roi.getInput()).getShape(), y = tensorType(roi.getOutput()).getShape();
    e.line("static const dlc::rt::RoiAlignParams params = {" + list(x) + ", " +
           std::to_string(y[0]) + ", " + std::to_string(y[2]) + ", " + std::to_string(y[3]) +
           ", " + std::to_string(roi.getSamplingRatio()) + ", " +
           floatLiteral(roi.getSpatialScale().convertToFloat()) + ", " +
           (roi.getHalfPixel() ? "true" : "false") + ", " + (roi.getMax() ? "true" : "false") +
           "};");
    e.fallibleCall("dlc::rt::roiAlignF32(params, " + e.ptr(roi.getInput()) + ", " +
                       e.ptr(roi.getRois()) + ", " + e.ptr(roi.getBatchIndices()) + ", " +
                       e.ptr(roi.getOutput()) + ")",
                   roiAlignFailure());
    return success();
  };
  table.forOp<MaxPoolGradOp>() = emitMaxPoolGrad;
  table.forOp<AvgPoolOp>() = emitPool;
  table.forOp<AvgPoolGradOp>() = emitAvgPoolGrad;
  table.forOp<GlobalAvgPoolOp>() = emitGlobalAvgPool;
  table.forOp<GlobalAvgPoolGradOp>() = emitGlobalAvgPool;
  table.forOp<BatchNormOp>() = emitBatchNorm;
  addBatchNormTrainingEmitters(table);
}

} // namespace dlc
