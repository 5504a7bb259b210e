#ifndef DLC_COMPILER_PIPELINE_H
#define DLC_COMPILER_PIPELINE_H

namespace mlir {
class ModuleOp;
class PassManager;
class DialectRegistry;
} // namespace mlir

namespace dlc {

// Every dialect and pass dlc uses, for the compiler and for dlc-opt.
void registerAll(mlir::DialectRegistry &registry);
void registerAllPasses();

// The inference pipeline (docs/architecture.md): fold batch norms and constants,
// canonicalize, inplace legalization, buffer planning, plan verification. Without `reuse` every value gets its own memory; `firstFit`
// swaps the planner for the naive baseline (for comparisons).
// `cpuLayouts`: let dlc-channels-last pick layouts for the CPU kernels (not for CUDA).
void buildInferencePipeline(mlir::PassManager &pm, bool reuse = true, bool firstFit = false,
                            bool cpuLayouts = true);

struct TrainOptions;
// Training modules (made by buildTrainStep): autodiff and the optimizer's updates on
// @train_step, then the inference pipeline on every function, so inplace legalization and
// planning see the backward program's reads of saved values.
void buildTrainingPipeline(mlir::PassManager &pm, const TrainOptions &options, bool reuse = true,
                           bool firstFit = false);

} // namespace dlc

#endif
