#!/usr/bin/env python3
"""Writes dlc's own node tests into OUT/dlc-cases, in the backend tests' layout (model.onnx and
test_data_set_0 per test): attribute modes and input forms the ONNX test sets leave out, with
expected outputs from onnx's reference evaluator (onnx.reference), not from dlc. Run them with
run_node_tests.py --suite dlc-cases like the other suites.

    build/onnx-venv/bin/python tests/onnx/dlc_cases.py OUT
"""
import argparse
import os
import shutil
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto
from onnx.reference import ReferenceEvaluator

OPSET = 21


def tfidf_cases(rng):
    # Pool: unigrams 2 3 5, bigrams (2 3) (5 7) (3 3); the bigram (2 3) given twice keeps
    # its later slot, as the reference's trie does.
    pool = dict(ngram_counts=[0, 3], ngram_indexes=[0, 1, 2, 3, 4, 5, 6],
                pool_int64s=[2, 3, 5, 2, 3, 5, 7, 3, 3, 2, 3])
    weights = [0.5, 2.0, 1.5, 3.0, 0.25, 4.0, 1.25]
    tokens = rng.integers(1, 8, size=(3, 12)).astype(np.int64)
    for mode in ("TF", "IDF", "TFIDF"):
        for min_len, max_len, skip in ((1, 2, 2), (2, 2, 0), (1, 1, 3)):
            name = "tfidf_%s_%d%d_skip%d" % (mode.lower(), min_len, max_len, skip)
            attrs = dict(mode=mode, min_gram_length=min_len, max_gram_length=max_len,
                         max_skip_count=skip, **pool)
            yield name + "_weights", "TfIdfVectorizer", dict(attrs, weights=weights), [tokens]
            yield name, "TfIdfVectorizer", attrs, [tokens]
    yield "tfidf_int32_row", "TfIdfVectorizer", dict(
        mode="TFIDF", min_gram_length=1, max_gram_length=2, max_skip_count=1, **pool), [
        np.array([2, 3, 3, 5, 7, 2, 3], np.int32)]
    # A pool entry beyond int32 never matches an int32 token; its slot stays 0.
    yield "tfidf_int32_pool_beyond_int32", "TfIdfVectorizer", dict(
        mode="TF", min_gram_length=1, max_gram_length=2, max_skip_count=0,
        ngram_counts=[0, 2], ngram_indexes=[0, 1, 2], pool_int64s=[3, 2 ** 40, 3, 5]), [
        np.array([[3, 5, 3, 0], [5, 3, 5, 3]], np.int32)]


def trilu_cases(rng):
    x = rng.standard_normal((2, 4, 6)).astype(np.float32)
    for upper in (0, 1):
        for k in (-5, -1, 0, 2, 7):
            yield "trilu_runtime_k_upper%d_k%s" % (upper, str(k).replace("-", "neg")), "Trilu", dict(upper=upper), [
                x, np.array(k, np.int64)]


def integer_sign_cases(rng):
    # Neg and Abs of integers (shape arithmetic such as x[..., :-n] computes them); numpy wraps
    # -MIN to MIN.
    for dtype in (np.int8, np.int16, np.int32, np.int64):
        info = np.iinfo(dtype)
        x = np.concatenate([rng.integers(-100, 100, size=6),
                            [info.min, info.max, 0, -1]]).astype(dtype).reshape(2, 5)
        name = np.dtype(dtype).name
        yield "neg_" + name, "Neg", {}, [x]
        yield "abs_" + name, "Abs", {}, [x]
    yield "abs_uint16", "Abs", {}, [np.array([0, 1, 65535, 300], np.uint16)]


def nonzero_cases(rng):
    # NonZero's output size depends on its input's values: dlc takes it from a constant.
    x = rng.integers(-1, 2, size=(3, 4, 2)).astype(np.int32)
    yield "nonzero_constant_int32_3d", "NonZero", {}, [], [x]
    yield "nonzero_constant_bool", "NonZero", {}, [], [np.array([[True, False], [True, True]])]
    yield "nonzero_constant_all_zero", "NonZero", {}, [], [np.zeros((2, 3), np.int64)]


def nms_cases(rng):
    # NonMaxSuppression's output size depends on the boxes' values: dlc folds it for constant
    # ones. Random boxes (corners in either order), scores with ties, two batches and classes.
    corners = rng.uniform(0, 10, size=(2, 12, 4)).astype(np.float32)
    scores = rng.choice(np.float32([0.1, 0.3, 0.5, 0.5, 0.7, 0.9]), size=(2, 3, 12))
    limits = [np.array([3], np.int64), np.array([0.3], np.float32), np.array([0.2], np.float32)]
    yield "nms_constant_corners", "NonMaxSuppression", {}, [], [corners, scores] + limits
    centers = np.concatenate([corners[..., :2], np.abs(corners[..., 2:]) / 3], axis=-1)
    yield "nms_constant_center_point", "NonMaxSuppression", dict(center_point_box=1), [], [
        centers, scores] + limits
    yield "nms_constant_no_score_threshold", "NonMaxSuppression", {}, [], [
        corners, scores, np.array([12], np.int64), np.array([0.5], np.float32)]


def matmul_cases(rng):
    # Stacks of matrices times one matrix become one taller product (a Gemm); the other forms
    # stay batched. B both as a graph input and as an initializer (packed at compile time).
    f = lambda *shape: rng.standard_normal(shape).astype(np.float32)
    for name, a, b in (("stack3d", f(5, 1, 7), f(7, 9)), ("stack4d", f(2, 3, 4, 6), f(6, 5)),
                       ("vector_times_matrix", f(6), f(6, 4)),
                       ("matrix_times_vector", f(3, 6), f(6)),
                       ("broadcast_b", f(3, 4, 6), f(2, 3, 6, 5)[:1])):
        yield "matmul_" + name, "MatMul", {}, [a, b]
        yield "matmul_%s_constant_b" % name, "MatMul", {}, [a], [b]
    i = lambda *shape: rng.integers(-50, 50, size=shape).astype(np.int32)
    yield "matmul_stack3d_int32", "MatMul", {}, [i(4, 2, 3), i(3, 5)]


def constant(name, array):
    return helper.make_node("Constant", [], [name], name=name,
                            value=numpy_helper.from_array(array, name))


def exported_pattern_cases(rng):
    """Multi-node patterns exporters emit, whose constant parts dlc evaluates at compile time:
    (name, nodes, graph inputs as {name: array})."""
    # F.pad as torch.onnx exports it (opset >= 11): the pads, given last dim first, are
    # completed with zeros, paired, reversed along dims by a Slice with step -1 over axis 0 of
    # a 2-D tensor, transposed to begins-then-ends, flattened and cast.
    x = rng.standard_normal((1, 3, 4, 5)).astype(np.float32)
    i64 = lambda *v: np.array(v, np.int64)
    pads = [constant("given", i64(1, 2, 0, 3)), constant("rest", i64(4)),
            helper.make_node("ConstantOfShape", ["rest"], ["zeros"], name="zeros",
                             value=numpy_helper.from_array(i64(0))),
            helper.make_node("Concat", ["given", "zeros"], ["flat_pads"], name="concat", axis=0),
            constant("pairs", i64(-1, 2)),
            helper.make_node("Reshape", ["flat_pads", "pairs"], ["paired"], name="pair"),
            constant("starts", i64(-1)), constant("ends", i64(-(2 ** 63) + 1)),
            constant("axes", i64(0)), constant("steps", i64(-1)),
            helper.make_node("Slice", ["paired", "starts", "ends", "axes", "steps"],
                             ["reversed"], name="reverse"),
            helper.make_node("Transpose", ["reversed"], ["sides"], name="sides", perm=[1, 0]),
            constant("flat", i64(-1)),
            helper.make_node("Reshape", ["sides", "flat"], ["onnx_pads"], name="flatten"),
            helper.make_node("Cast", ["onnx_pads"], ["pads"], name="cast", to=TensorProto.INT64)]
    yield "pattern_torch_f_pad", pads + [
        helper.make_node("Pad", ["x0", "pads"], ["y"], name="pad", mode="constant")], [x]
    yield "pattern_torch_f_pad_reflect", pads + [
        helper.make_node("Pad", ["x0", "pads"], ["y"], name="pad", mode="reflect")], [x]
    # F.interpolate(scale_factor=2) as older exporters write it: the output size computed in
    # float from the input's shape (Cast, Mul, Floor, Cast back), then Resize with sizes.
    x = rng.standard_normal((1, 2, 3, 5)).astype(np.float32)
    yield "pattern_interpolate_scale_in_float", [
        helper.make_node("Shape", ["x0"], ["shape"], name="shape"),
        constant("hw_start", i64(2)), constant("hw_end", i64(4)),
        constant("nc_start", i64(0)), constant("nc_end", i64(2)),
        helper.make_node("Slice", ["shape", "hw_start", "hw_end"], ["hw"], name="hw"),
        helper.make_node("Slice", ["shape", "nc_start", "nc_end"], ["nc"], name="nc"),
        helper.make_node("Cast", ["hw"], ["hw_float"], name="to_float", to=TensorProto.FLOAT),
        constant("factor", np.array([2.0], np.float32)),
        helper.make_node("Mul", ["hw_float", "factor"], ["scaled"], name="scale"),
        helper.make_node("Floor", ["scaled"], ["floored"], name="floor"),
        helper.make_node("Cast", ["floored"], ["hw_out"], name="to_int", to=TensorProto.INT64),
        helper.make_node("Concat", ["nc", "hw_out"], ["sizes"], name="sizes", axis=0),
        helper.make_node("Resize", ["x0", "", "", "sizes"], ["y"], name="resize",
                         mode="nearest")], [x]


def silu_cases(rng):
    """SiLU as exporters write it (Sigmoid and Mul) after a Conv and after a Gemm, which dlc
    runs as the producer's epilogue: (name, nodes, graph inputs)."""
    f = lambda *shape: rng.standard_normal(shape).astype(np.float32)
    yield "pattern_conv_silu", [
        helper.make_node("Conv", ["x0", "x1", "x2"], ["c"], name="conv", pads=[1, 1, 1, 1]),
        helper.make_node("Sigmoid", ["c"], ["g"], name="gate"),
        helper.make_node("Mul", ["c", "g"], ["y"], name="silu")], [f(2, 3, 6, 5), f(4, 3, 3, 3), f(4)]
    # Without a bias no channel index is read: the CUDA epilogue kernel after cuDNN must not
    # declare one (-Werror), as in ONNX 1.23's causal_conv_with_state_silu.
    yield "pattern_conv1d_nobias_silu", [
        helper.make_node("Conv", ["x0", "x1"], ["c"], name="conv", pads=[1, 1]),
        helper.make_node("Sigmoid", ["c"], ["g"], name="gate"),
        helper.make_node("Mul", ["c", "g"], ["y"], name="silu")], [f(1, 4, 8), f(4, 4, 3)]
    yield "pattern_gemm_silu", [
        helper.make_node("Gemm", ["x0", "x1", "x2"], ["c"], name="gemm", transB=1),
        helper.make_node("Sigmoid", ["c"], ["g"], name="gate"),
        helper.make_node("Mul", ["g", "c"], ["y"], name="silu")], [f(5, 7), f(9, 7), f(9)]


def gemm_bias_cases(rng):
    """Gemm with constant weights (packed at compile time) and a bias C, which the packed product
    adds as it finishes each tile when beta is 1 and C holds one value per column or per row;
    other betas and full C take the pass that writes C first: (name, nodes, graph inputs). K 300
    spans two k blocks."""
    f = lambda *shape: rng.standard_normal(shape).astype(np.float32)
    x = f(13, 300)
    for name, c, attrs in (("column_bias", f(20), dict(transB=1)),
                           ("row_of_column_bias", f(1, 20), dict(alpha=0.5)),
                           ("row_bias", f(13, 1), dict(transB=1)),
                           ("column_bias_beta_half", f(20), dict(beta=0.5)),
                           ("full_c", f(13, 20), {})):
        w = f(20, 300) if attrs.get("transB") else f(300, 20)
        yield "pattern_gemm_constant_b_" + name, [
            constant("w", w), constant("c", c),
            helper.make_node("Gemm", ["x0", "w", "c"], ["y"], name="gemm", **attrs)], [x]


def block_cases(rng):
    """Blocks of CNN families with constant weights, as shipped models have them, so that the
    CPU target's layout and kernel choices apply (channels-last groups through
    squeeze-and-excitation, the gate fused into the next pointwise conv, grouped convs over
    padded planes): (name, nodes, graph inputs)."""
    f = lambda *shape: (rng.standard_normal(shape) * 0.3).astype(np.float32)
    conv = lambda x, w, b, y, **attrs: [constant(y + "_w", w), constant(y + "_b", b),
                                        helper.make_node("Conv", [x, y + "_w", y + "_b"], [y],
                                                         name=y, **attrs)]
    silu = lambda x, y: [helper.make_node("Sigmoid", [x], [y + "_g"], name=y + "_g"),
                         helper.make_node("Mul", [x, y + "_g"], [y], name=y)]

    def squeeze_excitation(x, channels, reduced, y):
        return ([helper.make_node("GlobalAveragePool", [x], [y + "_pool"], name=y + "_pool")] +
                conv(y + "_pool", f(reduced, channels, 1, 1), f(reduced), y + "_fc1") +
                silu(y + "_fc1", y + "_act") +
                conv(y + "_act", f(channels, reduced, 1, 1), f(channels), y + "_fc2") +
                [helper.make_node("Sigmoid", [y + "_fc2"], [y + "_gate"], name=y + "_gate"),
                 helper.make_node("Mul", [x, y + "_gate"], [y], name=y)])

    # EfficientNet's MBConv: expand, depthwise (5x5, stride 1), squeeze-and-excitation,
    # project, residual; two images.
    yield "block_mbconv_squeeze_excitation", (
        conv("x0", f(32, 8, 1, 1), f(32), "expand") + silu("expand", "expand_act") +
        conv("expand_act", f(32, 1, 5, 5), f(32), "dw", group=32, pads=[2, 2, 2, 2]) +
        silu("dw", "dw_act") + squeeze_excitation("dw_act", 32, 4, "se") +
        conv("se", f(8, 32, 1, 1), f(8), "project") +
        [helper.make_node("Add", ["project", "x0"], ["y"], name="residual")]), [f(2, 8, 9, 11)]
    # RegNetY's block: grouped 3x3 convs of 16 channels per group, stride 2 then 1, with
    # squeeze-and-excitation between them, then a pointwise conv.
    yield "block_grouped_squeeze_excitation", (
        conv("x0", f(48, 16, 3, 3), f(48), "g1", group=3, strides=[2, 2], pads=[1, 1, 1, 1]) +
        [helper.make_node("Relu", ["g1"], ["g1_act"], name="g1_act")] +
        squeeze_excitation("g1_act", 48, 8, "se") +
        conv("se", f(48, 16, 3, 3), f(48), "g2", group=3, pads=[1, 1, 1, 1]) +
        conv("g2", f(24, 48, 1, 1), f(24), "y")), [f(1, 48, 15, 13)]

    # YOLOv8's C2f: a conv's channels split in halves (each half one run of its bytes, read
    # in place), the second half through two bottlenecks whose residual adds may not write
    # over it, all parts concatenated into the last conv (the split conv computed in its
    # place in the concat); and a Split of the graph input, a view of the caller's memory.
    split = lambda x, ys: [constant(ys[0] + "_sizes", np.array([8, 8], np.int64)),
                           helper.make_node("Split", [x, ys[0] + "_sizes"], ys, name=ys[0],
                                            axis=1)]
    bottleneck = lambda x, y: (conv(x, f(8, 8, 3, 3), f(8), y + "_a", pads=[1, 1, 1, 1]) +
                               silu(y + "_a", y + "_a_act") +
                               conv(y + "_a_act", f(8, 8, 3, 3), f(8), y + "_b", pads=[1, 1, 1, 1]) +
                               [helper.make_node("Add", [x, y + "_b"], [y], name=y)])
    yield "block_c2f_split", (
        conv("x0", f(16, 16, 1, 1), f(16), "cv1") + silu("cv1", "cv1_act") +
        split("cv1_act", ["left", "right"]) + bottleneck("right", "m1") + bottleneck("m1", "m2") +
        split("x0", ["in_left", "in_right"]) +
        [helper.make_node("Concat", ["left", "right", "m1", "m2"], ["cat"], name="cat",
                          axis=1)] +
        conv("cat", f(8, 32, 1, 1), f(8), "cv2") +
        [helper.make_node("Concat", ["cv2", "in_right"], ["y"], name="y", axis=1)]), [
            f(1, 16, 8, 8)]
    # One constant read by convolutions of different shapes (a detector head shared by its
    # feature maps): the 32x32 map runs over padded planes, the 3x3 one by im2col, each
    # reading the weights packed for its own kernel.
    yield "block_shared_weights_two_maps", (
        [constant("shared_w", f(16, 16, 3, 3)), constant("shared_b", f(16)),
         constant("flat", np.array([1, -1], np.int64))] +
        [node for x, y in (("x0", "big"), ("x1", "small")) for node in (
            helper.make_node("Conv", [x, "shared_w", "shared_b"], [y], name=y,
                             pads=[1, 1, 1, 1]),
            helper.make_node("Reshape", [y, "flat"], [y + "_flat"], name=y + "_flat"))] +
        [helper.make_node("Concat", ["big_flat", "small_flat"], ["y"], name="y", axis=1)]), [
            f(1, 16, 32, 32), f(1, 16, 3, 3)]

    def batch_norm(x, channels, y):
        params = [constant(y + "_scale", f(channels) + 1), constant(y + "_shift", f(channels)),
                  constant(y + "_mean", f(channels)),
                  constant(y + "_var", np.abs(f(channels)) + np.float32(0.5))]
        return params + [helper.make_node(
            "BatchNormalization", [x] + [y + s for s in ("_scale", "_shift", "_mean", "_var")],
            [y], name=y, epsilon=1e-3)]

    # A DB text detector's head and a UNet decoder's upsampling: ConvTranspose 2x2 stride 2
    # (with a bias, then without), batch norm and Relu, which dlc folds into the transposed
    # convolution's weights and one bias Add (grouped ones in the lit test: onnx's reference
    # fails on them).
    yield "block_upsample_batch_norm", (
        [constant("up1_w", f(12, 6, 2, 2)), constant("up1_b", f(6)),
         helper.make_node("ConvTranspose", ["x0", "up1_w", "up1_b"], ["up1"], name="up1",
                          strides=[2, 2])] +
        batch_norm("up1", 6, "bn1") +
        [helper.make_node("Relu", ["bn1"], ["act1"], name="act1"),
         constant("up2_w", f(6, 3, 2, 2)),
         helper.make_node("ConvTranspose", ["act1", "up2_w"], ["up2"], name="up2",
                          strides=[2, 2])] +
        batch_norm("up2", 3, "y")), [f(2, 12, 5, 7)]


def attention_cases(rng):
    """Attention as exporters write it, which the CPU target computes as one op
    (dlc-fuse-attention): (name, nodes, graph inputs)."""
    f = lambda *shape: rng.standard_normal(shape).astype(np.float32)

    def attention(scale_node, mask, where=None):
        nodes = [helper.make_node("Transpose", ["x1"], ["kt"], name="kt", perm=[0, 1, 3, 2]),
                 helper.make_node("MatMul", ["x0", "kt"], ["scores"], name="scores")]
        last = "scores"
        if scale_node:
            nodes += [constant("scale", np.array(scale_node[1], np.float32)),
                      helper.make_node(scale_node[0], ["scores", "scale"], ["scaled"],
                                       name="scaled")]
            last = "scaled"
        if where is not None:
            nodes += [constant("keep", where),
                      constant("fill", np.array(np.finfo(np.float32).min, np.float32)),
                      helper.make_node("Where", ["keep", last, "fill"], ["kept"], name="kept")]
            last = "kept"
        if mask:
            nodes.append(helper.make_node("Add", [last, "x3"], ["masked"], name="masked"))
            last = "masked"
        return nodes + [helper.make_node("Softmax", [last], ["probs"], name="probs", axis=-1),
                        helper.make_node("MatMul", ["probs", "x2"], ["y"], name="y")]

    # Hugging Face's BERT: scores / sqrt(depth) + a padding mask of 0 and finfo(float32).min;
    # the second sequence's mask hides every key of its rows' last 5 (and the whole of a
    # third sequence: uniform weights, as the unfused graph gives).
    heads, queries, keys, depth = 4, 37, 37, 16
    mask = np.zeros((3, 1, 1, keys), np.float32)
    mask[1, ..., -5:] = np.finfo(np.float32).min
    mask[2] = np.finfo(np.float32).min
    yield "attention_bert_padding_mask", attention(("Div", 4.0), True), [
        f(3, heads, queries, depth), f(3, heads, keys, depth), f(3, heads, keys, depth), mask]
    # A scale by Mul and a causal mask per query row; 200 queries over 700 keys take two blocks
    # of rows in the kernel's workspace.
    queries, keys = 200, 700
    causal = np.where(np.arange(keys)[None, :] <= np.arange(queries)[:, None] + 500, 0.0,
                      np.finfo(np.float32).min).astype(np.float32)[None, None]
    yield "attention_causal_mask_blocks", attention(("Mul", 0.35), True), [
        f(1, 2, queries, 8), f(1, 2, keys, 8), f(1, 2, keys, 8), causal]
    # GPT-2's causal mask: Where(a constant lower triangle, scores, finfo(float32).min).
    queries = keys = 130
    lower = (np.arange(keys)[None, :] <= np.arange(queries)[:, None])[None, None]
    yield "attention_gpt2_causal_where", attention(("Div", 4.0), False, lower), [
        f(1, 3, queries, 16), f(1, 3, keys, 16), f(1, 3, keys, 16)]
    # No scale and no mask (the scale folded into the query, as torch's exporter writes it).
    yield "attention_plain", attention(None, False), [f(2, 3, 10, 8), f(2, 3, 12, 8),
                                                      f(2, 3, 12, 8)]

    i64 = lambda *values: np.array(values, np.int64)
    node = helper.make_node

    def split_heads(x, name, perm, heads, depth):
        return [constant(name + "_shape", i64(1, -1, heads, depth)),
                node("Reshape", [x, name + "_shape"], [name + "_heads"], name=name + "_heads"),
                node("Transpose", [name + "_heads"], [name], name=name, perm=perm)]

    def merged_heads(heads, depth):
        return [node("Transpose", ["weighted"], ["merged"], name="merged", perm=[0, 2, 1, 3]),
                constant("merged_shape", i64(1, -1, heads * depth)),
                node("Reshape", ["merged", "merged_shape"], ["y"], name="y")]

    # GPT-2 and timm: query, keys and values as slices of one projection, split into heads
    # (the keys transposed by (0, 2, 3, 1)), the query scaled by a power of 2 before the
    # product, a padding mask; the heads merged back: the fused op reads and writes in place.
    heads, depth, seq = 3, 8, 20
    slices = []
    for i, part in enumerate(["qs", "ks", "vs"]):
        slices += [constant(part + "_start", i64(i * heads * depth)),
                   constant(part + "_end", i64((i + 1) * heads * depth)),
                   constant(part + "_axis", i64(2)),
                   node("Slice", ["x0", part + "_start", part + "_end", part + "_axis"], [part],
                        name=part)]
    padding = np.zeros((1, 1, 1, seq), np.float32)
    padding[..., -3:] = np.finfo(np.float32).min
    yield "attention_fused_projection_in_place", slices + \
        split_heads("qs", "qh", [0, 2, 1, 3], heads, depth) + \
        [constant("half", np.array(0.5, np.float32)),
         node("Mul", ["qh", "half"], ["q"], name="q")] + \
        split_heads("ks", "kt", [0, 2, 3, 1], heads, depth) + \
        split_heads("vs", "v", [0, 2, 1, 3], heads, depth) + \
        [node("MatMul", ["q", "kt"], ["scores"], name="scores"),
         constant("scale", np.array(4.0, np.float32)),
         node("Div", ["scores", "scale"], ["scaled"], name="scaled"),
         node("Add", ["scaled", "x1"], ["masked"], name="masked"),
         node("Softmax", ["masked"], ["probs"], name="probs", axis=-1),
         node("MatMul", ["probs", "v"], ["weighted"], name="weighted")] + \
        merged_heads(heads, depth), [f(1, seq, 3 * heads * depth), padding]
    # Whisper and BERT: Q, K and V projected separately from one input by constant weights
    # (MatMul, then the Add of a bias; Whisper's K has none and its query is scaled after the
    # bias): one product by the weights side by side (dlc-merge-linears), the biases its C,
    # each head read in place from its slice.
    heads, depth, seq = 2, 8, 11
    hidden = heads * depth
    projections = []
    for name, has_bias in (("qp", True), ("kp", False), ("vp", True)):
        product = name + "_product" if has_bias else name
        projections += [constant(name + "_w", f(hidden, hidden) / 4),
                        node("MatMul", ["x0", name + "_w"], [product], name=product)]
        if has_bias:
            projections += [constant(name + "_b", f(hidden)),
                            node("Add", [product, name + "_b"], [name], name=name)]
    yield "attention_separate_projections_with_biases", projections + \
        [constant("q_scale", np.array(0.25, np.float32)),
         node("Mul", ["qp", "q_scale"], ["qs"], name="qs")] + \
        split_heads("qs", "q", [0, 2, 1, 3], heads, depth) + \
        split_heads("kp", "kt", [0, 2, 3, 1], heads, depth) + \
        split_heads("vp", "v", [0, 2, 1, 3], heads, depth) + \
        [node("MatMul", ["q", "kt"], ["scores"], name="scores"),
         node("Softmax", ["scores"], ["probs"], name="probs", axis=-1),
         node("MatMul", ["probs", "v"], ["weighted"], name="weighted")] + \
        merged_heads(heads, depth), [f(1, seq, hidden)]
    # LLaMA's grouped-query attention: 4 query heads over 2 key/value heads, repeated by
    # Unsqueeze, Expand and Reshape; a causal mask; the heads merged back.
    kv_heads, heads, depth, seq = 2, 4, 8, 9
    repeat = []
    for x, name in (("x1", "kr"), ("x2", "v")):
        repeat += [constant(name + "_axes", i64(2)),
                   node("Unsqueeze", [x, name + "_axes"], [name + "_1"], name=name + "_1"),
                   constant(name + "_expand", i64(1, kv_heads, heads // kv_heads, seq, depth)),
                   node("Expand", [name + "_1", name + "_expand"], [name + "_2"],
                        name=name + "_2"),
                   constant(name + "_shape", i64(1, heads, seq, depth)),
                   node("Reshape", [name + "_2", name + "_shape"], [name], name=name)]
    causal = np.where(np.arange(seq)[None, :] <= np.arange(seq)[:, None], 0.0,
                      np.finfo(np.float32).min).astype(np.float32)[None, None]
    yield "attention_grouped_query_in_place", repeat + \
        [node("Transpose", ["kr"], ["kt"], name="kt", perm=[0, 1, 3, 2]),
         node("MatMul", ["x0", "kt"], ["scores"], name="scores"),
         constant("scale", np.array(np.sqrt(depth), np.float32)),
         node("Div", ["scores", "scale"], ["scaled"], name="scaled"),
         constant("causal", causal),
         node("Add", ["scaled", "causal"], ["masked"], name="masked"),
         node("Softmax", ["masked"], ["probs"], name="probs", axis=-1),
         node("MatMul", ["probs", "v"], ["weighted"], name="weighted")] + \
        merged_heads(heads, depth), [f(1, heads, seq, depth), f(1, kv_heads, seq, depth),
                                     f(1, kv_heads, seq, depth)]


def rotary_cases(rng):
    """Rotary position embedding as Hugging Face's LLaMA writes it, which the CPU target
    computes as one op (dlc-fuse-rotary): (name, nodes, graph inputs)."""
    f = lambda *shape: rng.standard_normal(shape).astype(np.float32)
    i64 = lambda *values: np.array(values, np.int64)
    node = helper.make_node
    heads, seq, depth = 3, 7, 8

    def rotary(x, cos, sin):
        half = depth // 2
        return [constant("lo_start", i64(0)), constant("half", i64(half)),
                constant("end", i64(depth)), constant("last", i64(-1)),
                node("Slice", [x, "lo_start", "half", "last"], ["lo"], name="lo"),
                node("Slice", [x, "half", "end", "last"], ["hi"], name="hi"),
                node("Neg", ["hi"], ["neg"], name="neg"),
                node("Concat", ["neg", "lo"], ["rotated"], name="rotated", axis=-1),
                node("Mul", [x, cos], ["x_cos"], name="x_cos"),
                node("Mul", ["rotated", sin], ["rotated_sin"], name="rotated_sin"),
                node("Add", ["x_cos", "rotated_sin"], ["y"], name="y")]

    # The heads split from a [1, S, heads x D] projection (the transpose becomes the op's
    # read order), cos and sin [1, 1, S, D] graph inputs as position ids make them.
    yield "rotary_split_heads", [
        constant("heads_shape", i64(1, seq, heads, depth)),
        node("Reshape", ["x0", "heads_shape"], ["heads"], name="heads"),
        node("Transpose", ["heads"], ["x"], name="x", perm=[0, 2, 1, 3])] + \
        rotary("x", "x1", "x2"), [f(1, seq, heads * depth), f(1, 1, seq, depth),
                                  f(1, 1, seq, depth)]
    # Constant tables broadcast over the heads, as a fixed sequence length folds them.
    angles = np.arange(seq)[:, None] * (10000.0 ** (-np.arange(depth // 2) * 2 / depth))
    table = np.concatenate([angles, angles], axis=-1).astype(np.float32)
    yield "rotary_constant_tables", [
        constant("cos", np.cos(table)[None, None]), constant("sin", np.sin(table)[None, None])] + \
        rotary("x0", "cos", "sin"), [f(2, heads, seq, depth)]


def make_graph_model(nodes, inputs):
    """A model of `nodes` reading graph inputs x0, x1, ... and writing y."""
    names = ["x%d" % i for i in range(len(inputs))]
    graph_inputs = [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype),
                                                  a.shape) for n, a in zip(names, inputs)]
    graph = helper.make_graph(nodes, "case", graph_inputs,
                              [helper.make_empty_tensor_value_info("y")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    (y,) = ReferenceEvaluator(model).run(None, dict(zip(names, inputs)))
    model.graph.output[0].CopyFrom(helper.make_tensor_value_info(
        "y", helper.np_dtype_to_tensor_dtype(y.dtype), y.shape))
    return model, y


def make_model(op, attrs, inputs, constants=()):
    """A one-node model: `inputs` are graph inputs, `constants` initializers (after them)."""
    names = ["x%d" % i for i in range(len(inputs))]
    constant_names = ["c%d" % i for i in range(len(constants))]
    graph_inputs = [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype),
                                                  a.shape) for n, a in zip(names, inputs)]
    initializers = [numpy_helper.from_array(a, n) for n, a in zip(constant_names, constants)]

    def model_with(node_attrs):
        node = helper.make_node(op, names + constant_names, ["y"], name="node", **node_attrs)
        graph = helper.make_graph([node], "case", graph_inputs,
                                  [helper.make_empty_tensor_value_info("y")], initializers)
        return helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])

    model, reference = model_with(attrs), model_with(attrs)
    if op == "TfIdfVectorizer" and attrs["mode"] != "TF" and "weights" not in attrs:
        # The reference fails on IDF/TFIDF without weights, which by the spec mean all ones.
        reference = model_with(dict(attrs, weights=[1.0] * len(attrs["ngram_indexes"])))
    (y,) = ReferenceEvaluator(reference).run(None, dict(zip(names, inputs)))
    graph = model.graph
    graph.output[0].CopyFrom(helper.make_tensor_value_info(
        "y", helper.np_dtype_to_tensor_dtype(y.dtype), y.shape))
    return model, y


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("out")
    out = os.path.join(p.parse_args().out, "dlc-cases")
    shutil.rmtree(out, ignore_errors=True)
    rng = np.random.default_rng(7)
    count = 0

    def one_node_cases():
        for cases in (tfidf_cases, trilu_cases, integer_sign_cases, nonzero_cases, nms_cases,
                      matmul_cases):
            for name, op, attrs, inputs, *constants in cases(rng):
                yield (name, inputs) + make_model(op, attrs, inputs, *constants)

    def pattern_cases():
        for cases in (exported_pattern_cases, silu_cases, gemm_bias_cases, block_cases,
                      attention_cases, rotary_cases):
            for name, nodes, inputs in cases(rng):
                yield (name, inputs) + make_graph_model(nodes, inputs)

    for cases in (one_node_cases, pattern_cases):
        for name, inputs, model, y in cases():
            data = os.path.join(out, "test_" + name, "test_data_set_0")
            os.makedirs(data)
            onnx.save(model, os.path.join(out, "test_" + name, "model.onnx"))
            for i, a in enumerate(inputs):
                onnx.save_tensor(numpy_helper.from_array(a), os.path.join(data, "input_%d.pb" % i))
            onnx.save_tensor(numpy_helper.from_array(y), os.path.join(data, "output_0.pb"))
            count += 1
    print("wrote %d dlc cases to %s" % (count, out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
