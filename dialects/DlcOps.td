#ifndef DLC_OPS_TD
#define DLC_OPS_TD

include "DlcDialect.td"
include "DlcInterfaces.td"
include "DlcTypes.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"

// Every operand and result fits dlc's tensor size limit (dialects/Sizes.h), so no pass needs
// to guard its own size arithmetic against types written by hand in .mlir files.
def Dlc_TensorSizeLimit : NativeOpTrait<"TensorSizeLimit"> { let cppNamespace = "::dlc"; }

// Every op prints its operand and result types in one functional type, so one assembly format
// serves all ops and adding an op never needs a custom parser.
class Dlc_TensorOp<string mnemonic, list<Trait> traits = []>
    : Dlc_Op<mnemonic, !listconcat([Pure, Dlc_TensorSizeLimit], traits)> {
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

// A view: the result may alias operand 0's storage (same bytes, new shape).
def Dlc_ViewOpTrait : NativeOpTrait<"ViewOpTrait"> { let cppNamespace = "::dlc"; }

// The op families whose kernel is chosen by the op's kind (Dlc_KindOp): codegen registers one
// emitter for each family's every op, found by these traits in the dialect's op list.
def Dlc_UnaryKindOp : NativeOpTrait<"UnaryKindOp"> { let cppNamespace = "::dlc"; }
def Dlc_BinaryKindOp : NativeOpTrait<"BinaryKindOp"> { let cppNamespace = "::dlc"; }
def Dlc_ReduceKindOp : NativeOpTrait<"ReduceKindOp"> { let cppNamespace = "::dlc"; }

// Verifies equal types without making ODS infer the result type (results stay explicit).
def Dlc_SameType : NativeOpTrait<"SameOperandsAndResultType">;
def Dlc_SameElementType : NativeOpTrait<"SameOperandsAndResultElementType">;

// float16 and bfloat16 are storage only: the importer computes with them in float32 (casts
// around each op).
def Dlc_AnyTensor : RankedTensorOf<[F32, F64, F16, BF16, I1, I8, I16, I32, I64, UI8, UI16, UI32,
                                    UI64]>;
// float8 and the 4- and 2-bit integers (one element per byte) only travel: they are graph
// inputs, outputs or constants, and casts convert them.
def Dlc_StoredTensor : RankedTensorOf<[F32, F64, F16, BF16, F8E4M3FN, F8E4M3FNUZ, F8E5M2,
                                       F8E5M2FNUZ, Dlc_Float8E8M0, Dlc_Float4E2M1, I1, I<2>,
                                       I<4>, I8, I16, I32, I64, UI<2>, UI<4>, UI8, UI16, UI32,
                                       UI64]>;
def Dlc_F32Tensor : RankedTensorOf<[F32]>;
// Ops whose runtime kernels come for float and double.
def Dlc_FloatTensor : RankedTensorOf<[F32, F64]>;
def Dlc_MatMulTensor : RankedTensorOf<[F32, F64, I32]>;
def Dlc_IndexTensor : RankedTensorOf<[I32, I64]>;
def Dlc_BoolTensor : RankedTensorOf<[I1]>;

class Dlc_KindOp<string mnemonic, string kind, list<Trait> traits = []>
    : Dlc_TensorOp<mnemonic, !listconcat(
          [Dlc_KernelKindInterface], traits)> {
  let extraClassDeclaration = [{
    static ::llvm::StringRef getKernelKind() { return "}] # kind # [{"; }
  }];
}

//===----------------------------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------------------------===//

class Dlc_UnaryOp<string mnemonic, string kind>
    : Dlc_KindOp<mnemonic, kind,
                 [Elementwise, Dlc_SameType, Dlc_InPlaceInterface, Dlc_UnaryKindOp]> {
  let summary = "elementwise " # mnemonic;
  let arguments = (ins Dlc_FloatTensor:$input);
  let results = (outs Dlc_FloatTensor:$output);
}

def Dlc_ReluOp : Dlc_UnaryOp<"relu", "Relu">;
def Dlc_SigmoidOp : Dlc_UnaryOp<"sigmoid", "Sigmoid">;
def Dlc_TanhOp : Dlc_UnaryOp<"tanh", "Tanh">;
def Dlc_ExpOp : Dlc_UnaryOp<"exp", "Exp">;
def Dlc_LogOp : Dlc_UnaryOp<"log", "Log">;
def Dlc_SqrtOp : Dlc_UnaryOp<"sqrt", "Sqrt">;
def Dlc_NegOp : Dlc_UnaryOp<"neg", "Neg">;
def Dlc_AbsOp : Dlc_UnaryOp<"abs", "Abs">;
def Dlc_ErfOp : Dlc_UnaryOp<"erf", "Erf">;
def Dlc_ReciprocalOp : Dlc_UnaryOp<"reciprocal", "Reciprocal">;
def Dlc_FloorOp : Dlc_UnaryOp<"floor", "Floor">;
def Dlc_CeilOp : Dlc_UnaryOp<"ceil", "Ceil">;
def Dlc_SoftplusOp : Dlc_UnaryOp<"softplus", "Softplus">;
def Dlc_SinOp : Dlc_UnaryOp<"sin", "Sin">;
def Dlc_CosOp : Dlc_UnaryOp<"cos", "Cos">;
def Dlc_TanOp : Dlc_UnaryOp<"tan", "Tan">;
def Dlc_AsinOp : Dlc_UnaryOp<"asin", "Asin">;
def Dlc_AcosOp : Dlc_UnaryOp<"acos", "Acos">;
def Dlc_AtanOp : Dlc_UnaryOp<"atan", "Atan">;
def Dlc_SinhOp : Dlc_UnaryOp<"sinh", "Sinh">;
def Dlc_CoshOp : Dlc_UnaryOp<"cosh", "Cosh">;
def Dlc_AsinhOp : Dlc_UnaryOp<"asinh", "Asinh">;
def Dlc_AcoshOp : Dlc_UnaryOp<"acosh", "Acosh">;
def Dlc_AtanhOp : Dlc_UnaryOp<"atanh", "Atanh">;
def Dlc_SoftsignOp : Dlc_UnaryOp<"softsign", "Softsign">;
def Dlc_HardSwishOp : Dlc_UnaryOp<"hard_swish", "HardSwish">;
def Dlc_SignOp : Dlc_UnaryOp<"sign", "Sign">;
def Dlc_RoundOp : Dlc_UnaryOp<"round", "Round">;
def Dlc_MishOp : Dlc_UnaryOp<"mish", "Mish">;

def Dlc_CastOp : Dlc_TensorOp<"cast", [Elementwise]> {
  let summary = "converts each element to the result's element type";
  let description = [{
    As ONNX Cast: floats to integers truncate (4- and 2-bit integers wrap), float conversions
    round to nearest even. `saturate` matters for float8 results only: out-of-range values
    (and infinities) become the largest finite value instead of infinity or NaN.
    `round_mode` (up, down or nearest) rounds to float8 e8m0, a power of two.
  }];
  let arguments = (ins Dlc_StoredTensor:$input, DefaultValuedAttr<BoolAttr, "true">:$saturate,
                   DefaultValuedAttr<StrAttr, "\"up\"">:$round_mode);
  let results = (outs Dlc_StoredTensor:$output);
  let hasVerifier = 1;
}

def Dlc_ClipOp : Dlc_TensorOp<"clip", [Elementwise, Dlc_SameType, Dlc_InPlaceInterface]> {
  let summary = "clamps each element to [min, max]";
  let arguments = (ins Dlc_F32Tensor:$input, F32Attr:$min, F32Attr:$max);
  let results = (outs Dlc_F32Tensor:$output);
}

def Dlc_LeakyReluOp : Dlc_TensorOp<"leaky_relu",
    [Elementwise, Dlc_SameType, Dlc_InPlaceInterface]> {
  let arguments = (ins Dlc_F32Tensor:$input, F32Attr:$alpha);
  let results = (outs Dlc_F32Tensor:$output);
}

// Numpy-style broadcasting; the verifier checks that the result type is the broadcast shape.
class Dlc_BinaryOp<string mnemonic, string kind>
    : Dlc_KindOp<mnemonic, kind, [Dlc_InPlaceInterface, Dlc_BinaryKindOp]> {
  let summary = "elementwise " # mnemonic # " with broadcasting";
  let arguments = (ins Dlc_AnyTensor:$lhs, Dlc_AnyTensor:$rhs);
  let results = (outs Dlc_AnyTensor:$output);
  let hasVerifier = 1;
}

// x + 0, x - 0, x * 1 and x / 1 fold to x where the result has x's type (exporters write
// them: Paddle assigns a loop's state as `x + 0`; the float fold only turns -0 into +0).
def Dlc_AddOp : Dlc_BinaryOp<"add", "Add"> { let hasFolder = 1; }
def Dlc_SubOp : Dlc_BinaryOp<"sub", "Sub"> { let hasFolder = 1; }
def Dlc_MulOp : Dlc_BinaryOp<"mul", "Mul"> { let hasFolder = 1; }
def Dlc_DivOp : Dlc_BinaryOp<"div", "Div"> { let hasFolder = 1; }
// x^2 becomes x * x (canonicalization): the same values (a product rounds once, where powf may
// be off by an ulp), without a libm call per element. LayerNorm as exported before opset 17
// squares this way.
def Dlc_PowOp : Dlc_BinaryOp<"pow", "Pow"> { let hasCanonicalizeMethod = 1; }
def Dlc_MaxOp : Dlc_BinaryOp<"max", "Max">;
def Dlc_MinOp : Dlc_BinaryOp<"min", "Min">;
// Bitwise on integers, logical on bool; the shifts on unsigned integers.
def Dlc_AndOp : Dlc_BinaryOp<"and", "And">;
def Dlc_OrOp : Dlc_BinaryOp<"or", "Or">;
def Dlc_XorOp : Dlc_BinaryOp<"xor", "Xor">;
def Dlc_ShiftLeftOp : Dlc_BinaryOp<"shift_left", "ShiftLeft">;
def Dlc_ShiftRightOp : Dlc_BinaryOp<"shift_right", "ShiftRight">;
// Remainder with the divisor's sign (mod) or the dividend's (fmod).
def Dlc_ModOp : Dlc_BinaryOp<"mod", "Mod">;
def Dlc_FModOp : Dlc_BinaryOp<"fmod", "FMod">;

def Dlc_FusedElementwiseOp : Dlc_TensorOp<"fused_elementwise", [Dlc_InPlaceInterface]> {
  let summary = "a chain of float32 elementwise ops computed in one pass over memory";
  let description = [{
    Made by dlc-fuse-elementwise. `steps` lists the chain's ops in order, each as text: the
    runtime's kind (an enumerator of UnaryKind or a float BinaryKind, or `Clip`, `LeakyRelu`),
    the slots it reads, then its parameters (Clip: min max; LeakyRelu: alpha), e.g.
    `"Mul 0 1"`, `"Clip 2 0 6"`. Slots number the inputs first, then one per step; the last
    step's value is the result. Each input has the result's type or broadcasts onto it with
    its non-1 dims adjacent (a scalar, a row, a per-channel [C, 1, 1] vector).
  }];
  let arguments = (ins Variadic<Dlc_F32Tensor>:$inputs, StrArrayAttr:$steps);
  let results = (outs Dlc_F32Tensor:$output);
  let hasVerifier = 1;
}

class Dlc_CompareOp<string mnemonic, string kind>
    : Dlc_KindOp<mnemonic, kind, [Dlc_BinaryKindOp]> {
  let summary = "elementwise " # mnemonic # " with broadcasting, a bool result";
  let arguments = (ins Dlc_AnyTensor:$lhs, Dlc_AnyTensor:$rhs);
  let results = (outs Dlc_BoolTensor:$output);
  let hasVerifier = 1;
}

def Dlc_EqualOp : Dlc_CompareOp<"equal", "Equal">;
def Dlc_LessOp : Dlc_CompareOp<"less", "Less">;
def Dlc_LessEqualOp : Dlc_CompareOp<"less_equal", "LessEqual">;
def Dlc_GreaterOp : Dlc_CompareOp<"greater", "Greater">;
def Dlc_GreaterEqualOp : Dlc_CompareOp<"greater_equal", "GreaterEqual">;

def Dlc_WhereOp : Dlc_TensorOp<"where"> {
  let summary = "lhs where the condition holds, else rhs; all three broadcast";
  let arguments = (ins Dlc_BoolTensor:$condition, Dlc_AnyTensor:$lhs, Dlc_AnyTensor:$rhs);
  let results = (outs Dlc_AnyTensor:$output);
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------------------------===//
// Linear algebra, convolution, pooling, normalization
//===----------------------------------------------------------------------------------------===//

def Dlc_MatMulOp : Dlc_TensorOp<"matmul", [Dlc_SameElementType]> {
  let summary = "batched matrix product, batch dims broadcast (both operands rank >= 2)";
  let description = [{
    float32, or int32 for the integer products of quantized models (exact, wrapping).
  }];
  let arguments = (ins Dlc_MatMulTensor:$lhs, Dlc_MatMulTensor:$rhs);
  let results = (outs Dlc_MatMulTensor:$output);
  let hasVerifier = 1;
}

def Dlc_AttentionOp : Dlc_TensorOp<"attention"> {
  let summary = "softmax(scale(query x keys) + bias) x values, the softmax over the last axis";
  let description = [{
    Scaled dot-product attention as the exporters write it, made by the CPU target's
    dlc-fuse-attention from MatMul, an optional scalar Mul or Div (`scale`; `divide`: the
    scores are divided by it), an optional Add of `bias` (a mask), Softmax over the last axis
    and MatMul. `query` is [..., S, D], `keys` [..., D, T] (already transposed, as the first
    MatMul takes them), `values` [..., T, E], all with the same leading dims; `bias`
    broadcasts to the scores [..., S, T]; the result is [..., S, E]. Each step rounds as the
    op it replaces, but the softmax's normalization divides the output rows rather than the
    probabilities; the scores exist only in the kernel's workspace, a block of query rows at
    a time.

    With views, the operands are read where the split-heads transposes, slices and
    broadcasts around the attention would have put them, and the result is written so: the
    matrices are [batch..., S, D] (query), [batch..., D, T] (keys), [batch..., T, E]
    (values), [batch..., S, T] (bias) and [batch..., S, E] (result), `batch` and
    `sizes` = [S, D, T, E] giving their dims; each `*_view` is [offset, stride per dim] in
    elements of that operand's (or the result's) row-major buffer. The query's, values' and
    result's rows, and the keys' rows or columns, are contiguous; the result's view covers
    each of its elements once. All view attributes or none.
  }];
  let arguments = (ins Dlc_F32Tensor:$query, Dlc_F32Tensor:$keys, Dlc_F32Tensor:$values,
                   Optional<Dlc_F32Tensor>:$bias, F32Attr:$scale, BoolAttr:$divide,
                   OptionalAttr<DenseI64ArrayAttr>:$batch,
                   OptionalAttr<DenseI64ArrayAttr>:$sizes,
                   OptionalAttr<DenseI64ArrayAttr>:$query_view,
                   OptionalAttr<DenseI64ArrayAttr>:$keys_view,
                   OptionalAttr<DenseI64ArrayAttr>:$values_view,
                   OptionalAttr<DenseI64ArrayAttr>:$bias_view,
                   OptionalAttr<DenseI64ArrayAttr>:$output_view);
  let results = (outs Dlc_F32Tensor:$output);
  let hasVerifier = 1;
}

def Dlc_LayerNormOp : Dlc_TensorOp<"layer_norm", [AttrSizedOperandSegments]> {
  let summary = "(x - mean) / sqrt(variance + epsilon) over the last axis, times scale, plus bias";
  let description = [{
    Layer normalization over the last axis as exporters write it, made by the CPU target's
    dlc-fuse-layer-norm from ReduceMean, Sub, the square (Pow 2 or a Mul by itself),
    ReduceMean, Add of `epsilon`, Sqrt, Div (or Mul by the Reciprocal), then an optional Mul
    by `scale` and Add of `bias`, each with the last dim's n elements. With `rms`, RMSNorm
    (LLaMA): no mean is subtracted, x / sqrt(mean(x^2) + epsilon). One pass over memory;
    the kernel sums in vector partial sums where ReduceMean sums serially, so results differ
    from the unfused ops by rounding (a few ulp).
  }];
  let arguments = (ins Dlc_F32Tensor:$input, Optional<Dlc_F32Tensor>:$scale,
                   Optional<Dlc_F32Tensor>:$bias, F32Attr:$epsilon, UnitAttr:$rms);
  let results = (outs Dlc_F32Tensor:$output);
  let hasVerifier = 1;
}

def Dlc_RotaryOp : Dlc_TensorOp<"rotary"> {
  let summary = "x * cos + rotate_half(x) * sin over the last axis (rotary position embedding)";
  let description = [{
    Rotary position embedding as Hugging Face's LLaMA, Mistral, Qwen and GPT-NeoX export it,
    made by the CPU target's dlc-fuse-rotary from Slice, Slice, Neg, Concat, Mul, Mul and Add:
    rotate_half(x) is [-x[..., n/2:], x[..., :n/2]] (n, the last dim, even). x is the input
    read as transpose(input, perm) where `perm` is set (the split-heads transpose, which keeps
    the last axis last); cos and sin broadcast to x. Each step rounds as the op it replaces
    (two products and their sum, no fused multiply-add): the same bits.
  }];
  let arguments = (ins Dlc_F32Tensor:$input, Dlc_F32Tensor:$cos, Dlc_F32Tensor:$sin,
                   OptionalAttr<DenseI64ArrayAttr>:$perm);
  let results = (outs Dlc_F32Tensor:$output);
  let hasVerifier = 1;
}

def Dlc_GemmOp : Dlc_TensorOp<"gemm"> {
  let summary = "alpha * op(a) * op(b) + beta * c, c broadcast to the result";
  let arguments = (ins Dlc_F32Tensor:$a, Dlc_F32Tensor:$b, Optional<Dlc_F32Tensor>:$c,
                   BoolAttr:$trans_a, BoolAttr:$trans_b, F32Attr:$alpha, F32Attr:$beta);
  let results = (outs Dlc_F32Tensor:$output);
  let hasVerifier = 1;
}

def Dlc_ConvOp : Dlc_TensorOp<"conv", [AttrSizedOperandSegments]> {
  let summary = "grouped N-d convolution (1 to 3 spatial dims), explicit pads";
  let description = [{
    `pads` holds begin pads for each spatial dim, then end pads. `residual` (the result's type)
    is a fused Add (dlc-fuse-epilogues): the result is conv + bias + residual, then the fused
    activation; it is never the same buffer as the result. With `channels_last`
    (dlc-channels-last) input, result and residual are [N, H, W, C] rather than [N, C, H, W];
    the weight keeps ONNX's [out, in / group, kH, kW] and must be a constant (the compiler
    lays it out for the kernel), and only 2-d depthwise and pointwise convolutions qualify.
    With `planar_input` as well, the input stays [N, C, H, W]: a 2-d convolution of one group
    over at most 4 input channels (a network's first layer, reading an image) whose result
    comes out channels-last, with no transpose after it.
    `input_scale` (pointwise convolutions of one group over C > 1 channels only: [N, 1, 1,
    C] channels-last, [N, C, 1, 1] channels-first) is a fused broadcast Mul of the input
    (dlc-fuse-input-scale), squeeze-and-excitation's gate: the result is conv(input *
    input_scale), each product rounded as the Mul rounds it.
  }];
  let arguments = (ins Dlc_F32Tensor:$input, Dlc_F32Tensor:$weight,
                   Optional<Dlc_F32Tensor>:$bias, Optional<Dlc_F32Tensor>:$residual,
                   Optional<Dlc_F32Tensor>:$input_scale,
                   DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads,
                   DenseI64ArrayAttr:$dilations, I64Attr:$group, UnitAttr:$channels_last,
                   UnitAttr:$planar_input);
  let results = (outs Dlc_F32Tensor:$output);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? (`residual` $residual^)? (`input_scale` $input_scale^)?
    attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Dlc_BatchNormOp : Dlc_TensorOp<"batch_norm", [Dlc_InPlaceInterface]> {
  let summary = "inference batch normalization over dim 1";
  let arguments = (ins Dlc_F32Tensor:$input, Dlc_F32Tensor:$scale, Dlc_F32Tensor:$bias,
                   Dlc_F32Tensor:$mean, Dlc_F32Tensor:$variance, F32Attr:$epsilon);
  let results = (outs Dlc_F32Tensor:$output);
  let hasVerifier = 1;
}

class Dlc_PoolOp<string mnemonic, dag extraAttrs> : Dlc_TensorOp<mnemonic> {
  let summary = mnemonic # " over 1 to 3 spatial dims, explicit pads (begins then ends)";
  let arguments = !con((ins Dlc_F32Tensor:$input, DenseI64ArrayAttr:$kernel_shape,
                            DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads,
                            DenseI64ArrayAttr:$dilations, BoolAttr:$ceil_mode), extraAttrs);
  let results = (outs Dlc_F32Tensor:$output);
  let hasVerifier = 1;
}

def Dlc_MaxPoolOp : Dlc_PoolOp<"max_pool", (ins)>;

def Dlc_MaxPoolIndicesOp : Dlc_TensorOp<"max_pool_indices"> {
  let summary = "where each dlc.max_pool output with the same attributes came from";
  let description = [{
    The flat index into the input (batch and channels included) of the element max pooling
    picks, with the spatial dims row-major or, with `column_major`, column-major (ONNX
    MaxPool's second output and its storage_order).
  }];
  let arguments = (ins Dlc_F32Tensor:$input, DenseI64ArrayAttr:$kernel_shape,
                   DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads,
                   DenseI64ArrayAttr:$dilations, BoolAttr:$ceil_mode, BoolAttr:$column_major);
  let results = (outs RankedTensorOf<[I64]>:$output);
  let hasVerifier = 1;
}
def Dlc_AvgPoolOp : Dlc_PoolOp<"avg_pool", (ins BoolAttr:$count_include_pad)>;

def Dlc_RoiAlignOp : Dlc_TensorOp<"roi_align"> {
  let summary = "ONNX RoiAlign: bilinear samples of each region, averaged or maxed per bin";
  let description = [{
    `input` [N, C, H, W], `rois` [R, 4] (x1, y1, x2, y2), `batch_indices` [R] (checked at run
    time); the result [R, C, out_height, out_width]. `half_pixel` shifts coordinates by half a
    pixel (ONNX's default coordinate_transformation_mode); `max` takes the largest weighted
    bilinear tap instead of the average.
  }];
  let arguments = (ins Dlc_F32Tensor:$input, Dlc_F32Tensor:$rois,
                   RankedTensorOf<[I64]>:$batch_indices, I64Attr:$sampling_ratio,
                   F32Attr:$spatial_scale, BoolAttr:$half_pixel, BoolAttr:$max);
  let results = (outs Dlc_F32Tensor:$output);
  let hasVerifier = 1;
}

def Dlc_DetOp : Dlc_TensorOp<"det"> {
  let summary = "the determinant of each square matrix in the trailing two dims";
  let arguments = (ins Dlc_F32Tensor:$input);
  let results = (outs Dlc_F32Tensor:$output);
  let hasVerifier = 1;
}

def Dlc_GlobalAvgPoolOp : Dlc_TensorOp<"global_avg_pool"> {
  let arguments = (ins Dlc_F32Tensor:$input);
  let results = (outs Dlc_F32Tensor:$output);
  let hasVerifier = 1;
}

def Dlc_SoftmaxOp : Dlc_TensorOp<"softmax", [Dlc_SameType]> {
  let summary = "softmax (or log-softmax) along one axis";
  let arguments = (ins Dlc_FloatTensor:$input, I64Attr:$axis, BoolAttr:$log);
  let results = (outs Dlc_FloatTensor:$output);
  let hasVerifier = 1;
}

class Dlc_ReduceOp<string mnemonic, string kind>
    : Dlc_KindOp<mnemonic, kind, [Dlc_ReduceKindOp]> {
  let summary = "reduction over sorted non-negative `axes`; the result type says keepdims";
  let arguments = (ins Dlc_FloatTensor:$input, DenseI64ArrayAttr:$axes);
  let results = (outs Dlc_FloatTensor:$output);
  let hasVerifier = 1;
}

def Dlc_ReduceSumOp : Dlc_ReduceOp<"reduce_sum", "Sum">;
def Dlc_ReduceMeanOp : Dlc_ReduceOp<"reduce_mean", "Mean">;
def Dlc_ReduceMaxOp : Dlc_ReduceOp<"reduce_max", "Max">;
def Dlc_ReduceMinOp : Dlc_ReduceOp<"reduce_min", "Min">;
def Dlc_ReduceProdOp : Dlc_ReduceOp<"reduce_prod", "Prod">;

class Dlc_ArgReduceOp<string mnemonic, string kind> : Dlc_KindOp<mnemonic, kind> {
  let summary = "index of the extreme element along `axis`; the result type says keepdims";
  let arguments = (ins Dlc_FloatTensor:$input, I64Attr:$axis, BoolAttr:$select_last_index);
  let results = (outs RankedTensorOf<[I64]>:$output);
  let hasVerifier = 1;
}

def Dlc_ArgMaxOp : Dlc_ArgReduceOp<"arg_max", "Max">;
def Dlc_ArgMinOp : Dlc_ArgReduceOp<"arg_min", "Min">;

class Dlc_RunningOp<string mnemonic, string what> : Dlc_TensorOp<mnemonic, [Dlc_SameType]> {
  let summary = "running " # what # " along `axis` (exclusive: without the element; reverse: "
                "from the end)";
  let arguments = (ins RankedTensorOf<[F32, F64, I32, I64]>:$input, I64Attr:$axis,
                   BoolAttr:$exclusive, BoolAttr:$reverse);
  let results = (outs RankedTensorOf<[F32, F64, I32, I64]>:$output);
  let hasVerifier = 1;
}
def Dlc_CumSumOp : Dlc_RunningOp<"cumsum", "sum">;
def Dlc_CumProdOp : Dlc_RunningOp<"cumprod", "product">;

//===----------------------------------------------------------------------------------------===//
// Data movement and constants
//===----------------------------------------------------------------------------------------===//

def Dlc_ConstantOp : Dlc_Op<"constant",
    [ConstantLike, Pure, Dlc_TensorSizeLimit, AllTypesMatch<["value", "output"]>]> {
  let summary = "a weight or constant tensor (dense or dense-resource elements)";
  let arguments = (ins ElementsAttr:$value);
  let results = (outs Dlc_StoredTensor:$output);
  let assemblyFormat = "attr-dict $value";
  let hasFolder = 1;
  let extraClassDeclaration = [{
    /// The elements as dense little-endian bytes, bools one byte each.
    std::vector<char> getBytes();
    /// A float32 constant's elements.
    std::vector<float> getFloats();
    /// A constant holding `bytes` (in getBytes' layout); large ones go to a resource blob
    /// named `blobName`, so printed IR stays readable.
    static ConstantOp fromBytes(mlir::OpBuilder &builder, mlir::Location loc,
                                mlir::RankedTensorType type, llvm::ArrayRef<char> bytes,
                                llvm::StringRef blobName);
    /// fromBytes for float32 elements.
    static ConstantOp fromFloats(mlir::OpBuilder &builder, mlir::Location loc,
                                 mlir::RankedTensorType type, llvm::ArrayRef<float> floats,
                                 llvm::StringRef blobName);
  }];
}

def Dlc_ReshapeOp : Dlc_TensorOp<"reshape", [Dlc_ViewOpTrait]> {
  let summary = "same bytes, new shape or element type of the same width";
  let description = [{
    Reshape, Flatten, Squeeze, Unsqueeze, and BitCast (same shape, another element type of the
    same width).
  }];
  let arguments = (ins Dlc_StoredTensor:$input);
  let results = (outs Dlc_StoredTensor:$output);
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Dlc_TransposeOp : Dlc_TensorOp<"transpose"> {
  let summary = "ONNX Transpose: result dim i is input dim perm[i]";
  let description = [{
    Folds a transpose of a transpose into one (dlc-channels-last relies on this to cancel the
    layout changes it places between two channels-last convolutions) and drops the identity.
    One that moves only dims of size 1 becomes a `dlc.reshape`: every element stays where it
    is (PyTorch's multi-head attention turns [1, S, E] into [S, 1, E] and back).
  }];
  let arguments = (ins Dlc_AnyTensor:$input, DenseI64ArrayAttr:$perm);
  let results = (outs Dlc_AnyTensor:$output);
  let hasVerifier = 1;
  let hasFolder = 1;
  let hasCanonicalizeMethod = 1;
}

def Dlc_ConcatOp : Dlc_TensorOp<"concat"> {
  let arguments = (ins Variadic<Dlc_AnyTensor>:$inputs, I64Attr:$axis);
  let results = (outs Dlc_AnyTensor:$output);
  let hasVerifier = 1;
}

def Dlc_GatherOp : Dlc_TensorOp<"gather"> {
  let summary = "ONNX Gather; negative indices count from the end";
  let arguments = (ins Dlc_AnyTensor:$input, Dlc_IndexTensor:$indices, I64Attr:$axis);
  let results = (outs Dlc_AnyTensor:$output);
  let hasVerifier = 1;
}

def Dlc_GatherElementsOp : Dlc_TensorOp<"gather_elements"> {
  let summary = "ONNX GatherElements: the result has the indices' shape";
  let arguments = (ins Dlc_AnyTensor:$input, Dlc_IndexTensor:$indices, I64Attr:$axis);
  let results = (outs Dlc_AnyTensor:$output);
  let hasVerifier = 1;
}

def Dlc_ScatterElementsOp : Dlc_TensorOp<"scatter_elements"> {
  let summary = "the input with `updates` combined at `indices` along `axis` (ONNX "
                "ScatterElements; reduction none, add, mul, max or min)";
  let arguments = (ins Dlc_AnyTensor:$input, Dlc_IndexTensor:$indices, Dlc_AnyTensor:$updates,
                   I64Attr:$axis, StrAttr:$reduction);
  let results = (outs Dlc_AnyTensor:$output);
  let hasVerifier = 1;
}

def Dlc_ScatterNDOp : Dlc_TensorOp<"scatter_nd"> {
  let summary = "the input with the slice each index tuple addresses combined with the next "
                "slice of `updates` (ONNX ScatterND)";
  let arguments = (ins Dlc_AnyTensor:$input, RankedTensorOf<[I64]>:$indices,
                   Dlc_AnyTensor:$updates, StrAttr:$reduction);
  let results = (outs Dlc_AnyTensor:$output);
  let hasVerifier = 1;
}

def Dlc_GatherNDOp : Dlc_TensorOp<"gather_nd"> {
  let summary = "the slices of the input that index tuples address (ONNX GatherND)";
  let arguments = (ins Dlc_AnyTensor:$input, RankedTensorOf<[I64]>:$indices, I64Attr:$batch_dims);
  let results = (outs Dlc_AnyTensor:$output);
  let hasVerifier = 1;
}

def Dlc_TopKOp : Dlc_TensorOp<"top_k"> {
  let summary = "indices of the k largest (or smallest) elements along `axis`, best first, equal "
                "values in index order; k is the result's size along `axis`";
  let arguments = (ins RankedTensorOf<[F32, F64, I8, I16, I32, I64, UI8, UI16, UI32, UI64]>:$input,
                   I64Attr:$axis, BoolAttr:$largest);
  let results = (outs RankedTensorOf<[I64]>:$output);
  let hasVerifier = 1;
}

def Dlc_SliceOp : Dlc_TensorOp<"slice"> {
  let summary = "strided slice; per-dim start (already clamped) and step; sizes from the type";
  let arguments = (ins Dlc_AnyTensor:$input, DenseI64ArrayAttr:$starts,
                   DenseI64ArrayAttr:$steps);
  let results = (outs Dlc_AnyTensor:$output);
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------------------------===//
// Training: gradient, loss and state-update ops. Only `--train` builds contain them; the
// gradients that use them are built in dialects/Gradients.cpp.
//===----------------------------------------------------------------------------------------===//

def Dlc_UnaryGradOp : Dlc_TensorOp<"unary_grad", [Elementwise, Dlc_InPlaceInterface]> {
  let summary = "gradient of a unary op: dx = dy * f'(saved)";
  let description = [{
    `saved` is the forward result for Relu, Sigmoid, Tanh, Exp, Sqrt, Reciprocal and Tan (so
    the forward op may still run in place) and the forward input for the other kinds.
  }];
  let arguments = (ins Dlc_F32Tensor:$grad, Dlc_F32Tensor:$saved, StrAttr:$kind);
  let results = (outs Dlc_F32Tensor:$output);
  let hasVerifier = 1;
}

def Dlc_ClipGradOp : Dlc_TensorOp<"clip_grad", [Elementwise, Dlc_InPlaceInterface]> {
  let summary = "dx = dy where min <= x <= max, else 0";
  let arguments = (ins Dlc_F32Tensor:$grad, Dlc_F32Tensor:$input, F32Attr:$min, F32Attr:$max);
  let results = (outs Dlc_F32Tensor:$output);
}

def Dlc_LeakyReluGradOp : Dlc_TensorOp<"leaky_relu_grad",
    [Elementwise, Dlc_InPlaceInterface]> {
  let arguments = (ins Dlc_F32Tensor:$grad, Dlc_F32Tensor:$input, F32Attr:$alpha);
  let results = (outs Dlc_F32Tensor:$output);
}

class Dlc_ConvGradOp<string mnemonic, string summary_> : Dlc_TensorOp<mnemonic> {
  let summary = summary_;
  let results = (outs Dlc_F32Tensor:$output);
  let hasVerifier = 1;
}
def Dlc_ConvGradInputOp : Dlc_ConvGradOp<"conv_grad_input",
    "gradient of dlc.conv's input; the result type is the input's"> {
  let arguments = (ins Dlc_F32Tensor:$grad, Dlc_F32Tensor:$weight, DenseI64ArrayAttr:$strides,
                   DenseI64ArrayAttr:$pads, DenseI64ArrayAttr:$dilations, I64Attr:$group);
}
def Dlc_ConvGradWeightOp : Dlc_ConvGradOp<"conv_grad_weight",
    "gradient of dlc.conv's weight, summed over the batch; the result type is the weight's"> {
  let arguments = (ins Dlc_F32Tensor:$input, Dlc_F32Tensor:$grad, DenseI64ArrayAttr:$strides,
                   DenseI64ArrayAttr:$pads, DenseI64ArrayAttr:$dilations, I64Attr:$group);
}

def Dlc_MaxPoolGradOp : Dlc_TensorOp<"max_pool_grad"> {
  let summary = "routes each window's gradient to its (first) maximum in the input";
  let arguments = (ins Dlc_F32Tensor:$input, Dlc_F32Tensor:$grad,
                   DenseI64ArrayAttr:$kernel_shape, DenseI64ArrayAttr:$strides,
                   DenseI64ArrayAttr:$pads, DenseI64ArrayAttr:$dilations, BoolAttr:$ceil_mode);
  let results = (outs Dlc_F32Tensor:$output);
  let hasVerifier = 1;
}

def Dlc_AvgPoolGradOp : Dlc_TensorOp<"avg_pool_grad"> {
  let summary = "the adjoint of dlc.avg_pool; the result type is the pool's input type";
  let arguments = (ins Dlc_F32Tensor:$grad, DenseI64ArrayAttr:$kernel_shape,
                   DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads,
                   DenseI64ArrayAttr:$dilations, BoolAttr:$ceil_mode,
                   BoolAttr:$count_include_pad);
  let results = (outs Dlc_F32Tensor:$output);
  let hasVerifier = 1;
}

def Dlc_GlobalAvgPoolGradOp : Dlc_TensorOp<"global_avg_pool_grad"> {
  let summary = "spreads each channel's gradient evenly over the pool's input positions";
  let arguments = (ins Dlc_F32Tensor:$grad);
  let results = (outs Dlc_F32Tensor:$output);
  let hasVerifier = 1;
}

def Dlc_BroadcastOp : Dlc_TensorOp<"broadcast"> {
  let summary = "numpy-style broadcast of the input to the result's shape";
  let arguments = (ins Dlc_AnyTensor:$input);
  let results = (outs Dlc_AnyTensor:$output);
  let hasVerifier = 1;
}

def Dlc_SoftmaxGradOp : Dlc_TensorOp<"softmax_grad", [Dlc_InPlaceInterface]> {
  let summary = "gradient of dlc.softmax from its output (log-softmax with `log`)";
  let arguments = (ins Dlc_F32Tensor:$grad, Dlc_F32Tensor:$output_value, I64Attr:$axis,
                   BoolAttr:$log);
  let results = (outs Dlc_F32Tensor:$output);
  let hasVerifier = 1;
}

def Dlc_SliceGradOp : Dlc_TensorOp<"slice_grad"> {
  let summary = "zeros of the result type with `grad` written at dlc.slice's positions";
  let arguments = (ins Dlc_F32Tensor:$grad, DenseI64ArrayAttr:$starts,
                   DenseI64ArrayAttr:$steps);
  let results = (outs Dlc_F32Tensor:$output);
  let hasVerifier = 1;
}

def Dlc_GatherGradOp : Dlc_TensorOp<"gather_grad"> {
  let summary = "zeros of the result type with `grad` added at dlc.gather's indices";
  let arguments = (ins Dlc_F32Tensor:$grad, Dlc_IndexTensor:$indices, I64Attr:$axis);
  let results = (outs Dlc_F32Tensor:$output);
  let hasVerifier = 1;
}

def Dlc_NllLossOp : Dlc_TensorOp<"nll_loss"> {
  let summary = "mean negative log-likelihood of log-probabilities [N, C, d...] at int64 labels [N, d...]";
  let arguments = (ins Dlc_F32Tensor:$log_probs, RankedTensorOf<[I64]>:$labels);
  let results = (outs 0DTensorOf<[F32]>:$output);
  let hasVerifier = 1;
}

def Dlc_NllLossGradOp : Dlc_TensorOp<"nll_loss_grad"> {
  let summary = "gradient of dlc.nll_loss with respect to the log-probabilities";
  let arguments = (ins 0DTensorOf<[F32]>:$grad, RankedTensorOf<[I64]>:$labels);
  let results = (outs Dlc_F32Tensor:$output);
  let hasVerifier = 1;
}

def Dlc_DropoutOp : Dlc_TensorOp<"dropout", [Dlc_SameType]> {
  let summary = "ONNX Dropout exported in training mode: identity at inference";
  let description = [{
    A training build's step multiplies by a dlc.dropout_mask; forward() and inference builds
    pass the input through.
  }];
  let arguments = (ins Dlc_F32Tensor:$input, F32Attr:$ratio);
  let results = (outs Dlc_F32Tensor:$output);
}

def Dlc_DropoutMaskOp : Dlc_TensorOp<"dropout_mask"> {
  let summary = "0 with probability `ratio`, else 1 / (1 - ratio), fresh each training step";
  let description = [{
    Drawn from a counter-based generator keyed by (`seed`, the step number), so a step's mask
    is reproducible; each dropout of a model has its own seed.
  }];
  let arguments = (ins F32Attr:$ratio, I64Attr:$seed);
  let results = (outs Dlc_F32Tensor:$output);
  let hasVerifier = 1;
}

// Training-mode batch normalization is split so that every op has one result: the batch
// statistics (mean, 1/sqrt(var + eps), var, each [C]) are a value of their own, saved for
// the backward pass and for the running-statistics update.
def Dlc_BatchNormStatsOp : Dlc_TensorOp<"batch_norm_stats"> {
  let summary = "per-channel batch mean, inverse std and biased variance, as [3, C]";
  let arguments = (ins Dlc_F32Tensor:$input, F32Attr:$epsilon);
  let results = (outs Dlc_F32Tensor:$output);
  let hasVerifier = 1;
}

def Dlc_BatchNormApplyOp : Dlc_TensorOp<"batch_norm_apply"> {
  let summary = "normalizes with batch statistics, then scales and shifts";
  let arguments = (ins Dlc_F32Tensor:$input, Dlc_F32Tensor:$stats, Dlc_F32Tensor:$scale,
                   Dlc_F32Tensor:$bias);
  let results = (outs Dlc_F32Tensor:$output);
  let hasVerifier = 1;
}

def Dlc_BatchNormGradInputOp : Dlc_TensorOp<"batch_norm_grad_input"> {
  let summary = "gradient of dlc.batch_norm_apply's input, through the batch statistics too";
  let arguments = (ins Dlc_F32Tensor:$grad, Dlc_F32Tensor:$input, Dlc_F32Tensor:$stats,
                   Dlc_F32Tensor:$scale);
  let results = (outs Dlc_F32Tensor:$output);
  let hasVerifier = 1;
}

def Dlc_BatchNormGradParamsOp : Dlc_TensorOp<"batch_norm_grad_params"> {
  let summary = "gradients of the scale and bias of dlc.batch_norm_apply, as [2, C]";
  let arguments = (ins Dlc_F32Tensor:$grad, Dlc_F32Tensor:$input, Dlc_F32Tensor:$stats);
  let results = (outs Dlc_F32Tensor:$output);
  let hasVerifier = 1;
}

// State updates write model state (weights, optimizer moments, running statistics: function
// arguments marked `dlc.state`) in place and have no results. The plan verifier checks that
// nothing reads the written state afterwards.
def Dlc_StateUpdateTrait : NativeOpTrait<"StateUpdateTrait"> { let cppNamespace = "::dlc"; }

def Dlc_BatchNormRunningUpdateOp : Dlc_Op<"batch_norm_running_update",
    [Dlc_StateUpdateTrait, Dlc_TensorSizeLimit]> {
  let summary = "running = (1 - momentum) * running + momentum * batch (unbiased variance)";
  let arguments = (ins Arg<Dlc_F32Tensor, "", [MemWrite]>:$running_mean,
                   Arg<Dlc_F32Tensor, "", [MemWrite]>:$running_var, Dlc_F32Tensor:$stats,
                   F32Attr:$momentum, I64Attr:$count);
  let assemblyFormat = "operands attr-dict `:` type(operands)";
}

def Dlc_SgdUpdateOp : Dlc_Op<"sgd_update", [Dlc_StateUpdateTrait, Dlc_TensorSizeLimit]> {
  let summary = "torch.optim.SGD step on one weight; `hyper` = [lr, first step, ...]";
  let arguments = (ins Arg<Dlc_F32Tensor, "", [MemWrite]>:$weight, Dlc_F32Tensor:$grad,
                   Dlc_F32Tensor:$hyper,
                   Arg<Optional<Dlc_F32Tensor>, "", [MemWrite]>:$momentum_buffer,
                   F32Attr:$momentum, F32Attr:$weight_decay, BoolAttr:$nesterov);
  let assemblyFormat = "operands attr-dict `:` type(operands)";
  let hasVerifier = 1;
}

def Dlc_AdamUpdateOp : Dlc_Op<"adam_update", [Dlc_StateUpdateTrait, Dlc_TensorSizeLimit]> {
  let summary = "torch.optim.Adam (AdamW with `decoupled`) step on one weight";
  let description = [{ `hyper` = [lr, first step, 1 - beta1^t, 1 - beta2^t]. }];
  let arguments = (ins Arg<Dlc_F32Tensor, "", [MemWrite]>:$weight, Dlc_F32Tensor:$grad,
                   Arg<Dlc_F32Tensor, "", [MemWrite]>:$exp_avg,
                   Arg<Dlc_F32Tensor, "", [MemWrite]>:$exp_avg_sq, Dlc_F32Tensor:$hyper,
                   F32Attr:$beta1, F32Attr:$beta2, F32Attr:$eps, F32Attr:$weight_decay,
                   BoolAttr:$decoupled);
  let assemblyFormat = "operands attr-dict `:` type(operands)";
  let hasVerifier = 1;
}

#endif
