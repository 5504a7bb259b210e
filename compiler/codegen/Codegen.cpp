// Module-level codegen: values to pointers, the weights blob, and the API from templates.
#include "compiler/codegen/Codegen.h"
#include "compiler/Embedded.h"
#include "dialects/Locations.h"
#include "compiler/codegen/Emitter.h"
#include "compiler/target/Target.h"
#include "dialects/DlcDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/Path.h"

#include <cstring>
#include <set>

using namespace mlir;

namespace dlc {

namespace {

void alignBlob(std::vector<char> &blob) { blob.resize((blob.size() + 63) / 64 * 64); }

// The weights blob (functions of a training build share it) and where each constant's bytes
// are in it: plain, by the constant's value, and packed, by value and layout.
struct WeightsBlob {
  std::vector<char> &bytes;
  std::map<const void *, int64_t> plain;
  std::map<std::pair<const void *, std::string>, int64_t> packed;

  int64_t append(const std::vector<char> &data) {
    alignBlob(bytes);
    int64_t offset = bytes.size();
    bytes.insert(bytes.end(), data.begin(), data.end());
    return offset;
  }
};

class ScheduleEmitter : public KernelEmitter {
public:
  // `argPointers`: a typed pointer expression per function argument.
  ScheduleEmitter(const Target &target, WeightsBlob &weights,
                  std::vector<std::string> argPointers)
      : target(target), weights(weights), argPointers(std::move(argPointers)) {}

  std::string packedWeight(OpOperand &use, const WeightPacking &packing) override {
    auto constant = cast<ConstantOp>(use.get().getDefiningOp());
    auto [it, fresh] =
        weights.packed.try_emplace({constant.getValue().getAsOpaquePointer(), packing.layout}, 0);
    if (fresh)
      it->second = weights.append(packing.pack(constant.getBytes()));
    return "reinterpret_cast<const float *>(weights + " + std::to_string(it->second) + ")";
  }

  // Starts the schedule of another function of the model, whose arguments are
  // `functionArgPointers`.
  void startFunction(std::vector<std::string> functionArgPointers) {
    body.str("");
    argPointers = std::move(functionArgPointers);
  }

  std::string ptr(Value v) override {
    std::string type = cType(tensorType(v).getElementType());
    if (auto arg = dyn_cast<BlockArgument>(v))
      return argPointers[arg.getArgNumber()];
    Operation *def = v.getDefiningOp();
    if (auto constant = dyn_cast<ConstantOp>(def))
      return "reinterpret_cast<const " + type + " *>(weights + " +
             std::to_string(weights.plain.at(constant.getValue().getAsOpaquePointer())) + ")";
    // A view is only ever read: its pointer is its source's plus its offset (through any
    // chain of views, resolved here so that a long chain does not nest casts).
    if (def->hasAttr(kViewAttr)) {
      int64_t offset = viewByteOffset(def).value_or(0);
      Value source = def->getOperand(0);
      while (source.getDefiningOp() && source.getDefiningOp()->hasAttr(kViewAttr)) {
        offset += viewByteOffset(source.getDefiningOp()).value_or(0);
        source = source.getDefiningOp()->getOperand(0);
      }
      if (offset == 0)
        return "reinterpret_cast<const " + type + " *>(" + ptr(source) + ")";
      return "reinterpret_cast<const " + type + " *>(reinterpret_cast<const unsigned char *>(" +
             ptr(source) + ") + " + std::to_string(offset) + ")";
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
      if (writtenInPlace)
        continue;
      target.emitCopyToOutput(*this, "outputs[" + std::to_string(i) + "]", ptr(v),
                              std::to_string(tensorBytes(v.getType())));
    }
  }

private:
  const Target &target;
  WeightsBlob &weights;
  std::vector<std::string> argPointers;
};

// The model's file name for the "Generated from" line: the folder it was compiled from
// would make the same model's files differ between checkouts.
std::string modelFileComment(const std::string &modelPath) {
  return commentText(llvm::sys::path::filename(modelPath).str());
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

// A C++ identifier for a tensor name, distinct from every earlier one, from keywords and
// from the names the templates use.
std::string identifier(const std::string &s, std::set<std::string> &used) {
  static const std::set<std::string> reserved = {
      "alignas",  "alignof",  "and",      "asm",      "auto",     "bool",      "break",
      "case",     "catch",    "char",     "class",    "const",    "constexpr", "continue",
      "default",  "delete",   "do",       "double",   "else",     "enum",      "explicit",
      "export",   "extern",   "false",    "float",    "for",      "friend",    "goto",
      "if",       "inline",   "int",      "long",     "mutable",  "namespace", "new",
      "noexcept", "not",      "nullptr",  "operator", "or",       "private",   "protected",
      "public",   "register", "return",   "short",    "signed",   "sizeof",    "static",
      "struct",   "switch",   "template", "this",     "throw",    "true",      "try",
      "typedef",  "typeid",   "typename", "union",    "unsigned", "using",     "virtual",
      "void",     "volatile", "while",    "xor",      "inputs",   "outputs",   "options",
      "status"};
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

namespace {

// A long schedule is cut into parts of this many ops, each a function of its own: compilers
// optimize one function of 20,000 kernel calls (an unrolled decoder loop) in time that grows
// faster than its length (over ten minutes at -O3), and parts of this size in seconds.
constexpr int64_t kOpsPerSchedulePart = 256;

// After the current op's kernel: each of its results handed to the schedule's `dump`.
void emitDump(Operation *op, ScheduleEmitter &emitter) {
  const std::string node = cString(onnxNodeName(op->getLoc())),
                    value = cString(onnxComputedValue(op->getLoc()));
  for (auto [i, result] : llvm::enumerate(op->getResults())) {
    auto type = cast<RankedTensorType>(result.getType());
    emitter.line("if (dump->fn) dump->fn(dump->user, " + node + ", " + (i ? "\"\"" : value) +
                 ", " + std::to_string(i) + ", " + dtypeEnum(type.getElementType()) + ", " +
                 emitter.array(type.getShape()) + ", " + std::to_string(type.getRank()) + ", " +
                 emitter.ptr(result) + ");");
  }
}

// The statements of one planned function; false after diagnostics on ops without a kernel.
// With `profile`, each op is timed into the schedule's `profile` entries and its initializer
// (node, op, shapes, FLOPs, bytes) appended to `*profile`; with `dump`, each op's results are
// handed to the schedule's `dump`.
bool emitSchedule(func::FuncOp func, const Target &target, ScheduleEmitter &emitter,
                  int64_t arenaBytes, std::vector<std::string> *profile = nullptr,
                  bool dump = false) {
  const EmitterTable &table = target.emitters();
  const bool poison = target.poisonsDeadMemory();
  bool ok = true;
  // Views and elided concats need no code: their data is already where it belongs.
  auto needsCode = [](Operation *op) {
    return !isa<ConstantOp, func::FuncOp, func::ReturnOp>(op) && !op->hasAttr(kViewAttr) &&
           !op->hasAttr(kElidedAttr);
  };
  int64_t opsWithCode = 0, opsEmitted = 0;
  func.walk([&](Operation *op) { opsWithCode += needsCode(op); });
  // Each part is a lambda sharing the schedule's parameters; its error ends the schedule.
  const bool parted = opsWithCode > kOpsPerSchedulePart;
  auto closePart = [&] {
    emitter.line("  return nullptr;");
    emitter.line("}())");
    emitter.line("  return partError;");
  };
  // DLC_CHECK_MEMORY builds poison memory that holds no live value, so a read after reuse
  // (or of never-written memory) shows up as NaN / all-ones integers.
  if (poison) {
    emitter.line("#ifdef DLC_CHECK_MEMORY");
    emitter.line("dlc::rt::poison(arena, " + std::to_string(arenaBytes) + ");");
    emitter.line("#endif");
  }
  func.walk([&](Operation *op) {
    if (isa<ConstantOp, func::FuncOp>(op))
      return;
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      emitter.copyUnwrittenOutputs(ret);
      if (parted)
        closePart();
      return;
    }
    if (needsCode(op)) {
      if (parted && opsEmitted++ % kOpsPerSchedulePart == 0) {
        if (opsEmitted > 1)
          closePart();
        emitter.line("if (const char *partError = [&]() __attribute__((noinline)) -> const char "
                     "* {");
      }
      auto it = table.find(op->getName().getStringRef().str());
      if (it == table.end()) {
        ok = succeeded(target.checkLegal(op)) && ok;
        return;
      }
      std::string node = onnxNodeName(op->getLoc()), opType = onnxOpType(op->getLoc());
      emitter.currentOp = "node '" + node + "' (" +
                          (opType.empty() ? op->getName().getStringRef().str() : opType) + ")";
      // A block per op keeps each op's constant arrays local to its call.
      emitter.line("{ // " + op->getName().getStringRef().str() + " " +
                   commentText(onnxNodeName(op->getLoc())));
      if (profile) {
        OpCost cost = opCost(op);
        emitter.line("dlc::rt::OpTimer opTimer(profile[" + std::to_string(profile->size()) +
                     "]);");
        profile->push_back("{" + cString(node) + ", " +
                           cString(opType.empty() ? op->getName().getStringRef().str() : opType) +
                           ", " + cString(cost.shapes) + ", " + std::to_string(int64_t(cost.flops)) + ".0, " +
                           std::to_string(int64_t(cost.bytes)) + ".0, 0, 0, 0}");
      }
      if (failed(it->second(op, emitter)))
        ok = false;
      if (dump)
        emitDump(op, emitter);
      emitter.line("}");
    }
    auto released = op->getAttrOfType<DenseI64ArrayAttr>(kReleaseAttr);
    if (released && poison) {
      emitter.line("#ifdef DLC_CHECK_MEMORY");
      for (int64_t i = 0; i + 1 < (int64_t)released.size(); i += 2)
        emitter.line("dlc::rt::poison(arena + " + std::to_string(released[i]) + ", " +
                     std::to_string(released[i + 1]) + ");");
      emitter.line("#endif");
    }
  });
  return ok;
}

// Model state of a training build, laid out in @train_step's argument order: weights and
// running statistics (which have initial values) first, optimizer moments after.
struct StateEntry {
  std::string name;
  const char *kind;
  RankedTensorType type;
  int64_t offset;
};
struct StateLayout {
  std::vector<StateEntry> entries;
  std::map<std::string, int64_t> offsets;
  int64_t bytes = 0;
  int64_t initialBytes = 0;  // the prefix with initial values; the rest starts at zero
  int64_t initialOffset = 0; // of that prefix in the weights blob
};

std::string argName(func::FuncOp func, unsigned i) {
  auto name = func.getArgAttrOfType<StringAttr>(i, kTensorNameAttr);
  return name ? name.str() : "arg" + std::to_string(i);
}

StateLayout layoutState(func::FuncOp step, std::vector<char> &blob) {
  StateLayout layout;
  std::vector<std::pair<int64_t, ElementsAttr>> initial;
  for (unsigned i = 0; i < step.getNumArguments(); ++i) {
    if (!step.getArgAttr(i, kStateAttr))
      continue;
    auto type = cast<RankedTensorType>(step.getArgumentTypes()[i]);
    auto value = step.getArgAttrOfType<ElementsAttr>(i, kInitialValueAttr);
    const char *kind = step.getArgAttr(i, kTrainableAttr) ? "DLC_STATE_TRAINED"
                       : value                            ? "DLC_STATE_BUFFER"
                                                          : "DLC_STATE_MOMENT";
    int64_t offset = (layout.bytes + 63) / 64 * 64;
    layout.entries.push_back({argName(step, i), kind, type, offset});
    layout.offsets[argName(step, i)] = offset;
    layout.bytes = offset + tensorBytes(type);
    if (value) {
      initial.push_back({offset, value});
      layout.initialBytes = layout.bytes;
    }
  }
  alignBlob(blob);
  layout.initialOffset = blob.size();
  blob.resize(blob.size() + layout.initialBytes);
  for (auto [offset, value] : initial) {
    std::vector<char> bytes = elementsBytes(value);
    std::copy(bytes.begin(), bytes.end(), blob.begin() + layout.initialOffset + offset);
  }
  return layout;
}

// Pointer expressions for a function's arguments: graph inputs (and labels) from `inputs`,
// in order; state from the state buffer; hyperparameters from `hyper`.
std::vector<std::string> argPointers(func::FuncOp func, const StateLayout &state) {
  std::vector<std::string> pointers;
  int input = 0;
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    std::string type = cType(cast<RankedTensorType>(func.getArgumentTypes()[i]).getElementType());
    if (func.getArgAttr(i, kStateAttr))
      pointers.push_back("reinterpret_cast<" + type + " *>(state + " +
                         std::to_string(state.offsets.at(argName(func, i))) + ")");
    else if (func.getArgAttr(i, kHyperAttr))
      pointers.push_back("hyper");
    else
      pointers.push_back("static_cast<const " + type + " *>(inputs[" + std::to_string(input++) +
                         "])");
  }
  return pointers;
}

// Graph inputs (and labels): the arguments that are neither state nor hyperparameters.
std::vector<unsigned> dataArguments(func::FuncOp func) {
  std::vector<unsigned> data;
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    if (!func.getArgAttr(i, kStateAttr) && !func.getArgAttr(i, kHyperAttr))
      data.push_back(i);
  return data;
}

int64_t arenaOf(func::FuncOp func) {
  auto arena = func->getAttrOfType<IntegerAttr>(kArenaBytesAttr);
  if (!arena)
    func.emitError("no memory plan (dlc.arena_bytes) to generate code from");
  return arena ? arena.getInt() : -1;
}

// Shapes, infos and typed C++ parameters of a list of tensors (inputs or outputs).
struct TensorTable {
  std::string shapes, infos, typedParams, typedArgs;
  size_t count = 0, maxRank = 1;
  void add(const std::string &tensorName, RankedTensorType type, bool isInput,
           const std::string &shapeTable, std::set<std::string> &used,
           std::string &shapeConstants) {
    std::string id = identifier(tensorName, used);
    std::string sep = count ? ", " : "";
    shapes +=
        sep + "{" + list(type.getShape().empty() ? ArrayRef<int64_t>{0} : type.getShape()) + "}";
    infos += sep + "{" + cString(tensorName) + ", " + dtypeEnum(type.getElementType()) + ", " +
             std::to_string(type.getRank()) + ", " + shapeTable + "[" + std::to_string(count) +
             "], " + std::to_string(tensorBytes(type)) + "u}";
    shapeConstants += "constexpr int64_t k_" + id + "_shape[] = {" +
                      list(type.getShape().empty() ? ArrayRef<int64_t>{1} : type.getShape()) +
                      "};\n";
    typedParams += sep + (isInput ? "const " : "") + cType(type.getElementType()) + " *" + id;
    typedArgs += sep + id;
    maxRank = std::max<size_t>(maxRank, type.getRank());
    ++count;
  }
};

std::string stateEntries(const StateLayout &state, std::string &shapes) {
  std::string entries;
  for (auto [i, e] : llvm::enumerate(state.entries)) {
    std::string shape = "kStateShape" + std::to_string(i);
    shapes += "const int64_t " + shape + "[] = {" +
              list(e.type.getShape().empty() ? ArrayRef<int64_t>{0} : e.type.getShape()) + "};\n";
    entries += std::string(i ? ",\n    " : "") + "{" + cString(e.name) + ", " + e.kind + ", " +
               dtypeEnum(e.type.getElementType()) + ", " + std::to_string(e.type.getRank()) + ", " +
               shape + ", " + std::to_string(e.offset) + "u, " +
               std::to_string(tensorBytes(e.type)) + "u}";
  }
  return entries;
}

// Adds the sections of the fragments file `file` to `vars`: each runs from its "//@@ KEY" line
// to the next marker and becomes @KEY@, after its own @...@ are replaced from `own` and then
// `vars`.
void addSections(const std::string &file, std::map<std::string, std::string> own,
                 std::map<std::string, std::string> &vars) {
  for (const auto &[key, value] : vars)
    own.try_emplace(key, value);
  std::string fragments = embeddedFile(file);
  for (size_t at = fragments.find("//@@ "); at != std::string::npos;) {
    size_t keyEnd = fragments.find('\n', at);
    size_t next = fragments.find("//@@ ", keyEnd);
    std::string key = fragments.substr(at + 5, keyEnd - at - 5);
    std::string text = fragments.substr(
        keyEnd + 1, next == std::string::npos ? std::string::npos : next - keyEnd - 1);
    if (!text.empty() && text.back() == '\n') // the line break before the next marker
      text.pop_back();
    vars[key] = substitute(text, own);
    at = next;
  }
}

std::string upperCase(const std::string &name) {
  std::string upper = name;
  for (char &c : upper)
    c = std::toupper(static_cast<unsigned char>(c));
  return upper;
}

// The runtime headers the CUDA kernels include, as raw string literals (in the order of
// KernelSource::headerNames in model_cuda.cu.tpl), for NVRTC at create time.
std::string kernelHeaders() {
  std::string literals;
  for (const char *header :
       {"runtime/cuda/dlc_cuda_rtc.h", "runtime/scalar_ops.h", "runtime/cuda/dlc_cuda_kernels.h"})
    literals += std::string(literals.empty() ? "" : ",\n    ") + "R\"dlcjit(" +
                embeddedFile(header) + ")dlcjit\"";
  return literals;
}

} // namespace

bool generateCode(ModuleOp module, const Target &target, const std::string &name,
                  const std::string &modelPath, const std::string &weightsPath, GeneratedModel &out,
                  const CodegenOptions &options) {
  const CudaCodegenOptions &cudaOptions = options.cuda;
  auto func = module.lookupSymbol<func::FuncOp>("forward");
  if (!func) {
    module.emitError("no function @forward to generate code for");
    return false;
  }
  auto step = module.lookupSymbol<func::FuncOp>("train_step");
  const TargetTemplates templates = target.templates();

  out.weights.clear();
  WeightsBlob weights{out.weights, {}, {}};
  module.walk([&](ConstantOp op) {
    // A constant every use reads packed is stored only packed (when its uses are emitted).
    if (target.packsWeights() && !op->use_empty() &&
        llvm::all_of(op->getUses(), [](OpOperand &use) { return weightPacking(use).has_value(); }))
      return;
    auto [it, fresh] = weights.plain.try_emplace(op.getValue().getAsOpaquePointer(), 0);
    if (fresh)
      it->second = weights.append(op.getBytes());
  });
  StateLayout state;
  if (step)
    state = layoutState(step, out.weights);

  int64_t forwardArena = arenaOf(func), stepArena = step ? arenaOf(step) : 0;
  if (forwardArena < 0 || stepArena < 0)
    return false;
  // forward() and train_step() never run at once on one model: they share its arena.
  out.arenaBytes = std::max(forwardArena, stepArena);
  // One emitter for both functions: their kernels, fault codes and convolution plans are the
  // model's.
  ScheduleEmitter emitter(target, weights, argPointers(func, state));
  emitter.interpretFusedChains = options.interpretFusedChains;
  std::vector<std::string> profileTable;
  if (options.profile && templates.profileSections.empty()) {
    module.emitError("--profile times CPU schedules only");
    return false;
  }
  if (options.dump && templates.dumpSections.empty()) {
    module.emitError("--dump reads CPU schedules only");
    return false;
  }
  if (options.dump && options.profile) {
    module.emitError("--dump and --profile do not combine: the profile would time the dump");
    return false;
  }
  if (!emitSchedule(func, target, emitter, forwardArena,
                    options.profile ? &profileTable : nullptr, options.dump))
    return false;
  std::string forwardSchedule = emitter.body_str(), stepSchedule;
  if (step) {
    emitter.startFunction(argPointers(step, state));
    if (!emitSchedule(step, target, emitter, stepArena))
      return false;
    stepSchedule = emitter.body_str();
  }

  // Interface tables.
  std::set<std::string> usedIdentifiers;
  std::string shapeConstants;
  TensorTable inputs, outputs, trainInputs;
  for (unsigned i : dataArguments(func))
    inputs.add(argName(func, i), cast<RankedTensorType>(func.getArgumentTypes()[i]), true,
               "kInputShapes", usedIdentifiers, shapeConstants);
  for (auto [i, t] : llvm::enumerate(func.getFunctionType().getResults())) {
    auto nameAttr = func.getResultAttrOfType<StringAttr>(i, kTensorNameAttr);
    outputs.add(nameAttr ? nameAttr.str() : "output" + std::to_string(i), cast<RankedTensorType>(t),
                false, "kOutputShapes", usedIdentifiers, shapeConstants);
  }
  size_t maxRank = std::max(inputs.maxRank, outputs.maxRank);

  std::string faultMessages, convShapes;
  for (const std::string &message : emitter.faultMessages())
    faultMessages += ", " + cString(message);
  for (const std::string &shape : emitter.convPlans())
    convShapes += "\n    " + shape + ",";
  const std::string upper = upperCase(name);
  std::map<std::string, std::string> vars = {
      {"NAME", name},
      {"UPPER_NAME", upper},
      {"GUARD", "DLC_GENERATED_" + upper + "_H"},
      {"DLC_VERSION", DLC_VERSION},
      {"MODEL_FILE", modelFileComment(modelPath)},
      {"ARENA_BYTES", std::to_string(out.arenaBytes)},
      {"WEIGHT_BYTES", std::to_string(out.weights.size())},
      {"NUM_INPUTS", std::to_string(inputs.count)},
      {"NUM_OUTPUTS", std::to_string(outputs.count)},
      {"MAX_RANK", std::to_string(maxRank)},
      // An empty initializer list would make zero-length arrays; a model always has outputs,
      // and input-less models get a placeholder entry.
      {"INPUT_SHAPES", inputs.shapes.empty() ? "{0}" : inputs.shapes},
      {"OUTPUT_SHAPES", outputs.shapes},
      {"INPUT_INFOS", inputs.infos.empty() ? "{nullptr, DLC_F32, 0, nullptr, 0}" : inputs.infos},
      {"OUTPUT_INFOS", outputs.infos},
      {"SHAPE_CONSTANTS", shapeConstants},
      {"TYPED_PARAMS", inputs.typedParams + (inputs.count ? ", " : "") + outputs.typedParams},
      {"TYPED_INPUT_ARGS", inputs.typedArgs.empty() ? "nullptr" : inputs.typedArgs},
      {"TYPED_OUTPUT_ARGS", outputs.typedArgs},
      {"SCHEDULE", forwardSchedule},
      {"KERNELS", emitter.kernels_str()},
      {"FAULT_COUNT", std::to_string(emitter.faultMessages().size())},
      {"ALLOW_TF32", cudaOptions.allowTf32 ? "true" : "false"},
      {"ALWAYS_JIT", cudaOptions.alwaysJit ? "true" : "false"},
      {"KERNEL_COUNT", std::to_string(emitter.kernelsDefined())},
      {"FIRST_KERNEL",
       emitter.kernelsDefined() ? "reinterpret_cast<const void *>(kernel0)" : "nullptr"},
      {"KERNEL_HEADERS", kernelHeaders()},
      {"CONV_COUNT", std::to_string(emitter.convPlans().size())},
      {"CONV_SHAPES", convShapes},
      {"FAULT_MESSAGES", faultMessages},
      {"TRAIN_INCLUDE", ""},
      {"TRAIN_MACROS", ""},
      {"TRAIN_C_API", ""},
      {"TRAIN_METHODS", ""},
      {"TRAIN_MEMBERS", ""},
      {"STATE_PARAM", ""},
      {"STATE_ARG", ""},
      {"TRAIN_INIT", ""},
      {"TRAIN_DESTROY", ""},
      {"TRAIN_DEFINITIONS", ""},
  };
  // The sections profile.tpl or dump.tpl fill.
  for (const char *key : {"INSTRUMENT_MACROS", "INSTRUMENT_C_API", "INSTRUMENT_METHODS",
                          "INSTRUMENT_MEMBERS", "INSTRUMENT_PARAM", "INSTRUMENT_ARG",
                          "INSTRUMENT_TABLE", "INSTRUMENT_INIT", "INSTRUMENT_DEFINITIONS"})
    vars[key] = "";
  if (step) {
    for (unsigned i : dataArguments(step))
      trainInputs.add(argName(step, i), cast<RankedTensorType>(step.getArgumentTypes()[i]), true,
                      "kTrainInputShapes", usedIdentifiers, shapeConstants);
    std::string stateShapes, entries = stateEntries(state, stateShapes);
    auto optimizer = step->getAttrOfType<DictionaryAttr>("dlc.optimizer");
    auto number = [&](StringRef key, double fallback) {
      auto attr = optimizer ? optimizer.getAs<FloatAttr>(key) : nullptr;
      return floatLiteral(attr ? attr.getValueAsDouble() : fallback);
    };
    std::map<std::string, std::string> train = {
        {"STATE_BYTES", std::to_string(state.bytes)},
        {"INITIAL_STATE_OFFSET", std::to_string(state.initialOffset)},
        {"INITIAL_STATE_BYTES", std::to_string(state.initialBytes)},
        {"NUM_STATE_ENTRIES", std::to_string(state.entries.size())},
        {"STATE_SHAPES", stateShapes},
        {"STATE_ENTRIES", entries},
        {"TRAIN_NUM_INPUTS", std::to_string(trainInputs.count)},
        {"TRAIN_MAX_RANK", std::to_string(trainInputs.maxRank)},
        {"TRAIN_INPUT_SHAPES", trainInputs.shapes},
        {"TRAIN_INPUT_INFOS", trainInputs.infos},
        {"TRAIN_TYPED_PARAMS", trainInputs.typedParams},
        {"TRAIN_TYPED_ARGS", trainInputs.typedArgs},
        {"TRAIN_SCHEDULE", stepSchedule},
        {"LEARNING_RATE", number("lr", 0.01)},
        {"BETA1", number("beta1", 0.0)},
        {"BETA2", number("beta2", 0.0)},
    };
    addSections(templates.trainSections, train, vars);
  }
  if (options.profile) {
    std::map<std::string, std::string> profiling = {
        {"OP_COUNT", std::to_string(profileTable.size())},
        {"OP_TABLE", "\n    " + llvm::join(profileTable, ",\n    ")}};
    addSections(templates.profileSections, profiling, vars);
  }
  if (options.dump)
    addSections(templates.dumpSections, {}, vars);
  out.header = substitute(embeddedFile(templates.header), vars);
  out.source = substitute(embeddedFile(templates.source), vars);
  out.weightsSource = weightsSource(name, out.weights.size(), weightsPath);
  return true;
}

std::string anyDeviceSource(const std::string &name, const std::string &modelPath, bool header) {
  const std::string upper = upperCase(name);
  std::map<std::string, std::string> vars = {{"NAME", name},
                                             {"DLC_VERSION", DLC_VERSION},
                                             {"MODEL_FILE", modelFileComment(modelPath)},
                                             {"GUARD", "DLC_GENERATED_" + upper + "_ANY_H"}};
  return substitute(embeddedFile(header ? "codegen_templates/model_any.h.tpl"
                                        : "codegen_templates/model_any.cpp.tpl"),
                    vars);
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
