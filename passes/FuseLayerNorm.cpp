#include "dialects/DlcDialect.h"
#include "passes/Passes.h"

namespace dlc {
#define GEN_PASS_DEF_FUSELAYERNORM
#include "passes/Passes.h.inc"
} // namespace dlc

using namespace mlir;

namespace {

// The one op reading `v`, once or more (a Mul of a value by itself), or null.
Operation *soleUser(Value v) {
  Operation *user = nullptr;
  for (Operation *op : v.getUsers()) {
    if (user && op != user)
      return nullptr;
    user = op;
  }
  return user;
}

// The operand of binary `op` other than `v`, if `v` is one of its operands.
Value otherOperand(Operation *op, Value v) {
  if (op->getOperand(0) == v)
    return op->getOperand(1);
  return op->getOperand(1) == v ? op->getOperand(0) : Value();
}

bool isMeanOverLastAxis(dlc::ReduceMeanOp mean, RankedTensorType input) {
  SmallVector<int64_t> kept(input.getShape());
  kept.back() = 1;
  return mean.getAxes() == ArrayRef<int64_t>{input.getRank() - 1} &&
         mean.getType() == input.clone(kept);
}

// A value with the last dim's n elements, as the affine Mul and Add take scale and bias.
bool holdsLastDim(Value v, int64_t n) {
  auto type = cast<RankedTensorType>(v.getType());
  return type.getElementType().isF32() && type.getRank() > 0 && type.getShape().back() == n &&
         type.getNumElements() == n;
}

// The ops of one layer norm in the order they run, from the mean to the last one replaced.
struct LayerNormChain {
  SmallVector<Operation *> ops;
  Value input, scale, bias;
  float epsilon = 0.0f;
};

// The variance's ops from the square of `centered` on, through the standard deviation; the
// square is `square` (Pow 2 or Mul by itself).
Value standardDeviation(Operation *square, Value centered, dlc::ReduceMeanOp mean,
                        LayerNormChain &chain) {
  bool isSquare = false;
  if (isa<dlc::MulOp>(square))
    isSquare = square->getOperand(0) == centered && square->getOperand(1) == centered;
  else if (isa<dlc::PowOp>(square))
    isSquare = square->getOperand(0) == centered &&
               dlc::scalarF32Constant(square->getOperand(1)) == 2.0f;
  if (!isSquare || square->getResult(0).getType() != centered.getType())
    return {};
  auto variance = dyn_cast_or_null<dlc::ReduceMeanOp>(soleUser(square->getResult(0)));
  if (!variance || variance.getType() != mean.getType() || variance.getAxes() != mean.getAxes())
    return {};
  auto add = dyn_cast_or_null<dlc::AddOp>(soleUser(variance.getResult()));
  if (!add || add.getType() != variance.getType())
    return {};
  std::optional<float> epsilon = dlc::scalarF32Constant(otherOperand(add, variance.getResult()));
  if (!epsilon)
    return {};
  auto sqrt = dyn_cast_or_null<dlc::SqrtOp>(soleUser(add.getResult()));
  if (!sqrt)
    return {};
  chain.ops.append({square, variance, add, sqrt});
  chain.epsilon = *epsilon;
  return sqrt.getResult();
}

std::optional<LayerNormChain> matchChain(dlc::ReduceMeanOp mean) {
  Value x = mean.getInput();
  auto type = cast<RankedTensorType>(x.getType());
  if (!type.getElementType().isF32() || !isMeanOverLastAxis(mean, type))
    return std::nullopt;
  auto sub = dyn_cast_or_null<dlc::SubOp>(soleUser(mean.getResult()));
  if (!sub || sub.getLhs() != x || sub.getRhs() != mean.getResult() || sub.getType() != type)
    return std::nullopt;
  // The centered values feed the square and the division, nothing else.
  Value centered = sub.getResult();
  SmallVector<Operation *> users;
  for (Operation *user : centered.getUsers())
    if (!llvm::is_contained(users, user))
      users.push_back(user);
  if (users.size() != 2)
    return std::nullopt;
  for (int squareIndex : {0, 1}) {
    LayerNormChain chain;
    chain.ops = {mean, sub};
    chain.input = x;
    Value deviation = standardDeviation(users[squareIndex], centered, mean, chain);
    if (!deviation)
      continue;
    Operation *normalize = users[1 - squareIndex];
    if (!deviation.hasOneUse())
      continue;
    if (auto div = dyn_cast<dlc::DivOp>(normalize)) {
      if (div.getLhs() != centered || div.getRhs() != deviation)
        continue;
    } else if (isa<dlc::MulOp>(normalize)) {
      auto reciprocal = dyn_cast<dlc::ReciprocalOp>(*deviation.getUsers().begin());
      if (!reciprocal || !reciprocal.getResult().hasOneUse() ||
          otherOperand(normalize, centered) != reciprocal.getResult())
        continue;
      chain.ops.push_back(reciprocal);
    } else {
      continue;
    }
    if (normalize->getResult(0).getType() != type)
      continue;
    chain.ops.push_back(normalize);
    // Then the affine part, where present: a Mul by the scale, an Add of the bias.
    Value y = normalize->getResult(0);
    const int64_t n = type.getShape().back();
    auto affine = [&](auto opType, Value &operand) {
      using Op = decltype(opType);
      auto op = dyn_cast_or_null<Op>(soleUser(y));
      Value other = op ? otherOperand(op, y) : Value();
      if (!op || op.getType() != type || !other || other == y || !holdsLastDim(other, n))
        return;
      operand = other;
      chain.ops.push_back(op);
      y = op.getResult();
    };
    affine(dlc::MulOp(), chain.scale);
    affine(dlc::AddOp(), chain.bias);
    return chain;
  }
  return std::nullopt;
}

struct FuseLayerNormPass : dlc::impl::FuseLayerNormBase<FuseLayerNormPass> {
  void runOnOperation() override {
    SmallVector<dlc::ReduceMeanOp> means;
    getOperation().walk([&](dlc::ReduceMeanOp mean) { means.push_back(mean); });
    // A fused chain takes its variance's mean, listed too, with it.
    llvm::SmallPtrSet<Operation *, 16> erased;
    for (dlc::ReduceMeanOp mean : means) {
      if (erased.contains(mean))
        continue;
      std::optional<LayerNormChain> chain = matchChain(mean);
      if (!chain)
        continue;
      // The input, scale and bias are operands of the chain, so the last op sees them all.
      Operation *last = chain->ops.back();
      OpBuilder b(last);
      auto norm = b.create<dlc::LayerNormOp>(last->getLoc(), last->getResult(0).getType(),
                                             chain->input, chain->scale, chain->bias,
                                             b.getF32FloatAttr(chain->epsilon));
      last->getResult(0).replaceAllUsesWith(norm.getResult());
      for (Operation *op : llvm::reverse(chain->ops)) {
        erased.insert(op);
        op->erase();
      }
    }
  }
};

} // namespace
