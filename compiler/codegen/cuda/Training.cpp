// The CUDA target's training ops: gradients, the loss, dropout masks, training-mode batch
// normalization and the optimizer steps. Each kernel computes what the CPU runtime function
// computes (runtime/train.cpp, elementwise.cpp, pool.cpp, reduce.cpp, data.cpp), in the same
// order of float operations wherever that order is a plain loop, so that a CUDA train step
// tracks the CPU one. Where the CPU function accumulates into shared outputs, a thread here
// owns one output element and gathers its contributions in the order the CPU adds them:
// deterministic, and without atomics.
#include "compiler/codegen/cuda/CudaEmitter.h"
#include "dialects/DlcDialect.h"

#include <functional>
#include <map>

using namespace mlir;

namespace dlc {
namespace cudagen {
namespace {

int64_t elements(Value v) { return tensorType(v).getNumElements(); }

// An [N, C, d...] tensor as [batch, channels, spatial].
struct ChannelView {
  int64_t batch, channels, spatial;
};
ChannelView channelView(Value v) {
  auto shape = tensorType(v).getShape();
  return {shape[0], shape[1], product(shape.drop_front(2))};
}

// `text` (lines ending in '\n') with `indent` before each line.
std::string indented(const std::string &text, const std::string &indent) {
  std::string out;
  for (size_t start = 0; start < text.size();) {
    size_t end = text.find('\n', start);
    end = end == std::string::npos ? text.size() : end + 1;
    out += indent + text.substr(start, end - start);
    start = end;
  }
  return out;
}

//===----------------------------------------------------------------------------------------===//
// Elementwise gradients and dropout
//===----------------------------------------------------------------------------------------===//

// dx = f(g, s) per element, g of the incoming gradient and s of the tensor the forward pass
// saved. Each thread reads both before it writes: the result may overwrite either.
LogicalResult emitGradMap(Operation *op, KernelEmitter &e, Value grad, Value saved,
                          const std::string &expression) {
  const int64_t n = elements(op->getResult(0));
  launchKernel(e, "const float *dy, const float *saved, float *dx",
               threadIndex(n) + "  const float g = dy[i], s = saved[i];\n  dx[i] = " + expression +
                   ";\n",
               n, e.ptr(grad) + ", " + e.ptr(saved) + ", " + e.ptr(op->getResult(0)));
  return success();
}

// unaryGradF32's definitions (the kind's record in runtime/scalar_ops.h); s is the forward
// result or input as dlc.unary_grad says.
LogicalResult emitUnaryGrad(Operation *op, KernelEmitter &e) {
  auto grad = cast<UnaryGradOp>(op);
  // The verifier has checked that the kind has a gradient.
  return emitGradMap(op, e, grad.getGrad(), grad.getSaved(),
                     "dlc::rt::scalar::" + grad.getKind().str() + "Unary().grad(g, s)");
}

// Only in a train step, whose schedule has the step number `step`. Each element is drawn as
// dropoutMaskF32 draws it (scalar_ops.h): the CPU target's mask, bit for bit.
LogicalResult emitDropoutMask(Operation *op, KernelEmitter &e) {
  auto mask = cast<DropoutMaskOp>(op);
  const int64_t n = elements(mask.getOutput());
  launchKernel(e, "uint64_t step, float *y",
               threadIndex(n) + "  const uint64_t stream = dlc::rt::scalar::dropoutStream(" +
                   std::to_string(uint64_t(mask.getSeed())) +
                   "ull, step);\n  y[i] = dlc::rt::scalar::dropoutMaskElement(stream, "
                   "uint64_t(i), " +
                   deviceFloat(mask.getRatio().convertToFloat()) + ");\n",
               n, "step, " + e.ptr(mask.getOutput()));
  return success();
}

//===----------------------------------------------------------------------------------------===//
// Softmax, loss and data movement
//===----------------------------------------------------------------------------------------===//

// One thread per row along the axis, as softmaxGradF32: the row's sum, then the outputs
// (which may overwrite the incoming gradient, each read before it is written).
LogicalResult emitSoftmaxGrad(Operation *op, KernelEmitter &e) {
  auto grad = cast<SoftmaxGradOp>(op);
  auto shape = tensorType(grad.getGrad()).getShape();
  auto [outer, inner] = outerInner(shape, grad.getAxis());
  const int64_t n = shape[grad.getAxis()], rows = outer * inner;
  const std::string at = "[base + j * " + str(inner) + "]";
  const std::string loop = "  for (int64_t j = 0; j < " + str(n) + "; ++j)\n";
  std::string body = threadIndex(rows) + "  const int64_t base = i / " + str(inner) + " * " +
                     str(n * inner) + " + i % " + str(inner) + ";\n  float sum = 0.0f;\n";
  if (grad.getLog())
    body += loop + "    sum += dy" + at + ";\n" + loop + "    dx" + at + " = dy" + at +
            " - expf(y" + at + ") * sum;\n";
  else
    body += loop + "    sum += dy" + at + " * y" + at + ";\n" + loop + "    dx" + at + " = y" + at +
            " * (dy" + at + " - sum);\n";
  launchKernel(e, "const float *dy, const float *y, float *dx", body, rows,
               e.ptr(grad.getGrad()) + ", " + e.ptr(grad.getOutputValue()) + ", " +
                   e.ptr(grad.getOutput()));
  return success();
}

// The loss ops see the log-probabilities as a ChannelView (the classes are its channels) and
// the labels as [batch, spatial]. Statements setting `label` to labels[position], or for one
// outside [0, classes) reporting `code` and returning before anything is written.
std::string checkedLabel(const std::string &position, int64_t classes, int code,
                         const std::string &indent) {
  return indent + "const int64_t label = labels[" + position + "];\n" + indent +
         "if (label < 0 || label >= " + str(classes) + ") {\n" + indent + "  DLC_FAULT(faults, " +
         str(code) + ");\n" + indent + "  return;\n" + indent + "}\n";
}

// One thread, summing in double over the positions in order, as nllLossF32.
LogicalResult emitNllLoss(Operation *op, KernelEmitter &e) {
  auto loss = cast<NllLossOp>(op);
  const ChannelView v = channelView(loss.getLogProbs());
  const int64_t positions = v.batch * v.spatial;
  std::string body = threadIndex(1) + "  double sum = 0.0;\n  for (int64_t p = 0; p < " +
                     str(positions) + "; ++p) {\n" +
                     checkedLabel("p", v.channels, e.faultCode("label out of range"), "    ") +
                     "    sum += logp[(p / " + str(v.spatial) + " * " + str(v.channels) +
                     " + label) * " + str(v.spatial) + " + p % " + str(v.spatial) +
                     "];\n  }\n  loss[0] = float(-sum / double(" + str(positions) + "));\n";
  launchKernel(e, "const float *logp, const int64_t *labels, float *loss, int *faults", body, 1,
               e.ptr(loss.getLogProbs()) + ", " + e.ptr(loss.getLabels()) + ", " +
                   e.ptr(loss.getOutput()) + ", faults");
  return success();
}

// One thread per element of the log-probabilities' gradient: -dloss / positions at the
// element of its position's label, 0 elsewhere.
LogicalResult emitNllLossGrad(Operation *op, KernelEmitter &e) {
  auto grad = cast<NllLossGradOp>(op);
  const ChannelView v = channelView(grad.getOutput());
  const int64_t n = elements(grad.getOutput());
  std::string body = threadIndex(n) + channelOfElement(v.channels, v.spatial) +
                     checkedLabel("i / " + str(v.channels * v.spatial) + " * " + str(v.spatial) +
                                      " + i % " + str(v.spatial),
                                  v.channels, e.faultCode("label out of range"), "  ") +
                     "  dx[i] = label == c ? -dloss[0] / float(" + str(v.batch * v.spatial) +
                     ") : 0.0f;\n";
  launchKernel(e, "const float *dloss, const int64_t *labels, float *dx, int *faults", body, n,
               e.ptr(grad.getGrad()) + ", " + e.ptr(grad.getLabels()) + ", " +
                   e.ptr(grad.getOutput()) + ", faults");
  return success();
}

// One thread per element of the sliced tensor: the gradient element dlc.slice took it to, or
// 0 for an element the slice skipped.
LogicalResult emitSliceGrad(Operation *op, KernelEmitter &e) {
  auto grad = cast<SliceGradOp>(op);
  auto in = tensorType(grad.getOutput()).getShape(), out = tensorType(grad.getGrad()).getShape();
  const int64_t n = elements(grad.getOutput());
  std::string body = threadIndex(n);
  if (elements(grad.getGrad()) == 0) {
    // Nothing was sliced (the starts may then be anything).
    body += "  dx[i] = 0.0f;\n";
  } else {
    SmallVector<int64_t> outStrides = stridesOf(out);
    body += "  int64_t rest = i, offset = 0;\n";
    for (int64_t d = int64_t(in.size()) - 1; d >= 0; --d) {
      // A dim of one sliced element never steps (its step may be anything, even INT64_MIN).
      const std::string step = str(out[d] == 1 ? 1 : grad.getSteps()[d]);
      body += "  {\n    const int64_t at = rest % " + str(in[d]) + " - " +
              str(grad.getStarts()[d]) + ";\n    rest /= " + str(in[d]) + ";\n    if (at % " +
              step + " != 0 || at / " + step + " < 0 || at / " + step + " >= " + str(out[d]) +
              ") {\n      dx[i] = 0.0f;\n      return;\n    }\n    offset += at / " + step + " * " +
              str(outStrides[d]) + ";\n  }\n";
    }
    body += "  dx[i] = dy[offset];\n";
  }
  launchKernel(e, "const float *dy, float *dx", body, n,
               e.ptr(grad.getGrad()) + ", " + e.ptr(grad.getOutput()));
  return success();
}

// One thread per element of the gathered tensor [outer, axis, inner], adding the gradient of
// every index that names its row, in index order (gatherGradF32's order of additions). An
// index outside the axis names no row (the forward gather reported it).
LogicalResult emitGatherGrad(Operation *op, KernelEmitter &e) {
  auto grad = cast<GatherGradOp>(op);
  auto shape = tensorType(grad.getOutput()).getShape();
  const int64_t axis = grad.getAxis(), rows = shape[axis];
  const int64_t inner = outerInner(shape, axis).second, count = elements(grad.getIndices());
  const int64_t n = elements(grad.getOutput());
  std::string body =
      threadIndex(n) + "  const int64_t k = i % " + str(inner) + ", r = i / " + str(inner) + " % " +
      str(rows) + ", o = i / " + str(inner * rows) +
      ";\n  float acc = 0.0f;\n  for (int64_t j = 0; j < " + str(count) +
      "; ++j) {\n    int64_t at = int64_t(indices[j]);\n    if (at < 0)\n      at += " + str(rows) +
      ";\n    if (at == r)\n      acc += dy[(o * " + str(count) + " + j) * " + str(inner) +
      " + k];\n  }\n  dx[i] = acc;\n";
  launchKernel(e,
               "const float *dy, const " + cType(tensorType(grad.getIndices()).getElementType()) +
                   " *indices, float *dx",
               body, n,
               e.ptr(grad.getGrad()) + ", " + e.ptr(grad.getIndices()) + ", " +
                   e.ptr(grad.getOutput()));
  return success();
}

//===----------------------------------------------------------------------------------------===//
// Windowed gradients
//===----------------------------------------------------------------------------------------===//

// Statements splitting the thread index i over a grid of `extent` (innermost last) into
// `name`0..2, leaving `rest`, the index over the dims before the grid's.
std::string unflatten(const int64_t (&extent)[3], const std::string &name) {
  std::string code = "  int64_t rest = i;\n";
  for (int d = 2; d >= 0; --d)
    code += "  const int64_t " + name + str(d) + " = rest % " + str(extent[d]) +
            ";\n  rest /= " + str(extent[d]) + ";\n";
  return code;
}

// The index of element (`name`0, `name`1, `name`2) in a plane of `extent`.
std::string flat(const int64_t (&extent)[3], const std::string &name) {
  return "(" + name + "0 * " + str(extent[1]) + " + " + name + "1) * " + str(extent[2]) + " + " +
         name + "2";
}

// One loop over a window dim: its head and the statements that start its body.
using LoopLevel = std::function<std::pair<std::string, std::string>(int d)>;

// `inner` inside one loop per window dim, the outermost dim's outermost.
std::string loopNest(const LoopLevel &level, const std::string &inner, int d = 0) {
  if (d == 3)
    return inner;
  auto [head, prelude] = level(d);
  return head + " {\n" + indented(prelude + loopNest(level, inner, d + 1), "  ") + "}\n";
}

// Statements setting j<d>, the input index that tap `tap` of output position o<d> reads,
// and skipping (continue) a tap that falls in the padding.
std::string tapInput(const dlc::rt::WindowParams &w, int d, const std::string &tap) {
  const std::string j = "j" + str(d);
  return "const int64_t " + j + " = o" + str(d) + " * " + str(w.stride[d]) + " - " +
         str(w.padBegin[d]) + " + " + tap + " * " + str(w.dilation[d]) + ";\nif (" + j +
         " < 0 || " + j + " >= " + str(w.in[d]) + ")\n  continue;\n";
}

// The windows (output positions o0..o2) that cover input element (i0, i1, i2), in the order
// the CPU kernels visit windows, o ascending: q<d> is the element's tap in the window, so it
// runs down.
LoopLevel coveringWindows(const dlc::rt::WindowParams &w) {
  return [&w](int d) {
    const std::string q = "q" + str(d), at = "at" + str(d), stride = str(w.stride[d]);
    return std::make_pair(
        "for (int64_t " + q + " = " + str(w.kernel[d] - 1) + "; " + q + " >= 0; --" + q + ")",
        "const int64_t " + at + " = i" + str(d) + " + " + str(w.padBegin[d]) + " - " + q + " * " +
            str(w.dilation[d]) + ";\nif (" + at + " < 0 || " + at + " % " + stride + " != 0 || " +
            at + " / " + stride + " >= " + str(w.out[d]) + ")\n  continue;\nconst int64_t o" +
            str(d) + " = " + at + " / " + stride + ";\n");
  };
}

// max_pool_grad: one thread per input element sums the gradients of the windows whose maximum
// it is. A window's maximum is found as windowArgMax finds it (runtime/pool.cpp): over the
// taps inside the input in order, the first maximum, or the last NaN.
LogicalResult emitMaxPoolGrad(Operation *op, KernelEmitter &e) {
  auto grad = cast<MaxPoolGradOp>(op);
  const dlc::rt::WindowParams w = windowParams(op, grad.getInput(), grad.getGrad());
  const int64_t n = elements(grad.getOutput());
  LoopLevel taps = [&w](int d) {
    const std::string t = "t" + str(d);
    return std::make_pair("for (int64_t " + t + " = 0; " + t + " < " + str(w.kernel[d]) + "; ++" +
                              t + ")",
                          tapInput(w, d, t));
  };
  std::string argMax = "const int64_t tap = " + flat(w.in, "j") +
                       ";\nif (arg < 0 || plane[tap] > best || plane[tap] != plane[tap]) {\n"
                       "  best = plane[tap];\n  arg = tap;\n}\n";
  std::string window = "int64_t arg = -1;\nfloat best = 0.0f;\n" + loopNest(taps, argMax) +
                       "if (arg == self)\n  acc += dyPlane[" + flat(w.out, "o") + "];\n";
  std::string body = threadIndex(n) + unflatten(w.in, "i") + "  const float *plane = x + rest * " +
                     str(w.in[0] * w.in[1] * w.in[2]) + ";\n  const float *dyPlane = dy + rest * " +
                     str(w.out[0] * w.out[1] * w.out[2]) +
                     ";\n  const int64_t self = " + flat(w.in, "i") + ";\n  float acc = 0.0f;\n" +
                     indented(loopNest(coveringWindows(w), window), "  ") + "  dx[i] = acc;\n";
  launchKernel(e, "const float *x, const float *dy, float *dx", body, n,
               e.ptr(grad.getInput()) + ", " + e.ptr(grad.getGrad()) + ", " +
                   e.ptr(grad.getOutput()));
  return success();
}

// avg_pool_grad: one thread per input element sums dy / count of the windows it lies in,
// count being avgPoolF32's divisor: per dim, the taps inside the input or (count_include_pad)
// those before the end of the padded extent. It is at least 1, this element being a tap.
LogicalResult emitAvgPoolGrad(Operation *op, KernelEmitter &e) {
  auto grad = cast<AvgPoolGradOp>(op);
  const dlc::rt::WindowParams w = windowParams(op, grad.getOutput(), grad.getGrad());
  auto pads = grad.getPads();
  const int64_t spatial = int64_t(pads.size() / 2);
  int64_t padEnd[3] = {0, 0, 0};
  for (int64_t d = 0; d < spatial; ++d)
    padEnd[3 - spatial + d] = pads[spatial + d];
  const bool includePad = grad.getCountIncludePad();
  std::string window = "int64_t count = 1;\n";
  for (int d = 0; d < 3; ++d)
    window +=
        "{\n  int64_t taps = 0;\n  for (int64_t t = 0; t < " + str(w.kernel[d]) +
        "; ++t) {\n    const int64_t tap = o" + str(d) + " * " + str(w.stride[d]) + " - " +
        str(w.padBegin[d]) + " + t * " + str(w.dilation[d]) + ";\n    taps += " +
        (includePad ? "tap < " + str(w.in[d] + padEnd[d]) : "tap >= 0 && tap < " + str(w.in[d])) +
        ";\n  }\n  count *= taps;\n}\n";
  window += "acc += dyPlane[" + flat(w.out, "o") + "] / float(count);\n";
  const int64_t n = elements(grad.getOutput());
  std::string body = threadIndex(n) + unflatten(w.in, "i") +
                     "  const float *dyPlane = dy + rest * " + str(w.out[0] * w.out[1] * w.out[2]) +
                     ";\n  float acc = 0.0f;\n" +
                     indented(loopNest(coveringWindows(w), window), "  ") + "  dx[i] = acc;\n";
  launchKernel(e, "const float *dy, float *dx", body, n,
               e.ptr(grad.getGrad()) + ", " + e.ptr(grad.getOutput()));
  return success();
}

LogicalResult emitGlobalAvgPoolGrad(Operation *op, KernelEmitter &e) {
  auto grad = cast<GlobalAvgPoolGradOp>(op);
  const int64_t spatial = channelView(grad.getOutput()).spatial;
  const int64_t n = elements(grad.getOutput());
  launchKernel(e, "const float *dy, float *dx",
               threadIndex(n) + "  dx[i] = dy[i / " + str(spatial) + "] / float(" + str(spatial) +
                   ");\n",
               n, e.ptr(grad.getGrad()) + ", " + e.ptr(grad.getOutput()));
  return success();
}

// conv_grad_weight: one thread per weight element sums dy * x over the batch and the output
// positions whose tap reads an input element. The CPU sums by blocked products (sgemm), an
// order not worth copying; the sum here is in double, near the exact one, over a count of
// terms (batch x output positions) that would lose float precision.
LogicalResult emitConvGradWeight(Operation *op, KernelEmitter &e) {
  auto grad = cast<ConvGradWeightOp>(op);
  const dlc::rt::ConvParams p = convParams(grad);
  const dlc::rt::WindowParams &w = p.window;
  const int64_t inPerGroup = w.channels / p.groups, outPerGroup = p.outChannels / p.groups;
  const int64_t n = elements(grad.getOutput());
  LoopLevel outputs = [&w](int d) {
    const std::string o = "o" + str(d);
    return std::make_pair("for (int64_t " + o + " = 0; " + o + " < " + str(w.out[d]) + "; ++" + o +
                              ")",
                          tapInput(w, d, "k" + str(d)));
  };
  std::string body = threadIndex(n) + unflatten(w.kernel, "k") + "  const int64_t c = rest % " +
                     str(inPerGroup) + ", m = rest / " + str(inPerGroup) +
                     ";\n  double acc = 0.0;\n" + "  for (int64_t batch = 0; batch < " +
                     str(w.batch) + "; ++batch) {\n    const float *input = x + (batch * " +
                     str(w.channels) + " + m / " + str(outPerGroup) + " * " + str(inPerGroup) +
                     " + c) * " + str(w.in[0] * w.in[1] * w.in[2]) +
                     ";\n    const float *dyPlane = dy + (batch * " + str(p.outChannels) +
                     " + m) * " + str(w.out[0] * w.out[1] * w.out[2]) + ";\n" +
                     indented(loopNest(outputs, "acc += double(dyPlane[" + flat(w.out, "o") +
                                                    "]) * input[" + flat(w.in, "j") + "];\n"),
                              "    ") +
                     "  }\n  dw[i] = float(acc);\n";
  launchKernel(e, "const float *x, const float *dy, float *dw", body, n,
               e.ptr(grad.getInput()) + ", " + e.ptr(grad.getGrad()) + ", " +
                   e.ptr(grad.getOutput()));
  return success();
}

//===----------------------------------------------------------------------------------------===//
// Training-mode batch normalization
//===----------------------------------------------------------------------------------------===//

// The CPU kernels (runtime/pool.cpp) sum a channel's elements row by row: each [batch,
// channel] row in float as sum8 does (eight partial sums, then the rest, then the partials),
// the rows' sums in double. Here one kernel sums every row at once (one thread per row) into
// the op's workspace, and a kernel of one thread per channel adds its rows' sums in the CPU's
// order: the same result, with batch * channels threads on the long sums.

// A kernel of one thread per row r writing sums[k * rows + r] (`sums`: the op's workspace),
// the row's sum of terms[k] (an expression of the element index `at` and of `mean`, the
// channel's stats[c], when `readsMean`).
void emitRowSums(KernelEmitter &e, const ChannelView &v, ArrayRef<std::string> terms,
                 const std::string &params, const std::string &args, bool readsMean,
                 const std::string &sums) {
  const std::string rows = str(v.batch * v.channels), spatial = str(v.spatial);
  std::string body =
      threadIndex(v.batch * v.channels) + "  const int64_t row = i * " + spatial + ";\n";
  if (readsMean)
    body += "  const float mean = stats[i % " + str(v.channels) + "];\n";
  // The spatial extent is a constant: the loops sum8 runs empty are left out.
  const int64_t whole = v.spatial / 8 * 8;
  for (size_t k = 0; k < terms.size(); ++k) {
    body += "  {\n    float partial[8] = {};\n";
    if (whole > 0)
      body += "    for (int64_t j = 0; j < " + str(whole) +
              "; j += 8)\n      for (int64_t l = 0; l < 8; ++l) {\n        const int64_t at = " +
              "row + j + l;\n        partial[l] += " + terms[k] + ";\n      }\n";
    body += "    float sum = 0.0f;\n";
    if (whole < v.spatial)
      body += "    for (int64_t j = " + str(whole) + "; j < " + spatial +
              "; ++j) {\n      const int64_t at = row + j;\n      sum += " + terms[k] +
              ";\n    }\n";
    body += "    for (int64_t l = 0; l < 8; ++l)\n      sum += partial[l];\n    sums[" +
            str(int64_t(k)) + " * " + rows + " + i] = sum;\n  }\n";
  }
  launchKernel(e, params + ", float *sums", body, v.batch * v.channels, args + ", " + sums);
}

// Statements declaring the double `total`, channel c's sum of the rows' sums sums[k * rows + r]
// in the CPU's order.
std::string channelTotal(const std::string &total, int k, const ChannelView &v) {
  return "  double " + total + " = 0.0;\n  for (int64_t batch = 0; batch < " + str(v.batch) +
         "; ++batch)\n    " + total + " += sums[" + str(k * v.batch * v.channels) + " + batch * " +
         str(v.channels) + " + c];\n";
}

// The first lines of a kernel of one thread per channel c.
std::string channelThread(const ChannelView &v) {
  return threadIndex(v.channels) + "  const int64_t c = i;\n";
}

// The rows' sums of dy and of dy * (x - mean), from which both gradients follow.
void emitGradRowSums(KernelEmitter &e, const ChannelView &v, Operation *op, Value grad, Value input,
                     Value stats) {
  emitRowSums(e, v, {"dy[at]", "dy[at] * (x[at] - mean)"},
              "const float *dy, const float *x, const float *stats",
              e.ptr(grad) + ", " + e.ptr(input) + ", " + e.ptr(stats), true, e.workspace(op));
}

// The batch's mean, 1 / sqrt(var + epsilon) and biased variance, as batchNormStatsF32: two
// passes, the second over the squared deviations from the first's mean (written first).
LogicalResult emitBatchNormStats(Operation *op, KernelEmitter &e) {
  auto stats = cast<BatchNormStatsOp>(op);
  const ChannelView v = channelView(stats.getInput());
  const std::string count = "double(" + str(v.batch * v.spatial) + ")";
  const std::string x = e.ptr(stats.getInput()), out = e.ptr(stats.getOutput()),
                    sums = e.workspace(op);
  emitRowSums(e, v, {"x[at]"}, "const float *x", x, false, sums);
  launchKernel(e, "const float *sums, float *stats",
               channelThread(v) + channelTotal("sumX", 0, v) + "  stats[c] = float(sumX / " +
                   count + ");\n",
               v.channels, sums + ", " + out);
  emitRowSums(e, v, {"(x[at] - mean) * (x[at] - mean)"}, "const float *x, const float *stats",
              x + ", " + out, true, sums);
  launchKernel(e, "const float *sums, float *stats",
               channelThread(v) + channelTotal("sumSquares", 0, v) +
                   "  const double var = sumSquares / " + count + ";\n  stats[" + str(v.channels) +
                   " + c] = float(1.0 / sqrt(var + " +
                   deviceFloat(stats.getEpsilon().convertToFloat()) + "));\n  stats[" +
                   str(2 * v.channels) + " + c] = float(var);\n",
               v.channels, sums + ", " + out);
  return success();
}

// y = x * a + (bias - mean * a) per element, a = scale * invStd, as batchNormApplyF32.
LogicalResult emitBatchNormApply(Operation *op, KernelEmitter &e) {
  auto bn = cast<BatchNormApplyOp>(op);
  const ChannelView v = channelView(bn.getInput());
  const int64_t n = elements(bn.getOutput());
  std::string body = threadIndex(n) + channelOfElement(v.channels, v.spatial) +
                     "  const float a = scale[c] * stats[" + str(v.channels) +
                     " + c];\n  y[i] = x[i] * a + (bias[c] - stats[c] * a);\n";
  launchKernel(e,
               "const float *x, const float *stats, const float *scale, const float *bias, "
               "float *y",
               body, n,
               e.ptr(bn.getInput()) + ", " + e.ptr(bn.getStats()) + ", " + e.ptr(bn.getScale()) +
                   ", " + e.ptr(bn.getBias()) + ", " + e.ptr(bn.getOutput()));
  return success();
}

// As batchNormGradInputF32: the rows' sums, per channel the mean of dy and the centered term's
// factor (after the sums in the workspace), then dx per element.
LogicalResult emitBatchNormGradInput(Operation *op, KernelEmitter &e) {
  auto bn = cast<BatchNormGradInputOp>(op);
  const ChannelView v = channelView(bn.getInput());
  const std::string count = "double(" + str(v.batch * v.spatial) + ")";
  const std::string sums = e.workspace(op), stats = e.ptr(bn.getStats());
  const std::string factors = "sums[" + str(2 * v.batch * v.channels) + " + ";
  emitGradRowSums(e, v, op, bn.getGrad(), bn.getInput(), bn.getStats());
  launchKernel(e, "const float *stats, float *sums",
               channelThread(v) + channelTotal("sumDy", 0, v) +
                   channelTotal("sumDyCentered", 1, v) + "  const float invStd = stats[" +
                   str(v.channels) + " + c];\n  " + factors + "c] = float(sumDy / " + count +
                   ");\n  " + factors + str(v.channels) + " + c] = float(sumDyCentered / " + count +
                   " * invStd * invStd);\n",
               v.channels, stats + ", " + sums);
  const int64_t n = elements(bn.getOutput());
  launchKernel(e,
               "const float *dy, const float *x, const float *stats, const float *scale, "
               "const float *sums, float *dx",
               threadIndex(n) + channelOfElement(v.channels, v.spatial) +
                   "  const float mean = stats[c], invStd = stats[" + str(v.channels) +
                   " + c];\n  const float dyMean = " + factors + "c], k = " + factors +
                   str(v.channels) + " + c];\n  const float a = scale[c] * invStd;\n" +
                   "  dx[i] = (dy[i] - dyMean - (x[i] - mean) * k) * a;\n",
               n,
               e.ptr(bn.getGrad()) + ", " + e.ptr(bn.getInput()) + ", " + stats + ", " +
                   e.ptr(bn.getScale()) + ", " + sums + ", " + e.ptr(bn.getOutput()));
  return success();
}

// The scale's and the bias's gradients, [2, C], as batchNormGradParamsF32.
LogicalResult emitBatchNormGradParams(Operation *op, KernelEmitter &e) {
  auto bn = cast<BatchNormGradParamsOp>(op);
  const ChannelView v = channelView(bn.getInput());
  emitGradRowSums(e, v, op, bn.getGrad(), bn.getInput(), bn.getStats());
  launchKernel(
      e, "const float *sums, const float *stats, float *out",
      channelThread(v) + channelTotal("sumDy", 0, v) + channelTotal("sumDyCentered", 1, v) +
          "  out[c] = float(sumDyCentered * stats[" + str(v.channels) + " + c]);\n  out[" +
          str(v.channels) + " + c] = float(sumDy);\n",
      v.channels, e.workspace(op) + ", " + e.ptr(bn.getStats()) + ", " + e.ptr(bn.getOutput()));
  return success();
}

// The state updates of a train step run only when no kernel before them in the model found
// bad input data (a label or an index out of range): the CPU step stops before its updates,
// and on the GPU the fault is only reported at synchronize, after the rest of the step has
// been queued. Adds the fault word to `params` and `args` and returns the kernel's check,
// when the model has checks.
std::string faultGuard(KernelEmitter &e, std::string &params, std::string &args) {
  if (e.faultMessages().empty())
    return "";
  params += ", const int *faults";
  args += ", faults";
  return "  if (*faults != 0)\n    return;\n";
}

// One thread per channel, in double as batchNormRunningUpdateF32 (which tracks the unbiased
// variance, as PyTorch does).
LogicalResult emitBatchNormRunningUpdate(Operation *op, KernelEmitter &e) {
  auto update = cast<BatchNormRunningUpdateOp>(op);
  const int64_t channels = tensorType(update.getStats()).getDimSize(1), count = update.getCount();
  const std::string correction =
      count > 1 ? "double(" + str(count) + ") / double(" + str(count - 1) + ")" : "1.0";
  std::string params = "float *mean, float *var, const float *stats",
              args = e.ptr(update.getRunningMean()) + ", " + e.ptr(update.getRunningVar()) + ", " +
                     e.ptr(update.getStats());
  std::string body =
      threadIndex(channels) + faultGuard(e, params, args) +
      "  const float momentum = " + deviceFloat(update.getMomentum().convertToFloat()) +
      ";\n  const double keep = 1.0 - double(momentum);\n  mean[i] = float(keep * mean[i] + "
      "momentum * double(stats[i]));\n  var[i] = float(keep * var[i] + momentum * double(stats[" +
      str(2 * channels) + " + i]) * " + correction + ");\n";
  launchKernel(e, params, body, channels, args);
  return success();
}

//===----------------------------------------------------------------------------------------===//
// Optimizer steps
//===----------------------------------------------------------------------------------------===//

// The optimizers take the step's hyperparameters (`hyper`, in host memory: [lr, 1 on the
// first step, 1 - beta1^t, 1 - beta2^t]) by value, and write the weight and its moments in
// place: one thread per element, with sgdUpdateF32's and adamUpdateF32's arithmetic.
LogicalResult emitSgd(Operation *op, KernelEmitter &e) {
  auto sgd = cast<SgdUpdateOp>(op);
  const int64_t n = elements(sgd.getWeight());
  const float momentum = sgd.getMomentum().convertToFloat();
  const std::string hyper = e.ptr(sgd.getHyper());
  std::string params = "float *w, const float *g, float lr";
  std::string args = e.ptr(sgd.getWeight()) + ", " + e.ptr(sgd.getGrad()) + ", " + hyper + "[0]";
  // Only momentum reads the first-step flag (an unused parameter would warn).
  if (momentum != 0.0f) {
    params += ", float firstStep, float *momentumBuf";
    args += ", " + hyper + "[1], " + e.ptr(sgd.getMomentumBuffer());
  }
  std::string body = threadIndex(n) + faultGuard(e, params, args) + "  float d = g[i] + " +
                     deviceFloat(sgd.getWeightDecay().convertToFloat()) + " * w[i];\n";
  if (momentum != 0.0f) {
    // The buffer holds nothing before the first step (PyTorch's is None); it starts at d.
    const std::string m = deviceFloat(momentum);
    body += "  const float buf = firstStep != 0.0f ? d : " + m +
            " * momentumBuf[i] + d;\n  momentumBuf[i] = buf;\n  d = " +
            (sgd.getNesterov() ? "d + " + m + " * buf" : std::string("buf")) + ";\n";
  }
  body += "  w[i] -= lr * d;\n";
  launchKernel(e, params, body, n, args);
  return success();
}

LogicalResult emitAdam(Operation *op, KernelEmitter &e) {
  auto adam = cast<AdamUpdateOp>(op);
  const int64_t n = elements(adam.getWeight());
  const float beta1 = adam.getBeta1().convertToFloat(), beta2 = adam.getBeta2().convertToFloat();
  const std::string weightDecay = deviceFloat(adam.getWeightDecay().convertToFloat());
  const bool decoupled = adam.getDecoupled();
  const std::string hyper = e.ptr(adam.getHyper());
  std::string params = "float *w, const float *g, float *m, float *v, float lr, float "
                       "correction1, float correction2";
  std::string args = e.ptr(adam.getWeight()) + ", " + e.ptr(adam.getGrad()) + ", " +
                     e.ptr(adam.getExpAvg()) + ", " + e.ptr(adam.getExpAvgSq()) + ", " + hyper +
                     "[0], " + hyper + "[2], " + hyper + "[3]";
  std::string body = threadIndex(n) + faultGuard(e, params, args) +
                     "  const float stepSize = lr / correction1;\n"
                     "  const float correction2Sqrt = sqrtf(correction2);\n  const float decay = " +
                     (decoupled ? "1.0f - lr * " + weightDecay : std::string("1.0f")) +
                     ";\n  const float wi = w[i] * decay;\n  const float gi = g[i] + " +
                     (decoupled ? std::string("0.0f") : weightDecay) +
                     " * wi;\n  const float mi = m[i] + (1.0f - " + deviceFloat(beta1) +
                     ") * (gi - m[i]);\n  const float vi = v[i] * " + deviceFloat(beta2) +
                     " + (1.0f - " + deviceFloat(beta2) +
                     ") * gi * gi;\n  m[i] = mi;\n  v[i] = vi;\n" +
                     "  w[i] = wi - stepSize * (mi / (sqrtf(vi) / correction2Sqrt + " +
                     deviceFloat(adam.getEps().convertToFloat()) + "));\n";
  launchKernel(e, params, body, n, args);
  return success();
}

} // namespace

void addTrainingEmitters(EmitterTable &table) {
  table.forOp<UnaryGradOp>() = emitUnaryGrad;
  // torch.clamp passes the gradient at the bounds too, and none for a NaN input.
  table.forOp<ClipGradOp>() = [](Operation *op, KernelEmitter &e) {
    auto grad = cast<ClipGradOp>(op);
    return emitGradMap(op, e, grad.getGrad(), grad.getInput(),
                       "s >= " + deviceFloat(grad.getMin().convertToFloat()) + " && s <= " +
                           deviceFloat(grad.getMax().convertToFloat()) + " ? g : 0.0f");
  };
  table.forOp<LeakyReluGradOp>() = [](Operation *op, KernelEmitter &e) {
    auto grad = cast<LeakyReluGradOp>(op);
    return emitGradMap(op, e, grad.getGrad(), grad.getInput(),
                       "s > 0.0f ? g : g * " + deviceFloat(grad.getAlpha().convertToFloat()));
  };
  table.forOp<DropoutMaskOp>() = emitDropoutMask;
  table.forOp<SoftmaxGradOp>() = emitSoftmaxGrad;
  table.forOp<NllLossOp>() = emitNllLoss;
  table.forOp<NllLossGradOp>() = emitNllLossGrad;
  table.forOp<SliceGradOp>() = emitSliceGrad;
  table.forOp<GatherGradOp>() = emitGatherGrad;
  table.forOp<ConvGradWeightOp>() = emitConvGradWeight;
  table.forOp<MaxPoolGradOp>() = emitMaxPoolGrad;
  table.forOp<AvgPoolGradOp>() = emitAvgPoolGrad;
  table.forOp<GlobalAvgPoolGradOp>() = emitGlobalAvgPoolGrad;
  table.forOp<BatchNormStatsOp>() = emitBatchNormStats;
  table.forOp<BatchNormApplyOp>() = emitBatchNormApply;
  table.forOp<BatchNormGradInputOp>() = emitBatchNormGradInput;
  table.forOp<BatchNormGradParamsOp>() = emitBatchNormGradParams;
  table.forOp<BatchNormRunningUpdateOp>() = emitBatchNormRunningUpdate;
  table.forOp<SgdUpdateOp>() = emitSgd;
  table.forOp<AdamUpdateOp>() = emitAdam;
}

} // namespace cudagen
} // namespace dlc
