// Module-level codegen: values to pointers, the weights blob, and the API from templates.
#include "compiler/Codegen.h"
#include "compiler/Embedded.h"
#include "compiler/Locations.h"
#include "compiler/codegen/Emitter.h"
#include "dialects/DlcDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectResourceBlobManager.h"

#include <cstring>
#include <set>

using namespace mlir;

namespace dlc {

std::string KernelEmitter::array(ArrayRef<int64_t> values) {
  std::string name = "a" + std::to_string(arrays++);
  // A zero-length array is not valid C++; a rank-0 shape still needs a valid pointer.
  line("static const int64_t " + name + "[] = {" + (values.empty() ? "0" : list(values)) +
       "};");
  return name;
}

std::string cType(Type t) {
  if (t.isF32()) return "float";
  if (t.isF64()) return "double";
  if (t.isInteger(64)) return "int64_t";
  if (t.isInteger(32)) return "int32_t";
  if (t.isUnsignedInteger(8) || t.isInteger(1)) return "uint8_t";
  if (t.isInteger(8)) return "int8_t";
  return "";
}

int64_t elementBytes(Type t) {
  unsigned bits = t.getIntOrFloatBitWidth();
  return bits == 1 ? 1 : bits / 8;
}

std::string dtypeEnum(Type t) {
  if (t.isF32()) return "DLC_F32";
  if (t.isF64()) return "DLC_F64";
  if (t.isInteger(64)) return "DLC_I64";
  if (t.isInteger(32)) return "DLC_I32";
  if (t.isUnsignedInteger(8)) return "DLC_U8";
  if (t.isInteger(1)) return "DLC_BOOL";
  return "DLC_I8";
}

std::string list(ArrayRef<int64_t> values) {
  std::string s;
  for (auto [i, v] : llvm::enumerate(values))
    s += (i ? ", " : "") + std::to_string(v);
  return s;
}

std::string floatLiteral(double value) {
  if (std::isinf(value))
    return value > 0 ? "std::numeric_limits<float>::infinity()"
                     : "-std::numeric_limits<float>::infinity()";
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.9gf", value);
  std::string s = buffer;
  if (s.find_first_of(".e") == std::string::npos && s.find("inf") == std::string::npos)
    s.insert(s.size() - 1, ".0");
  return s;
}

RankedTensorType tensorType(Value v) { return cast<RankedTensorType>(v.getType()); }

int64_t product(ArrayRef<int64_t> dims) {
  int64_t n = 1;
  for (int64_t d : dims)
    n *= d;
  return n;
}

std::pair<int64_t, int64_t> outerInner(ArrayRef<int64_t> shape, int64_t axis) {
  return {product(shape.take_front(axis)), product(shape.drop_front(axis + 1))};
}

SmallVector<int64_t> stridesOf(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t i = (int64_t)shape.size() - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape[i + 1];
  return strides;
}

namespace {

class ScheduleEmitter : public KernelEmitter {
public:
  explicit ScheduleEmitter(const std::map<Operation *, int64_t> &weightOffsets)
      : weightOffsets(weightOffsets) {}

  std::string ptr(Value v) override {
    std::string type = cType(tensorType(v).getElementType());
    if (auto arg = dyn_cast<BlockArgument>(v))
      return "static_cast<const " + type + " *>(inputs[" + std::to_string(arg.getArgNumber()) +
             "])";
    Operation *def = v.getDefiningOp();
    if (auto it = weightOffsets.find(def); it != weightOffsets.end())
      return "reinterpret_cast<const " + type + " *>(weights + " + std::to_string(it->second) +
             ")";
    // A view is only ever read: its pointer is its source's (through any chain of views,
    // resolved here so that a long chain does not nest casts).
    if (def->hasAttr(kViewAttr)) {
      Value source = def->getOperand(0);
      while (source.getDefiningOp() && source.getDefiningOp()->hasAttr(kViewAttr))
        source = source.getDefiningOp()->getOperand(0);
      return "reinterpret_cast<const " + type + " *>(" + ptr(source) + ")";
    }
    if (auto offset = def->getAttrOfType<IntegerAttr>(kArenaOffsetAttr))
      return "reinterpret_cast<" + type + " *>(arena + " + std::to_string(offset.getInt()) + ")";
    auto output = def->getAttrOfType<IntegerAttr>(kOutputAttr);
    auto offset = def->getAttrOfType<IntegerAttr>(kOutputOffsetAttr);
    return "reinterpret_cast<" + type + " *>(static_cast<unsigned char *>(outputs[" +
           std::to_string(output.getInt()) + "]) + " +
           std::to_string(offset ? offset.getInt() : 0) + ")";
  }

  // nullptr when the op needs no workspace; the plan verifier refuses plans missing one.
  std::string workspace(Operation *op) override {
    auto offset = op->getAttrOfType<IntegerAttr>(kWorkspaceOffsetAttr);
    return offset ? "reinterpret_cast<float *>(arena + " + std::to_string(offset.getInt()) + ")"
                  : "nullptr";
  }

  // Outputs the plan did not put straight into their buffer (graph inputs, weights, views of
  // them, repeated outputs).
  void copyUnwrittenOutputs(func::ReturnOp ret) {
    for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
      Operation *def = v.getDefiningOp();
      auto output = def ? def->getAttrOfType<IntegerAttr>(kOutputAttr) : nullptr;
      auto offset = def ? def->getAttrOfType<IntegerAttr>(kOutputOffsetAttr) : nullptr;
      bool writtenInPlace = output && output.getInt() == (int64_t)i &&
                            (!offset || offset.getInt() == 0) && !def->hasAttr(kViewAttr);
      if (!writtenInPlace)
        line("dlc::rt::copyBytes(" + ptr(v) + ", outputs[" + std::to_string(i) + "], " +
             std::to_string(tensorBytes(v.getType())) + ");");
    }
  }

private:
  const std::map<Operation *, int64_t> &weightOffsets;
};

// Text from the model (node names, paths) made safe inside a // comment: a newline would end
// the comment and a trailing backslash would splice the next line into it.
std::string commentText(const std::string &s) {
  std::string out;
  for (char c : s)
    out += static_cast<unsigned char>(c) < 0x20 || c == '\\' ? '?' : c;
  return out;
}

// Replaces each @KEY@ of `vars` in one pass, so substituted text is never scanned again.
std::string substitute(const std::string &text, const std::map<std::string, std::string> &vars) {
  std::string out;
  for (size_t pos = 0; pos < text.size();) {
    size_t at = text.find('@', pos), end = at == std::string::npos ? at : text.find('@', at + 1);
    if (end == std::string::npos) {
      out += text.substr(pos);
      break;
    }
    auto it = vars.find(text.substr(at + 1, end - at - 1));
    if (it == vars.end()) { // a lone '@' (e.g. "@object"): keep it, resume after it
      out += text.substr(pos, at + 1 - pos);
      pos = at + 1;
      continue;
    }
    out += text.substr(pos, at - pos) + it->second;
    pos = end + 1;
  }
  return out;
}

std::string cString(const std::string &s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\' || c == '?') // '?': no trigraph such as "??=" can form
      out += '\\';
    if (static_cast<unsigned char>(c) < 0x20)
      continue;
    out += c;
  }
  return out + "\"";
}

// A C++ identifier for a tensor name, distinct from every earlier one, from keywords and
// from the names the templates use.
std::string identifier(const std::string &s, std::set<std::string> &used) {
  static const std::set<std::string> reserved = {
      "alignas", "alignof", "and", "asm", "auto", "bool", "break", "case", "catch", "char",
      "class", "const", "constexpr", "continue", "default", "delete", "do", "double", "else",
      "enum", "explicit", "export", "extern", "false", "float", "for", "friend", "goto", "if",
      "inline", "int", "long", "mutable", "namespace", "new", "noexcept", "not", "nullptr",
      "operator", "or", "private", "protected", "public", "register", "return", "short",
      "signed", "sizeof", "static", "struct", "switch", "template", "this", "throw", "true",
      "try", "typedef", "typeid", "typename", "union", "unsigned", "using", "virtual", "void",
      "volatile", "while", "xor", "inputs", "outputs", "options", "status"};
  std::string out;
  for (char c : s)
    out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0])))
    out = "t_" + out;
  std::string unique = out;
  for (int n = 2; reserved.count(unique) || used.count(unique); ++n)
    unique = out + "_" + std::to_string(n);
  used.insert(unique);
  return unique;
}

} // namespace

void KernelEmitter::fallibleCall(const std::string &call, const std::string &reason) {
  line("if (!" + call + ")");
  line("  return " + cString(currentOp + ": " + reason) + ";");
}

bool generateCpp(ModuleOp module, const std::string &name, const std::string &modelPath,
                 const std::string &weightsPath, GeneratedModel &out) {
  auto func = module.lookupSymbol<func::FuncOp>("forward");
  if (!func) {
    module.emitError("no function @forward to generate code for");
    return false;
  }
  static const EmitterTable table = [] {
    EmitterTable t;
    addElementwiseEmitters(t);
    addLinalgEmitters(t);
    addWindowEmitters(t);
    addReductionEmitters(t);
    addDataMovementEmitters(t);
    return t;
  }();

  std::map<Operation *, int64_t> weightOffsets;
  out.weights.clear();
  func.walk([&](ConstantOp op) {
    out.weights.resize((out.weights.size() + 63) / 64 * 64);
    weightOffsets[op] = out.weights.size();
    std::vector<char> bytes = op.getBytes();
    out.weights.insert(out.weights.end(), bytes.begin(), bytes.end());
  });

  auto arena = func->getAttrOfType<IntegerAttr>(kArenaBytesAttr);
  if (!arena) {
    func.emitError("no memory plan (dlc.arena_bytes) to generate code from");
    return false;
  }
  out.arenaBytes = arena.getInt();
  ScheduleEmitter emitter(weightOffsets);
  bool ok = true;
  // DLC_CHECK_MEMORY builds poison memory that holds no live value, so a read after reuse
  // (or of never-written memory) shows up as NaN / all-ones integers.
  emitter.line("#ifdef DLC_CHECK_MEMORY");
  emitter.line("dlc::rt::poison(arena, " + std::to_string(out.arenaBytes) + ");");
  emitter.line("#endif");
  func.walk([&](Operation *op) {
    if (isa<ConstantOp, func::FuncOp>(op))
      return;
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      emitter.copyUnwrittenOutputs(ret);
      return;
    }
    // Views and elided concats need no code: their data is already where it belongs.
    if (!op->hasAttr(kViewAttr) && !op->hasAttr(kElidedAttr)) {
      auto it = table.find(op->getName().getStringRef().str());
      if (it == table.end()) {
        op->emitError("no CPU kernel for op ") << op->getName();
        ok = false;
        return;
      }
      std::string node = onnxNodeName(op->getLoc()), opType = onnxOpType(op->getLoc());
      emitter.currentOp = "node '" + node + "' (" +
                          (opType.empty() ? op->getName().getStringRef().str() : opType) + ")";
      // A block per op keeps each op's constant arrays local to its call.
      emitter.line("{ // " + op->getName().getStringRef().str() + " " +
                   commentText(onnxNodeName(op->getLoc())));
      if (failed(it->second(op, emitter)))
        ok = false;
      emitter.line("}");
    }
    if (auto released = op->getAttrOfType<DenseI64ArrayAttr>(kReleaseAttr)) {
      emitter.line("#ifdef DLC_CHECK_MEMORY");
      for (int64_t i = 0; i + 1 < (int64_t)released.size(); i += 2)
        emitter.line("dlc::rt::poison(arena + " + std::to_string(released[i]) + ", " +
                     std::to_string(released[i + 1]) + ");");
      emitter.line("#endif");
    }
  });
  if (!ok)
    return false;


  // Interface tables.
  auto types = func.getFunctionType();
  size_t maxRank = 1;
  for (Type t : llvm::concat<const Type>(types.getInputs(), types.getResults()))
    maxRank = std::max<size_t>(maxRank, cast<RankedTensorType>(t).getRank());
  std::string shapeConstants, typedParams, typedInputs, typedOutputs;
  std::set<std::string> usedIdentifiers;
  auto describe = [&](ArrayRef<Type> tensors, bool isInput, std::string &shapes,
                      std::string &infos) {
    for (auto [i, t] : llvm::enumerate(tensors)) {
      auto type = cast<RankedTensorType>(t);
      auto nameAttr = isInput ? func.getArgAttrOfType<StringAttr>(i, kTensorNameAttr)
                              : func.getResultAttrOfType<StringAttr>(i, kTensorNameAttr);
      std::string tensorName = nameAttr ? nameAttr.str() : (isInput ? "input" : "output") +
                                                               std::to_string(i);
      std::string id = identifier(tensorName, usedIdentifiers);
      shapes += std::string(i ? ", " : "") + "{" + list(type.getShape().empty()
                                                            ? ArrayRef<int64_t>{0}
                                                            : type.getShape()) +
                "}";
      infos += std::string(i ? ", " : "") + "{" + cString(tensorName) + ", " +
               dtypeEnum(type.getElementType()) + ", " + std::to_string(type.getRank()) + ", " +
               (isInput ? "kInputShapes[" : "kOutputShapes[") + std::to_string(i) + "], " +
               std::to_string(tensorBytes(type)) +
               "u}";
      shapeConstants += "constexpr int64_t k_" + id + "_shape[] = {" +
                        list(type.getShape().empty() ? ArrayRef<int64_t>{1}
                                                     : type.getShape()) +
                        "};\n";
      std::string c = cType(type.getElementType());
      typedParams += std::string(typedParams.empty() ? "" : ", ") +
                     (isInput ? "const " : "") + c + " *" + id;
      (isInput ? typedInputs : typedOutputs) +=
          std::string((isInput ? typedInputs : typedOutputs).empty() ? "" : ", ") + id;
    }
  };
  std::string inputShapes, inputInfos, outputShapes, outputInfos;
  describe(types.getInputs(), true, inputShapes, inputInfos);
  describe(types.getResults(), false, outputShapes, outputInfos);

  std::string upper = name;
  for (char &c : upper)
    c = std::toupper(static_cast<unsigned char>(c));
  std::map<std::string, std::string> vars = {
      {"NAME", name},
      {"UPPER_NAME", upper},
      {"GUARD", "DLC_GENERATED_" + upper + "_H"},
      {"DLC_VERSION", DLC_VERSION},
      {"MODEL_FILE", commentText(modelPath)},
      {"ARENA_BYTES", std::to_string(out.arenaBytes)},
      {"WEIGHT_BYTES", std::to_string(out.weights.size())},
      {"NUM_INPUTS", std::to_string(types.getNumInputs())},
      {"NUM_OUTPUTS", std::to_string(types.getNumResults())},
      {"MAX_RANK", std::to_string(maxRank)},
      // An empty initializer list would make zero-length arrays; a model always has outputs,
      // and input-less models get a placeholder entry.
      {"INPUT_SHAPES", inputShapes.empty() ? "{0}" : inputShapes},
      {"OUTPUT_SHAPES", outputShapes},
      {"INPUT_INFOS", inputInfos.empty() ? "{nullptr, DLC_F32, 0, nullptr, 0}" : inputInfos},
      {"OUTPUT_INFOS", outputInfos},
      {"SHAPE_CONSTANTS", shapeConstants},
      {"TYPED_PARAMS", typedParams},
      {"TYPED_INPUT_ARGS", typedInputs.empty() ? "nullptr" : typedInputs},
      {"TYPED_OUTPUT_ARGS", typedOutputs},
      {"SCHEDULE", emitter.body_str()},
  };
  out.header = substitute(embeddedFile("codegen_templates/model.h.tpl"), vars);
  out.source = substitute(embeddedFile("codegen_templates/model.cpp.tpl"), vars);
  out.weightsSource = weightsSource(name, out.weights.size(), weightsPath);
  return true;
}

std::string weightsSource(const std::string &name, size_t bytes, const std::string &path) {
  // The path sits in an assembler string inside a C++ string: escape for both.
  std::string asmPath;
  for (char c : path)
    asmPath += c == '"' || c == '\\' ? std::string("\\") + c : std::string(1, c);
  std::map<std::string, std::string> vars = {
      {"NAME", name},
      {"DLC_VERSION", DLC_VERSION},
      {"WEIGHT_BYTES", std::to_string(bytes)},
      // cString drops control characters, so the statement's newline is added after it.
      {"INCBIN", bytes ? cString(".incbin \"" + asmPath + "\"") + " \"\\n\"" : std::string()},
  };
  return substitute(embeddedFile("codegen_templates/weights.cpp.tpl"), vars);
}

} // namespace dlc
