// Compile-time evaluation of dlc ops whose operands are all known, by the CPU kernels that
// run them at run time, called with the kernel geometry their emitters write (DlcDialect.h):
// no op has a second, compile-time definition. The importer evaluates a node whose inputs are
// all constants this way (shape arithmetic, the pads F.pad computes, constant subgraphs).
#ifndef DLC_COMPILER_IMPORT_EVALUATE_H
#define DLC_COMPILER_IMPORT_EVALUATE_H

#include "mlir/IR/Operation.h"

#include <optional>
#include <string>
#include <vector>

namespace dlc {

// The most bytes one evaluated value may have. Larger results stay run-time ops.
constexpr int64_t kMaxEvaluatedBytes = int64_t(1) << 20;

// A float result larger than its operands (Expand, ConstantOfShape, a widening Cast) is
// evaluated only up to this size: parameter vectors such as Resize's scales, never weights.
constexpr int64_t kMaxGrownFloatBytes = 256;

struct Evaluation {
  // The bytes of each requested result, in ConstantOp::getBytes' layout; empty when some op
  // has no evaluator or a value would be above the caps (the ops then run at run time).
  std::vector<std::vector<char>> results;
  // Why the data is invalid (an index out of range), for an error on the node; "" otherwise.
  std::string error;
};

// Runs `ops` in order. Each operand is a dlc.constant or the result of an earlier op of
// `ops`. Ops that would blow small float constants up into large weights (a float result
// larger than the op's operands and than kMaxGrownFloatBytes: Expand, Tile, ConstantOfShape,
// a widening Cast or a dequantization) are not evaluated; integer and bool results (shape
// arithmetic) always are, within the caps.
Evaluation evaluateOps(llvm::ArrayRef<mlir::Operation *> ops, llvm::ArrayRef<mlir::Value> results);

} // namespace dlc

#endif
