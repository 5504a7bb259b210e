#include "compiler/Pipeline.h"
#include "compiler/Training.h"
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
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
}

void buildInferencePipeline(mlir::PassManager &pm, bool reuse, bool firstFit, bool cpuLayouts) {
  pm.addNestedPass<mlir::func::FuncOp>(createFoldBatchNorm());
  pm.addNestedPass<mlir::func::FuncOp>(createFuseEpilogues());
  if (cpuLayouts)
    pm.addNestedPass<mlir::func::FuncOp>(createChannelsLast());
  pm.addPass(mlir::createCanonicalizerPass());
  pm.addPass(mlir::createCSEPass());
  pm.addNestedPass<mlir::func::FuncOp>(createFuseElementwise());
  if (reuse)
    pm.addNestedPass<mlir::func::FuncOp>(createInplaceLegalization());
  pm.addNestedPass<mlir::func::FuncOp>(
      createBufferPlanning(BufferPlanningOptions{reuse, firstFit}));
  pm.addNestedPass<mlir::func::FuncOp>(createPlanVerification());
}

} // namespace dlc

namespace dlc {

void buildTrainingPipeline(mlir::PassManager &pm, const TrainOptions &options, bool reuse,
                           bool firstFit) {
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
  buildInferencePipeline(pm, reuse, firstFit);
}

} // namespace dlc
