// Verifiers of the window ops (convolution, pools, normalization over channels, RoiAlign) and
// the runtime parameters the code generators read from them.
#include "dialects/DlcDialect.h"
#include "dialects/Sizes.h"
#include "dialects/Verifiers.h"

using namespace mlir;

namespace dlc {

FailureOr<SmallVector<int64_t>>
verifyWindow(Operation *op, ArrayRef<int64_t> input, ArrayRef<int64_t> kernel,
             ArrayRef<int64_t> strides, ArrayRef<int64_t> pads, ArrayRef<int64_t> dilations,
             int64_t outChannels, bool ceilMode) {
  if (input.size() < 3 || input.size() > 5)
    return op->emitOpError("input must have 1 to 3 spatial dims, got rank ") << input.size();
  size_t spatial = input.size() - 2;
  if (kernel.size() != spatial || strides.size() != spatial || dilations.size() != spatial ||
      pads.size() != 2 * spatial)
    return op->emitOpError("kernel/strides/dilations need ")
           << spatial << " entries and pads " << 2 * spatial;
  SmallVector<int64_t> out{input[0], outChannels};
  for (size_t i = 0; i < spatial; ++i) {
    if (kernel[i] < 1 || strides[i] < 1 || dilations[i] < 1 || pads[i] < 0 ||
        pads[i + spatial] < 0)
      return op->emitOpError("kernel, strides and dilations must be positive, pads >= 0");
    out.push_back(windowOutputSize(input[i + 2], kernel[i], strides[i], pads[i],
                                   pads[i + spatial], dilations[i], ceilMode));
  }
  return out;
}

// [N, H, W, C] as [N, C, H, W], for a channels-last conv's shapes.
static SmallVector<int64_t> channelsFirst(ArrayRef<int64_t> nhwc) {
  return {nhwc[0], nhwc[3], nhwc[1], nhwc[2]};
}

LogicalResult ConvOp::verify() {
  auto w = tensorType(getWeight()).getShape();
  SmallVector<int64_t> x(tensorType(getInput()).getShape());
  if (getPlanarInput() && !getChannelsLast())
    return emitOpError("planar_input needs channels_last (it keeps only the input planar)");
  if (getChannelsLast()) {
    if (x.size() != 4)
      return emitOpError("channels_last needs 2 spatial dims, got rank ") << x.size();
    if (!getWeight().getDefiningOp<ConstantOp>())
      return emitOpError("channels_last needs a constant weight (laid out at compile time)");
    if (!getPlanarInput())
      x = channelsFirst(x);
  }
  if (w.size() != x.size())
    return emitOpError("weight rank ") << w.size() << " differs from input rank " << x.size();
  int64_t group = getGroup();
  if (group < 1 || x[1] % group || w[0] % group || w[1] * group != x[1])
    return emitOpError("channels do not match: input ")
           << x[1] << ", weight " << dimsString(w) << ", group " << group;
  if (getBias() && tensorType(getBias()).getShape() != ArrayRef<int64_t>{w[0]})
    return emitOpError("bias must have shape [") << w[0] << "]";
  if (getResidual() && getResidual().getType() != getType())
    return emitOpError("residual must have the result's type");
  if (failed(verifyEpilogue(*this)))
    return failure();
  auto expected = verifyWindow(*this, x, w.drop_front(2), getStrides(), getPads(),
                               getDilations(), w[0], /*ceilMode=*/false);
  if (failed(expected))
    return failure();
  if (getInputScale()) {
    // The kernels scale a pointwise convolution's input as they read it: each output reads
    // one position, all its channels. Of one channel it is depthwise to the runtime, whose
    // depthwise kernels take no scale.
    auto isOne = [](int64_t v) { return v == 1; };
    if (getPlanarInput())
      return emitOpError("input_scale does not apply with planar_input (its kernel takes none)");
    const bool pointwise = group == 1 && x[1] > 1 && llvm::all_of(w.drop_front(2), isOne) &&
                           llvm::all_of(getStrides(), isOne) &&
                           llvm::all_of(getPads(), [](int64_t p) { return p == 0; });
    SmallVector<int64_t> scaleShape(x.size(), 1);
    scaleShape[0] = x[0];
    scaleShape[getChannelsLast() ? x.size() - 1 : 1] = x[1];
    if (!pointwise || tensorType(getInputScale()).getShape() != ArrayRef<int64_t>(scaleShape))
      return emitOpError("input_scale needs a pointwise convolution of one group over "
                         "channels, and shape ")
             << dimsString(scaleShape);
  }
  if (!getChannelsLast())
    return checkResultShape(*this, *expected);
  SmallVector<int64_t> &shape = *expected;
  if (failed(checkResultShape(*this, {shape[0], shape[2], shape[3], shape[1]})))
    return failure();
  if (getPlanarInput() && !dlc::rt::channelsLastApplies(convParams(*this)))
    return emitOpError("planar_input applies only to 2-d convolutions of one group over at most ")
           << dlc::rt::kMaxPlanarInputChannels << " input channels";
  if (!dlc::rt::channelsLastApplies(convParams(*this)))
    return emitOpError("channels_last applies only to depthwise and pointwise convolutions "
                       "(and, with planar_input, to first layers)");
  return success();
}

LogicalResult BatchNormOp::verify() {
  auto x = tensorType(getInput()).getShape();
  if (x.size() < 2)
    return emitOpError("input must have rank >= 2");
  for (Value param : {getScale(), getBias(), getMean(), getVariance()})
    if (tensorType(param).getShape() != ArrayRef<int64_t>{x[1]})
      return emitOpError("scale, bias, mean and variance must have shape [") << x[1] << "]";
  return checkResultShape(*this, x);
}

template <typename PoolOp> static LogicalResult verifyPool(PoolOp op) {
  auto x = tensorType(op.getInput()).getShape();
  auto expected = verifyWindow(op, x, op.getKernelShape(), op.getStrides(), op.getPads(),
                               op.getDilations(), x.size() > 1 ? x[1] : 0, op.getCeilMode());
  if (failed(expected))
    return failure();
  return checkResultShape(op, *expected);
}
LogicalResult MaxPoolOp::verify() { return verifyPool(*this); }
LogicalResult MaxPoolIndicesOp::verify() { return verifyPool(*this); }
LogicalResult AvgPoolOp::verify() { return verifyPool(*this); }

LogicalResult RoiAlignOp::verify() {
  auto x = tensorType(getInput()).getShape(), rois = tensorType(getRois()).getShape();
  auto indices = tensorType(getBatchIndices()).getShape(), y = tensorType(getOutput()).getShape();
  if (x.size() != 4)
    return emitOpError("input must be [N, C, H, W], got ") << dimsString(x);
  if (rois.size() != 2 || rois[1] != 4 || indices.size() != 1 || indices[0] != rois[0])
    return emitOpError("rois ") << dimsString(rois) << " and batch indices "
                                << dimsString(indices) << " must be [R, 4] and [R]";
  if (y.size() != 4 || y[0] != rois[0] || y[1] != x[1])
    return emitOpError("result ") << dimsString(y) << " must be [" << rois[0] << ", " << x[1]
                                  << ", height, width]";
  // A sample clamps to the map's edge pixels: a map without pixels has none to read.
  if ((x[2] == 0 || x[3] == 0) && tensorType(getOutput()).getNumElements() > 0)
    return emitOpError("input ") << dimsString(x) << " has no pixels to sample";
  return success();
}

SmallVector<int64_t> globalPooledShape(ArrayRef<int64_t> x) {
  SmallVector<int64_t> pooled(x.begin(), x.begin() + 2);
  pooled.append(x.size() - 2, 1);
  return pooled;
}

LogicalResult GlobalAvgPoolOp::verify() {
  auto x = tensorType(getInput()).getShape();
  if (x.size() < 3)
    return emitOpError("input must have spatial dims");
  return checkResultShape(*this, globalPooledShape(x));
}

static void fillWindow(dlc::rt::WindowParams &p, ArrayRef<int64_t> in, ArrayRef<int64_t> out,
                       ArrayRef<int64_t> kernel, ArrayRef<int64_t> strides,
                       ArrayRef<int64_t> pads, ArrayRef<int64_t> dilations) {
  size_t spatial = in.size() - 2, skip = 3 - spatial;
  p.batch = in[0];
  p.channels = in[1];
  for (size_t i = 0; i < 3; ++i) {
    bool used = i >= skip;
    size_t j = i - skip;
    p.in[i] = used ? in[j + 2] : 1;
    p.out[i] = used ? out[j + 2] : 1;
    p.kernel[i] = used ? kernel[j] : 1;
    p.stride[i] = used ? strides[j] : 1;
    p.padBegin[i] = used ? pads[j] : 0;
    p.dilation[i] = used ? dilations[j] : 1;
  }
}

// The forward convolution's parameters, from the types of its input, weight and output
// (the same for the convolution and both of its gradients).
template <typename Op>
static dlc::rt::ConvParams convParamsOf(Op op, Value input, Value weight, Value output) {
  dlc::rt::ConvParams p{};
  auto w = tensorType(weight).getShape();
  fillWindow(p.window, tensorType(input).getShape(), tensorType(output).getShape(),
             w.drop_front(2), op.getStrides(), op.getPads(), op.getDilations());
  p.outChannels = w[0];
  p.groups = op.getGroup();
  return p;
}

dlc::rt::ConvParams convParams(ConvOp op) {
  if (!op.getChannelsLast())
    return convParamsOf(op, op.getInput(), op.getWeight(), op.getOutput());
  dlc::rt::ConvParams p{};
  auto w = tensorType(op.getWeight()).getShape();
  auto input = tensorType(op.getInput()).getShape();
  fillWindow(p.window, op.getPlanarInput() ? SmallVector<int64_t>(input) : channelsFirst(input),
             channelsFirst(tensorType(op.getOutput()).getShape()), w.drop_front(2), op.getStrides(),
             op.getPads(), op.getDilations());
  p.outChannels = w[0];
  p.groups = op.getGroup();
  p.channelsLast = true;
  p.planarInput = op.getPlanarInput();
  return p;
}
dlc::rt::ConvParams convParams(ConvGradInputOp op) {
  return convParamsOf(op, op.getOutput(), op.getWeight(), op.getGrad());
}
dlc::rt::ConvParams convParams(ConvGradWeightOp op) {
  return convParamsOf(op, op.getInput(), op.getOutput(), op.getGrad());
}

dlc::rt::WindowParams windowParams(Operation *poolOp, Value input, Value output) {
  dlc::rt::WindowParams p{};
  auto attr = [&](StringRef name) {
    return cast<DenseI64ArrayAttr>(poolOp->getAttr(name)).asArrayRef();
  };
  fillWindow(p, tensorType(input).getShape(), tensorType(output).getShape(),
             attr("kernel_shape"), attr("strides"), attr("pads"), attr("dilations"));
  return p;
}

} // namespace dlc
