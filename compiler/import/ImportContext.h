// Internal to the importer: the state one ONNX node's import function sees.
#ifndef DLC_COMPILER_IMPORTCONTEXT_H
#define DLC_COMPILER_IMPORTCONTEXT_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "onnx/onnx_pb.h"

#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace dlc {

// Thrown by import functions; the importer prefixes the node and op.
struct ImportError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A tensor whose value is known at compile time (initializer, Constant node, or folded shape
// arithmetic), stored densely little-endian with bools as one byte.
struct ConstTensor {
  int32_t dtype = 0; // onnx::TensorProto::DataType
  std::vector<int64_t> shape;
  std::vector<char> bytes;
  int64_t numElements() const;
  std::vector<int64_t> asInts() const;   // any integer dtype
  std::vector<double> asDoubles() const; // any numeric dtype
};

ConstTensor constFromProto(const onnx::TensorProto &proto);

// The MLIR element type of an ONNX TensorProto data type; null when dlc does not support it.
mlir::Type elementTypeFor(mlir::MLIRContext &ctx, int32_t dtype);
// The ONNX data type elementTypeFor maps to `element`; 0 when none.
int32_t onnxDtypeOf(mlir::Type element);
// float8 and the 4- and 2-bit integers: no kernel computes on them; only casts and
// (de)quantization read them.
bool isCastOnlyElementType(mlir::Type element);

// Maps an ONNX axis in [-rank, rank) to [0, rank); throws when out of range.
int64_t normalizeAxis(int64_t axis, int64_t rank);

// What a node's import function may ask about the values it reads.
class ValueScope {
public:
  virtual ~ValueScope() = default;
  virtual mlir::Value value(const std::string &name) = 0;
  // The value when it is known at compile time, else null.
  virtual const ConstTensor *constant(const std::string &name) = 0;
  virtual mlir::RankedTensorType type(const std::string &name) = 0;
  // Why `name` is not known at compile time, for errors.
  virtual std::string whyNotConstant(const std::string &name) = 0;
  // Whether `name` is a graph initializer: a weight, which training may update, so its value
  // is never folded into another constant.
  virtual bool isInitializer(const std::string &name) = 0;
};

class NodeImporter {
public:
  NodeImporter(mlir::OpBuilder &builder, mlir::Location location, const onnx::NodeProto &node,
               int opset, int version, ValueScope &scope)
      : b(builder), location(location), node(node), opset(opset), version(version),
        scope(scope) {}

  mlir::OpBuilder &b;
  mlir::Location location;
  const onnx::NodeProto &node;
  int opset;
  // The opset at which the op's definition in force was introduced (ReduceMax at opset 19:
  // 18); import functions branch on it where an op's meaning changed.
  int version;

  mlir::Location loc() const { return location; }
  bool hasInput(int i) const {
    return i >= 0 && i < node.input_size() && !node.input(i).empty();
  }
  mlir::Value input(int i) const;
  mlir::RankedTensorType inputType(int i) const;
  // A compile-time input (shape, axes, bounds); throws when it is not a constant.
  const ConstTensor &constInput(int i) const;
  // The input's value when it is a compile-time constant, else null.
  const ConstTensor *constantOrNull(int i) const;

  const onnx::AttributeProto *attr(const std::string &name) const;
  // attr(), but throws when the attribute has another type than `expectedType`.
  const onnx::AttributeProto *typedAttr(const std::string &name, int expectedType) const;
  int64_t intAttr(const std::string &name, int64_t fallback) const;
  float floatAttr(const std::string &name, float fallback) const;
  std::string stringAttr(const std::string &name, const std::string &fallback) const;
  std::vector<int64_t> intsAttr(const std::string &name,
                                std::vector<int64_t> fallback = {}) const;
  std::vector<double> floatsAttr(const std::string &name) const; // empty when absent
  std::vector<std::string> stringsAttr(const std::string &name) const;

private:
  ValueScope &scope;
};

// How one op is imported. Result types come from the import function itself (from its input
// types and attributes), never from ONNX's shape inference: the library dlc links knows only
// the schemas of its own release.
struct OpImport {
  using Results = llvm::SmallVector<mlir::Value, 2>;
  OpImport(std::vector<int> staticInputs, std::function<Results(NodeImporter &)> build)
      : staticInputs(std::move(staticInputs)), build(std::move(build)) {}
  // Most ops have a single result.
  OpImport(std::vector<int> staticInputs, std::function<mlir::Value(NodeImporter &)> single)
      : staticInputs(std::move(staticInputs)),
        build([single = std::move(single)](NodeImporter &n) { return Results{single(n)}; }) {}

  // The import also handles the op's versions before opset 7 (their legacy broadcast
  // attributes, say); other ops are accepted from older models only where their definition
  // did not change up to opset 7.
  OpImport withLegacyVersions() && {
    legacyVersions = true;
    return std::move(*this);
  }

  // ONNX Runtime defines the op in the default domain at every opset, meaning what ONNX's
  // later definition means (LayerNormalization before opset 17, as its optimizer writes it).
  OpImport atEveryOpset() && {
    everyOpset = true;
    return std::move(*this);
  }

  // Inputs read at compile time rather than as tensors; they create no data dependency.
  std::vector<int> staticInputs;
  bool legacyVersions = false;
  bool everyOpset = false;
  // Builds the node's results, in the order of its outputs (trailing ones may be missing:
  // those outputs are then unsupported).
  std::function<Results(NodeImporter &)> build;
};

// The op table: ONNX op type -> how to import it.
const std::map<std::string, OpImport> &opImportTable();
// Why an op of another domain that the table lacks is not imported, when there is more to say
// than that it is unknown (ONNX Runtime's quantized contrib ops); "" otherwise.
std::string whyNotImported(const std::string &tableKey);

// The value of a node that import needs before it can type it: a Constant, Shape or Size (a
// type's dims), and Range, NonZero and NonMaxSuppression of constants (their output sizes
// depend on their values). nullopt for any other node: those with constant inputs are imported
// and evaluated by the kernels (Evaluate.h).
std::optional<ConstTensor> importTimeValue(const onnx::NodeProto &node, ValueScope &scope);

} // namespace dlc

#endif
