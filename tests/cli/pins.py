"""The options that fix what a model takes: --dim and --input-shape for its dims (also the -1
dims exporters write for "unknown"), --sequence, --absent, and --input-value for values."""
import os
import shutil

import numpy as np
from onnx import TensorProto, helper, numpy_helper

from clicheck import check, expect_error, run  # noqa: E402  (tests/cli/clicheck.py)
from models import save  # noqa: E402  (tests/cli/models.py)


def check_symbolic_dims(dlc, work, model):
    """A symbolic batch dim: refused with the option that pins it, pinned by --dim or
    --input-shape (compile and run), bad pins refused, and listed by inspect."""
    expect_error(dlc, work, "dynamic", model,
                 ["graph input 'x': dim 0 is symbolic ('N'); pin it with --dim N=N"])
    x = np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3)
    xin = os.path.join(work, "dyn_x.npy")
    np.save(xin, x)
    for pin in (["--dim", "N=4"], ["--input-shape", "x=4x3"], ["--dim=N=4"]):
        out = os.path.join(work, "dyn_run")
        shutil.rmtree(out, ignore_errors=True)
        r = run(dlc, "run", model, xin, "-o", out, *pin)
        check(r.returncode == 0 and np.array_equal(np.load(os.path.join(out, "y.npy")),
                                                   np.maximum(x, 0)),
              "%s pins the symbolic batch dim; run matches numpy (%s)"
              % (" ".join(pin), r.stderr.strip()))
    for name, pin, message in (
            ("dim_unknown", ["--dim", "M=4"], "--dim: 'M' is not a symbolic dim of the "
                                              "model's inputs (symbolic: N)"),
            ("dim_zero", ["--dim", "N=0"], "--dim N=0: dims must be >= 1"),
            ("shape_conflict", ["--input-shape", "x=4x5"],
             "--input-shape: input 'x' declares dim 1 as 3, not 5"),
            ("shape_rank", ["--input-shape", "x=4"], "--input-shape: input 'x' has rank 2, not 1"),
            ("shape_unknown", ["--input-shape", "z=4x3"],
             "--input-shape: 'z' is not a graph input (inputs: x)")):
        out = os.path.join(work, name)
        r = run(dlc, "compile", model, "-o", out, *pin)
        check(r.returncode == 1 and message in r.stderr and not os.path.exists(out),
              "%s: refused (%s)" % (name, r.stderr.strip().splitlines()[0] if r.stderr else ""))
    r = run(dlc, "compile", model, "-o", os.path.join(work, "bad_pin"), "--dim", "N4")
    check(r.returncode == 2 and "--dim wants NAME=N" in r.stderr, "malformed --dim: usage error")
    r = run(dlc, "inspect", model)
    check(r.returncode == 0 and "symbolic dims:\n  x dim 0 ('N'): pin with --dim N=N" in r.stdout,
          "inspect lists the symbolic dim and how to pin it")


def check_exporter_quirks(dlc, work):
    """What exporters write and ONNX Runtime accepts: a -1 dim for "unknown" (Paddle) is a
    symbolic dim, weights in Constant nodes count as parameters, and a declared output shape
    that contradicts the computed one is a warning, the computed shape winning (a declared
    dtype that contradicts stays an error)."""
    weights = np.arange(6, dtype=np.float32).reshape(3, 2) / 4
    paddle = helper.make_model(helper.make_graph(
        [helper.make_node("Constant", [], ["w"], name="w_const",
                          value=numpy_helper.from_array(weights, "w")),
         helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")], "paddle_like",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [-1, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [-1, 2])]),
        opset_imports=[helper.make_opsetid("", 13)])
    path = save(paddle, os.path.join(work, "paddle_like.onnx"))
    r = run(dlc, "inspect", path)
    check(r.returncode == 0 and "x: FLOAT[?,3]" in r.stdout and
          "x dim 0 (unknown): pin with --input-shape x=Nx3" in r.stdout and
          "parameters: 6 (24 bytes in 0 initializers and 1 Constant nodes)" in r.stdout,
          "inspect: a -1 dim is unknown and pinnable, Constant-node weights count (%r)"
          % r.stdout)
    expect_error(dlc, work, "minus_one_unpinned", path,
                 ["graph input 'x': dim 0 is unknown; pin it with --input-shape x=Nx3"])
    x = np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3)
    xin = os.path.join(work, "quirk_x.npy")
    np.save(xin, x)
    out = os.path.join(work, "quirk_run")
    r = run(dlc, "run", path, xin, "-o", out, "--input-shape", "x=4x3")
    check(r.returncode == 0 and np.allclose(np.load(os.path.join(out, "y.npy")), x @ weights,
                                            rtol=1e-6, atol=1e-6),
          "a -1 input dim pinned by --input-shape compiles and runs (%s)" % r.stderr.strip())

    def declared(output_type, output_shape):
        return helper.make_model(helper.make_graph(
            [helper.make_node("Relu", ["x"], ["y"], name="relu1")], "declared",
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
            [helper.make_tensor_value_info("y", output_type, output_shape)]),
            opset_imports=[helper.make_opsetid("", 13)])
    path = save(declared(TensorProto.FLOAT, [1, 7]), os.path.join(work, "wrong_shape.onnx"))
    xin = os.path.join(work, "quirk_x23.npy")
    np.save(xin, x[:2])
    # Compiled (a `dlc run` may come from the cache, without compiling), then run.
    out = os.path.join(work, "wrong_shape")
    r = run(dlc, "compile", path, "-o", out, "--name", "net")
    warning = ("dlc: warning: %s: node 'relu1' (Relu): graph output 'y': the model declares "
               "FLOAT [1,7] but its nodes compute tensor<2x3xf32>; dlc uses the computed shape\n"
               % path)
    header = open(os.path.join(out, "net.h")).read() if r.returncode == 0 else ""
    check(r.returncode == 0 and r.stderr == warning and "k_y_shape[] = {2, 3}" in header,
          "a declared output shape that contradicts the computed one: one warning, the header "
          "has the computed shape (%r)" % r.stderr)
    r = run(dlc, "run", path, xin, "-o", out + "_run")
    check(r.returncode == 0 and np.array_equal(np.load(os.path.join(out + "_run", "y.npy")),
                                               np.maximum(x[:2], 0)),
          "... and runs with it (%s)" % r.stderr.strip())
    expect_error(dlc, work, "wrong_output_dtype",
                 save(declared(TensorProto.INT64, [2, 3]), os.path.join(work, "wrong_dtype.onnx")),
                 ["graph output 'y': the model declares INT64 [2,3] but its nodes compute "
                  "tensor<2x3xf32>"])


def check_sequence_io(dlc, work):
    """A sequence input pinned by --sequence becomes one input per element, a sequence output
    one output per element; both run through dlc run and match numpy."""
    xs = helper.make_tensor_sequence_value_info("xs", TensorProto.FLOAT, ["n"])
    t = helper.make_tensor_value_info("t", TensorProto.FLOAT, [2])
    ys = helper.make_tensor_sequence_value_info("ys", TensorProto.FLOAT, None)
    c = helper.make_tensor_value_info("c", TensorProto.FLOAT, None)
    model = helper.make_model(helper.make_graph(
        [helper.make_node("SequenceInsert", ["xs", "t"], ["ys"], name="insert"),
         helper.make_node("ConcatFromSequence", ["ys"], ["c"], name="concat", axis=0)],
        "g", [xs, t], [ys, c]), opset_imports=[helper.make_opsetid("", 13)])
    path = save(model, os.path.join(work, "seq_io.onnx"))
    values = [np.arange(3, dtype=np.float32), np.arange(4, dtype=np.float32) - 9,
              np.array([0.5, 0.25], np.float32)]
    inputs = []
    for i, v in enumerate(values):
        inputs.append(os.path.join(work, "seq_in%d.npy" % i))
        np.save(inputs[-1], v)
    out = os.path.join(work, "seq_run")
    r = run(dlc, "run", path, *inputs, "-o", out, "--sequence", "xs=3,4")
    got = [os.path.join(out, "ys[%d].npy" % i) for i in range(3)] + [os.path.join(out, "c.npy")]
    ok = r.returncode == 0 and all(os.path.exists(g) for g in got)
    check(ok and all(np.array_equal(np.load(g), v) for g, v in zip(got, values)) and
          np.array_equal(np.load(got[3]), np.concatenate(values)),
          "--sequence: elements in as xs[i], out as ys[i]; run matches numpy (%s)"
          % r.stderr.strip())
    r = run(dlc, "inspect", path)
    check(r.returncode == 0 and "xs: sequence of FLOAT[n] (pin its length and element shapes "
          "with --sequence xs=AxB,CxD)" in r.stdout, "inspect names the sequence input's pin")
    for name, pin, code, message in (
            ("seq_unpinned", [], 1,
             "graph input 'xs' is a sequence; pin its length and element shapes with "
             "--sequence xs=AxB,CxD"),
            ("seq_not_sequence", ["--sequence", "xs=3,4", "--sequence", "t=2"], 1,
             "--sequence: 't' is not a graph input holding a sequence of tensors"),
            ("seq_rank", ["--sequence", "xs=3,2x2"], 1,
             "--sequence xs: element 1 has rank 2; the sequence's elements have rank 1"),
            ("seq_malformed", ["--sequence", "xs=3xq"], 2, "--sequence wants INPUT=AxB,CxD")):
        out = os.path.join(work, name)
        r = run(dlc, "compile", path, "-o", out, *pin)
        check(r.returncode == code and message in r.stderr and not os.path.exists(out),
              "%s: refused (%s)" % (name, r.stderr.strip().splitlines()[0] if r.stderr else ""))


def check_optional_inputs(dlc, work):
    """An optional input holds its value unless --absent names it: then it takes no input and
    OptionalHasElement is false."""
    o = helper.make_value_info("o", helper.make_optional_type_proto(
        helper.make_tensor_type_proto(TensorProto.FLOAT, [3])))
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])
    has = helper.make_tensor_value_info("has", TensorProto.BOOL, [])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])
    model = helper.make_model(helper.make_graph(
        [helper.make_node("OptionalHasElement", ["o"], ["has"], name="has_element"),
         helper.make_node("Relu", ["x"], ["y"], name="relu")],
        "g", [o, x], [has, y]), opset_imports=[helper.make_opsetid("", 18)])
    path = save(model, os.path.join(work, "optional.onnx"))
    value = np.array([1.0, -2.0, 3.0], np.float32)
    xin = os.path.join(work, "optional_x.npy")
    np.save(xin, value)
    for name, inputs, pin, present in (("optional_present", [xin, xin], [], True),
                                       ("optional_absent", [xin], ["--absent", "o"], False)):
        out = os.path.join(work, name)
        r = run(dlc, "run", path, *inputs, "-o", out, *pin)
        ok = r.returncode == 0
        check(ok and bool(np.load(os.path.join(out, "has.npy"))) == present and
              np.array_equal(np.load(os.path.join(out, "y.npy")), np.maximum(value, 0)),
              "%s: OptionalHasElement is %s (%s)" % (name, present, r.stderr.strip()))
    out = os.path.join(work, "optional_not")
    r = run(dlc, "compile", path, "-o", out, "--absent", "x")
    check(r.returncode == 1 and "--absent: 'x' is not an optional graph input" in r.stderr and
          not os.path.exists(out), "--absent of a tensor input: refused (%s)" % r.stderr.strip())

def check_input_values(dlc, work):
    """--input-value fixes an input: it becomes a constant, the compiled model no longer takes
    it, and an If on it imports only the branch it selects (the other need not even type:
    here it multiplies [3] by [2]). Bad pins are refused naming the input."""
    f32, i64 = TensorProto.FLOAT, TensorProto.INT64
    x = helper.make_tensor_value_info("x", f32, [3])
    sr = helper.make_tensor_value_info("sr", i64, [])
    scale = helper.make_tensor_value_info("scale", f32, ["n"])
    branch = lambda name, nodes: helper.make_graph(  # noqa: E731
        nodes, name, [], [helper.make_tensor_value_info(name + "_out", f32, [3])])
    untypable = branch("narrow", [
        helper.make_node("Constant", [], ["two"], name="two",
                         value=numpy_helper.from_array(np.ones(2, np.float32))),
        helper.make_node("Mul", ["x", "two"], ["narrow_out"], name="mismatched")])
    model = helper.make_model(helper.make_graph(
        [helper.make_node("Constant", [], ["rate"], name="rate",
                          value=helper.make_tensor("rate_v", i64, [], [16000])),
         helper.make_node("Equal", ["sr", "rate"], ["is_16k"], name="is_16k"),
         helper.make_node("If", ["is_16k"], ["picked"], name="by_rate",
                          then_branch=branch("wide", [helper.make_node(
                              "Mul", ["x", "scale"], ["wide_out"], name="scaled")]),
                          else_branch=untypable),
         helper.make_node("Identity", ["picked"], ["y"], name="y")],
        "g", [x, sr, scale], [helper.make_tensor_value_info("y", f32, [3])]),
        opset_imports=[helper.make_opsetid("", 16)])
    path = save(model, os.path.join(work, "input_value.onnx"))
    xv = np.array([1.0, -2.0, 0.5], np.float32)
    xin = os.path.join(work, "input_value_x.npy")
    np.save(xin, xv)
    out = os.path.join(work, "input_value_run")
    r = run(dlc, "run", path, xin, "-o", out, "--input-value", "sr=16000",
            "--input-value=scale=0.5,2,-4")
    check(r.returncode == 0 and np.array_equal(np.load(os.path.join(out, "y.npy")),
                                               xv * np.array([0.5, 2, -4], np.float32)),
          "--input-value sr=16000 scale=0.5,2,-4: the model takes x alone, its If imports the "
          "branch sr selects, run matches numpy (%s)" % r.stderr.strip())
    header = os.path.join(work, "input_value_src", "input_value.h")
    r = run(dlc, "compile", path, "-o", os.path.dirname(header), "--input-value", "sr=16000",
            "--input-value", "scale=1,1,1")
    text = open(header).read() if r.returncode == 0 else ""
    check("k_x_shape" in text and "k_sr_shape" not in text and "k_scale_shape" not in text,
          "the header declares no pinned input (%s)" % r.stderr.strip())
    for name, pins, code, message in (
            ("value_other_branch", ["sr=8000", "scale=1,1,1"], 1,
             "node 'mismatched' (Mul)"),
            ("value_not_input", ["sr=16000", "scale=1,1,1", "rate=1"], 1,
             "--input-value: 'rate' is not a graph input (inputs: x, sr, scale)"),
            ("value_count", ["sr=16000,8000", "scale=1,1,1"], 1,
             "--input-value sr: 2 values given; its shape [] holds 1"),
            ("value_type", ["sr=16k", "scale=1,1,1"], 1,
             "--input-value sr: '16k' is not a value of type INT64"),
            ("value_malformed", ["sr="], 2, "--input-value wants INPUT=V[,V]")):
        out = os.path.join(work, name)
        args = [a for pin in pins for a in ("--input-value", pin)]
        r = run(dlc, "compile", path, "-o", out, *args)
        left = os.listdir(out) if os.path.isdir(out) else []
        check(r.returncode == code and message in r.stderr and not left,
              "%s: refused (%s)" % (name, r.stderr.strip().splitlines()[0] if r.stderr else ""))
