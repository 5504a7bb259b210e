#include "compiler/codegen/Emitter.h"
#include "dialects/DlcDialect.h"

using namespace mlir;

namespace dlc {

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

} // namespace

namespace {
// The names of Ops that carry Trait.
template <template <typename> class Trait, typename... Ops> std::vector<std::string> namesWith() {
  std::vector<std::string> names;
  ((Ops::template hasTrait<Trait>() ? names.push_back(Ops::getOperationName().str()) : void()),
   ...);
  return names;
}
template <template <typename> class Trait> std::vector<std::string> dialectOpsWith() {
  return namesWith<Trait,
#define GET_OP_LIST
#include "dialects/DlcOps.cpp.inc"
                   >();
}
} // namespace

const std::vector<std::string> &opsOfFamily(OpFamily family) {
  static const std::vector<std::string> unary = dialectOpsWith<UnaryKindOp>(),
                                        binary = dialectOpsWith<BinaryKindOp>(),
                                        reduce = dialectOpsWith<ReduceKindOp>();
  return family == OpFamily::Unary ? unary : family == OpFamily::Binary ? binary : reduce;
}

void addElementwiseEmitters(EmitterTable &table) {
  table.forOp<FusedElementwiseOp>() = emitFusedChain;
  for (const std::string &name : opsOfFamily(OpFamily::Unary))
    table[name] = emitUnary;
  for (const std::string &name : opsOfFamily(OpFamily::Binary))
    table[name] = emitBinary;
  table.forOp<WhereOp>() = [](Operation *op, KernelEmitter &e) {
    e.line("dlc::rt::select(" + broadcastArguments(op, e) + ", " +
           std::to_string(elementBytes(tensorType(op->getResult(0)).getElementType())) + ");");
    return success();
  };
  table.forOp<CastOp>() = [](Operation *op, KernelEmitter &e) {
    auto castOp = cast<CastOp>(op);
    e.line("dlc::rt::cast(" + dtypeEnum(tensorType(castOp.getInput()).getElementType()) + ", " +
           e.ptr(castOp.getInput()) + ", " +
           dtypeEnum(tensorType(castOp.getOutput()).getElementType()) + ", " +
           e.ptr(castOp.getOutput()) + ", " + std::to_string(numElements(castOp.getOutput())) +
           ", " + (castOp.getSaturate() ? "true" : "false") + ", " +
           roundingEnumerator(castOp.getRoundMode()) + ");");
    return success();
  };
  table.forOp<ClipOp>() = [](Operation *op, KernelEmitter &e) {
    auto clip = cast<ClipOp>(op);
    e.line("dlc::rt::clipF32(" + e.ptr(clip.getInput()) + ", " + e.ptr(clip.getOutput()) + ", " +
           std::to_string(numElements(clip.getOutput())) + ", " +
           floatLiteral(clip.getMin().convertToFloat()) + ", " +
           floatLiteral(clip.getMax().convertToFloat()) + ");");
    return success();
  };
  table.forOp<UnaryGradOp>() = [](Operation *op, KernelEmitter &e) {
    auto grad = cast<UnaryGradOp>(op);
    e.line("dlc::rt::unaryGradF32(dlc::rt::UnaryKind::" + grad.getKind().str() + ", " +
           e.ptr(grad.getGrad()) + ", " + e.ptr(grad.getSaved()) + ", " + e.ptr(grad.getOutput()) +
           ", " + std::to_string(numElements(grad.getOutput())) + ");");
    return success();
  };
  table.forOp<ClipGradOp>() = [](Operation *op, KernelEmitter &e) {
    auto grad = cast<ClipGradOp>(op);
    e.line("dlc::rt::clipGradF32(" + e.ptr(grad.getGrad()) + ", " + e.ptr(grad.getInput()) +
           ", " + e.ptr(grad.getOutput()) + ", " + std::to_string(numElements(grad.getOutput())) +
           ", " + floatLiteral(grad.getMin().convertToFloat()) + ", " +
           floatLiteral(grad.getMax().convertToFloat()) + ");");
    return success();
  };
  table.forOp<LeakyReluGradOp>() = [](Operation *op, KernelEmitter &e) {
    auto grad = cast<LeakyReluGradOp>(op);
    e.line("dlc::rt::leakyReluGradF32(" + e.ptr(grad.getGrad()) + ", " + e.ptr(grad.getInput()) +
           ", " + e.ptr(grad.getOutput()) + ", " + std::to_string(numElements(grad.getOutput())) +
           ", " + floatLiteral(grad.getAlpha().convertToFloat()) + ");");
    return success();
  };
  // Only in a train step, whose schedule has the step number `step`.
  table.forOp<DropoutMaskOp>() = [](Operation *op, KernelEmitter &e) {
    auto mask = cast<DropoutMaskOp>(op);
    e.line("dlc::rt::dropoutMaskF32(" + std::to_string(uint64_t(mask.getSeed())) +
           "ull, step, " + floatLiteral(mask.getRatio().convertToFloat()) + ", " +
           e.ptr(mask.getOutput()) + ", " + std::to_string(numElements(mask.getOutput())) + ");");
    return success();
  };
  table.forOp<LeakyReluOp>() = [](Operation *op, KernelEmitter &e) {
    auto relu = cast<LeakyReluOp>(op);
    e.line("dlc::rt::leakyReluF32(" + e.ptr(relu.getInput()) + ", " + e.ptr(relu.getOutput()) +
           ", " + std::to_string(numElements(relu.getOutput())) + ", " +
           floatLiteral(relu.getAlpha().convertToFloat()) + ");");
    return success();
  };
}

} // namespace dlc
