// Shared by the import files (compiler/import/*.cpp): small builders that emit dlc ops with
// computed result types, so an op's import (and the compositions written with existing ops)
// reads as the ONNX definition. Each family file registers its ops with add<Family>Imports.
#ifndef DLC_COMPILER_IMPORT_BUILDERS_H
#define DLC_COMPILER_IMPORT_BUILDERS_H

#include "compiler/import/ImportContext.h"
#include "compiler/import/ModelCheck.h"
#include "dialects/DlcDialect.h"
#include "dialects/Sizes.h"

#include <map>
#include <string>

namespace dlc {

// The import files speak MLIR's and LLVM's vocabulary throughout.
using llvm::ArrayRef;
using llvm::SmallVector;
using mlir::RankedTensorType;
using mlir::Type;
using mlir::Value;

using ImportTable = std::map<std::string, OpImport>;
void addElementwiseImports(ImportTable &table);
void addLinalgImports(ImportTable &table);
void addReductionImports(ImportTable &table);
void addDataMovementImports(ImportTable &table);
void addSamplingImports(ImportTable &table);
void addRecurrentImports(ImportTable &table);
void addAttentionImports(ImportTable &table);
void addQuantizationImports(ImportTable &table);
void addSignalImports(ImportTable &table);
void addIndexingImports(ImportTable &table);
void addOptimizerImports(ImportTable &table);
void addMlImports(ImportTable &table);
void addOrtContribImports(ImportTable &table);

RankedTensorType typeOf(Value v);

// The product of `dims`; an error when it leaves int64 (dims of several tensors, or of a shape
// not yet checked against the size limit, may multiply beyond it).
int64_t dimsProduct(ArrayRef<int64_t> dims);

// `shape` as [product of the dims before `axis`, product of the rest].
std::pair<int64_t, int64_t> flattenedAt(ArrayRef<int64_t> shape, int64_t axis);

void requireFloat32(NodeImporter &n, int input = 0);
// For ops built only from kernels that also come for float64 (unary, binary, softmax, reduce).
void requireFloat(NodeImporter &n, int input = 0);

Value reshape(NodeImporter &n, Value v, ArrayRef<int64_t> shape);

// The broadcast shape of two operands of one element type.
SmallVector<int64_t> broadcastOperands(Value a, Value b);

// A rank-0 integer constant (bool, signed or unsigned, truncated to the type's width).
Value intScalar(NodeImporter &n, int64_t v, Type element);

// A rank-0 constant of `element` type, broadcast by the binary ops. A value for an integer
// type must be integral and in int64's range (it may come from a file).
Value scalar(NodeImporter &n, double v, Type element);

// The normalized axes [from, rank).
std::vector<int64_t> trailingAxes(int64_t from, int64_t rank);

// x as `element` (x itself when it already is); `saturate` and `roundMode` as ONNX Cast's (for
// float8 results, and float8 e8m0 ones).
Value castTo(NodeImporter &n, Value x, Type element, bool saturate = true,
             llvm::StringRef roundMode = "up");

// An all-ones constant: true for bool, ~0 for integers.
Value allOnes(NodeImporter &n, Type element);

void requireInteger(NodeImporter &n, bool allowBool);

Value gatherElements(NodeImporter &n, Value data, Value indices, int64_t axis);

// `count` elements along `axis` from `start`, `step` apart.
Value sliceAxis(NodeImporter &n, Value v, int64_t axis, int64_t start, int64_t step, int64_t count);

Value concatAxis(NodeImporter &n, ArrayRef<Value> parts, int64_t axis);

Value broadcastTo(NodeImporter &n, Value v, ArrayRef<int64_t> shape);

// A rank-0 constant holding ConstTensor `c`'s single value, converted to `element`.
Value scalarOf(NodeImporter &n, const ConstTensor &c, Type element);

Value transposeValue(NodeImporter &n, Value v, ArrayRef<int64_t> perm);

// An int64 constant of `shape` holding `values` (index tables, positions).
Value int64Constant(NodeImporter &n, ArrayRef<int64_t> shape, const std::vector<int64_t> &values,
                    const char *name);

// int64 class indices 0..depth-1 laid along `axis` of a rank-`rank` tensor.
Value classIndices(NodeImporter &n, int64_t depth, int64_t axis, int64_t rank);

Value insertUnitDim(NodeImporter &n, Value v, int64_t axis);

// ONNX MatMul: batch dims broadcast, 1-D operands promoted (float32, float64, or int32 exactly).
Value matmulOf(NodeImporter &n, Value lhs, Value rhs);
// ONNX Conv on float32 `x` and `weight` with the node's window attributes (Linalg.cpp).
Value convOf(NodeImporter &n, Value x, Value weight, Value bias);

// Elementwise binary op with numpy broadcasting.
template <typename Op> Value bin(NodeImporter &n, Value a, Value b) {
  return n.b.create<Op>(n.loc(), typeOf(a).clone(broadcastOperands(a, b)), a, b);
}

// Comparison with numpy broadcasting: a bool result.
template <typename Op> Value comparison(NodeImporter &n, Value a, Value b) {
  return n.b.create<Op>(n.loc(), RankedTensorType::get(broadcastOperands(a, b), n.b.getI1Type()), a,
                        b);
}

template <typename Op> Value un(NodeImporter &n, Value x) {
  return n.b.create<Op>(n.loc(), typeOf(x), x);
}

// Reduction over sorted, unique, non-negative axes.
template <typename Op> Value red(NodeImporter &n, Value x, ArrayRef<int64_t> axes, bool keep) {
  SmallVector<int64_t> shape;
  for (auto [d, size] : llvm::enumerate(typeOf(x).getShape())) {
    bool reduced = llvm::is_contained(axes, (int64_t)d);
    if (!reduced || keep)
      shape.push_back(reduced ? 1 : size);
  }
  return n.b.create<Op>(n.loc(), typeOf(x).clone(shape), x, axes);
}

// relu(x) + alpha * (exp(min(x, 0) / scale) - 1): Elu at scale 1, Celu at scale alpha.
Value eluLike(NodeImporter &n, Value x, double alpha, double scale);
// clip(alpha x + beta, 0, 1)
Value hardSigmoidOf(NodeImporter &n, Value x, double alpha, double beta);
// x above alpha, else 0.
Value thresholdedReluOf(NodeImporter &n, Value x, double alpha);
// An activation function by its ONNX name (any case), as recurrent layers and FusedGemm name
// them, with the alpha and beta of those that take them.
struct NamedActivation {
  std::string name;
  double alpha = 0, beta = 0;
};
Value activationOf(NodeImporter &n, const NamedActivation &a, Value x);
// 0.5 x (1 + erf(x / sqrt 2)), or with the tanh approximation
// 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))).
Value geluOf(NodeImporter &n, Value x, bool tanhApproximation);

struct Standardized {
  Value y, mean, invStdDev; // the statistics keep the reduced axes as size-1 dims
};
// (x - mean) / sqrt(var + eps) over `axes` (the layer norms' core).
Standardized standardizeWithStatistics(NodeImporter &n, Value x, ArrayRef<int64_t> axes,
                                       double epsilon);
// x / sqrt(mean(x^2) + eps) over `axes`, and 1 / sqrt(mean(x^2) + eps) (reduced axes kept).
std::pair<Value, Value> rootMeanSquareNormalize(NodeImporter &n, Value x, ArrayRef<int64_t> axes,
                                                double epsilon);

// [B, S, heads * size] -> [B, heads, S, size].
Value splitHeads(NodeImporter &n, Value x, int64_t heads, const char *name);

// ONNX Gemm of the node's inputs A, B and optional C, with its alpha, beta, transA and transB.
Value gemmOf(NodeImporter &n);

// x [B, S, heads * size] or [B, heads, S, size] with each head's first `rotated` features
// turned by the angles whose cos and sin are [B, S, rotated / 2]: the pairs (x1, x2), split
// halves or interleaved, become (cos x1 - sin x2, sin x1 + cos x2).
Value rotaryEmbeddingOf(NodeImporter &n, Value x, Value cos, Value sin, int64_t heads,
                        int64_t rotated, bool interleaved);

template <typename Build> OpImport floatComposition(Build build) {
  return {{}, [build](NodeImporter &n) -> Value {
            requireFloat32(n);
            return build(n, n.input(0), n.inputType(0).getElementType());
          }};
}

// Recurrences (RNN/GRU/LSTM, LinearAttention) unroll their static sequence, ~10-20 ops per step;
// longer sequences are refused.
constexpr int64_t kMaxUnrolledSteps = 1024;

// A bool constant of `shape`, true where `keep(index)` holds.
// Masks and index tables built at compile time become weights; beyond this many elements the
// model is refused rather than the compiler's memory exhausted.
constexpr int64_t kMaxBuiltConstantElements = int64_t(1) << 26;

template <typename Keep> Value boolMask(NodeImporter &n, ArrayRef<int64_t> shape, Keep keep) {
  int64_t count = dimsProduct(shape);
  if (count > kMaxBuiltConstantElements)
    throw ImportError("the mask of shape " + dimsString(shape) + " is too large to build");
  auto type = RankedTensorType::get(shape, n.b.getI1Type());
  std::vector<char> bytes(count);
  for (int64_t i = 0; i < (int64_t)bytes.size(); ++i)
    bytes[i] = keep(i);
  return ConstantOp::fromBytes(n.b, n.loc(), type, bytes, "mask");
}

template <typename Op>
Value reduceOrKeep(NodeImporter &n, Value x, ArrayRef<int64_t> axes, bool keep) {
  return axes.empty() ? x : red<Op>(n, x, axes, keep);
}

} // namespace dlc

#endif
