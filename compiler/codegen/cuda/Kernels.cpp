// The CUDA target's op emitters: each op becomes a generated kernel with its shapes and
// strides as constants (one thread per output element), or a cuBLAS call through the CUDA
// runtime. Ops and element types without one fail with "no CUDA kernel", naming both. Here:
// the shared helpers, elementwise ops, data movement, reductions, products and Det; casts are in
// Cast.cpp, the indexed ops in Indexing.cpp, the windowed ones in Window.cpp.
#include "compiler/codegen/cuda/CudaEmitter.h"
#include "dialects/DlcDialect.h"
#include "dlc_cuda_conv.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>

using namespace mlir;

namespace dlc {
namespace cudagen {

constexpr int64_t kThreadsPerBlock = 256;

std::string str(int64_t value) { return std::to_string(value); }

std::string channelOfElement(int64_t channels, int64_t spatial) {
  return "  const int64_t c = i / " + str(spatial) + " % " + str(channels) + ";\n";
}

// A float constant in device code: floatLiteral's std::numeric_limits spelling of infinity
// is a host constexpr call that nvcc refuses in a kernel.
std::string deviceFloat(double value) {
  if (std::isinf(value))
    return value > 0 ? "INFINITY" : "-INFINITY";
  if (std::isnan(value))
    return "NAN";
  return floatLiteral(value);
}

// The device call of unary kind `kind` on `v`: the CPU kernels' own definition
// (runtime/scalar_ops.h), for float and double; nothing for a name that is no unary kind.
std::optional<std::string> unaryExpression(StringRef kind) {
  if (!unaryKindNamed(kind))
    return std::nullopt;
  return "dlc::rt::scalar::" + kind.str() + "Unary()(v)";
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

// The block size of a launch of `threads` threads: whole warps, at most kThreadsPerBlock. The
// kernel declares it as its launch bounds.
int64_t blockThreads(int64_t threads) {
  return std::min<int64_t>(kThreadsPerBlock, (threads + 31) / 32 * 32);
}

void launchKernel(KernelEmitter &e, const std::string &params, const std::string &body,
                  int64_t threads, const std::string &args) {
  if (threads == 0) // a grid of no blocks is a launch error
    return;
  const int64_t block = blockThreads(threads);
  const std::string kernel = e.defineKernel(params, body, block);
  e.line("DLC_LAUNCH(" + kernel + ", " + std::to_string(e.kernelsDefined() - 1) + ", " +
         std::to_string((threads + block - 1) / block) + ", " + std::to_string(block) +
         ", context, " + args + ");");
  e.checkedCall("dlc::cuda::launched(context, " + cString(kernel + " (" + e.currentOp + ")") + ")");
}

// Statements setting `<prefix><o>` for each operand o from the flat output index `index`: the
// broadcast strides of each operand over the output's dims, as constants. Dims outside the
// outermost one some operand walks need no division.
std::string broadcastOffsets(ArrayRef<SmallVector<int64_t>> strides, ArrayRef<int64_t> outShape,
                             const std::string &index, const std::string &prefix) {
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
    return *unaryExpression("Relu");
  case dlc::rt::Activation::Clip:
    return clipExpression(epilogue.min, epilogue.max);
  case dlc::rt::Activation::LeakyRelu:
    return "v < 0.0f ? " + deviceFloat(epilogue.alpha) + " * v : v";
  case dlc::rt::Activation::Sigmoid:
    return *unaryExpression("Sigmoid");
  case dlc::rt::Activation::Tanh:
    return *unaryExpression("Tanh");
  case dlc::rt::Activation::Silu:
    return "v * (" + *unaryExpression("Sigmoid") + ")";
  case dlc::rt::Activation::HardSwish: {
    const std::string linear = "(" + deviceFloat(float(1.0 / 6.0)) + " * v + 0.5f)";
    return "v * (" + linear + " < 0.0f ? 0.0f : " + linear + " > 1.0f ? 1.0f : " + linear + ")";
  }
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

void copyInputToResult(KernelEmitter &e, Value input, Value result) {
  if (e.ptr(input) != e.ptr(result))
    e.checkedCall("dlc::cuda::copyOnDevice(context, " + e.ptr(result) + ", " + e.ptr(input) + ", " +
                  std::to_string(tensorBytes(result.getType())) + ")");
}

// Launches y = f(inputs) over the float32 `output`, each thread computing 4 consecutive
// elements: one 16-byte load per input and one store when every pointer is 16-byte aligned
// (tested in the kernel: the caller's pointers can be anything), element by element otherwise
// and at the tail. Each input has the output's shape or is one element read by all.
// `elementCode` sets `out[j]` from `in0[j]`, `in1[j]`, ... (inputs in order).
void launchVectorizedMap(KernelEmitter &e, ValueRange inputs, Value output,
                         const std::string &elementCode) {
  const int64_t n = tensorType(output).getNumElements();
  const std::string count = std::to_string(n);
  std::string params, args, arrays, alignedPointers, loads, tailLoads, broadcasts;
  for (auto [k, input] : llvm::enumerate(inputs)) {
    const std::string x = "x" + std::to_string(k), in = "in" + std::to_string(k);
    params += "const float *" + x + ", ";
    args += e.ptr(input) + ", ";
    arrays += in + "[4] = {}, ";
    if (tensorType(input).getNumElements() == 1) {
      broadcasts += "    " + in + "[j] = " + x + "[0];\n";
      continue;
    }
    alignedPointers += x + ", ";
    loads += "    dlc::cuda::load4(" + x + " + first, " + in + ");\n";
    tailLoads += "      " + in + "[j] = " + x + "[first + j];\n";
  }
  std::string wholeTest = "dlc::cuda::aligned16(" + alignedPointers + "y)";
  if (n % 4)
    wholeTest = "first + 4 <= " + count + " && " + wholeTest;
  std::string body =
      "  const int64_t first = DLC_INDEX * 4;\n  if (first >= " + count +
      ")\n    return;\n  float " + arrays + "out[4];\n  const bool whole = " + wholeTest +
      ";\n  if (whole) {\n" + loads + "  } else {\n    for (int64_t j = 0; j < 4 && first + j < " +
      count + "; ++j) {\n" + tailLoads + "    }\n  }\n  for (int j = 0; j < 4; ++j) {\n" +
      broadcasts + elementCode + "  }\n  if (whole) {\n    dlc::cuda::store4(out, y + first);\n" +
      "  } else {\n    for (int64_t j = 0; j < 4 && first + j < " + count +
      "; ++j)\n      y[first + j] = out[j];\n  }\n";
  // Not __restrict__: the planner may have the result overwrite an input.
  launchKernel(e, params + "float *y", body, (n + 3) / 4, args + e.ptr(output));
}

// Whether launchVectorizedMap takes `inputs` to the float32 `output`.
bool vectorizable(ValueRange inputs, Value output) {
  if (!isF32(output))
    return false;
  const int64_t n = tensorType(output).getNumElements();
  return llvm::all_of(inputs, [&](Value input) {
    int64_t count = tensorType(input).getNumElements();
    return isF32(input) && (count == n || count == 1);
  });
}

} // namespace cudagen

namespace {

using namespace cudagen;

// y = f(x) elementwise for float32 or float64, f a device expression in `v` written for float.
LogicalResult emitMap(Operation *op, KernelEmitter &e, const std::string &expression) {
  const std::string type = floatMathType(op->getResult(0));
  if (type.empty())
    return noKernelFor(op, op->getName().stripDialect());
  if (type == "float") {
    launchVectorizedMap(e, op->getOperand(0), op->getResult(0),
                        "    const float v = in0[j];\n    out[j] = " + expression + ";\n");
    return success();
  }
  int64_t n = tensorType(op->getResult(0)).getNumElements();
  launchKernel(e, "const double *x, double *y",
               threadIndex(n) +
                   "  const double v = x[i];\n  y[i] = " + forMathType(expression, type) + ";\n",
               n, e.ptr(op->getOperand(0)) + ", " + e.ptr(op->getResult(0)));
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
  // The inputs are the locals s0, s1, ...; each step adds the next.
  const size_t inputs = fused.getInputs().size();
  std::string chain;
  int64_t slot = int64_t(inputs);
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
    chain += "    float s" + std::to_string(slot) + ";\n    {\n      " + operands + ";\n      s" +
             std::to_string(slot) + " = " + expression + ";\n    }\n";
    ++slot;
  }
  const std::string last = "s" + std::to_string(slot - 1);
  if (vectorizable(fused.getInputs(), fused.getOutput())) {
    std::string loads;
    for (size_t k = 0; k < inputs; ++k)
      loads += "    const float s" + std::to_string(k) + " = in" + std::to_string(k) + "[j];\n";
    launchVectorizedMap(e, fused.getInputs(), fused.getOutput(),
                        loads + chain + "    out[j] = " + last + ";\n");
    return success();
  }
  auto outShape = tensorType(fused.getOutput()).getShape();
  int64_t n = tensorType(fused.getOutput()).getNumElements();
  SmallVector<SmallVector<int64_t>> strides;
  std::string params, args;
  for (auto [k, input] : llvm::enumerate(fused.getInputs())) {
    strides.push_back(broadcastStrides(tensorType(input).getShape(), outShape));
    params += "const float *x" + std::to_string(k) + ", ";
    args += e.ptr(input) + ", ";
  }
  std::string body = threadIndex(n) + broadcastOffsets(strides, outShape) + "  {\n";
  for (size_t k = 0; k < inputs; ++k)
    body += "    const float s" + std::to_string(k) + " = x" + std::to_string(k) + "[offset" +
            std::to_string(k) + "];\n";
  body += chain + "    y[i] = " + last + ";\n  }\n";
  launchKernel(e, params + "float *y", body, n, args + e.ptr(fused.getOutput()));
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
  launchKernel(e, "const " + type + " *x, " + type + " *y",
               threadIndex(n) + broadcastOffsets({SmallVector<int64_t>(inputStrides)}, outShape) +
                   "  y[i] = x[" + std::to_string(start) + " + offset0];\n",
               n, e.ptr(op->getOperand(0)) + ", " + e.ptr(op->getResult(0)));
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
      launchKernel(e, "const " + type + " *x, " + type + " *y",
                   threadIndex(n) + "  y[i / " + slab + " * " +
                       std::to_string(outShape[axis] * inner) + " + " +
                       std::to_string(axisOffset * inner) + " + i % " + slab + "] = x[i];\n",
                   n, e.ptr(input) + ", " + e.ptr(concat.getOutput()));
    }
    axisOffset += extent;
  }
  return success();
}

// One thread per row along the axis: the max, then the sum of exponentials, then the outputs,
// in the CPU kernel's order of operations.
LogicalResult emitSoftmax(Operation *op, KernelEmitter &e) {
  auto softmax = cast<SoftmaxOp>(op);
  const std::string type = floatMathType(softmax.getOutput());
  if (type.empty())
    return noKernelFor(op, "softmax");
  // The C math functions of float end in f; those of double have the plain names.
  const std::string f = type == "float" ? "f" : "";
  auto shape = tensorType(softmax.getInput()).getShape();
  auto [outer, inner] = outerInner(shape, softmax.getAxis());
  int64_t n = shape[softmax.getAxis()], rows = outer * inner;
  const std::string stride = std::to_string(inner);
  const std::string in = "x[base + j * " + stride + "]", out = "y[base + j * " + stride + "]";
  const std::string loop = "  for (int64_t j = 0; j < " + std::to_string(n) + "; ++j)\n";
  std::string body = threadIndex(rows) + "  const int64_t base = i / " + stride + " * " +
                     std::to_string(n * inner) + " + i % " + stride + ";\n  " + type +
                     " maxv = -INFINITY, sum = 0;\n" + loop + "    maxv = fmax" + f + "(maxv, " +
                     in + ");\n";
  if (softmax.getLog())
    body += loop + "    sum += exp" + f + "(" + in + " - maxv);\n  sum = log" + f + "(sum);\n" +
            loop + "    " + out + " = (" + in + " - maxv) - sum;\n";
  else
    body += loop + "  {\n    const " + type + " v = exp" + f + "(" + in + " - maxv);\n    " + out +
            " = v;\n    sum += v;\n  }\n  sum = 1 / sum;\n" + loop + "    " + out + " *= sum;\n";
  launchKernel(e, "const " + type + " *x, " + type + " *y", body, rows,
               e.ptr(softmax.getInput()) + ", " + e.ptr(softmax.getOutput()));
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
  // The reduced index r walks the reduced dims as the output index i walks the kept ones. An
  // empty reduced set leaves the initial value (and has no dims to walk: no loop).
  std::string body = threadIndex(n) + broadcastOffsets({keptStrides}, keptShape) + "  " + type +
                     " acc = " + it->second.first + ";\n";
  if (count > 0)
    body += "  for (int64_t r = 0; r < " + std::to_string(count) + "; ++r) {\n" +
            broadcastOffsets({reducedStrides}, reducedShape, "r", "reduced") + "    const " + type +
            " v = x[offset0 + reduced0];\n    " + it->second.second + ";\n  }\n";
  if (kind == "Mean")
    body += "  acc /= " + deviceFloat(double(count)) + ";\n";
  body += "  y[i] = acc;\n";
  launchKernel(e, "const " + type + (count > 0 ? " *x, " : " *, ") + type + " *y", body, n,
               e.ptr(op->getOperand(0)) + ", " + e.ptr(op->getResult(0)));
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
  launchKernel(e, params + out + " *y",
               threadIndex(n) + broadcastOffsets(strides, outShape) + loads + "  y[i] = " + out +
                   "(" + expression + ");\n",
               n, args + e.ptr(op->getResult(0)));
  return success();
}

// Binary ops and comparisons (a bool result) of float, integer or bool operands.
LogicalResult emitBinary(Operation *op, KernelEmitter &e) {
  StringRef kind = cast<KernelKindInterface>(op).getKernelKind();
  std::string type = computeType(op->getOperand(0));
  if (type.empty() || computeType(op->getOperand(1)) != type)
    return noKernelFor(op, kind);
  if (vectorizable(op->getOperands(), op->getResult(0))) {
    launchVectorizedMap(
        e, op->getOperands(), op->getResult(0),
        "    const float a = in0[j], b = in1[j];\n    out[j] = " + binaryCall(kind) + ";\n");
    return success();
  }
  return emitBroadcastMap(op, e, binaryCall(kind));
}

// A cuBLAS product through the runtime, row-major as dlc::rt::sgemm takes it, into C (beta 0);
// `batch` ("{count, strideA, strideB, strideC}") repeats it at strided offsets.
void sgemmCall(KernelEmitter &e, bool transA, bool transB, int64_t m, int64_t n, int64_t k,
               float alpha, const std::string &a, int64_t lda, const std::string &b, int64_t ldb,
               const std::string &c, int64_t ldc, const std::string &batch = "") {
  auto flag = [](bool v) { return std::string(v ? "true" : "false"); };
  e.checkedCall("dlc::cuda::sgemm(context, kAllowTf32, " + flag(transA) + ", " + flag(transB) +
                ", " + std::to_string(m) + ", " + std::to_string(n) + ", " + std::to_string(k) +
                ", " + deviceFloat(alpha) + ", " + a + ", " + std::to_string(lda) + ", " + b +
                ", " + std::to_string(ldb) + ", 0.0f, " + c + ", " + std::to_string(ldc) +
                (batch.empty() ? "" : ", " + batch) + ")");
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
  launchKernel(e, addC ? "const float *c, float *y" : "float *y", body, n,
               (addC ? e.ptr(gemm.getC()) + ", " : std::string()) + e.ptr(gemm.getOutput()));
  return success();
}

// Batched products: one strided cuBLAS call per run of batch entries whose operands advance
// by fixed strides (one call for the whole batch unless broadcasting interleaves the operands).
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
  const int64_t elements = tensorType(matmul.getOutput()).getNumElements();
  std::string body = threadIndex(elements) + "  const int64_t column = i % " + str(n) +
                     ", row = i / " + str(n) + " % " + str(m) + ";\n" +
                     broadcastOffsets({aStrides, bStrides}, batch, "(i / " + str(m * n) + ")") +
                     "  " + type + " acc = 0;\n  for (int64_t p = 0; p < " + str(k) +
                     "; ++p)\n    acc = dlc::rt::scalar::AddOp()(acc, dlc::rt::scalar::MulOp()(" +
                     "x0[offset0 + row * " + str(k) + " + p], x1[offset1 + p * " + str(n) +
                     " + column]));\n  y[i] = acc;\n";
  launchKernel(e, "const " + type + " *x0, const " + type + " *x1, " + type + " *y", body, elements,
               e.ptr(matmul.getLhs()) + ", " + e.ptr(matmul.getRhs()) + ", " +
                   e.ptr(matmul.getOutput()));
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
  FailureOr<SmallVector<int64_t>> aBatch = batchOffsets(op, a, batch);
  if (failed(aBatch))
    return failure();
  const SmallVector<int64_t> &aOffsets = *aBatch;
  SmallVector<int64_t> bOffsets = *batchOffsets(op, b, batch); // the same count as aOffsets
  const size_t entries = aOffsets.size();
  for (size_t first = 0, end; first < entries; first = end) {
    // The run's strides are its first two entries' distances; it ends where one breaks.
    const int64_t strideA = first + 1 < entries ? aOffsets[first + 1] - aOffsets[first] : 0,
                  strideB = first + 1 < entries ? bOffsets[first + 1] - bOffsets[first] : 0;
    for (end = first + 1; end < entries && aOffsets[end] - aOffsets[end - 1] == strideA &&
                          bOffsets[end] - bOffsets[end - 1] == strideB;
         ++end) {
    }
    const int64_t count = int64_t(end - first);
    std::string batchArgument;
    if (count > 1)
      batchArgument = "dlc::cuda::GemmBatch{" + std::to_string(count) + ", " +
                      std::to_string(strideA) + ", " + std::to_string(strideB) + ", " +
                      std::to_string(m * n) + "}";
    sgemmCall(e, false, false, m, n, k, 1.0f,
              e.ptr(matmul.getLhs()) + " + " + std::to_string(aOffsets[first]), k,
              e.ptr(matmul.getRhs()) + " + " + std::to_string(bOffsets[first]), n,
              e.ptr(matmul.getOutput()) + " + " + std::to_string(first * m * n), n, batchArgument);
  }
  return success();
}

// Det: one thread per matrix, LU with partial pivoting in double as the CPU kernel does it.
// Each thread factors a copy of its matrix in the workspace (one per matrix), element (r, c)
// of matrix t at (r * m + c) * count + t so that neighbouring threads touch neighbouring
// doubles.
LogicalResult emitDet(Operation *op, KernelEmitter &e) {
  auto det = cast<DetOp>(op);
  const int64_t m = tensorType(det.getInput()).getShape().back();
  const int64_t count = tensorType(det.getOutput()).getNumElements();
  auto lu = [&](const std::string &row, const std::string &column) {
    return "lu[(" + row + " * " + str(m) + " + " + column + ") * " + str(count) + " + i]";
  };
  const std::string upTo = " < " + str(m) + "; ++";
  std::string body =
      threadIndex(count) + "  double *lu = reinterpret_cast<double *>(workspace);\n" +
      "  for (int64_t k = 0; k < " + str(m * m) + "; ++k)\n    lu[k * " + str(count) +
      " + i] = x[i * " + str(m * m) + " + k];\n  double det = 1.0;\n" +
      "  for (int64_t col = 0; col" + upTo + "col) {\n    int64_t pivot = col;\n" +
      "    for (int64_t r = col + 1; r" + upTo + "r)\n      if (fabs(" + lu("r", "col") +
      ") > fabs(" + lu("pivot", "col") + "))\n        pivot = r;\n    if (pivot != col) {\n" +
      "      for (int64_t c = 0; c" + upTo + "c) {\n        const double t = " + lu("col", "c") +
      ";\n        " + lu("col", "c") + " = " + lu("pivot", "c") + ";\n        " + lu("pivot", "c") +
      " = t;\n      }\n      det = -det;\n    }\n    det *= " + lu("col", "col") +
      ";\n    if (det == 0.0)\n      break;\n" + "    for (int64_t r = col + 1; r" + upTo +
      "r) {\n      const double factor = " + lu("r", "col") + " / " + lu("col", "col") +
      ";\n      for (int64_t c = col + 1; c" + upTo + "c)\n        " + lu("r", "c") +
      " -= factor * " + lu("col", "c") + ";\n    }\n  }\n  y[i] = float(det);\n";
  launchKernel(e, "const float *x, float *workspace, float *y", body, count,
               e.ptr(det.getInput()) + ", " + e.workspace(op) + ", " + e.ptr(det.getOutput()));
  return success();
}

} // namespace

void addCudaEmitters(EmitterTable &cudaTable) {
  // An op with an empty result launches nothing (a grid of no blocks is a launch error).
  EmitterTable table;
  // Every elementwise op reaches its emitter, which names the kinds not built yet.
  for (const std::string &name : opsOfFamily(OpFamily::Unary))
    table[name] = emitUnary;
  for (const std::string &name : opsOfFamily(OpFamily::Binary))
    table[name] = emitBinary;
  table.forOp<GemmOp>() = emitGemm;
  table.forOp<MatMulOp>() = emitMatMul;
  table.forOp<DetOp>() = emitDet;
  table.forOp<FusedElementwiseOp>() = emitFusedElementwise;
  table.forOp<ClipOp>() = [](Operation *op, KernelEmitter &e) {
    auto clip = cast<ClipOp>(op);
    return emitMap(op, e,
                   clipExpression(clip.getMin().convertToFloat(), clip.getMax().convertToFloat()));
  };
  table.forOp<LeakyReluOp>() = [](Operation *op, KernelEmitter &e) {
    return emitMap(op, e, leakyReluExpression(cast<LeakyReluOp>(op).getAlpha().convertToFloat()));
  };
  table.forOp<TransposeOp>() = emitTranspose;
  table.forOp<BroadcastOp>() = [](Operation *op, KernelEmitter &e) {
    return emitGather(op, e,
                      broadcastStrides(tensorType(op->getOperand(0)).getShape(),
                                       tensorType(op->getResult(0)).getShape()),
                      0);
  };
  table.forOp<WhereOp>() = [](Operation *op, KernelEmitter &e) {
    if (cType(tensorType(op->getResult(0)).getElementType()).empty())
      return noKernelFor(op, "Where");
    return emitBroadcastMap(op, e, "a ? b : c");
  };
  // A reshape the planner could not make a view of (its input is also an output, or a
  // weight): the same bytes, copied.
  table.forOp<ReshapeOp>() = [](Operation *op, KernelEmitter &e) {
    copyInputToResult(e, op->getOperand(0), op->getResult(0));
    return success();
  };
  table.forOp<SliceOp>() = emitSlice;
  table.forOp<ConcatOp>() = emitConcat;
  table.forOp<SoftmaxOp>() = emitSoftmax;
  cudagen::addCastEmitters(table);
  cudagen::addIndexingEmitters(table);
  cudagen::addWindowEmitters(table);
  cudagen::addTrainingEmitters(table);
  // The mean over every spatial dim.
  table.forOp<GlobalAvgPoolOp>() = [](Operation *op, KernelEmitter &e) {
    int64_t rank = tensorType(op->getOperand(0)).getRank();
    return emitReduction(op, e, "Mean", llvm::to_vector(llvm::seq<int64_t>(2, rank)));
  };
  for (const std::string &name : opsOfFamily(OpFamily::Reduce))
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
