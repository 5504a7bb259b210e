#ifndef DLC_PASSES_PASSES_H
#define DLC_PASSES_PASSES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"

#include <functional>
#include <optional>

namespace dlc {
#define GEN_PASS_DECL
#include "passes/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "passes/Passes.h.inc"

// The scratch bytes a target's kernel for an op needs; nullopt where they would exceed the
// tensor size limit (kMaxTensorBytes), which no arena can hold.
using WorkspaceNeed = std::function<std::optional<int64_t>(mlir::Operation *)>;
// What dlc-verify-plan checks; with `workspaceNeed` it also asks the target's kernels for each
// op's workspace instead of trusting dlc.workspace_bytes (each target's pipeline runs it so,
// as dlc-verify-plan-<target>).
mlir::LogicalResult verifyPlan(mlir::func::FuncOp func, const WorkspaceNeed &workspaceNeed);
} // namespace dlc

#endif
