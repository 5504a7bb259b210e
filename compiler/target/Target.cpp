// What every target shares: the pipeline around its layout passes, the legality check, the
// workspace sizing pass, and the registry of targets.
#include "compiler/target/Target.h"
#include "compiler/codegen/Emitter.h"
#include "compiler/target/Targets.h"
#include "dialects/DlcDialect.h"
#include "dialects/Sizes.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

namespace dlc {
namespace {

// A function pass of one target; dlc-opt knows it as PREFIX<target name>.
template <typename Derived>
class TargetPass : public PassWrapper<Derived, OperationPass<func::FuncOp>> {
public:
  TargetPass(const Target &target, const char *prefix, const char *description)
      : target(target), argument(std::string(prefix) + target.name()),
        description(description) {}
  StringRef getArgument() const final { return argument; }
  StringRef getDescription() const final { return description; }

protected:
  const Target &target;

private:
  std::string argument;
  const char *description;
};

// Records on each op the scratch bytes the target's kernel for it needs
// (dlc.workspace_bytes), which the planner then reserves and the plan verifier checks.
class SizeWorkspaces : public TargetPass<SizeWorkspaces> {
public:
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(SizeWorkspaces)
  explicit SizeWorkspaces(const Target &target)
      : TargetPass(target, "dlc-size-workspaces-",
                   "Record the scratch bytes the target's kernel of each op needs") {}
  void getDependentDialects(DialectRegistry &registry) const final {
    registry.insert<DlcDialect>();
  }
  void runOnOperation() final {
    Builder builder(&getContext());
    bool fits = true;
    getOperation().walk([&](Operation *op) {
      op->removeAttr(kWorkspaceBytesAttr);
      std::optional<int64_t> bytes = target.workspaceBytes(op);
      if (!bytes) {
        op->emitError("its kernel would need a workspace beyond ") << kMaxTensorBytesText;
        fits = false;
      } else if (*bytes) {
        op->setAttr(kWorkspaceBytesAttr, builder.getI64IntegerAttr(*bytes));
      }
    });
    if (!fits)
      signalPassFailure();
  }
};

// dlc-verify-plan, with each op's workspace asked of the target's kernels rather than read
// from the dlc.workspace_bytes the sizing pass recorded: a stale record cannot hide.
class VerifyPlan : public TargetPass<VerifyPlan> {
public:
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(VerifyPlan)
  explicit VerifyPlan(const Target &target)
      : TargetPass(target, "dlc-verify-plan-",
                   "Check the memory plan, with workspaces sized by the target's kernels") {}
  void runOnOperation() final {
    if (failed(verifyPlan(getOperation(), [this](Operation *op) {
          return target.workspaceBytes(op);
        })))
      signalPassFailure();
  }
};

// Fails, naming each op, when the IR holds an op or attribute no emitter of the target
// handles: a pass that introduced it for another target's kernels would otherwise give
// silently wrong code.
class CheckLegality : public TargetPass<CheckLegality> {
public:
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(CheckLegality)
  explicit CheckLegality(const Target &target)
      : TargetPass(target, "dlc-check-legality-",
                   "Fail on ops and attributes the target's emitters do not handle") {}
  void runOnOperation() final {
    bool ok = true;
    getOperation().walk([&](Operation *op) {
      if (op != getOperation())
        ok &= succeeded(target.checkLegal(op));
    });
    if (!ok)
      signalPassFailure();
  }
};

} // namespace

void Target::buildPipeline(OpPassManager &pm, const PlanningOptions &planning) const {
  // The fusions see the imported graph with its no-op steps folded (Adds of zero biases, as
  // untrained exports carry, would stand between a projection and its attention).
  pm.addPass(createCanonicalizerPass());
  pm.addNestedPass<func::FuncOp>(createFoldBatchNorm());
  pm.addNestedPass<func::FuncOp>(createFuseEpilogues());
  addLayoutPasses(pm);
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addNestedPass<func::FuncOp>(createFuseElementwise());
  if (planning.reuse)
    pm.addNestedPass<func::FuncOp>(createInplaceLegalization());
  pm.addNestedPass<func::FuncOp>(std::make_unique<SizeWorkspaces>(*this));
  pm.addNestedPass<func::FuncOp>(
      createBufferPlanning(BufferPlanningOptions{planning.reuse, planning.firstFit}));
  pm.addNestedPass<func::FuncOp>(std::make_unique<VerifyPlan>(*this));
  pm.addNestedPass<func::FuncOp>(std::make_unique<CheckLegality>(*this));
}

const std::vector<std::pair<std::string, std::string>> &opsWithoutEmitter() {
  static const std::vector<std::pair<std::string, std::string>> ops = {
      {ConstantOp::getOperationName().str(), "its bytes are the weights"},
      {DropoutOp::getOperationName().str(),
       "passed through, or in a train step multiplied by a mask, before the pipeline"},
  };
  return ops;
}

LogicalResult Target::checkLegal(Operation *op) const {
  // Constants, views and elided concats generate no code; functions are not ops to emit.
  if (isa<ConstantOp, func::FuncOp, func::ReturnOp>(op) || op->hasAttr(kViewAttr) ||
      op->hasAttr(kElidedAttr))
    return success();
  const std::string opName = op->getName().getStringRef().str();
  for (const auto &[name, reason] : opsWithoutEmitter())
    if (name == opName)
      return op->emitError("no target emits ") << opName << " (" << reason << ")";
  if (const Target *owner = ownerOfOp(opName); owner && owner != this)
    return op->emitError("only the ") << owner->name() << " target's passes make " << opName;
  if (!emitters().count(opName))
    return op->emitError("no ") << StringRef(name()).upper() << " kernel for op "
                                 << op->getName();
  return checkAttributes(op);
}

const EmitterTable &Target::emitters() const {
  std::call_once(emittersBuilt, [this] {
    table = std::make_unique<EmitterTable>();
    addEmitters(*table);
  });
  return *table;
}

Target::Target(const TargetFacts &facts) : facts(facts) {}
Target::~Target() = default;

TargetTemplates Target::templates() const {
  const std::string model = std::string("codegen_templates/model") + facts.templateSuffix;
  // Timing an op on a GPU takes events on its stream, and reading its results a copy to the
  // host: only CPU schedules are profiled or dumped yet.
  const bool cpu = !*facts.templateSuffix;
  return {model + ".h.tpl", model + facts.sourceExtension + ".tpl",
          std::string("codegen_templates/train") + facts.templateSuffix + ".tpl",
          cpu ? "codegen_templates/profile.tpl" : "", cpu ? "codegen_templates/dump.tpl" : ""};
}

bool Target::ownsOp(StringRef opName) const {
  for (const char *own : facts.ownOps)
    if (opName == own)
      return true;
  return false;
}

const Target *ownerOfOp(StringRef opName) {
  for (const Target *target : allTargets())
    if (target->ownsOp(opName))
      return target;
  return nullptr;
}

const std::vector<const Target *> &allTargets() {
  static const std::vector<const Target *> targets = {&cpuTarget(), &cudaTarget()};
  return targets;
}

const Target *findTarget(const std::string &name) {
  for (const Target *target : allTargets())
    if (name == target->name())
      return target;
  return nullptr;
}

std::vector<const Target *> targetsNamed(llvm::StringRef list) {
  llvm::SmallVector<llvm::StringRef> words;
  list.split(words, ',');
  std::vector<const Target *> targets;
  for (const Target *target : allTargets())
    if (llvm::is_contained(words, target->name()))
      targets.push_back(target);
  if (targets.size() != words.size())
    targets.clear();
  return targets;
}

std::vector<std::string> Target::linkLibraries() const {
  // Every library holds the CPU runtime (threads, libm), whatever its target.
  std::vector<std::string> libraries = {"m", "pthread"};
  libraries.insert(libraries.end(), facts.libraries.begin(), facts.libraries.end());
  return libraries;
}

std::vector<std::string> linkLibraries(const std::vector<const Target *> &targets) {
  std::vector<std::string> libraries;
  for (const Target *target : targets)
    for (const std::string &library : target->linkLibraries())
      if (!llvm::is_contained(libraries, library))
        libraries.push_back(library);
  return libraries;
}

void registerTargetPasses() {
  for (const Target *target : allTargets()) {
    PassRegistration<SizeWorkspaces>([target] { return std::make_unique<SizeWorkspaces>(*target); });
    PassRegistration<CheckLegality>([target] { return std::make_unique<CheckLegality>(*target); });
    PassRegistration<VerifyPlan>([target] { return std::make_unique<VerifyPlan>(*target); });
  }
}

} // namespace dlc
