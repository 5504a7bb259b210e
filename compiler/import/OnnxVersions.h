// Which version of an ONNX op a model's opset selects, from the op history of the onnx release
// dlc follows (compiler/import/OnnxOpVersions.inc). Debian's libonnx knows schemas only up to opset
// 17, so for newer models this table, not the library, says what a node means.
#ifndef DLC_COMPILER_ONNXVERSIONS_H
#define DLC_COMPILER_ONNXVERSIONS_H

#include <string>

namespace dlc {

// The newest default-domain opset dlc's op history covers.
int onnxMaxOpset();

// The opset at which the definition of default-domain op `op` that is in force at `opset` was
// introduced (e.g. ReduceMax at opset 19 -> 18); 0 when the op is unknown or not yet defined
// at `opset`.
int onnxOpVersion(const std::string &op, int opset);

// The first opset that defines `op`; 0 when the op is unknown.
int onnxOpFirstVersion(const std::string &op);

} // namespace dlc

#endif
