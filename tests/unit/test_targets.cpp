// The targets' coverage of the dialect: what makes "adding an op" fail here, at the op's own
// commit, instead of in a user's compile.
#include "compiler/Pipeline.h"
#include "compiler/codegen/Emitter.h"
#include "compiler/target/Target.h"
#include "dialects/DlcDialect.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"

#include <catch2/catch.hpp>

namespace {

bool withoutEmitter(llvm::StringRef name) {
  for (const auto &entry : dlc::opsWithoutEmitter())
    if (entry.first == name)
      return true;
  return false;
}

template <typename... Ops> void checkUnaryKinds() {
  auto check = [](auto op) {
    using Op = decltype(op);
    if constexpr (Op::template hasTrait<dlc::UnaryKindOp>()) {
      INFO(Op::getOperationName().str() << " names kind " << Op::getKernelKind().str());
      CHECK(dlc::unaryKindNamed(Op::getKernelKind()).has_value());
    }
  };
  (check(Ops(nullptr)), ...);
}

} // namespace

TEST_CASE("every dlc op has an emitter on every target, or is declared to have none or to be "
          "another target's own") {
  mlir::DialectRegistry registry;
  dlc::registerAll(registry);
  mlir::MLIRContext context(registry);
  context.loadDialect<dlc::DlcDialect>();
  int ops = 0;
  for (mlir::RegisteredOperationName op : context.getRegisteredOperations()) {
    if (op.getDialectNamespace() != dlc::DlcDialect::getDialectNamespace())
      continue;
    ++ops;
    std::string name = op.getStringRef().str();
    for (const dlc::Target *target : dlc::allTargets()) {
      INFO(target->name() << ": " << name);
      const dlc::Target *owner = dlc::ownerOfOp(name);
      CHECK((target->emitters().count(name) != 0) !=
            (withoutEmitter(name) || (owner && owner != target)));
    }
  }
  CHECK(ops > 100);
}

TEST_CASE("every unary-kind op names a kind of DLC_UNARY_KINDS (its CPU, CUDA and gradient "
          "definitions)") {
  checkUnaryKinds<
#define GET_OP_LIST
#include "dialects/DlcOps.cpp.inc"
      >();
}
