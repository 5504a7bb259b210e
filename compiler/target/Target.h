// A code generation target: every choice that depends on where the model runs (which layout
// passes run, how much scratch memory each kernel needs, which emitters write the code, which
// files and build commands make the library). The driver picks a target by its --target
// name; nothing else asks which target it is.
#ifndef DLC_COMPILER_TARGET_TARGET_H
#define DLC_COMPILER_TARGET_TARGET_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/LogicalResult.h"

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace mlir {
class Operation;
class OpPassManager;
using llvm::LogicalResult;
} // namespace mlir

namespace dlc {

struct EmitterTable;
class KernelEmitter;

// How the planner places values (`dlc compile --no-reuse`, the first-fit baseline).
struct PlanningOptions {
  bool reuse = true;
  bool firstFit = false;
};

// The codegen templates a target's model is written from.
struct TargetTemplates {
  std::string header;        // NAME.h
  std::string source;        // NAME.cpp or NAME.cu
  std::string trainSections; // the //@@ sections a training build adds to both
  std::string profileSections; // those a --profile build adds ("" where it cannot profile)
  std::string dumpSections;    // those a --dump build adds ("" where it cannot dump)
};

// One compiler invocation of a library build: `command` (compiler and flags) over `sources`.
struct BuildStep {
  std::vector<std::string> sources, includeDirs, command;
};

// Where the tools a library build needs are (found once per compile by the driver).
struct Toolchain {
  std::string cpu;                    // --cpu: "" for portable code with run-time dispatch
  std::string nvcc;                   // "" when no target needs it
  std::vector<std::string> cudaArchs; // --cuda-arch
};

// What a target is, as opposed to what it computes.
struct TargetFacts {
  // Its --target name; also the suffix of its model's name (NAME_cuda) when a library holds
  // models for several targets.
  const char *name;
  // Its templates are codegen_templates/model<suffix>.h.tpl, model<suffix><source
  // extension>.tpl and train<suffix>.tpl.
  const char *templateSuffix;  // "", "_cuda"
  const char *sourceExtension; // ".cpp", ".cu"
  // Constants whose every use reads them packed for the kernel are stored only packed.
  bool packsWeights;
  // DLC_CHECK_MEMORY builds poison dead arena memory (host memory only).
  bool poisonsDeadMemory;
  // Library builds need the CUDA toolkit's nvcc.
  bool needsNvcc;
  // The libraries (as -l names them) this target's runtime calls into, beyond what every
  // library's CPU runtime needs.
  std::vector<const char *> libraries;
  // The ops only this target's own passes create (the CPU's dlc.attention): no other target
  // meets them, so no other target has an emitter for them.
  std::vector<const char *> ownOps = {};
};

class Target {
public:
  explicit Target(const TargetFacts &facts);
  virtual ~Target();

  const char *name() const { return facts.name; }
  TargetTemplates templates() const;
  const char *sourceExtension() const { return facts.sourceExtension; }
  bool packsWeights() const { return facts.packsWeights; }
  bool poisonsDeadMemory() const { return facts.poisonsDeadMemory; }
  bool needsNvcc() const { return facts.needsNvcc; }
  bool ownsOp(llvm::StringRef opName) const;
  // What a program linking a library of this target's models links besides it (as -l names
  // them): the CPU runtime's libraries, then the target's. `dlc link-libraries` prints them
  // for build systems (dlc_add_model).
  std::vector<std::string> linkLibraries() const;

  // Everything between import (and autodiff) and code generation: batch-norm folding, fusion,
  // this target's layout passes, canonicalization, in-place legalization, workspace sizing,
  // planning and plan verification, and last the legality check.
  void buildPipeline(mlir::OpPassManager &pm, const PlanningOptions &planning) const;

  // Scratch bytes this target's kernel for `op` needs (0: none); nullopt where they would
  // exceed kMaxTensorBytes (a convolution whose im2col rows alone are that large).
  virtual std::optional<int64_t> workspaceBytes(mlir::Operation *op) const = 0;
  // The op's emitter exists and handles the op as it is (its attributes and types); otherwise
  // a diagnostic on the op naming what this target lacks.
  mlir::LogicalResult checkLegal(mlir::Operation *op) const;
  // Its emitters by op name (built once, by addEmitters).
  const EmitterTable &emitters() const;

  // Copies `bytes` bytes from `source` to the output buffer `buffer` (for outputs the plan
  // could not place in their buffer).
  virtual void emitCopyToOutput(KernelEmitter &e, const std::string &buffer,
                                const std::string &source, const std::string &bytes) const = 0;

  // Library builds: the compiles of one model's generated source and weights source.
  virtual std::vector<BuildStep> modelBuild(const std::string &source,
                                            const std::string &weightsSource,
                                            const std::string &includeDir,
                                            const Toolchain &tools) const = 0;
  // Runtime files shipped as source beside the model (names in the embedded files), and the
  // compiles that build them into the library.
  virtual std::vector<std::string> shippedRuntimeFiles() const = 0;
  virtual std::vector<BuildStep> runtimeBuild(const std::string &dir,
                                              const Toolchain &tools) const = 0;

protected:
  virtual void addEmitters(EmitterTable &table) const = 0;
  // The layout passes this target's kernels read (CPU: channels-last groups).
  virtual void addLayoutPasses(mlir::OpPassManager &pm) const = 0;
  // Target-specific refusals of an op its emitter table holds.
  virtual mlir::LogicalResult checkAttributes(mlir::Operation *op) const = 0;

private:
  const TargetFacts facts;
  mutable std::once_flag emittersBuilt;
  mutable std::unique_ptr<EmitterTable> table;
};

// The ops no target has an emitter for, each with the reason (ONNX Dropout is lowered before
// the pipeline; a constant's bytes are the weights, emitted as data). Every other op of the
// dialect has an emitter on every target but those another target owns (TargetFacts::ownOps):
// a unit test holds each target to that.
const std::vector<std::pair<std::string, std::string>> &opsWithoutEmitter();

// The target whose own passes alone create the op of this name (TargetFacts::ownOps), or
// null: every target emits it.
const Target *ownerOfOp(llvm::StringRef opName);

// Every target, in --target order.
const std::vector<const Target *> &allTargets();
// The target of that --target name, or null.
const Target *findTarget(const std::string &name);
// The targets a --target list names ("cpu", "cpu,cuda"), in allTargets() order; empty when a
// word is unknown or repeated.
std::vector<const Target *> targetsNamed(llvm::StringRef list);
// Every library the targets' linkLibraries() name, once each, in order.
std::vector<std::string> linkLibraries(const std::vector<const Target *> &targets);

// dlc-opt's passes for each target: dlc-size-workspaces-NAME and dlc-check-legality-NAME.
void registerTargetPasses();

} // namespace dlc

#endif
