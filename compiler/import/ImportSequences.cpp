// Sequence and Optional ops: sequences exist only at compile time, as lists of tensors the
// importer keeps by name; each op rearranges those lists and imports only the tensor ops
// (concatenation, splitting) that compute data.
#include "compiler/import/GraphImporter.h"
#include "compiler/import/ModelCheck.h"
#include "compiler/import/Builders.h"

#include <algorithm>
#include <cstring>

using namespace mlir;

namespace dlc {

// SplitToSequence makes one tensor (and its ops) per part: more parts than this are refused.
constexpr int64_t kMaxSequenceParts = int64_t(1) << 16;

const std::set<std::string> &sequenceOps() {
  static const std::set<std::string> ops = {
      "SequenceEmpty",      "SequenceConstruct", "SequenceInsert",    "SequenceErase",
      "SequenceAt",         "SequenceLength",    "ConcatFromSequence", "SplitToSequence",
      "Optional",           "OptionalHasElement", "OptionalGetElement"};
  return ops;
}

bool isSequenceOp(const std::string &op) { return sequenceOps().count(op) != 0; }

void Importer::importSequenceNode(const onnx::NodeProto &node, NodeImporter &n) {
  const std::string &op = node.op_type(), &out = node.output(0);
  auto sequence = [&](int i) -> const std::vector<Value> & {
    auto it = n.hasInput(i) ? sequences.find(node.input(i)) : sequences.end();
    if (it == sequences.end())
      throw ImportError("input #" + std::to_string(i) + " is not a sequence");
    return it->second;
  };
  // A position from a constant input: [-size, size) (or up to size when inserting).
  auto position = [&](int i, size_t size, bool inserting) {
    const ConstTensor &c = n.constInput(i);
    if (c.numElements() != 1)
      throw ImportError("position must be a scalar");
    int64_t p = c.asInts()[0], count = int64_t(size);
    if (p < -count || p > count || (p == count && !inserting))
      throw ImportError("position " + std::to_string(p) + " is outside a sequence of " +
                        std::to_string(size));
    return size_t(p < 0 ? p + count : p);
  };
  // Optionals are known at compile time: present (their value) or empty.
  bool empty = !n.hasInput(0) || emptyOptionals.count(node.input(0));
  if (op == "Identity" || op == "OptionalGetElement" || (op == "Optional" && !empty)) {
    if (op == "OptionalGetElement" && empty)
      throw ImportError("the optional is empty");
    bind(out, bindingOf(node.input(0)));
  } else if (op == "Optional") {
    emptyOptionals.insert(out);
  } else if (op == "OptionalHasElement") {
    constants[out] = scalarConstant(onnx::TensorProto::BOOL, !empty);
  } else if (op == "SequenceEmpty") {
    sequences[out] = {};
  } else if (op == "SequenceConstruct") {
    std::vector<Value> items;
    for (int i = 0; i < node.input_size(); ++i)
      items.push_back(n.input(i));
    sequences[out] = items;
  } else if (op == "SequenceInsert") {
    std::vector<Value> items = sequence(0);
    size_t at = n.hasInput(2) ? position(2, items.size(), true) : items.size();
    items.insert(items.begin() + at, n.input(1));
    sequences[out] = items;
  } else if (op == "SequenceErase") {
    std::vector<Value> items = sequence(0);
    if (items.empty())
      throw ImportError("cannot erase from an empty sequence");
    items.erase(items.begin() +
                (n.hasInput(1) ? position(1, items.size(), false) : items.size() - 1));
    sequences[out] = items;
  } else if (op == "SequenceAt") {
    const std::vector<Value> &items = sequence(0);
    values[out] = items.at(position(1, items.size(), false));
  } else if (op == "SequenceLength") {
    ConstTensor length;
    length.dtype = onnx::TensorProto::INT64;
    int64_t count = sequence(0).size();
    length.bytes.resize(8);
    std::memcpy(length.bytes.data(), &count, 8);
    constants[out] = length;
  } else if (op == "ConcatFromSequence") {
    std::vector<Value> items = sequence(0);
    if (items.empty())
      throw ImportError("cannot concatenate an empty sequence");
    bool newAxis = n.intAttr("new_axis", 0) != 0;
    int64_t rank = dlc::typeOf(items[0]).getRank() + (newAxis ? 1 : 0);
    int64_t axis = normalizeAxis(n.intAttr("axis", 0), rank);
    for (Value &item : items) {
      if (newAxis)
        item = insertUnitDim(n, item, axis);
      auto a = dlc::typeOf(item).getShape(), first = dlc::typeOf(items[0]).getShape();
      for (int64_t d = 0; d < rank; ++d)
        if (d != axis && (a.size() != first.size() || a[d] != first[d]))
          throw ImportError("the sequence's tensors differ off the axis: " + dimsString(first) +
                            " and " + dimsString(a));
    }
    values[out] = concatAxis(n, items, axis);
  } else { // SplitToSequence
    Value x = n.input(0);
    auto shape = dlc::typeOf(x).getShape();
    int64_t axis = normalizeAxis(n.intAttr("axis", 0), shape.size()), dim = shape[axis];
    // Every part becomes ops of its own, so the count is checked before anything is built.
    auto checkParts = [&](int64_t parts) {
      if (parts > kMaxSequenceParts)
        throw ImportError("splits axis " + std::to_string(axis) + " of size " +
                          std::to_string(dim) + " into " + std::to_string(parts) +
                          " tensors; at most " + std::to_string(kMaxSequenceParts));
    };
    std::vector<int64_t> sizes;
    bool squeeze = false;
    if (!n.hasInput(1)) {
      checkParts(dim);
      sizes.assign(dim, 1);
      squeeze = n.intAttr("keepdims", 1) == 0;
    } else if (const ConstTensor &split = n.constInput(1); split.shape.empty()) {
      int64_t chunk = split.asInts()[0];
      if (chunk < 1)
        throw ImportError("split must be positive");
      checkParts(dim / chunk + (dim % chunk != 0));
      for (int64_t start = 0; start < dim; start += chunk)
        sizes.push_back(std::min(chunk, dim - start));
    } else {
      sizes = split.asInts();
      checkParts(int64_t(sizes.size()));
    }
    int64_t total = 0;
    for (int64_t size : sizes) {
      if (size < 0 || total > dim - size)
        throw ImportError("split sizes " + dimsString(sizes) + " do not fit axis " +
                          std::to_string(axis) + " of size " + std::to_string(dim));
      total += size;
    }
    if (total != dim)
      throw ImportError("split sizes " + dimsString(sizes) + " do not add up to " +
                        std::to_string(dim));
    std::vector<Value> parts;
    int64_t start = 0;
    for (int64_t size : sizes) {
      Value part = sliceAxis(n, x, axis, start, 1, size);
      if (squeeze) {
        SmallVector<int64_t> squeezed(dlc::typeOf(part).getShape());
        squeezed.erase(squeezed.begin() + axis);
        part = reshape(n, part, squeezed);
      }
      parts.push_back(part);
      start += size;
    }
    sequences[out] = parts;
  }
}

} // namespace dlc
