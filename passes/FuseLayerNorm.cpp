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
  Operation *normalize = nullptr; // the division by the deviation
  float epsilon = 0.0f;
  bool rms = false;
};

// The variance's ops from the square of `centered` on, through the standard deviation; the
// square is `square` (Pow 2 or Mul by itself), and the variance's mean must match `mean` in
// type and axes (for RMSNorm it is `mean` itself).
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

// The op dividing `x` by `deviation`: a Div, or a Mul by its Reciprocal or by 1 / it (a
// reciprocal then joins the chain); null if none.
Operation *normalization(Value x, Value deviation, LayerNormChain &chain) {
  Operation *user = soleUser(deviation);
  if (!user || !deviation.hasOneUse())
    return nullptr;
  if (auto div = dyn_cast<dlc::DivOp>(user)) {
    if (div.getLhs() == x && div.getRhs() == deviation)
      return div;
    if (div.getRhs() != deviation || dlc::scalarF32Constant(div.getLhs()) != 1.0f)
      return nullptr;
  } else if (!isa<dlc::ReciprocalOp>(user)) {
    return nullptr;
  }
  Value reciprocal = user->getResult(0);
  auto mul = dyn_cast_or_null<dlc::MulOp>(soleUser(reciprocal));
  if (reciprocal.getType() != deviation.getType() || !mul ||
      otherOperand(mul, reciprocal) != x)
    return nullptr;
  chain.ops.push_back(user);
  return mul;
}

// The rest of the chain from the division by the deviation on: the affine part, where present
// (a Mul by the scale, an Add of the bias). False if there is no division of `x`.
bool finishChain(Value x, Value deviation, RankedTensorType type, LayerNormChain &chain) {
  Operation *normalize = normalization(x, deviation, chain);
  if (!normalize || normalize->getResult(0).getType() != type)
    return false;
  chain.ops.push_back(normalize);
  chain.normalize = normalize;
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
  return true;
}

// LayerNorm: `mean` is x's, and the centered values feed the square and the division only.
std::optional<LayerNormChain> matchLayerNorm(dlc::ReduceMeanOp mean) {
  Value x = mean.getInput();
  auto type = cast<RankedTensorType>(x.getType());
  if (!type.getElementType().isF32() || !isMeanOverLastAxis(mean, type))
    return std::nullopt;
  auto sub = dyn_cast_or_null<dlc::SubOp>(soleUser(mean.getResult()));
  if (!sub || sub.getLhs() != x || sub.getRhs() != mean.getResult() || sub.getType() != type)
    return std::nullopt;
  Value centered = sub.getResult();
  SmallVector<Operation *> users;
  for (Operation *user : centered.getUsers())
    if (!llvm::is_contained(users, user))
      users.push_back(user);
  if (users.size() != 2)
    return std::nullopt;
  for (Operation *square : users) {
    LayerNormChain chain;
    chain.ops = {mean, sub};
    chain.input = x;
    Value deviation = standardDeviation(square, centered, mean, chain);
    if (deviation && finishChain(centered, deviation, type, chain) &&
        llvm::is_contained(users, chain.normalize))
      return chain;
  }
  return std::nullopt;
}

// RMSNorm (LLaMA): `meanSquare` is the mean of x's squares; x may have other readers.
std::optional<LayerNormChain> matchRmsNorm(dlc::ReduceMeanOp meanSquare) {
  Operation *square = meanSquare.getInput().getDefiningOp();
  if (!square || !isa<dlc::MulOp, dlc::PowOp>(square))
    return std::nullopt;
  Value x = square->getOperand(0);
  auto type = cast<RankedTensorType>(x.getType());
  if (!type.getElementType().isF32() || !isMeanOverLastAxis(meanSquare, type))
    return std::nullopt;
  LayerNormChain chain;
  chain.input = x;
  chain.rms = true;
  Value deviation = standardDeviation(square, x, meanSquare, chain);
  if (!deviation || !finishChain(x, deviation, type, chain))
    return std::nullopt;
  return chain;
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
      std::optional<LayerNormChain> chain = matchLayerNorm(mean);
      if (!chain)
        chain = matchRmsNorm(mean);
      if (!chain)
        continue;
      // The input, scale and bias are operands of the chain, so the last op sees them all.
      Operation *last = chain->ops.back();
      OpBuilder b(last);
      auto norm = b.create<dlc::LayerNormOp>(last->getLoc(), last->getResult(0).getType(),
                                             chain->input, chain->scale, chain->bias,
                                             b.getF32FloatAttr(chain->epsilon),
                                             chain->rms ? b.getUnitAttr() : nullptr);
      last->getResult(0).replaceAllUsesWith(norm.getResult());
      for (Operation *op : llvm::reverse(chain->ops)) {
        erased.insert(op);
        op->erase();
      }
    }
  }
};

} // namespace
