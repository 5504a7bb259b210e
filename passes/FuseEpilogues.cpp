#include "dialects/DlcDialect.h"
#include "dialects/Locations.h"
#include "passes/Passes.h"

#include "mlir/IR/Builders.h"

namespace dlc {
#define GEN_PASS_DEF_FUSEEPILOGUES
#include "passes/Passes.h.inc"
} // namespace dlc

using namespace mlir;

namespace {

bool isF32(Value v) { return cast<RankedTensorType>(v.getType()).getElementType().isF32(); }

// The conv (used only by `add`) and the residual it can take over from `add`, if any.
std::optional<std::pair<dlc::ConvOp, Value>> residualFusion(dlc::AddOp add) {
  for (unsigned i = 0; i < 2; ++i) {
    Value convResult = add->getOperand(i), residual = add->getOperand(1 - i);
    auto conv = convResult.getDefiningOp<dlc::ConvOp>();
    if (conv && convResult.hasOneUse() && !conv.getResidual() &&
        !conv->hasAttr(dlc::kActivationAttr) && conv->getBlock() == add->getBlock() &&
        convResult.getType() == add.getType() && residual.getType() == add.getType() &&
        isF32(residual) && !dlc::stateUpdateBetween(conv, add))
      return std::make_pair(conv, residual);
  }
  return std::nullopt;
}

void fuseResidual(dlc::AddOp add, dlc::ConvOp conv, Value residual) {
  // The residual may be computed after the conv; the conv's own operands all come before it.
  conv->moveBefore(add);
  conv.getResidualMutable().assign(residual);
  add.getResult().replaceAllUsesWith(conv.getResult());
  add.erase();
}

// A Gemm without bias (a MatMul as PyTorch exports a Linear layer) read only by `add`, directly
// or through one reshape read only by `add`, and the bias `add` adds to it: one value per
// column of the product, broadcast over its rows.
struct BiasFusion {
  dlc::GemmOp gemm;
  dlc::ReshapeOp reshape; // or null
  Value bias;
};
std::optional<BiasFusion> biasFusion(dlc::AddOp add) {
  // An Add that folds away (a bias of zeros, as exports of untrained models carry) is left
  // to canonicalization.
  SmallVector<OpFoldResult> folded;
  if (succeeded(add->fold(folded)))
    return std::nullopt;
  for (unsigned i = 0; i < 2; ++i) {
    Value product = add->getOperand(i), bias = add->getOperand(1 - i);
    auto reshape = product.getDefiningOp<dlc::ReshapeOp>();
    if (reshape) {
      if (!product.hasOneUse())
        continue;
      product = reshape.getInput();
    }
    auto gemm = product.getDefiningOp<dlc::GemmOp>();
    // Constant weights: the kernel then adds C to the finished product (the Add's bits);
    // otherwise it would accumulate the product onto C.
    if (!gemm || !product.hasOneUse() || gemm.getC() || gemm->hasAttr(dlc::kActivationAttr) ||
        !gemm.getB().getDefiningOp<dlc::ConstantOp>() ||
        gemm->getBlock() != add->getBlock() || !isF32(product) || !isF32(bias) ||
        add->getOperand(i).getType() != add.getType() || dlc::stateUpdateBetween(gemm, add))
      continue;
    auto biasShape = cast<RankedTensorType>(bias.getType()).getShape();
    const int64_t columns = cast<RankedTensorType>(product.getType()).getDimSize(1);
    if ((biasShape.size() == 1 || (biasShape.size() == 2 && biasShape[0] == 1)) &&
        biasShape.back() == columns &&
        cast<RankedTensorType>(bias.getType()).getNumElements() == columns)
      return BiasFusion{gemm, reshape, bias};
  }
  return std::nullopt;
}

void fuseBias(dlc::AddOp add, BiasFusion fusion) {
  // The bias may be computed after the product; the product's own operands all come before.
  const Location loc = dlc::locationComputing(fusion.gemm.getLoc(), add.getLoc());
  fusion.gemm->setLoc(loc);
  fusion.gemm->moveBefore(add);
  fusion.gemm.getCMutable().assign(fusion.bias);
  fusion.gemm.setBetaAttr(Builder(add.getContext()).getF32FloatAttr(1.0f));
  Value result = fusion.gemm.getResult();
  if (fusion.reshape) {
    fusion.reshape->setLoc(loc);
    fusion.reshape->moveBefore(add);
    result = fusion.reshape.getResult();
  }
  add.getResult().replaceAllUsesWith(result);
  add.erase();
}

// The convolution or Gemm whose only use is `activation`'s input, if any.
Operation *fusableProducer(Operation *activation) {
  Value input = activation->getOperand(0);
  Operation *producer = input.getDefiningOp();
  if (!producer || !isa<dlc::ConvOp, dlc::GemmOp>(producer) || !input.hasOneUse() ||
      producer->hasAttr(dlc::kActivationAttr) ||
      input.getType() != activation->getResult(0).getType() || !isF32(input))
    return nullptr;
  return producer;
}

// SiLU as exporters write it, x * sigmoid(x), of a float32 conv or Gemm x that nothing else
// reads: the Mul and the Sigmoid, if so.
std::optional<std::pair<dlc::MulOp, dlc::SigmoidOp>> siluFusion(dlc::MulOp mul) {
  for (unsigned i = 0; i < 2; ++i) {
    Value x = mul->getOperand(i), gate = mul->getOperand(1 - i);
    auto sigmoid = gate.getDefiningOp<dlc::SigmoidOp>();
    Operation *producer = x.getDefiningOp();
    if (!sigmoid || sigmoid->getOperand(0) != x || !gate.hasOneUse() || !producer ||
        !isa<dlc::ConvOp, dlc::GemmOp>(producer) || producer->hasAttr(dlc::kActivationAttr) ||
        !isF32(x) || x.getType() != mul.getType() || gate.getType() != x.getType())
      continue;
    if (llvm::all_of(x.getUses(), [&](OpOperand &use) {
          return use.getOwner() == mul || use.getOwner() == sigmoid;
        }) &&
        std::distance(x.use_begin(), x.use_end()) == 2)
      return std::make_pair(mul, sigmoid);
  }
  return std::nullopt;
}

void fuseSilu(dlc::MulOp mul, dlc::SigmoidOp sigmoid) {
  Value x = sigmoid->getOperand(0);
  x.getDefiningOp()->setAttr(dlc::kActivationAttr, StringAttr::get(mul.getContext(), "silu"));
  mul.getResult().replaceAllUsesWith(x);
  mul.erase();
  sigmoid.erase();
}

// A scalar constant's value, if `v` is one.
std::optional<float> scalarValue(Value v) {
  auto constant = v.getDefiningOp<dlc::ConstantOp>();
  auto dense = constant ? dyn_cast<DenseFPElementsAttr>(constant.getValue()) : nullptr;
  if (!dense || dense.getNumElements() != 1 || !dense.getElementType().isF32())
    return std::nullopt;
  return (*dense.value_begin<APFloat>()).convertToFloat();
}

// The operand of a commutative binary op other than the scalar constant `value`, if one is.
Value otherThanScalar(Operation *op, float value) {
  for (unsigned i = 0; i < 2; ++i)
    if (scalarValue(op->getOperand(i)) == value)
      return op->getOperand(1 - i);
  return nullptr;
}

// HardSwish as PyTorch exports it (HardSigmoid with alpha 1/6 and beta 0.5, then a Mul; the
// importer writes HardSigmoid as clip(alpha * x + beta, 0, 1)) of a float32 conv or Gemm x
// that nothing else reads: the Mul, if so, and the gate's ops to erase after it.
struct HardSwishFusion {
  dlc::MulOp mul;
  Value x;
  SmallVector<Operation *, 3> gate; // the Clip, the Add, the scaling Mul: each reads the next
};
std::optional<HardSwishFusion> hardSwishFusion(dlc::MulOp mul) {
  for (unsigned i = 0; i < 2; ++i) {
    Value x = mul->getOperand(i), gate = mul->getOperand(1 - i);
    auto clip = gate.getDefiningOp<dlc::ClipOp>();
    Operation *producer = x.getDefiningOp();
    if (!clip || !gate.hasOneUse() || !producer || !isa<dlc::ConvOp, dlc::GemmOp>(producer) ||
        producer->hasAttr(dlc::kActivationAttr) || !isF32(x) || x.getType() != mul.getType() ||
        gate.getType() != x.getType() || clip.getMin().convertToFloat() != 0.0f ||
        clip.getMax().convertToFloat() != 1.0f)
      continue;
    auto add = clip.getInput().getDefiningOp<dlc::AddOp>();
    if (!add || !add->getResult(0).hasOneUse() || add.getType() != x.getType())
      continue;
    Value scaled = otherThanScalar(add, 0.5f);
    auto scale = scaled ? scaled.getDefiningOp<dlc::MulOp>() : nullptr;
    if (!scale || !scaled.hasOneUse() || scale.getType() != x.getType() ||
        otherThanScalar(scale, float(1.0 / 6.0)) != x)
      continue;
    if (std::distance(x.use_begin(), x.use_end()) == 2)
      return HardSwishFusion{mul, x, {clip, add, scale}};
  }
  return std::nullopt;
}

void fuseHardSwish(HardSwishFusion &fusion) {
  fusion.x.getDefiningOp()->setAttr(dlc::kActivationAttr,
                                    StringAttr::get(fusion.mul.getContext(), "hard_swish"));
  fusion.mul.getResult().replaceAllUsesWith(fusion.x);
  fusion.mul.erase();
  for (Operation *op : fusion.gate)
    op->erase();
}

void fuseActivation(Operation *activation, Operation *producer) {
  Builder b(activation->getContext());
  StringRef name;
  if (auto clip = dyn_cast<dlc::ClipOp>(activation)) {
    name = "clip";
    producer->setAttr(dlc::kActivationMinAttr, clip.getMinAttr());
    producer->setAttr(dlc::kActivationMaxAttr, clip.getMaxAttr());
  } else if (auto leaky = dyn_cast<dlc::LeakyReluOp>(activation)) {
    name = "leaky_relu";
    producer->setAttr(dlc::kActivationAlphaAttr, leaky.getAlphaAttr());
  } else if (isa<dlc::SigmoidOp>(activation)) {
    name = "sigmoid";
  } else if (isa<dlc::TanhOp>(activation)) {
    name = "tanh";
  } else {
    name = "relu";
  }
  producer->setAttr(dlc::kActivationAttr, b.getStringAttr(name));
  activation->getResult(0).replaceAllUsesWith(producer->getResult(0));
  activation->erase();
}

struct FuseEpiloguesPass : dlc::impl::FuseEpiloguesBase<FuseEpiloguesPass> {
  void runOnOperation() override {
    SmallVector<dlc::AddOp> adds;
    getOperation().walk([&](dlc::AddOp add) { adds.push_back(add); });
    for (dlc::AddOp add : adds) {
      if (auto fusion = residualFusion(add))
        fuseResidual(add, fusion->first, fusion->second);
      else if (auto bias = biasFusion(add))
        fuseBias(add, *bias);
    }

    SmallVector<std::pair<dlc::MulOp, dlc::SigmoidOp>> silus;
    getOperation().walk([&](dlc::MulOp mul) {
      if (auto silu = siluFusion(mul))
        silus.push_back(*silu);
    });
    for (auto [mul, sigmoid] : silus)
      fuseSilu(mul, sigmoid);

    SmallVector<HardSwishFusion> hardSwishes;
    getOperation().walk([&](dlc::MulOp mul) {
      if (auto fusion = hardSwishFusion(mul))
        hardSwishes.push_back(*fusion);
    });
    for (HardSwishFusion &fusion : hardSwishes)
      fuseHardSwish(fusion);

    SmallVector<std::pair<Operation *, Operation *>> fusions;
    getOperation().walk([&](Operation *op) {
      if (isa<dlc::ReluOp, dlc::ClipOp, dlc::LeakyReluOp, dlc::SigmoidOp, dlc::TanhOp>(op))
        if (Operation *producer = fusableProducer(op))
          fusions.push_back({op, producer});
    });
    for (auto [activation, producer] : fusions)
      fuseActivation(activation, producer);
  }
};

} // namespace
