#ifndef DLC_PASSES_TD
#define DLC_PASSES_TD

include "mlir/Pass/PassBase.td"

def AssignBuffers : Pass<"dlc-assign-buffers", "mlir::func::FuncOp"> {
  let summary = "Give every intermediate value and op workspace a byte range in one arena";
  let description = [{
    Graph inputs are read from the caller's buffers, graph outputs are written into the
    caller's buffers and constants live in the weights blob, so only the remaining op results
    (and op workspaces) get a `dlc.arena_offset` / `dlc.workspace_offset`. Every range is
    64-byte aligned and, in this version, disjoint from all others: no reuse.
    The function gets `dlc.arena_bytes`.
  }];
  let dependentDialects = ["dlc::DlcDialect"];
}

#endif
