// The CUDA target's windowed ops: pooling (and MaxPool's indices), RoiAlign, convolution
// (cuDNN, or a direct kernel), ConvTranspose and inference batch normalization.
#include "compiler/codegen/cuda/CudaEmitter.h"
#include "dialects/DlcDialect.h"
#include "dlc_cuda_conv.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;

namespace dlc {
namespace cudagen {
namespace {

// For a window op over (batch x channels) planes: `o0..o2`, the output position of thread i,
// and `rest`, the index of its plane.
std::string windowPosition(const dlc::rt::WindowParams &w) {
  std::string code = "  int64_t rest = i;\n";
  for (int d = 2; d >= 0; --d)
    code += "  const int64_t o" + std::to_string(d) + " = rest % " + std::to_string(w.out[d]) +
            ";\n  rest /= " + std::to_string(w.out[d]) + ";\n";
  return code;
}

// Input index of tap k<d> of output position o<d> along dim d (may lie in the padding).
std::string tapIndex(const dlc::rt::WindowParams &w, int d) {
  return "o" + str(d) + " * " + str(w.stride[d]) + " - " + str(w.padBegin[d]) + " + k" + str(d) +
         " * " + str(w.dilation[d]);
}

// `inner` (lines) inside loops over the window's taps k0..k2 that lie inside the input (at
// input indices i0..i2), indented from `indent`.
std::string forEachTap(const dlc::rt::WindowParams &w, std::string indent,
                       const std::string &inner) {
  std::string code, close;
  for (int d = 0; d < 3; ++d) {
    code += indent + "for (int64_t k" + str(d) + " = 0; k" + str(d) + " < " + str(w.kernel[d]) +
            "; ++k" + str(d) + ") {\n" + indent + "  const int64_t i" + str(d) + " = " +
            tapIndex(w, d) + ";\n" + indent + "  if (i" + str(d) + " < 0 || i" + str(d) +
            " >= " + str(w.in[d]) + ")\n" + indent + "    continue;\n";
    close = indent + "}\n" + close;
    indent += "  ";
  }
  SmallVector<StringRef> lines;
  llvm::SplitString(inner, lines, "\n");
  for (StringRef line : lines)
    code += indent + line.str() + "\n";
  return code + close;
}

// Max and average pooling over 1 to 3 spatial dims, and max pooling's indices: one thread per
// output element, its window's taps in the CPU kernel's order. Max: padding never wins, NaN
// propagates, an all-padding window stays -inf (index -1); the index is that of the first
// maximum or the last NaN, as the CPU's first-tap-then-better rule picks it. Average: the sum
// over the taps inside the input, divided by their count or (count_include_pad) by the taps
// inside the padded extent; 0 for no taps.
LogicalResult emitPool(Operation *op, KernelEmitter &e) {
  auto indices = dyn_cast<MaxPoolIndicesOp>(op);
  if (!isF32(op->getOperand(0)))
    return noKernelFor(op, indices ? "MaxPool indices" : "pooling");
  dlc::rt::WindowParams w = windowParams(op, op->getOperand(0), op->getResult(0));
  auto avg = dyn_cast<AvgPoolOp>(op);
  auto pads = cast<DenseI64ArrayAttr>(op->getAttr("pads")).asArrayRef();
  int64_t spatial = int64_t(pads.size() / 2), padEnd[3] = {0, 0, 0};
  for (int64_t d = 0; d < spatial; ++d)
    padEnd[3 - spatial + d] = pads[spatial + d];
  const int64_t n = tensorType(op->getResult(0)).getNumElements();
  const int64_t inPlane = w.in[0] * w.in[1] * w.in[2];
  std::string body = threadIndex(n) + windowPosition(w) + "  const float *plane = x + rest * " +
                     str(inPlane) + ";\n";
  const std::string tap = "(i0 * " + str(w.in[1]) + " + i1) * " + str(w.in[2]) + " + i2";
  std::string update;
  if (avg) {
    // The divisor: per dim, the taps inside the input, or (count_include_pad) those before the
    // end of the padded extent (taps never fall before -padBegin).
    const bool includePad = avg.getCountIncludePad();
    body += "  int64_t count = 1;\n";
    for (int d = 0; d < 3; ++d)
      body +=
          "  {\n    int64_t taps = 0;\n    for (int64_t k" + str(d) + " = 0; k" + str(d) + " < " +
          str(w.kernel[d]) + "; ++k" + str(d) + ") {\n      const int64_t at = " + tapIndex(w, d) +
          ";\n      taps += " +
          (includePad ? "at < " + str(w.in[d] + padEnd[d]) : "at >= 0 && at < " + str(w.in[d])) +
          ";\n    }\n    count *= taps;\n  }\n";
    body += "  float acc = 0.0f;\n";
    update = "acc += v;";
  } else if (indices) {
    // The spatial part of the index as the CPU kernel converts it (storage_order 1: the
    // first spatial dim varies fastest).
    const std::string at =
        indices.getColumnMajor() ? "i0 + (i1 + i2 * " + str(w.in[1]) + ") * " + str(w.in[0]) : tap;
    body += "  float acc = -INFINITY;\n  int64_t arg = -1;\n";
    update = "if (arg < 0 || v > acc || v != v) {\n  acc = v;\n  arg = " + at + ";\n}";
  } else {
    body += "  float acc = -INFINITY;\n";
    update = "acc = v > acc || v != v ? v : acc;";
  }
  body += forEachTap(w, "  ", "const float v = plane[" + tap + "];\n" + update + "\n");
  if (avg)
    body += "  y[i] = count > 0 ? acc / float(count) : 0.0f;\n";
  else if (indices)
    body += "  y[i] = arg >= 0 ? rest * " + str(inPlane) + " + arg : -1;\n";
  else
    body += "  y[i] = acc;\n";
  launchKernel(e, std::string("const float *x, ") + (indices ? "int64_t" : "float") + " *y", body,
               n, e.ptr(op->getOperand(0)) + ", " + e.ptr(op->getResult(0)));
  return success();
}

// RoiAlign: one thread per output bin (region, channel, ph, pw) recomputes its region's box
// and sample grid, then pools the bin's bilinear samples in the CPU kernel's order and double
// arithmetic. The threads of a region the CPU kernel refuses report its failure and write
// nothing (the CPU kernel stops there; either way the run fails with the same message).
LogicalResult emitRoiAlign(Operation *op, KernelEmitter &e) {
  auto roi = cast<RoiAlignOp>(op);
  auto x = tensorType(roi.getInput()).getShape(), y = tensorType(roi.getOutput()).getShape();
  const int64_t channels = x[1], height = x[2], width = x[3], bins = y[2] * y[3];
  const int64_t n = tensorType(roi.getOutput()).getNumElements();
  const bool max = roi.getMax();
  const std::string fail =
      " {\n    DLC_FAULT(faults, " + str(e.faultCode(roiAlignFailure())) + ");\n    return;\n  }\n";
  // Samples per bin along an axis of bin size `extent`: sampling_ratio, or enough to cover the
  // bin at unit spacing.
  auto samples = [&](const std::string &extent) {
    return roi.getSamplingRatio() > 0 ? "double(" + str(roi.getSamplingRatio()) + ")"
                                      : "ceil(" + extent + ")";
  };
  std::string body = threadIndex(n) + "  const int64_t pw = i % " + str(y[3]) + ", ph = i / " +
                     str(y[3]) + " % " + str(y[2]) + ", c = i / " + str(bins) + " % " +
                     str(channels) + ", r = i / " + str(bins * channels) + ";\n";
  body += "  const int64_t batch = batchIndices[r];\n  if (batch < 0 || batch >= " + str(x[0]) +
          ")" + fail;
  // |v| < inf: false for NaN and the infinities alike.
  body += "  double box[4];\n  bool finite = true;\n  for (int k = 0; k < 4; ++k) {\n" +
          std::string("    box[k] = double(rois[r * 4 + k]) * ") +
          deviceFloat(roi.getSpatialScale().convertToFloat()) +
          (roi.getHalfPixel() ? " - 0.5" : "") +
          ";\n    finite = finite && fabs(box[k]) < INFINITY;\n  }\n  if (!finite)" + fail;
  body += "  double roiWidth = box[2] - box[0], roiHeight = box[3] - box[1];\n";
  if (!roi.getHalfPixel()) // malformed regions become 1 x 1
    body += "  roiWidth = roiWidth < 1.0 ? 1.0 : roiWidth;\n"
            "  roiHeight = roiHeight < 1.0 ? 1.0 : roiHeight;\n";
  body += "  const double binHeight = roiHeight / " + str(y[2]) + ", binWidth = roiWidth / " +
          str(y[3]) + ";\n  const double samplesH = " + samples("binHeight") +
          ", samplesW = " + samples("binWidth") + ";\n  if (samplesH > " +
          str(dlc::rt::kMaxRoiSamplesPerAxis) + " || samplesW > " +
          str(dlc::rt::kMaxRoiSamplesPerAxis) + ")" + fail;
  body += "  const int64_t gridH = int64_t(samplesH < 0.0 ? 0.0 : samplesH);\n"
          "  const int64_t gridW = int64_t(samplesW < 0.0 ? 0.0 : samplesW);\n";
  body += "  const float *plane = x + (batch * " + str(channels) + " + c) * " +
          str(height * width) + ";\n  double acc = 0.0;\n" + (max ? "  bool first = true;\n" : "") +
          "  for (int64_t iy = 0; iy < gridH; ++iy)\n"
          "    for (int64_t ix = 0; ix < gridW; ++ix) {\n"
          "      double sy = box[1] + ph * binHeight + (iy + 0.5) * binHeight / gridH;\n"
          "      double sx = box[0] + pw * binWidth + (ix + 0.5) * binWidth / gridW;\n";
  // The four bilinear taps, weighted; a sample off the map contributes zeros.
  auto tap = [&](int k, const char *weights, const char *row, const char *column) {
    return "        taps[" + str(k) + "] = " + weights + " * plane[" + row + " * " + str(width) +
           " + " + column + "];\n";
  };
  body +=
      "      double taps[4] = {0.0, 0.0, 0.0, 0.0};\n      if (sy >= -1.0 && sy <= " + str(height) +
      " && sx >= -1.0 && sx <= " + str(width) +
      ") {\n        sy = sy < 0.0 ? 0.0 : sy;\n        sx = sx < 0.0 ? 0.0 : sx;\n" +
      "        int64_t y0 = int64_t(sy), x0 = int64_t(sx), y1 = y0 + 1, x1 = x0 + 1;\n" +
      "        if (y0 >= " + str(height - 1) +
      ")\n          sy = double(y0 = y1 = " + str(height - 1) +
      ");\n        if (x0 >= " + str(width - 1) +
      ")\n          sx = double(x0 = x1 = " + str(width - 1) + ");\n" +
      "        const double ly = sy - y0, lx = sx - x0, hy = 1.0 - ly, hx = 1.0 - lx;\n" +
      tap(0, "hy * hx", "y0", "x0") + tap(1, "hy * lx", "y0", "x1") +
      tap(2, "ly * hx", "y1", "x0") + tap(3, "ly * lx", "y1", "x1") + "      }\n";
  if (max) // ONNX's max mode: the largest weighted tap over all samples
    body += "      const double a = taps[0] < taps[1] ? taps[1] : taps[0];\n"
            "      const double b = taps[2] < taps[3] ? taps[3] : taps[2];\n"
            "      const double best = a < b ? b : a;\n"
            "      acc = first || acc < best ? best : acc;\n"
            "      first = false;\n    }\n  y[i] = float(acc);\n";
  else
    body += "      acc += taps[0] + taps[1] + taps[2] + taps[3];\n    }\n"
            "  y[i] = float(acc / double(gridH * gridW < 1 ? 1 : gridH * gridW));\n";
  launchKernel(
      e, "const float *x, const float *rois, const int64_t *batchIndices, float *y, int *faults",
      body, n,
      e.ptr(roi.getInput()) + ", " + e.ptr(roi.getRois()) + ", " + e.ptr(roi.getBatchIndices()) +
          ", " + e.ptr(roi.getOutput()) + ", faults");
  return success();
}

// cuDNN's shape of a convolution as a C++ initializer of dlc::cuda::CudnnConvShape.
std::string cudnnShapeLiteral(const dlc::cuda::CudnnConvShape &s) {
  auto ints = [](const int *v, int n) { return "{" + list(SmallVector<int64_t>(v, v + n)) + "}"; };
  return "{" + std::to_string(s.spatial) + ", " + ints(s.input, 5) + ", " + ints(s.filter, 5) +
         ", " + ints(s.output, 5) + ", " + ints(s.pad, 3) + ", " + ints(s.stride, 3) + ", " +
         ints(s.dilation, 3) + ", " + std::to_string(s.groups) + "}";
}

// Convolution by cuDNN (planned at create time, KernelEmitter::convPlan) followed, when there
// is a bias, residual or activation, by one kernel adding them; a shape cuDNN cannot take
// (padding that differs between the ends of a dim) runs as a direct kernel, one thread per
// output element summing its group's input channels and taps, with the same epilogue.
LogicalResult emitConv(Operation *op, KernelEmitter &e) {
  auto conv = cast<ConvOp>(op);
  dlc::rt::ConvParams p = convParams(conv);
  const dlc::rt::WindowParams &w = p.window;
  const dlc::rt::Epilogue epilogue = epilogueOf(op);
  const int64_t inPerGroup = w.channels / p.groups, outPerGroup = p.outChannels / p.groups;
  int64_t n = tensorType(conv.getOutput()).getNumElements();
  std::string body = threadIndex(n), params, args;
  dlc::cuda::CudnnConvShape shape;
  if (dlc::cuda::cudnnConvShape(p, shape)) {
    e.checkedCall("dlc::cuda::conv(context, convs[" + str(e.convPlan(cudnnShapeLiteral(shape))) +
                  "], " + e.ptr(conv.getInput()) + ", " + e.ptr(conv.getWeight()) + ", " +
                  e.ptr(conv.getOutput()) + ", workspace)");
    if (!conv.getBias() && !conv.getResidual() && epilogue.activation == dlc::rt::Activation::None)
      return success();
    if (conv.getBias())
      body += "  const int64_t m = i / " + str(w.out[0] * w.out[1] * w.out[2]) + " % " +
              str(p.outChannels) + ";\n";
    body += "  const float acc = y[i]" + std::string(conv.getBias() ? " + bias[m]" : "") + ";\n";
  } else {
    body += windowPosition(w) + "  const int64_t m = rest % " + str(p.outChannels) +
            ", batch = rest / " + str(p.outChannels) + ";\n  const float *input = x + (batch * " +
            str(w.channels) + " + m / " + str(outPerGroup) + " * " + str(inPerGroup) + ") * " +
            str(w.in[0] * w.in[1] * w.in[2]) + ";\n  const float *filter = w + m * " +
            str(inPerGroup * w.kernel[0] * w.kernel[1] * w.kernel[2]) +
            ";\n  float acc = " + (conv.getBias() ? "bias[m]" : "0.0f") +
            ";\n  for (int64_t c = 0; c < " + str(inPerGroup) + "; ++c) {\n";
    body +=
        forEachTap(w, "    ",
                   "acc += input[((c * " + str(w.in[0]) + " + i0) * " + str(w.in[1]) + " + i1) * " +
                       str(w.in[2]) + " + i2] * filter[((c * " + str(w.kernel[0]) + " + k0) * " +
                       str(w.kernel[1]) + " + k1) * " + str(w.kernel[2]) + " + k2];\n");
    body += "  }\n";
    params = "const float *x, const float *w, ";
    args = e.ptr(conv.getInput()) + ", " + e.ptr(conv.getWeight()) + ", ";
  }
  body += "  float v = acc" + std::string(conv.getResidual() ? " + residual[i]" : "") +
          ";\n  y[i] = " + activationExpression(epilogue) + ";\n";
  if (conv.getBias()) {
    params += "const float *bias, ";
    args += e.ptr(conv.getBias()) + ", ";
  }
  if (conv.getResidual()) {
    params += "const float *residual, ";
    args += e.ptr(conv.getResidual()) + ", ";
  }
  launchKernel(e, params + "float *y", body, n, args + e.ptr(conv.getOutput()));
  return success();
}

// ConvTranspose (and a conv's input gradient): one thread per element of the result, summing
// over its group's output channels the taps whose window covers it.
LogicalResult emitConvGradInput(Operation *op, KernelEmitter &e) {
  auto grad = cast<ConvGradInputOp>(op);
  if (!isF32(grad.getOutput()))
    return noKernelFor(op, "ConvTranspose");
  dlc::rt::ConvParams p = convParams(grad);
  const dlc::rt::WindowParams &w = p.window;
  const int64_t inPerGroup = w.channels / p.groups, outPerGroup = p.outChannels / p.groups;
  const int64_t n = tensorType(grad.getOutput()).getNumElements();
  // The position of thread i in the result (an input of the forward conv).
  std::string body = threadIndex(n) + "  int64_t rest = i;\n";
  for (int d = 2; d >= 0; --d)
    body += "  const int64_t i" + str(d) + " = rest % " + str(w.in[d]) +
            ";\n  rest /= " + str(w.in[d]) + ";\n";
  body += "  const int64_t c = rest % " + str(w.channels) + ", batch = rest / " + str(w.channels) +
          ", group = c / " + str(inPerGroup) + ";\n  float acc = 0.0f;\n" +
          "  for (int64_t m = group * " + str(outPerGroup) + "; m < (group + 1) * " +
          str(outPerGroup) + "; ++m) {\n    const float *dy = grad + (batch * " +
          str(p.outChannels) + " + m) * " + str(w.out[0] * w.out[1] * w.out[2]) +
          ";\n    const float *filter = weight + (m * " + str(inPerGroup) + " + c % " +
          str(inPerGroup) + ") * " + str(w.kernel[0] * w.kernel[1] * w.kernel[2]) + ";\n";
  std::string indent = "    ", close;
  for (int d = 0; d < 3; ++d) {
    const std::string k = "k" + str(d), o = "o" + str(d), at = "at" + str(d);
    body += indent + "for (int64_t " + k + " = 0; " + k + " < " + str(w.kernel[d]) + "; ++" + k +
            ") {\n" + indent + "  const int64_t " + at + " = i" + str(d) + " + " +
            str(w.padBegin[d]) + " - " + k + " * " + str(w.dilation[d]) + ";\n" + indent +
            "  if (" + at + " < 0 || " + at + " % " + str(w.stride[d]) + " != 0 || " + at + " / " +
            str(w.stride[d]) + " >= " + str(w.out[d]) + ")\n" + indent + "    continue;\n" +
            indent + "  const int64_t " + o + " = " + at + " / " + str(w.stride[d]) + ";\n";
    close = indent + "}\n" + close;
    indent += "  ";
  }
  body += indent + "acc += dy[(o0 * " + str(w.out[1]) + " + o1) * " + str(w.out[2]) +
          " + o2] * filter[(k0 * " + str(w.kernel[1]) + " + k1) * " + str(w.kernel[2]) +
          " + k2];\n" + close + "  }\n  y[i] = acc;\n";
  launchKernel(e, "const float *grad, const float *weight, float *y", body, n,
               e.ptr(grad.getGrad()) + ", " + e.ptr(grad.getWeight()) + ", " +
                   e.ptr(grad.getOutput()));
  return success();
}

// Inference batch normalization (one the compiler could not fold into a conv): per channel
// y = x * a + (bias - mean * a) with a = scale / sqrt(var + epsilon), as the CPU kernel has it.
LogicalResult emitBatchNorm(Operation *op, KernelEmitter &e) {
  auto bn = cast<BatchNormOp>(op);
  if (!isF32(bn.getOutput()))
    return noKernelFor(op, "BatchNormalization");
  auto shape = tensorType(bn.getInput()).getShape();
  int64_t spatial = product(shape.drop_front(2)), n = tensorType(bn.getOutput()).getNumElements();
  std::string body = threadIndex(n) + channelOfElement(shape[1], spatial) +
                     "  const float a = scale[c] / sqrtf(var[c] + " +
                     deviceFloat(bn.getEpsilon().convertToFloat()) +
                     ");\n  y[i] = x[i] * a + (bias[c] - mean[c] * a);\n";
  launchKernel(e,
               "const float *x, const float *scale, const float *bias, "
               "const float *mean, const float *var, float *y",
               body, n,
               e.ptr(bn.getInput()) + ", " + e.ptr(bn.getScale()) + ", " + e.ptr(bn.getBias()) +
                   ", " + e.ptr(bn.getMean()) + ", " + e.ptr(bn.getVariance()) + ", " +
                   e.ptr(bn.getOutput()));
  return success();
}

} // namespace

void addWindowEmitters(EmitterTable &table) {
  table.forOp<ConvOp>() = emitConv;
  table.forOp<MaxPoolOp>() = emitPool;
  table.forOp<MaxPoolIndicesOp>() = emitPool;
  table.forOp<RoiAlignOp>() = emitRoiAlign;
  table.forOp<AvgPoolOp>() = emitPool;
  table.forOp<ConvGradInputOp>() = emitConvGradInput;
  table.forOp<BatchNormOp>() = emitBatchNorm;
}

} // namespace cudagen
} // namespace dlc
