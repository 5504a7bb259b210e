// The CUDA target's Cast kernels: one thread per element converting with the CPU cast's
// per-element definitions (runtime/scalar_ops.h), so both targets give the same bits.
#include "compiler/codegen/cuda/CudaEmitter.h"
#include "dialects/DlcDialect.h"

using namespace mlir;

namespace dlc {
namespace cudagen {
namespace {

// The small float formats' enumerator in scalar_ops.h (dlc::rt::scalar::MiniFloat), or "".
std::string miniFloatName(Type t) {
  return t.isFloat8E4M3FN()       ? "E4M3FN"
         : t.isFloat8E4M3FNUZ()   ? "E4M3FNUZ"
         : t.isFloat8E5M2()       ? "E5M2"
         : t.isFloat8E5M2FNUZ()   ? "E5M2FNUZ"
         : isa<Float4E2M1Type>(t) ? "E2M1"
                                  : "";
}

// The types kept one per byte that only casts convert (float8, float4, 4- and 2-bit integers).
bool isByteOnly(Type t) {
  return !miniFloatName(t).empty() || isa<Float8E8M0Type>(t) || t.isInteger(4) || t.isInteger(2);
}

// Cast between float32/64, the integers, bool, float16 and bfloat16 (the 16-bit floats through
// float, with the CPU's rounding). Casts from or to the byte-only types convert through a wide
// value, double when either side is a float and int64 otherwise, as the CPU's cast does.
LogicalResult emitCast(Operation *op, KernelEmitter &e) {
  auto castOp = cast<CastOp>(op);
  Type from = tensorType(castOp.getInput()).getElementType();
  Type to = tensorType(castOp.getOutput()).getElementType();
  auto convertible = [](Type t) {
    return t.isF32() || t.isF64() || t.isF16() || t.isBF16() || isByteOnly(t) ||
           (isa<IntegerType>(t) &&
            llvm::is_contained({1u, 8u, 16u, 32u, 64u}, cast<IntegerType>(t).getWidth()));
  };
  if (!convertible(from) || !convertible(to))
    return noKernelFor(op, "Cast");
  const bool throughWide = isByteOnly(from) || isByteOnly(to);
  const std::string wide = !throughWide ? "auto"
                           : isa<FloatType, Float8E8M0Type, Float4E2M1Type>(from) ||
                                   isa<FloatType, Float8E8M0Type, Float4E2M1Type>(to)
                               ? "double"
                               : "int64_t";
  const std::string scalar = "dlc::rt::scalar::";
  auto format = [&](Type t) {
    return scalar + "miniFloatFormat(" + scalar + "MiniFloat::" + miniFloatName(t) + ")";
  };
  const std::string saturate = castOp.getSaturate() ? "true" : "false";
  std::string read = from.isF16()    ? scalar + "halfToFloat(x[i])"
                     : from.isBF16() ? scalar + "bfloatToFloat(x[i])"
                     : !miniFloatName(from).empty()
                         ? scalar + "decodeMiniFloat(" + format(from) + ", x[i])"
                     : isa<Float8E8M0Type>(from) ? scalar + "decodeE8M0(x[i])"
                                                 : "x[i]";
  std::string write;
  if (!miniFloatName(to).empty())
    write = scalar + "encodeMiniFloat(" + format(to) + ", v, " + saturate + ")";
  else if (isa<Float8E8M0Type>(to))
    write = scalar + "encodeE8M0(v, " + saturate + ", " +
            roundingEnumerator(castOp.getRoundMode()) + ")";
  else if (to.isInteger(4) || to.isInteger(2))
    write = cType(to) + "(" + scalar + "wrapToBits(" +
            (wide == "double" ? scalar + "truncatedLowByte(v)" : std::string("v")) + ", " +
            std::to_string(to.getIntOrFloatBitWidth()) + ", " +
            (to.isUnsignedInteger() ? "false" : "true") + "))";
  else if (to.isF16())
    write = scalar + "floatToHalf(float(v))";
  else if (to.isBF16())
    write = scalar + "floatToBfloat(float(v))";
  else if (to.isInteger(1))
    write = "uint8_t(v != 0)";
  else
    write = scalar + "convertValue<" + cType(to) + ">(v)";
  int64_t n = tensorType(castOp.getOutput()).getNumElements();
  launchKernel(e, "const " + cType(from) + " *x, " + cType(to) + " *y",
               threadIndex(n) + "  const " + wide + " v = " + read + ";\n  y[i] = " + write + ";\n",
               n, e.ptr(castOp.getInput()) + ", " + e.ptr(castOp.getOutput()));
  return success();
}

} // namespace

void addCastEmitters(EmitterTable &table) { table.forOp<CastOp>() = emitCast; }

} // namespace cudagen
} // namespace dlc
