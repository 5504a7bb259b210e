#!/usr/bin/python3
"""Hostile models: ONNX files that are malformed, inconsistent or absurd, built here in Python
(never read from a fuzzer corpus or from files in the repository).

For every bad model, `dlc compile MODEL -o OUT` must exit with status 1 (a negative status means
a signal: it is reported as a CRASH), print only lines of the form `dlc: error: MODEL: ...` that
contain the case's expected substrings, and leave no `-o` directory behind, not even an empty
one; `dlc inspect MODEL` must exit 0 or 1 without a signal. The crash and size cases are also
compiled with `--emit staticlib`. Every call has a timeout; a timeout is a failure.

Covered: the graph's structure (undefined inputs, cycles, nodes out of order, names produced
twice or shadowing inputs and initializers, duplicate declarations, undefined graph outputs, an
empty graph), tensor data (raw_data or typed data shorter than the dims, a billion floats with
no data), attributes (wrong types, zero or negative strides, dilations, kernels, pads, group, a
window larger than its input), sizes that overflow (dims, element counts, an intermediate over
2^40 bytes), external data (paths leaving the model's folder by `..`, an absolute path or a
symlink; a missing file; offsets and lengths past the end; too few bytes), opsets (too new,
zero, no import at all) and Gather indices out of range, at compile time for constant indices
and at run time for input indices, and SequenceMap bodies that do not fit their inputs.

Four models must work (run and compared with numpy): weights in external data in the model's
folder and in a subfolder, Slices with steps beyond int32, and a Gather whose valid negative
index is honoured.

`--list` names the cases, `-k PATTERN` runs only those whose name the regular expression
PATTERN matches (tests/testlib/cases.py).
"""
import argparse
import os
import shutil
import signal
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "testlib"))
from cases import Cases  # noqa: E402  (tests/testlib/cases.py)

F, I64 = TensorProto.FLOAT, TensorProto.INT64
TIMEOUT = 60  # seconds, every compile and inspect
RUN_TIMEOUT = 300  # `dlc run` also builds the runtime and a runner with the C++ compiler
failures, passes, crashes = [], [], []


def check(condition, what, detail=""):
    print(("ok   " if condition else "FAIL ") + what + ("" if condition or not detail
                                                       else " -- " + detail))
    (passes if condition else failures).append(what)


def run(args, timeout=TIMEOUT, env=None):
    """The finished process, or None when it ran past the timeout."""
    try:
        return subprocess.run(args, capture_output=True, text=True, errors="replace",
                              timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return None


def outcome(r, label, timeout=TIMEOUT):
    """How a process ended, in words; records crashes for the summary."""
    if r is None:
        return "timed out after %d s" % timeout
    if r.returncode < 0:
        try:
            sig = signal.Signals(-r.returncode).name
        except ValueError:
            sig = "signal %d" % -r.returncode
        crashes.append("%s (%s)" % (label, sig))
        return "CRASH: killed by %s" % sig
    return "exit %d" % r.returncode


# ---- building models -------------------------------------------------------------------------

def vi(name, shape, elem=F):
    return helper.make_tensor_value_info(name, elem, shape)


def node(op, inputs, outputs, name, **attrs):
    return helper.make_node(op, inputs, outputs, name=name, **attrs)


def model(nodes, inputs=None, outputs=None, inits=(), opset=13):
    """A model with no validation at all; x and y default to float [2,3]."""
    graph = helper.make_graph(nodes, "hostile", [vi("x", [2, 3])] if inputs is None else inputs,
                              [vi("y", [2, 3])] if outputs is None else outputs, list(inits))
    opsets = [] if opset is None else [helper.make_opsetid("", opset)]
    return helper.make_model(graph, opset_imports=opsets, ir_version=8)


def save(m, path):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(m.SerializeToString())
    return path


def write_bytes(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)


def f32(name, array):
    return numpy_helper.from_array(np.asarray(array, np.float32), name)


def external(name, dims, location, offset=None, length=None):
    t = TensorProto(name=name, data_type=F, dims=dims, data_location=TensorProto.EXTERNAL)
    for key, value in (("location", location), ("offset", offset), ("length", length)):
        if value is not None:
            t.external_data.add(key=key, value=str(value))
    return t


def relu(opset=13):
    return model([node("Relu", ["x"], ["y"], "r1")], opset=opset)


def short_shape(raw=np.int64([3]).tobytes(), dims=(2,)):
    """An INT64 tensor 'shape' whose raw_data is shorter than its dims say."""
    return TensorProto(name="shape", data_type=I64, dims=dims, raw_data=raw)


def reshape_of(extra_nodes=(), inits=()):
    return model(list(extra_nodes) + [node("Reshape", ["x", "shape"], ["y"], "rs")],
                 outputs=[vi("y", [3, 2])], inits=inits)


def add_4x4(w):
    return model([node("Add", ["x", "w"], ["y"], "a1")], [vi("x", [4, 4])], [vi("y", [4, 4])],
                 [w])


# Conv and pool outputs leave their spatial dims to shape inference.
def conv(w_shape=(1, 1, 3, 3), x_shape=(1, 1, 4, 4), **attrs):
    return model([node("Conv", ["x", "w"], ["y"], "c1", **attrs)], [vi("x", list(x_shape))],
                 [vi("y", [1, 1, "H", "W"])], [f32("w", np.ones(w_shape))])


def pool(op, x_shape=(1, 1, 4, 4), **attrs):
    return model([node(op, ["x"], ["y"], "p1", **attrs)], [vi("x", list(x_shape))],
                 [vi("y", [1, 1, "H", "W"])])


def gather_const(index):
    return model([node("Gather", ["x", "idx"], ["y"], "g1", axis=0)], [vi("x", [5, 3])],
                 [vi("y", [1, 3])], [numpy_helper.from_array(np.int64([index]), "idx")])


def sequence_map(body_inputs, second=None, first_is_sequence=True):
    """SequenceMap over a two-element sequence built from x (and a second sequence or
    tensor); the body adds 1 to each element, its declared inputs as given."""
    body = helper.make_graph(
        [node("Add", [body_inputs[0], "one"], ["out"], "add_one")], "map_body",
        [vi(n, None) for n in body_inputs], [vi("out", None)],
        [numpy_helper.from_array(np.float32(1), "one")])
    nodes = [node("SequenceConstruct", ["x", "x"], ["xs"], "construct")]
    inputs = ["xs" if first_is_sequence else "x"]
    if second == "short":
        nodes.append(node("SequenceConstruct", ["x"], ["short"], "construct_short"))
        inputs.append("short")
    nodes += [node("SequenceMap", inputs, ["ys"], "map", body=body),
              node("ConcatFromSequence", ["ys"], ["y"], "concat", axis=0)]
    return model(nodes, outputs=[vi("y", [4, 3])], opset=17)


def ext_case(location, data=None, **keys):
    """Add of a [4,4] external weight at `location`; `data` (bytes) is written there first."""
    def build(folder):
        if data is not None:
            write_bytes(os.path.join(folder, location), data)
        return add_4x4(external("w", [4, 4], location, **keys))
    return build


def ext_symlink(folder):
    os.symlink(os.path.join(os.path.dirname(folder), "outside.bin"),
               os.path.join(folder, "link.bin"))
    return add_4x4(external("w", [4, 4], "link.bin"))


def ext_absolute(folder):
    # Our own file outside the folder: it exists and is large enough, so only the path is wrong.
    return add_4x4(external("w", [4, 4], os.path.join(os.path.dirname(folder), "outside.bin")))


# (name, builder(folder) -> ModelProto, substrings stderr must contain)
CASES = [
    ("undefined_input", lambda d: model([node("Relu", ["ghost"], ["y"], "r1")]),
     ["node 'r1' (Relu)", "input 'ghost' is not defined"]),
    ("shape_of_undefined", lambda d: reshape_of([node("Shape", ["nothing"], ["shape"], "shp")]),
     ["node 'shp' (Shape)", "input 'nothing' is not defined"]),
    ("cycle", lambda d: model([node("Add", ["x", "z"], ["y"], "a"),
                               node("Relu", ["y"], ["z"], "b")]),
     ["topologically sorted"]),
    ("self_loop", lambda d: model([node("Add", ["x", "y"], ["y"], "a1")]),
     ["topologically sorted"]),
    ("out_of_order", lambda d: model([node("Relu", ["h"], ["y"], "r2"),
                                      node("Relu", ["x"], ["h"], "r1")]),
     ["topologically sorted"]),
    ("duplicate_output", lambda d: model([node("Relu", ["x"], ["y"], "r1"),
                                          node("Sigmoid", ["x"], ["y"], "s1")]),
     ["output 'y' is already produced by node"]),
    ("output_shadows_input",
     lambda d: model([node("Relu", ["a"], ["x"], "r1"), node("Relu", ["x"], ["y"], "r2")],
                     inputs=[vi("x", [2, 3]), vi("a", [2, 3])]),
     ["output 'x' shadows a graph input"]),
    ("output_shadows_initializer",
     lambda d: model([node("Relu", ["x"], ["w"], "r1"), node("Add", ["x", "w"], ["y"], "a1")],
                     inits=[f32("w", np.ones((2, 3)))]),
     ["output 'w' shadows an initializer"]),
    ("duplicate_graph_input",
     lambda d: model([node("Relu", ["x"], ["y"], "r1")], inputs=[vi("x", [2, 3])] * 2),
     ["graph input 'x' is declared twice"]),
    ("duplicate_initializer",
     lambda d: model([node("Add", ["x", "w"], ["y"], "a1")],
                     inits=[f32("w", np.ones((2, 3))), f32("w", np.zeros((2, 3)))]),
     ["initializer 'w' is declared twice"]),
    ("short_raw_data", lambda d: reshape_of(inits=[short_shape()]),
     ["initializer 'shape'", "raw_data holds 8 bytes but dims [2] of INT64 need 16"]),
    ("short_raw_data_odd", lambda d: reshape_of(inits=[short_shape(b"\3" * 7)]),
     ["initializer 'shape'", "raw_data holds 7 bytes but dims [2] of INT64 need 16"]),
    ("short_raw_data_huge_dims",
     lambda d: reshape_of(inits=[short_shape(np.int64([3, 2]).tobytes(), [2**40])]),
     ["initializer 'shape'", "is too large: dims [1099511627776] of INT64"]),
    ("short_raw_data_constant",
     lambda d: reshape_of([node("Constant", [], ["shape"], "k", value=short_shape())]),
     ["raw_data holds 8 bytes but dims [2] of INT64 need 16"]),
    ("short_typed_data",
     lambda d: add_4x4(TensorProto(name="w", data_type=F, dims=[4, 4], float_data=[1, 2, 3])),
     ["holds 3 values but dims [4,4] need 16"]),
    ("huge_initializer_without_data",
     lambda d: model([node("Add", ["x", "w"], ["y"], "a1")], [vi("x", [1])],
                     [vi("y", [10**9])], [TensorProto(name="w", data_type=F, dims=[10**9])]),
     ["holds 0 values but dims [1000000000] need 1000000000"]),
    ("wrong_attribute_type", lambda d: conv(strides=1.0),
     ["node 'c1' (Conv)", "attribute 'strides' must be INTS"]),
    ("wrong_attribute_type_int",
     lambda d: model([node("Softmax", ["x"], ["y"], "s1", axis="1")]),
     ["node 's1' (Softmax)", "attribute 'axis' must be INT"]),
    ("zero_stride_conv", lambda d: conv(strides=[0, 1]),
     ["node 'c1' (Conv)", "attribute 'strides' must be positive"]),
    ("zero_stride_maxpool", lambda d: pool("MaxPool", kernel_shape=[2, 2], strides=[1, 0]),
     ["node 'p1' (MaxPool)", "attribute 'strides' must be positive"]),
    ("negative_stride", lambda d: pool("AveragePool", kernel_shape=[2, 2], strides=[-1, 1]),
     ["node 'p1' (AveragePool)", "attribute 'strides' must be positive"]),
    ("zero_dilation", lambda d: conv(dilations=[0, 1]),
     ["attribute 'dilations' must be positive"]),
    ("zero_kernel_shape", lambda d: pool("MaxPool", kernel_shape=[0, 2]),
     ["attribute 'kernel_shape' must be positive"]),
    ("negative_pads", lambda d: conv(pads=[-1, 0, 0, 0]),
     ["attribute 'pads' must be non-negative"]),
    ("zero_group", lambda d: conv(group=0), ["attribute 'group' must be positive"]),
    ("kernel_larger_than_input", lambda d: pool("MaxPool", (1, 1, 3, 3), kernel_shape=[5, 5]),
     ["node 'p1' (MaxPool)", "kernel", "larger than"]),
    ("conv_kernel_larger_than_input", lambda d: conv((1, 1, 5, 5), (1, 1, 3, 3)),
     ["node 'c1' (Conv)", "larger than"]),
    # Crashed Debian's libonnx (Shape's inference reads the input's type unchecked).
    ("graph_input_without_type",
     lambda d: model([node("Shape", ["x"], ["y"], "shp", start=1)],
                     [helper.make_value_info("x", onnx.TypeProto())], [vi("y", [2], I64)],
                     opset=15),
     ["graph input 'x' has no tensor type"]),
    ("sequence_map_body_arity", lambda d: sequence_map(["a", "b"]),
     ["node 'map' (SequenceMap)", "declares 2 inputs, but 1 are bound"]),
    ("sequence_map_lengths_differ", lambda d: sequence_map(["a", "b"], second="short"),
     ["node 'map' (SequenceMap)", "the sequence inputs differ in length"]),
    ("sequence_map_over_tensor", lambda d: sequence_map(["a"], first_is_sequence=False),
     ["node 'map' (SequenceMap)", "input #0 must be a sequence"]),
    # libonnx ignores squeeze axes beyond the rank; dlc compiled it as a no-op.
    ("squeeze_axis_out_of_range",
     lambda d: model([node("Squeeze", ["x", "axes"], ["y"], "sq")],
                     inits=[numpy_helper.from_array(np.int64([7]), "axes")]),
     ["node 'sq' (Squeeze)", "axis 7 out of range for rank 2"]),
    # Crashed Debian's libonnx (convPoolShapeInference reads strides by the weight's rank).
    ("conv_weight_rank_above_input_rank", lambda d: conv((1, 1, 5, 5), (1, 1, 3)),
     ["node 'c1' (Conv)", "the weight has rank 4 but the input has rank 3"]),
    ("overflowing_dims",
     lambda d: model([node("Relu", ["x"], ["y"], "r1")], [vi("x", [2**31, 2**31])],
                     [vi("y", [2**31, 2**31])]),
     ["graph input 'x'", "too large"]),
    ("overflowing_elements",
     lambda d: model([node("Relu", ["x"], ["y"], "r1")], [vi("x", [2**22] * 3)],
                     [vi("y", [2**22] * 3)]),
     ["too large"]),
    # 4 MiB inputs, a [2^20, 2^20] float product (4 TiB, over the 2^40-byte limit), reduced.
    ("overflowing_intermediate",
     lambda d: model([node("MatMul", ["a", "b"], ["ab"], "m1"),
                      node("ReduceMean", ["ab"], ["y"], "rm", axes=[1], keepdims=0)],
                     [vi("a", [2**20, 1]), vi("b", [1, 2**20])], [vi("y", [2**20])]),
     ["too large"]),
    # Its weights are its 2^31-wide input: one im2col row of the gradient-style kernel would
    # hold 2^33 x 2^31 floats (the runtime's chunk sizing overflowed int64).
    ("convtranspose_im2col_row_beyond_limit",
     lambda d: model([node("ConvTranspose", ["x", "x"], ["y"], "ct",
                           strides=[3, 2], output_shape=[10, 8])],
                     [vi("x", [1, 1, 3, 2**31 - 1])], [vi("y", [1, 1, 10, 8])]),
     ["node 'ct' (ConvTranspose)", "workspace beyond 1 TiB"]),
    # Each batch entry is a line of the offset tables in the generated code: 2^31 of them
    # took the compiler past 4 GB.
    ("matmul_batch_beyond_table_limit",
     lambda d: model([node("MatMul", ["a", "b"], ["y"], "mm")],
                     [vi("a", [1, 2, 3, 4]), vi("b", [2**21, 1, 4, 3])], [vi("y", [2**21, 2, 3, 3])]),
     ["node 'mm' (MatMul)", "matrices is more than dlc's code generation supports"]),
    ("external_escape_dotdot", ext_case("../outside.bin"),
     ["initializer 'w'", "outside the model's folder"]),
    ("external_escape_absolute", ext_absolute, ["outside the model's folder"]),
    ("external_escape_symlink", ext_symlink, ["outside the model's folder"]),
    ("external_missing_file", ext_case("missing.bin"), ["initializer 'w'", "cannot be opened"]),
    ("external_offset_past_end", ext_case("w.bin", bytes(16), offset=8, length=64),
     ["initializer 'w'", "exceeds"]),
    ("external_short", ext_case("w.bin", bytes(16)),
     ["external data holds 16 bytes but dims [4,4] of FLOAT need 64"]),
    ("opset_too_new", lambda d: relu(opset=99), ["opset 99 is not supported"]),
    ("opset_zero", lambda d: relu(opset=0), ["opset 0 is not supported"]),
    ("missing_opset_import", lambda d: relu(opset=None), ["opset 0 is not supported"]),
    ("empty_graph", lambda d: model([], outputs=[]), ["graph has no outputs"]),
    ("gather_constant_out_of_range", lambda d: gather_const(7),
     ["node 'g1' (Gather)", "index 7 is out of range"]),
    ("gather_negative_out_of_range", lambda d: gather_const(-6),
     ["node 'g1' (Gather)", "index -6 is out of range"]),
    # Read out of bounds on both targets (every sample clamps to a pixel of an empty map).
    ("roi_align_empty_map",
     lambda d: model([node("RoiAlign", ["x", "rois", "b"], ["y"], "roi", output_height=2,
                           output_width=2)],
                     [vi("x", [1, 2, 0, 4]), vi("rois", [3, 4]), vi("b", [3], I64)],
                     [vi("y", [3, 2, 2, 2])], opset=16),
     ["node 'roi' (RoiAlign)", "input [1,2,0,4] has no pixels to sample"]),
    ("graph_output_undefined",
     lambda d: model([node("Relu", ["x"], ["y"], "r1")],
                     outputs=[vi("y", [2, 3]), vi("nowhere", [2, 3])]),
     ["graph output 'nowhere'", "is not produced"]),
]

# Cases that crashed dlc (or could, by size) are compiled with --emit staticlib as well.
ALSO_STATICLIB = {"shape_of_undefined", "short_raw_data", "short_raw_data_odd",
                  "short_raw_data_huge_dims", "short_raw_data_constant",
                  "zero_stride_conv", "zero_stride_maxpool", "kernel_larger_than_input",
                  "huge_initializer_without_data", "overflowing_dims", "overflowing_elements",
                  "overflowing_intermediate"}


def expect_error(dlc, work, name, path, must_contain):
    prefix = "dlc: error: %s: " % path
    for emit in ["sources"] + (["staticlib"] if name in ALSO_STATICLIB else []):
        label = name if emit == "sources" else name + " --emit staticlib"
        out = os.path.join(work, "out_" + name + ("" if emit == "sources" else "_" + emit))
        shutil.rmtree(out, ignore_errors=True)
        r = run([dlc, "compile", path, "-o", out] + ([] if emit == "sources" else
                                                     ["--emit", emit]))
        stderr = r.stderr if r else ""
        lines = stderr.splitlines()
        check(r is not None and r.returncode == 1, "%s: exit code 1" % label,
              outcome(r, label) + ("; stderr %r" % stderr[-400:] if stderr else ""))
        check(bool(lines) and all(l.startswith(prefix) for l in lines),
              "%s: every stderr line starts 'dlc: error: <model>: '" % label, repr(stderr[-600:]))
        missing = [s for s in must_contain if s not in stderr]
        check(not missing, "%s: stderr mentions %s" % (label, must_contain),
              "missing %s; got %r" % (missing, stderr[-600:]))
        check(not os.path.lexists(out), "%s: no -o directory left behind" % label,
              "found %s" % (sorted(os.listdir(out)) if os.path.isdir(out) else out))
    r = run([dlc, "inspect", path])
    check(r is not None and r.returncode in (0, 1), "%s: inspect exits 0 or 1" % name,
          outcome(r, name + " (inspect)"))


# ---- models that must work -------------------------------------------------------------------

def mlp_external(folder):
    """MatMul + Add + Relu; weights.bin holds b1 at 0 (length, no offset) and w1 at 64."""
    rng = np.random.default_rng(1)
    w1 = rng.standard_normal((4, 8)).astype(np.float32)
    b1 = rng.standard_normal(8).astype(np.float32)
    write_bytes(os.path.join(folder, "weights.bin"),
                b1.tobytes() + b"\xff" * 32 + w1.tobytes() + b"\xff" * 16)
    inits = [external("b1", [8], "weights.bin", length=32),
             external("w1", [4, 8], "weights.bin", offset=64, length=128)]
    m = model([node("MatMul", ["x", "w1"], ["h"], "m1"), node("Add", ["h", "b1"], ["a"], "a1"),
               node("Relu", ["a"], ["y"], "r1")], [vi("x", [2, 4])], [vi("y", [2, 8])], inits)
    return m, lambda x: np.maximum(x @ w1 + b1, 0)


def subdir_external(folder):
    """MatMul by a weight that is the whole of data/w.bin (no offset, no length)."""
    w = np.random.default_rng(2).standard_normal((4, 3)).astype(np.float32)
    write_bytes(os.path.join(folder, "data", "w.bin"), w.tobytes())
    m = model([node("MatMul", ["x", "w"], ["y"], "m1")], [vi("x", [2, 4])], [vi("y", [2, 3])],
              [external("w", [4, 3], "data/w.bin")])
    return m, lambda x: x @ w


def slice_huge_steps(folder):
    """Steps beyond int32 (legal: one element each). On the shape tensor they crashed
    libonnx's data propagation; on data they overflowed dlc's own size arithmetic."""
    del folder
    steps = {"st": [0], "en": [2**63 - 1], "ax": [0]}
    inits = [numpy_helper.from_array(np.int64(v), k) for k, v in steps.items()]
    inits += [numpy_helper.from_array(np.int64([2**31]), "shape_step"),
              numpy_helper.from_array(np.int64([2**63 - 1]), "data_step")]
    m = model([node("Shape", ["x"], ["s"], "shp"),
               node("Slice", ["s", "st", "en", "ax", "shape_step"], ["first_dim"], "sl1"),
               node("Slice", ["x", "st", "en", "ax", "data_step"], ["y"], "sl2")],
              [vi("x", [2, 4])], [vi("first_dim", [1], I64), vi("y", [1, 4])], inits)
    return m, lambda x: {"first_dim": np.int64([2]), "y": x[:1]}


def dlc_run(dlc, work, name, path, arrays):
    """Runs `dlc run` on the arrays; returns (process or None, {output name: array})."""
    inputs = []
    for i, a in enumerate(arrays):
        inputs.append(os.path.join(work, "%s_in%d.npy" % (name, i)))
        np.save(inputs[-1], a)
    out = os.path.join(work, "run_" + name)
    shutil.rmtree(out, ignore_errors=True)
    # Generated code must build warning-free.
    env = dict(os.environ,
               DLC_CXXFLAGS=(os.environ.get("DLC_CXXFLAGS", "") + " -Werror").strip())
    r = run([dlc, "run", path] + inputs + ["-o", out], RUN_TIMEOUT, env)
    results = {}
    if r is not None and r.returncode == 0 and os.path.isdir(out):
        results = {f[:-4]: np.load(os.path.join(out, f)) for f in os.listdir(out)
                   if f.endswith(".npy")}
    return r, results


def expect_same(dlc, work, name, path, arrays, expected):
    """`expected`: the output y, or a dict of every output by name."""
    r, results = dlc_run(dlc, work, name, path, arrays)
    check(r is not None and r.returncode == 0, "%s: dlc run succeeds" % name,
          outcome(r, name, RUN_TIMEOUT) + ("; stderr %r" % r.stderr[-600:] if r else ""))
    for output, want in (expected if isinstance(expected, dict) else {"y": expected}).items():
        got = results.get(output)
        check(got is not None and got.shape == want.shape and
              np.allclose(got, want, rtol=1e-5, atol=1e-6),
              "%s: output %s matches numpy" % (name, output),
              "got %s, expected %s" % (None if got is None else got.tolist(), want.tolist()))


def check_gather_runtime(dlc, work):
    """Gather by indices only known at run time: a bad one fails the run, -5 means row 0. The
    node's name lands in a C string of the generated code (built with -Wall -Wextra): quotes,
    backslashes and a trigraph must not break it."""
    data = np.arange(15, dtype=np.float32).reshape(5, 3)
    node_name = 'g1 "??=\\'
    path = save(model([node("Gather", ["data", "idx"], ["y"], node_name, axis=0)],
                      [vi("idx", [2], I64)], [vi("y", [2, 3])], [f32("data", data)]),
                os.path.join(work, "gather_runtime", "gather_runtime.onnx"))
    name = "gather_runtime_out_of_range"
    r, _ = dlc_run(dlc, work, name, path, [np.int64([1, 9])])
    check(r is not None and r.returncode > 0, "%s: dlc run fails without a crash" % name,
          outcome(r, name, RUN_TIMEOUT))
    stderr = r.stderr if r else ""
    check("node '%s' (Gather): index out of range" % node_name in stderr,
          "%s: stderr names the node and 'out of range'" % name, repr(stderr[-600:]))
    idx = np.int64([1, -5])
    expect_same(dlc, work, "gather_runtime_negative", path, [idx], np.take(data, idx, axis=0))


# ---- the selectable cases: one per bad model, one per model that must work -----------------

SUITE = Cases()


def error_case(name, build, must_contain):
    def case(c):
        folder = os.path.join(c.work, name)
        os.makedirs(folder)
        path = save(build(folder), os.path.join(folder, name + ".onnx"))
        expect_error(c.dlc, c.work, name, path, must_contain)
    SUITE.add(name, case)


def working_case(name, build):
    def case(c):
        folder = os.path.join(c.work, name)
        m, reference = build(folder)
        expect_same(c.dlc, c.work, name, save(m, os.path.join(folder, name + ".onnx")), [c.x],
                    reference(c.x))
    SUITE.add(name, case)


for _name, _build, _must_contain in CASES:
    error_case(_name, _build, _must_contain)
working_case("external_data_ok", mlp_external)
working_case("external_data_subdir", subdir_external)
working_case("slice_huge_steps", slice_huge_steps)
SUITE.add("gather_runtime", lambda c: check_gather_runtime(c.dlc, c.work))


class Context:
    def __init__(self, dlc, work):
        self.dlc, self.work = dlc, work
        # The input of every model that must work (but the Gather).
        self.x = np.random.default_rng(0).standard_normal((2, 4)).astype(np.float32)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--dlc", help="the dlc to test (required unless --list)")
    p.add_argument("--work", help="a scratch folder (required unless --list)")
    args = SUITE.parse_args(p, required=["--dlc", "--work"])
    dlc, work = os.path.abspath(args.dlc), os.path.abspath(args.work)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    # One level above every case's folder: the target of the escaping external-data paths.
    write_bytes(os.path.join(work, "outside.bin"), bytes(1024))
    SUITE.run(args, Context(dlc, work))

    if crashes:
        print("crashes: " + ", ".join(crashes))
    print("%d passed, %d failed" % (len(passes), len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
