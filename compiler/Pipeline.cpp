#include "compiler/Pipeline.h"
#include "compiler/Training.h"
#include "compiler/target/Target.h"
#include "dialects/DlcDialect.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

namespace dlc {

void registerAll(mlir::DialectRegistry &registry) {
  registry.insert<DlcDialect, mlir::func::FuncDialect>();
  registerGradients(registry);
}

void registerAllPasses() {
  registerDlcPasses();
  registerTargetPasses();
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
}

void buildTrainingPipeline(mlir::PassManager &pm, const TrainOptions &options,
                           const Target &target, const PlanningOptions &planning) {
  pm.addNestedPass<mlir::func::FuncOp>(createAutodiff());
  OptimizerLoweringOptions optimizer;
  optimizer.optimizer = options.optimizer;
  optimizer.momentum = options.momentum;
  optimizer.weightDecay = options.weightDecay;
  optimizer.nesterov = options.nesterov;
  optimizer.beta1 = options.beta1;
  optimizer.beta2 = options.beta2;
  optimizer.eps = options.eps;
  pm.addNestedPass<mlir::func::FuncOp>(createOptimizerLowering(optimizer));
  target.buildPipeline(pm, planning);
}

} // namespace dlc
