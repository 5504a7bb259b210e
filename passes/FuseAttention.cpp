#include "dialects/DlcDialect.h"
#include "passes/Passes.h"

#include <cstring>

namespace dlc {
#define GEN_PASS_DEF_FUSEATTENTION
#include "passes/Passes.h.inc"
} // namespace dlc

using namespace mlir;

namespace {

// The ops between the two products, from the softmax back to the first product; each but
// the softmax feeds only the next.
struct AttentionChain {
  dlc::MatMulOp scores;
  Operation *scale = nullptr; // a dlc.mul or dlc.div by a scalar constant
  float scaleValue = 1.0f;
  bool divide = false;
  dlc::AddOp add;
  Value bias;
  // A causal mask as GPT-2 writes it: where(condition, scores, fill), the condition constant.
  dlc::WhereOp where;
  float fill = 0.0f;
};

// where(condition, scores, fill) as the bias condition ? 0 : fill, a constant: scores + fill
// rounds to fill exactly for |scores| below half an ulp of fill (2^103 for finfo(float).min,
// GPT-2's fill), so the masked scores are fill as Where makes them.
Value whereAsBias(OpBuilder &b, dlc::WhereOp where, float fill) {
  auto condition = where.getCondition().getDefiningOp<dlc::ConstantOp>();
  std::vector<char> keep = condition.getBytes();
  std::vector<float> bias(keep.size());
  for (size_t i = 0; i < keep.size(); ++i)
    bias[i] = keep[i] ? 0.0f : fill;
  std::vector<char> bytes(bias.size() * sizeof(float));
  std::memcpy(bytes.data(), bias.data(), bytes.size());
  auto type = cast<RankedTensorType>(condition.getType()).clone(b.getF32Type());
  return dlc::ConstantOp::fromBytes(b, where.getLoc(), type, bytes, "attention_mask");
}

bool sameLeadingDims(ArrayRef<Value> values) {
  auto first = cast<RankedTensorType>(values[0].getType()).getShape();
  for (Value v : values) {
    auto shape = cast<RankedTensorType>(v.getType()).getShape();
    if (shape.size() != first.size() || shape.size() < 2 ||
        shape.drop_back(2) != first.drop_back(2))
      return false;
  }
  return true;
}

// The first product, looking through a scale: `v` is the scores, scaled or not.
bool findProduct(Value v, AttentionChain &chain) {
  Operation *op = v.getDefiningOp();
  if (!op || !v.hasOneUse())
    return false;
  if (isa<dlc::MulOp, dlc::DivOp>(op)) {
    const bool divide = isa<dlc::DivOp>(op);
    // A Mul's constant may be either operand; a Div's must be the divisor.
    for (unsigned i = 0; i < (divide ? 1u : 2u); ++i) {
      std::optional<float> value = dlc::scalarF32Constant(op->getOperand(1 - i));
      if (!value || op->getOperand(i).getType() != op->getResult(0).getType())
        continue;
      chain.scale = op;
      chain.scaleValue = *value;
      chain.divide = divide;
      return findProduct(op->getOperand(i), chain) && chain.scale == op;
    }
    return false;
  }
  auto matmul = dyn_cast<dlc::MatMulOp>(op);
  if (!matmul || !matmul.getType().getElementType().isF32() ||
      !sameLeadingDims({matmul.getLhs(), matmul.getRhs(), matmul.getOutput()}))
    return false;
  chain.scores = matmul;
  return true;
}

std::optional<AttentionChain> matchChain(dlc::SoftmaxOp softmax) {
  auto type = cast<RankedTensorType>(softmax.getType());
  if (softmax.getLog() || int64_t(softmax.getAxis()) != type.getRank() - 1 ||
      !type.getElementType().isF32() || !softmax.getInput().hasOneUse())
    return std::nullopt;
  AttentionChain chain;
  Value scores = softmax.getInput();
  if (auto add = scores.getDefiningOp<dlc::AddOp>()) {
    for (unsigned i : {0u, 1u}) {
      AttentionChain candidate;
      Value bias = add->getOperand(1 - i);
      if (add->getOperand(i).getType() != type || !findProduct(add->getOperand(i), candidate) ||
          !cast<RankedTensorType>(bias.getType()).getElementType().isF32())
        continue;
      candidate.add = add;
      candidate.bias = bias;
      return candidate;
    }
    return std::nullopt;
  }
  if (auto where = scores.getDefiningOp<dlc::WhereOp>()) {
    std::optional<float> fill = dlc::scalarF32Constant(where.getRhs());
    if (!where.getCondition().getDefiningOp<dlc::ConstantOp>() || !fill ||
        where.getLhs().getType() != type || !findProduct(where.getLhs(), chain))
      return std::nullopt;
    chain.where = where;
    chain.fill = *fill;
    return chain;
  }
  if (!findProduct(scores, chain))
    return std::nullopt;
  return chain;
}

struct FuseAttentionPass : dlc::impl::FuseAttentionBase<FuseAttentionPass> {
  void runOnOperation() override {
    SmallVector<dlc::SoftmaxOp> softmaxes;
    getOperation().walk([&](dlc::SoftmaxOp softmax) { softmaxes.push_back(softmax); });
    for (dlc::SoftmaxOp softmax : softmaxes) {
      if (!softmax.getResult().hasOneUse())
        continue;
      auto weighted = dyn_cast<dlc::MatMulOp>(*softmax.getResult().getUsers().begin());
      if (!weighted || weighted.getLhs() != softmax.getResult() ||
          weighted->getBlock() != softmax->getBlock())
        continue;
      std::optional<AttentionChain> chain = matchChain(softmax);
      if (!chain || !sameLeadingDims({chain->scores.getLhs(), weighted.getRhs(),
                                      weighted.getOutput()}))
        continue;
      // Every operand is defined before the second product, which the fused op replaces.
      OpBuilder b(weighted);
      if (chain->where)
        chain->bias = whereAsBias(b, chain->where, chain->fill);
      auto attention = b.create<dlc::AttentionOp>(
          weighted.getLoc(), weighted.getType(), chain->scores.getLhs(), chain->scores.getRhs(),
          weighted.getRhs(), chain->bias, b.getF32FloatAttr(chain->scaleValue),
          b.getBoolAttr(chain->divide));
      weighted.getResult().replaceAllUsesWith(attention.getResult());
      weighted.erase();
      softmax.erase();
      if (chain->add)
        chain->add.erase();
      if (chain->where)
        chain->where.erase();
      if (chain->scale)
        chain->scale->erase();
      chain->scores.erase();
    }
  }
};

} // namespace
