#include "dialects/DlcDialect.h"
#include "passes/Passes.h"

#include <cmath>
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
  auto type = cast<RankedTensorType>(condition.getType()).clone(b.getF32Type());
  return dlc::ConstantOp::fromFloats(b, where.getLoc(), type, bias, "attention_mask");
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

// The fused op's matrices as strided views of the tensors they are read from (or, for the
// result, written to), while the pass looks through the split-heads ops around the products.
enum Matrix { kQuery, kKeys, kValues, kOutput, kMatrices };

struct Operand {
  Value source; // the tensor the view reads (for kOutput: the value the result replaces)
  dlc::AttentionView view;
};

struct Layout {
  SmallVector<int64_t> batch;
  int64_t queries, depth, keys, valueDepth;
  Operand operands[kMatrices];
  dlc::AttentionView bias; // no strides without a bias
  float factor = 1.0f;     // the scores' scale as a multiplier (scaled queries fold into it)
  bool rescaled = false;   // a scaled query folded into `factor`
  bool moved = false;      // whether any view left the products' own operands

  std::pair<int64_t, int64_t> matrixDims(Matrix m) const {
    switch (m) {
    case kQuery:
      return {queries, depth};
    case kKeys:
      return {depth, keys};
    case kValues:
      return {keys, valueDepth};
    default:
      return {queries, valueDepth};
    }
  }
  SmallVector<int64_t> dims(Matrix m) const {
    SmallVector<int64_t> all(batch);
    auto [rows, columns] = matrixDims(m);
    all.append({rows, columns});
    return all;
  }
  // Batch dim i as [n / inner, inner]: every view reads the same elements.
  void splitBatch(size_t i, int64_t inner) {
    batch[i] /= inner;
    batch.insert(batch.begin() + i + 1, inner);
    auto split = [&](dlc::AttentionView &view) {
      if (view.strides.empty())
        return;
      view.strides.insert(view.strides.begin() + i + 1, view.strides[i]);
      view.strides[i] *= inner;
    };
    for (Operand &operand : operands)
      split(operand.view);
    split(bias);
  }
  // The kernel's needs: contiguous rows (columns of the keys may be their contiguous dim).
  static bool readable(Matrix m, const dlc::AttentionView &view) {
    const size_t n = view.strides.size();
    return view.strides[n - 1] == 1 || (m == kKeys && view.strides[n - 2] == 1);
  }
};

// How a step reaches the elements of a tensor from those of a tensor of `shape`: index j of
// dim j moves `unit[j]` elements, and index 0 of every dim is at sum(base).
struct Step {
  Value next;
  SmallVector<int64_t> unit, base;
};

// Each logical dim of `view` over a row-major tensor of `shape` as a walk along one dim of the
// tensor (`dimOf`, -1 where it has one entry or stride 0), `stepOf` indices a step, from the
// view's first index there. A batch dim that runs across several dims from their start is
// split first (`split`, then nothing).
struct Placement {
  SmallVector<int64_t> dimOf, stepOf, start;
};
std::optional<Placement> place(const dlc::AttentionView &view, ArrayRef<int64_t> dims,
                               ArrayRef<int64_t> shape, size_t batchRank,
                               std::optional<std::pair<size_t, int64_t>> &split) {
  SmallVector<int64_t> strides = dlc::stridesOf(shape);
  Placement p;
  p.start.assign(shape.size(), 0);
  for (int64_t j = int64_t(shape.size()) - 1, rest = view.offset; j >= 0; --j) {
    p.start[j] = rest % shape[j];
    rest /= shape[j];
  }
  SmallVector<int64_t> reach(shape.size(), 0);
  for (size_t i = 0; i < dims.size(); ++i) {
    p.dimOf.push_back(-1);
    p.stepOf.push_back(0);
    if (dims[i] == 1 || view.strides[i] == 0)
      continue;
    size_t j = 0;
    while (j < shape.size() && !(shape[j] > 1 && strides[j] <= view.strides[i]))
      ++j;
    if (j == shape.size() || view.strides[i] % strides[j] != 0)
      return std::nullopt;
    const int64_t step = view.strides[i] / strides[j];
    if (p.start[j] + (dims[i] - 1) * step >= shape[j]) {
      if (i < batchRank && step == 1 && p.start[j] == 0 && dims[i] % shape[j] == 0)
        split = std::make_pair(i, shape[j]);
      return std::nullopt;
    }
    p.dimOf.back() = int64_t(j);
    p.stepOf.back() = step;
    reach[j] += (dims[i] - 1) * step;
  }
  for (size_t j = 0; j < shape.size(); ++j)
    if (p.start[j] + reach[j] >= shape[j])
      return std::nullopt;
  return p;
}

// `view` moved through `step` from a tensor of `shape`, splitting batch dims as it needs.
std::optional<dlc::AttentionView> moveView(Layout &layout, Matrix m, ArrayRef<int64_t> shape,
                                           const Step &step) {
  for (;;) {
    const dlc::AttentionView &view = layout.operands[m].view;
    std::optional<std::pair<size_t, int64_t>> split;
    std::optional<Placement> placed = place(view, layout.dims(m), shape, layout.batch.size(), split);
    if (!placed) {
      if (!split)
        return std::nullopt;
      layout.splitBatch(split->first, split->second);
      continue;
    }
    dlc::AttentionView moved;
    for (size_t j = 0; j < shape.size(); ++j)
      moved.offset += step.base[j] + placed->start[j] * step.unit[j];
    for (auto [j, steps] : llvm::zip(placed->dimOf, placed->stepOf))
      moved.strides.push_back(j < 0 ? 0 : steps * step.unit[j]);
    if (!Layout::readable(m, moved))
      return std::nullopt;
    return moved;
  }
}

// The matrix's operand moved through `step` to the tensor step.next, or, where its view
// cannot follow, `layout` left as it was.
bool moveOperand(Layout &layout, Matrix m, const Step &step) {
  Layout candidate = layout;
  std::optional<dlc::AttentionView> moved = moveView(
      candidate, m, cast<RankedTensorType>(layout.operands[m].source.getType()).getShape(), step);
  if (!moved)
    return false;
  layout = candidate;
  layout.operands[m] = {step.next, *moved};
  return true;
}

// A power of 2 and its reciprocal are exact: scaling the query by one scales each score by it.
bool isPowerOfTwo(float x) {
  int exponent = 0;
  return std::frexp(x, &exponent) == 0.5f && std::isfinite(1.0f / x);
}

// The step from the tensor an operand reads back to the one its producer reads, where that
// producer only moves (or, for the query, exactly scales) elements.
std::optional<Step> stepBack(Operation *producer) {
  auto input = [&](Value v) { return cast<RankedTensorType>(v.getType()); };
  Step step;
  step.next = producer->getOperand(0);
  auto from = input(step.next).getShape();
  SmallVector<int64_t> strides = dlc::stridesOf(from);
  const size_t rank = input(producer->getResult(0)).getRank();
  step.base.assign(rank, 0);
  if (auto transpose = dyn_cast<dlc::TransposeOp>(producer)) {
    for (int64_t axis : transpose.getPerm())
      step.unit.push_back(strides[axis]);
    return step;
  }
  if (auto slice = dyn_cast<dlc::SliceOp>(producer)) {
    for (size_t j = 0; j < rank; ++j) {
      if (slice.getSteps()[j] < 1)
        return std::nullopt;
      step.unit.push_back(slice.getSteps()[j] * strides[j]);
      step.base[j] = slice.getStarts()[j] * strides[j];
    }
    return step;
  }
  if (isa<dlc::BroadcastOp>(producer)) {
    auto to = input(producer->getResult(0)).getShape();
    SmallVector<int64_t> broadcast = dlc::broadcastStrides(from, to);
    step.unit.assign(broadcast.begin(), broadcast.end());
    return step;
  }
  return std::nullopt;
}
// The products' own operands, contiguous; the bias broadcast over the scores.
Layout initialLayout(AttentionChain chain, dlc::MatMulOp weighted) {
  auto shape = [](Value v) { return cast<RankedTensorType>(v.getType()).getShape(); };
  auto q = shape(chain.scores.getLhs());
  Layout layout;
  layout.batch.assign(q.begin(), q.end() - 2);
  layout.queries = q[q.size() - 2];
  layout.depth = q.back();
  layout.keys = shape(chain.scores.getRhs()).back();
  layout.valueDepth = shape(weighted.getRhs()).back();
  const Value matrices[kMatrices] = {chain.scores.getLhs(), chain.scores.getRhs(),
                                     weighted.getRhs(), weighted.getResult()};
  for (int m = 0; m < kMatrices; ++m)
    layout.operands[m] = {matrices[m], {0, dlc::stridesOf(shape(matrices[m]))}};
  if (chain.bias) {
    SmallVector<int64_t> scores(q.drop_back(1));
    scores.push_back(layout.keys);
    layout.bias = {0, dlc::broadcastStrides(shape(chain.bias), scores)};
  }
  layout.factor = chain.divide ? 1.0f / chain.scaleValue : chain.scaleValue;
  return layout;
}

// Follows the matrix's operand back through reshapes, transposes, slices and broadcasts that
// only it reads (and, for the query, scalings by a power of 2), moving its view along; the
// ops passed are collected, nearest first.
void lookBack(Layout &layout, Matrix m, Operation *reader, SmallVectorImpl<Operation *> &passed) {
  for (;;) {
    Operand &operand = layout.operands[m];
    Operation *producer = operand.source.getDefiningOp();
    if (!producer || !operand.source.hasOneUse() || producer->getBlock() != reader->getBlock() ||
        dlc::stateUpdateBetween(producer, reader))
      return;
    if (auto reshape = dyn_cast<dlc::ReshapeOp>(producer)) {
      if (!reshape.getInput().getType().getElementType().isF32())
        return;
      operand.source = reshape.getInput();
    } else if (m == kQuery && isa<dlc::MulOp, dlc::DivOp>(producer)) {
      const bool divide = isa<dlc::DivOp>(producer);
      std::optional<float> by;
      unsigned scaled = 0;
      for (unsigned i = 0; i < (divide ? 1u : 2u) && !by; ++i)
        if (producer->getOperand(i).getType() == operand.source.getType()) {
          by = dlc::scalarF32Constant(producer->getOperand(1 - i));
          scaled = i;
        }
      if (!by || !isPowerOfTwo(*by) || !isPowerOfTwo(layout.factor))
        return;
      layout.factor *= divide ? 1.0f / *by : *by;
      layout.rescaled = true;
      operand.source = producer->getOperand(scaled);
    } else {
      std::optional<Step> step = stepBack(producer);
      if (!step || !moveOperand(layout, m, *step))
        return;
    }
    passed.push_back(producer);
    layout.moved = true;
  }
}

// Writes the result where a transpose that alone reads it would put it.
Operation *lookForward(Layout &layout) {
  Operand &output = layout.operands[kOutput];
  if (!output.source.hasOneUse())
    return nullptr;
  auto transpose = dyn_cast<dlc::TransposeOp>(*output.source.getUsers().begin());
  if (!transpose)
    return nullptr;
  ArrayRef<int64_t> perm = transpose.getPerm();
  SmallVector<int64_t> strides = dlc::stridesOf(transpose.getType().getShape());
  Step step;
  step.next = transpose.getResult();
  step.unit.assign(perm.size(), 0);
  step.base.assign(perm.size(), 0);
  for (size_t k = 0; k < perm.size(); ++k)
    step.unit[perm[k]] = strides[k];
  if (!moveOperand(layout, kOutput, step))
    return nullptr;
  layout.moved = true;
  return transpose;
}

DenseI64ArrayAttr viewAttr(OpBuilder &b, const dlc::AttentionView &view) {
  SmallVector<int64_t> values = {view.offset};
  values.append(view.strides.begin(), view.strides.end());
  return b.getDenseI64ArrayAttr(values);
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
      Layout layout = initialLayout(*chain, weighted);
      SmallVector<Operation *> passed;
      lookBack(layout, kQuery, weighted, passed);
      lookBack(layout, kKeys, weighted, passed);
      lookBack(layout, kValues, weighted, passed);
      Operation *outputTranspose = lookForward(layout);
      float scale = chain->scaleValue;
      bool divide = chain->divide;
      if (layout.rescaled) {
        scale = layout.factor;
        divide = false;
      }
      auto view = [&](const dlc::AttentionView &v) {
        return layout.moved ? viewAttr(b, v) : DenseI64ArrayAttr();
      };
      Value output = layout.operands[kOutput].source;
      auto attention = b.create<dlc::AttentionOp>(
          weighted.getLoc(), output.getType(), layout.operands[kQuery].source,
          layout.operands[kKeys].source, layout.operands[kValues].source, chain->bias,
          b.getF32FloatAttr(scale), b.getBoolAttr(divide),
          layout.moved ? b.getDenseI64ArrayAttr(layout.batch) : DenseI64ArrayAttr(),
          layout.moved ? b.getDenseI64ArrayAttr({layout.queries, layout.depth, layout.keys,
                                                 layout.valueDepth})
                       : DenseI64ArrayAttr(),
          view(layout.operands[kQuery].view), view(layout.operands[kKeys].view),
          view(layout.operands[kValues].view),
          chain->bias ? view(layout.bias) : DenseI64ArrayAttr(),
          view(layout.operands[kOutput].view));
      output.replaceAllUsesWith(attention.getResult());
      if (outputTranspose)
        outputTranspose->erase();
      weighted.erase();
      softmax.erase();
      if (chain->add)
        chain->add.erase();
      if (chain->where)
        chain->where.erase();
      if (chain->scale)
        chain->scale->erase();
      chain->scores.erase();
      for (Operation *op : passed)
        op->erase();
    }
  }
};

} // namespace
