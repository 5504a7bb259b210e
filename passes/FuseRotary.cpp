#include "dialects/DlcDialect.h"
#include "passes/Passes.h"

#include "mlir/IR/Builders.h"

namespace dlc {
#define GEN_PASS_DEF_FUSEROTARY
#include "passes/Passes.h.inc"
} // namespace dlc

using namespace mlir;

namespace {

bool isF32(Value v) { return cast<RankedTensorType>(v.getType()).getElementType().isF32(); }

// `slice` takes x's elements from `first` to `first` + n/2 of x's last dim and all the rest.
bool isHalf(dlc::SliceOp slice, Value x, int64_t first) {
  if (!slice || slice.getInput() != x || !slice.getResult().hasOneUse())
    return false;
  auto in = cast<RankedTensorType>(x.getType()).getShape();
  auto out = slice.getType().getShape();
  const size_t last = in.size() - 1;
  for (size_t i = 0; i < in.size(); ++i) {
    const int64_t extent = i == last ? in[i] / 2 : in[i];
    if (out[i] != extent || slice.getSteps()[i] != 1 ||
        slice.getStarts()[i] != (i == last ? first : 0))
      return false;
  }
  return true;
}

// The x of rotate_half(x) as Hugging Face writes it: Concat(Neg(x[..., n/2:]), x[..., :n/2])
// over the last axis, each intermediate read once.
Value rotatedInput(dlc::ConcatOp concat) {
  auto type = cast<RankedTensorType>(concat.getType());
  if (concat.getInputs().size() != 2 || int64_t(concat.getAxis()) != type.getRank() - 1 ||
      !isF32(concat))
    return nullptr;
  auto neg = concat.getInputs()[0].getDefiningOp<dlc::NegOp>();
  if (!neg || !neg.getResult().hasOneUse())
    return nullptr;
  auto high = neg.getInput().getDefiningOp<dlc::SliceOp>();
  auto low = concat.getInputs()[1].getDefiningOp<dlc::SliceOp>();
  if (!high || !low)
    return nullptr;
  Value x = high.getInput();
  if (x.getType() != type || type.getShape().back() % 2 || !isHalf(low, x, 0) ||
      !isHalf(high, x, type.getShape().back() / 2))
    return nullptr;
  return x;
}

// The Mul's operand other than `v`, when the Mul reads `v` once and its result is v's type.
Value otherFactor(dlc::MulOp mul, Value v) {
  if (!mul || mul.getType() != v.getType() || !mul.getResult().hasOneUse())
    return nullptr;
  for (unsigned i : {0u, 1u})
    if (mul->getOperand(i) == v && mul->getOperand(1 - i) != v && isF32(mul->getOperand(1 - i)))
      return mul->getOperand(1 - i);
  return nullptr;
}

struct RotaryMatch {
  Value x, cos, sin;
  dlc::AddOp add;
  SmallVector<Operation *> replaced; // the Add first, then the ops it reads, nearest first
};

// x * cos + rotate_half(x) * sin, the Add's operands in either order.
std::optional<RotaryMatch> matchRotary(dlc::ConcatOp concat) {
  Value x = rotatedInput(concat);
  if (!x || !concat.getResult().hasOneUse())
    return std::nullopt;
  auto sinMul = dyn_cast<dlc::MulOp>(*concat.getResult().getUsers().begin());
  Value sin = otherFactor(sinMul, concat.getResult());
  if (!sin)
    return std::nullopt;
  auto add = dyn_cast<dlc::AddOp>(*sinMul.getResult().getUsers().begin());
  if (!add || add.getType() != x.getType())
    return std::nullopt;
  Value cosTerm = add.getLhs() == sinMul.getResult() ? add.getRhs() : add.getLhs();
  auto cosMul = cosTerm.getDefiningOp<dlc::MulOp>();
  Value cos = otherFactor(cosMul, x);
  if (!cos || cosMul == sinMul)
    return std::nullopt;
  RotaryMatch match{x, cos, sin, add, {}};
  auto neg = concat.getInputs()[0].getDefiningOp<dlc::NegOp>();
  match.replaced = {add, sinMul, cosMul, concat, neg, neg.getInput().getDefiningOp(),
                    concat.getInputs()[1].getDefiningOp()};
  for (Operation *op : match.replaced)
    if (op->getBlock() != add->getBlock() || dlc::stateUpdateBetween(op, add))
      return std::nullopt;
  return match;
}

struct FuseRotaryPass : dlc::impl::FuseRotaryBase<FuseRotaryPass> {
  void runOnOperation() override {
    SmallVector<dlc::ConcatOp> concats;
    getOperation().walk([&](dlc::ConcatOp concat) { concats.push_back(concat); });
    for (dlc::ConcatOp concat : concats) {
      std::optional<RotaryMatch> match = matchRotary(concat);
      if (!match)
        continue;
      OpBuilder b(match->add);
      auto rotary = b.create<dlc::RotaryOp>(match->add.getLoc(), match->add.getType(), match->x,
                                            match->cos, match->sin, DenseI64ArrayAttr());
      match->add.getResult().replaceAllUsesWith(rotary.getResult());
      for (Operation *op : match->replaced)
        op->erase();
      // The split-heads transpose before it, when it keeps the last axis last, becomes the
      // order the kernel reads x in.
      auto transpose = match->x.getDefiningOp<dlc::TransposeOp>();
      if (transpose && match->x.hasOneUse() && transpose->getBlock() == rotary->getBlock() &&
          transpose.getPerm().back() == int64_t(transpose.getPerm().size()) - 1 &&
          !dlc::stateUpdateBetween(transpose, rotary)) {
        rotary.getInputMutable().assign(transpose.getInput());
        rotary.setPermAttr(b.getDenseI64ArrayAttr(transpose.getPerm()));
        transpose.erase();
      }
    }
  }
};

} // namespace
