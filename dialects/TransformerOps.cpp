// Verifiers of the transformer ops the CPU target fuses (attention, rotary embedding, layer
// normalization) and the kernel geometry the code generators and workspace sizing read from them.
#include "dialects/DlcDialect.h"
#include "dialects/Sizes.h"
#include "dialects/Verifiers.h"

#include <cstring>

using namespace mlir;

namespace dlc {

namespace {
AttentionView contiguousView(ArrayRef<int64_t> shape) { return {0, stridesOf(shape)}; }

std::optional<AttentionView> viewFromAttr(std::optional<ArrayRef<int64_t>> attr) {
  if (!attr || attr->empty())
    return std::nullopt;
  return AttentionView{attr->front(), SmallVector<int64_t>(attr->drop_front())};
}
} // namespace

FailureOr<AttentionGeometry> attentionGeometry(AttentionOp op) {
  AttentionGeometry g;
  if (!op.getBatch()) {
    auto q = tensorType(op.getQuery()).getShape(), k = tensorType(op.getKeys()).getShape(),
         v = tensorType(op.getValues()).getShape();
    if (q.size() < 2 || k.size() != q.size() || v.size() != q.size())
      return failure();
    g.batch.assign(q.begin(), q.end() - 2);
    g.queries = q[q.size() - 2];
    g.depth = q.back();
    g.keys = k.back();
    g.valueDepth = v.back();
    g.query = contiguousView(q);
    g.keyMatrix = contiguousView(k);
    g.values = contiguousView(v);
    g.output = contiguousView(tensorType(op.getOutput()).getShape());
    if (Value bias = op.getBias()) {
      SmallVector<int64_t> scores(q.drop_back(1));
      scores.push_back(g.keys);
      g.bias = {0, broadcastStrides(tensorType(bias).getShape(), scores)};
    }
    return g;
  }
  std::optional<ArrayRef<int64_t>> sizes = op.getSizes();
  std::optional<AttentionView> query = viewFromAttr(op.getQueryView()),
                               keys = viewFromAttr(op.getKeysView()),
                               values = viewFromAttr(op.getValuesView()),
                               output = viewFromAttr(op.getOutputView()),
                               bias = viewFromAttr(op.getBiasView());
  if (!sizes || sizes->size() != 4 || !query || !keys || !values || !output ||
      bool(bias) != bool(op.getBias()))
    return failure();
  g.batch.assign(op.getBatch()->begin(), op.getBatch()->end());
  g.queries = (*sizes)[0];
  g.depth = (*sizes)[1];
  g.keys = (*sizes)[2];
  g.valueDepth = (*sizes)[3];
  g.query = *query;
  g.keyMatrix = *keys;
  g.values = *values;
  g.output = *output;
  if (bias)
    g.bias = *bias;
  const size_t rank = g.batch.size() + 2;
  for (const AttentionView *view : {&g.query, &g.keyMatrix, &g.values, &g.output})
    if (view->strides.size() != rank)
      return failure();
  if (bias && g.bias.strides.size() != rank)
    return failure();
  return g;
}

std::optional<SmallVector<int64_t>> attentionVisibleKeys(AttentionOp op) {
  // A score plus a mask of at most this has an exponential that rounds to 0 beside any
  // unmasked score below 1e29 in magnitude: Hugging Face's finfo(float32).min, -inf.
  constexpr float kMaskedScore = -1e30f;
  auto constant = op.getBias() ? op.getBias().getDefiningOp<ConstantOp>() : ConstantOp();
  FailureOr<AttentionGeometry> geometry = attentionGeometry(op);
  if (!constant || failed(geometry))
    return std::nullopt;
  const AttentionGeometry &g = *geometry;
  const AttentionView &view = g.bias;
  for (auto [n, stride] : llvm::zip(g.batch, view.strides))
    if (n > 1 && stride != 0)
      return std::nullopt; // a mask per entry (padding): nothing shared to skip
  const std::vector<char> bytes = constant.getBytes();
  auto at = [&](int64_t element) {
    float v;
    std::memcpy(&v, bytes.data() + element * sizeof(float), sizeof v);
    return v;
  };
  const int64_t rowStride = view.strides[view.strides.size() - 2],
                columnStride = view.strides.back();
  SmallVector<int64_t> visible;
  bool skips = false;
  for (int64_t r = 0; r < g.queries; ++r) {
    int64_t last = -1;
    for (int64_t j = g.keys - 1; j >= 0 && last < 0; --j)
      if (!(at(view.offset + r * rowStride + j * columnStride) <= kMaskedScore))
        last = j;
    // A row masked whole keeps all its keys: uniform weights, as the unfused ops give.
    visible.push_back(last < 0 ? g.keys : last + 1);
    skips |= visible.back() < g.keys;
  }
  if (!skips)
    return std::nullopt;
  return visible;
}

namespace {
// The last element a view reaches, or nullopt past int64.
std::optional<int64_t> lastElement(const AttentionView &view, ArrayRef<int64_t> dims) {
  std::optional<int64_t> last = view.offset;
  for (auto [n, stride] : llvm::zip(dims, view.strides))
    if (last && n > 1)
      last = checkedAdd(*last, checkedMul(n - 1, stride).value_or(-1));
  return last;
}

// Whether a view reaches each element of a tensor of `count` elements exactly once: ordered by
// stride, each dim's stride is the product of the sizes below it.
bool coversOnce(const AttentionView &view, ArrayRef<int64_t> dims, int64_t count) {
  SmallVector<std::pair<int64_t, int64_t>> strideAndSize;
  for (auto [n, stride] : llvm::zip(dims, view.strides))
    if (n > 1)
      strideAndSize.push_back({stride, n});
  llvm::sort(strideAndSize);
  int64_t expected = 1;
  for (auto [stride, n] : strideAndSize) {
    if (stride != expected)
      return false;
    expected *= n;
  }
  return view.offset == 0 && expected == count;
}
} // namespace

LogicalResult AttentionOp::verify() {
  auto q = tensorType(getQuery()).getShape(), k = tensorType(getKeys()).getShape(),
       v = tensorType(getValues()).getShape();
  if (!getBatch()) {
    if (getSizes() || getQueryView() || getKeysView() || getValuesView() || getBiasView() ||
        getOutputView())
      return emitOpError("views need `batch`");
    if (q.size() < 2 || k.size() != q.size() || v.size() != q.size())
      return emitOpError("query, keys and values must have the same rank >= 2");
    if (q.drop_back(2) != k.drop_back(2) || q.drop_back(2) != v.drop_back(2))
      return emitOpError("query, keys and values must have the same leading dims");
    if (q.back() != k[k.size() - 2])
      return emitOpError("query and keys' depths differ: ")
             << q.back() << " vs " << k[k.size() - 2];
    if (k.back() != v[v.size() - 2])
      return emitOpError("keys and values differ in count: ") << k.back() << " vs "
                                                              << v[v.size() - 2];
    SmallVector<int64_t> scores(q.drop_back(1));
    scores.push_back(k.back());
    if (getBias()) {
      auto bias = tensorType(getBias()).getShape();
      auto joint = broadcastShapes(bias, scores);
      if (failed(joint) || ArrayRef<int64_t>(*joint) != ArrayRef<int64_t>(scores))
        return emitOpError("bias ") << dimsString(bias) << " does not broadcast to the scores "
                                    << dimsString(scores);
    }
    SmallVector<int64_t> expected(q.drop_back(1));
    expected.push_back(v.back());
    return checkResultShape(*this, expected);
  }
  FailureOr<AttentionGeometry> geometry = attentionGeometry(*this);
  if (failed(geometry))
    return emitOpError("views need `sizes` [S, D, T, E], a view of batch rank + 3 entries for "
                       "query, keys, values and output, and one for the bias exactly when "
                       "there is a bias");
  const AttentionGeometry &g = *geometry;
  for (int64_t n : g.batch)
    if (n < 1)
      return emitOpError("batch dims must be positive");
  for (int64_t n : {g.queries, g.depth, g.keys, g.valueDepth})
    if (n < 1)
      return emitOpError("sizes must be positive");
  struct Matrix {
    const char *name;
    Value tensor;
    const AttentionView &view;
    std::pair<int64_t, int64_t> dims;
  };
  SmallVector<Matrix> matrices = {{"query", getQuery(), g.query, g.queryDims()},
                                  {"keys", getKeys(), g.keyMatrix, g.keyDims()},
                                  {"values", getValues(), g.values, g.valueDims()},
                                  {"result", getOutput(), g.output, g.outputDims()}};
  if (getBias())
    matrices.push_back({"bias", getBias(), g.bias, g.scoreDims()});
  for (const Matrix &m : matrices) {
    SmallVector<int64_t> dims(g.batch);
    dims.append({m.dims.first, m.dims.second});
    if (m.view.offset < 0 || llvm::any_of(m.view.strides, [](int64_t s) { return s < 0; }))
      return emitOpError(m.name) << " view has a negative offset or stride";
    std::optional<int64_t> last = lastElement(m.view, dims);
    if (!last || *last >= tensorType(m.tensor).getNumElements())
      return emitOpError(m.name) << " view reaches past its " << tensorType(m.tensor).getNumElements()
                                 << " elements";
  }
  auto stride = [&](const AttentionView &view, size_t fromEnd) {
    return view.strides[view.strides.size() - 1 - fromEnd];
  };
  if (stride(g.query, 0) != 1 || stride(g.values, 0) != 1 || stride(g.output, 0) != 1)
    return emitOpError("the query's, values' and result's rows must be contiguous");
  if (stride(g.keyMatrix, 0) != 1 && stride(g.keyMatrix, 1) != 1)
    return emitOpError("the keys' rows or columns must be contiguous");
  SmallVector<int64_t> outputDims(g.batch);
  outputDims.append({g.queries, g.valueDepth});
  if (!coversOnce(g.output, outputDims, tensorType(getOutput()).getNumElements()))
    return emitOpError("the result's view must cover each of its elements once");
  return success();
}

// The rotary op's x: its input, transposed by `perm` where set.
FailureOr<SmallVector<int64_t>> rotaryInputShape(RotaryOp op) {
  auto in = tensorType(op.getInput()).getShape();
  SmallVector<int64_t> shape(in);
  if (std::optional<ArrayRef<int64_t>> perm = op.getPerm()) {
    SmallVector<bool> seen(in.size(), false);
    if (perm->size() != in.size())
      return failure();
    for (auto [i, axis] : llvm::enumerate(*perm)) {
      if (axis < 0 || axis >= int64_t(in.size()) || seen[axis])
        return failure();
      seen[axis] = true;
      shape[i] = in[axis];
    }
    if (perm->back() != int64_t(in.size()) - 1)
      return failure();
  }
  return shape;
}

LogicalResult RotaryOp::verify() {
  FailureOr<SmallVector<int64_t>> x = rotaryInputShape(*this);
  if (failed(x))
    return emitOpError("perm must be a permutation of the input's dims keeping the last last");
  if (x->empty() || x->back() % 2)
    return emitOpError("the last dim must be even, to rotate its halves");
  for (Value v : {getCos(), getSin()}) {
    auto shape = tensorType(v).getShape();
    auto joint = broadcastShapes(shape, *x);
    if (failed(joint) || ArrayRef<int64_t>(*joint) != ArrayRef<int64_t>(*x))
      return emitOpError(v == getCos() ? "cos " : "sin ")
             << dimsString(shape) << " does not broadcast to " << dimsString(*x);
  }
  return checkResultShape(*this, *x);
}

LogicalResult LayerNormOp::verify() {
  auto shape = tensorType(getInput()).getShape();
  if (shape.empty())
    return emitOpError("input must have rank >= 1");
  for (Value v : {getScale(), getBias()}) {
    if (!v)
      continue;
    auto type = tensorType(v);
    if (type.getRank() == 0 || type.getShape().back() != shape.back() ||
        type.getNumElements() != shape.back())
      return emitOpError(v == getScale() ? "scale " : "bias ")
             << dimsString(type.getShape()) << " must hold the last dim's " << shape.back()
             << " elements";
  }
  return checkResultShape(*this, shape);
}

} // namespace dlc
