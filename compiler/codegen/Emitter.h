// Internal to codegen: what an op family's emitter sees.
#ifndef DLC_COMPILER_CODEGEN_EMITTER_H
#define DLC_COMPILER_CODEGEN_EMITTER_H

#include "dlc_kernels.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"

#include <functional>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace dlc {

// A constant operand an op reads packed ahead of time, in the layout its kernel wants:
// `layout` names the packing (uses of one constant with the same layout share one packed
// copy), `pack` makes the packed bytes from the plain ones.
struct WeightPacking {
  std::string layout;
  std::function<std::vector<char>(const std::vector<char> &plain)> pack;
};
// How `use` reads its constant operand packed (a convolution's weights, a Gemm's B), or
// nothing when it reads it as it is. (Linalg.cpp)
std::optional<WeightPacking> weightPacking(mlir::OpOperand &use);

class KernelEmitter {
public:
  // C++ expression for the data pointer of `v` (typed by its element type).
  virtual std::string ptr(mlir::Value v) = 0;
  // C++ expression for the packed copy (const float*) of the constant `use` reads.
  virtual std::string packedWeight(mlir::OpOperand &use, const WeightPacking &packing) = 0;
  // C++ expression for the op's workspace (float*), or "nullptr".
  virtual std::string workspace(mlir::Operation *op) = 0;
  virtual ~KernelEmitter() = default;

  // Appends one statement line to the schedule.
  void line(const std::string &text) { body << "  " << text << "\n"; }
  // Appends a call of a kernel that returns false on input data it cannot accept; the
  // schedule then stops and reports `reason` for the current op.
  void fallibleCall(const std::string &call, const std::string &reason);
  // CUDA: registers a check the current op's kernel makes on its input data and returns its
  // code; a kernel thread that fails it calls DLC_FAULT(faults, code), and the model's
  // synchronize reports "<currentOp>: <reason>" (the code's entry in faultMessages()).
  int faultCode(const std::string &reason);
  const std::vector<std::string> &faultMessages() const { return faults; }
  // CUDA: registers a cuDNN convolution (its dlc::cuda::CudnnConvShape initializer), planned
  // when the model is created, and returns its index in the schedule's `convs`.
  int convPlan(const std::string &shape) {
    convShapes.push_back(shape);
    return int(convShapes.size()) - 1;
  }
  const std::vector<std::string> &convPlans() const { return convShapes; }
  // Appends a call of the CUDA runtime, which returns null or the failed call's text; the
  // schedule then stops and returns that text.
  void checkedCall(const std::string &call);
  // "node 'g1' (Gather)": the op being emitted, for run-time errors.
  std::string currentOp;
  // Declares a local constant int64 array and returns its name.
  std::string array(llvm::ArrayRef<int64_t> values);
  // Declares a local const array of `type` from C++ initializers and returns its name; a
  // static one when every initializer is a constant expression.
  std::string arrayOf(const std::string &type, llvm::ArrayRef<std::string> initializers,
                      bool constantInitializers);
  std::string body_str() const { return body.str(); }
  // Defines a kernel (CUDA: `DLC_GLOBAL void NAME(params) { body }`, launched in blocks of
  // `blockThreads` threads) before the schedule and returns its name.
  std::string defineKernel(const std::string &params, const std::string &kernelBody,
                           int64_t blockThreads);
  std::string kernels_str() const { return kernels.str(); }
  int kernelsDefined() const { return kernelCount; }
  // CPU: defines a fused chain, `body` over (in, out, begin, len) (dlc::rt::FusedChain), for
  // every instruction set before the schedule, and returns its name (NAME_versions is its
  // dlc::rt::FusedChainVersions). Chains with the same body share one definition: an unrolled
  // loop or a stack of equal blocks repeats its chains (a 501-step decoder's source took
  // 147 s to build with one per op, 3 copies each).
  std::string defineFusedChain(const std::string &chainBody);
  // --fused-chains interpret: chains run on the runtime's interpreter (comparisons).
  bool interpretFusedChains = false;

protected:
  std::ostringstream body, kernels;
  std::vector<std::string> faults, convShapes;
  int arrays = 0, kernelCount = 0, chainCount = 0;
  std::map<std::string, std::string> chainsByBody;
};

// Emits the kernel call(s) for one op; emits a diagnostic on the op and fails when the op's
// types have no kernel.
using OpEmitter = std::function<mlir::LogicalResult(mlir::Operation *, KernelEmitter &)>;
// Keyed by op name, e.g. "dlc.conv"; each target has one (compiler/target/). Filled by op
// type (forOp<ConvOp>()) or by op family (opsOfFamily).
struct EmitterTable : std::map<std::string, OpEmitter> {
  template <typename Op> OpEmitter &forOp() { return (*this)[Op::getOperationName().str()]; }
  template <typename... Ops> void forOps(const OpEmitter &emitter) {
    ((forOp<Ops>() = emitter), ...);
  }
};

void addElementwiseEmitters(EmitterTable &table);
// dlc.fused_elementwise on the CPU (FusedChains.cpp).
mlir::LogicalResult emitFusedChain(mlir::Operation *op, KernelEmitter &e);
void addLinalgEmitters(EmitterTable &table);
void addWindowEmitters(EmitterTable &table);
void addReductionEmitters(EmitterTable &table);
void addDataMovementEmitters(EmitterTable &table);
void addOptimizerEmitters(EmitterTable &table);
// The CUDA target's kernels (codegen/cuda/).
void addCudaEmitters(EmitterTable &table);
// The ops whose kernel their kind chooses (KernelKindInterface), by family: every op of the
// dialect with the family's trait (DlcOps.td), so a new op of a family needs no list entry.
enum class OpFamily { Unary, Binary, Reduce };
const std::vector<std::string> &opsOfFamily(OpFamily family);

// Shared helpers.
std::string cType(mlir::Type elementType);        // "" when unsupported
std::string dtypeEnum(mlir::Type elementType);    // the runtime's dlc_dtype enumerator
// ONNX Cast's round_mode (for float8 e8m0) as the runtime's enumerator, dlc::rt::Rounding::X.
std::string roundingEnumerator(llvm::StringRef roundMode);
std::string list(llvm::ArrayRef<int64_t> values); // "1, 2, 3"
std::string floatLiteral(double value);
// A C string literal of `s` (model text: quotes and backslashes escaped, control characters
// dropped).
std::string cString(const std::string &s);
// Text from the model (node names, paths) made safe inside a // comment: a newline would end
// the comment and a trailing backslash would splice the next line into it.
std::string commentText(const std::string &s);
// (defined with the dialect, DlcOps.cpp)
mlir::RankedTensorType tensorType(mlir::Value v);
// The fused activation of a conv or gemm (dlc-fuse-epilogues), and its C++ literal.
dlc::rt::Epilogue epilogueOf(mlir::Operation *op);
std::string epilogueLiteral(const dlc::rt::Epilogue &epilogue);
// What a profile (--profile) says an op computes: its operand and result shapes as text,
// arithmetic operations (a multiply-add is 2; one per result element for ops that are not
// products) and the bytes of its operands and results. (Profile.cpp)
struct OpCost {
  std::string shapes;
  double flops = 0, bytes = 0;
};
OpCost opCost(mlir::Operation *op);
// Element offset of each batch's matrix in a MatMul operand of `operandShape` whose batch dims
// broadcast to `batch`; an error on `op` where the batch holds more than kMaxBatchMatrices
// (each is an entry of a table in the generated code). (Linalg.cpp)
constexpr int64_t kMaxBatchMatrices = int64_t(1) << 20;
mlir::FailureOr<llvm::SmallVector<int64_t>> batchOffsets(mlir::Operation *op,
                                                         llvm::ArrayRef<int64_t> operandShape,
                                                         llvm::ArrayRef<int64_t> batch);
// Why a RoiAlign run fails (bad regions), the same on every target. (Window.cpp)
std::string roiAlignFailure();

} // namespace dlc

#endif
