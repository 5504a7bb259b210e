// The CUDA target's windowed ops: pooling, convolution (cuDNN, or a direct kernel),
// ConvTranspose and inference batch normalization.
#include "compiler/codegen/cuda/CudaEmitter.h"
#include "dialects/DlcDialect.h"
#include "dlc_cuda_conv.h"

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
  auto str = [](int64_t v) { return std::to_string(v); };
  return "o" + str(d) + " * " + str(w.stride[d]) + " - " + str(w.padBegin[d]) + " + k" + str(d) +
         " * " + str(w.dilation[d]);
}

// `inner` inside loops over the window's taps k0..k2 that lie inside the input (at input
// indices i0..i2), indented from `indent`.
std::string forEachTap(const dlc::rt::WindowParams &w, std::string indent,
                       const std::string &inner) {
  auto str = [](int64_t v) { return std::to_string(v); };
  std::string code, close;
  for (int d = 0; d < 3; ++d) {
    code += indent + "for (int64_t k" + str(d) + " = 0; k" + str(d) + " < " + str(w.kernel[d]) +
            "; ++k" + str(d) + ") {\n" + indent + "  const int64_t i" + str(d) + " = " +
            tapIndex(w, d) + ";\n" + indent + "  if (i" + str(d) + " < 0 || i" + str(d) +
            " >= " + str(w.in[d]) + ")\n" + indent + "    continue;\n";
    close = indent + "}\n" + close;
    indent += "  ";
  }
  return code + indent + inner + close;
}

// Max and average pooling over 1 to 3 spatial dims: one thread per output element, its window's
// taps in the CPU kernel's order. Max: padding never wins, NaN propagates, an all-padding
// window stays -inf. Average: the sum over the taps inside the input, divided by their count
// or (count_include_pad) by the taps inside the padded extent; 0 for no taps.
LogicalResult emitPool(Operation *op, KernelEmitter &e) {
  if (!isF32(op->getResult(0)))
    return noKernelFor(op, "pooling");
  dlc::rt::WindowParams w = windowParams(op, op->getOperand(0), op->getResult(0));
  auto avg = dyn_cast<AvgPoolOp>(op);
  auto pads = cast<DenseI64ArrayAttr>(op->getAttr("pads")).asArrayRef();
  int64_t spatial = int64_t(pads.size() / 2), padEnd[3] = {0, 0, 0};
  for (int64_t d = 0; d < spatial; ++d)
    padEnd[3 - spatial + d] = pads[spatial + d];
  auto str = [](int64_t v) { return std::to_string(v); };
  int64_t n = tensorType(op->getResult(0)).getNumElements();
  std::string body = threadIndex(n) + windowPosition(w) + "  const float *plane = x + rest * " +
                     str(w.in[0] * w.in[1] * w.in[2]) + ";\n";
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
  } else {
    body += "  float acc = -INFINITY;\n";
  }
  body += forEachTap(
      w, "  ",
      "const float v = plane[(i0 * " + str(w.in[1]) + " + i1) * " + str(w.in[2]) + " + i2];\n" +
          std::string(avg ? "acc += v;" : "acc = v > acc || v != v ? v : acc;") + "\n");
  if (avg) {
    body += "  y[i] = count > 0 ? acc / float(count) : 0.0f;\n";
  } else {
    body += "  y[i] = acc;\n";
  }
  launchKernel(e, "const float *x, float *y", body, n,
               e.ptr(op->getOperand(0)) + ", " + e.ptr(op->getResult(0)));
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
  auto str = [](int64_t v) { return std::to_string(v); };
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
    body += "  const int64_t m = i / " + str(w.out[0] * w.out[1] * w.out[2]) + " % " +
            str(p.outChannels) + ";\n  const float acc = y[i]" +
            (conv.getBias() ? " + bias[m]" : "") + ";\n";
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
  auto str = [](int64_t v) { return std::to_string(v); };
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
  std::string body = threadIndex(n) + "  const int64_t c = i / " + std::to_string(spatial) + " % " +
                     std::to_string(shape[1]) + ";\n  const float a = scale[c] / sqrtf(var[c] + " +
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
  table["dlc.conv"] = emitConv;
  table["dlc.max_pool"] = emitPool;
  table["dlc.avg_pool"] = emitPool;
  table["dlc.conv_grad_input"] = emitConvGradInput;
  table["dlc.batch_norm"] = emitBatchNorm;
}

} // namespace cudagen
} // namespace dlc
