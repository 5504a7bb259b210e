// What an import function may ask of its node, and the op table: each family of ops
// (compiler/import/<Family>.cpp) registers its entries; they share compiler/import/Builders.h.
#include "compiler/import/Builders.h"

using namespace mlir;

namespace dlc {

Value NodeImporter::input(int i) const {
  if (!hasInput(i))
    throw ImportError("missing input #" + std::to_string(i));
  return scope.value(node.input(i));
}

RankedTensorType NodeImporter::inputType(int i) const {
  if (!hasInput(i))
    throw ImportError("missing input #" + std::to_string(i));
  return scope.type(node.input(i));
}

const ConstTensor *NodeImporter::constantOrNull(int i) const {
  return hasInput(i) ? scope.constant(node.input(i)) : nullptr;
}

const ConstTensor &NodeImporter::constInput(int i) const {
  if (!hasInput(i))
    throw ImportError("missing input #" + std::to_string(i) + " (a compile-time constant)");
  const ConstTensor *c = scope.constant(node.input(i));
  if (!c)
    throw ImportError("input #" + std::to_string(i) + " ('" + node.input(i) +
                      "') must be a compile-time constant: " + scope.whyNotConstant(node.input(i)));
  return *c;
}

const onnx::AttributeProto *NodeImporter::attr(const std::string &name) const {
  for (const auto &a : node.attribute())
    if (a.name() == name)
      return &a;
  return nullptr;
}

const onnx::AttributeProto *NodeImporter::typedAttr(const std::string &name,
                                                    int expectedType) const {
  const auto *a = attr(name);
  if (a && a->type() != expectedType && a->type() != onnx::AttributeProto::UNDEFINED)
    throw ImportError("attribute '" + name + "' must be " + attributeTypeName(expectedType) +
                      ", got " + attributeTypeName(a->type()));
  return a;
}

int64_t NodeImporter::intAttr(const std::string &name, int64_t fallback) const {
  const auto *a = typedAttr(name, onnx::AttributeProto::INT);
  return a ? a->i() : fallback;
}

float NodeImporter::floatAttr(const std::string &name, float fallback) const {
  const auto *a = typedAttr(name, onnx::AttributeProto::FLOAT);
  return a ? a->f() : fallback;
}

std::string NodeImporter::stringAttr(const std::string &name, const std::string &fallback) const {
  const auto *a = typedAttr(name, onnx::AttributeProto::STRING);
  return a ? a->s() : fallback;
}

std::vector<int64_t> NodeImporter::intsAttr(const std::string &name,
                                            std::vector<int64_t> fallback) const {
  const auto *a = typedAttr(name, onnx::AttributeProto::INTS);
  return a ? std::vector<int64_t>(a->ints().begin(), a->ints().end()) : fallback;
}

std::vector<double> NodeImporter::floatsAttr(const std::string &name) const {
  const auto *a = typedAttr(name, onnx::AttributeProto::FLOATS);
  return a ? std::vector<double>(a->floats().begin(), a->floats().end()) : std::vector<double>{};
}

std::vector<std::string> NodeImporter::stringsAttr(const std::string &name) const {
  const auto *a = typedAttr(name, onnx::AttributeProto::STRINGS);
  return a ? std::vector<std::string>(a->strings().begin(), a->strings().end())
           : std::vector<std::string>{};
}

const std::map<std::string, OpImport> &opImportTable() {
  static const ImportTable table = [] {
    ImportTable t;
    addElementwiseImports(t);
    addLinalgImports(t);
    addReductionImports(t);
    addDataMovementImports(t);
    addSamplingImports(t);
    addRecurrentImports(t);
    addAttentionImports(t);
    addQuantizationImports(t);
    addSignalImports(t);
    addIndexingImports(t);
    addOptimizerImports(t);
    addMlImports(t);
    addOrtContribImports(t);
    return t;
  }();
  return table;
}

} // namespace dlc
