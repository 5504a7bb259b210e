// dlc-opt: runs any registered dlc pass over .mlir files (for lit tests and debugging).
#include "compiler/Pipeline.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  dlc::registerAll(registry);
  dlc::registerAllPasses();
  return mlir::asMainReturnCode(mlir::MlirOptMain(argc, argv, "dlc optimizer driver", registry));
}
