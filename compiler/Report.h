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
};

MemoryReport memoryReport(mlir::ModuleOp module, int64_t weightBytes);
std::string reportText(const MemoryReport &report);
std::string reportJson(const MemoryReport &report);
// The plan as a picture: schedule on x, arena offset on y, one rectangle per value.
std::string memorySvg(mlir::ModuleOp module);

} // namespace dlc

#endif
