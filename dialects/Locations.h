// An op's ONNX origin in its location: the importer gives every op
// FusedLoc<"OpType">[NameLoc(node name), NameLoc(output name)] (onnxNodeLocation); passes
// that fuse ops keep that form (locationComputing), and diagnostics, profiles and memory
// reports read it back.
#ifndef DLC_DIALECTS_LOCATIONS_H
#define DLC_DIALECTS_LOCATIONS_H

#include "mlir/IR/Location.h"

#include <string>

namespace dlc {

// The location of an op imported from ONNX node `node` (of type `opType`, read from `file`)
// whose first output is `value`.
mlir::Location onnxNodeLocation(mlir::MLIRContext *context, llvm::StringRef opType,
                                llvm::StringRef node, llvm::StringRef value,
                                mlir::Location file);
// The location of an op that now computes `consumer`'s value: `producer`'s ONNX node and op
// type, `consumer`'s ONNX value, so that profiles name the node and dumps hand over the
// value it computes. `consumer` itself when either is not an imported op's location.
mlir::Location locationComputing(mlir::Location producer, mlir::Location consumer);

// The ONNX node name ("" when the op did not come from a node).
std::string onnxNodeName(mlir::Location loc);
// The ONNX op type ("" when unknown).
std::string onnxOpType(mlir::Location loc);
// The name of the ONNX value the op produces, else its node name.
std::string onnxValueName(mlir::Location loc);
// The name of the ONNX value the op's node produces ("" when the location names no value).
std::string onnxComputedValue(mlir::Location loc);

} // namespace dlc

#endif
