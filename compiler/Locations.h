// Reading the ONNX origin back from an op's location: the importer gives every op
// FusedLoc<"OpType">[NameLoc(node name), NameLoc(output name)].
#ifndef DLC_COMPILER_LOCATIONS_H
#define DLC_COMPILER_LOCATIONS_H

#include "mlir/IR/Location.h"

#include <string>

namespace dlc {

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
