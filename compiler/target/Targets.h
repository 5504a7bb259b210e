// The targets dlc has (compiler/target/Cpu.cpp, Cuda.cpp); reach them through allTargets()
// and findTarget() (Target.h).
#ifndef DLC_COMPILER_TARGET_TARGETS_H
#define DLC_COMPILER_TARGET_TARGETS_H

namespace dlc {
class Target;
const Target &cpuTarget();
const Target &cudaTarget();
} // namespace dlc

#endif
