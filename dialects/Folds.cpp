// Folds and canonicalizations of the forward ops, and constants as bytes.
#include "dialects/DlcDialect.h"
#include "dialects/Sizes.h"
#include "dialects/Verifiers.h"

#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/PatternMatch.h"

#include <cstring>

using namespace mlir;

namespace dlc {

// x^2 is x * x (the same bits as powf) and x^3 is (x * x) * x (two roundings, a few ulp at
// most from powf): GPT-2's tanh GELU cubes every activation, and powf took 20 ns an element.
LogicalResult PowOp::canonicalize(PowOp op, PatternRewriter &rewriter) {
  auto exponent = op.getRhs().getDefiningOp<ConstantOp>();
  auto values = exponent ? dyn_cast<DenseFPElementsAttr>(exponent.getValue()) : nullptr;
  if (!values || !values.isSplat() || op.getLhs().getType() != op.getType())
    return failure();
  const APFloat power = values.getSplatValue<APFloat>();
  if (power.isExactlyValue(2.0)) {
    rewriter.replaceOpWithNewOp<MulOp>(op, op.getType(), op.getLhs(), op.getLhs());
    return success();
  }
  if (!power.isExactlyValue(3.0))
    return failure();
  Value square = rewriter.create<MulOp>(op.getLoc(), op.getType(), op.getLhs(), op.getLhs());
  rewriter.replaceOpWithNewOp<MulOp>(op, op.getType(), square, op.getLhs());
  return success();
}

LogicalResult TransposeOp::canonicalize(TransposeOp op, PatternRewriter &rewriter) {
  // The dims larger than 1 must keep their order; those of size 1 may go anywhere.
  ArrayRef<int64_t> shape = cast<RankedTensorType>(op.getInput().getType()).getShape();
  int64_t previous = -1;
  for (int64_t dim : op.getPerm()) {
    if (shape[dim] == 1)
      continue;
    if (dim < previous)
      return failure();
    previous = dim;
  }
  rewriter.replaceOpWithNewOp<ReshapeOp>(op, op.getType(), op.getInput());
  return success();
}

namespace {

// Whether the constant `attr` holds `value` in every element (bools never: they are not
// arithmetic). Reads the stored bytes in place: a large weight is not copied to be checked.
bool holdsOnly(Attribute attr, double value) {
  auto elements = dyn_cast_or_null<ElementsAttr>(attr);
  if (!elements || elements.getElementType().isInteger(1))
    return false;
  Type element = elements.getElementType();
  ArrayRef<char> bytes;
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(elements))
    bytes = resource.getRawHandle().getBlob()->getData();
  else if (auto dense = dyn_cast<DenseElementsAttr>(elements))
    bytes = dense.getRawData(); // one element when splat
  int64_t width = elementBytes(element);
  if (bytes.empty() || width <= 0 || bytes.size() % width)
    return false;
  auto all = [&](auto zero) {
    using T = decltype(zero);
    for (size_t at = 0; at < bytes.size(); at += sizeof(T)) {
      T v;
      std::memcpy(&v, bytes.data() + at, sizeof v);
      if (v != T(value))
        return false;
    }
    return true;
  };
  if (element.isF32())
    return all(0.0f);
  if (element.isF64())
    return all(0.0);
  if (!element.isInteger())
    return false;
  switch (width) {
  case 1: return all(uint8_t(0));
  case 2: return all(uint16_t(0));
  case 4: return all(uint32_t(0));
  case 8: return all(uint64_t(0));
  }
  return false;
}

// `x` when `other` (the other operand's constant, if any) is the identity and the result has
// x's type; else no fold.
OpFoldResult identityFold(Operation *op, Value x, Attribute other, double identity) {
  return x.getType() == op->getResult(0).getType() && holdsOnly(other, identity)
             ? OpFoldResult(x)
             : OpFoldResult();
}

// The same for an op whose identity works on either side (add, mul); `lhs` and `rhs` are
// the operands' constants, if any.
OpFoldResult eitherSideIdentityFold(Operation *op, Attribute lhs, Attribute rhs,
                                    double identity) {
  if (OpFoldResult folded = identityFold(op, op->getOperand(0), rhs, identity))
    return folded;
  return identityFold(op, op->getOperand(1), lhs, identity);
}

} // namespace

OpFoldResult AddOp::fold(FoldAdaptor adaptor) {
  return eitherSideIdentityFold(*this, adaptor.getLhs(), adaptor.getRhs(), 0);
}

OpFoldResult SubOp::fold(FoldAdaptor adaptor) {
  return identityFold(*this, getLhs(), adaptor.getRhs(), 0);
}

OpFoldResult MulOp::fold(FoldAdaptor adaptor) {
  return eitherSideIdentityFold(*this, adaptor.getLhs(), adaptor.getRhs(), 1);
}

OpFoldResult DivOp::fold(FoldAdaptor adaptor) {
  return identityFold(*this, getLhs(), adaptor.getRhs(), 1);
}

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

std::vector<char> elementsBytes(ElementsAttr value) {
  auto type = cast<RankedTensorType>(value.getType());
  std::vector<char> bytes(tensorBytes(type));
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(value)) {
    ArrayRef<char> data = resource.getRawHandle().getBlob()->getData();
    std::memcpy(bytes.data(), data.data(), std::min(bytes.size(), data.size()));
    return bytes;
  }
  auto dense = cast<DenseElementsAttr>(value);
  if (type.getElementType().isInteger(1)) { // DenseElementsAttr packs bools as bits
    for (auto [i, bit] : llvm::enumerate(dense.getValues<bool>()))
      bytes[i] = bit;
    return bytes;
  }
  ArrayRef<char> raw = dense.getRawData(); // one element when splat
  for (size_t offset = 0; offset < bytes.size(); offset += raw.size())
    std::memcpy(bytes.data() + offset, raw.data(), std::min(raw.size(), bytes.size() - offset));
  return bytes;
}

std::vector<char> ConstantOp::getBytes() { return elementsBytes(getValue()); }

std::vector<float> ConstantOp::getFloats() {
  const std::vector<char> bytes = getBytes();
  std::vector<float> floats(bytes.size() / sizeof(float));
  std::memcpy(floats.data(), bytes.data(), floats.size() * sizeof(float));
  return floats;
}

std::optional<float> scalarF32Constant(Value v) {
  auto constant = v.getDefiningOp<ConstantOp>();
  if (!constant)
    return std::nullopt;
  auto type = cast<RankedTensorType>(constant.getType());
  if (!type.getElementType().isF32() || type.getNumElements() != 1)
    return std::nullopt;
  std::vector<char> bytes = elementsBytes(constant.getValue());
  float value;
  std::memcpy(&value, bytes.data(), sizeof value);
  return value;
}

ConstantOp ConstantOp::fromBytes(OpBuilder &builder, Location loc, RankedTensorType type,
                                 ArrayRef<char> bytes, StringRef blobName) {
  ElementsAttr value;
  if (type.getElementType().isInteger(1)) {
    SmallVector<bool> bits(bytes.begin(), bytes.end());
    value = DenseElementsAttr::get(type, bits);
  } else if (bytes.size() <= 64) {
    value = DenseElementsAttr::getFromRawBuffer(type, bytes);
  } else {
    auto blob = HeapAsmResourceBlob::allocateAndCopyInferAlign(bytes);
    value = DenseResourceElementsAttr::get(type, blobName, std::move(blob));
  }
  return builder.create<ConstantOp>(loc, type, value);
}

ConstantOp ConstantOp::fromFloats(OpBuilder &builder, Location loc, RankedTensorType type,
                                  ArrayRef<float> floats, StringRef blobName) {
  return fromBytes(builder, loc, type,
                   ArrayRef<char>(reinterpret_cast<const char *>(floats.data()),
                                  floats.size() * sizeof(float)),
                   blobName);
}

} // namespace dlc
