#ifndef DLC_INTERFACES_TD
#define DLC_INTERFACES_TD

include "mlir/IR/OpBase.td"

// The runtime kernel variant an elementwise/reduction op maps to, so that one codegen routine
// serves a whole op family and a new op in the family needs only its ODS line.
def Dlc_KernelKindInterface : OpInterface<"KernelKindInterface"> {
  let cppNamespace = "::dlc";
  let methods = [
    InterfaceMethod<"Name of the runtime enum value implementing this op.",
                    "::llvm::StringRef", "getKernelKind">,
  ];
}

// Ops whose kernel may write the result over an operand of the same type (every element is
// read before the same element is written, at the same index).
def Dlc_InPlaceInterface : OpInterface<"InPlaceInterface"> {
  let cppNamespace = "::dlc";
  let methods = [
    InterfaceMethod<"Operands the result may overwrite.", "llvm::SmallVector<unsigned>",
                    "getInPlaceOperands", (ins), [{}], [{
      llvm::SmallVector<unsigned> candidates;
      for (auto [i, operand] : llvm::enumerate($_op->getOperands()))
        if (operand.getType() == $_op->getResult(0).getType())
          candidates.push_back(i);
      return candidates;
    }]>,
  ];
}

// Ops that reverse-mode autodiff (passes/Autodiff.cpp) can differentiate. The models are
// attached in dialects/Gradients.cpp, one per op, so adding an op's gradient touches one file.
def Dlc_GradientInterface : OpInterface<"GradientInterface"> {
  let cppNamespace = "::dlc";
  let methods = [
    InterfaceMethod<[{
      Builds, at the builder's insertion point, the gradient of each operand from `grad`
      (the gradient of result 0). `needed[i]` says whether operand i needs one; entries left
      null contribute nothing. Fails, with a diagnostic, when the op's gradient cannot be built.
    }], "::mlir::LogicalResult", "buildGradients",
    (ins "::mlir::OpBuilder &":$builder, "::mlir::Value":$grad,
         "::llvm::ArrayRef<bool>":$needed,
         "::llvm::SmallVectorImpl<::mlir::Value> &":$operandGrads)>,
  ];
}

#endif
