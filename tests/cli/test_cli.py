#!/usr/bin/python3
"""The dlc command line as a user meets it: bad input gives one clear line and a non-zero exit
with nothing left behind; inspect, ops, --help and --version work; `dlc run` matches ONNX's
reference outputs.

`--list` names the cases, `-k PATTERN` runs only those whose name the regular expression
PATTERN matches (tests/testlib/cases.py)."""
import argparse
import functools
import json
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "testlib"))
from cases import Cases  # noqa: E402  (tests/testlib/cases.py)
from clicheck import check, expect_error, failures, passes, run  # noqa: E402
from models import make_models, save  # noqa: E402  (tests/cli/models.py)
from pins import (check_exporter_quirks, check_input_values, check_optional_inputs,  # noqa
                  check_sequence_io, check_symbolic_dims)
from instrument import check_dump, check_profile  # noqa: E402  (tests/cli/instrument.py)
from chains import check_fused_chains  # noqa: E402  (tests/cli/chains.py)

NODE_DATA = "/usr/share/libonnx-testdata/data/node"


def unoptimized_compiler(work, log):
    """A c++ that appends what it compiles to `log` and compiles without the optimizer (its
    -O0 comes last): for the cases that check how dlc builds, not the code, each of which
    would otherwise cost a full runtime build."""
    cxx = os.path.join(work, "unoptimized-c++-" + os.path.basename(log))
    with open(cxx, "w") as f:
        f.write('#!/bin/sh\necho "$@" >> "%s"\nexec c++ "$@" -O0\n' % log)
    os.chmod(cxx, 0o755)
    return cxx


def check_cache_sharing(dlc, work, model, inputs, expected):
    """Parallel `dlc run`s of one model on an empty cache (as `ninja -j` runs dlc_add_model
    targets): one builds the runtime while the others wait, each publishes its entries, none
    may see another's half-written files. Their DLC_CACHE_DIR cannot be created, so they also
    all fall back to one private folder in $TMPDIR (one runtime build checks both), which is
    refused once others may write it."""
    blocker = os.path.join(work, "a_file")
    open(blocker, "w").write("not a folder")
    tmp = os.path.join(work, "tmp")
    os.makedirs(tmp)
    # The compiler's log shows the runtime compiled once, not per run.
    compiles = os.path.join(work, "compiles.log")
    env = dict(os.environ, DLC_CACHE_DIR=os.path.join(blocker, "cache"), TMPDIR=tmp,
               CXX=unoptimized_compiler(work, compiles))
    procs = [subprocess.Popen([dlc, "run", model] + inputs +
                              ["-o", os.path.join(work, "parallel_%d" % i)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
             for i in range(4)]
    errors = [p.communicate()[1] for p in procs]
    results = [(p.returncode, err) for p, err in zip(procs, errors)]
    check(all(rc == 0 for rc, _ in results), "4 parallel dlc runs on one empty cache succeed (%s)"
          % [err.strip()[-200:] for rc, err in results if rc])
    outs = [os.path.join(work, "parallel_%d" % i, "y.npy") for i in range(4)]
    check(all(os.path.exists(o) and np.allclose(np.load(o), expected, rtol=1e-4, atol=1e-5)
              for o in outs), "every parallel run matches the ONNX reference")
    cache = os.path.join(tmp, "dlc-cache-%d" % os.getuid())
    entries = os.listdir(cache) if os.path.isdir(cache) else []
    check(any(f.startswith("run-") for f in entries) and os.stat(cache).st_mode & 0o077 == 0,
          "an unusable DLC_CACHE_DIR falls back to a private folder in $TMPDIR (%s)" % entries)
    leftovers = [f for f in entries if f.startswith("build")]
    check(not leftovers, "no private build folders left in the cache (%s)" % leftovers)
    with open(compiles) as f:
        runtime_compiles = sum("elementwise.cpp" in line for line in f)
    check(runtime_compiles == 1, "the parallel runs compiled the runtime once (%d times)"
          % runtime_compiles)
    os.chmod(cache, 0o777)  # another user could have made it: refused, with a clear error
    r = subprocess.run([dlc, "run", model] + inputs + ["-o", os.path.join(work, "fallback")],
                       capture_output=True, text=True, env=env)
    check(r.returncode == 1 and "not a private folder" in r.stderr,
          "a fallback cache folder open to others is refused (%s)" % r.stderr.strip())


def check_bfloat16_run(dlc, work):
    """`dlc run` on a bfloat16 model: NumPy cannot name bfloat16, so inputs and outputs are
    its bits as uint16; the op computes in float32 and rounds back to nearest even."""
    x = helper.make_tensor_value_info("x", TensorProto.BFLOAT16, [5])
    y = helper.make_tensor_value_info("y", TensorProto.BFLOAT16, [5])
    model = helper.make_model(helper.make_graph(
        [helper.make_node("Mul", ["x", "x"], ["y"], name="square")], "g", [x], [y]),
        opset_imports=[helper.make_opsetid("", 17)])
    path = save(model, os.path.join(work, "bf16.onnx"))
    values = np.array([-1.5, 0.5, 3.0, 1.0078125, -0.0], np.float32)
    bits = (values.view(np.uint32) >> 16).astype(np.uint16) # all exact in bfloat16
    xin = os.path.join(work, "bf16_x.npy")
    np.save(xin, bits)
    out = os.path.join(work, "bf16_run")
    r = run(dlc, "run", path, xin, "-o", out)
    got = np.load(os.path.join(out, "y.npy")) if r.returncode == 0 else None
    # 1.0078125^2 = 1.01568..., between bfloat16 1.0078125 and 1.015625: nearest is 1.015625.
    want = np.array([2.25, 0.25, 9.0, 1.015625, 0.0], np.float32)
    check(got is not None and got.dtype == np.uint16 and
          np.array_equal((got.astype(np.uint32) << 16).view(np.float32), want),
          "bfloat16 run: uint16 bits in and out, float32 compute rounded back (%s)"
          % r.stderr.strip())


def check_float64_run(dlc, work):
    """Float64 computes in double: log-softmax of values a float32 computation would round to
    the same number still tells them apart."""
    x = helper.make_tensor_value_info("x", TensorProto.DOUBLE, [4])
    y = helper.make_tensor_value_info("y", TensorProto.DOUBLE, [4])
    model = helper.make_model(helper.make_graph(
        [helper.make_node("LogSoftmax", ["x"], ["y"], name="log_softmax")], "g", [x], [y]),
        opset_imports=[helper.make_opsetid("", 13)])
    path = save(model, os.path.join(work, "f64.onnx"))
    values = np.array([1.0, 1.0 + 1e-12, 3.0, -2.0], np.float64)
    xin = os.path.join(work, "f64_x.npy")
    np.save(xin, values)
    out = os.path.join(work, "f64_run")
    r = run(dlc, "run", path, xin, "-o", out)
    got = np.load(os.path.join(out, "y.npy")) if r.returncode == 0 else None
    shifted = values - values.max()
    want = shifted - np.log(np.exp(shifted).sum())
    check(got is not None and got.dtype == np.float64 and got[1] != got[0] and
          np.allclose(got, want, rtol=1e-14, atol=0),
          "float64 run: log-softmax in double (%s)" % r.stderr.strip())


def check_shared_conv_weight(dlc, work):
    """One 3x3 weight in two convolutions: the 12x12 one takes Winograd, the 6x6 one (9 tiles)
    im2col, so the compiler stores the weight packed both ways and each conv reads its own."""
    rng = np.random.default_rng(3)
    weight = numpy_helper.from_array(rng.standard_normal((16, 16, 3, 3)).astype(np.float32), "w")
    shapes = {"a": [1, 16, 12, 12], "b": [1, 16, 6, 6]}
    nodes = [helper.make_node("Conv", [x, "w"], ["y" + x], name="conv_" + x, pads=[1, 1, 1, 1])
             for x in shapes]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info(x, TensorProto.FLOAT, s)
                     for x, s in shapes.items()],
        [helper.make_tensor_value_info("y" + x, TensorProto.FLOAT, s[:1] + [16] + s[2:])
         for x, s in shapes.items()], [weight])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    path = save(model, os.path.join(work, "shared_weight.onnx"))
    feeds = {x: rng.standard_normal(s).astype(np.float32) for x, s in shapes.items()}
    args = []
    for x, value in feeds.items():
        args.append(os.path.join(work, "shared_%s.npy" % x))
        np.save(args[-1], value)
    out = os.path.join(work, "shared_run")
    r = run(dlc, "run", path, *args, "-o", out)
    w = numpy_helper.to_array(weight).astype(np.float64)

    def conv(value):  # 3x3, pads 1, by definition
        padded = np.pad(value.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)))
        h, v = value.shape[2], value.shape[3]
        return sum(np.einsum("nchw,kc->nkhw", padded[:, :, i:i + h, j:j + v], w[:, :, i, j])
                   for i in range(3) for j in range(3))

    for x, expected in ((x, conv(value)) for x, value in feeds.items()):
        got = os.path.join(out, "y%s.npy" % x)
        check(r.returncode == 0 and os.path.exists(got) and
              np.allclose(np.load(got), expected, rtol=1e-4, atol=1e-4),
              "a weight shared by a Winograd and an im2col conv: conv_%s matches the ONNX "
              "reference (%s)" % (x, r.stderr.strip()))


def check_run_time_error(dlc, work):
    """A kernel that finds bad run-time data (RoiAlign's batch index beyond the batch) makes
    `dlc run` fail with the node's name and the reason, not crash or write garbage."""
    f32 = TensorProto.FLOAT
    model = helper.make_model(helper.make_graph(
        [helper.make_node("RoiAlign", ["x", "rois", "batch"], ["y"], name="roi",
                          output_height=2, output_width=2)], "g",
        [helper.make_tensor_value_info("x", f32, [1, 1, 4, 4]),
         helper.make_tensor_value_info("rois", f32, [1, 4]),
         helper.make_tensor_value_info("batch", TensorProto.INT64, [1])],
        [helper.make_tensor_value_info("y", f32, [1, 1, 2, 2])]),
        opset_imports=[helper.make_opsetid("", 16)])
    path = save(model, os.path.join(work, "roi.onnx"))
    inputs = []
    for name, value in [("x", np.ones((1, 1, 4, 4), np.float32)),
                        ("rois", np.array([[0, 0, 2, 2]], np.float32)),
                        ("batch", np.array([3], np.int64))]:
        inputs.append(os.path.join(work, "roi_%s.npy" % name))
        np.save(inputs[-1], value)
    r = run(dlc, "run", path, *inputs, "-o", os.path.join(work, "roi_run"))
    check(r.returncode != 0 and "roi" in r.stderr and "batch index out of range" in r.stderr and
          "Traceback" not in r.stderr,
          "run-time data error reported with the node (%s)" % r.stderr.strip())


def check_long_schedule(dlc, work):
    """A schedule of more ops than one part holds (kOpsPerSchedulePart, 256) is cut into
    functions: 700 MatMuls by permutation matrices then a Gather run right (exact against
    numpy), and a bad index found in the last part still ends the run with its node's error."""
    f32 = TensorProto.FLOAT
    steps = 700
    perms = [np.eye(4, dtype=np.float32)[np.random.default_rng(i).permutation(4)]
             for i in range(steps)]
    nodes, inits, value = [], [], "x"
    for i, p in enumerate(perms):
        inits.append(numpy_helper.from_array(p, "w%d" % i))
        nodes.append(helper.make_node("MatMul", [value, "w%d" % i], ["h%d" % i], name="mm%d" % i))
        value = "h%d" % i
    nodes.append(helper.make_node("Gather", [value, "index"], ["y"], name="pick", axis=1))
    model = helper.make_model(helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", f32, [1, 4]),
                     helper.make_tensor_value_info("index", TensorProto.INT64, [2])],
        [helper.make_tensor_value_info("y", f32, [1, 2])], inits),
        opset_imports=[helper.make_opsetid("", 13)])
    path = save(model, os.path.join(work, "long.onnx"))
    xv = np.array([[1, 2, 3, 4]], np.float32)
    want = xv
    for p in perms:
        want = want @ p
    xin, good, bad = (os.path.join(work, "long_%s.npy" % n) for n in ("x", "good", "bad"))
    np.save(xin, xv)
    np.save(good, np.array([3, 0], np.int64))
    np.save(bad, np.array([3, 7], np.int64))
    out = os.path.join(work, "long_src")
    r = run(dlc, "compile", path, "-o", out)
    source = open(os.path.join(out, "long.cpp")).read() if r.returncode == 0 else ""
    check(source.count("__attribute__((noinline))") == 3,
          "701 ops make 3 schedule parts (%d; %s)" % (source.count("__attribute__((noinline))"),
                                                     r.stderr.strip()))
    r = run(dlc, "run", path, xin, good, "-o", os.path.join(work, "long_run"))
    got = os.path.join(work, "long_run", "y.npy")
    check(r.returncode == 0 and np.array_equal(np.load(got), want[:, [3, 0]]),
          "the parted schedule runs every op in order: matches numpy (%s)" % r.stderr.strip())
    r = run(dlc, "run", path, xin, bad, "-o", os.path.join(work, "long_bad"))
    check(r.returncode != 0 and "node 'pick' (Gather)" in r.stderr and "Traceback" not in
          r.stderr, "an error in the last part ends the run with its node (%s)" % r.stderr.strip())


def check_control_flow(dlc, work):
    """If, Loop and Scan are unrolled at compile time: results against numpy, and clear errors
    for what cannot be unrolled or a body that cannot be imported."""
    opset = [helper.make_opsetid("", 16)]
    f32 = TensorProto.FLOAT
    x = helper.make_tensor_value_info("x", f32, [3])

    def const(name, value, dtype=TensorProto.INT64):
        return helper.make_node("Constant", [], [name], name=name, value=helper.make_tensor(
            name + "_v", dtype, [], [value]))

    # y = x; repeat 4 times: y = y * 2 + i, collecting each y (a scan output).
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"], name="keep_going"),
         helper.make_node("Cast", ["i"], ["i_f"], to=f32, name="i_as_float"),
         const("two", 2.0, f32),
         helper.make_node("Mul", ["y_in", "two"], ["doubled"], name="double"),
         helper.make_node("Add", ["doubled", "i_f"], ["y_out"], name="add_i"),
         helper.make_node("Identity", ["y_out"], ["scan"], name="collect")],
        "body", [helper.make_tensor_value_info("i", TensorProto.INT64, []),
                 helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
                 helper.make_tensor_value_info("y_in", f32, [3])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("y_out", f32, [3]),
         helper.make_tensor_value_info("scan", f32, [3])])
    loop = helper.make_model(helper.make_graph(
        [const("trips", 4), helper.make_node("Loop", ["trips", "", "x"], ["y", "ys"], body=body,
                                             name="loop")],
        "g", [x], [helper.make_tensor_value_info("y", f32, [3]),
                   helper.make_tensor_value_info("ys", f32, [4, 3])]), opset_imports=opset)
    path = save(loop, os.path.join(work, "loop.onnx"))
    xv = np.array([1.0, -2.0, 0.5], np.float32)
    xin = os.path.join(work, "loop_x.npy")
    np.save(xin, xv)
    out = os.path.join(work, "loop_run")
    r = run(dlc, "run", path, xin, "-o", out)
    want, ys = xv.copy(), []
    for i in range(4):
        want = want * 2 + i
        ys.append(want)
    check(r.returncode == 0 and np.allclose(np.load(os.path.join(out, "y.npy")), want) and
          np.allclose(np.load(os.path.join(out, "ys.npy")), np.stack(ys)),
          "Loop with a constant trip count, unrolled: carried value and scan output match "
          "numpy (%s)" % r.stderr.strip())

    # The same loop with the trip count as a graph input cannot be unrolled.
    runtime_trips = helper.make_model(helper.make_graph(
        [helper.make_node("Loop", ["trips", "", "x"], ["y", "ys"], body=body, name="loop")],
        "g", [helper.make_tensor_value_info("trips", TensorProto.INT64, []), x],
        [helper.make_tensor_value_info("y", f32, [3]),
         helper.make_tensor_value_info("ys", f32, [4, 3])]), opset_imports=opset)
    expect_error(dlc, work, "loop_runtime_trips",
                 save(runtime_trips, os.path.join(work, "loop_runtime.onnx")),
                 ["node 'loop' (Loop): the trip count must be a compile-time constant (dlc "
                  "unrolls loops): it is a graph input"])

    # If with a run-time condition: both branches, selected per output.
    flag = helper.make_tensor_value_info("flag", TensorProto.BOOL, [])
    branch = lambda name, op: helper.make_graph(  # noqa: E731
        [helper.make_node(op, ["x"], [name + "_out"], name=name)], name, [],
        [helper.make_tensor_value_info(name + "_out", f32, [3])])
    if_model = helper.make_model(helper.make_graph(
        [helper.make_node("If", ["flag"], ["y"], then_branch=branch("neg", "Neg"),
                          else_branch=branch("abs", "Abs"), name="choose")],
        "g", [flag, x], [helper.make_tensor_value_info("y", f32, [3])]), opset_imports=opset)
    path = save(if_model, os.path.join(work, "if.onnx"))
    for value, expected in ((True, -xv), (False, np.abs(xv))):
        fin = os.path.join(work, "if_flag.npy")
        np.save(fin, np.array(value))
        out = os.path.join(work, "if_run_%d" % value)
        r = run(dlc, "run", path, fin, xin, "-o", out)
        check(r.returncode == 0 and np.array_equal(np.load(os.path.join(out, "y.npy")), expected),
              "If with a run-time condition %s takes its branch (%s)" % (value, r.stderr.strip()))

    # A body's unsupported op is reported at its node, once.
    bad_branch = helper.make_graph(
        [helper.make_node("Frobnicate", ["x"], ["bad_out"], name="inner")], "bad", [],
        [helper.make_tensor_value_info("bad_out", f32, [3])])
    bad_if = helper.make_model(helper.make_graph(
        [helper.make_node("If", ["flag"], ["y"], then_branch=bad_branch,
                          else_branch=branch("abs", "Abs"), name="choose")],
        "g", [flag, x], [helper.make_tensor_value_info("y", f32, [3])]), opset_imports=opset)
    expect_error(dlc, work, "if_bad_body", save(bad_if, os.path.join(work, "if_bad.onnx")),
                 ["node 'inner' (Frobnicate): op Frobnicate (opset 16) is not supported"])

    # Subgraphs nested deeper than dlc's limit are refused, not recursed into.
    graph = branch("leaf", "Neg")
    for depth in range(20):
        graph = helper.make_graph(
            [helper.make_node("If", ["flag"], ["level%d" % depth], then_branch=graph,
                              else_branch=branch("leaf%d" % depth, "Abs"), name="if%d" % depth)],
            "level%d" % depth, [], [helper.make_tensor_value_info("level%d" % depth, f32, [3])])
    deep = helper.make_model(helper.make_graph(
        list(graph.node), "g", [flag, x], [helper.make_tensor_value_info("level19", f32, [3])]),
        opset_imports=opset)
    expect_error(dlc, work, "deep_nesting", save(deep, os.path.join(work, "deep.onnx")),
                 ["subgraphs nest deeper than 16 levels"])


def check_constant_of_shape_at_run_time(dlc, work):
    """A large float ConstantOfShape is a run-time broadcast, not a weight of its values (it
    used to be filled into the weights up to 64 MiB)."""
    shape = np.array([256, 1024], np.int64)
    model = helper.make_model(helper.make_graph(
        [helper.make_node("Constant", [], ["shape"], name="shape",
                          value=numpy_helper.from_array(shape, "shape")),
         helper.make_node("ConstantOfShape", ["shape"], ["halves"], name="halves",
                          value=numpy_helper.from_array(np.array([0.5], np.float32))),
         helper.make_node("Add", ["x", "halves"], ["y"], name="add")], "fill",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [256, 1024])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [256, 1024])]),
        opset_imports=[helper.make_opsetid("", 13)])
    path = save(model, os.path.join(work, "fill.onnx"))
    report = os.path.join(work, "fill_report.json")
    r = run(dlc, "compile", path, "-o", os.path.join(work, "fill"), "--report-json", report)
    weight_bytes = json.load(open(report))["weight_bytes"] if r.returncode == 0 else -1
    check(0 <= weight_bytes < 1024, "ConstantOfShape [256, 1024] is not a 1 MiB weight "
          "(weight bytes %d, %s)" % (weight_bytes, r.stderr.strip()))
    x = np.linspace(-1, 1, 256 * 1024, dtype=np.float32).reshape(256, 1024)
    xin = os.path.join(work, "fill_x.npy")
    np.save(xin, x)
    out = os.path.join(work, "fill_run")
    r = run(dlc, "run", path, xin, "-o", out)
    check(r.returncode == 0 and np.array_equal(np.load(os.path.join(out, "y.npy")), x + 0.5),
          "... and fills it at run time (%s)" % r.stderr.strip())


def check_failed_staticlib(dlc, work, model):
    """The C++ compiler failing during --emit staticlib: exit 1, no -o folder (nor the parents
    this compile created) left behind."""
    out = os.path.join(work, "failed_staticlib", "a", "b")
    env = dict(os.environ, CXX="false", DLC_CACHE_DIR=os.path.join(work, "cache_failing"))
    r = subprocess.run([dlc, "compile", model, "-o", out, "--emit", "staticlib"],
                       capture_output=True, text=True, env=env)
    check(r.returncode == 1 and r.stderr.startswith("dlc: error: "),
          "--emit staticlib with a failing C++ compiler exits 1 (%r)" % r.stderr[-300:])
    check(not os.path.lexists(os.path.join(work, "failed_staticlib")),
          "a failed --emit staticlib leaves no -o folder behind")


def check_cpu_and_threads(dlc, work, model, inputs, expected, env):
    """--cpu builds for one deployment CPU (x86-64-v2 runs on every CPU these tests meet);
    a bad value is refused; $DLC_CPU and $DLC_THREADS pick kernels and threads at run time."""
    out = os.path.join(work, "cpu_v2")
    r = subprocess.run([dlc, "run", model] + inputs + ["-o", out, "--cpu", "x86-64-v2"],
                       capture_output=True, text=True,
                       env=dict(env, CXX=unoptimized_compiler(work, os.devnull)))
    check(r.returncode == 0 and np.allclose(np.load(os.path.join(out, "y.npy")), expected,
                                            rtol=1e-4, atol=1e-5),
          "--cpu x86-64-v2: dlc run matches the ONNX reference (%s)" % r.stderr.strip())
    r = run(dlc, "compile", model, "-o", os.path.join(work, "cpu_bad"), "--cpu", "pentium")
    check(r.returncode == 1 and "--cpu 'pentium' is not one of native" in r.stderr,
          "--cpu refuses an unknown CPU (%r)" % r.stderr)
    for isa in ("baseline", "avx2"):
        for threads in ("1", "2"):
            out = os.path.join(work, "isa_%s_%s" % (isa, threads))
            r = subprocess.run([dlc, "run", model] + inputs + ["-o", out], capture_output=True,
                               text=True, env=dict(env, DLC_CPU=isa, DLC_THREADS=threads))
            y = os.path.join(out, "y.npy")
            check(r.returncode == 0 and np.allclose(np.load(y), expected, rtol=1e-4, atol=1e-5),
                  "DLC_CPU=%s DLC_THREADS=%s: dlc run matches the ONNX reference (%s)"
                  % (isa, threads, r.stderr.strip()))


def check_targets(dlc, work, model):
    """--target: bad values and combinations are refused with nothing left behind; cpu,cuda
    puts both models in one library (the CUDA one as NAME_cuda, its kernels built by nvcc);
    dlc run is for the CPU."""
    for name, options, text in (
            ("target_bad", ["--target", "tpu"], "--target 'tpu' is not cpu, cuda or cpu,cuda"),
            ("target_twice", ["--target", "cuda,cuda"], "is not cpu, cuda or cpu,cuda"),
            ("target_mlir", ["--target", "cpu,cuda", "--emit", "mlir"],
             "--emit mlir takes one --target"),
            ("tf32_cpu", ["--allow-tf32"], "--allow-tf32 applies to --target cuda"),
            ("jit_cpu", ["--cuda-jit"], "--cuda-jit applies to --target cuda"),
            ("arch_bad", ["--target", "cuda", "--cuda-arch", "80"],
             "--cuda-arch '80' is not of the form sm_NN"),
            ("no_nvcc", ["--target", "cuda", "--emit", "staticlib"],
             "DLC_NVCC '/nonexistent/nvcc' is not an executable")):
        out = os.path.join(work, name)
        env = dict(os.environ, DLC_NVCC="/nonexistent/nvcc")
        r = subprocess.run([dlc, "compile", model, "-o", out] + options, capture_output=True,
                           text=True, env=env)
        check(r.returncode == 1 and text in r.stderr and not os.path.exists(out),
              "%s: refused with '%s', nothing written (%r)" % (name, text, r.stderr.strip()))
    r = run(dlc, "run", model, "-o", os.path.join(work, "run_cuda"), "--target", "cuda")
    check(r.returncode == 1 and "dlc run runs the model on the CPU" in r.stderr,
          "dlc run --target cuda is refused (%r)" % r.stderr.strip())
    out = os.path.join(work, "both")
    r = run(dlc, "compile", model, "-o", out, "--target", "cpu,cuda", "--name", "net")
    files = sorted(os.listdir(out)) if os.path.isdir(out) else []
    check(r.returncode == 0 and {"net.h", "net.cpp", "net_cuda.h", "net_cuda.cu",
                                 "net_cuda_weights.cpp", "dlc_cuda.cpp", "dlc_cuda_device.cpp",
                                 "dlc_cuda_emulated.cpp", "net_any.h",
                                 "net_any.cpp"} <= set(files),
          "--target cpu,cuda writes both models, the CUDA one as net_cuda (%s %s)"
          % (files, r.stderr.strip()))
    for flag, constant, effect in (("--allow-tf32", "kAllowTf32", "products may use TF32"),
                                   ("--cuda-jit", "kAlwaysJit", "kernels always go to NVRTC")):
        for given in (False, True):
            out = os.path.join(work, "%s_%s" % (constant, given))
            r = run(dlc, "compile", model, "-o", out, "--target", "cuda", "--name", "net",
                    *([flag] if given else []))
            source = open(os.path.join(out, "net.cu")).read() if r.returncode == 0 else ""
            check("constexpr bool %s = %s;" % (constant, "true" if given else "false") in source,
                  "%s %s: the generated model's %s: %s" % (
                      flag, "given" if given else "not given", effect, given))
    nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    if not os.path.exists(nvcc):
        print("SKIP --target cpu,cuda --emit staticlib: no nvcc here")
        return
    out = os.path.join(work, "both_lib")
    r = run(dlc, "compile", model, "-o", out, "--target", "cpu,cuda", "--name", "net",
            "--emit", "staticlib", "--cuda-arch", "sm_80")
    lib = os.path.join(out, "libnet.a")
    symbols = run("nm", lib).stdout if os.path.exists(lib) else ""
    check(r.returncode == 0 and " T net_create" in symbols and " T net_cuda_create" in symbols
          and " T dlc_cuda_context_create" in symbols and " T net_any_create" in symbols,
          "--target cpu,cuda --emit staticlib: one library with both models, the "
          "device-choosing API and the CUDA runtime (%s)" % r.stderr.strip())


GOOD = os.path.join(NODE_DATA, "test_conv_with_strides_padding", "model.onnx")
REFERENCE_DATA = os.path.join(NODE_DATA, "test_conv_with_strides_padding", "test_data_set_0")
DIGITS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples",
                      "digits", "digits.onnx")
SUITE = Cases()


class Context:
    """dlc, the work folder, and the files several cases share, each made on first use."""

    def __init__(self, dlc, work):
        self.dlc, self.work = dlc, work

    @functools.cached_property
    def truncated(self):
        data = open(GOOD, "rb").read()
        path = os.path.join(self.work, "truncated.onnx")
        open(path, "wb").write(data[: len(data) // 2])
        return path

    @functools.cached_property
    def not_onnx(self):
        path = os.path.join(self.work, "not_onnx.pb")
        open(path, "wb").write(b"this is a text file, not a protobuf\n" * 10)
        return path

    @functools.cached_property
    def models(self):
        return make_models(self.work)

    @functools.cached_property
    def inputs(self):
        """GOOD's two reference inputs as .npy files."""
        inputs = []
        for i in range(2):
            t = onnx.TensorProto()
            t.ParseFromString(open(os.path.join(REFERENCE_DATA, "input_%d.pb" % i), "rb").read())
            inputs.append(os.path.join(self.work, "in%d.npy" % i))
            np.save(inputs[-1], numpy_helper.to_array(t))
        return inputs

    @functools.cached_property
    def expected(self):
        """GOOD's reference output."""
        expected = onnx.TensorProto()
        expected.ParseFromString(open(os.path.join(REFERENCE_DATA, "output_0.pb"), "rb").read())
        return numpy_helper.to_array(expected)

    @functools.cached_property
    def env(self):
        return dict(os.environ)



def error_case(name, model, must_contain):
    """A case that `dlc compile` of model(ctx) fails cleanly, as expect_error checks."""
    SUITE.add("error_" + name, lambda c: expect_error(c.dlc, c.work, name, model(c),
                                                      must_contain))


error_case("truncated", lambda c: c.truncated, ["not a valid ONNX model"])
error_case("not_onnx", lambda c: c.not_onnx, ["not a valid ONNX model"])
error_case("missing", lambda c: os.path.join(c.work, "missing.onnx"), ["cannot open"])
error_case("unsupported", lambda c: c.models["unsupported"],
           ["node 'sn1' (StringNormalizer)", "node 'unique1' (Unique)", "opset 13",
            "2 unsupported ops: StringNormalizer x1, Unique x1"])
error_case("contrib_refused", lambda c: c.models["contrib"],
           ["node 'dqmm' (DynamicQuantizeMatMul): DynamicQuantizeMatMul is a quantized contrib "
            "op: dlc has no integer kernels yet",
            "node 'blocked' (Conv): ONNX Runtime's NCHWc layout ops hold weights blocked for the "
            "CPU the optimizer ran on: save the model at --opt_level 2 or lower",
            "node 'gqa' (GroupQueryAttention): op com.microsoft.GroupQueryAttention is not "
            "supported"])
error_case("mismatch", lambda c: c.models["mismatch"],
           ["node 'mm1' (MatMul): inner dims differ: [2,3] x [4,5]"])
error_case("wrong_dtype", lambda c: c.models["wrong_dtype"],
           ["node 'relu_int' (Relu): element type i32 is not supported (float32 or float64 "
            "only)"])
SUITE.add("symbolic_dims", lambda c: check_symbolic_dims(c.dlc, c.work, c.models["dynamic"]))
SUITE.add("exporter_quirks", lambda c: check_exporter_quirks(c.dlc, c.work))
SUITE.add("constant_of_shape_at_run_time",
          lambda c: check_constant_of_shape_at_run_time(c.dlc, c.work))
for _name, _check in (("sequence_io", check_sequence_io),
                      ("optional_inputs", check_optional_inputs),
                      ("input_values", check_input_values),
                      ("bfloat16_run", check_bfloat16_run), ("float64_run", check_float64_run),
                      ("shared_conv_weight", check_shared_conv_weight),
                      ("run_time_error", check_run_time_error),
                      ("long_schedule", check_long_schedule),
                      ("profile", check_profile), ("dump", check_dump),
                      ("fused_chains", check_fused_chains),
                      ("control_flow", check_control_flow)):
    SUITE.add(_name, lambda c, check_=_check: check_(c.dlc, c.work))
error_case("used_complex", lambda c: c.models["used_complex"], ["unsupported element type"])
error_case("constant_index_out_of_range", lambda c: c.models["constant_gather"],
           ["node 'pick' (Gather): index 5 is out of range for axis 0 of size 2"])


@SUITE.case("unused_complex")
def _(c):
    r = run(c.dlc, "compile", c.models["unused_complex"], "-o",
            os.path.join(c.work, "unused_complex"))
    check(r.returncode == 0, "an unused initializer of an unsupported type is ignored (%s)"
          % r.stderr.strip())


@SUITE.case("dead_unknown_op")
def _(c):
    r = run(c.dlc, "compile", c.models["dead_unknown_op"], "-o", os.path.join(c.work, "dead_op"))
    check(r.returncode == 0, "a node no output depends on is ignored, whatever its op (%s)"
          % r.stderr.strip())


@SUITE.case("bad_name")
def _(c):
    r = run(c.dlc, "compile", GOOD, "-o", os.path.join(c.work, "x"), "--name", "9bad")
    check(r.returncode == 1 and "not a C identifier" in r.stderr, "invalid --name is refused")


@SUITE.case("unknown_command")
def _(c):
    r = run(c.dlc, "frobnicate")
    check(r.returncode == 2 and "unknown command" in r.stderr, "unknown command: usage error")


@SUITE.case("help")
def _(c):
    r = run(c.dlc, "--help")
    check(r.returncode == 0 and "dlc compile MODEL" in r.stdout, "--help prints usage")


@SUITE.case("version")
def _(c):
    r = run(c.dlc, "--version")
    check(r.returncode == 0 and r.stdout.startswith("dlc "), "--version")


@SUITE.case("ops")
def _(c):
    r = run(c.dlc, "ops")
    check(r.returncode == 0 and "Conv" in r.stdout.split(), "ops lists Conv")


@SUITE.case("inspect")
def _(c):
    r = run(c.dlc, "inspect", GOOD)
    check(r.returncode == 0 and "Conv: 1" in r.stdout and "x: FLOAT[1,1,7,5]" in r.stdout and
          "opset: ai.onnx" in r.stdout, "inspect shows ops and shapes (%r)" % r.stdout)


@SUITE.case("inspect_bad_file")
def _(c):
    r = run(c.dlc, "inspect", c.truncated)
    check(r.returncode == 1 and r.stderr.startswith("dlc: error: "), "inspect refuses bad file")


@SUITE.case("memory_report")
def _(c):
    """Memory reports: text, JSON with the documented keys, an SVG picture."""
    rj, svg = os.path.join(c.work, "report.json"), os.path.join(c.work, "plan.svg")
    r = run(c.dlc, "compile", DIGITS, "-o", os.path.join(c.work, "rep"), "--report",
            "--report-json", rj, "--report-memory", svg)
    check(r.returncode == 0 and "arena bytes:" in r.stdout and "lower bound bytes:" in r.stdout
          and "elided concats:" in r.stdout, "--report prints the figures (%r)" % r.stdout)
    report = json.load(open(rj)) if os.path.exists(rj) else {}
    keys = {"arena_bytes", "lower_bound_bytes", "no_reuse_bytes", "inplace_ops",
            "elided_concats", "weight_bytes"}
    check(set(report) == keys, "--report-json has exactly the documented keys (%s)" % report)
    # (Its Relus are Gemm epilogues, so it has no in-place op left to count.)
    check(report.get("lower_bound_bytes", 0) <= report.get("arena_bytes", -1)
          < report.get("no_reuse_bytes", 0),
          "the digits plan reuses memory and is not below its lower bound")
    check(report.get("weight_bytes", 0) >= 39208, "weight bytes cover the 9802 parameters")
    try:
        root = ET.parse(svg).getroot()
        rects = [e for e in root.iter() if e.tag.endswith("rect")]
        check(len(rects) > 5, "--report-memory writes an SVG with one rectangle per buffer")
    except (ET.ParseError, FileNotFoundError) as e:
        check(False, "--report-memory writes valid SVG (%s)" % e)


@SUITE.case("no_reuse")
def _(c):
    rj = os.path.join(c.work, "report.json")
    r = run(c.dlc, "compile", DIGITS, "-o", os.path.join(c.work, "rep2"), "--no-reuse",
            "--report-json", rj)
    plain = json.load(open(rj)) if r.returncode == 0 else {}
    check(plain.get("arena_bytes") == plain.get("no_reuse_bytes") and
          plain.get("inplace_ops") == 0, "--no-reuse gives every value its own memory")


@SUITE.case("run_reference")
def _(c):
    """dlc run against the ONNX reference outputs (two inputs, one output)."""
    r = subprocess.run([c.dlc, "run", GOOD] + c.inputs + ["-o", os.path.join(c.work, "run_out")],
                       capture_output=True, text=True, env=c.env)
    check(r.returncode == 0, "dlc run succeeds (%s)" % r.stderr.strip())
    out = os.path.join(c.work, "run_out", "y.npy")
    check(os.path.exists(out) and np.allclose(np.load(out), c.expected, rtol=1e-4, atol=1e-5),
          "dlc run output matches the ONNX reference")


@SUITE.case("run_bad_inputs")
def _(c):
    inputs = c.inputs
    r = subprocess.run([c.dlc, "run", GOOD, inputs[0], "-o", os.path.join(c.work, "run_out2")],
                       capture_output=True, text=True, env=c.env)
    check(r.returncode != 0 and "takes 2 inputs" in r.stderr, "dlc run: wrong input count")
    r = subprocess.run([c.dlc, "run", GOOD, inputs[1], inputs[0], "-o",
                        os.path.join(c.work, "run_out3")], capture_output=True, text=True,
                       env=c.env)
    check(r.returncode != 0 and "invalid argument" in r.stderr, "dlc run: wrong input shapes")


SUITE.add("cache_sharing",
          lambda c: check_cache_sharing(c.dlc, c.work, GOOD, c.inputs, c.expected))
SUITE.add("failed_staticlib", lambda c: check_failed_staticlib(c.dlc, c.work, GOOD))
SUITE.add("cpu_and_threads",
          lambda c: check_cpu_and_threads(c.dlc, c.work, GOOD, c.inputs, c.expected, c.env))
SUITE.add("targets", lambda c: check_targets(c.dlc, c.work, GOOD))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--dlc", help="the dlc to test (required unless --list)")
    p.add_argument("--work", help="a scratch folder (required unless --list)")
    args = SUITE.parse_args(p, required=["--dlc", "--work"])
    dlc, work = args.dlc, os.path.abspath(args.work)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    SUITE.run(args, Context(dlc, work))

    print("%d passed, %d failed" % (len(passes), len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
