#include "compiler/codegen/Emitter.h"
#include "dialects/DlcDialect.h"
#include "dialects/Sizes.h"

#include <cstring>

using namespace mlir;

namespace dlc {

FailureOr<SmallVector<int64_t>> batchOffsets(Operation *op, ArrayRef<int64_t> operandShape,
                                             ArrayRef<int64_t> batch) {
  auto operandBatch = operandShape.drop_back(2);
  int64_t matrix = operandShape[operandShape.size() - 1] * operandShape[operandShape.size() - 2];
  SmallVector<int64_t> strides = broadcastStrides(operandBatch, batch);
  int64_t count = 1;
  for (int64_t d : batch) {
    count *= d; // within the tensor size limit: the product's output holds count matrices
    if (count > kMaxBatchMatrices)
      return op->emitError("a batch of ")
             << dimsString(batch) << " matrices is more than dlc's code generation supports ("
             << kMaxBatchMatrices << ")";
  }
  SmallVector<int64_t> offsets = flatOffsets(batch, strides);
  for (int64_t &offset : offsets)
    offset *= matrix;
  return offsets;
}

namespace {

LogicalResult emitMatMul(Operation *op, KernelEmitter &e) {
  auto matmul = cast<MatMulOp>(op);
  auto a = tensorType(matmul.getLhs()).getShape(), b = tensorType(matmul.getRhs()).getShape();
  auto out = tensorType(matmul.getOutput()).getShape();
  auto batch = out.drop_back(2);
  FailureOr<SmallVector<int64_t>> aOffsets = batchOffsets(op, a, batch);
  if (failed(aOffsets))
    return failure();
  SmallVector<int64_t> bOffsets = *batchOffsets(op, b, batch); // the same count as aOffsets
  std::string aName = e.array(*aOffsets), bName = e.array(bOffsets);
  Type element = tensorType(matmul.getOutput()).getElementType();
  e.line(std::string("dlc::rt::batchedMatmul") +
         (element.isInteger(32) ? "I32(" : element.isF64() ? "F64(" : "F32(") +
         e.ptr(matmul.getLhs()) + ", " + aName + ", " +
         e.ptr(matmul.getRhs()) + ", " + bName + ", " + e.ptr(matmul.getOutput()) + ", " +
         std::to_string(aOffsets->size()) + ", " + std::to_string(a[a.size() - 2]) + ", " +
         std::to_string(b.back()) + ", " + std::to_string(a.back()) + ");");
  return success();
}

LogicalResult emitAttention(Operation *op, KernelEmitter &e) {
  auto attention = cast<AttentionOp>(op);
  const AttentionGeometry g = *attentionGeometry(attention); // verified
  if (product(g.batch) > kMaxBatchMatrices)
    return op->emitError("a batch of ")
           << dimsString(g.batch) << " attention heads is more than dlc's code generation supports ("
           << kMaxBatchMatrices << ")";
  // Each entry's first element, and the rows' stride (the next-to-last dim's).
  auto matrix = [&](const AttentionView &view) {
    return "dlc::rt::AttentionMatrix{" + e.array(flatOffsets(g.batch, view.strides, view.offset)) +
           ", " + std::to_string(view.strides[view.strides.size() - 2]) + "}";
  };
  // Keys [D, T] with contiguous rows, or read as rows of D (the transpose of split heads).
  const bool keysByRow = g.keyMatrix.strides.back() != 1;
  AttentionView keys = g.keyMatrix;
  if (keysByRow)
    std::swap(keys.strides[keys.strides.size() - 1], keys.strides[keys.strides.size() - 2]);
  std::string bias = "nullptr", offsets = "nullptr";
  int64_t rowStride = 0, columnStride = 0;
  if (Value biasValue = attention.getBias()) {
    rowStride = g.bias.strides[g.bias.strides.size() - 2];
    columnStride = g.bias.strides.back();
    bias = e.ptr(biasValue);
    offsets = e.array(flatOffsets(g.batch, g.bias.strides, g.bias.offset));
  }
  std::optional<SmallVector<int64_t>> visible = attentionVisibleKeys(attention);
  const std::string visibleKeys = visible ? e.array(*visible) : "nullptr";
  e.line("dlc::rt::attentionF32(dlc::rt::AttentionParams{" + std::to_string(product(g.batch)) +
         ", " + std::to_string(g.queries) + ", " + std::to_string(g.depth) + ", " +
         std::to_string(g.keys) + ", " + std::to_string(g.valueDepth) + ", " +
         floatLiteral(attention.getScale().convertToFloat()) + ", " +
         (attention.getDivide() ? "true" : "false") + ", " + matrix(g.query) + ", " +
         matrix(keys) + ", " + matrix(g.values) + ", " + matrix(g.output) + ", " +
         (keysByRow ? "true" : "false") + ", " + bias + ", " + offsets + ", " +
         std::to_string(rowStride) + ", " + std::to_string(columnStride) + ", " + visibleKeys +
         "}, " + e.ptr(attention.getQuery()) + ", " + e.ptr(attention.getKeys()) + ", " +
         e.ptr(attention.getValues()) + ", " + e.ptr(attention.getOutput()) + ", " +
         e.workspace(op) + ");");
  return success();
}

LogicalResult emitRotary(Operation *op, KernelEmitter &e) {
  auto rotary = cast<RotaryOp>(op);
  const SmallVector<int64_t> x = *rotaryInputShape(rotary); // verified
  SmallVector<int64_t> stored = stridesOf(tensorType(rotary.getInput()).getShape()), input;
  for (size_t i = 0; i < x.size(); ++i)
    input.push_back(rotary.getPerm() ? stored[(*rotary.getPerm())[i]] : stored[i]);
  SmallVector<int64_t> cos = broadcastStrides(tensorType(rotary.getCos()).getShape(), x),
                       sin = broadcastStrides(tensorType(rotary.getSin()).getShape(), x);
  auto leading = [&](ArrayRef<int64_t> strides) { return e.array(strides.drop_back()); };
  e.line("dlc::rt::rotaryF32(dlc::rt::RotaryParams{" + std::to_string(x.size() - 1) + ", " +
         leading(x) + ", " + leading(input) + ", " + leading(cos) + ", " + leading(sin) + ", " +
         std::to_string(x.back()) + ", " + std::to_string(cos.back()) + ", " +
         std::to_string(sin.back()) + "}, " + e.ptr(rotary.getInput()) + ", " +
         e.ptr(rotary.getCos()) + ", " + e.ptr(rotary.getSin()) + ", " +
         e.ptr(rotary.getOutput()) + ");");
  return success();
}

LogicalResult emitGemm(Operation *op, KernelEmitter &e) {
  auto gemm = cast<GemmOp>(op);
  auto a = tensorType(gemm.getA()).getShape(), b = tensorType(gemm.getB()).getShape();
  auto out = tensorType(gemm.getOutput()).getShape();
  int64_t k = gemm.getTransA() ? a[0] : a[1];
  float beta = gemm.getBeta().convertToFloat();
  bool accumulate = gemm.getC() && beta != 0.0f;
  OpOperand &bUse = gemm.getBMutable();
  std::optional<WeightPacking> packing = weightPacking(bUse);
  // A bias (C of one value per column or per row, beta 1) is added by the packed product as
  // it finishes each tile: no pass writing C broadcast over Y first (a linear layer's 1500 x
  // 1536 output: 9 MB written and read back). The product is summed before the bias is
  // added, as ONNX defines it; Y accumulating onto C added it before the last k blocks.
  std::string biasEpilogue;
  if (accumulate && beta == 1.0f && packing) {
    SmallVector<int64_t> strides = broadcastStrides(tensorType(gemm.getC()).getShape(), out);
    const int64_t count = tensorType(gemm.getC()).getNumElements();
    if (count == out[1] && strides[1] == 1 && (strides[0] == 0 || out[0] == 1))
      biasEpilogue = "dlc::rt::GemmEpilogue{nullptr, " + e.ptr(gemm.getC()) +
                     ", nullptr, 0, false, 0.0f, 0.0f}";
    else if (count == out[0] && strides[0] == 1 && (strides[1] == 0 || out[1] == 1))
      biasEpilogue = "dlc::rt::GemmEpilogue{" + e.ptr(gemm.getC()) +
                     ", nullptr, nullptr, 0, false, 0.0f, 0.0f}";
    accumulate = biasEpilogue.empty();
  }
  if (accumulate) {
    // Y = beta * C broadcast, then the product accumulates into Y.
    std::string cStrides = e.array(broadcastStrides(tensorType(gemm.getC()).getShape(), out));
    std::string zero = e.array({0, 0}), shape = e.array(out);
    e.line("static const float beta = " + floatLiteral(beta) + ";");
    e.line("dlc::rt::binary<float>(dlc::rt::BinaryKind::Mul, " + e.ptr(gemm.getC()) + ", " +
           cStrides + ", &beta, " + zero + ", " + e.ptr(gemm.getOutput()) + ", " + shape +
           ", 2);");
  }
  // A fused activation runs on the product, still in cache.
  dlc::rt::Epilogue epilogue = epilogueOf(op);
  std::string applyEpilogue =
      epilogue.activation == dlc::rt::Activation::None
          ? ""
          : "dlc::rt::applyEpilogue(" + epilogueLiteral(epilogue) + ", " +
                e.ptr(gemm.getOutput()) + ", " + std::to_string(out[0] * out[1]) + ");";
  if (packing) {
    e.line(std::string("dlc::rt::sgemmPackedB(") + (gemm.getTransA() ? "true" : "false") + ", " +
           std::to_string(out[0]) + ", " + std::to_string(out[1]) + ", " + std::to_string(k) +
           ", " + floatLiteral(gemm.getAlpha().convertToFloat()) + ", " + e.ptr(gemm.getA()) +
           ", " + std::to_string(a[1]) + ", " + e.packedWeight(bUse, *packing) + ", " +
           (accumulate ? "1.0f" : "0.0f") + ", " + e.ptr(gemm.getOutput()) + ", " +
           std::to_string(out[1]) + (biasEpilogue.empty() ? "" : ", " + biasEpilogue) + ");");
    if (!applyEpilogue.empty())
      e.line(applyEpilogue);
    return success();
  }
  e.line(std::string("dlc::rt::sgemm(") + (gemm.getTransA() ? "true" : "false") + ", " +
         (gemm.getTransB() ? "true" : "false") + ", " + std::to_string(out[0]) + ", " +
         std::to_string(out[1]) + ", " + std::to_string(k) + ", " +
         floatLiteral(gemm.getAlpha().convertToFloat()) + ", " + e.ptr(gemm.getA()) + ", " +
         std::to_string(a[1]) + ", " + e.ptr(gemm.getB()) + ", " + std::to_string(b[1]) + ", " +
         (accumulate ? "1.0f" : "0.0f") + ", " + e.ptr(gemm.getOutput()) + ", " +
         std::to_string(out[1]) + ");");
  if (!applyEpilogue.empty())
    e.line(applyEpilogue);
  return success();
}

// Packed bytes of a float32 constant from its plain bytes, by a runtime packing function.
template <typename Pack>
std::vector<char> packFloats(const std::vector<char> &plain, size_t packedBytes, Pack pack) {
  std::vector<float> source(plain.size() / sizeof(float));
  std::memcpy(source.data(), plain.data(), source.size() * sizeof(float));
  std::vector<char> packed(packedBytes);
  pack(source.data(), reinterpret_cast<float *>(packed.data()));
  return packed;
}

} // namespace

std::optional<WeightPacking> weightPacking(OpOperand &use) {
  if (!isa_and_nonnull<ConstantOp>(use.get().getDefiningOp()) ||
      !tensorType(use.get()).getElementType().isF32())
    return std::nullopt;
  Operation *owner = use.getOwner();
  if (auto conv = dyn_cast<ConvOp>(owner)) {
    dlc::rt::ConvParams params = convParams(conv);
    if (use.getOperandNumber() != conv.getWeightMutable().getOperandNumber() ||
        !dlc::rt::convPacksWeights(params))
      return std::nullopt;
    std::string layout =
        std::string("conv ") +
        dlc::rt::convWeightLayoutName(dlc::rt::convWeightLayout(params)) + " " +
        std::to_string(params.groups);
    return WeightPacking{layout, [params](const auto &plain) {
                           return packFloats(plain, dlc::rt::packedConvWeightBytes(params),
                                             [&](const float *w, float *packed) {
                                               dlc::rt::packConvWeights(params, w, packed);
                                             });
                         }};
  }
  if (auto gemm = dyn_cast<GemmOp>(owner)) {
    if (use.getOperandNumber() != gemm.getBMutable().getOperandNumber())
      return std::nullopt;
    auto b = tensorType(gemm.getB()).getShape();
    bool transB = gemm.getTransB();
    int64_t k = transB ? b[1] : b[0], n = transB ? b[0] : b[1], ldb = b[1];
    return WeightPacking{std::string("gemm B") + (transB ? "T" : ""), [=](const auto &plain) {
                           return packFloats(plain, dlc::rt::packedGemmBBytes(k, n),
                                             [&](const float *x, float *packed) {
                                               dlc::rt::packGemmB(transB, k, n, x, ldb, packed);
                                             });
                         }};
  }
  return std::nullopt;
}

void addLinalgEmitters(EmitterTable &table) {
  table.forOp<MatMulOp>() = emitMatMul;
  table.forOp<GemmOp>() = emitGemm;
  table.forOp<AttentionOp>() = emitAttention;
  table.forOp<RotaryOp>() = emitRotary;
  table.forOp<DetOp>() = [](Operation *op, KernelEmitter &e) {
    auto det = cast<DetOp>(op);
    auto shape = tensorType(det.getInput()).getShape();
    e.line("dlc::rt::detF32(" + e.ptr(det.getInput()) + ", " + e.ptr(det.getOutput()) + ", " +
           std::to_string(tensorType(det.getOutput()).getNumElements()) + ", " +
           std::to_string(shape.back()) + ", " + e.workspace(op) + ");");
    return success();
  };
}

} // namespace dlc
