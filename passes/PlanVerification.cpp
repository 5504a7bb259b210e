// Deliberately shares no code with the planner: it re-derives the schedule, liveness and each
// value's memory from the IR attributes alone, so a planner bug cannot hide itself.
#include "dialects/DlcDialect.h"
#include "dialects/Sizes.h"
#include "passes/Passes.h"

#include <map>


namespace dlc {
#define GEN_PASS_DEF_PLANVERIFICATION
#include "passes/Passes.h.inc"
} // namespace dlc

using namespace mlir;

namespace {

enum class Memory { Arena, Output, Input, Weight };

struct Range {
  Memory memory;
  int64_t index; // output/input number, or the constant's order for weights
  int64_t begin, end;
  bool overlaps(const Range &o) const {
    return memory == o.memory && index == o.index && begin < o.end && o.begin < end;
  }
  bool operator==(const Range &o) const {
    return memory == o.memory && index == o.index && begin == o.begin && end == o.end;
  }
};

int64_t byteSize(Value v) { return dlc::tensorBytes(v.getType()); }

// [begin, begin + bytes) lies in [0, capacity); offsets come from attributes that may have
// been written by hand, so the sum is checked.
bool fitsIn(int64_t begin, int64_t bytes, int64_t capacity) {
  auto end = dlc::checkedAdd(begin, bytes);
  return end && *end <= capacity;
}

std::string describe(Value v) {
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    auto func = cast<func::FuncOp>(arg.getOwner()->getParentOp());
    auto name = func.getArgAttrOfType<StringAttr>(arg.getArgNumber(), dlc::kTensorNameAttr);
    return "graph input '" + (name ? name.str() : std::to_string(arg.getArgNumber())) + "'";
  }
  Operation *op = v.getDefiningOp();
  std::string node;
  if (auto fused = dyn_cast<FusedLoc>(op->getLoc())) {
    for (Location l : fused.getLocations())
      if (auto name = dyn_cast<NameLoc>(l)) {
        node = name.getName().str();
        break;
      }
  } else if (auto name = dyn_cast<NameLoc>(op->getLoc())) {
    node = name.getName().str();
  }
  return "'" + (node.empty() ? "<unnamed>" : node) + "' (" + op->getName().getStringRef().str() +
         ")";
}

class Verifier {
public:
  Verifier(func::FuncOp func, const dlc::WorkspaceNeed &workspaceNeed)
      : func(func), workspaceNeed(workspaceNeed) {}
  LogicalResult run();

private:
  LogicalResult resolve(Operation &op);
  template <typename LiveIn>
  LogicalResult checkStateUpdate(Operation &op, int64_t at, LiveIn &liveIn);
  LogicalResult fail(Operation *at, const Twine &message) {
    at->emitError("unsafe memory plan: ") << message;
    return failure();
  }

  func::FuncOp func;
  const dlc::WorkspaceNeed &workspaceNeed;
  llvm::DenseMap<Operation *, int64_t> index;
  llvm::DenseMap<Value, int64_t> def, lastUse;
  llvm::DenseMap<Value, Range> range;
  // Declared sharing (views, in-place, elided concats) as a union-find forest.
  llvm::DenseMap<Value, Value> aliasParent;
  Value aliasRoot(Value v) {
    auto it = aliasParent.find(v);
    if (it == aliasParent.end() || it->second == v)
      return v;
    return it->second = aliasRoot(it->second);
  }
  void declareAlias(Value a, Value b) { aliasParent[aliasRoot(a)] = aliasRoot(b); }
  int64_t lastUseOf(Value v) {
    auto it = lastUse.find(v);
    return it == lastUse.end() ? def[v] : it->second;
  }
  int64_t arenaBytes = 0, numOps = 0, weights = 0;
};

LogicalResult Verifier::resolve(Operation &op) {
  Value result = op.getResult(0);
  int64_t bytes = byteSize(result);
  if (isa<dlc::ConstantOp>(op)) {
    range[result] = {Memory::Weight, weights++, 0, bytes};
    return success();
  }
  if (op.hasAttr(dlc::kElidedAttr) && !isa<dlc::ConcatOp>(op))
    return fail(&op, describe(result) + " is marked elided but only concats can be");
  if (op.hasAttr(dlc::kViewAttr)) {
    std::optional<int64_t> offset = dlc::viewByteOffset(&op);
    if (!offset)
      return fail(&op, describe(result) + " is marked as a view but its op copies data");
    Value source = op.getOperand(0);
    if (*offset < 0 || *offset + bytes > byteSize(source) ||
        (op.hasTrait<dlc::ViewOpTrait>() && byteSize(source) != bytes))
      return fail(&op, "view of " + describe(source) + " leaves its bytes");
    Range shared = range[source]; // copy: inserting below may move the map's storage
    shared.begin += *offset;
    shared.end = shared.begin + bytes;
    range[result] = shared;
    declareAlias(result, source);
    return success();
  }
  if (auto offset = op.getAttrOfType<IntegerAttr>(dlc::kArenaOffsetAttr)) {
    int64_t begin = offset.getInt();
    if (!fitsIn(begin, bytes, arenaBytes))
      return fail(&op, describe(result) + " lies outside the arena");
    range[result] = {Memory::Arena, 0, begin, begin + bytes};
  } else if (auto output = op.getAttrOfType<IntegerAttr>(dlc::kOutputAttr)) {
    auto offset = op.getAttrOfType<IntegerAttr>(dlc::kOutputOffsetAttr);
    auto results = func.getFunctionType().getResults();
    int64_t j = output.getInt(), begin = offset ? offset.getInt() : 0;
    if (j < 0 || j >= (int64_t)results.size())
      return fail(&op, describe(result) + " names a missing graph output");
    int64_t capacity = dlc::tensorBytes(results[j]);
    if (!fitsIn(begin, bytes, capacity))
      return fail(&op, describe(result) + " lies outside graph output #" + Twine(j));
    range[result] = {Memory::Output, j, begin, begin + bytes};
  } else {
    return fail(&op, describe(result) + " has no memory assigned");
  }
  if (auto inplace = op.getAttrOfType<IntegerAttr>(dlc::kInPlaceAttr)) {
    int64_t k = inplace.getInt();
    auto kernel = dyn_cast<dlc::InPlaceInterface>(op);
    if (!kernel || !llvm::is_contained(kernel.getInPlaceOperands(), k))
      return fail(&op, describe(result) + " is marked in place but its kernel cannot overwrite "
                                          "operand #" + Twine(k));
    if (!(range[op.getOperand(k)] == range[result]))
      return fail(&op, "in-place result " + describe(result) +
                           " is not in the memory of the operand it overwrites");
    declareAlias(result, op.getOperand(k));
  }
  return success();
}

// A state update writes its state operands in place: each must be model state (an argument
// marked dlc.state), and nothing may read the old contents afterwards.
template <typename LiveIn>
LogicalResult Verifier::checkStateUpdate(Operation &op, int64_t at, LiveIn &liveIn) {
  auto effects = dyn_cast<MemoryEffectOpInterface>(op);
  if (!effects)
    return fail(&op, "a state update without declared writes");
  SmallVector<MemoryEffects::EffectInstance> instances;
  effects.getEffects(instances);
  for (const auto &effect : instances) {
    Value written = effect.getValue();
    if (!written || !isa<MemoryEffects::Write>(effect.getEffect()))
      continue;
    auto arg = dyn_cast<BlockArgument>(written);
    if (!arg || !func.getArgAttr(arg.getArgNumber(), dlc::kStateAttr))
      return fail(&op, "state update writes " + describe(written) + ", which is not model state");
    for (Value u : liveIn(range[written], at))
      if (range[u].overlaps(range[written]) && lastUseOf(u) > at)
        return fail(&op, "state update overwrites " + describe(u) + ", which is read later");
  }
  return success();
}

LogicalResult Verifier::run() {
  auto arena = func->getAttrOfType<IntegerAttr>(dlc::kArenaBytesAttr);
  if (!arena)
    return func.emitError("unsafe memory plan: no dlc.arena_bytes");
  arenaBytes = arena.getInt();
  Block &body = func.getBody().front();
  for (BlockArgument arg : body.getArguments()) {
    def[arg] = -1;
    range[arg] = {Memory::Input, arg.getArgNumber(), 0, byteSize(arg)};
  }
  for (Operation &op : body) {
    index[&op] = numOps++;
    for (Value r : op.getResults())
      def[r] = index[&op];
  }
  for (Operation &op : body)
    for (Value operand : op.getOperands())
      lastUse[operand] = std::max(lastUse.lookup(operand),
                                  isa<func::ReturnOp>(op) ? numOps : index[&op]);
  for (Operation &op : body) {
    if (isa<func::ReturnOp>(op) || op.hasTrait<dlc::StateUpdateTrait>())
      continue;
    if (op.getNumResults() != 1)
      return fail(&op, "ops with several results are not planned");
    if (failed(resolve(op)))
      return failure();
  }
  // Elided concats: each input must already sit in its slice of the result.
  for (Operation &op : body)
    if (auto concat = dyn_cast<dlc::ConcatOp>(op); concat && op.hasAttr(dlc::kElidedAttr)) {
      // Slices are contiguous only when every dim before the axis is 1.
      auto shape = cast<RankedTensorType>(concat.getType()).getShape();
      if (llvm::any_of(shape.take_front(concat.getAxis()), [](int64_t d) { return d != 1; }))
        return fail(&op, "elided concat " + describe(concat.getResult()) +
                             " has non-contiguous slices");
      Range at = range[concat.getResult()];
      int64_t cursor = at.begin;
      for (Value in : concat.getInputs()) {
        Range expected{at.memory, at.index, cursor, cursor + byteSize(in)};
        if (!(range[in] == expected))
          return fail(&op, "elided concat input " + describe(in) + " is not in its slice");
        declareAlias(in, concat.getResult());
        cursor = expected.end;
      }
    }

  // One sweep over the schedule. `live` holds, per memory (the arena, each output, each
  // input, each weight), the values defined so far whose last use is not yet passed, so each
  // op is compared only with what is alive in the memory it touches.
  std::map<std::pair<Memory, int64_t>, std::vector<Value>> live;
  auto liveIn = [&](const Range &r, int64_t at) -> std::vector<Value> & {
    auto &values = live[{r.memory, r.index}];
    llvm::erase_if(values, [&](Value u) { return lastUseOf(u) < at; });
    return values;
  };
  // Values alive at the same time may share memory only as declared aliases.
  auto enter = [&](Value v, Operation *at) -> LogicalResult {
    Range r = range[v];
    auto &values = liveIn(r, def[v]);
    for (Value u : values)
      if (range[u].overlaps(r) && aliasRoot(u) != aliasRoot(v))
        return fail(at, "simultaneously live " + describe(u) + " and " + describe(v) +
                            " share memory");
    values.push_back(v);
    return success();
  };
  for (BlockArgument arg : body.getArguments())
    if (failed(enter(arg, func)))
      return failure();

  for (Operation &op : body) {
    if (isa<func::ReturnOp>(op))
      continue;
    int64_t at = index[&op];
    if (op.hasTrait<dlc::StateUpdateTrait>()) {
      if (failed(checkStateUpdate(op, at, liveIn)))
        return failure();
      continue;
    }
    Value result = op.getResult(0);
    // Every write must not destroy data that is read later.
    if (!isa<dlc::ConstantOp>(op) && !op.hasAttr(dlc::kViewAttr) &&
        !op.hasAttr(dlc::kElidedAttr)) {
      SmallVector<std::pair<Range, bool>> writes = {{range[result], true}};
      auto recorded = op.getAttrOfType<IntegerAttr>(dlc::kWorkspaceBytesAttr);
      int64_t bytes = recorded ? recorded.getInt() : 0;
      // Asked of the target's kernels themselves, so a stale or wrong record cannot hide.
      if (workspaceNeed) {
        std::optional<int64_t> need = workspaceNeed(&op);
        if (!need)
          return fail(&op, describe(result) + " needs a workspace beyond " + dlc::kMaxTensorBytesText);
        if (*need != bytes)
          return fail(&op, describe(result) + " has " + Twine(bytes) +
                               " workspace bytes recorded, but its kernel needs " + Twine(*need));
      }
      auto ws = op.getAttrOfType<IntegerAttr>(dlc::kWorkspaceOffsetAttr);
      if (bytes > 0 && !ws)
        return fail(&op, describe(result) + " needs a workspace but has none");
      if (ws) {
        if (bytes <= 0)
          return fail(&op, describe(result) + " has a workspace its op does not use");
        if (!fitsIn(ws.getInt(), bytes, arenaBytes))
          return fail(&op, "workspace of " + describe(result) + " lies outside the arena");
        Range w{Memory::Arena, 0, ws.getInt(), ws.getInt() + bytes};
        if (w.overlaps(range[result]))
          return fail(&op, "workspace overlaps the result of " + describe(result));
        writes.push_back({w, false});
      }
      auto inplace = op.getAttrOfType<IntegerAttr>(dlc::kInPlaceAttr);
      for (auto [written, isResult] : writes) {
        if (written.memory == Memory::Input || written.memory == Memory::Weight)
          return fail(&op, describe(result) + " writes a graph input or weight");
        for (Value u : liveIn(written, at)) {
          if (!range[u].overlaps(written))
            continue;
          if (lastUseOf(u) > at)
            return fail(&op, describe(result) + " overwrites " + describe(u) +
                                 ", which is read later");
          // u is read by this very op: only a declared in-place operand may be overwritten.
          bool declared = isResult && inplace && range[u] == written &&
                          range[op.getOperand(inplace.getInt())] == written;
          if (!declared)
            return fail(&op, describe(result) + " overwrites its operand " + describe(u) +
                                 " without being declared in place");
        }
      }
    }
    if (failed(enter(result, &op)))
      return failure();
  }

  // Outputs not planned into their own buffer are copied there at the end; that copy must
  // not overwrite another output's data.
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  for (auto [j, v] : llvm::enumerate(ret.getOperands())) {
    Range own{Memory::Output, (int64_t)j, 0, byteSize(v)};
    if (range[v] == own)
      continue;
    for (auto [k, w] : llvm::enumerate(ret.getOperands()))
      if (k != j && range[w].overlaps(own))
        return fail(func, "copying graph output #" + Twine(j) + " would overwrite " +
                              describe(w));
  }
  return success();
}

struct PlanVerificationPass : dlc::impl::PlanVerificationBase<PlanVerificationPass> {
  void runOnOperation() override {
    if (failed(dlc::verifyPlan(getOperation(), nullptr)))
      signalPassFailure();
  }
};

} // namespace

LogicalResult dlc::verifyPlan(func::FuncOp func, const WorkspaceNeed &workspaceNeed) {
  return Verifier(func, workspaceNeed).run();
}
