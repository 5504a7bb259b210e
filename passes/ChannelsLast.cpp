#include "dialects/DlcDialect.h"
#include "passes/Passes.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/EquivalenceClasses.h"
#include "llvm/ADT/SetVector.h"

#include <limits>

namespace dlc {
#define GEN_PASS_DEF_CHANNELSLAST
#include "passes/Passes.h.inc"
} // namespace dlc

using namespace mlir;

namespace {

constexpr int64_t kToChannelsLast[] = {0, 2, 3, 1}, kToChannelsFirst[] = {0, 3, 1, 2};

RankedTensorType tensorOf(Value v) { return cast<RankedTensorType>(v.getType()); }
int64_t elementsOf(Value v) { return tensorOf(v).getNumElements(); }

bool qualifies(dlc::ConvOp conv) {
  if (conv.getChannelsLast() || !conv.getWeight().getDefiningOp<dlc::ConstantOp>() ||
      tensorOf(conv).getRank() != 4)
    return false;
  return dlc::rt::channelsLastApplies(dlc::convParams(conv));
}

// A network's first layer: a convolution over an image's few channels, no candidate itself,
// that a kernel reading the planes runs with a channels-last result (planar_input): where the
// group after it switches, its result needs no transpose.
bool readsPlanes(dlc::ConvOp conv) {
  if (conv.getChannelsLast() || !conv.getWeight().getDefiningOp<dlc::ConstantOp>() ||
      tensorOf(conv).getRank() != 4 || conv.getInputScale() || conv.getResidual() ||
      qualifies(conv))
    return false;
  dlc::rt::ConvParams params = dlc::convParams(conv);
  params.channelsLast = params.planarInput = true;
  return dlc::rt::channelsLastApplies(params);
}

// Of the qualifying convolutions, the ones that are not pointwise.
bool isDepthwise(dlc::ConvOp conv) {
  auto weight = tensorOf(conv.getWeight());
  return conv.getGroup() > 1 || weight.getDimSize(2) > 1 || weight.getDimSize(3) > 1;
}

// Ops that compute the same values in either layout when every rank-4 operand and the result
// are permuted alike: elementwise ops, broadcasting ones included (squeeze-and-excitation's
// per-channel scale), whose other operands are single values (HardSwish's constants). They
// join the convolutions around them, so activations and attention blocks between two
// convolutions no longer cut a group in two.
bool isLayoutFree(Operation *op) {
  if (op->getNumResults() != 1 ||
      !(op->hasTrait<OpTrait::Elementwise>() || op->hasTrait<dlc::BinaryKindOp>()))
    return false;
  auto result = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  return result && result.getRank() == 4 &&
         llvm::all_of(op->getOperandTypes(), [](Type type) {
           auto tensor = dyn_cast<RankedTensorType>(type);
           return tensor && (tensor.getRank() == 4 ||
                             (tensor.hasStaticShape() && tensor.getNumElements() == 1));
         });
}

// A gather of rows or columns (nearest Resize, as the importer writes it): channels-last each
// index copies a run of channels instead of one element.
bool isSpatialGather(dlc::GatherOp gather) {
  return tensorOf(gather.getInput()).getRank() == 4 &&
         tensorOf(gather.getIndices()).getRank() == 1 &&
         (gather.getAxis() == 2 || gather.getAxis() == 3);
}

bool isCandidate(Operation *op) {
  if (auto conv = dyn_cast<dlc::ConvOp>(op))
    return qualifies(conv);
  if (auto gather = dyn_cast<dlc::GatherOp>(op))
    return isSpatialGather(gather);
  // Channels-last, a global average pool is a mean over the middle axes.
  if (auto pool = dyn_cast<dlc::GlobalAvgPoolOp>(op))
    return tensorOf(pool.getInput()).getRank() == 4;
  return isLayoutFree(op);
}

// The operands whose layout switches with the op's: a convolution's activations (not its
// weight or bias), every rank-4 operand of the others.
SmallVector<OpOperand *, 2> layoutOperands(Operation *op) {
  SmallVector<OpOperand *, 2> operands;
  if (auto conv = dyn_cast<dlc::ConvOp>(op)) {
    operands.push_back(&conv.getInputMutable());
    if (conv.getResidual())
      operands.push_back(&conv.getResidualMutable()[0]);
    return operands;
  }
  for (OpOperand &operand : op->getOpOperands())
    if (tensorOf(operand.get()).getRank() == 4)
      operands.push_back(&operand);
  return operands;
}

// Whether an [N, C, H, W] tensor has the same bytes channels-last: one channel, or one
// position (squeeze-and-excitation's vectors). Its layout changes as a reshape, which moves
// nothing.
bool keepsBytes(Type channelsFirst) {
  auto shape = cast<RankedTensorType>(channelsFirst).getShape();
  return shape[1] == 1 || shape[2] * shape[3] == 1;
}

bool isTranspose(Operation *op, ArrayRef<int64_t> perm) {
  auto transpose = dyn_cast_or_null<dlc::TransposeOp>(op);
  return transpose && transpose.getPerm() == perm;
}

RankedTensorType permuted(Type type, ArrayRef<int64_t> perm) {
  auto tensor = cast<RankedTensorType>(type);
  SmallVector<int64_t> shape;
  for (int64_t dim : perm)
    shape.push_back(tensor.getDimSize(dim));
  return RankedTensorType::get(shape, tensor.getElementType());
}

// `value` in the other layout: a reshape where the bytes stay, else a transpose.
Value relayout(OpBuilder &b, Value value, ArrayRef<int64_t> perm, bool toChannelsLast) {
  Type channelsFirst = toChannelsLast ? value.getType() : permuted(value.getType(), perm);
  RankedTensorType type = permuted(value.getType(), perm);
  if (keepsBytes(channelsFirst))
    return b.create<dlc::ReshapeOp>(value.getLoc(), type, value);
  return b.create<dlc::TransposeOp>(value.getLoc(), type, value, b.getDenseI64ArrayAttr(perm));
}

// Ops that would switch layout together, in program order.
struct Group {
  SmallVector<Operation *> ops;
  llvm::SmallPtrSet<Operation *, 16> members;

  bool isMemberRead(OpOperand &use) const {
    return members.contains(use.getOwner()) &&
           llvm::is_contained(layoutOperands(use.getOwner()), &use);
  }

  // Values the group reads from outside, each once.
  llvm::SetVector<Value> borderInputs() const {
    llvm::SetVector<Value> inputs;
    for (Operation *op : ops)
      for (OpOperand *operand : layoutOperands(op))
        if (!members.contains(operand->get().getDefiningOp()))
          inputs.insert(operand->get());
    return inputs;
  }

  // Uses of a member's result outside the group.
  SmallVector<OpOperand *> outsideUses(Operation *op) const {
    SmallVector<OpOperand *> uses;
    for (OpOperand &use : op->getResult(0).getUses())
      if (!isMemberRead(use))
        uses.push_back(&use);
    return uses;
  }

  bool hasConv() const {
    return llvm::any_of(ops, [](Operation *op) { return isa<dlc::ConvOp>(op); });
  }

  void switchLayout() {
    OpBuilder b(ops.front());
    for (Value input : borderInputs()) {
      b.setInsertionPointAfterValue(input);
      Value channelsLast = relayout(b, input, kToChannelsLast, true);
      input.replaceUsesWithIf(channelsLast, [&](OpOperand &use) { return isMemberRead(use); });
    }
    // Replaced pools are erased last: `members` would take a new op at a freed address for one.
    SmallVector<Operation *> replaced;
    for (Operation *op : ops) {
      SmallVector<OpOperand *> uses = outsideUses(op);
      Value result = op->getResult(0);
      result.setType(permuted(result.getType(), kToChannelsLast));
      if (auto conv = dyn_cast<dlc::ConvOp>(op)) {
        conv.setChannelsLast(true);
      } else if (auto gather = dyn_cast<dlc::GatherOp>(op)) {
        gather.setAxis(gather.getAxis() - 1); // H, W: dims 2, 3 channels-first, 1, 2 last
      } else if (auto pool = dyn_cast<dlc::GlobalAvgPoolOp>(op)) {
        b.setInsertionPoint(pool);
        Value mean = b.create<dlc::ReduceMeanOp>(pool.getLoc(), result.getType(), pool.getInput(),
                                                 b.getDenseI64ArrayAttr({1, 2}));
        result.replaceAllUsesWith(mean);
        replaced.push_back(pool);
        result = mean;
      }
      if (uses.empty())
        continue;
      b.setInsertionPointAfterValue(result);
      Value channelsFirst = relayout(b, result, kToChannelsFirst, false);
      for (OpOperand *use : uses)
        use->set(channelsFirst);
    }
    for (Operation *op : replaced)
      op->erase();
  }
};

// Minimum s-t cut by augmenting paths (Edmonds-Karp): a group's graph is a few hundred
// nodes.
class MinCut {
public:
  static constexpr int64_t kSource = 0, kSink = 1;
  static constexpr int64_t kUnbounded = std::numeric_limits<int64_t>::max() / 4;

  int64_t addNode() {
    edgesOf.emplace_back();
    return int64_t(edgesOf.size()) - 1;
  }
  void addEdge(int64_t from, int64_t to, int64_t capacity) {
    edgesOf[from].push_back(edges.size());
    edges.push_back({to, capacity});
    edgesOf[to].push_back(edges.size());
    edges.push_back({from, 0});
  }
  // The nodes on the source's side of a minimum cut: every node that cannot reach the sink
  // once the flow is maximal (the most such nodes, so a tie switches).
  llvm::BitVector sourceSide() {
    while (augment()) {
    }
    llvm::BitVector reachesSink(edgesOf.size());
    SmallVector<int64_t> queue{kSink};
    reachesSink.set(kSink);
    for (size_t next = 0; next < queue.size(); ++next)
      for (size_t e : edgesOf[queue[next]]) {
        // Edge e ^ 1 runs from edges[e].to into this node.
        const int64_t from = edges[e].to;
        if (edges[e ^ 1].capacity > 0 && !reachesSink.test(from)) {
          reachesSink.set(from);
          queue.push_back(from);
        }
      }
    return reachesSink.flip();
  }

private:
  struct Edge {
    int64_t to, capacity; // residual; edge i ^ 1 is its reverse
  };
  SmallVector<Edge> edges;
  SmallVector<SmallVector<size_t, 4>> edgesOf = SmallVector<SmallVector<size_t, 4>>(2);

  // A shortest path of residual capacity from the source to the sink, by the edge into
  // each node; false when there is none.
  bool pathToSink(SmallVector<size_t> &via) const {
    llvm::BitVector seen(edgesOf.size());
    SmallVector<int64_t> queue{kSource};
    seen.set(kSource);
    via.assign(edgesOf.size(), 0);
    for (size_t next = 0; next < queue.size(); ++next)
      for (size_t e : edgesOf[queue[next]])
        if (edges[e].capacity > 0 && !seen.test(edges[e].to)) {
          seen.set(edges[e].to);
          via[edges[e].to] = e;
          queue.push_back(edges[e].to);
        }
    return seen.test(kSink);
  }
  bool augment() {
    SmallVector<size_t> via;
    if (!pathToSink(via))
      return false;
    int64_t flow = kUnbounded;
    for (int64_t node = kSink; node != kSource; node = edges[via[node] ^ 1].to)
      flow = std::min(flow, edges[via[node]].capacity);
    for (int64_t node = kSink; node != kSource; node = edges[via[node] ^ 1].to) {
      edges[via[node]].capacity -= flow;
      edges[via[node] ^ 1].capacity += flow;
    }
    return true;
  }
};

// What an op saves channels-last, in elements moved through a transpose. Measured: a
// depthwise output element computed channels-last saves about what moving one element
// through a transpose costs (ShuffleNetV2's units, whose border transposes move twice their
// depthwise output, ran 15% slower channels-last). In a DB text detector's FPN (one thread):
// a pointwise conv, its kernel reading each pixel's channels in place where the GEMM packs
// the planes, from a fifth to one element per output (24 -> 96 channels at 160x160 with a
// residual: 1.4 against 2.5 ms in the model, 1.1 against 1.5 alone; a transpose of its output
// 0.95 ms), counted as half; a nearest upsample along the rows half its output, copying runs
// of channels instead of single values (80x80x96 to 80x160: 0.51 against 0.96 ms).
int64_t channelsLastSaving(Operation *op) {
  if (auto conv = dyn_cast<dlc::ConvOp>(op))
    return elementsOf(conv.getResult()) / (isDepthwise(conv) ? 1 : 2);
  if (auto gather = dyn_cast<dlc::GatherOp>(op); gather && gather.getAxis() == 3)
    return elementsOf(gather.getResult()) / 2;
  return 0;
}

// A first layer's result that only the group reads: switched, the group takes it
// channels-last from the layer itself (switchPlanarReaders), without a transpose.
bool comesOutChannelsLast(const Group &group, Value input) {
  auto conv = input.getDefiningOp<dlc::ConvOp>();
  return conv && readsPlanes(conv) &&
         llvm::all_of(input.getUses(), [&](OpOperand &use) { return group.isMemberRead(use); });
}

// First layers whose readers all switched: their results come out channels-last, and the
// transposes to it go.
void switchPlanarReaders(func::FuncOp func) {
  SmallVector<dlc::ConvOp> convs;
  func.walk([&](dlc::ConvOp conv) {
    Value result = conv.getResult();
    if (readsPlanes(conv) && !result.use_empty() &&
        llvm::all_of(result.getUsers(),
                     [](Operation *user) { return isTranspose(user, kToChannelsLast); }))
      convs.push_back(conv);
  });
  for (dlc::ConvOp conv : convs) {
    Value result = conv.getResult();
    result.setType(permuted(result.getType(), kToChannelsLast));
    conv.setChannelsLast(true);
    conv.setPlanarInput(true);
    for (Operation *transpose : llvm::make_early_inc_range(result.getUsers())) {
      transpose->getResult(0).replaceAllUsesWith(result);
      transpose->erase();
    }
  }
}

// The members of a group worth switching. Each
// member is channels-last (the source's side) or channels-first (the sink's), the cut
// counting what the layout costs: a member left channels-first loses its saving
// (channelsLastSaving), and a value is transposed once for its readers in the other layout
// than its producer (a value from outside the group, and the outside uses of a member's, are
// channels-first), costing its elements. A transpose that cancels one already there, or a
// reshape, costs nothing. The cheapest assignment switches (a tie switches); a
// ConvNeXt's depthwise 7x7 convs, whose groups the residual adds between blocks joined into
// one that did not pay whole, now switch on their own.
SmallVector<Operation *> channelsLastPart(const Group &group) {
  MinCut cut;
  DenseMap<Operation *, int64_t> nodeOf;
  for (Operation *op : group.ops)
    nodeOf[op] = cut.addNode();
  auto transposeCost = [](Value value) {
    return keepsBytes(value.getType()) ? 0 : elementsOf(value);
  };
  for (Operation *op : group.ops) {
    const int64_t node = nodeOf[op];
    if (const int64_t saved = channelsLastSaving(op))
      cut.addEdge(MinCut::kSource, node, saved);
    Value result = op->getResult(0);
    const int64_t cost = transposeCost(result);
    if (cost == 0)
      continue;
    SmallVector<int64_t> readers;
    for (OpOperand &use : result.getUses())
      if (group.isMemberRead(use))
        readers.push_back(nodeOf[use.getOwner()]);
    const bool readOutside = llvm::any_of(group.outsideUses(op), [](OpOperand *use) {
      return !isTranspose(use->getOwner(), kToChannelsLast);
    });
    // Channels-last here, and a reader or an outside use channels-first: one transpose back.
    const int64_t back = cut.addNode();
    cut.addEdge(node, back, cost);
    for (int64_t reader : readers)
      cut.addEdge(back, reader, MinCut::kUnbounded);
    if (readOutside)
      cut.addEdge(back, MinCut::kSink, MinCut::kUnbounded);
    // Channels-first here, and a reader channels-last: one transpose to it.
    if (readers.empty())
      continue;
    const int64_t forth = cut.addNode();
    for (int64_t reader : readers)
      cut.addEdge(reader, forth, MinCut::kUnbounded);
    cut.addEdge(forth, node, cost);
  }
  for (Value input : group.borderInputs()) {
    if (keepsBytes(input.getType()) || isTranspose(input.getDefiningOp(), kToChannelsFirst))
      continue;
    SmallVector<int64_t> readers;
    for (Operation *op : group.ops)
      if (llvm::any_of(layoutOperands(op),
                       [&](OpOperand *operand) { return operand->get() == input; }))
        readers.push_back(nodeOf[op]);
    if (comesOutChannelsLast(group, input)) {
      // Free only where every reader switches (else the first layer keeps its layout and the
      // transpose stays): its readers take one side together.
      for (int64_t reader : ArrayRef<int64_t>(readers).drop_front()) {
        cut.addEdge(readers.front(), reader, MinCut::kUnbounded);
        cut.addEdge(reader, readers.front(), MinCut::kUnbounded);
      }
      continue;
    }
    const int64_t forth = cut.addNode();
    for (int64_t reader : readers)
      cut.addEdge(reader, forth, MinCut::kUnbounded);
    cut.addEdge(forth, MinCut::kSink, elementsOf(input));
  }
  const llvm::BitVector channelsLast = cut.sourceSide();
  SmallVector<Operation *> part;
  for (Operation *op : group.ops)
    if (channelsLast.test(nodeOf[op]))
      part.push_back(op);
  return part;
}

// Candidates that read one another's results in one block form a group; groups come in the
// order of their first op, so the transposes come out the same on every run.
SmallVector<Group> groupsOf(ArrayRef<Operation *> candidates) {
  llvm::EquivalenceClasses<Operation *> classes;
  for (Operation *op : candidates)
    classes.insert(op);
  for (Operation *op : candidates)
    for (OpOperand *operand : layoutOperands(op)) {
      Operation *producer = operand->get().getDefiningOp();
      if (producer && classes.findValue(producer) != classes.end() &&
          producer->getBlock() == op->getBlock())
        classes.unionSets(producer, op);
    }
  SmallVector<Group> groups;
  DenseMap<Operation *, size_t> groupOfLeader;
  for (Operation *op : candidates) {
    auto [it, inserted] = groupOfLeader.try_emplace(classes.getLeaderValue(op), groups.size());
    if (inserted)
      groups.emplace_back();
    Group &group = groups[it->second];
    group.ops.push_back(op);
    group.members.insert(op);
  }
  return groups;
}

struct ChannelsLastPass : dlc::impl::ChannelsLastBase<ChannelsLastPass> {
  void runOnOperation() override {
    SmallVector<Operation *> candidates;
    getOperation().walk([&](Operation *op) {
      if (isCandidate(op))
        candidates.push_back(op);
    });
    // Of each group, the part a minimum cut of the layouts' costs picks switches.
    llvm::SmallPtrSet<Operation *, 16> switched;
    for (Group &group : groupsOf(candidates)) {
      if (!group.hasConv())
        continue;
      for (Group &subgroup : groupsOf(channelsLastPart(group)))
        if (subgroup.hasConv()) {
          switched.insert(subgroup.ops.begin(), subgroup.ops.end());
          subgroup.switchLayout();
        }
    }
    // Of the rest, the parts that change no bytes switch for free: a pointwise convolution
    // over one position (squeeze-and-excitation's) is then a row times packed weights rather
    // than a product one column wide.
    SmallVector<Operation *> bytesKept;
    for (Operation *op : candidates)
      if (!switched.contains(op) && keepsBytes(op->getResult(0).getType()) &&
          llvm::all_of(layoutOperands(op),
                       [](OpOperand *operand) { return keepsBytes(operand->get().getType()); }))
        bytesKept.push_back(op);
    for (Group &group : groupsOf(bytesKept))
      if (group.hasConv())
        group.switchLayout();
    switchPlanarReaders(getOperation());
  }
};

} // namespace
