#ifndef DLC_PASSES_TD
#define DLC_PASSES_TD

include "mlir/Pass/PassBase.td"

def FoldBatchNorm : Pass<"dlc-fold-batch-norm", "mlir::func::FuncOp"> {
  let summary = "Fold inference batch normalization into the convolution before it";
  let description = [{
    A `dlc.batch_norm` whose input is a `dlc.conv` used only by it, with constant weights,
    bias and normalization parameters, becomes one `dlc.conv` with scaled weights and an
    adjusted bias. One whose input is a `dlc.conv_grad_input` (ConvTranspose), directly or
    through the Add of a constant per-channel bias, becomes the same with scaled weights and
    one Add of the adjusted bias. Inference only: training keeps the ops.
  }];
  let dependentDialects = ["dlc::DlcDialect"];
}

def FuseEpilogues : Pass<"dlc-fuse-epilogues", "mlir::func::FuncOp"> {
  let summary = "Make residual adds and activations the epilogue of the conv or Gemm feeding them";
  let description = [{
    First, a float32 `dlc.add` of a `dlc.conv` used only by it and another value of the same
    type (no broadcast: a residual connection) disappears: the conv moves to the add's place
    and takes that value as its `residual` operand. A float32 `dlc.add` of a `dlc.gemm`
    without bias (directly or through one `dlc.reshape`, each read only by the add) and one
    value per column of the product (a Linear layer's bias, which PyTorch exports as MatMul
    and Add) likewise becomes the product's `c` (beta 1), which the CPU kernel adds as it
    finishes each tile: the same bits, one pass over the output fewer. Then SiLU as exporters write it, a
    `dlc.mul` of a float32 `dlc.conv` or `dlc.gemm` and the `dlc.sigmoid` of it (the producer
    read by those two only), becomes the producer's `dlc.activation = "silu"`, and HardSwish
    as PyTorch exports it (HardSigmoid with alpha 1/6 and beta 0.5, imported as
    clip(1/6 * x + 0.5, 0, 1), then a `dlc.mul` by x) its `"hard_swish"`. Then a `dlc.relu`, `dlc.clip`,
    `dlc.leaky_relu`, `dlc.sigmoid` or `dlc.tanh` whose input is a float32 `dlc.conv` or
    `dlc.gemm` used only by it disappears: the producer gets `dlc.activation` (with
    `dlc.activation_min` / `dlc.activation_max` for clip, `dlc.activation_alpha` for leaky
    relu) and computes the value itself, while its output is still in cache. So ResNet's
    conv + add + relu is one op. The producer keeps its location. Run it after autodiff: a
    fused op has no gradient, and the single-use rule keeps every value a gradient reads.
  }];
  let dependentDialects = ["dlc::DlcDialect"];
}

def ChannelsLast : Pass<"dlc-channels-last", "mlir::func::FuncOp"> {
  let summary = "Run groups of depthwise and pointwise convolutions channels-last (NHWC)";
  let description = [{
    Channels-last kernels read every tap of a depthwise convolution as a contiguous vector of
    channels and make a pointwise convolution one product with ahead-of-time packed weights,
    whatever the instruction set chosen at run time (a blocked NCHWc layout would fix the
    vector width at compile time). Qualifying convolutions (2-d, constant weights, depthwise
    or pointwise) that feed one another in one block form groups; of each group, the part a
    minimum cut picks switches layout: what a member saves channels-last (a depthwise
    convolution its output's elements, a pointwise one half of them, a nearest upsample along
    the rows half of its output) against the elements each transpose between the layouts
    moves. A transpose is free where it cancels one already there (an input that
    is a transpose to channels-first, an output used only by transposes to channels-last, as
    around ConvNeXt's LayerNorm). Between two convolutions of a group there is no transpose
    at all; the canonicalizer folds the pairs this pass leaves at borders of two groups. Runs
    after dlc-fuse-epilogues, so fused residual adds and activations move along.
  }];
  let dependentDialects = ["dlc::DlcDialect"];
}

def FuseRotary : Pass<"dlc-fuse-rotary", "mlir::func::FuncOp"> {
  let summary = "Compute rotary position embedding as one op, reading split heads in place";
  let description = [{
    Rotary position embedding as Hugging Face writes it (LLaMA, Mistral, Qwen, GPT-NeoX):
    x * cos + rotate_half(x) * sin, rotate_half(x) = Concat(Neg(x[..., n/2:]), x[..., :n/2])
    over the last axis (float32 `dlc.slice`, `dlc.slice`, `dlc.neg`, `dlc.concat`, `dlc.mul`,
    `dlc.mul`, `dlc.add`, each intermediate read once) becomes one `dlc.rotary`; a transpose
    that only it reads and that keeps the last axis last (the split heads) becomes its `perm`.
    Five passes over the heads and two copies become one pass; the same bits (each step
    rounds as the op it replaces).
  }];
  let dependentDialects = ["dlc::DlcDialect"];
}

def MergeLinears : Pass<"dlc-merge-linears", "mlir::func::FuncOp"> {
  let summary = "Run the projections of one input (attention's Q, K and V) as one product";
  let description = [{
    Float32 `dlc.gemm`s of the same input (A not transposed, alpha 1) by constant weights,
    each with a constant bias of one value per column or none and nothing fused, whose
    results only reach `dlc.matmul`s through reshapes, transposes and scalings by one
    value (the split heads dlc-fuse-attention reads in place), become one `dlc.gemm` by the
    weights side by side (their biases too, zeros for a product without one), each former
    result a `dlc.slice` of its columns. The input is packed for the product once, not once
    per projection, and one wider product splits better over threads; dlc-fuse-attention
    then reads the slices in place. Weights merged once serve every group of the same
    weights. Each element is the same sum as before, in the same order.
  }];
  let dependentDialects = ["dlc::DlcDialect"];
}

def FuseAttention : Pass<"dlc-fuse-attention", "mlir::func::FuncOp"> {
  let summary = "Compute scaled dot-product attention as one op, without its scores in memory";
  let description = [{
    A float32 `dlc.softmax` over the last axis between two `dlc.matmul`s, optionally after a
    `dlc.mul` or `dlc.div` by a one-element constant and a `dlc.add` (a mask) or a `dlc.where`
    of a constant condition with a one-element constant fill (GPT-2's causal mask, which
    becomes the bias condition ? 0 : fill), in that order, becomes one `dlc.attention` when each intermediate value has no other use (a training
    step's backward reads the probabilities, so its forward stays as it is) and the three
    matrices share their leading dims. The kernel computes the scores a block of query rows
    at a time in its workspace: an encoder over 1500 positions no longer writes and reads
    back 54 MB of scores per layer. Each step rounds as the op it replaces, but for the
    softmax's normalization, which the kernel applies to the output rows. The split-heads
    reshapes, transposes, slices and broadcasts that only the matrices read (and the
    transpose that alone reads the result) become the op's views: the heads are read and
    written in place. A query scaled by a power of 2 joins a power-of-2 scale of the scores.
  }];
  let dependentDialects = ["dlc::DlcDialect"];
}

def FuseLayerNorm : Pass<"dlc-fuse-layer-norm", "mlir::func::FuncOp"> {
  let summary = "Compute layer normalization over the last axis as one op, in one pass";
  let description = [{
    Layer normalization as exporters write it before opset 17 (and as LayerNormalization is
    imported): a float32 `dlc.reduce_mean` over the last axis, the `dlc.sub` of it, the
    square (`dlc.pow` by 2 or a `dlc.mul` by itself), `dlc.reduce_mean`, `dlc.add` of a
    one-element constant (epsilon), `dlc.sqrt`, `dlc.div` (or `dlc.mul` by its
    `dlc.reciprocal`), then an optional `dlc.mul` by a scale and `dlc.add` of a bias, each
    holding the last dim's elements, becomes one `dlc.layer_norm` when each intermediate
    value has no other use (the centered values: the square and the division). RMSNorm as
    LLaMA exports it (the square of x, `dlc.reduce_mean`, Add epsilon, Sqrt, a division of x
    by it or a Mul by its reciprocal or 1 / it, the weight's Mul) becomes one with `rms`; its
    x may have other readers (the residual stream). The kernel
    reads each row once and writes it once where the ops made seven passes over memory (a
    1500 x 384 norm: 2.3 MB, past L2); its statistics are summed in vector partial sums, so
    results differ from the ops' by rounding. A training step keeps the ops: its backward
    reads the intermediates.
  }];
  let dependentDialects = ["dlc::DlcDialect"];
}

def FuseInputScale : Pass<"dlc-fuse-input-scale", "mlir::func::FuncOp"> {
  let summary = "Let pointwise convolutions scale their input per channel";
  let description = [{
    A float32 `dlc.mul` of a channels-last [N, H, W, C] value by an [N, 1, 1, C] one (or a
    channels-first [N, C, H, W] by an [N, C, 1, 1] one), used only as the input of a
    pointwise `dlc.conv` of the same layout in its block (a 1x1 window, no stride or padding,
    one group), disappears: the conv takes the two as its input and `input_scale`. This is
    squeeze-and-excitation's gate (EfficientNet, MobileNetV3, RegNetY): the kernel multiplies
    each input value as it reads it (channels-first, as its GEMM packs the input), rather than
    a pass over memory writing the scaled tensor; each product rounds as the Mul's does, so
    the bits stay. Runs after dlc-channels-last, which decides the layouts.
  }];
  let dependentDialects = ["dlc::DlcDialect"];
}

def FuseElementwise : Pass<"dlc-fuse-elementwise", "mlir::func::FuncOp"> {
  let summary = "Compute chains of float32 elementwise ops in one pass over memory";
  let description = [{
    Float32 unary ops, the float binary ops (add, sub, mul, div, pow, max, min, mod, fmod),
    clip and leaky_relu of one type, in one block, where each value but the last is used only
    inside the chain, become one `dlc.fused_elementwise` at the last op's place (GELU, Mish,
    Swish and PReLU as the importer spells them are such chains). Operands from outside the
    chain become its inputs: the result's type, or broadcasts whose non-1 dims are adjacent
    (scalars, rows, per-channel vectors); ops with other operands stay out. At most 15 ops
    per chain, so a chain's slots fit the runtime's bound. The fused kernel runs each op's
    own kernel over cache-sized chunks: the same results, one pass over memory instead of
    one per op, and no arena space for the intermediate values. Runs after
    dlc-fuse-epilogues, so an activation still becomes its producer's epilogue first. A chain
    never reaches back across an optimizer's state update (it reads its inputs at its end).
  }];
  let dependentDialects = ["dlc::DlcDialect"];
}

def Autodiff : Pass<"dlc-autodiff", "mlir::func::FuncOp"> {
  let summary = "Reverse-mode autodiff: append the gradients of the loss to the function";
  let description = [{
    Acts on a function whose result 0 is a scalar f32 marked `dlc.loss`. For every argument
    marked `dlc.trainable` that the loss depends on, appends a result holding the gradient
    of the loss with respect to it, marked `dlc.gradient_of = <argument number>`. Each op on
    a path from a trainable argument to the loss builds its own gradient through
    GradientInterface (dialects/Gradients.cpp); contributions of several uses are summed.
    An op on such a path without a gradient is an error naming its node and the weight.
  }];
  let dependentDialects = ["dlc::DlcDialect"];
}

def OptimizerLowering : Pass<"dlc-lower-optimizer", "mlir::func::FuncOp"> {
  let summary = "Turn appended gradients into in-place optimizer updates of the weights";
  let description = [{
    For each result marked `dlc.gradient_of = n`, adds the optimizer's moment buffers as
    state arguments (`dlc.state`, named after the weight: `W.momentum_buffer`, `W.exp_avg`,
    `W.exp_avg_sq`) and an update op (dlc.sgd_update or dlc.adam_update) that writes argument
    n and its moments in place. The update goes right after the last reader of the weight
    and of its gradient, so gradients die early. Adds the run-time hyperparameter argument
    (`dlc.hyper`, [lr, first step, 1 - beta1^t, 1 - beta2^t]) and drops the gradient results.
  }];
  let options = [
    Option<"optimizer", "optimizer", "std::string", "\"sgd\"", "sgd, adam or adamw">,
    Option<"momentum", "momentum", "float", "0.0f", "SGD momentum">,
    Option<"weightDecay", "weight-decay", "float", "0.0f", "L2 (sgd, adam) or decoupled (adamw) weight decay">,
    Option<"nesterov", "nesterov", "bool", "false", "Nesterov momentum (sgd)">,
    Option<"beta1", "beta1", "float", "0.9f", "Adam beta1">,
    Option<"beta2", "beta2", "float", "0.999f", "Adam beta2">,
    Option<"eps", "eps", "float", "1e-8f", "Adam epsilon">,
  ];
  let dependentDialects = ["dlc::DlcDialect"];
}

def InplaceLegalization : Pass<"dlc-inplace-legalization", "mlir::func::FuncOp"> {
  let summary = "Decide which views alias their operand and which ops write in place";
  let description = [{
    A view op (`dlc.reshape`) gets `dlc.view` — its result aliases its operand, no copy —
    unless that would put a graph output in a graph input's or weight's memory, or two graph
    outputs in one buffer. An op that allows it (InPlaceInterface) gets `dlc.inplace = n` —
    its result overwrites operand n — only if operand n's whole storage group (the value, its
    views and everything already written in place over it) has no reader after this op, is
    not a graph input, weight or graph output, and has the result's size. Runs after autodiff,
    so uses in a backward program count as readers.
  }];
  let dependentDialects = ["dlc::DlcDialect"];
}

def BufferPlanning : Pass<"dlc-buffer-planning", "mlir::func::FuncOp"> {
  let summary = "Place every value and workspace in one arena at compile-time offsets";
  let description = [{
    Liveness is computed per storage group (views, in-place chains, elided concats). Concats
    whose inputs can be written straight into slices of their result get `dlc.elided`. Groups
    holding a graph output live in the caller's output buffer (`dlc.output`,
    `dlc.output_offset`); the rest get `dlc.arena_offset`, 64-byte aligned, chosen by best-fit
    over several orderings, keeping the smallest arena. Ops after which arena ranges die get
    `dlc.release` (for DLC_CHECK_MEMORY). The function gets `dlc.arena_bytes`,
    `dlc.arena_lower_bound` (peak of simultaneously live bytes) and `dlc.no_reuse_bytes`.
    With `reuse=false` every value gets its own range and nothing is elided.
  }];
  let options = [
    Option<"reuse", "reuse", "bool", "true", "Share memory between values whose lives do not overlap">,
    Option<"firstFit", "first-fit", "bool", "false",
           "Place in schedule order at the lowest free offset (the naive baseline, for comparison)">,
  ];
  let dependentDialects = ["dlc::DlcDialect"];
}

def PlanVerification : Pass<"dlc-verify-plan", "mlir::func::FuncOp"> {
  let summary = "Independently check the memory plan; fail on any unsafe sharing";
  let description = [{
    Recomputes the schedule, liveness and every value's memory range from the IR alone (not
    from the planner's data structures) and fails, naming both values, if an op writes over a
    value that is read later, if two simultaneously live values overlap without being declared
    aliases, if anything writes a graph input or weight, or if an in-place write precedes
    another reader of the overwritten memory.
  }];
  let dependentDialects = ["dlc::DlcDialect"];
}

#endif
