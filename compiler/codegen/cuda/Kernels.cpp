// The CUDA target's op emitters: each op becomes a generated kernel with its shapes and
// strides as constants (one thread per output element), or a cuBLAS call through the CUDA
// runtime. Ops and element types without one fail with "no CUDA kernel", naming both.
#include "compiler/codegen/Emitter.h"
#include "dialects/DlcDialect.h"
#include "dlc_cuda_conv.h"

#include <cctype>
#include <cmath>
#include <set>

using namespace mlir;

namespace dlc {
namespace {

constexpr int64_t kThreadsPerBlock = 256;

// A float constant in device code: floatLiteral's std::numeric_limits spelling of infinity
// is a host constexpr call that nvcc refuses in a kernel.
std::string deviceFloat(double value) {
  if (std::isinf(value))
    return value > 0 ? "INFINITY" : "-INFINITY";
  if (std::isnan(value))
    return "NAN";
  return floatLiteral(value);
}

// Device expressions of the float unary kinds, in `v`: the CPU kernels' definitions in CUDA's
// float math functions (erff, expf, ...), which the host emulation takes from <math.h>.
std::optional<std::string> unaryExpression(StringRef kind) {
  static const std::map<std::string, std::string> expressions = {
      {"Relu", "v < 0.0f ? 0.0f : v"},
      {"Sigmoid", "v >= 0.0f ? 1.0f / (1.0f + expf(-v)) : expf(v) / (1.0f + expf(v))"},
      {"Tanh", "tanhf(v)"},
      {"Exp", "expf(v)"},
      {"Log", "logf(v)"},
      {"Sqrt", "sqrtf(v)"},
      {"Neg", "-v"},
      {"Abs", "fabsf(v)"},
      {"Erf", "erff(v)"},
      {"Reciprocal", "1.0f / v"},
      {"Floor", "floorf(v)"},
      {"Ceil", "ceilf(v)"},
      {"Sin", "sinf(v)"},
      {"Cos", "cosf(v)"},
      {"Tan", "tanf(v)"},
      {"Softsign", "v / (1.0f + fabsf(v))"},
      {"Softplus", "fmaxf(v, 0.0f) + log1pf(expf(-fabsf(v)))"},
      {"HardSwish", "v * fminf(fmaxf(v / 6.0f + 0.5f, 0.0f), 1.0f)"},
      {"Asin", "asinf(v)"},
      {"Acos", "acosf(v)"},
      {"Atan", "atanf(v)"},
      {"Sinh", "sinhf(v)"},
      {"Cosh", "coshf(v)"},
      {"Asinh", "asinhf(v)"},
      {"Acosh", "acoshf(v)"},
      {"Atanh", "atanhf(v)"},
      {"Sign", "float((v > 0.0f) - (v < 0.0f))"},
      {"Round", "nearbyintf(v)"},
  };
  auto it = expressions.find(kind.str());
  if (it == expressions.end())
    return std::nullopt;
  return it->second;
}

// The device call of binary kind `kind` on `a` and `b`: the CPU kernels' own definition
// (runtime/scalar_ops.h), for every element type.
std::string binaryCall(StringRef kind) { return "dlc::rt::scalar::" + kind.str() + "Op()(a, b)"; }

bool isF32(Value v) { return tensorType(v).getElementType().isF32(); }

// The C type kernels compute `v`'s elements in: float32, float64, the integers and bool (a
// byte); none for the types that travel as bits (float16, bfloat16, float8, 4- and 2-bit).
std::string computeType(Value v) {
  Type element = tensorType(v).getElementType();
  auto integer = dyn_cast<IntegerType>(element);
  if (element.isF32() || element.isF64() ||
      (integer && llvm::is_contained({1u, 8u, 16u, 32u, 64u}, integer.getWidth())))
    return cType(element);
  return "";
}

LogicalResult noKernel(Operation *op, const std::string &why) {
  return op->emitError("no CUDA kernel for op ") << op->getName() << ": " << why;
}

// "Max on f64 is not built yet": the kernel kind and the result's element type.
LogicalResult noKernelFor(Operation *op, StringRef kind) {
  std::string type;
  llvm::raw_string_ostream os(type);
  os << tensorType(op->getResult(0)).getElementType();
  return noKernel(op, kind.str() + " on " + os.str() + " is not built yet");
}

// A kernel's first lines: the thread's index `i`, and threads past the `elements` return.
std::string threadIndex(int64_t elements) {
  return "  const int64_t i = DLC_INDEX;\n  if (i >= " + std::to_string(elements) +
         ")\n    return;\n";
}

std::string blocksFor(int64_t elements) {
  return std::to_string((elements + kThreadsPerBlock - 1) / kThreadsPerBlock);
}

// Launches `kernel` over `elements` threads and checks the launch.
void launch(KernelEmitter &e, const std::string &kernel, int64_t elements,
            const std::string &args) {
  e.line("DLC_LAUNCH(" + kernel + ", " + blocksFor(elements) + ", " +
         std::to_string(kThreadsPerBlock) + ", context, " + args + ");");
  e.checkedCall("dlc::cuda::launched(context, " + cString(kernel + " (" + e.currentOp + ")") + ")");
}

// Statements setting `<prefix><o>` for each operand o from the flat output index `index`: the
// broadcast strides of each operand over the output's dims, as constants. Dims outside the
// outermost one some operand walks need no division.
std::string broadcastOffsets(ArrayRef<SmallVector<int64_t>> strides, ArrayRef<int64_t> outShape,
                             const std::string &index = "i", const std::string &prefix = "offset") {
  std::string code;
  for (size_t o = 0; o < strides.size(); ++o)
    code += "  int64_t " + prefix + std::to_string(o) + " = 0;\n";
  int64_t outermost = int64_t(outShape.size());
  for (int64_t d = 0; d < int64_t(outShape.size()) && outermost == int64_t(outShape.size()); ++d)
    for (const SmallVector<int64_t> &operand : strides)
      if (operand[d])
        outermost = d;
  if (outermost == int64_t(outShape.size()))
    return code;
  const std::string rest = prefix + "Rest";
  code += "  int64_t " + rest + " = " + index + ";\n";
  for (int64_t d = int64_t(outShape.size()) - 1; d >= outermost; --d) {
    bool walked = llvm::any_of(strides, [&](const SmallVector<int64_t> &s) { return s[d] != 0; });
    if (!walked) {
      code += "  " + rest + " /= " + std::to_string(outShape[d]) + ";\n";
      continue;
    }
    code += "  {\n    const int64_t at = " + rest + " % " + std::to_string(outShape[d]) + ";\n";
    if (d > outermost)
      code += "    " + rest + " /= " + std::to_string(outShape[d]) + ";\n";
    for (size_t o = 0; o < strides.size(); ++o)
      if (strides[o][d])
        code += "    " + prefix + std::to_string(o) + " += at * " + std::to_string(strides[o][d]) +
                ";\n";
    code += "  }\n";
  }
  return code;
}

// Clip and LeakyRelu of `v`, written as the CPU kernels do (a NaN passes Clip).
std::string clipExpression(float lo, float hi) {
  return "(v < " + deviceFloat(lo) + " ? " + deviceFloat(lo) + " : v > " + deviceFloat(hi) + " ? " +
         deviceFloat(hi) + " : v)";
}
std::string leakyReluExpression(float alpha) {
  return "(v < 0.0f ? " + deviceFloat(alpha) + " * v : v)";
}

// The fused activation of a conv or gemm applied to `v`, as a device expression.
std::string activationExpression(const dlc::rt::Epilogue &epilogue) {
  switch (epilogue.activation) {
  case dlc::rt::Activation::None:
    return "v";
  case dlc::rt::Activation::Relu:
    return "v < 0.0f ? 0.0f : v";
  case dlc::rt::Activation::Clip:
    return clipExpression(epilogue.min, epilogue.max);
  case dlc::rt::Activation::LeakyRelu:
    return "v < 0.0f ? " + deviceFloat(epilogue.alpha) + " * v : v";
  case dlc::rt::Activation::Sigmoid:
    return *unaryExpression("Sigmoid");
  case dlc::rt::Activation::Tanh:
    return "tanhf(v)";
  }
  return "v";
}

// The C type of `v`'s elements for float math: "float", "double", or "" for other types.
std::string floatMathType(Value v) {
  Type element = tensorType(v).getElementType();
  return element.isF32() ? "float" : element.isF64() ? "double" : "";
}

// A device expression written for float (expf, fabsf, float(...)) made one of `type`: for
// double, the double functions (exp, fabs, double(...)); its float literals are exact either way.
std::string forMathType(const std::string &expression, const std::string &type) {
  if (type != "double")
    return expression;
  static const std::set<std::string> floatFunctions = {
      "expf",   "tanhf",  "logf",   "sqrtf",  "fabsf", "erff",  "floorf",    "ceilf",
      "sinf",   "cosf",   "tanf",   "asinf",  "acosf", "atanf", "sinhf",     "coshf",
      "asinhf", "acoshf", "atanhf", "log1pf", "fmaxf", "fminf", "nearbyintf"};
  auto identifier = [](char c, bool first) {
    return std::isalpha(static_cast<unsigned char>(c)) || c == '_' ||
           (!first && std::isdigit(static_cast<unsigned char>(c)));
  };
  std::string out;
  for (size_t i = 0; i < expression.size();) {
    if (!identifier(expression[i], true) ||
        (i > 0 && identifier(expression[i - 1], false))) { // inside a literal such as 1.5f
      out += expression[i++];
      continue;
    }
    size_t end = i;
    while (end < expression.size() && identifier(expression[end], false))
      ++end;
    const std::string word = expression.substr(i, end - i);
    out += word == "float"              ? "double"
           : floatFunctions.count(word) ? word.substr(0, word.size() - 1)
                                        : word;
    i = end;
  }
  return out;
}

// y = f(x) elementwise for float32 or float64, f a device expression in `v` written for float.
LogicalResult emitMap(Operation *op, KernelEmitter &e, const std::string &expression) {
  const std::string type = floatMathType(op->getResult(0));
  if (type.empty())
    return noKernelFor(op, op->getName().stripDialect());
  int64_t n = tensorType(op->getResult(0)).getNumElements();
  // Not __restrict__: the planner may have the result overwrite the input.
  std::string kernel = e.defineKernel("const " + type + " *x, " + type + " *y",
                                      threadIndex(n) + "  const " + type + " v = x[i];\n  y[i] = " +
                                          forMathType(expression, type) + ";\n");
  launch(e, kernel, n, e.ptr(op->getOperand(0)) + ", " + e.ptr(op->getResult(0)));
  return success();
}

LogicalResult emitUnary(Operation *op, KernelEmitter &e) {
  StringRef kind = cast<KernelKindInterface>(op).getKernelKind();
  std::optional<std::string> expression = unaryExpression(kind);
  if (floatMathType(op->getResult(0)).empty() || !expression)
    return noKernelFor(op, kind);
  return emitMap(op, e, *expression);
}

// A chain of elementwise steps (dlc-fuse-elementwise) as one kernel: the inputs are loaded
// (broadcast), each step's value is a local, the last one is stored.
LogicalResult emitFusedElementwise(Operation *op, KernelEmitter &e) {
  auto fused = cast<FusedElementwiseOp>(op);
  FailureOr<SmallVector<DecodedFusedStep>> steps = decodeFusedSteps(fused);
  if (failed(steps))
    return failure();
  auto outShape = tensorType(fused.getOutput()).getShape();
  int64_t n = tensorType(fused.getOutput()).getNumElements();
  SmallVector<SmallVector<int64_t>> strides;
  std::string params, args;
  for (auto [k, input] : llvm::enumerate(fused.getInputs())) {
    strides.push_back(broadcastStrides(tensorType(input).getShape(), outShape));
    params += "const float *x" + std::to_string(k) + ", ";
    args += e.ptr(input) + ", ";
  }
  std::string body = threadIndex(n) + broadcastOffsets(strides, outShape);
  int64_t slot = 0;
  for (size_t k = 0; k < strides.size(); ++k, ++slot)
    body += "  const float s" + std::to_string(slot) + " = x" + std::to_string(k) + "[offset" +
            std::to_string(k) + "];\n";
  for (const DecodedFusedStep &decoded : *steps) {
    const dlc::rt::FusedStep &step = decoded.step;
    std::string expression;
    switch (step.kind) {
    case dlc::rt::FusedStepKind::Unary:
      expression = unaryExpression(decoded.kind).value_or("");
      break;
    case dlc::rt::FusedStepKind::Binary:
      expression = binaryCall(decoded.kind);
      break;
    case dlc::rt::FusedStepKind::Clip:
      expression = clipExpression(step.p0, step.p1);
      break;
    case dlc::rt::FusedStepKind::LeakyRelu:
      expression = leakyReluExpression(step.p0);
      break;
    }
    if (expression.empty())
      return noKernel(op, "fused step " + decoded.kind.str() + " not built yet");
    std::string a = "s" + std::to_string(step.a);
    std::string operands = step.kind == dlc::rt::FusedStepKind::Binary
                               ? "const float a = " + a + ", b = s" + std::to_string(step.b)
                               : "const float v = " + a;
    body += "  float s" + std::to_string(slot) + ";\n  {\n    " + operands + ";\n    s" +
            std::to_string(slot) + " = " + expression + ";\n  }\n";
    ++slot;
  }
  body += "  y[i] = s" + std::to_string(slot - 1) + ";\n";
  std::string kernel = e.defineKernel(params + "float *y", body);
  launch(e, kernel, n, args + e.ptr(fused.getOutput()));
  return success();
}

// y[i] = x[start + offset(i)] for any element type (transposes and slices): the input offset
// is a sum over the output's dims of index * stride.
LogicalResult emitGather(Operation *op, KernelEmitter &e, ArrayRef<int64_t> inputStrides,
                         int64_t start) {
  std::string type = cType(tensorType(op->getResult(0)).getElementType());
  if (type.empty())
    return noKernelFor(op, "copying");
  auto outShape = tensorType(op->getResult(0)).getShape();
  int64_t n = tensorType(op->getResult(0)).getNumElements();
  std::string kernel = e.defineKernel(
      "const " + type + " *x, " + type + " *y",
      threadIndex(n) + broadcastOffsets({SmallVector<int64_t>(inputStrides)}, outShape) +
          "  y[i] = x[" + std::to_string(start) + " + offset0];\n");
  launch(e, kernel, n, e.ptr(op->getOperand(0)) + ", " + e.ptr(op->getResult(0)));
  return success();
}

LogicalResult emitTranspose(Operation *op, KernelEmitter &e) {
  auto transpose = cast<TransposeOp>(op);
  SmallVector<int64_t> inStrides = stridesOf(tensorType(transpose.getInput()).getShape());
  SmallVector<int64_t> strides;
  for (int64_t dim : transpose.getPerm())
    strides.push_back(inStrides[dim]);
  return emitGather(op, e, strides, 0);
}

LogicalResult emitSlice(Operation *op, KernelEmitter &e) {
  auto slice = cast<SliceOp>(op);
  SmallVector<int64_t> inStrides = stridesOf(tensorType(slice.getInput()).getShape());
  auto outShape = tensorType(slice.getOutput()).getShape();
  SmallVector<int64_t> strides;
  int64_t start = 0;
  for (auto [d, stride] : llvm::enumerate(inStrides)) {
    // A dim of one output element never steps (its step may be anything, even INT64_MAX);
    // otherwise the verifier keeps every stepped index inside the input.
    strides.push_back(outShape[d] == 1 ? 0 : stride * slice.getSteps()[d]);
    start += stride * slice.getStarts()[d];
  }
  return emitGather(op, e, strides, start);
}

// Each input copied into its slab of the output along the axis (concats the planner did not
// elide).
LogicalResult emitConcat(Operation *op, KernelEmitter &e) {
  auto concat = cast<ConcatOp>(op);
  std::string type = cType(tensorType(concat.getOutput()).getElementType());
  if (type.empty())
    return noKernelFor(op, "copying");
  auto outShape = tensorType(concat.getOutput()).getShape();
  int64_t axis = concat.getAxis();
  int64_t inner = product(outShape.drop_front(axis + 1)), axisOffset = 0;
  for (Value input : concat.getInputs()) {
    int64_t extent = tensorType(input).getDimSize(axis), n = tensorType(input).getNumElements();
    if (n) {
      const std::string slab = std::to_string(extent * inner);
      std::string kernel = e.defineKernel(
          "const " + type + " *x, " + type + " *y",
          threadIndex(n) + "  y[i / " + slab + " * " + std::to_string(outShape[axis] * inner) +
              " + " + std::to_string(axisOffset * inner) + " + i % " + slab + "] = x[i];\n");
      launch(e, kernel, n, e.ptr(input) + ", " + e.ptr(concat.getOutput()));
    }
    axisOffset += extent;
  }
  return success();
}

// One thread per row along the axis: the max, then the sum of exponentials, then the outputs,
// in the CPU kernel's order of operations.
LogicalResult emitSoftmax(Operation *op, KernelEmitter &e) {
  auto softmax = cast<SoftmaxOp>(op);
  if (!isF32(softmax.getOutput()))
    return noKernelFor(op, "softmax");
  auto shape = tensorType(softmax.getInput()).getShape();
  auto [outer, inner] = outerInner(shape, softmax.getAxis());
  int64_t n = shape[softmax.getAxis()], rows = outer * inner;
  const std::string stride = std::to_string(inner);
  const std::string in = "x[base + j * " + stride + "]", out = "y[base + j * " + stride + "]";
  const std::string loop = "  for (int64_t j = 0; j < " + std::to_string(n) + "; ++j)\n";
  std::string body = threadIndex(rows) + "  const int64_t base = i / " + stride + " * " +
                     std::to_string(n * inner) + " + i % " + stride +
                     ";\n  float maxv = -INFINITY, sum = 0.0f;\n" + loop +
                     "    maxv = fmaxf(maxv, " + in + ");\n";
  if (softmax.getLog())
    body += loop + "    sum += expf(" + in + " - maxv);\n  sum = logf(sum);\n" + loop + "    " +
            out + " = (" + in + " - maxv) - sum;\n";
  else
    body += loop + "  {\n    const float v = expf(" + in + " - maxv);\n    " + out +
            " = v;\n    sum += v;\n  }\n  sum = 1.0f / sum;\n" + loop + "    " + out + " *= sum;\n";
  std::string kernel = e.defineKernel("const float *x, float *y", body);
  launch(e, kernel, rows, e.ptr(softmax.getInput()) + ", " + e.ptr(softmax.getOutput()));
  return success();
}

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
  std::string kernel = e.defineKernel("const float *x, float *y", body);
  launch(e, kernel, n, e.ptr(op->getOperand(0)) + ", " + e.ptr(op->getResult(0)));
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
  std::string kernel = e.defineKernel(params + "float *y", body);
  launch(e, kernel, n, args + e.ptr(conv.getOutput()));
  return success();
}

// One thread per output element, looping over its reduced elements in row-major order.
LogicalResult emitReduction(Operation *op, KernelEmitter &e, StringRef kind,
                            ArrayRef<int64_t> axes) {
  static const std::map<std::string, std::pair<std::string, std::string>> kinds = {
      {"Sum", {"0.0f", "acc += v"}},
      {"Mean", {"0.0f", "acc += v"}},
      {"Prod", {"1.0f", "acc *= v"}},
      {"Max", {"-INFINITY", "acc = v > acc || v != v ? v : acc"}},
      {"Min", {"INFINITY", "acc = v < acc || v != v ? v : acc"}}};
  auto it = kinds.find(kind.str());
  const std::string type = floatMathType(op->getResult(0));
  if (type.empty() || it == kinds.end())
    return noKernelFor(op, "reduction " + kind.str());
  auto inShape = tensorType(op->getOperand(0)).getShape();
  SmallVector<int64_t> inStrides = stridesOf(inShape), keptShape, keptStrides, reducedShape,
                       reducedStrides;
  for (size_t d = 0; d < inShape.size(); ++d) {
    bool reduced = llvm::is_contained(axes, int64_t(d));
    (reduced ? reducedShape : keptShape).push_back(inShape[d]);
    (reduced ? reducedStrides : keptStrides).push_back(inStrides[d]);
  }
  int64_t n = product(keptShape), count = product(reducedShape);
  // The reduced index r walks the reduced dims as the output index i walks the kept ones.
  std::string body =
      threadIndex(n) + broadcastOffsets({keptStrides}, keptShape) + "  " + type +
      " acc = " + it->second.first + ";\n  for (int64_t r = 0; r < " + std::to_string(count) +
      "; ++r) {\n" + broadcastOffsets({reducedStrides}, reducedShape, "r", "reduced") +
      "    const " + type + " v = x[offset0 + reduced0];\n    " + it->second.second + ";\n  }\n";
  if (kind == "Mean")
    body += "  acc /= " + deviceFloat(double(count)) + ";\n";
  body += "  y[i] = acc;\n";
  std::string kernel = e.defineKernel("const " + type + " *x, " + type + " *y", body);
  launch(e, kernel, n, e.ptr(op->getOperand(0)) + ", " + e.ptr(op->getResult(0)));
  return success();
}

// y = f(operands...) with numpy broadcasting, f a device expression of the operands named
// a, b, c in order.
LogicalResult emitBroadcastMap(Operation *op, KernelEmitter &e, const std::string &expression) {
  auto outShape = tensorType(op->getResult(0)).getShape();
  int64_t n = tensorType(op->getResult(0)).getNumElements();
  SmallVector<SmallVector<int64_t>> strides;
  std::string params, loads, args;
  for (auto [k, operand] : llvm::enumerate(op->getOperands())) {
    std::string type = cType(tensorType(operand).getElementType()), index = std::to_string(k);
    strides.push_back(broadcastStrides(tensorType(operand).getShape(), outShape));
    params += "const " + type + " *x" + index + ", ";
    loads += "  const " + type + " " + char('a' + k) + " = x" + index + "[offset" + index + "];\n";
    args += e.ptr(operand) + ", ";
  }
  std::string out = cType(tensorType(op->getResult(0)).getElementType());
  std::string kernel = e.defineKernel(params + out + " *y",
                                      threadIndex(n) + broadcastOffsets(strides, outShape) + loads +
                                          "  y[i] = " + out + "(" + expression + ");\n");
  launch(e, kernel, n, args + e.ptr(op->getResult(0)));
  return success();
}

// Binary ops and comparisons (a bool result) of float, integer or bool operands.
LogicalResult emitBinary(Operation *op, KernelEmitter &e) {
  StringRef kind = cast<KernelKindInterface>(op).getKernelKind();
  std::string type = computeType(op->getOperand(0));
  if (type.empty() || computeType(op->getOperand(1)) != type)
    return noKernelFor(op, kind);
  return emitBroadcastMap(op, e, binaryCall(kind));
}

// A cuBLAS product through the runtime, row-major as dlc::rt::sgemm takes it, into C (beta 0).
void sgemmCall(KernelEmitter &e, bool transA, bool transB, int64_t m, int64_t n, int64_t k,
               float alpha, const std::string &a, int64_t lda, const std::string &b, int64_t ldb,
               const std::string &c, int64_t ldc) {
  auto flag = [](bool v) { return std::string(v ? "true" : "false"); };
  e.checkedCall("dlc::cuda::sgemm(context, kAllowTf32, " + flag(transA) + ", " + flag(transB) +
                ", " + std::to_string(m) + ", " + std::to_string(n) + ", " + std::to_string(k) +
                ", " + deviceFloat(alpha) + ", " + a + ", " + std::to_string(lda) + ", " + b +
                ", " + std::to_string(ldb) + ", 0.0f, " + c + ", " + std::to_string(ldc) + ")");
}

// Y = alpha * op(A) op(B) by cuBLAS, then one kernel adds beta * C (broadcast) and applies the
// fused activation.
LogicalResult emitGemm(Operation *op, KernelEmitter &e) {
  auto gemm = cast<GemmOp>(op);
  if (!isF32(gemm.getOutput()))
    return noKernelFor(op, "Gemm");
  auto a = tensorType(gemm.getA()).getShape(), b = tensorType(gemm.getB()).getShape();
  auto out = tensorType(gemm.getOutput()).getShape();
  int64_t k = gemm.getTransA() ? a[0] : a[1];
  sgemmCall(e, gemm.getTransA(), gemm.getTransB(), out[0], out[1], k,
            gemm.getAlpha().convertToFloat(), e.ptr(gemm.getA()), a[1], e.ptr(gemm.getB()), b[1],
            e.ptr(gemm.getOutput()), out[1]);
  float beta = gemm.getBeta().convertToFloat();
  bool addC = gemm.getC() && beta != 0.0f;
  dlc::rt::Epilogue epilogue = epilogueOf(op);
  if (!addC && epilogue.activation == dlc::rt::Activation::None)
    return success();
  int64_t n = out[0] * out[1];
  std::string body = threadIndex(n);
  if (addC) {
    body += broadcastOffsets({broadcastStrides(tensorType(gemm.getC()).getShape(), out)}, out);
    body += "  float v = y[i] + " + deviceFloat(beta) + " * c[offset0];\n";
  } else {
    body += "  float v = y[i];\n";
  }
  body += "  y[i] = " + activationExpression(epilogue) + ";\n";
  std::string kernel = e.defineKernel(addC ? "const float *c, float *y" : "float *y", body);
  launch(e, kernel, n,
         (addC ? e.ptr(gemm.getC()) + ", " : std::string()) + e.ptr(gemm.getOutput()));
  return success();
}

// Batched products by one cuBLAS call per batch entry (operands broadcast over batch dims).
// A MatMul of float64 or integers (no cuBLAS routine takes them): one thread per output
// element sums its row times column in order, integers wrapping, as the CPU kernel does.
LogicalResult emitPlainMatMul(Operation *op, KernelEmitter &e) {
  auto matmul = cast<MatMulOp>(op);
  std::string type = computeType(matmul.getOutput());
  if (type != "int32_t" && type != "double") // the types the dialect allows besides float32
    return noKernelFor(op, "MatMul");
  auto a = tensorType(matmul.getLhs()).getShape(), b = tensorType(matmul.getRhs()).getShape();
  auto out = tensorType(matmul.getOutput()).getShape();
  const int64_t m = a[a.size() - 2], k = a.back(), n = b.back();
  auto batch = out.drop_back(2);
  SmallVector<int64_t> aStrides = broadcastStrides(a.drop_back(2), batch),
                       bStrides = broadcastStrides(b.drop_back(2), batch);
  for (int64_t &stride : aStrides)
    stride *= m * k;
  for (int64_t &stride : bStrides)
    stride *= k * n;
  auto str = [](int64_t v) { return std::to_string(v); };
  const int64_t elements = tensorType(matmul.getOutput()).getNumElements();
  std::string body = threadIndex(elements) + "  const int64_t column = i % " + str(n) +
                     ", row = i / " + str(n) + " % " + str(m) + ";\n" +
                     broadcastOffsets({aStrides, bStrides}, batch, "(i / " + str(m * n) + ")") +
                     "  " + type + " acc = 0;\n  for (int64_t p = 0; p < " + str(k) +
                     "; ++p)\n    acc = dlc::rt::scalar::AddOp()(acc, dlc::rt::scalar::MulOp()(" +
                     "x0[offset0 + row * " + str(k) + " + p], x1[offset1 + p * " + str(n) +
                     " + column]));\n  y[i] = acc;\n";
  std::string kernel =
      e.defineKernel("const " + type + " *x0, const " + type + " *x1, " + type + " *y", body);
  launch(e, kernel, elements,
         e.ptr(matmul.getLhs()) + ", " + e.ptr(matmul.getRhs()) + ", " + e.ptr(matmul.getOutput()));
  return success();
}

LogicalResult emitMatMul(Operation *op, KernelEmitter &e) {
  auto matmul = cast<MatMulOp>(op);
  if (!isF32(matmul.getOutput()))
    return emitPlainMatMul(op, e);
  auto a = tensorType(matmul.getLhs()).getShape(), b = tensorType(matmul.getRhs()).getShape();
  auto out = tensorType(matmul.getOutput()).getShape();
  int64_t m = a[a.size() - 2], k = a.back(), n = b.back();
  auto batch = out.drop_back(2);
  SmallVector<int64_t> aOffsets = batchOffsets(a, batch), bOffsets = batchOffsets(b, batch);
  for (size_t flat = 0; flat < aOffsets.size(); ++flat)
    sgemmCall(e, false, false, m, n, k, 1.0f,
              e.ptr(matmul.getLhs()) + " + " + std::to_string(aOffsets[flat]), k,
              e.ptr(matmul.getRhs()) + " + " + std::to_string(bOffsets[flat]), n,
              e.ptr(matmul.getOutput()) + " + " + std::to_string(flat * m * n), n);
  return success();
}

// Statements setting `name` to the index `expression` read from the input data, checked
// against `extent` (a negative one counts from the end): a thread with a bad one reports
// `code` and stores nothing.
std::string checkedIndex(const std::string &name, const std::string &expression, int64_t extent,
                         int code, const std::string &indent = "  ") {
  const std::string size = std::to_string(extent);
  return indent + "int64_t " + name + " = int64_t(" + expression + ");\n" + indent + "if (" + name +
         " < -" + size + " || " + name + " >= " + size + ") {\n" + indent + "  DLC_FAULT(faults, " +
         std::to_string(code) + ");\n" + indent + "  return;\n" + indent + "}\n" + indent + "if (" +
         name + " < 0)\n" + indent + "  " + name + " += " + size + ";\n";
}

// The element types the data-movement kernels copy and index by; "" (no kernel) for others.
std::pair<std::string, std::string> copyTypes(Value data, Value indices) {
  return {cType(tensorType(data).getElementType()), cType(tensorType(indices).getElementType())};
}

// y[i] = x[offset] for each output element i of a gather op, where `addressing(code)` gives
// the statements that set `offset`, checking the indices they read (reporting `code`).
LogicalResult emitIndexedCopy(Operation *op, KernelEmitter &e, StringRef kind, Value input,
                              Value indices, Value output,
                              const std::function<std::string(int code)> &addressing) {
  auto [type, indexType] = copyTypes(input, indices);
  if (type.empty() || indexType.empty())
    return noKernelFor(op, kind);
  int64_t n = tensorType(output).getNumElements();
  std::string body =
      threadIndex(n) + addressing(e.faultCode("index out of range")) + "  y[i] = x[offset];\n";
  std::string kernel = e.defineKernel("const " + type + " *x, const " + indexType + " *indices, " +
                                          type + " *y, int *faults",
                                      body);
  launch(e, kernel, n, e.ptr(input) + ", " + e.ptr(indices) + ", " + e.ptr(output) + ", faults");
  return success();
}

// Gather along an axis: the output is [outer, indices, inner].
LogicalResult emitGatherAxis(Operation *op, KernelEmitter &e) {
  auto gather = cast<GatherOp>(op);
  auto shape = tensorType(gather.getInput()).getShape();
  int64_t axis = gather.getAxis(), inner = outerInner(shape, axis).second;
  int64_t count = tensorType(gather.getIndices()).getNumElements();
  auto str = [](int64_t v) { return std::to_string(v); };
  return emitIndexedCopy(
      op, e, "Gather", gather.getInput(), gather.getIndices(), gather.getOutput(), [&](int code) {
        return "  const int64_t r = i % " + str(inner) + ", j = i / " + str(inner) + " % " +
               str(count) + ", o = i / " + str(inner * count) + ";\n" +
               checkedIndex("at", "indices[j]", shape[axis], code) +
               "  const int64_t offset = (o * " + str(shape[axis]) + " + at) * " + str(inner) +
               " + r;\n";
      });
}

// GatherElements: the output has the indices' shape; element i reads the input at its own
// position with the axis coordinate replaced by indices[i].
LogicalResult emitGatherElements(Operation *op, KernelEmitter &e) {
  auto gather = cast<GatherElementsOp>(op);
  auto inShape = tensorType(gather.getInput()).getShape();
  auto indexShape = tensorType(gather.getIndices()).getShape();
  int64_t axis = gather.getAxis();
  SmallVector<int64_t> strides = stridesOf(inShape), others = strides;
  others[axis] = 0;
  return emitIndexedCopy(op, e, "GatherElements", gather.getInput(), gather.getIndices(),
                         gather.getOutput(), [&](int code) {
                           return broadcastOffsets({others}, indexShape) +
                                  checkedIndex("at", "indices[i]", inShape[axis], code) +
                                  "  const int64_t offset = offset0 + at * " +
                                  std::to_string(strides[axis]) + ";\n";
                         });
}

// GatherND: the output is [batches, tuples, slice]; element i copies from the slice its index
// tuple (k entries over the dims after the batch dims) selects.
LogicalResult emitGatherND(Operation *op, KernelEmitter &e) {
  auto gather = cast<GatherNDOp>(op);
  auto inShape = tensorType(gather.getInput()).getShape();
  auto indexShape = tensorType(gather.getIndices()).getShape();
  int64_t batchDims = gather.getBatchDims(), k = indexShape.back();
  int64_t tuples = product(indexShape.drop_back().drop_front(batchDims));
  int64_t slice = product(inShape.drop_front(batchDims + k));
  int64_t batchStride = product(inShape.drop_front(batchDims));
  SmallVector<int64_t> strides = stridesOf(inShape);
  auto str = [](int64_t v) { return std::to_string(v); };
  return emitIndexedCopy(
      op, e, "GatherND", gather.getInput(), gather.getIndices(), gather.getOutput(), [&](int code) {
        std::string statements =
            "  const int64_t tuple = i / " + str(slice) + ", batch = tuple / " + str(tuples) +
            ";\n  int64_t offset = batch * " + str(batchStride) + " + i % " + str(slice) + ";\n";
        for (int64_t q = 0; q < k; ++q) {
          std::string at = "at" + str(q);
          statements += checkedIndex(at, "indices[tuple * " + str(k) + " + " + str(q) + "]",
                                     inShape[batchDims + q], code) +
                        "  offset += " + at + " * " + str(strides[batchDims + q]) + ";\n";
        }
        return statements;
      });
}

// Cast between float32/64, the integers, bool, float16 and bfloat16 (the 16-bit floats through
// float, with the CPU's rounding); float8 and the 4- and 2-bit types are not built yet.
LogicalResult emitCast(Operation *op, KernelEmitter &e) {
  auto castOp = cast<CastOp>(op);
  Type from = tensorType(castOp.getInput()).getElementType();
  Type to = tensorType(castOp.getOutput()).getElementType();
  auto convertible = [](Type t) {
    return t.isF32() || t.isF64() || t.isF16() || t.isBF16() ||
           (isa<IntegerType>(t) &&
            llvm::is_contained({1u, 8u, 16u, 32u, 64u}, cast<IntegerType>(t).getWidth()));
  };
  if (!convertible(from) || !convertible(to))
    return noKernelFor(op, "Cast");
  std::string read = from.isF16()    ? "dlc::rt::scalar::halfToFloat(x[i])"
                     : from.isBF16() ? "dlc::rt::scalar::bfloatToFloat(x[i])"
                                     : "x[i]";
  std::string write = to.isF16()        ? "dlc::rt::scalar::floatToHalf(float(v))"
                      : to.isBF16()     ? "dlc::rt::scalar::floatToBfloat(float(v))"
                      : to.isInteger(1) ? "uint8_t(v != 0)"
                                        : "dlc::rt::scalar::convertValue<" + cType(to) + ">(v)";
  int64_t n = tensorType(castOp.getOutput()).getNumElements();
  std::string kernel =
      e.defineKernel("const " + cType(from) + " *x, " + cType(to) + " *y",
                     threadIndex(n) + "  const auto v = " + read + ";\n  y[i] = " + write + ";\n");
  launch(e, kernel, n, e.ptr(castOp.getInput()) + ", " + e.ptr(castOp.getOutput()));
  return success();
}

// ArgMax / ArgMin: one thread per [outer, inner] position scans its row as the CPU kernel
// does (the first extreme, or the last with select_last_index; a NaN wins and stays).
LogicalResult emitArgReduce(Operation *op, KernelEmitter &e) {
  std::string type = computeType(op->getOperand(0));
  if (type.empty())
    return noKernelFor(op, isa<ArgMaxOp>(op) ? "ArgMax" : "ArgMin");
  int64_t axis = cast<IntegerAttr>(op->getAttr("axis")).getInt();
  bool last = cast<BoolAttr>(op->getAttr("select_last_index")).getValue();
  auto shape = tensorType(op->getOperand(0)).getShape();
  auto [outer, inner] = outerInner(shape, axis);
  int64_t extent = shape.empty() ? 1 : shape[axis], rows = outer * inner;
  auto str = [](int64_t v) { return std::to_string(v); };
  std::string better = isa<ArgMaxOp>(op) ? "v > b" : "v < b";
  std::string body = threadIndex(rows) + "  const " + type + " *row = x + i / " + str(inner) +
                     " * " + str(extent * inner) + " + i % " + str(inner) +
                     ";\n  int64_t best = 0;\n  for (int64_t j = 1; j < " + str(extent) +
                     "; ++j) {\n    const " + type + " v = row[j * " + str(inner) +
                     "], b = row[best * " + str(inner) +
                     "];\n    const bool vNan = dlc::rt::scalar::isNan(v), bNan = "
                     "dlc::rt::scalar::isNan(b);\n    if ((!bNan && (vNan || " +
                     better + "))" + (last ? " || v == b || (vNan && bNan)" : "") +
                     ")\n      best = j;\n  }\n  y[i] = best;\n";
  std::string kernel = e.defineKernel("const " + type + " *x, int64_t *y", body);
  launch(e, kernel, rows, e.ptr(op->getOperand(0)) + ", " + e.ptr(op->getResult(0)));
  return success();
}

// CumSum / CumProd: one thread per [outer, inner] position runs along its row (integers wrap).
LogicalResult emitRunning(Operation *op, KernelEmitter &e) {
  std::string type = computeType(op->getOperand(0));
  bool product = isa<CumProdOp>(op);
  if (type.empty())
    return noKernelFor(op, product ? "CumProd" : "CumSum");
  int64_t axis = cast<IntegerAttr>(op->getAttr("axis")).getInt();
  auto flag = [&](const char *name) { return cast<BoolAttr>(op->getAttr(name)).getValue(); };
  auto shape = tensorType(op->getOperand(0)).getShape();
  auto [outer, inner] = outerInner(shape, axis);
  int64_t extent = shape.empty() ? 1 : shape[axis], rows = outer * inner;
  auto str = [](int64_t v) { return std::to_string(v); };
  std::string combine =
      std::string("acc = dlc::rt::scalar::") + (product ? "Mul" : "Add") + "Op()(acc, v);";
  std::string store = "y[at] = acc;";
  // Read first: y may alias x.
  std::string body =
      threadIndex(rows) + "  const int64_t base = i / " + str(inner) + " * " + str(extent * inner) +
      " + i % " + str(inner) + ";\n  " + type + " acc = " + type + "(" + (product ? "1" : "0") +
      ");\n  for (int64_t step = 0; step < " + str(extent) +
      "; ++step) {\n    const int64_t at = base + " +
      (flag("reverse") ? "(" + str(extent - 1) + " - step)" : std::string("step")) + " * " +
      str(inner) + ";\n    const " + type + " v = x[at];\n    " +
      (flag("exclusive") ? store + "\n    " + combine : combine + "\n    " + store) + "\n  }\n";
  std::string kernel = e.defineKernel("const " + type + " *x, " + type + " *y", body);
  launch(e, kernel, rows, e.ptr(op->getOperand(0)) + ", " + e.ptr(op->getResult(0)));
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
  std::string kernel = e.defineKernel("const float *grad, const float *weight, float *y", body);
  launch(e, kernel, n,
         e.ptr(grad.getGrad()) + ", " + e.ptr(grad.getWeight()) + ", " + e.ptr(grad.getOutput()));
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
  std::string kernel = e.defineKernel("const float *x, const float *scale, const float *bias, "
                                      "const float *mean, const float *var, float *y",
                                      body);
  launch(e, kernel, n,
         e.ptr(bn.getInput()) + ", " + e.ptr(bn.getScale()) + ", " + e.ptr(bn.getBias()) + ", " +
             e.ptr(bn.getMean()) + ", " + e.ptr(bn.getVariance()) + ", " + e.ptr(bn.getOutput()));
  return success();
}

// The scatter ops copy the input to the result, then apply the updates in the CPU kernel's
// order (duplicate indices combine as they do there) in a kernel of one thread: correct and
// deterministic, not fast. Every index is checked before anything is written.
std::string scatterCombine(StringRef reduction) {
  if (reduction == "add")
    return "dlc::rt::scalar::AddOp()(target, u)";
  if (reduction == "mul")
    return "dlc::rt::scalar::MulOp()(target, u)";
  if (reduction == "max")
    return "target < u ? u : target";
  if (reduction == "min")
    return "u < target ? u : target";
  return "u";
}

void copyInputToResult(KernelEmitter &e, Value input, Value result) {
  if (e.ptr(input) != e.ptr(result))
    e.checkedCall("dlc::cuda::copyOnDevice(context, " + e.ptr(result) + ", " + e.ptr(input) + ", " +
                  std::to_string(tensorBytes(result.getType())) + ")");
}

// `apply` runs once per update j with `target`, the element it combines into, and `u`.
void emitScatterKernel(KernelEmitter &e, Value input, Value indices, Value updates, Value result,
                       const std::string &checks, const std::string &apply) {
  copyInputToResult(e, input, result);
  std::string type = cType(tensorType(result).getElementType());
  std::string indexType = cType(tensorType(indices).getElementType());
  std::string kernel = e.defineKernel("const " + indexType + " *indices, const " + type +
                                          " *updates, " + type + " *y, int *faults",
                                      threadIndex(1) + checks + apply);
  launch(e, kernel, 1, e.ptr(indices) + ", " + e.ptr(updates) + ", " + e.ptr(result) + ", faults");
}

LogicalResult emitScatterElements(Operation *op, KernelEmitter &e) {
  auto scatter = cast<ScatterElementsOp>(op);
  auto [type, indexType] = copyTypes(scatter.getInput(), scatter.getIndices());
  if (type.empty() || indexType.empty())
    return noKernelFor(op, "ScatterElements");
  auto shape = tensorType(scatter.getInput()).getShape();
  auto indexShape = tensorType(scatter.getIndices()).getShape();
  int64_t axis = scatter.getAxis(), count = product(indexShape);
  SmallVector<int64_t> strides = stridesOf(shape), others = strides;
  others[axis] = 0;
  const std::string loop = "  for (int64_t j = 0; j < " + std::to_string(count) + "; ++j) {\n";
  int code = e.faultCode("index out of range");
  std::string checks = loop + checkedIndex("at", "indices[j]", shape[axis], code, "    ") + "  }\n";
  std::string apply =
      loop + broadcastOffsets({others}, indexShape, "j") +
      checkedIndex("at", "indices[j]", shape[axis], code, "    ") + "    " + type +
      " &target = y[offset0 + at * " + std::to_string(strides[axis]) + "];\n    const " + type +
      " u = updates[j];\n    target = " + scatterCombine(scatter.getReduction()) + ";\n  }\n";
  emitScatterKernel(e, scatter.getInput(), scatter.getIndices(), scatter.getUpdates(),
                    scatter.getOutput(), checks, apply);
  return success();
}

LogicalResult emitScatterND(Operation *op, KernelEmitter &e) {
  auto scatter = cast<ScatterNDOp>(op);
  auto [type, indexType] = copyTypes(scatter.getInput(), scatter.getIndices());
  if (type.empty() || indexType.empty())
    return noKernelFor(op, "ScatterND");
  auto shape = tensorType(scatter.getInput()).getShape();
  auto indexShape = tensorType(scatter.getIndices()).getShape();
  int64_t k = indexShape.back(), tuples = product(indexShape.drop_back());
  int64_t slice = product(shape.drop_front(k));
  SmallVector<int64_t> strides = stridesOf(shape);
  auto str = [](int64_t v) { return std::to_string(v); };
  int code = e.faultCode("index out of range");
  // Statements setting `offset` to the element offset of tuple t.
  std::string offset = "    int64_t offset = 0;\n";
  for (int64_t q = 0; q < k; ++q)
    offset += checkedIndex("at" + str(q), "indices[t * " + str(k) + " + " + str(q) + "]", shape[q],
                           code, "    ") +
              "    offset += at" + str(q) + " * " + str(strides[q]) + ";\n";
  const std::string loop = "  for (int64_t t = 0; t < " + str(tuples) + "; ++t) {\n";
  std::string checks = loop + offset + "  }\n";
  std::string apply =
      loop + offset + "    for (int64_t s = 0; s < " + str(slice) + "; ++s) {\n      " + type +
      " &target = y[offset + s];\n      const " + type + " u = updates[t * " + str(slice) +
      " + s];\n      target = " + scatterCombine(scatter.getReduction()) + ";\n    }\n  }\n";
  emitScatterKernel(e, scatter.getInput(), scatter.getIndices(), scatter.getUpdates(),
                    scatter.getOutput(), checks, apply);
  return success();
}

// TopK's indices: one thread per element of each line ranks it against the whole line (the
// order the CPU kernel sorts by: value, then index), and the k best write their index at their
// rank. Each rank has exactly one element, so no two threads write the same output.
LogicalResult emitTopK(Operation *op, KernelEmitter &e) {
  auto topK = cast<TopKOp>(op);
  std::string type = computeType(topK.getInput());
  if (type.empty())
    return noKernelFor(op, "TopK");
  auto shape = tensorType(topK.getInput()).getShape();
  int64_t axis = topK.getAxis(), n = shape[axis];
  int64_t inner = outerInner(shape, axis).second;
  int64_t k = tensorType(topK.getOutput()).getDimSize(axis);
  int64_t threads = tensorType(topK.getInput()).getNumElements();
  auto str = [](int64_t v) { return std::to_string(v); };
  const std::string better = topK.getLargest() ? "vb > va" : "vb < va";
  std::string body =
      threadIndex(threads) + "  const int64_t column = i % " + str(inner) + ", a = i / " +
      str(inner) + " % " + str(n) + ", o = i / " + str(inner * n) + ";\n  const " + type +
      " *line = x + o * " + str(n * inner) + " + column;\n  const " + type + " va = line[a * " +
      str(inner) + "];\n  int64_t rank = 0;\n  for (int64_t b = 0; b < " + str(n) +
      "; ++b) {\n    const " + type + " vb = line[b * " + str(inner) +
      "];\n    rank += vb != va ? (" + better + ") : b < a;\n  }\n  if (rank < " + str(k) +
      ")\n    indices[(o * " + str(k) + " + rank) * " + str(inner) + " + column] = a;\n";
  std::string kernel = e.defineKernel("const " + type + " *x, int64_t *indices", body);
  launch(e, kernel, threads, e.ptr(topK.getInput()) + ", " + e.ptr(topK.getOutput()));
  return success();
}

} // namespace

void addCudaEmitters(EmitterTable &cudaTable) {
  // An op with an empty result launches nothing (a grid of no blocks is a launch error).
  EmitterTable table;
  // Every elementwise op reaches its emitter, which names the kinds not built yet.
  for (StringRef name : unaryOpNames())
    table[name.str()] = emitUnary;
  for (StringRef name : binaryOpNames())
    table[name.str()] = emitBinary;
  table["dlc.gemm"] = emitGemm;
  table["dlc.matmul"] = emitMatMul;
  table["dlc.fused_elementwise"] = emitFusedElementwise;
  table["dlc.clip"] = [](Operation *op, KernelEmitter &e) {
    auto clip = cast<ClipOp>(op);
    return emitMap(op, e,
                   clipExpression(clip.getMin().convertToFloat(), clip.getMax().convertToFloat()));
  };
  table["dlc.leaky_relu"] = [](Operation *op, KernelEmitter &e) {
    return emitMap(op, e, leakyReluExpression(cast<LeakyReluOp>(op).getAlpha().convertToFloat()));
  };
  table["dlc.transpose"] = emitTranspose;
  table["dlc.broadcast"] = [](Operation *op, KernelEmitter &e) {
    return emitGather(op, e,
                      broadcastStrides(tensorType(op->getOperand(0)).getShape(),
                                       tensorType(op->getResult(0)).getShape()),
                      0);
  };
  table["dlc.where"] = [](Operation *op, KernelEmitter &e) {
    if (cType(tensorType(op->getResult(0)).getElementType()).empty())
      return noKernelFor(op, "Where");
    return emitBroadcastMap(op, e, "a ? b : c");
  };
  // A reshape the planner could not make a view of (its input is also an output, or a
  // weight): the same bytes, copied.
  table["dlc.reshape"] = [](Operation *op, KernelEmitter &e) {
    copyInputToResult(e, op->getOperand(0), op->getResult(0));
    return success();
  };
  table["dlc.slice"] = emitSlice;
  table["dlc.gather"] = emitGatherAxis;
  table["dlc.gather_elements"] = emitGatherElements;
  table["dlc.gather_nd"] = emitGatherND;
  table["dlc.cast"] = emitCast;
  table["dlc.arg_max"] = emitArgReduce;
  table["dlc.arg_min"] = emitArgReduce;
  table["dlc.cumsum"] = emitRunning;
  table["dlc.cumprod"] = emitRunning;
  table["dlc.conv_grad_input"] = emitConvGradInput;
  table["dlc.batch_norm"] = emitBatchNorm;
  table["dlc.scatter_elements"] = emitScatterElements;
  table["dlc.scatter_nd"] = emitScatterND;
  table["dlc.top_k"] = emitTopK;
  table["dlc.concat"] = emitConcat;
  table["dlc.softmax"] = emitSoftmax;
  table["dlc.conv"] = emitConv;
  table["dlc.max_pool"] = emitPool;
  // The mean over every spatial dim.
  table["dlc.global_avg_pool"] = [](Operation *op, KernelEmitter &e) {
    int64_t rank = tensorType(op->getOperand(0)).getRank();
    return emitReduction(op, e, "Mean", llvm::to_vector(llvm::seq<int64_t>(2, rank)));
  };
  table["dlc.avg_pool"] = emitPool;
  for (const char *name :
       {"dlc.reduce_sum", "dlc.reduce_mean", "dlc.reduce_max", "dlc.reduce_min", "dlc.reduce_prod"})
    table[name] = [](Operation *op, KernelEmitter &e) {
      return emitReduction(op, e, cast<KernelKindInterface>(op).getKernelKind(),
                           cast<DenseI64ArrayAttr>(op->getAttr("axes")).asArrayRef());
    };
  for (auto &[name, emitter] : table)
    cudaTable[name] = [emitter = emitter](Operation *op, KernelEmitter &e) {
      if (op->getNumResults() == 1 && tensorType(op->getResult(0)).getNumElements() == 0)
        return success();
      return emitter(op, e);
    };
}

} // namespace dlc
