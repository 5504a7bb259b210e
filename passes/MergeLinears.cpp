#include "dialects/DlcDialect.h"
#include "passes/Passes.h"

#include "mlir/IR/Builders.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <vector>

namespace dlc {
#define GEN_PASS_DEF_MERGELINEARS
#include "passes/Passes.h.inc"
} // namespace dlc

using namespace mlir;

namespace {

RankedTensorType tensorOf(Value v) { return cast<RankedTensorType>(v.getType()); }

std::vector<float> floatsOf(Value constant) {
  return cast<dlc::ConstantOp>(constant.getDefiningOp()).getFloats();
}

// A float32 product by constant weights, with a constant bias of one value per
// column or none, and nothing else fused: one of the projections a merged product computes.
bool isLinearOf(dlc::GemmOp gemm) {
  auto isConstant = [](Value v) { return v && v.getDefiningOp<dlc::ConstantOp>(); };
  if (gemm.getTransA() || gemm.getAlpha().convertToFloat() != 1.0f ||
      !tensorOf(gemm.getB()).getElementType().isF32() || !isConstant(gemm.getB()) ||
      gemm->hasAttr(dlc::kActivationAttr))
    return false;
  if (!gemm.getC())
    return true;
  const int64_t columns = tensorOf(gemm.getOutput()).getDimSize(1);
  auto bias = tensorOf(gemm.getC()).getShape();
  return isConstant(gemm.getC()) && gemm.getBeta().convertToFloat() == 1.0f &&
         tensorOf(gemm.getC()).getNumElements() == columns && !bias.empty() &&
         bias.back() == columns;
}

// Whether `v` reaches only products (dlc.matmul) through ops that move or scale elements,
// which dlc-fuse-attention turns into views of the operand it reads: a slice of the merged
// product read that way costs no copy.
bool feedsProductsOnly(Value v) {
  for (;;) {
    if (!v.hasOneUse())
      return false;
    Operation *user = *v.getUsers().begin();
    if (isa<dlc::MatMulOp>(user))
      return true;
    const bool scales = isa<dlc::MulOp, dlc::DivOp>(user) && user->getNumOperands() == 2 &&
                        user->getOperand(0) == v &&
                        tensorOf(user->getOperand(1)).getNumElements() == 1;
    if (!isa<dlc::ReshapeOp, dlc::TransposeOp>(user) && !scales)
      return false;
    v = user->getResult(0);
  }
}

// The merged weights and bias of a set of products, made once: models whose layers share
// weights merge them once.
using MergedConstants = std::pair<Value, Value>;
using ConstantsKey = std::vector<const void *>;

// The weights of `gemms` side by side (columns of B, or rows of a transposed B), and their
// biases, zeros for a product without one (its result's -0 then reads +0, all it changes).
MergedConstants mergedConstants(OpBuilder &b, Location loc, ArrayRef<dlc::GemmOp> gemms) {
  dlc::GemmOp first = gemms.front();
  const bool transB = first.getTransB();
  const int64_t depth = tensorOf(first.getA()).getDimSize(1);
  int64_t columns = 0;
  bool anyBias = false;
  for (dlc::GemmOp gemm : gemms) {
    columns += tensorOf(gemm.getOutput()).getDimSize(1);
    anyBias |= bool(gemm.getC());
  }
  std::vector<float> weights(size_t(depth * columns)), bias(size_t(columns), 0.0f);
  int64_t column0 = 0;
  for (dlc::GemmOp gemm : gemms) {
    const int64_t n = tensorOf(gemm.getOutput()).getDimSize(1);
    const std::vector<float> w = floatsOf(gemm.getB());
    if (transB) // B's [n, depth] rows follow the previous product's
      std::copy(w.begin(), w.end(), weights.begin() + column0 * depth);
    else
      for (int64_t p = 0; p < depth; ++p)
        std::copy_n(w.begin() + p * n, n, weights.begin() + p * columns + column0);
    if (gemm.getC()) {
      const std::vector<float> c = floatsOf(gemm.getC());
      std::copy(c.begin(), c.end(), bias.begin() + column0);
    }
    column0 += n;
  }
  auto f32 = b.getF32Type();
  auto weightsType = RankedTensorType::get(
      transB ? ArrayRef<int64_t>{columns, depth} : ArrayRef<int64_t>{depth, columns}, f32);
  Value mergedWeights =
      dlc::ConstantOp::fromFloats(b, loc, weightsType, weights, "merged_weights");
  Value mergedBias =
      anyBias ? dlc::ConstantOp::fromFloats(b, loc, RankedTensorType::get({columns}, f32), bias,
                                            "merged_bias")
              : Value();
  return {mergedWeights, mergedBias};
}

// One product in place of `gemms`, each of whose results becomes a slice of its columns.
void merge(ArrayRef<dlc::GemmOp> gemms,
           std::map<ConstantsKey, MergedConstants> &merged) {
  dlc::GemmOp first = gemms.front();
  OpBuilder b(first);
  SmallVector<Location> locations;
  ConstantsKey key;
  for (dlc::GemmOp gemm : gemms) {
    locations.push_back(gemm.getLoc());
    key.insert(key.end(), {gemm.getB().getAsOpaquePointer(), gemm.getC().getAsOpaquePointer()});
  }
  Location loc = b.getFusedLoc(locations);
  auto [it, added] = merged.try_emplace(key);
  if (added)
    it->second = mergedConstants(b, loc, gemms);
  auto [weights, bias] = it->second;
  const int64_t rows = tensorOf(first.getOutput()).getDimSize(0);
  auto product = b.create<dlc::GemmOp>(
      loc, RankedTensorType::get({rows, tensorOf(weights).getDimSize(first.getTransB() ? 0 : 1)},
                                 b.getF32Type()),
      first.getA(), weights, bias, b.getBoolAttr(false), b.getBoolAttr(first.getTransB()),
      b.getF32FloatAttr(1.0f), b.getF32FloatAttr(1.0f));
  int64_t column0 = 0;
  for (dlc::GemmOp gemm : gemms) {
    OpBuilder at(gemm);
    auto slice = at.create<dlc::SliceOp>(gemm.getLoc(), gemm.getType(), product.getResult(),
                                         at.getDenseI64ArrayAttr({0, column0}),
                                         at.getDenseI64ArrayAttr({1, 1}));
    column0 += tensorOf(gemm.getOutput()).getDimSize(1);
    gemm.getOutput().replaceAllUsesWith(slice.getResult());
    Value input = gemm.getA(), constants[] = {gemm.getB(), gemm.getC()};
    gemm.erase();
    for (Value constant : constants)
      if (constant && constant.use_empty())
        constant.getDefiningOp()->erase();
    // The other products' flattenings of the input.
    while (input.use_empty()) {
      auto reshape = input.getDefiningOp<dlc::ReshapeOp>();
      if (!reshape)
        break;
      input = reshape.getInput();
      reshape.erase();
    }
  }
}

// The value `a` reshapes, looking through reshapes: the importer flattens a projection's
// input once for each MatMul that reads it.
Value reshapedSource(Value a) {
  while (auto reshape = a.getDefiningOp<dlc::ReshapeOp>())
    a = reshape.getInput();
  return a;
}

struct MergeLinearsPass : dlc::impl::MergeLinearsBase<MergeLinearsPass> {
  void runOnOperation() override {
    // Products grouped by block, input (its shape and what it reshapes) and whether B is
    // transposed, in program order.
    SmallVector<SmallVector<dlc::GemmOp, 4>> groups;
    std::map<std::tuple<Block *, const void *, const void *, bool>, size_t> groupOf;
    getOperation().walk([&](dlc::GemmOp gemm) {
      if (!isLinearOf(gemm) || !feedsProductsOnly(gemm.getOutput()))
        return;
      auto key = std::make_tuple(gemm->getBlock(),
                                 reshapedSource(gemm.getA()).getAsOpaquePointer(),
                                 gemm.getA().getType().getAsOpaquePointer(), gemm.getTransB());
      auto [it, added] = groupOf.try_emplace(key, groups.size());
      if (added)
        groups.emplace_back();
      groups[it->second].push_back(gemm);
    });
    std::map<ConstantsKey, MergedConstants> merged;
    for (auto &group : groups)
      if (group.size() > 1)
        merge(group, merged);
  }
};

} // namespace
