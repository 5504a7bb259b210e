// The gradient of every differentiable dlc op (GradientInterface), attached as external
// models so that each op's gradient is one function here. Reverse-mode autodiff
// (passes/Autodiff.cpp) calls them; the ops they build are ordinary dlc ops, so the saved
// forward values they read are ordinary uses that liveness and inplace legalization see.
#include "dialects/DlcDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectRegistry.h"

using namespace mlir;

namespace dlc {
namespace {

RankedTensorType typeOf(Value v) { return cast<RankedTensorType>(v.getType()); }

RankedTensorType f32Tensor(Builder &b, ArrayRef<int64_t> shape) {
  return RankedTensorType::get(shape, b.getF32Type());
}

Value scalar(OpBuilder &b, Location loc, float value) {
  auto type = f32Tensor(b, {});
  return b.create<ConstantOp>(loc, type, DenseElementsAttr::get(type, value));
}

// What a gradient builder sees: the op's location, the gradient of its result, which
// operands need a gradient, and where to put them.
struct GradientContext {
  OpBuilder &b;
  Location loc;
  Value grad;
  ArrayRef<bool> needed;
  SmallVectorImpl<Value> &out;

  template <typename Op, typename... Args> Value create(Type type, Args &&...args) {
    return b.create<Op>(loc, type, std::forward<Args>(args)...);
  }
  void set(unsigned operand, llvm::function_ref<Value()> build) {
    if (needed[operand])
      out[operand] = build();
  }
};

// Sums the gradient of a broadcast result down to the shape of the operand that was
// broadcast: over leading dims the operand lacks and over its size-1 dims.
Value unbroadcast(GradientContext &g, Value grad, Type operandType) {
  auto target = cast<RankedTensorType>(operandType);
  auto from = typeOf(grad).getShape(), to = target.getShape();
  if (from == to)
    return grad;
  size_t lead = from.size() - to.size();
  SmallVector<int64_t> axes, kept;
  for (size_t i = 0; i < from.size(); ++i) {
    if (i < lead || (to[i - lead] == 1 && from[i] != 1))
      axes.push_back(i);
    else
      kept.push_back(from[i]);
  }
  Value sum = grad;
  if (!axes.empty())
    sum = g.create<ReduceSumOp>(f32Tensor(g.b, kept), grad, g.b.getDenseI64ArrayAttr(axes));
  return typeOf(sum) == target ? sum : g.create<ReshapeOp>(target, sum);
}

// The broadcast shape of two operands' batch dims followed by a [rows, cols] matrix.
RankedTensorType batchedMatrix(GradientContext &g, Value a, Value b, int64_t rows, int64_t cols) {
  auto batch = broadcastShapes(typeOf(a).getShape().drop_back(2),
                               typeOf(b).getShape().drop_back(2));
  SmallVector<int64_t> shape = *batch;
  shape.append({rows, cols});
  return f32Tensor(g.b, shape);
}

// Swaps the last two dims.
Value transposeMatrices(GradientContext &g, Value v) {
  auto shape = typeOf(v).getShape();
  SmallVector<int64_t> perm, transposed(shape);
  for (int64_t i = 0; i < (int64_t)shape.size(); ++i)
    perm.push_back(i);
  std::swap(perm[perm.size() - 1], perm[perm.size() - 2]);
  std::swap(transposed[shape.size() - 1], transposed[shape.size() - 2]);
  return g.create<TransposeOp>(f32Tensor(g.b, transposed), v, g.b.getDenseI64ArrayAttr(perm));
}

//===----------------------------------------------------------------------------------------===//
// One gradient per op (or op family)
//===----------------------------------------------------------------------------------------===//

LogicalResult unaryGradient(Operation *op, GradientContext &g) {
  if (isa<NegOp>(op)) {
    g.set(0, [&] { return g.create<NegOp>(g.grad.getType(), g.grad); });
    return success();
  }
  // Attached only to the unary kinds with a gradient kernel (registerGradients). Reading the
  // forward output where the kind allows lets the forward op still run in place.
  StringRef kind = cast<KernelKindInterface>(op).getKernelKind();
  bool fromOutput = rt::scalar::unaryGradFrom(*unaryKindNamed(kind)) == rt::GradFrom::Output;
  Value saved = fromOutput ? op->getResult(0) : op->getOperand(0);
  g.set(0, [&] {
    return g.create<UnaryGradOp>(g.grad.getType(), g.grad, saved, g.b.getStringAttr(kind));
  });
  return success();
}

LogicalResult binaryGradient(Operation *op, GradientContext &g) {
  Value a = op->getOperand(0), b = op->getOperand(1), y = op->getResult(0);
  Type full = y.getType();
  auto toA = [&](Value v) { return unbroadcast(g, v, a.getType()); };
  auto toB = [&](Value v) { return unbroadcast(g, v, b.getType()); };
  if (isa<AddOp>(op)) {
    g.set(0, [&] { return toA(g.grad); });
    g.set(1, [&] { return toB(g.grad); });
  } else if (isa<SubOp>(op)) {
    g.set(0, [&] { return toA(g.grad); });
    g.set(1, [&] { return toB(g.create<NegOp>(full, g.grad)); });
  } else if (isa<MulOp>(op)) {
    g.set(0, [&] { return toA(g.create<MulOp>(full, g.grad, b)); });
    g.set(1, [&] { return toB(g.create<MulOp>(full, g.grad, a)); });
  } else if (isa<DivOp>(op)) {
    // d/da = dy / b; d/db = -dy * a / b^2 = -(dy / b) * y.
    Value overB = g.create<DivOp>(full, g.grad, b);
    g.set(0, [&] { return toA(overB); });
    g.set(1, [&] { return toB(g.create<NegOp>(full, g.create<MulOp>(full, overB, y))); });
  } else if (isa<PowOp>(op)) {
    // d/da = dy * b * a^(b - 1); d/db = dy * y * ln(a).
    g.set(0, [&] {
      Value bMinus1 = g.create<SubOp>(b.getType(), b, scalar(g.b, g.loc, 1.0f));
      Value slope = g.create<MulOp>(full, b, g.create<PowOp>(full, a, bMinus1));
      return toA(g.create<MulOp>(full, g.grad, slope));
    });
    g.set(1, [&] {
      Value logA = g.create<LogOp>(a.getType(), a);
      return toB(g.create<MulOp>(full, g.create<MulOp>(full, g.grad, y), logA));
    });
  } else if (isa<MaxOp, MinOp>(op)) {
    // max(a, b) = b + relu(a - b) and min(a, b) = a - relu(a - b): where a > b the gradient
    // goes to a for max (to b for min), elsewhere to the other operand. At exact ties it goes
    // to one side (b for max, a for min); PyTorch splits it in halves.
    Value aWins = g.create<UnaryGradOp>(full, g.grad,
                                        g.create<ReluOp>(full, g.create<SubOp>(full, a, b)),
                                        g.b.getStringAttr("Relu"));
    Value rest = g.create<SubOp>(full, g.grad, aWins);
    bool max = isa<MaxOp>(op);
    g.set(0, [&] { return toA(max ? aWins : rest); });
    g.set(1, [&] { return toB(max ? rest : aWins); });
  } else {
    return op->emitError("no gradient for ") << op->getName();
  }
  return success();
}

LogicalResult matmulGradient(MatMulOp op, GradientContext &g) {
  Value a = op.getLhs(), b = op.getRhs();
  auto as = typeOf(a).getShape(), bs = typeOf(b).getShape();
  int64_t m = as[as.size() - 2], k = as.back(), n = bs.back();
  g.set(0, [&] {
    Value bT = transposeMatrices(g, b);
    Value dA = g.create<MatMulOp>(batchedMatrix(g, g.grad, bT, m, k), g.grad, bT);
    return unbroadcast(g, dA, a.getType());
  });
  g.set(1, [&] {
    Value aT = transposeMatrices(g, a);
    Value dB = g.create<MatMulOp>(batchedMatrix(g, aT, g.grad, k, n), aT, g.grad);
    return unbroadcast(g, dB, b.getType());
  });
  return success();
}

LogicalResult gemmGradient(GemmOp op, GradientContext &g) {
  bool transA = op.getTransA(), transB = op.getTransB();
  FloatAttr alpha = op.getAlphaAttr();
  auto gemm = [&](Type type, Value lhs, Value rhs, bool tl, bool tr) {
    return g.create<GemmOp>(type, lhs, rhs, Value(), g.b.getBoolAttr(tl), g.b.getBoolAttr(tr),
                            alpha, g.b.getF32FloatAttr(0.0f));
  };
  Value a = op.getA(), b = op.getB(), dy = g.grad;
  // Y = alpha * op(A) op(B): dop(A) = alpha * dY op(B)^T, dop(B) = alpha * op(A)^T dY.
  g.set(0, [&] {
    return transA ? gemm(a.getType(), b, dy, transB, true)
                  : gemm(a.getType(), dy, b, false, !transB);
  });
  g.set(1, [&] {
    return transB ? gemm(b.getType(), dy, a, true, transA)
                  : gemm(b.getType(), a, dy, !transA, false);
  });
  if (op.getC())
    g.set(2, [&] {
      Value scaled = op.getBeta().convertToFloat() == 1.0f
                         ? dy
                         : g.create<MulOp>(dy.getType(), dy,
                                           scalar(g.b, g.loc, op.getBeta().convertToFloat()));
      return unbroadcast(g, scaled, op.getC().getType());
    });
  return success();
}

LogicalResult convGradient(ConvOp op, GradientContext &g) {
  // dlc-fuse-epilogues and dlc-channels-last run after autodiff; their ops have no gradient.
  if (op.getResidual() || op.getInputScale() || op->hasAttr(kActivationAttr))
    return op.emitOpError("with a fused epilogue has no gradient");
  if (op.getChannelsLast())
    return op.emitOpError("with channels_last has no gradient");
  g.set(0, [&] {
    return g.create<ConvGradInputOp>(op.getInput().getType(), g.grad, op.getWeight(),
                                     op.getStridesAttr(), op.getPadsAttr(),
                                     op.getDilationsAttr(), op.getGroupAttr());
  });
  g.set(1, [&] {
    return g.create<ConvGradWeightOp>(op.getWeight().getType(), op.getInput(), g.grad,
                                      op.getStridesAttr(), op.getPadsAttr(),
                                      op.getDilationsAttr(), op.getGroupAttr());
  });
  if (op.getBias())
    g.set(2, [&] {
      SmallVector<int64_t> axes = {0};
      for (int64_t d = 2; d < typeOf(g.grad).getRank(); ++d)
        axes.push_back(d);
      return g.create<ReduceSumOp>(op.getBias().getType(), g.grad,
                                   g.b.getDenseI64ArrayAttr(axes));
    });
  return success();
}

// A transposed convolution (imported as dlc.conv_grad_input) is linear in both operands: its
// input's gradient is the forward convolution of the output gradient with the same weight, and
// its weight's gradient the convolution's weight gradient with the roles of input and gradient
// exchanged.
LogicalResult convGradInputGradient(ConvGradInputOp op, GradientContext &g) {
  g.set(0, [&] {
    return g.create<ConvOp>(op.getGrad().getType(), g.grad, op.getWeight(), Value(), Value(),
                            Value(), op.getStridesAttr(), op.getPadsAttr(),
                            op.getDilationsAttr(), op.getGroupAttr(), UnitAttr());
  });
  g.set(1, [&] {
    return g.create<ConvGradWeightOp>(op.getWeight().getType(), g.grad, op.getGrad(),
                                      op.getStridesAttr(), op.getPadsAttr(),
                                      op.getDilationsAttr(), op.getGroupAttr());
  });
  return success();
}

LogicalResult maxPoolGradient(MaxPoolOp op, GradientContext &g) {
  g.set(0, [&] {
    return g.create<MaxPoolGradOp>(op.getInput().getType(), op.getInput(), g.grad,
                                   op.getKernelShapeAttr(), op.getStridesAttr(),
                                   op.getPadsAttr(), op.getDilationsAttr(),
                                   op.getCeilModeAttr());
  });
  return success();
}

LogicalResult avgPoolGradient(AvgPoolOp op, GradientContext &g) {
  g.set(0, [&] {
    return g.create<AvgPoolGradOp>(op.getInput().getType(), g.grad, op.getKernelShapeAttr(),
                                   op.getStridesAttr(), op.getPadsAttr(),
                                   op.getDilationsAttr(), op.getCeilModeAttr(),
                                   op.getCountIncludePadAttr());
  });
  return success();
}

LogicalResult globalAvgPoolGradient(GlobalAvgPoolOp op, GradientContext &g) {
  g.set(0, [&] { return g.create<GlobalAvgPoolGradOp>(op.getInput().getType(), g.grad); });
  return success();
}

LogicalResult softmaxGradient(SoftmaxOp op, GradientContext &g) {
  g.set(0, [&] {
    return g.create<SoftmaxGradOp>(op.getType(), g.grad, op.getOutput(), op.getAxisAttr(),
                                   op.getLogAttr());
  });
  return success();
}

// Sum and mean spread the gradient back over the reduced axes; max and min share it evenly
// among the elements equal to the result (PyTorch's amax/amin).
LogicalResult reduceGradient(Operation *op, GradientContext &g) {
  Value x = op->getOperand(0);
  auto axes = cast<DenseI64ArrayAttr>(op->getAttr("axes"));
  SmallVector<int64_t> kept(typeOf(x).getShape());
  int64_t count = 1;
  for (int64_t axis : axes.asArrayRef()) {
    count *= kept[axis];
    kept[axis] = 1;
  }
  auto keptType = f32Tensor(g.b, kept);
  auto withKeptDims = [&](Value v) {
    return typeOf(v) == keptType ? v : g.create<ReshapeOp>(keptType, v);
  };
  g.set(0, [&]() -> Value {
    Value grad = withKeptDims(g.grad);
    if (isa<ReduceSumOp>(op))
      return g.create<BroadcastOp>(x.getType(), grad);
    if (isa<ReduceMeanOp>(op))
      return g.create<BroadcastOp>(
          x.getType(),
          g.create<MulOp>(keptType, grad, scalar(g.b, g.loc, 1.0f / float(count))));
    // gap = |x - extremum| >= 0, zero exactly at the extremum; relu's gradient of ones at
    // gap is 1 where gap > 0, so `hit` = 1 - that marks the extremum's elements.
    Value y = g.create<BroadcastOp>(x.getType(), withKeptDims(op->getResult(0)));
    Value gap = isa<ReduceMaxOp>(op) ? g.create<SubOp>(x.getType(), y, x)
                                     : g.create<SubOp>(x.getType(), x, y);
    Value ones = g.create<BroadcastOp>(x.getType(), scalar(g.b, g.loc, 1.0f));
    Value hit = g.create<SubOp>(
        x.getType(), ones,
        g.create<UnaryGradOp>(x.getType(), ones, gap, g.b.getStringAttr("Relu")));
    Value hits = g.create<ReduceSumOp>(keptType, hit, axes);
    return g.create<MulOp>(x.getType(), hit, g.create<DivOp>(keptType, grad, hits));
  });
  return success();
}

LogicalResult reshapeGradient(ReshapeOp op, GradientContext &g) {
  g.set(0, [&] { return g.create<ReshapeOp>(op.getInput().getType(), g.grad); });
  return success();
}

LogicalResult transposeGradient(TransposeOp op, GradientContext &g) {
  auto perm = op.getPerm();
  SmallVector<int64_t> inverse(perm.size());
  for (auto [i, p] : llvm::enumerate(perm))
    inverse[p] = i;
  g.set(0, [&] {
    return g.create<TransposeOp>(op.getInput().getType(), g.grad,
                                 g.b.getDenseI64ArrayAttr(inverse));
  });
  return success();
}

// Each input's gradient is its own slice of the result's, in its own shape.
LogicalResult concatGradient(ConcatOp op, GradientContext &g) {
  int64_t axis = op.getAxis(), offset = 0, rank = typeOf(g.grad).getRank();
  for (auto [i, in] : llvm::enumerate(op.getInputs())) {
    SmallVector<int64_t> starts(rank, 0), steps(rank, 1);
    starts[axis] = offset;
    g.set(i, [&, in = in] {
      return g.create<SliceOp>(in.getType(), g.grad, g.b.getDenseI64ArrayAttr(starts),
                               g.b.getDenseI64ArrayAttr(steps));
    });
    offset += typeOf(in).getDimSize(axis);
  }
  return success();
}

LogicalResult sliceGradient(SliceOp op, GradientContext &g) {
  g.set(0, [&] {
    return g.create<SliceGradOp>(op.getInput().getType(), g.grad, op.getStartsAttr(),
                                 op.getStepsAttr());
  });
  return success();
}

LogicalResult gatherGradient(GatherOp op, GradientContext &g) {
  g.set(0, [&] {
    return g.create<GatherGradOp>(op.getInput().getType(), g.grad, op.getIndices(),
                                  op.getAxisAttr());
  });
  return success();
}

// The condition selects which operand each element's gradient flows to.
LogicalResult whereGradient(WhereOp op, GradientContext &g) {
  Value zero = scalar(g.b, g.loc, 0.0f);
  g.set(1, [&] {
    Value routed = g.create<WhereOp>(g.grad.getType(), op.getCondition(), g.grad, zero);
    return unbroadcast(g, routed, op.getLhs().getType());
  });
  g.set(2, [&] {
    Value routed = g.create<WhereOp>(g.grad.getType(), op.getCondition(), zero, g.grad);
    return unbroadcast(g, routed, op.getRhs().getType());
  });
  return success();
}

LogicalResult broadcastGradient(BroadcastOp op, GradientContext &g) {
  g.set(0, [&] { return unbroadcast(g, g.grad, op.getInput().getType()); });
  return success();
}

// Each input element feeds the running sums on its far side: the gradient is the running sum
// of the output gradient in the other direction.
LogicalResult cumSumGradient(CumSumOp op, GradientContext &g) {
  g.set(0, [&] {
    return g.create<CumSumOp>(op.getType(), g.grad, op.getAxisAttr(), op.getExclusiveAttr(),
                              g.b.getBoolAttr(!op.getReverse()));
  });
  return success();
}

Value zerosLike(GradientContext &g, Type type) {
  return g.create<BroadcastOp>(type, scalar(g.b, g.loc, 0.0f));
}

// Each gathered element's gradient adds into the position it came from.
LogicalResult gatherElementsGradient(GatherElementsOp op, GradientContext &g) {
  g.set(0, [&] {
    return g.create<ScatterElementsOp>(op.getInput().getType(),
                                       zerosLike(g, op.getInput().getType()), op.getIndices(),
                                       g.grad, op.getAxisAttr(), g.b.getStringAttr("add"));
  });
  return success();
}

LogicalResult gatherNDGradient(GatherNDOp op, GradientContext &g) {
  if (op.getBatchDims() != 0 && g.needed[0])
    return op.emitError("no gradient through GatherND with batch_dims");
  g.set(0, [&] {
    return g.create<ScatterNDOp>(op.getInput().getType(), zerosLike(g, op.getInput().getType()),
                                 op.getIndices(), g.grad, g.b.getStringAttr("add"));
  });
  return success();
}

// Overwritten positions pass no gradient to the input (reduction none) or all of it (add);
// each update gets the gradient of the position it landed on.
template <typename Scatter, typename Gather>
LogicalResult scatterGradient(Scatter op, GradientContext &g, Gather gatherOfGrad) {
  StringRef reduction = op.getReduction();
  if (reduction != "none" && reduction != "add")
    return op.emitError("no gradient through a scatter with reduction '") << reduction << "'";
  g.set(0, [&] {
    if (reduction == "add")
      return g.grad;
    Value cleared = zerosLike(g, op.getUpdates().getType());
    if constexpr (std::is_same_v<Scatter, ScatterElementsOp>)
      return g.create<ScatterElementsOp>(op.getType(), g.grad, op.getIndices(), cleared,
                                         op.getAxisAttr(), op.getReductionAttr());
    else
      return g.create<ScatterNDOp>(op.getType(), g.grad, op.getIndices(), cleared,
                                   op.getReductionAttr());
  });
  g.set(2, [&] { return gatherOfGrad(); });
  return success();
}

LogicalResult scatterElementsGradient(ScatterElementsOp op, GradientContext &g) {
  return scatterGradient(op, g, [&] {
    return g.create<GatherElementsOp>(op.getUpdates().getType(), g.grad, op.getIndices(),
                                      op.getAxisAttr());
  });
}

LogicalResult scatterNDGradient(ScatterNDOp op, GradientContext &g) {
  return scatterGradient(op, g, [&] {
    return g.create<GatherNDOp>(op.getUpdates().getType(), g.grad, op.getIndices(),
                                g.b.getI64IntegerAttr(0));
  });
}

LogicalResult castGradient(CastOp op, GradientContext &g) {
  if (op.getInput().getType() != op.getType())
    return op.emitError("no gradient through a cast between element types");
  g.set(0, [&] { return g.grad; });
  return success();
}

LogicalResult clipGradient(ClipOp op, GradientContext &g) {
  g.set(0, [&] {
    return g.create<ClipGradOp>(op.getType(), g.grad, op.getInput(), op.getMinAttr(),
                                op.getMaxAttr());
  });
  return success();
}

LogicalResult leakyReluGradient(LeakyReluOp op, GradientContext &g) {
  g.set(0, [&] {
    return g.create<LeakyReluGradOp>(op.getType(), g.grad, op.getInput(), op.getAlphaAttr());
  });
  return success();
}

// The input's gradient includes the path through the batch statistics, so the statistics
// operand gets none.
LogicalResult batchNormApplyGradient(BatchNormApplyOp op, GradientContext &g) {
  g.set(0, [&] {
    return g.create<BatchNormGradInputOp>(op.getType(), g.grad, op.getInput(), op.getStats(),
                                          op.getScale());
  });
  if (!g.needed[2] && !g.needed[3])
    return success();
  int64_t channels = typeOf(op.getInput()).getDimSize(1);
  Value both = g.create<BatchNormGradParamsOp>(f32Tensor(g.b, {2, channels}), g.grad,
                                               op.getInput(), op.getStats());
  auto row = [&](int64_t r) {
    Value slice = g.create<SliceOp>(f32Tensor(g.b, {1, channels}), both,
                                    g.b.getDenseI64ArrayAttr({r, 0}),
                                    g.b.getDenseI64ArrayAttr({1, 1}));
    return g.create<ReshapeOp>(f32Tensor(g.b, {channels}), slice);
  };
  g.set(2, [&] { return row(0); });
  g.set(3, [&] { return row(1); });
  return success();
}

LogicalResult nllLossGradient(NllLossOp op, GradientContext &g) {
  g.set(0, [&] {
    return g.create<NllLossGradOp>(op.getLogProbs().getType(), g.grad, op.getLabels());
  });
  return success();
}

// Dispatch from an op type to its gradient function.
template <typename Op> LogicalResult gradientOf(Op op, GradientContext &g) {
  if constexpr (std::is_same_v<Op, MatMulOp>) return matmulGradient(op, g);
  else if constexpr (std::is_same_v<Op, GemmOp>) return gemmGradient(op, g);
  else if constexpr (std::is_same_v<Op, ConvOp>) return convGradient(op, g);
  else if constexpr (std::is_same_v<Op, ConvGradInputOp>) return convGradInputGradient(op, g);
  else if constexpr (std::is_same_v<Op, WhereOp>) return whereGradient(op, g);
  else if constexpr (std::is_same_v<Op, BroadcastOp>) return broadcastGradient(op, g);
  else if constexpr (std::is_same_v<Op, CumSumOp>) return cumSumGradient(op, g);
  else if constexpr (std::is_same_v<Op, GatherElementsOp>) return gatherElementsGradient(op, g);
  else if constexpr (std::is_same_v<Op, GatherNDOp>) return gatherNDGradient(op, g);
  else if constexpr (std::is_same_v<Op, ScatterElementsOp>) return scatterElementsGradient(op, g);
  else if constexpr (std::is_same_v<Op, ScatterNDOp>) return scatterNDGradient(op, g);
  else if constexpr (std::is_same_v<Op, MaxPoolOp>) return maxPoolGradient(op, g);
  else if constexpr (std::is_same_v<Op, AvgPoolOp>) return avgPoolGradient(op, g);
  else if constexpr (std::is_same_v<Op, GlobalAvgPoolOp>) return globalAvgPoolGradient(op, g);
  else if constexpr (std::is_same_v<Op, SoftmaxOp>) return softmaxGradient(op, g);
  else if constexpr (std::is_same_v<Op, ReshapeOp>) return reshapeGradient(op, g);
  else if constexpr (std::is_same_v<Op, TransposeOp>) return transposeGradient(op, g);
  else if constexpr (std::is_same_v<Op, ConcatOp>) return concatGradient(op, g);
  else if constexpr (std::is_same_v<Op, SliceOp>) return sliceGradient(op, g);
  else if constexpr (std::is_same_v<Op, GatherOp>) return gatherGradient(op, g);
  else if constexpr (std::is_same_v<Op, CastOp>) return castGradient(op, g);
  else if constexpr (std::is_same_v<Op, ClipOp>) return clipGradient(op, g);
  else if constexpr (std::is_same_v<Op, LeakyReluOp>) return leakyReluGradient(op, g);
  else if constexpr (std::is_same_v<Op, BatchNormApplyOp>) return batchNormApplyGradient(op, g);
  else if constexpr (std::is_same_v<Op, NllLossOp>) return nllLossGradient(op, g);
  else if constexpr (std::is_same_v<Op, ReduceSumOp> || std::is_same_v<Op, ReduceMeanOp> ||
                     std::is_same_v<Op, ReduceMaxOp> || std::is_same_v<Op, ReduceMinOp>)
    return reduceGradient(op, g);
  else if constexpr (std::is_same_v<Op, AddOp> || std::is_same_v<Op, SubOp> ||
                     std::is_same_v<Op, MulOp> || std::is_same_v<Op, DivOp> ||
                     std::is_same_v<Op, PowOp> || std::is_same_v<Op, MaxOp> ||
                     std::is_same_v<Op, MinOp>)
    return binaryGradient(op, g);
  else
    return unaryGradient(op, g);
}

// The interface model of op type Op.
template <typename Op> struct Model : GradientInterface::ExternalModel<Model<Op>, Op> {
  LogicalResult buildGradients(Operation *op, OpBuilder &b, Value grad, ArrayRef<bool> needed,
                               SmallVectorImpl<Value> &operandGrads) const {
    GradientContext g{b, op->getLoc(), grad, needed, operandGrads};
    return gradientOf(cast<Op>(op), g);
  }
};

template <typename... Ops> void attach(MLIRContext *ctx) {
  (Ops::template attachInterface<Model<Ops>>(*ctx), ...);
}

// Every unary-kind op (the dialect's op list) whose kind has a gradient kernel, and Neg, whose
// gradient is a Neg: a new unary kind's record (runtime/scalar_ops.h) says whether it has one.
template <typename Op> void attachIfDifferentiableUnary(MLIRContext *ctx) {
  if constexpr (Op::template hasTrait<UnaryKindOp>()) {
    std::optional<rt::UnaryKind> kind = unaryKindNamed(Op::getKernelKind());
    if (std::is_same_v<Op, NegOp> ||
        (kind && rt::scalar::unaryGradFrom(*kind) != rt::GradFrom::None))
      Op::template attachInterface<Model<Op>>(*ctx);
  }
}
template <typename... Ops> void attachDifferentiableUnaries(MLIRContext *ctx) {
  (attachIfDifferentiableUnary<Ops>(ctx), ...);
}

} // namespace

void registerGradients(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, DlcDialect *) {
    attachDifferentiableUnaries<
#define GET_OP_LIST
#include "dialects/DlcOps.cpp.inc"
        >(ctx);
    attach<AddOp, SubOp, MulOp, DivOp, PowOp, MaxOp, MinOp, MatMulOp, GemmOp, ConvOp, MaxPoolOp,
           AvgPoolOp, GlobalAvgPoolOp, SoftmaxOp, ReduceSumOp, ReduceMeanOp, ReduceMaxOp, ReduceMinOp, ReshapeOp,
           TransposeOp, ConcatOp, SliceOp, GatherOp, CastOp, ClipOp, LeakyReluOp,
           BatchNormApplyOp, NllLossOp, ConvGradInputOp, WhereOp, BroadcastOp, CumSumOp,
           GatherElementsOp, GatherNDOp, ScatterElementsOp, ScatterNDOp>(ctx);
  });
}

} // namespace dlc
