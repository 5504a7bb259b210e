// What a compiled model costs in memory, from the planned IR (`dlc compile --report`).
#ifndef DLC_COMPILER_REPORT_H
#define DLC_COMPILER_REPORT_H

#include <cstdint>
#include <string>

namespace mlir {
class ModuleOp;
}

namespace dlc {

struct MemoryReport {
  int64_t arenaBytes = 0;
  int64_t lowerBoundBytes = 0; // peak of simultaneously live bytes over the schedule
  int64_t noReuseBytes = 0;    // every value and workspace in its own range
  int64_t inplaceOps = 0;
  int64_t elidedConcats = 0;
  int64_t weightBytes = 0;
  // Training builds (--train): the train step's own plan, the forward values it keeps for
  // the backward pass, and the state buffer (weights, running statistics, moments).
  bool training = false;
  int64_t trainArenaBytes = 0;
  int64_t trainLowerBoundBytes = 0;
  int64_t savedBytes = 0;
  int64_t stateBytes = 0;
};

MemoryReport memoryReport(mlir::ModuleOp module, int64_t weightBytes);
std::string reportText(const MemoryReport &report);
std::string reportJson(const MemoryReport &report);
// The plan as a picture: schedule on x, arena offset on y, one rectangle per value.
std::string memorySvg(mlir::ModuleOp module);

} // namespace dlc

#endif
