// Shared by inplace legalization and buffer planning (NOT by plan verification, which
// recomputes everything on its own): the op schedule, each value's live range, and storage
// groups — values that share memory through views, in-place writes and elided concats, each
// at a byte offset inside its group. A group's facts (live range, size, kinds of memory in
// it) are kept up to date on every merge, so each query is O(1) and planning stays linear
// in the length of in-place chains.
#ifndef DLC_PASSES_ALIASGROUPS_H
#define DLC_PASSES_ALIASGROUPS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"

namespace dlc {

class AliasGroups {
public:
  // Reads the schedule and the alias decisions already recorded as attributes.
  explicit AliasGroups(mlir::func::FuncOp func);

  int64_t index(mlir::Operation *op) const { return opIndex.lookup(op); }
  int64_t def(mlir::Value v) const;
  int64_t lastUse(mlir::Value v) const; // def when unused
  static int64_t bytes(mlir::Value v);

  mlir::Value root(mlir::Value v) const { return slot(v).root; }
  int64_t offset(mlir::Value v) const { return slot(v).offset; }
  const llvm::SmallVector<mlir::Value> &members(mlir::Value v) const;
  int64_t groupFirstDef(mlir::Value v) const { return facts(v).firstDef; }
  int64_t groupLastUse(mlir::Value v) const { return facts(v).lastUse; }
  int64_t groupBytes(mlir::Value v) const { return facts(v).bytes; }
  // A graph input, weight or graph output is in the group: its memory is not the arena's.
  bool groupHasExternal(mlir::Value v) const {
    return facts(v).hasExternalMemory || facts(v).hasGraphOutput;
  }
  // Places `from`'s whole group inside `into`'s group, at `offset` bytes from its start.
  void merge(mlir::Value into, mlir::Value from, int64_t offset);

  static bool isGraphOutput(mlir::Value v);
  // Graph inputs and weights: memory the plan must never write.
  static bool isExternalMemory(mlir::Value v);

private:
  struct Slot {
    mlir::Value root;
    int64_t offset;
  };
  struct Facts {
    int64_t firstDef, lastUse, bytes; // bytes: the end of the furthest member
    bool hasExternalMemory, hasGraphOutput;
  };
  const Slot &slot(mlir::Value v) const;
  const Facts &facts(mlir::Value v) const { return groupFacts.find(root(v))->second; }
  void addValue(mlir::Value v);

  llvm::DenseMap<mlir::Operation *, int64_t> opIndex;
  llvm::DenseMap<mlir::Value, int64_t> lastUses;
  mutable llvm::DenseMap<mlir::Value, Slot> slots;
  llvm::DenseMap<mlir::Value, llvm::SmallVector<mlir::Value>> groupMembers;
  llvm::DenseMap<mlir::Value, Facts> groupFacts; // by root
  int64_t numOps = 0;
};

} // namespace dlc

#endif
