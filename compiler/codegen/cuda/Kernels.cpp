// The CUDA target's op emitters: each op becomes a generated kernel with its shapes and
// strides as constants (one thread per output element), or a cuBLAS call through the CUDA
// runtime. Float32 only so far; other ops and types fail with "no CUDA kernel".
#include "compiler/codegen/Emitter.h"
#include "dialects/DlcDialect.h"

using namespace mlir;

namespace dlc {
namespace {

constexpr int64_t kThreadsPerBlock = 256;

// Device expressions of the float unary kinds, in `v`: the CPU kernels' definitions in CUDA's
// float math functions (erff, expf, ...), which the host emulation takes from <math.h>.
std::optional<std::string> unaryExpression(StringRef kind) {
  static const std::map<std::string, std::string> expressions = {
      {"Relu", "v < 0.0f ? 0.0f : v"},
      {"Sigmoid", "1.0f / (1.0f + expf(-v))"},
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
      {"Sign", "float((v > 0.0f) - (v < 0.0f))"},
      {"Round", "nearbyintf(v)"},
  };
  auto it = expressions.find(kind.str());
  if (it == expressions.end())
    return std::nullopt;
  return it->second;
}

std::optional<std::string> binaryExpression(StringRef kind) {
  static const std::map<std::string, std::string> expressions = {
      {"Add", "a + b"},      {"Sub", "a - b"},       {"Mul", "a * b"},       {"Div", "a / b"},
      {"Pow", "powf(a, b)"}, {"Max", "fmaxf(a, b)"}, {"Min", "fminf(a, b)"},
  };
  auto it = expressions.find(kind.str());
  if (it == expressions.end())
    return std::nullopt;
  return it->second;
}

bool isF32(Value v) { return tensorType(v).getElementType().isF32(); }

LogicalResult noKernel(Operation *op, const std::string &why) {
  return op->emitError("no CUDA kernel for op ") << op->getName() << ": " << why;
}

std::string blocksFor(int64_t elements) {
  return std::to_string((elements + kThreadsPerBlock - 1) / kThreadsPerBlock);
}

// Launches `kernel` over `elements` threads and checks the launch.
void launch(KernelEmitter &e, const std::string &kernel, int64_t elements,
            const std::string &args) {
  e.line("DLC_LAUNCH(" + kernel + ", " + blocksFor(elements) + ", " +
         std::to_string(kThreadsPerBlock) + ", context, " + args + ");");
  e.line("if (const char *error = dlc::cuda::launched(context, \"" + kernel + " (" + e.currentOp +
         ")\"))");
  e.line("  return error;");
}

// Statements setting `offset<i>` for each operand from the flat output index `i`: the
// broadcast strides of each operand over the output's dims, as constants. Dims outside the
// outermost one some operand walks need no division.
std::string broadcastOffsets(ArrayRef<SmallVector<int64_t>> strides, ArrayRef<int64_t> outShape) {
  std::string code;
  for (size_t o = 0; o < strides.size(); ++o)
    code += "  int64_t offset" + std::to_string(o) + " = 0;\n";
  int64_t outermost = int64_t(outShape.size());
  for (int64_t d = 0; d < int64_t(outShape.size()) && outermost == int64_t(outShape.size()); ++d)
    for (const SmallVector<int64_t> &operand : strides)
      if (operand[d])
        outermost = d;
  if (outermost == int64_t(outShape.size()))
    return code;
  code += "  int64_t rest = i;\n";
  for (int64_t d = int64_t(outShape.size()) - 1; d >= outermost; --d) {
    bool walked = llvm::any_of(strides, [&](const SmallVector<int64_t> &s) { return s[d] != 0; });
    if (!walked) {
      code += "  rest /= " + std::to_string(outShape[d]) + ";\n";
      continue;
    }
    code += "  {\n    const int64_t index = rest % " + std::to_string(outShape[d]) + ";\n";
    if (d > outermost)
      code += "    rest /= " + std::to_string(outShape[d]) + ";\n";
    for (size_t o = 0; o < strides.size(); ++o)
      if (strides[o][d])
        code += "    offset" + std::to_string(o) + " += index * " + std::to_string(strides[o][d]) +
                ";\n";
    code += "  }\n";
  }
  return code;
}

// The fused activation of a conv or gemm applied to `v`, as a device expression.
std::string activationExpression(const dlc::rt::Epilogue &epilogue) {
  switch (epilogue.activation) {
  case dlc::rt::Activation::None:
    return "v";
  case dlc::rt::Activation::Relu:
    return "v < 0.0f ? 0.0f : v";
  case dlc::rt::Activation::Clip:
    return "fminf(fmaxf(v, " + floatLiteral(epilogue.min) + "), " + floatLiteral(epilogue.max) +
           ")";
  case dlc::rt::Activation::LeakyRelu:
    return "v < 0.0f ? " + floatLiteral(epilogue.alpha) + " * v : v";
  case dlc::rt::Activation::Sigmoid:
    return "1.0f / (1.0f + expf(-v))";
  case dlc::rt::Activation::Tanh:
    return "tanhf(v)";
  }
  return "v";
}

LogicalResult emitUnary(Operation *op, KernelEmitter &e) {
  StringRef kind = cast<KernelKindInterface>(op).getKernelKind();
  std::optional<std::string> expression = unaryExpression(kind);
  if (!isF32(op->getResult(0)) || !expression)
    return noKernel(op, "float32 " + kind.str() + " not built yet");
  int64_t n = tensorType(op->getResult(0)).getNumElements();
  // Not __restrict__: the planner may have the result overwrite the input.
  std::string kernel =
      e.defineKernel("const float *x, float *y",
                     "  const int64_t i = DLC_INDEX;\n  if (i >= " + std::to_string(n) +
                         ")\n    return;\n  const float v = x[i];\n"
                         "  y[i] = " +
                         *expression + ";\n");
  launch(e, kernel, n, e.ptr(op->getOperand(0)) + ", " + e.ptr(op->getResult(0)));
  return success();
}

LogicalResult emitBinary(Operation *op, KernelEmitter &e) {
  StringRef kind = cast<KernelKindInterface>(op).getKernelKind();
  std::optional<std::string> expression = binaryExpression(kind);
  if (!isF32(op->getResult(0)) || !isF32(op->getOperand(0)) || !expression)
    return noKernel(op, "float32 " + kind.str() + " not built yet");
  auto outShape = tensorType(op->getResult(0)).getShape();
  int64_t n = tensorType(op->getResult(0)).getNumElements();
  SmallVector<SmallVector<int64_t>> strides;
  for (Value operand : op->getOperands())
    strides.push_back(broadcastStrides(tensorType(operand).getShape(), outShape));
  std::string kernel = e.defineKernel(
      "const float *x0, const float *x1, float *y",
      "  const int64_t i = DLC_INDEX;\n  if (i >= " + std::to_string(n) + ")\n    return;\n" +
          broadcastOffsets(strides, outShape) +
          "  const float a = x0[offset0], b = x1[offset1];\n  y[i] = " + *expression + ";\n");
  launch(e, kernel, n,
         e.ptr(op->getOperand(0)) + ", " + e.ptr(op->getOperand(1)) + ", " +
             e.ptr(op->getResult(0)));
  return success();
}

// Y = alpha * op(A) op(B) by cuBLAS, then one kernel adds beta * C (broadcast) and applies the
// fused activation.
LogicalResult emitGemm(Operation *op, KernelEmitter &e) {
  auto gemm = cast<GemmOp>(op);
  if (!isF32(gemm.getOutput()))
    return noKernel(op, "only float32 Gemm is built");
  auto a = tensorType(gemm.getA()).getShape(), b = tensorType(gemm.getB()).getShape();
  auto out = tensorType(gemm.getOutput()).getShape();
  int64_t k = gemm.getTransA() ? a[0] : a[1];
  e.line(std::string("if (const char *error = dlc::cuda::sgemm(context, ") +
         (gemm.getTransA() ? "true" : "false") + ", " + (gemm.getTransB() ? "true" : "false") +
         ", " + std::to_string(out[0]) + ", " + std::to_string(out[1]) + ", " + std::to_string(k) +
         ", " + floatLiteral(gemm.getAlpha().convertToFloat()) + ", " + e.ptr(gemm.getA()) + ", " +
         std::to_string(a[1]) + ", " + e.ptr(gemm.getB()) + ", " + std::to_string(b[1]) +
         ", 0.0f, " + e.ptr(gemm.getOutput()) + ", " + std::to_string(out[1]) + "))");
  e.line("  return error;");
  float beta = gemm.getBeta().convertToFloat();
  bool addC = gemm.getC() && beta != 0.0f;
  dlc::rt::Epilogue epilogue = epilogueOf(op);
  if (!addC && epilogue.activation == dlc::rt::Activation::None)
    return success();
  int64_t n = out[0] * out[1];
  std::string body =
      "  const int64_t i = DLC_INDEX;\n  if (i >= " + std::to_string(n) + ")\n    return;\n";
  if (addC) {
    body += broadcastOffsets({broadcastStrides(tensorType(gemm.getC()).getShape(), out)}, out);
    body += "  float v = y[i] + " + floatLiteral(beta) + " * c[offset0];\n";
  } else {
    body += "  float v = y[i];\n";
  }
  body += "  y[i] = " + activationExpression(epilogue) + ";\n";
  std::string kernel = e.defineKernel("const float *c, float *y", body);
  launch(e, kernel, n,
         (addC ? e.ptr(gemm.getC()) : std::string("nullptr")) + ", " + e.ptr(gemm.getOutput()));
  return success();
}

// Batched products by one cuBLAS call per batch entry (operands broadcast over batch dims).
LogicalResult emitMatMul(Operation *op, KernelEmitter &e) {
  auto matmul = cast<MatMulOp>(op);
  if (!isF32(matmul.getOutput()))
    return noKernel(op, "only float32 MatMul is built");
  auto a = tensorType(matmul.getLhs()).getShape(), b = tensorType(matmul.getRhs()).getShape();
  auto out = tensorType(matmul.getOutput()).getShape();
  int64_t m = a[a.size() - 2], k = a.back(), n = b.back();
  auto batch = out.drop_back(2);
  SmallVector<int64_t> aStrides = broadcastStrides(a.drop_back(2), batch);
  SmallVector<int64_t> bStrides = broadcastStrides(b.drop_back(2), batch);
  int64_t count = product(batch);
  for (int64_t flat = 0; flat < count; ++flat) {
    int64_t rest = flat, aOffset = 0, bOffset = 0;
    for (int64_t d = int64_t(batch.size()) - 1; d >= 0; --d) {
      aOffset += rest % batch[d] * aStrides[d];
      bOffset += rest % batch[d] * bStrides[d];
      rest /= batch[d];
    }
    e.line("if (const char *error = dlc::cuda::sgemm(context, false, false, " + std::to_string(m) +
           ", " + std::to_string(n) + ", " + std::to_string(k) + ", 1.0f, " +
           e.ptr(matmul.getLhs()) + " + " + std::to_string(aOffset * m * k) + ", " +
           std::to_string(k) + ", " + e.ptr(matmul.getRhs()) + " + " +
           std::to_string(bOffset * k * n) + ", " + std::to_string(n) + ", 0.0f, " +
           e.ptr(matmul.getOutput()) + " + " + std::to_string(flat * m * n) + ", " +
           std::to_string(n) + "))");
    e.line("  return error;");
  }
  return success();
}

} // namespace

void addCudaEmitters(EmitterTable &table) {
  // Every elementwise op reaches its emitter, which names the kinds not built yet.
  for (StringRef name : unaryOpNames())
    table[name.str()] = emitUnary;
  for (StringRef name : binaryOpNames())
    table[name.str()] = emitBinary;
  table["dlc.gemm"] = emitGemm;
  table["dlc.matmul"] = emitMatMul;
}

} // namespace dlc
