#include "passes/AliasGroups.h"
#include "dialects/DlcDialect.h"

using namespace mlir;

namespace dlc {

AliasGroups::AliasGroups(func::FuncOp func) {
  Block &body = func.getBody().front();
  for (Operation &op : body)
    opIndex[&op] = numOps++;
  for (Operation &op : body) {
    int64_t at = isa<func::ReturnOp>(op) ? numOps : opIndex[&op];
    for (Value operand : op.getOperands())
      lastUses[operand] = std::max(lastUses.lookup(operand), at);
  }
  for (BlockArgument arg : body.getArguments())
    addValue(arg);
  for (Operation &op : body)
    for (Value result : op.getResults())
      addValue(result);
  // Recorded decisions, in schedule order so that chains compose.
  for (Operation &op : body) {
    if (op.hasAttr(kViewAttr))
      merge(op.getOperand(0), op.getResult(0), viewByteOffset(&op).value_or(0));
    if (auto inplace = op.getAttrOfType<IntegerAttr>(kInPlaceAttr))
      merge(op.getOperand(inplace.getInt()), op.getResult(0), 0);
  }
  for (Operation &op : body)
    if (auto concat = dyn_cast<ConcatOp>(op); concat && op.hasAttr(kElidedAttr)) {
      int64_t at = 0;
      for (Value in : concat.getInputs()) {
        merge(concat.getResult(), in, at);
        at += bytes(in);
      }
    }
}

void AliasGroups::addValue(Value v) {
  slots[v] = {v, 0};
  groupMembers[v] = {v};
  groupFacts[v] = {def(v), lastUse(v), bytes(v), isExternalMemory(v), isGraphOutput(v)};
}

const AliasGroups::Slot &AliasGroups::slot(Value v) const {
  auto it = slots.find(v);
  assert(it != slots.end() && "value outside the function");
  return it->second;
}

int64_t AliasGroups::def(Value v) const {
  if (isa<BlockArgument>(v))
    return -1;
  return opIndex.lookup(v.getDefiningOp());
}

int64_t AliasGroups::lastUse(Value v) const {
  auto it = lastUses.find(v);
  return it == lastUses.end() ? def(v) : it->second;
}

int64_t AliasGroups::bytes(Value v) { return tensorBytes(v.getType()); }

const SmallVector<Value> &AliasGroups::members(Value v) const {
  return groupMembers.find(root(v))->second;
}

bool AliasGroups::isGraphOutput(Value v) {
  return llvm::any_of(v.getUsers(), [](Operation *user) { return isa<func::ReturnOp>(user); });
}

bool AliasGroups::isExternalMemory(Value v) {
  return isa<BlockArgument>(v) || isa_and_nonnull<ConstantOp>(v.getDefiningOp());
}

void AliasGroups::merge(Value into, Value from, int64_t at) {
  Value intoRoot = root(into), fromRoot = root(from);
  if (intoRoot == fromRoot)
    return;
  // `from` sits at offset(into) + at; shift its whole group accordingly.
  int64_t shift = offset(into) + at - offset(from);
  auto &target = groupMembers[intoRoot];
  for (Value m : groupMembers[fromRoot]) {
    Slot &s = slots[m];
    s.root = intoRoot;
    s.offset += shift;
    target.push_back(m);
  }
  groupMembers.erase(fromRoot);
  Facts &merged = groupFacts[intoRoot];
  const Facts &absorbed = groupFacts[fromRoot];
  merged.firstDef = std::min(merged.firstDef, absorbed.firstDef);
  merged.lastUse = std::max(merged.lastUse, absorbed.lastUse);
  merged.bytes = std::max(merged.bytes, absorbed.bytes + shift);
  merged.hasExternalMemory |= absorbed.hasExternalMemory;
  merged.hasGraphOutput |= absorbed.hasGraphOutput;
  groupFacts.erase(fromRoot);
}

} // namespace dlc
