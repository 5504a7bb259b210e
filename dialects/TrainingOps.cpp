// Verifiers of the ops that only training builds: gradients, dropout masks, optimizer updates.
#include "dialects/DlcDialect.h"
#include "dialects/Sizes.h"
#include "dialects/Verifiers.h"


using namespace mlir;

namespace dlc {

LogicalResult UnaryGradOp::verify() {
  std::optional<rt::UnaryKind> kind = unaryKindNamed(getKind());
  if (!kind || rt::scalar::unaryGradFrom(*kind) == rt::GradFrom::None)
    return emitOpError("no gradient kernel for unary kind '") << getKind() << "'";
  return sameShapes(*this, {getGrad(), getSaved()}, getOutput());
}

// A window op's gradient operand has the shape of the forward op's output, `expected` (or
// the forward op is itself invalid, already reported).
static LogicalResult checkGradShape(Operation *op, ArrayRef<int64_t> y,
                                    FailureOr<SmallVector<int64_t>> expected) {
  if (failed(expected))
    return failure();
  if (y != ArrayRef<int64_t>(*expected))
    return op->emitOpError("gradient shape ") << dimsString(y) << " should be "
                                              << dimsString(*expected);
  return success();
}

// The convolution the gradient belongs to must be valid: input, weight and output types of
// `convParams` are those of a verified dlc.conv.
template <typename Op>
static LogicalResult verifyConvGrad(Op op, ArrayRef<int64_t> x, ArrayRef<int64_t> w,
                                    ArrayRef<int64_t> y) {
  if (w.size() != x.size() || y.size() != x.size() || x.size() < 3 || x.size() > 5)
    return op.emitOpError("input, weight and gradient need one equal rank from 3 to 5");
  int64_t group = op.getGroup();
  if (group < 1 || x[1] % group || w[0] % group || w[1] * group != x[1] || y[1] != w[0] ||
      y[0] != x[0])
    return op.emitOpError("channels do not match: input ")
           << dimsString(x) << ", weight " << dimsString(w) << ", gradient " << dimsString(y);
  return checkGradShape(op, y,
                        verifyWindow(op, x, w.drop_front(2), op.getStrides(), op.getPads(),
                                     op.getDilations(), w[0], /*ceilMode=*/false));
}
LogicalResult ConvGradInputOp::verify() {
  return verifyConvGrad(*this, tensorType(getOutput()).getShape(),
                        tensorType(getWeight()).getShape(), tensorType(getGrad()).getShape());
}
LogicalResult ConvGradWeightOp::verify() {
  return verifyConvGrad(*this, tensorType(getInput()).getShape(),
                        tensorType(getOutput()).getShape(), tensorType(getGrad()).getShape());
}
// `x` is the pool's input shape and `y` its output's.
template <typename Op>
static LogicalResult verifyPoolGrad(Op op, ArrayRef<int64_t> x, ArrayRef<int64_t> y) {
  return checkGradShape(op, y,
                        verifyWindow(op, x, op.getKernelShape(), op.getStrides(), op.getPads(),
                                     op.getDilations(), x.size() > 1 ? x[1] : 0,
                                     op.getCeilMode()));
}
LogicalResult MaxPoolGradOp::verify() {
  if (failed(sameShapes(*this, {getInput()}, getOutput())))
    return failure();
  return verifyPoolGrad(*this, tensorType(getInput()).getShape(),
                        tensorType(getGrad()).getShape());
}
LogicalResult AvgPoolGradOp::verify() {
  return verifyPoolGrad(*this, tensorType(getOutput()).getShape(),
                        tensorType(getGrad()).getShape());
}

LogicalResult GlobalAvgPoolGradOp::verify() {
  auto x = tensorType(getOutput()).getShape();
  if (x.size() < 3)
    return emitOpError("result must have spatial dims");
  SmallVector<int64_t> pooled = globalPooledShape(x);
  if (tensorType(getGrad()).getShape() != ArrayRef<int64_t>(pooled))
    return emitOpError("gradient shape should be ") << dimsString(pooled);
  return success();
}

LogicalResult BroadcastOp::verify() {
  auto in = tensorType(getInput()).getShape(), out = tensorType(getOutput()).getShape();
  auto shape = broadcastShapes(in, out);
  if (failed(shape) || ArrayRef<int64_t>(*shape) != out)
    return emitOpError("cannot broadcast ") << dimsString(in) << " to " << dimsString(out);
  return success();
}

LogicalResult SoftmaxGradOp::verify() {
  int64_t rank = tensorType(getGrad()).getRank(), axis = getAxis();
  if (axis < 0 || axis >= std::max<int64_t>(rank, 1))
    return emitOpError("axis ") << axis << " out of range for rank " << rank;
  return sameShapes(*this, {getGrad(), getOutputValue()}, getOutput());
}

LogicalResult SliceGradOp::verify() {
  return verifySliceBounds(*this, tensorType(getOutput()).getShape(),
                           tensorType(getGrad()).getShape(), getStarts(), getSteps());
}

LogicalResult GatherGradOp::verify() {
  auto expected = gatheredShape(*this, tensorType(getOutput()).getShape(),
                                tensorType(getIndices()).getShape(), getAxis());
  if (failed(expected))
    return failure();
  if (tensorType(getGrad()).getShape() != ArrayRef<int64_t>(*expected))
    return emitOpError("gradient shape should be ") << dimsString(*expected);
  return success();
}

// Labels are the log-probabilities' shape without the class dim (dim 1).
static LogicalResult verifyLabels(Operation *op, ArrayRef<int64_t> logProbs,
                                  ArrayRef<int64_t> labels) {
  if (logProbs.size() < 2)
    return op->emitOpError("log-probabilities need rank >= 2 ([N, C, ...])");
  SmallVector<int64_t> expected = {logProbs[0]};
  expected.append(logProbs.begin() + 2, logProbs.end());
  if (labels != ArrayRef<int64_t>(expected))
    return op->emitOpError("labels shape ") << dimsString(labels) << " should be "
                                            << dimsString(expected);
  return success();
}
LogicalResult NllLossOp::verify() {
  return verifyLabels(*this, tensorType(getLogProbs()).getShape(),
                      tensorType(getLabels()).getShape());
}
LogicalResult NllLossGradOp::verify() {
  return verifyLabels(*this, tensorType(getOutput()).getShape(),
                      tensorType(getLabels()).getShape());
}

// [3, C] statistics (or [2, C] parameter gradients) of an [N, C, ...] input.
static LogicalResult verifyChannelRows(Operation *op, Value input, Value rows, int64_t count) {
  auto x = tensorType(input).getShape();
  if (x.size() < 2)
    return op->emitOpError("input must have rank >= 2");
  if (tensorType(rows).getShape() != ArrayRef<int64_t>{count, x[1]})
    return op->emitOpError("expects [") << count << ", " << x[1] << "] per-channel rows";
  return success();
}
static LogicalResult verifyChannelVectors(Operation *op, ValueRange vectors, Value input) {
  for (Value v : vectors)
    if (tensorType(v).getShape() != ArrayRef<int64_t>{tensorType(input).getDimSize(1)})
      return op->emitOpError("per-channel operands must have shape [")
             << tensorType(input).getDimSize(1) << "]";
  return success();
}
LogicalResult BatchNormStatsOp::verify() {
  return verifyChannelRows(*this, getInput(), getOutput(), 3);
}
LogicalResult BatchNormApplyOp::verify() {
  if (failed(verifyChannelRows(*this, getInput(), getStats(), 3)) ||
      failed(verifyChannelVectors(*this, {getScale(), getBias()}, getInput())))
    return failure();
  return sameShapes(*this, {getInput()}, getOutput());
}
LogicalResult BatchNormGradInputOp::verify() {
  if (failed(verifyChannelRows(*this, getInput(), getStats(), 3)) ||
      failed(verifyChannelVectors(*this, {getScale()}, getInput())))
    return failure();
  return sameShapes(*this, {getGrad(), getInput()}, getOutput());
}
LogicalResult BatchNormGradParamsOp::verify() {
  if (failed(verifyChannelRows(*this, getInput(), getStats(), 3)) ||
      failed(verifyChannelRows(*this, getInput(), getOutput(), 2)))
    return failure();
  return sameShapes(*this, {getGrad()}, getInput());
}

LogicalResult DropoutMaskOp::verify() {
  float ratio = getRatio().convertToFloat();
  if (!(ratio >= 0.0f && ratio < 1.0f))
    return emitOpError("ratio must be in [0, 1), got ") << ratio;
  return success();
}

LogicalResult SgdUpdateOp::verify() {
  if (getMomentumBuffer() && getMomentum().convertToFloat() == 0.0f)
    return emitOpError("a momentum buffer needs a non-zero momentum");
  if (!getMomentumBuffer() && getMomentum().convertToFloat() != 0.0f)
    return emitOpError("a non-zero momentum needs a momentum buffer");
  SmallVector<Value> same = {getGrad()};
  if (getMomentumBuffer())
    same.push_back(getMomentumBuffer());
  return sameShapes(*this, same, getWeight());
}
LogicalResult AdamUpdateOp::verify() {
  return sameShapes(*this, {getGrad(), getExpAvg(), getExpAvgSq()}, getWeight());
}

} // namespace dlc
