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

// Maps an ONNX axis in [-rank, rank) to [0, rank); throws when out of range.
int64_t normalizeAxis(int64_t axis, int64_t rank);

class NodeImporter {
public:
  NodeImporter(mlir::OpBuilder &builder, mlir::Location location, const onnx::NodeProto &node,
               int opset,
               std::function<mlir::Value(const std::string &)> valueOf,
               std::function<const ConstTensor *(const std::string &)> constOf,
               std::function<mlir::RankedTensorType(const std::string &)> typeOf)
      : b(builder), location(location), node(node), opset(opset), valueOf(std::move(valueOf)),
        constOf(std::move(constOf)), typeOf(std::move(typeOf)) {}

  mlir::OpBuilder &b;
  mlir::Location location;
  const onnx::NodeProto &node;
  int opset;

  mlir::Location loc() const { return location; }
  bool hasInput(int i) const { return i < node.input_size() && !node.input(i).empty(); }
  mlir::Value input(int i) const;
  mlir::RankedTensorType inputType(int i) const;
  mlir::RankedTensorType outputType(int i = 0) const { return typeOf(node.output(i)); }
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

private:
  std::function<mlir::Value(const std::string &)> valueOf;
  std::function<const ConstTensor *(const std::string &)> constOf;
  std::function<mlir::RankedTensorType(const std::string &)> typeOf;
};

struct OpImport {
  // Inputs read at compile time rather than as tensors; they create no data dependency.
  std::vector<int> staticInputs;
  // Builds the node's single result.
  std::function<mlir::Value(NodeImporter &)> build;
};

// The op table: ONNX op type -> how to import it.
const std::map<std::string, OpImport> &opImportTable();

// Evaluates shape arithmetic (Shape, Gather, Concat, ...) on constants; nullopt when `node`
// is not foldable. Only int64 index math is folded: weights are never computed here.
std::optional<ConstTensor>
foldShapeNode(const onnx::NodeProto &node,
              const std::function<const ConstTensor *(const std::string &)> &constOf,
              const std::function<mlir::RankedTensorType(const std::string &)> &typeOf);

} // namespace dlc

#endif
