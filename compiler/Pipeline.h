#ifndef DLC_COMPILER_PIPELINE_H
#define DLC_COMPILER_PIPELINE_H

namespace mlir {
class PassManager;
class DialectRegistry;
} // namespace mlir

namespace dlc {

class Target;
struct PlanningOptions;
struct TrainOptions;

// Every dialect and pass dlc uses, for the compiler and for dlc-opt.
void registerAll(mlir::DialectRegistry &registry);
void registerAllPasses();

// (The inference pipeline is the target's own: Target::buildPipeline.)
// Training modules (made by buildTrainStep): autodiff and the optimizer's updates on
// @train_step, then the target's pipeline on every function, so inplace legalization and
// planning see the backward program's reads of saved values.
void buildTrainingPipeline(mlir::PassManager &pm, const TrainOptions &options,
                           const Target &target, const PlanningOptions &planning);

} // namespace dlc

#endif
