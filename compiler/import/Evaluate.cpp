#include "compiler/import/Evaluate.h"
#include "compiler/import/ImportContext.h"
#include "dialects/DlcDialect.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/TypeSwitch.h"

#include <type_traits>

using namespace mlir;

namespace dlc {
namespace {

RankedTensorType typeOf(Value v) { return cast<RankedTensorType>(v.getType()); }
int64_t elementSize(Value v) { return elementBytes(typeOf(v).getElementType()); }

// Each evaluated value's bytes. A buffer's data stays where it is when the map grows (the
// vectors move, their storage does not).
class Buffers {
public:
  const char *in(Value v) { return values[v].data(); }
  // A zeroed buffer for `v`.
  char *out(Value v) {
    std::vector<char> &bytes = values[v];
    bytes.assign(tensorBytes(v.getType()), 0);
    return bytes.data();
  }
  std::vector<char> take(Value v) { return std::move(values[v]); }
  bool has(Value v) const { return values.count(v) != 0; }
  void set(Value v, std::vector<char> bytes) { values[v] = std::move(bytes); }

private:
  llvm::DenseMap<Value, std::vector<char>> values;
};

// What an evaluator reports: done, not evaluable here (the op stays a run-time op), or bad
// data (an error on the node).
struct Outcome {
  bool done = false;
  std::string error;
};
Outcome done() { return {true, ""}; }
Outcome skip() { return {false, ""}; }

// Calls f with a null pointer of the C++ type of `element` (the kernels' instantiations).
template <typename F> Outcome withNumericType(Type element, F &&f) {
  if (element.isF32())
    return f((float *)nullptr);
  if (element.isF64())
    return f((double *)nullptr);
  if (element.isSignlessInteger(64))
    return f((int64_t *)nullptr);
  if (element.isSignlessInteger(32))
    return f((int32_t *)nullptr);
  if (element.isSignlessInteger(8))
    return f((int8_t *)nullptr);
  if (element.isSignlessInteger(16))
    return f((int16_t *)nullptr);
  // Bools are bytes of 0 or 1: the bitwise kernels on them are the logical ops.
  if (element.isInteger(1) || element.isUnsignedInteger(8))
    return f((uint8_t *)nullptr);
  if (element.isUnsignedInteger(16))
    return f((uint16_t *)nullptr);
  if (element.isUnsignedInteger(32))
    return f((uint32_t *)nullptr);
  if (element.isUnsignedInteger(64))
    return f((uint64_t *)nullptr);
  return skip();
}

Outcome evaluateUnary(Operation *op, Buffers &b) {
  auto kind = unaryKindNamed(cast<KernelKindInterface>(op).getKernelKind());
  Value x = op->getOperand(0), y = op->getResult(0);
  int64_t n = typeOf(y).getNumElements();
  return withNumericType(typeOf(x).getElementType(), [&](auto *type) {
    using T = std::remove_pointer_t<decltype(type)>;
    if constexpr (std::is_floating_point_v<T>) {
      if (!kind)
        return skip();
      const T *in = reinterpret_cast<const T *>(b.in(x));
      rt::unaryOn<T>(rt::CpuIsa::Baseline, *kind, in, reinterpret_cast<T *>(b.out(y)), n);
      return done();
    }
    return skip();
  });
}

Outcome evaluateBinary(Operation *op, Buffers &b) {
  StringRef kindName = cast<KernelKindInterface>(op).getKernelKind();
  Value lhs = op->getOperand(0), rhs = op->getOperand(1), y = op->getResult(0);
  auto outShape = typeOf(y).getShape();
  SmallVector<int64_t> lhsStrides = broadcastStrides(typeOf(lhs).getShape(), outShape),
                       rhsStrides = broadcastStrides(typeOf(rhs).getShape(), outShape);
  return withNumericType(typeOf(lhs).getElementType(), [&](auto *type) {
    using T = std::remove_pointer_t<decltype(type)>;
    const T *a = reinterpret_cast<const T *>(b.in(lhs)), *c = reinterpret_cast<const T *>(b.in(rhs));
    if (auto compare = compareKindNamed(kindName)) {
      rt::compare<T>(*compare, a, lhsStrides.data(), c, rhsStrides.data(),
                     reinterpret_cast<uint8_t *>(b.out(y)), outShape.data(), outShape.size());
      return done();
    }
    auto kind = binaryKindNamed(kindName);
    if (!kind)
      return skip();
    rt::binary<T>(*kind, a, lhsStrides.data(), c, rhsStrides.data(),
                  reinterpret_cast<T *>(b.out(y)), outShape.data(), outShape.size());
    return done();
  });
}

Outcome evaluateWhere(WhereOp op, Buffers &b) {
  auto outShape = typeOf(op.getOutput()).getShape();
  auto strides = [&](Value v) { return broadcastStrides(typeOf(v).getShape(), outShape); };
  SmallVector<int64_t> condition = strides(op.getCondition()), lhs = strides(op.getLhs()),
                       rhs = strides(op.getRhs());
  const char *c = b.in(op.getCondition()), *l = b.in(op.getLhs()), *r = b.in(op.getRhs());
  rt::select(reinterpret_cast<const uint8_t *>(c), condition.data(), l, lhs.data(), r, rhs.data(),
             b.out(op.getOutput()), outShape.data(), outShape.size(), elementSize(op.getOutput()));
  return done();
}

Outcome evaluateBroadcast(BroadcastOp op, Buffers &b) {
  auto outShape = typeOf(op.getOutput()).getShape();
  SmallVector<int64_t> strides = broadcastStrides(typeOf(op.getInput()).getShape(), outShape);
  const char *x = b.in(op.getInput());
  rt::broadcastBytes(x, strides.data(), b.out(op.getOutput()), outShape.data(), outShape.size(),
                     elementSize(op.getOutput()));
  return done();
}

Outcome evaluateCast(CastOp op, Buffers &b) {
  int32_t from = onnxDtypeOf(typeOf(op.getInput()).getElementType()),
          to = onnxDtypeOf(typeOf(op.getOutput()).getElementType());
  if (!from || !to)
    return skip();
  const char *x = b.in(op.getInput());
  rt::cast(dlc_dtype(from), x, dlc_dtype(to), b.out(op.getOutput()),
           typeOf(op.getOutput()).getNumElements(), op.getSaturate(),
           roundingNamed(op.getRoundMode()));
  return done();
}

Outcome evaluateReshape(ReshapeOp op, Buffers &b) {
  const char *x = b.in(op.getInput());
  b.set(op.getOutput(), std::vector<char>(x, x + tensorBytes(op.getOutput().getType())));
  return done();
}

Outcome evaluateTranspose(TransposeOp op, Buffers &b) {
  auto shape = typeOf(op.getInput()).getShape();
  const char *x = b.in(op.getInput());
  rt::transpose(x, b.out(op.getOutput()), elementSize(op.getInput()), shape.data(),
                op.getPerm().data(), shape.size());
  return done();
}

Outcome evaluateSlice(SliceOp op, Buffers &b) {
  auto in = typeOf(op.getInput()).getShape(), out = typeOf(op.getOutput()).getShape();
  const char *x = b.in(op.getInput());
  char *y = b.out(op.getOutput());
  if (typeOf(op.getOutput()).getNumElements() != 0)
    rt::slice(x, y, elementSize(op.getInput()), in.data(), op.getStarts().data(),
              op.getSteps().data(), out.data(), in.size());
  return done();
}

Outcome evaluateConcat(ConcatOp op, Buffers &b) {
  auto shape = typeOf(op.getOutput()).getShape();
  int64_t axis = op.getAxis();
  auto [outer, inner] = outerInner(shape, axis);
  std::vector<const void *> inputs;
  SmallVector<int64_t> sizes;
  for (Value in : op.getInputs()) {
    inputs.push_back(b.in(in));
    sizes.push_back(typeOf(in).getDimSize(axis));
  }
  rt::concat(inputs.data(), sizes.data(), sizes.size(), b.out(op.getOutput()), outer, inner,
             elementSize(op.getOutput()));
  return done();
}

Outcome evaluateGather(GatherOp op, Buffers &b) {
  auto shape = typeOf(op.getInput()).getShape();
  int64_t axis = op.getAxis();
  auto [outer, inner] = outerInner(shape, axis);
  int64_t count = typeOf(op.getIndices()).getNumElements();
  const char *x = b.in(op.getInput()), *indices = b.in(op.getIndices());
  char *y = b.out(op.getOutput());
  bool ok = typeOf(op.getIndices()).getElementType().isInteger(64)
                ? rt::gather(x, reinterpret_cast<const int64_t *>(indices), count, y, outer,
                             shape[axis], inner, elementSize(op.getInput()))
                : rt::gather(x, reinterpret_cast<const int32_t *>(indices), count, y, outer,
                             shape[axis], inner, elementSize(op.getInput()));
  return ok ? done() : Outcome{false, "index out of range for axis " + std::to_string(axis) +
                                          " of size " + std::to_string(shape[axis])};
}

Outcome evaluate(Operation *op, Buffers &b) {
  if (op->hasTrait<UnaryKindOp>())
    return evaluateUnary(op, b);
  if (op->hasTrait<BinaryKindOp>())
    return evaluateBinary(op, b);
  return llvm::TypeSwitch<Operation *, Outcome>(op)
      .Case([&](WhereOp o) { return evaluateWhere(o, b); })
      .Case([&](BroadcastOp o) { return evaluateBroadcast(o, b); })
      .Case([&](CastOp o) { return evaluateCast(o, b); })
      .Case([&](ReshapeOp o) { return evaluateReshape(o, b); })
      .Case([&](TransposeOp o) { return evaluateTranspose(o, b); })
      .Case([&](SliceOp o) { return evaluateSlice(o, b); })
      .Case([&](ConcatOp o) { return evaluateConcat(o, b); })
      .Case([&](GatherOp o) { return evaluateGather(o, b); })
      .Default([](Operation *) { return skip(); });
}

bool isFloat(Value v) { return isa<FloatType>(typeOf(v).getElementType()); }

} // namespace

Evaluation evaluateOps(ArrayRef<Operation *> ops, ArrayRef<Value> results) {
  Buffers buffers;
  for (Operation *op : ops) {
    if (auto constant = dyn_cast<ConstantOp>(op)) {
      buffers.set(constant.getResult(), constant.getBytes());
      continue;
    }
    int64_t operandBytes = 0;
    for (Value operand : op->getOperands()) {
      if (!buffers.has(operand)) {
        auto constant = operand.getDefiningOp<ConstantOp>();
        if (!constant)
          return {};
        buffers.set(operand, constant.getBytes());
      }
      operandBytes += tensorBytes(operand.getType());
    }
    for (Value result : op->getResults()) {
      int64_t bytes = tensorBytes(result.getType());
      if (bytes > kMaxEvaluatedBytes ||
          (isFloat(result) && bytes > operandBytes && bytes > kMaxGrownFloatBytes))
        return {};
    }
    Outcome outcome = evaluate(op, buffers);
    if (!outcome.error.empty())
      return {{}, outcome.error};
    if (!outcome.done)
      return {};
  }
  Evaluation evaluation;
  for (Value result : results) {
    if (auto constant = result.getDefiningOp<ConstantOp>(); constant && !buffers.has(result))
      buffers.set(result, constant.getBytes());
    if (!buffers.has(result))
      return {};
    evaluation.results.push_back(buffers.take(result));
  }
  return evaluation;
}

} // namespace dlc
