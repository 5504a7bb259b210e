// ONNX ModelProto -> dlc dialect.
#ifndef DLC_COMPILER_IMPORTER_H
#define DLC_COMPILER_IMPORTER_H

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace mlir {
class MLIRContext;
class ModuleOp;
template <typename OpTy> class OwningOpRef;
} // namespace mlir

namespace dlc {

// Values for a model's symbolic (dynamic) input dims, given at compile time.
struct ShapePins {
  std::map<std::string, int64_t> dims;                      // --dim NAME=N: every dim NAME
  std::map<std::string, std::vector<int64_t>> inputShapes; // --input-shape INPUT=AxBxC
  // --sequence INPUT=AxB,CxD: a sequence input's length and element shapes.
  std::map<std::string, std::vector<std::vector<int64_t>>> sequences;
  // --absent INPUT: an optional input that holds nothing (others hold their value).
  std::set<std::string> absent;
  // --input-value INPUT=V[,V...]: an input whose value is fixed (a sample rate, a flag that
  // picks an If branch); it becomes a constant, and the compiled model no longer takes it.
  std::map<std::string, std::vector<std::string>> inputValues;
};

// Imports the model at `path` as `func.func @forward`. On failure returns null and fills
// `errors` with one line per problem, each naming the node and op where there is one; nothing
// is imported partially.
mlir::OwningOpRef<mlir::ModuleOp> importOnnxFile(mlir::MLIRContext &context,
                                                 const std::string &path,
                                                 std::vector<std::string> &errors,
                                                 const ShapePins &pins = {});
// The same for a model already in memory; `path` names it in locations and errors, and
// external data is looked up beside it.
mlir::OwningOpRef<mlir::ModuleOp> importOnnxModel(mlir::MLIRContext &context,
                                                  const std::string &bytes,
                                                  const std::string &path,
                                                  std::vector<std::string> &errors,
                                                  const ShapePins &pins = {});

// ONNX op types (default domain) the importer understands.
std::vector<std::string> supportedOnnxOps();

} // namespace dlc

#endif
