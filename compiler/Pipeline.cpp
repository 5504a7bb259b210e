#include "compiler/Pipeline.h"
#include "dialects/DlcDialect.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

namespace dlc {

void registerAll(mlir::DialectRegistry &registry) {
  registry.insert<DlcDialect, mlir::func::FuncDialect>();
}

void registerAllPasses() {
  registerDlcPasses();
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
}

void buildInferencePipeline(mlir::PassManager &pm, bool reuse, bool firstFit) {
  pm.addNestedPass<mlir::func::FuncOp>(createFoldBatchNorm());
  pm.addPass(mlir::createCanonicalizerPass());
  pm.addPass(mlir::createCSEPass());
  if (reuse)
    pm.addNestedPass<mlir::func::FuncOp>(createInplaceLegalization());
  pm.addNestedPass<mlir::func::FuncOp>(
      createBufferPlanning(BufferPlanningOptions{reuse, firstFit}));
  pm.addNestedPass<mlir::func::FuncOp>(createPlanVerification());
}

} // namespace dlc
