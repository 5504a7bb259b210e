// Checks shared by the op verifiers of the dialect's translation units (DlcOps.cpp, WindowOps.cpp,
// TrainingOps.cpp). Include only from those files.
#ifndef DLC_DIALECTS_VERIFIERS_H
#define DLC_DIALECTS_VERIFIERS_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"

namespace dlc {

mlir::RankedTensorType tensorType(mlir::Value v);
// The op's first result has shape `expected`.
mlir::LogicalResult checkResultShape(mlir::Operation *op, llvm::ArrayRef<int64_t> expected);
// Every value has the shape of `like`.
mlir::LogicalResult sameShapes(mlir::Operation *op, mlir::ValueRange values, mlir::Value like);
// A fused activation (dlc-fuse-epilogues) must be one the runtime has, with its parameters.
mlir::LogicalResult verifyEpilogue(mlir::Operation *op);
// Checks window attributes and returns the expected [N, C_out, spatial...] shape.
mlir::FailureOr<llvm::SmallVector<int64_t>>
verifyWindow(mlir::Operation *op, llvm::ArrayRef<int64_t> input, llvm::ArrayRef<int64_t> kernel,
             llvm::ArrayRef<int64_t> strides, llvm::ArrayRef<int64_t> pads,
             llvm::ArrayRef<int64_t> dilations, int64_t outChannels, bool ceilMode);
// A global pool's result shape for input `x` (rank >= 3): [N, C, 1, ...].
llvm::SmallVector<int64_t> globalPooledShape(llvm::ArrayRef<int64_t> x);
// The gathered shape: `in` with its `axis` dim replaced by the indices' dims. Used for the
// result of dlc.gather and for the gradient operand of dlc.gather_grad.
mlir::FailureOr<llvm::SmallVector<int64_t>> gatheredShape(mlir::Operation *op,
                                                          llvm::ArrayRef<int64_t> in,
                                                          llvm::ArrayRef<int64_t> indices,
                                                          int64_t axis);
// A strided slice of `in` with `out` elements per dim stays inside `in`. The attributes may
// come from hand-written IR, so the last index is computed without overflow.
mlir::LogicalResult verifySliceBounds(mlir::Operation *op, llvm::ArrayRef<int64_t> in,
                                      llvm::ArrayRef<int64_t> out,
                                      llvm::ArrayRef<int64_t> starts,
                                      llvm::ArrayRef<int64_t> steps);

} // namespace dlc

#endif
