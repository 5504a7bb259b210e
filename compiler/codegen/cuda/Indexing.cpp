// The CUDA target's ops that index by data or along an axis: the gathers and scatters (their
// indices checked in the kernel, faults reported at synchronize), TopK, ArgMax/ArgMin and
// the running sums and products.
#include "compiler/codegen/cuda/CudaEmitter.h"
#include "dialects/DlcDialect.h"

#include <functional>

using namespace mlir;

namespace dlc {
namespace cudagen {
namespace {

// Statements setting `name` to the index `expression` read from the input data, checked
// against `extent` (a negative one counts from the end): a thread with a bad one reports
// `code` and stores nothing.
std::string checkedIndex(const std::string &name, const std::string &expression, int64_t extent,
                         int code, const std::string &indent = "  ") {
  const std::string size = std::to_string(extent);
  return indent + "int64_t " + name + " = int64_t(" + expression + ");\n" + indent + "if (" + name +
         " < -" + size + " || " + name + " >= " + size + ") {\n" + indent + "  DLC_FAULT(faults, " +
         std::to_string(code) + ");\n" + indent + "  return;\n" + indent + "}\n" + indent + "if (" +
         name + " < 0)\n" + indent + "  " + name + " += " + size + ";\n";
}

// The element types the data-movement kernels copy and index by; "" (no kernel) for others.
std::pair<std::string, std::string> copyTypes(Value data, Value indices) {
  return {cType(tensorType(data).getElementType()), cType(tensorType(indices).getElementType())};
}

// y[i] = x[offset] for each output element i of a gather op, where `addressing(code)` gives
// the statements that set `offset`, checking the indices they read (reporting `code`).
LogicalResult emitIndexedCopy(Operation *op, KernelEmitter &e, StringRef kind, Value input,
                              Value indices, Value output,
                              const std::function<std::string(int code)> &addressing) {
  auto [type, indexType] = copyTypes(input, indices);
  if (type.empty() || indexType.empty())
    return noKernelFor(op, kind);
  int64_t n = tensorType(output).getNumElements();
  std::string body =
      threadIndex(n) + addressing(e.faultCode("index out of range")) + "  y[i] = x[offset];\n";
  launchKernel(
      e, "const " + type + " *x, const " + indexType + " *indices, " + type + " *y, int *faults",
      body, n, e.ptr(input) + ", " + e.ptr(indices) + ", " + e.ptr(output) + ", faults");
  return success();
}

// Gather along an axis: the output is [outer, indices, inner].
LogicalResult emitGatherAxis(Operation *op, KernelEmitter &e) {
  auto gather = cast<GatherOp>(op);
  auto shape = tensorType(gather.getInput()).getShape();
  int64_t axis = gather.getAxis(), inner = outerInner(shape, axis).second;
  int64_t count = tensorType(gather.getIndices()).getNumElements();
  return emitIndexedCopy(
      op, e, "Gather", gather.getInput(), gather.getIndices(), gather.getOutput(), [&](int code) {
        return "  const int64_t r = i % " + str(inner) + ", j = i / " + str(inner) + " % " +
               str(count) + ", o = i / " + str(inner * count) + ";\n" +
               checkedIndex("at", "indices[j]", shape[axis], code) +
               "  const int64_t offset = (o * " + str(shape[axis]) + " + at) * " + str(inner) +
               " + r;\n";
      });
}

// GatherElements: the output has the indices' shape; element i reads the input at its own
// position with the axis coordinate replaced by indices[i].
LogicalResult emitGatherElements(Operation *op, KernelEmitter &e) {
  auto gather = cast<GatherElementsOp>(op);
  auto inShape = tensorType(gather.getInput()).getShape();
  auto indexShape = tensorType(gather.getIndices()).getShape();
  int64_t axis = gather.getAxis();
  SmallVector<int64_t> strides = stridesOf(inShape), others = strides;
  others[axis] = 0;
  return emitIndexedCopy(op, e, "GatherElements", gather.getInput(), gather.getIndices(),
                         gather.getOutput(), [&](int code) {
                           return broadcastOffsets({others}, indexShape) +
                                  checkedIndex("at", "indices[i]", inShape[axis], code) +
                                  "  const int64_t offset = offset0 + at * " +
                                  std::to_string(strides[axis]) + ";\n";
                         });
}

// GatherND: the output is [batches, tuples, slice]; element i copies from the slice its index
// tuple (k entries over the dims after the batch dims) selects.
LogicalResult emitGatherND(Operation *op, KernelEmitter &e) {
  auto gather = cast<GatherNDOp>(op);
  auto inShape = tensorType(gather.getInput()).getShape();
  auto indexShape = tensorType(gather.getIndices()).getShape();
  int64_t batchDims = gather.getBatchDims(), k = indexShape.back();
  int64_t tuples = product(indexShape.drop_back().drop_front(batchDims));
  int64_t slice = product(inShape.drop_front(batchDims + k));
  int64_t batchStride = product(inShape.drop_front(batchDims));
  SmallVector<int64_t> strides = stridesOf(inShape);
  return emitIndexedCopy(
      op, e, "GatherND", gather.getInput(), gather.getIndices(), gather.getOutput(), [&](int code) {
        std::string statements =
            "  const int64_t tuple = i / " + str(slice) + ", batch = tuple / " + str(tuples) +
            ";\n  int64_t offset = batch * " + str(batchStride) + " + i % " + str(slice) + ";\n";
        for (int64_t q = 0; q < k; ++q) {
          std::string at = "at" + str(q);
          statements += checkedIndex(at, "indices[tuple * " + str(k) + " + " + str(q) + "]",
                                     inShape[batchDims + q], code) +
                        "  offset += " + at + " * " + str(strides[batchDims + q]) + ";\n";
        }
        return statements;
      });
}

// ArgMax / ArgMin: one thread per [outer, inner] position scans its row as the CPU kernel
// does (the first extreme, or the last with select_last_index; a NaN wins and stays).
LogicalResult emitArgReduce(Operation *op, KernelEmitter &e) {
  std::string type = computeType(op->getOperand(0));
  if (type.empty())
    return noKernelFor(op, isa<ArgMaxOp>(op) ? "ArgMax" : "ArgMin");
  int64_t axis = cast<IntegerAttr>(op->getAttr("axis")).getInt();
  bool last = cast<BoolAttr>(op->getAttr("select_last_index")).getValue();
  auto shape = tensorType(op->getOperand(0)).getShape();
  auto [outer, inner] = outerInner(shape, axis);
  int64_t extent = shape.empty() ? 1 : shape[axis], rows = outer * inner;
  std::string better = isa<ArgMaxOp>(op) ? "v > b" : "v < b";
  std::string body = threadIndex(rows) + "  const " + type + " *row = x + i / " + str(inner) +
                     " * " + str(extent * inner) + " + i % " + str(inner) +
                     ";\n  int64_t best = 0;\n  for (int64_t j = 1; j < " + str(extent) +
                     "; ++j) {\n    const " + type + " v = row[j * " + str(inner) +
                     "], b = row[best * " + str(inner) +
                     "];\n    const bool vNan = dlc::rt::scalar::isNan(v), bNan = "
                     "dlc::rt::scalar::isNan(b);\n    if ((!bNan && (vNan || " +
                     better + "))" + (last ? " || v == b || (vNan && bNan)" : "") +
                     ")\n      best = j;\n  }\n  y[i] = best;\n";
  launchKernel(e, "const " + type + " *x, int64_t *y", body, rows,
               e.ptr(op->getOperand(0)) + ", " + e.ptr(op->getResult(0)));
  return success();
}

// CumSum / CumProd: one thread per [outer, inner] position runs along its row (integers wrap).
LogicalResult emitRunning(Operation *op, KernelEmitter &e) {
  std::string type = computeType(op->getOperand(0));
  bool product = isa<CumProdOp>(op);
  if (type.empty())
    return noKernelFor(op, product ? "CumProd" : "CumSum");
  int64_t axis = cast<IntegerAttr>(op->getAttr("axis")).getInt();
  auto flag = [&](const char *name) { return cast<BoolAttr>(op->getAttr(name)).getValue(); };
  auto shape = tensorType(op->getOperand(0)).getShape();
  auto [outer, inner] = outerInner(shape, axis);
  int64_t extent = shape.empty() ? 1 : shape[axis], rows = outer * inner;
  std::string combine =
      std::string("acc = dlc::rt::scalar::") + (product ? "Mul" : "Add") + "Op()(acc, v);";
  std::string store = "y[at] = acc;";
  // Read first: y may alias x.
  std::string body =
      threadIndex(rows) + "  const int64_t base = i / " + str(inner) + " * " + str(extent * inner) +
      " + i % " + str(inner) + ";\n  " + type + " acc = " + type + "(" + (product ? "1" : "0") +
      ");\n  for (int64_t step = 0; step < " + str(extent) +
      "; ++step) {\n    const int64_t at = base + " +
      (flag("reverse") ? "(" + str(extent - 1) + " - step)" : std::string("step")) + " * " +
      str(inner) + ";\n    const " + type + " v = x[at];\n    " +
      (flag("exclusive") ? store + "\n    " + combine : combine + "\n    " + store) + "\n  }\n";
  launchKernel(e, "const " + type + " *x, " + type + " *y", body, rows,
               e.ptr(op->getOperand(0)) + ", " + e.ptr(op->getResult(0)));
  return success();
}

// The scatter ops copy the input to the result, then apply the updates in the CPU kernel's
// order (duplicate indices combine as they do there) in a kernel of one thread: correct and
// deterministic, not fast. Every index is checked before anything is written.
std::string scatterCombine(StringRef reduction) {
  if (reduction == "add")
    return "dlc::rt::scalar::AddOp()(target, u)";
  if (reduction == "mul")
    return "dlc::rt::scalar::MulOp()(target, u)";
  if (reduction == "max")
    return "target < u ? u : target";
  if (reduction == "min")
    return "u < target ? u : target";
  return "u";
}

// `apply` runs once per update j with `target`, the element it combines into, and `u`.
void emitScatterKernel(KernelEmitter &e, Value input, Value indices, Value updates, Value result,
                       const std::string &checks, const std::string &apply) {
  copyInputToResult(e, input, result);
  std::string type = cType(tensorType(result).getElementType());
  std::string indexType = cType(tensorType(indices).getElementType());
  launchKernel(e,
               "const " + indexType + " *indices, const " + type + " *updates, " + type +
                   " *y, int *faults",
               threadIndex(1) + checks + apply, 1,
               e.ptr(indices) + ", " + e.ptr(updates) + ", " + e.ptr(result) + ", faults");
}

LogicalResult emitScatterElements(Operation *op, KernelEmitter &e) {
  auto scatter = cast<ScatterElementsOp>(op);
  auto [type, indexType] = copyTypes(scatter.getInput(), scatter.getIndices());
  if (type.empty() || indexType.empty())
    return noKernelFor(op, "ScatterElements");
  auto shape = tensorType(scatter.getInput()).getShape();
  auto indexShape = tensorType(scatter.getIndices()).getShape();
  int64_t axis = scatter.getAxis(), count = product(indexShape);
  SmallVector<int64_t> strides = stridesOf(shape), others = strides;
  others[axis] = 0;
  const std::string loop = "  for (int64_t j = 0; j < " + std::to_string(count) + "; ++j) {\n";
  int code = e.faultCode("index out of range");
  std::string checks = loop + checkedIndex("at", "indices[j]", shape[axis], code, "    ") + "  }\n";
  std::string apply =
      loop + broadcastOffsets({others}, indexShape, "j") +
      checkedIndex("at", "indices[j]", shape[axis], code, "    ") + "    " + type +
      " &target = y[offset0 + at * " + std::to_string(strides[axis]) + "];\n    const " + type +
      " u = updates[j];\n    target = " + scatterCombine(scatter.getReduction()) + ";\n  }\n";
  emitScatterKernel(e, scatter.getInput(), scatter.getIndices(), scatter.getUpdates(),
                    scatter.getOutput(), checks, apply);
  return success();
}

LogicalResult emitScatterND(Operation *op, KernelEmitter &e) {
  auto scatter = cast<ScatterNDOp>(op);
  auto [type, indexType] = copyTypes(scatter.getInput(), scatter.getIndices());
  if (type.empty() || indexType.empty())
    return noKernelFor(op, "ScatterND");
  auto shape = tensorType(scatter.getInput()).getShape();
  auto indexShape = tensorType(scatter.getIndices()).getShape();
  int64_t k = indexShape.back(), tuples = product(indexShape.drop_back());
  int64_t slice = product(shape.drop_front(k));
  SmallVector<int64_t> strides = stridesOf(shape);
  int code = e.faultCode("index out of range");
  // Statements setting `offset` to the element offset of tuple t.
  std::string offset = "    int64_t offset = 0;\n";
  for (int64_t q = 0; q < k; ++q)
    offset += checkedIndex("at" + str(q), "indices[t * " + str(k) + " + " + str(q) + "]", shape[q],
                           code, "    ") +
              "    offset += at" + str(q) + " * " + str(strides[q]) + ";\n";
  const std::string loop = "  for (int64_t t = 0; t < " + str(tuples) + "; ++t) {\n";
  std::string checks = loop + offset + "  }\n";
  std::string apply =
      loop + offset + "    for (int64_t s = 0; s < " + str(slice) + "; ++s) {\n      " + type +
      " &target = y[offset + s];\n      const " + type + " u = updates[t * " + str(slice) +
      " + s];\n      target = " + scatterCombine(scatter.getReduction()) + ";\n    }\n  }\n";
  emitScatterKernel(e, scatter.getInput(), scatter.getIndices(), scatter.getUpdates(),
                    scatter.getOutput(), checks, apply);
  return success();
}

// TopK's indices: one thread per element of each line ranks it against the whole line (the
// order the CPU kernel sorts by: value, then index), and the k best write their index at their
// rank. Each rank has exactly one element, so no two threads write the same output.
LogicalResult emitTopK(Operation *op, KernelEmitter &e) {
  auto topK = cast<TopKOp>(op);
  std::string type = computeType(topK.getInput());
  if (type.empty())
    return noKernelFor(op, "TopK");
  auto shape = tensorType(topK.getInput()).getShape();
  int64_t axis = topK.getAxis(), n = shape[axis];
  int64_t inner = outerInner(shape, axis).second;
  int64_t k = tensorType(topK.getOutput()).getDimSize(axis);
  int64_t threads = tensorType(topK.getInput()).getNumElements();
  const std::string better = topK.getLargest() ? "vb > va" : "vb < va";
  std::string body =
      threadIndex(threads) + "  const int64_t column = i % " + str(inner) + ", a = i / " +
      str(inner) + " % " + str(n) + ", o = i / " + str(inner * n) + ";\n  const " + type +
      " *line = x + o * " + str(n * inner) + " + column;\n  const " + type + " va = line[a * " +
      str(inner) + "];\n  int64_t rank = 0;\n  for (int64_t b = 0; b < " + str(n) +
      "; ++b) {\n    const " + type + " vb = line[b * " + str(inner) +
      "];\n    rank += vb != va ? (" + better + ") : b < a;\n  }\n  if (rank < " + str(k) +
      ")\n    indices[(o * " + str(k) + " + rank) * " + str(inner) + " + column] = a;\n";
  launchKernel(e, "const " + type + " *x, int64_t *indices", body, threads,
               e.ptr(topK.getInput()) + ", " + e.ptr(topK.getOutput()));
  return success();
}

} // namespace

void addIndexingEmitters(EmitterTable &table) {
  table.forOp<GatherOp>() = emitGatherAxis;
  table.forOp<GatherElementsOp>() = emitGatherElements;
  table.forOp<GatherNDOp>() = emitGatherND;
  table.forOp<ScatterElementsOp>() = emitScatterElements;
  table.forOp<ScatterNDOp>() = emitScatterND;
  table.forOp<TopKOp>() = emitTopK;
  table.forOp<ArgMaxOp>() = emitArgReduce;
  table.forOp<ArgMinOp>() = emitArgReduce;
  table.forOp<CumSumOp>() = emitRunning;
  table.forOp<CumProdOp>() = emitRunning;
}

} // namespace cudagen
} // namespace dlc
