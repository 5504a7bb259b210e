// Per-op timing for models compiled with --profile.
#include "dlc_kernels.h"

#include <chrono>

namespace dlc {
namespace rt {

namespace {
int64_t steadyNanos() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
} // namespace

OpTimer::OpTimer(dlc_op_profile &op) : op_(op) {
  takeWidestRun(); // what ran before this op is not its own
  op_.start_ns = steadyNanos();
}

OpTimer::~OpTimer() {
  op_.ns = steadyNanos() - op_.start_ns;
  op_.threads = takeWidestRun();
}

} // namespace rt
} // namespace dlc
