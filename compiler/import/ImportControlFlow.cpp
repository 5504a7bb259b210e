// If, Loop and Scan: dlc has static shapes and no run-time control flow, so these are
// evaluated at compile time. A body is imported once per iteration (unrolled) with its inputs
// bound to that iteration's values; loop counters and conditions are constants, so the trip
// count must be known when the model is compiled. An If whose condition is a constant imports
// its branch; one whose condition arrives at run time imports both and selects each output
// with Where (both branches run, which ONNX's side-effect-free ops allow).
#include "compiler/import/GraphImporter.h"
#include "compiler/import/ModelCheck.h"
#include "compiler/import/Builders.h"

#include <algorithm>
#include <cstring>

using namespace mlir;

namespace dlc {

const std::set<std::string> &controlFlowOps() {
  static const std::set<std::string> ops = {"If", "Loop", "Scan", "SequenceMap"};
  return ops;
}

bool isControlFlowOp(const std::string &op) { return controlFlowOps().count(op) != 0; }

ConstTensor scalarConstant(int32_t dtype, int64_t value) {
  ConstTensor c;
  c.dtype = dtype;
  c.bytes.resize(dtype == onnx::TensorProto::BOOL ? 1 : 8);
  if (dtype == onnx::TensorProto::BOOL)
    c.bytes[0] = value != 0;
  else
    std::memcpy(c.bytes.data(), &value, 8);
  return c;
}

namespace {

constexpr int64_t kMaxUnrolledBodies = 16 * kMaxUnrolledSteps;

const onnx::GraphProto &bodyOf(const onnx::NodeProto &node, const char *name) {
  for (const auto &attr : node.attribute())
    if (attr.name() == name && attr.has_g())
      return attr.g();
  throw ImportError(std::string("has no '") + name + "' subgraph");
}

// A condition's value; nullopt when it is known only at run time.
std::optional<bool> constantCondition(const Importer::Binding &b) {
  if (!b.constant)
    return std::nullopt;
  if (b.constant->numElements() != 1)
    throw ImportError("a condition must hold one element");
  return b.constant->asInts()[0] != 0;
}

// The values of one output across iterations, stacked along a new `axis` (in iteration order,
// or reversed).
Value stack(NodeImporter &n, const std::vector<Value> &parts, int64_t axis, bool reverse) {
  SmallVector<Value> unit;
  for (Value v : parts) {
    int64_t rank = typeOf(v).getRank();
    if (axis < -(rank + 1) || axis > rank)
      throw ImportError("scan output axis " + std::to_string(axis) + " is out of range");
    unit.push_back(insertUnitDim(n, v, axis < 0 ? axis + rank + 1 : axis));
  }
  if (reverse)
    std::reverse(unit.begin(), unit.end());
  for (Value v : unit)
    if (typeOf(v) != typeOf(unit[0]))
      throw ImportError("a scan output changes its type between iterations");
  return concatAxis(n, unit, axis < 0 ? axis + typeOf(parts[0]).getRank() + 1 : axis);
}

// Element `index` of `v` along `axis`, without that axis.
Value dropAxis(NodeImporter &n, Value v, int64_t axis, int64_t index) {
  SmallVector<int64_t> shape(typeOf(v).getShape());
  shape.erase(shape.begin() + axis);
  return reshape(n, sliceAxis(n, v, axis, index, 1, 1), shape);
}

} // namespace

Importer::Binding Importer::bindingOf(const std::string &name) {
  if (emptyOptionals.count(name))
    return {Value(), std::nullopt, std::nullopt, true};
  if (auto it = sequences.find(name); it != sequences.end())
    return {Value(), std::nullopt, it->second};
  if (auto it = constants.find(name); it != constants.end())
    return {Value(), it->second, std::nullopt};
  return {materialize(name), std::nullopt, std::nullopt};
}

Value Importer::valueOf(const Binding &binding, Location loc) {
  if (binding.sequence || binding.emptyOptional)
    throw ImportError(std::string(binding.sequence ? "a sequence" : "an empty optional") +
                      " is used where a tensor is needed");
  if (!binding.constant)
    return binding.value;
  Type element = elementTypeFor(ctx, binding.constant->dtype);
  if (!element)
    throw ImportError("a constant of type " + dtypeName(binding.constant->dtype) +
                      " is not supported");
  return ConstantOp::fromBytes(*builder, loc,
                               RankedTensorType::get(binding.constant->shape, element),
                               binding.constant->bytes, "constant");
}

std::optional<std::vector<Importer::Binding>>
Importer::importBody(const onnx::GraphProto &body, const std::vector<Binding> &inputs) {
  // Nested loops multiply: the total number of body copies is bounded, as each step is.
  if (++unrolledBodies > kMaxUnrolledBodies)
    throw ImportError("unrolling needs more than " + std::to_string(kMaxUnrolledBodies) +
                      " copies of loop and scan bodies");
  if ((size_t)body.input_size() != inputs.size())
    throw ImportError("the body '" + body.name() + "' declares " +
                      std::to_string(body.input_size()) + " inputs, but " +
                      std::to_string(inputs.size()) + " are bound to it");
  // Names the body defines shadow the enclosing graph's while it is imported, and are cleared
  // again afterwards: the next iteration defines them anew.
  std::set<std::string> local = definedNames(body);
  struct Saved {
    std::optional<Value> value;
    std::optional<ConstTensor> constant;
    std::optional<std::vector<Value>> sequence;
    bool failed, emptyOptional;
  };
  std::map<std::string, Saved> saved;
  for (const std::string &name : local) {
    Saved s{std::nullopt, std::nullopt, std::nullopt, failedValues.count(name) != 0,
            emptyOptionals.count(name) != 0};
    if (auto it = values.find(name); it != values.end())
      s.value = it->second;
    if (auto it = constants.find(name); it != constants.end())
      s.constant = it->second;
    if (auto it = sequences.find(name); it != sequences.end())
      s.sequence = it->second;
    saved[name] = std::move(s);
    forget(name);
  }
  auto restore = [&] {
    for (auto &[name, s] : saved) {
      forget(name);
      if (s.value)
        values[name] = *s.value;
      if (s.constant)
        constants[name] = *s.constant;
      if (s.sequence)
        sequences[name] = *s.sequence;
      if (s.failed)
        failedValues.insert(name);
      if (s.emptyOptional)
        emptyOptionals.insert(name);
    }
  };

  std::optional<std::vector<Binding>> outputs;
  size_t errorsBefore = errors.size();
  try {
    for (auto [i, in] : llvm::enumerate(body.input()))
      bind(in.name(), inputs[i]);
    for (const auto &init : body.initializer())
      constants[init.name()] = constFromProto(init);
    std::set<std::string> read;
    for (const auto &node : body.node()) {
      read.insert(node.input().begin(), node.input().end());
      for (const auto &in : implicitInputs(node))
        read.insert(in);
    }
    for (const auto &out : body.output())
      read.insert(out.name());
    importNodes(body.node(), nullptr, read);
    if (errors.size() == errorsBefore) {
      outputs.emplace();
      for (const auto &out : body.output()) {
        if (failedValues.count(out.name()))
          throw ImportError("the body's output '" + out.name() + "' could not be computed");
        outputs->push_back(bindingOf(out.name()));
      }
    }
  } catch (...) {
    restore();
    throw;
  }
  restore();
  return outputs;
}

void Importer::importControlFlowNode(const onnx::NodeProto &node, NodeImporter &n) {
  const std::string &op = node.op_type();
  auto input = [&](int i) {
    if (!n.hasInput(i))
      throw ImportError("input #" + std::to_string(i) + " is missing");
    return bindingOf(node.input(i));
  };
  std::vector<Binding> results;

  if (op == "If") {
    Binding condition = input(0);
    std::optional<bool> known = constantCondition(condition);
    if (known) {
      auto outputs = importBody(bodyOf(node, *known ? "then_branch" : "else_branch"), {});
      if (!outputs)
        return failedValues.insert(node.output().begin(), node.output().end()), void();
      results = std::move(*outputs);
    } else {
      auto thenOut = importBody(bodyOf(node, "then_branch"), {});
      auto elseOut = importBody(bodyOf(node, "else_branch"), {});
      if (!thenOut || !elseOut)
        return failedValues.insert(node.output().begin(), node.output().end()), void();
      if (thenOut->size() != elseOut->size())
        throw ImportError("the branches have different numbers of outputs");
      // (A sequence or an empty optional as the condition is refused here, by name.)
      Value conditionValue = valueOf(condition, n.loc());
      auto flagType = dlc::typeOf(conditionValue);
      if (!flagType.getElementType().isInteger(1) || flagType.getNumElements() != 1)
        throw ImportError("the condition must be a single bool");
      Value flag = reshape(n, conditionValue, {});
      auto select = [&](size_t i, Value a, Value b) -> Value {
        if (a.getType() != b.getType())
          throw ImportError("with a condition known only at run time, both branches must give "
                            "output #" + std::to_string(i) + " the same type (" +
                            dimsString(dlc::typeOf(a).getShape()) + " vs " +
                            dimsString(dlc::typeOf(b).getShape()) + ")");
        return n.b.create<WhereOp>(n.loc(), a.getType(), flag, a, b);
      };
      for (size_t i = 0; i < thenOut->size(); ++i) {
        const Binding &a = (*thenOut)[i], &b = (*elseOut)[i];
        bool aTensor = !a.sequence && !a.emptyOptional, bTensor = !b.sequence && !b.emptyOptional;
        if (aTensor && bTensor) {
          results.push_back({select(i, valueOf(a, n.loc()), valueOf(b, n.loc())), std::nullopt});
          continue;
        }
        if (a.emptyOptional && b.emptyOptional) {
          results.push_back(a);
          continue;
        }
        // Sequences: element by element, so both must have the same length.
        if (!a.sequence || !b.sequence || a.sequence->size() != b.sequence->size())
          throw ImportError("with a condition known only at run time, both branches must give "
                            "output #" + std::to_string(i) + " the same structure (tensors, "
                            "sequences of one length, or empty optionals)");
        std::vector<Value> items;
        for (size_t k = 0; k < a.sequence->size(); ++k)
          items.push_back(select(i, (*a.sequence)[k], (*b.sequence)[k]));
        results.push_back({Value(), std::nullopt, std::move(items)});
      }
    }
  } else if (op == "Loop") {
    const onnx::GraphProto &body = bodyOf(node, "body");
    std::optional<int64_t> tripCount;
    if (n.hasInput(0)) {
      const ConstTensor *m = n.constantOrNull(0);
      if (!m)
        throw ImportError("the trip count must be a compile-time constant (dlc unrolls loops): " +
                          whyNotConstant(node.input(0)));
      if (m->numElements() != 1)
        throw ImportError("the trip count must hold one element");
      tripCount = m->asInts()[0];
    }
    bool running = true;
    if (n.hasInput(1)) {
      auto known = constantCondition(input(1));
      if (!known)
        throw ImportError("the loop condition must be a compile-time constant (dlc unrolls "
                          "loops): " + whyNotConstant(node.input(1)));
      running = *known;
    }
    std::vector<Binding> carried;
    for (int i = 2; i < node.input_size(); ++i)
      carried.push_back(input(i));
    if (body.output_size() < int(1 + carried.size()))
      throw ImportError("the body must output the condition and every loop-carried value");
    size_t scanCount = body.output_size() - 1 - carried.size();
    std::vector<std::vector<Value>> scans(scanCount);
    int64_t iteration = 0;
    for (; running && (!tripCount || iteration < *tripCount); ++iteration) {
      if (iteration >= kMaxUnrolledSteps)
        throw ImportError("loops of more than " + std::to_string(kMaxUnrolledSteps) +
                          " iterations are not supported (dlc unrolls loops)");
      std::vector<Binding> bound{{Value(), scalarConstant(onnx::TensorProto::INT64, iteration)},
                                 {Value(), scalarConstant(onnx::TensorProto::BOOL, 1)}};
      bound.insert(bound.end(), carried.begin(), carried.end());
      auto outputs = importBody(body, bound);
      if (!outputs)
        return failedValues.insert(node.output().begin(), node.output().end()), void();
      auto known = constantCondition((*outputs)[0]);
      if (!known)
        throw ImportError("the condition the body computes must be a compile-time constant "
                          "(dlc unrolls loops)");
      running = *known;
      for (size_t i = 0; i < carried.size(); ++i)
        carried[i] = (*outputs)[1 + i];
      for (size_t k = 0; k < scanCount; ++k)
        scans[k].push_back(valueOf((*outputs)[1 + carried.size() + k], n.loc()));
    }
    results = carried;
    for (auto &parts : scans) {
      if (parts.empty())
        throw ImportError("a loop that runs no iteration gives its scan outputs no shape");
      results.push_back({stack(n, parts, 0, false), std::nullopt});
    }
  } else if (op == "SequenceMap") {
    // The body runs once per element, on the i-th element of each sequence input and on
    // the tensor inputs as they are; each body output gathers into an output sequence.
    const onnx::GraphProto &body = bodyOf(node, "body");
    std::vector<Binding> inputs;
    for (int i = 0; i < node.input_size(); ++i)
      inputs.push_back(input(i));
    if (inputs.empty() || !inputs[0].sequence)
      throw ImportError("input #0 must be a sequence");
    size_t length = inputs[0].sequence->size();
    for (const Binding &b : inputs)
      if (b.sequence && b.sequence->size() != length)
        throw ImportError("the sequence inputs differ in length");
    std::vector<std::vector<Value>> gathered(body.output_size());
    for (size_t element = 0; element < length; ++element) {
      std::vector<Binding> bound;
      for (const Binding &b : inputs)
        bound.push_back(b.sequence ? Binding{(*b.sequence)[element], std::nullopt, std::nullopt}
                                   : b);
      auto outputs = importBody(body, bound);
      if (!outputs)
        return failedValues.insert(node.output().begin(), node.output().end()), void();
      for (size_t k = 0; k < outputs->size(); ++k)
        gathered[k].push_back(valueOf((*outputs)[k], n.loc()));
    }
    for (auto &items : gathered)
      results.push_back({Value(), std::nullopt, std::move(items)});
  } else { // Scan
    // Scan-8 puts a batch axis first and runs the body per batch element; from opset 9 the
    // scan axes are attributes and there is no batch.
    bool batched = n.version < 9;
    if (batched && n.hasInput(0))
      throw ImportError("Scan's sequence_lens is not supported");
    const onnx::GraphProto &body = bodyOf(node, "body");
    int64_t first = batched ? 1 : 0; // inputs before the states
    int64_t scanInputs = n.intAttr("num_scan_inputs", 0);
    if (scanInputs < 1 || scanInputs > node.input_size() - first)
      throw ImportError("num_scan_inputs must be between 1 and the number of inputs");
    int64_t states = node.input_size() - first - scanInputs;
    int64_t scanOutputs = body.output_size() - states;
    if (scanOutputs < 0)
      throw ImportError("the body must output every state variable");
    auto listAttr = [&](const char *name, int64_t count) {
      std::vector<int64_t> v = n.intsAttr(name);
      if (v.empty())
        v.assign(count, 0);
      if ((int64_t)v.size() != count)
        throw ImportError(std::string(name) + " needs " + std::to_string(count) + " entries");
      return v;
    };
    auto inAxes = batched ? std::vector<int64_t>(scanInputs, 0)
                          : listAttr("scan_input_axes", scanInputs);
    auto inDirections = listAttr(batched ? "directions" : "scan_input_directions", scanInputs);
    auto outAxes = batched ? std::vector<int64_t>(scanOutputs, 0)
                           : listAttr("scan_output_axes", scanOutputs);
    auto outDirections = batched ? std::vector<int64_t>(scanOutputs, 0)
                                 : listAttr("scan_output_directions", scanOutputs);
    // One scan: the states and scan outputs after running the body over `sequences`.
    auto scan = [&](std::vector<Binding> carried, const std::vector<Value> &sequences)
        -> std::optional<std::vector<Binding>> {
      int64_t length = -1;
      for (int64_t j = 0; j < scanInputs; ++j) {
        int64_t size = dlc::typeOf(sequences[j]).getDimSize(inAxes[j]);
        if (length >= 0 && size != length)
          throw ImportError("the scan inputs have different lengths");
        length = size;
      }
      if (length > kMaxUnrolledSteps)
        throw ImportError("scans of more than " + std::to_string(kMaxUnrolledSteps) +
                          " steps are not supported (dlc unrolls them)");
      if (length == 0 && scanOutputs)
        throw ImportError("a scan over no element gives its scan outputs no shape");
      std::vector<std::vector<Value>> scans(scanOutputs);
      for (int64_t t = 0; t < length; ++t) {
        std::vector<Binding> bound = carried;
        for (int64_t j = 0; j < scanInputs; ++j)
          bound.push_back(
              {dropAxis(n, sequences[j], inAxes[j], inDirections[j] ? length - 1 - t : t),
               std::nullopt});
        auto outputs = importBody(body, bound);
        if (!outputs)
          return std::nullopt;
        for (int64_t i = 0; i < states; ++i)
          carried[i] = (*outputs)[i];
        for (int64_t k = 0; k < scanOutputs; ++k)
          scans[k].push_back(valueOf((*outputs)[states + k], n.loc()));
      }
      for (int64_t k = 0; k < scanOutputs; ++k)
        carried.push_back({stack(n, scans[k], outAxes[k], outDirections[k] != 0), std::nullopt});
      return carried;
    };
    std::vector<Value> sequences;
    for (int64_t j = 0; j < scanInputs; ++j) {
      sequences.push_back(materialize(node.input(first + states + j)));
      int64_t rank = dlc::typeOf(sequences[j]).getRank() - first;
      if (rank < 1)
        throw ImportError("scan input #" + std::to_string(j) + " has no axis to scan");
      inAxes[j] = normalizeAxis(inAxes[j], rank);
    }
    if (!batched) {
      std::vector<Binding> initial;
      for (int64_t i = 0; i < states; ++i)
        initial.push_back(input(first + i));
      auto outputs = scan(initial, sequences);
      if (!outputs)
        return failedValues.insert(node.output().begin(), node.output().end()), void();
      results = std::move(*outputs);
    } else {
      std::vector<Value> initial;
      for (int64_t i = 0; i < states; ++i)
        initial.push_back(materialize(node.input(first + i)));
      int64_t batch = sequences.empty() ? 0 : dlc::typeOf(sequences[0]).getDimSize(0);
      std::vector<std::vector<Value>> perBatch(states + scanOutputs);
      for (int64_t b = 0; b < batch; ++b) {
        std::vector<Binding> carried;
        for (Value v : initial)
          carried.push_back({dropAxis(n, v, 0, b), std::nullopt});
        std::vector<Value> slices;
        for (Value v : sequences)
          slices.push_back(dropAxis(n, v, 0, b));
        auto outputs = scan(carried, slices);
        if (!outputs)
          return failedValues.insert(node.output().begin(), node.output().end()), void();
        for (size_t k = 0; k < outputs->size(); ++k)
          perBatch[k].push_back(valueOf((*outputs)[k], n.loc()));
      }
      if (batch == 0)
        throw ImportError("a batch of no element gives the outputs no shape");
      for (auto &parts : perBatch)
        results.push_back({stack(n, parts, 0, false), std::nullopt});
    }
  }

  for (int i = 0; i < node.output_size(); ++i) {
    const std::string &name = node.output(i);
    if (name.empty())
      continue;
    if (i >= (int)results.size())
      throw ImportError("output #" + std::to_string(i) + " ('" + name + "') is not produced");
    bind(name, results[i]);
  }
}

void Importer::forget(const std::string &name) {
  values.erase(name);
  constants.erase(name);
  failedValues.erase(name);
  sequences.erase(name);
  emptyOptionals.erase(name);
}

void Importer::bind(const std::string &name, const Binding &binding) {
  if (binding.emptyOptional)
    emptyOptionals.insert(name);
  else if (binding.sequence)
    sequences[name] = *binding.sequence;
  else if (binding.constant)
    constants[name] = *binding.constant;
  else
    values[name] = binding.value;
}

} // namespace dlc
