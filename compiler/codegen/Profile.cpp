// What --profile reports an op computes, beside the time it takes.
#include "compiler/codegen/Emitter.h"
#include "dialects/DlcDialect.h"

using namespace mlir;

namespace dlc {

namespace {

std::string shapeText(Value v) {
  auto shape = tensorType(v).getShape();
  if (shape.empty())
    return "scalar";
  std::string text;
  for (auto [i, d] : llvm::enumerate(shape))
    text += (i ? "x" : "") + std::to_string(d);
  return text;
}

double elements(Value v) { return double(tensorType(v).getNumElements()); }

// Multiply-adds per result element of the products; 0 for other ops.
double multiplyAddsPerResult(Operation *op) {
  if (auto matmul = dyn_cast<MatMulOp>(op))
    return double(tensorType(matmul.getLhs()).getShape().back());
  if (auto gemm = dyn_cast<GemmOp>(op)) {
    auto a = tensorType(gemm.getA()).getShape();
    return double(gemm.getTransA() ? a[0] : a[1]);
  }
  // Both products: each query's T scores (depth D each) and its E outputs (T each).
  if (auto attention = dyn_cast<AttentionOp>(op)) {
    const AttentionGeometry g = *attentionGeometry(attention); // verified
    return double(g.keys) * double(g.depth + g.valueDepth) / double(g.valueDepth);
  }
  // A weight of [out, in / group, spatial...]: each result sums in / group x spatial products.
  if (auto conv = dyn_cast<ConvOp>(op))
    return elements(conv.getWeight()) / double(tensorType(conv.getWeight()).getDimSize(0));
  return 0;
}

} // namespace

OpCost opCost(Operation *op) {
  OpCost cost;
  for (auto [i, v] : llvm::enumerate(op->getOperands())) {
    cost.shapes += (i ? ", " : "") + shapeText(v);
    cost.bytes += double(tensorBytes(v.getType()));
  }
  cost.shapes += " ->";
  double results = 0;
  for (Value v : op->getResults()) {
    cost.shapes += " " + shapeText(v);
    cost.bytes += double(tensorBytes(v.getType()));
    results += elements(v);
  }
  double multiplyAdds = multiplyAddsPerResult(op);
  cost.flops = multiplyAdds > 0 ? 2 * multiplyAdds * results : results;
  return cost;
}

} // namespace dlc
