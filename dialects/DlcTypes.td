#ifndef DLC_TYPES_TD
#define DLC_TYPES_TD

include "DlcDialect.td"
include "mlir/IR/AttrTypeBase.td"

// Element types ONNX defines and MLIR 19 lacks. Like float8, they only travel: graph inputs
// and outputs, converted by casts; one element per byte in memory.
class Dlc_StoredFloatType<string name, string typeMnemonic, string about>
    : TypeDef<Dlc_Dialect, name> {
  let mnemonic = typeMnemonic;
  let summary = about;
}

def Dlc_Float4E2M1 : Dlc_StoredFloatType<"Float4E2M1", "f4E2M1",
    "float4 e2m1: sign, 2 exponent bits (bias 1), 1 mantissa bit; finite only">;
def Dlc_Float8E8M0 : Dlc_StoredFloatType<"Float8E8M0", "f8E8M0",
    "float8 e8m0: an unsigned power of two 2^(e - 127); 0xFF is NaN">;

#endif
