#include "compiler/codegen/Emitter.h"
#include "dialects/DlcDialect.h"

using namespace mlir;

namespace dlc {

// Numpy broadcasting aligns trailing dims, and a size-1 (or missing) dim repeats: stride 0.
SmallVector<int64_t> broadcastStrides(ArrayRef<int64_t> shape, ArrayRef<int64_t> outShape) {
  SmallVector<int64_t> own = stridesOf(shape), strides(outShape.size(), 0);
  size_t offset = outShape.size() - shape.size();
  for (size_t i = 0; i < shape.size(); ++i)
    strides[i + offset] = shape[i] == 1 ? 0 : own[i];
  return strides;
}

namespace {

int64_t numElements(Value v) { return tensorType(v).getNumElements(); }

LogicalResult emitUnary(Operation *op, KernelEmitter &e) {
  auto kind = cast<KernelKindInterface>(op).getKernelKind();
  e.line("dlc::rt::unary(dlc::rt::UnaryKind::" + kind.str() + ", " + e.ptr(op->getOperand(0)) +
         ", " + e.ptr(op->getResult(0)) + ", " + std::to_string(numElements(op->getResult(0))) +
         ");");
  return success();
}

// Operand pointers with their broadcast strides, then the output, its shape and rank: the
// argument tail every broadcasting kernel shares.
std::string broadcastArguments(Operation *op, KernelEmitter &e) {
  auto outShape = tensorType(op->getResult(0)).getShape();
  std::string args;
  for (Value operand : op->getOperands())
    args += e.ptr(operand) + ", " +
            e.array(broadcastStrides(tensorType(operand).getShape(), outShape)) + ", ";
  return args + e.ptr(op->getResult(0)) + ", " + e.array(outShape) + ", " +
         std::to_string(outShape.size());
}

// Binary ops (dlc::rt::binary) and comparisons (dlc::rt::compare, a bool result).
LogicalResult emitBinary(Operation *op, KernelEmitter &e) {
  Type element = tensorType(op->getOperand(0)).getElementType();
  bool comparison = isa<EqualOp, LessOp, LessEqualOp, GreaterOp, GreaterEqualOp>(op);
  e.line(std::string("dlc::rt::") + (comparison ? "compare<" : "binary<") + cType(element) +
         ">(dlc::rt::" + (comparison ? "CompareKind::" : "BinaryKind::") +
         cast<KernelKindInterface>(op).getKernelKind().str() + ", " +
         broadcastArguments(op, e) + ");");
  return success();
}

// A chain step as a constant expression of the runtime's step constructors.
std::string fusedStepLiteral(const DecodedFusedStep &decoded) {
  const dlc::rt::FusedStep &step = decoded.step;
  std::string a = std::to_string(step.a);
  switch (step.kind) {
  case dlc::rt::FusedStepKind::Unary:
    return "dlc::rt::unaryStep(dlc::rt::UnaryKind::" + decoded.kind.str() + ", " + a + ")";
  case dlc::rt::FusedStepKind::Binary:
    return "dlc::rt::binaryStep(dlc::rt::BinaryKind::" + decoded.kind.str() + ", " + a + ", " +
           std::to_string(step.b) + ")";
  case dlc::rt::FusedStepKind::Clip:
    return "dlc::rt::clipStep(" + a + ", " + floatLiteral(step.p0) + ", " +
           floatLiteral(step.p1) + ")";
  case dlc::rt::FusedStepKind::LeakyRelu:
    return "dlc::rt::leakyReluStep(" + a + ", " + floatLiteral(step.p0) + ")";
  }
  return "";
}

LogicalResult emitFusedElementwise(Operation *op, KernelEmitter &e) {
  auto fused = cast<FusedElementwiseOp>(op);
  FailureOr<SmallVector<DecodedFusedStep>> steps = decodeFusedSteps(fused);
  if (failed(steps))
    return failure();
  std::vector<std::string> stepLiterals, inputLiterals;
  for (const DecodedFusedStep &step : *steps)
    stepLiterals.push_back(fusedStepLiteral(step));
  auto outShape = tensorType(fused.getOutput()).getShape();
  for (Value input : fused.getInputs()) {
    auto [repeat, period] = *fusedInputIndexing(tensorType(input).getShape(), outShape);
    inputLiterals.push_back("{" + e.ptr(input) + ", " + std::to_string(repeat) + ", " +
                            std::to_string(period) + "}");
  }
  std::string stepArray = e.arrayOf("dlc::rt::FusedStep", stepLiterals, true);
  std::string inputArray = e.arrayOf("dlc::rt::FusedInput", inputLiterals, false);
  e.line("dlc::rt::fusedElementwiseF32(" + inputArray + ", " +
         std::to_string(inputLiterals.size()) + ", " + stepArray + ", " +
         std::to_string(stepLiterals.size()) + ", " + e.ptr(fused.getOutput()) + ", " +
         std::to_string(numElements(fused.getOutput())) + ");");
  return success();
}

} // namespace

ArrayRef<StringRef> unaryOpNames() {
  static const StringRef names[] = {
      "dlc.relu",  "dlc.sigmoid", "dlc.tanh",  "dlc.exp",        "dlc.log",   "dlc.sqrt",
      "dlc.neg",   "dlc.abs",     "dlc.erf",   "dlc.reciprocal", "dlc.floor", "dlc.ceil",
      "dlc.softplus", "dlc.sin",  "dlc.cos",   "dlc.tan",        "dlc.asin",  "dlc.acos",
      "dlc.atan",  "dlc.sinh",    "dlc.cosh",  "dlc.asinh",      "dlc.acosh", "dlc.atanh",
      "dlc.softsign", "dlc.hard_swish", "dlc.sign", "dlc.round"};
  return names;
}

ArrayRef<StringRef> binaryOpNames() {
  static const StringRef names[] = {"dlc.add", "dlc.sub",         "dlc.mul",        "dlc.div",
                                    "dlc.pow", "dlc.max",         "dlc.min",        "dlc.and",
                                    "dlc.or",  "dlc.xor",         "dlc.shift_left", "dlc.shift_right",
                                    "dlc.mod", "dlc.fmod",        "dlc.equal",      "dlc.less",
                                    "dlc.less_equal", "dlc.greater", "dlc.greater_equal"};
  return names;
}

void addElementwiseEmitters(EmitterTable &table) {
  table["dlc.fused_elementwise"] = emitFusedElementwise;
  for (StringRef name : unaryOpNames())
    table[name.str()] = emitUnary;
  for (StringRef name : binaryOpNames())
    table[name.str()] = emitBinary;
  table["dlc.where"] = [](Operation *op, KernelEmitter &e) {
    e.line("dlc::rt::select(" + broadcastArguments(op, e) + ", " +
           std::to_string(elementBytes(tensorType(op->getResult(0)).getElementType())) + ");");
    return success();
  };
  table["dlc.cast"] = [](Operation *op, KernelEmitter &e) {
    auto castOp = cast<CastOp>(op);
    e.line("dlc::rt::cast(" + dtypeEnum(tensorType(castOp.getInput()).getElementType()) + ", " +
           e.ptr(castOp.getInput()) + ", " +
           dtypeEnum(tensorType(castOp.getOutput()).getElementType()) + ", " +
           e.ptr(castOp.getOutput()) + ", " + std::to_string(numElements(castOp.getOutput())) +
           ", " + (castOp.getSaturate() ? "true" : "false") + ", " +
           roundingEnumerator(castOp.getRoundMode()) + ");");
    return success();
  };
  table["dlc.clip"] = [](Operation *op, KernelEmitter &e) {
    auto clip = cast<ClipOp>(op);
    e.line("dlc::rt::clipF32(" + e.ptr(clip.getInput()) + ", " + e.ptr(clip.getOutput()) + ", " +
           std::to_string(numElements(clip.getOutput())) + ", " +
           floatLiteral(clip.getMin().convertToFloat()) + ", " +
           floatLiteral(clip.getMax().convertToFloat()) + ");");
    return success();
  };
  table["dlc.unary_grad"] = [](Operation *op, KernelEmitter &e) {
    auto grad = cast<UnaryGradOp>(op);
    e.line("dlc::rt::unaryGradF32(dlc::rt::UnaryGradKind::" + grad.getKind().str() + ", " +
           e.ptr(grad.getGrad()) + ", " + e.ptr(grad.getSaved()) + ", " + e.ptr(grad.getOutput()) +
           ", " + std::to_string(numElements(grad.getOutput())) + ");");
    return success();
  };
  table["dlc.clip_grad"] = [](Operation *op, KernelEmitter &e) {
    auto grad = cast<ClipGradOp>(op);
    e.line("dlc::rt::clipGradF32(" + e.ptr(grad.getGrad()) + ", " + e.ptr(grad.getInput()) +
           ", " + e.ptr(grad.getOutput()) + ", " + std::to_string(numElements(grad.getOutput())) +
           ", " + floatLiteral(grad.getMin().convertToFloat()) + ", " +
           floatLiteral(grad.getMax().convertToFloat()) + ");");
    return success();
  };
  table["dlc.leaky_relu_grad"] = [](Operation *op, KernelEmitter &e) {
    auto grad = cast<LeakyReluGradOp>(op);
    e.line("dlc::rt::leakyReluGradF32(" + e.ptr(grad.getGrad()) + ", " + e.ptr(grad.getInput()) +
           ", " + e.ptr(grad.getOutput()) + ", " + std::to_string(numElements(grad.getOutput())) +
           ", " + floatLiteral(grad.getAlpha().convertToFloat()) + ");");
    return success();
  };
  // Only in a train step, whose schedule has the step number `step`.
  table["dlc.dropout_mask"] = [](Operation *op, KernelEmitter &e) {
    auto mask = cast<DropoutMaskOp>(op);
    e.line("dlc::rt::dropoutMaskF32(" + std::to_string(uint64_t(mask.getSeed())) +
           "ull, step, " + floatLiteral(mask.getRatio().convertToFloat()) + ", " +
           e.ptr(mask.getOutput()) + ", " + std::to_string(numElements(mask.getOutput())) + ");");
    return success();
  };
  table["dlc.leaky_relu"] = [](Operation *op, KernelEmitter &e) {
    auto relu = cast<LeakyReluOp>(op);
    e.line("dlc::rt::leakyReluF32(" + e.ptr(relu.getInput()) + ", " + e.ptr(relu.getOutput()) +
           ", " + std::to_string(numElements(relu.getOutput())) + ", " +
           floatLiteral(relu.getAlpha().convertToFloat()) + ");");
    return success();
  };
}

} // namespace dlc
