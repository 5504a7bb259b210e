#include "compiler/driver/Report.h"
#include "dialects/Locations.h"
#include "dialects/DlcDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <sstream>

using namespace mlir;

namespace dlc {
namespace {

func::FuncOp forward(ModuleOp module) { return module.lookupSymbol<func::FuncOp>("forward"); }

int64_t funcAttr(func::FuncOp func, StringRef name) {
  auto attr = func->getAttrOfType<IntegerAttr>(name);
  return attr ? attr.getInt() : 0;
}

std::string valueName(Operation *op) {
  std::string name = onnxValueName(op->getLoc());
  return name.empty() ? op->getName().getStringRef().str() : name;
}

std::string xmlEscape(const std::string &s) {
  std::string out;
  for (char c : s)
    out += c == '<' ? "&lt;" : c == '>' ? "&gt;" : c == '&' ? "&amp;" : c == '"' ? "&quot;"
                                                                      : std::string(1, c);
  return out;
}

// Arena bytes of forward values that stay alive past the loss for the backward pass: each
// storage (a value, with the views of it) once.
int64_t savedForBackwardBytes(func::FuncOp step) {
  Block &body = step.getBody().front();
  Operation *loss = cast<func::ReturnOp>(body.getTerminator()).getOperand(0).getDefiningOp();
  if (!loss)
    return 0;
  llvm::SmallPtrSet<Operation *, 32> saved;
  for (Operation &op : body) {
    if (&op == loss)
      break;
    for (Value result : op.getResults()) {
      bool readLater = llvm::any_of(result.getUsers(), [&](Operation *user) {
        return loss->isBeforeInBlock(user);
      });
      Operation *storage = &op;
      while (storage->hasAttr(kViewAttr) && storage->getOperand(0).getDefiningOp())
        storage = storage->getOperand(0).getDefiningOp();
      if (readLater && storage->hasAttr(kArenaOffsetAttr))
        saved.insert(storage);
    }
  }
  int64_t bytes = 0;
  for (Operation *op : saved)
    bytes += tensorBytes(op->getResult(0).getType());
  return bytes;
}

} // namespace

MemoryReport memoryReport(ModuleOp module, int64_t weightBytes) {
  MemoryReport r;
  func::FuncOp func = forward(module);
  r.arenaBytes = funcAttr(func, kArenaBytesAttr);
  r.lowerBoundBytes = funcAttr(func, kLowerBoundAttr);
  r.noReuseBytes = funcAttr(func, kNoReuseBytesAttr);
  r.weightBytes = weightBytes;
  func.walk([&](Operation *op) {
    r.inplaceOps += op->hasAttr(kInPlaceAttr);
    r.elidedConcats += op->hasAttr(kElidedAttr);
  });
  if (auto step = module.lookupSymbol<func::FuncOp>("train_step")) {
    r.training = true;
    r.trainArenaBytes = funcAttr(step, kArenaBytesAttr);
    r.trainLowerBoundBytes = funcAttr(step, kLowerBoundAttr);
    r.savedBytes = savedForBackwardBytes(step);
    for (unsigned i = 0; i < step.getNumArguments(); ++i)
      if (step.getArgAttr(i, kStateAttr))
        r.stateBytes = (r.stateBytes + 63) / 64 * 64 + tensorBytes(step.getArgumentTypes()[i]);
  }
  return r;
}

std::string reportText(const MemoryReport &r) {
  std::ostringstream os;
  double ratio = r.lowerBoundBytes ? double(r.arenaBytes) / r.lowerBoundBytes : 1.0;
  os << "arena bytes:        " << r.arenaBytes << "\n"
     << "lower bound bytes:  " << r.lowerBoundBytes << "\n"
     << "arena/lower bound:  " << ratio << "\n"
     << "no-reuse bytes:     " << r.noReuseBytes << "\n"
     << "in-place ops:       " << r.inplaceOps << "\n"
     << "elided concats:     " << r.elidedConcats << "\n"
     << "weight bytes:       " << r.weightBytes << "\n";
  if (r.training) {
    double trainRatio =
        r.trainLowerBoundBytes ? double(r.trainArenaBytes) / r.trainLowerBoundBytes : 1.0;
    os << "train arena bytes:  " << r.trainArenaBytes << "\n"
       << "train lower bound:  " << r.trainLowerBoundBytes << "\n"
       << "train/lower bound:  " << trainRatio << "\n"
       << "saved for backward: " << r.savedBytes << "\n"
       << "state bytes:        " << r.stateBytes << "\n";
  }
  return os.str();
}

std::string reportJson(const MemoryReport &r) {
  std::ostringstream os;
  os << "{\"arena_bytes\": " << r.arenaBytes << ", \"lower_bound_bytes\": " << r.lowerBoundBytes
     << ", \"no_reuse_bytes\": " << r.noReuseBytes << ", \"inplace_ops\": " << r.inplaceOps
     << ", \"elided_concats\": " << r.elidedConcats << ", \"weight_bytes\": " << r.weightBytes;
  if (r.training)
    os << ", \"train_arena_bytes\": " << r.trainArenaBytes
       << ", \"train_lower_bound_bytes\": " << r.trainLowerBoundBytes
       << ", \"saved_bytes\": " << r.savedBytes << ", \"state_bytes\": " << r.stateBytes;
  os << "}\n";
  return os.str();
}

std::string memorySvg(ModuleOp module) {
  func::FuncOp func = forward(module);
  Block &body = func.getBody().front();
  // Constants take no schedule time; the x axis counts executed ops only.
  llvm::DenseMap<Operation *, int64_t> index;
  int64_t steps = 0;
  for (Operation &op : body)
    index[&op] = isa<ConstantOp>(op) ? 0 : steps++;
  // A value's memory is in use until the last use of it or of any view of it.
  std::function<int64_t(Value)> lastUse = [&](Value v) {
    int64_t last = index[v.getDefiningOp()];
    for (Operation *user : v.getUsers()) {
      last = std::max(last, index[user]);
      if (user->hasAttr(kViewAttr))
        last = std::max(last, lastUse(user->getResult(0)));
    }
    return last;
  };
  struct Rect {
    int64_t from, to, offset, bytes;
    std::string label;
  };
  std::vector<Rect> rects;
  for (Operation &op : body) {
    if (auto offset = op.getAttrOfType<IntegerAttr>(kArenaOffsetAttr)) {
      rects.push_back({index[&op], lastUse(op.getResult(0)), offset.getInt(),
                       tensorBytes(op.getResult(0).getType()), valueName(&op)});
    }
    if (auto ws = op.getAttrOfType<IntegerAttr>(kWorkspaceOffsetAttr))
      rects.push_back({index[&op], index[&op], ws.getInt(),
                       op.getAttrOfType<IntegerAttr>(kWorkspaceBytesAttr).getInt(),
                       "workspace of " + valueName(&op)});
  }
  const double width = 1200, height = 700, left = 90, top = 40;
  int64_t arena = std::max<int64_t>(funcAttr(func, kArenaBytesAttr), 1);
  double xs = (width - left - 20) / std::max<int64_t>(steps, 1), ys = (height - top - 40) / arena;
  std::ostringstream os;
  os << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
     << "\" font-family=\"sans-serif\" font-size=\"11\">\n"
     << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
     << "<text x=\"" << left << "\" y=\"20\" font-size=\"14\">arena " << arena
     << " bytes, lower bound " << funcAttr(func, kLowerBoundAttr) << " bytes; x: op schedule ("
     << steps << " ops), y: arena offset</text>\n"
     << "<rect x=\"" << left << "\" y=\"" << top << "\" width=\"" << width - left - 20
     << "\" height=\"" << height - top - 40 << "\" fill=\"none\" stroke=\"black\"/>\n";
  for (auto [i, r] : llvm::enumerate(rects)) {
    double x = left + r.from * xs, w = std::max(1.0, (r.to - r.from + 1) * xs);
    double y = top + r.offset * ys, h = std::max(1.0, r.bytes * ys);
    unsigned hue = (i * 47) % 360;
    os << "<g><title>" << xmlEscape(r.label) << ": " << r.bytes << " bytes at " << r.offset
       << ", ops " << r.from << "-" << r.to << "</title><rect x=\"" << x << "\" y=\"" << y
       << "\" width=\"" << w << "\" height=\"" << h << "\" fill=\"hsl(" << hue
       << ",60%,70%)\" stroke=\"hsl(" << hue << ",60%,35%)\"/>";
    // Labels that do not fit are cut (about 6 px per character); the tooltip has them whole.
    size_t fits = static_cast<size_t>(w / 6);
    llvm::StringRef shown(r.label);
    shown.consume_back("_output_0"); // PyTorch's suffix on every value name says nothing
    std::string label = shown.str();
    if (h > 12 && fits >= 4)
      os << "<text x=\"" << x + 2 << "\" y=\"" << y + 11 << "\">"
         << xmlEscape(label.size() <= fits ? label
                                           : "..." + label.substr(label.size() - fits + 3))
         << "</text>";
    os << "</g>\n";
  }
  os << "<text x=\"" << left << "\" y=\"" << height - 15 << "\">0</text><text x=\"" << width - 60
     << "\" y=\"" << height - 15 << "\">" << steps - 1 << "</text>\n</svg>\n";
  return os.str();
}

} // namespace dlc
