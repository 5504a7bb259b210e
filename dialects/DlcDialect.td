#ifndef DLC_DIALECT_TD
#define DLC_DIALECT_TD

include "mlir/IR/OpBase.td"

def Dlc_Dialect : Dialect {
  let name = "dlc";
  let summary = "Tensor-level deep-learning ops with static shapes, close to ONNX but normalized";
  let description = [{
    Ops have value semantics on statically shaped ranked tensors. Broadcasting is explicit in
    operand and result types; attribute-like ONNX inputs (shapes, axes, slice bounds) are
    attributes. Memory decisions are attached later as attributes by the planning passes:
    `dlc.arena_offset` (byte offset of an op's result in the function's arena) and
    `dlc.workspace_offset` (scratch memory of the op), with `dlc.arena_bytes` on the function.
  }];
  let cppNamespace = "::dlc";
  let hasConstantMaterializer = 1;
  let useDefaultTypePrinterParser = 1;
}

class Dlc_Op<string mnemonic, list<Trait> traits = []> : Op<Dlc_Dialect, mnemonic, traits>;

#endif
