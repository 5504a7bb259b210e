#include "dialects/DlcDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

#include "dialects/DlcDialect.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "dialects/DlcTypes.cpp.inc"

void dlc::DlcDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dialects/DlcOps.cpp.inc"
      >();
  addTypes<
#define GET_TYPEDEF_LIST
#include "dialects/DlcTypes.cpp.inc"
      >();
}

mlir::Operation *dlc::DlcDialect::materializeConstant(mlir::OpBuilder &builder,
                                                      mlir::Attribute value, mlir::Type type,
                                                      mlir::Location loc) {
  auto elements = llvm::dyn_cast<mlir::ElementsAttr>(value);
  if (!elements || elements.getType() != type)
    return nullptr;
  return builder.create<ConstantOp>(loc, type, elements);
}
