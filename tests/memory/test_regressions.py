#!/usr/bin/python3
"""Regression models for the memory-planning failures that docs/architecture.md ("Why these rules") explains.

Each model is built here with onnx.helper, run through `dlc run` three ways (planned memory
reuse, --no-reuse, and -DDLC_CHECK_MEMORY which poisons dead memory), and must give
bit-identical outputs in all three, matching an independent numpy reference. The memory report
must show that the plan really shares memory (in-place ops, elided concats), so the test
exercises what it claims to.

`--list` names the cases, `-k PATTERN` runs only those whose name the regular expression
PATTERN matches (tests/testlib/cases.py)."""
import argparse
import functools
import json
import os
import shutil
import subprocess
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "testlib"))
from cases import Cases  # noqa: E402  (tests/testlib/cases.py)

OPSET = [helper.make_opsetid("", 13)]
failures, passes = [], []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    (passes if ok else failures).append(what)


def const(name, array):
    return numpy_helper.from_array(np.asarray(array), name)


def info(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def two_branch_views(rng):
    """Two branches share the input, each views it through a Reshape and reduces; summed."""
    nodes = [
        helper.make_node("Relu", ["x"], ["r"], name="relu"),
        helper.make_node("Reshape", ["r", "shape"], ["rv"], name="view1"),
        helper.make_node("ReduceSum", ["rv", "axes"], ["s1"], name="sum1"),
        helper.make_node("Exp", ["x"], ["e"], name="exp"),
        helper.make_node("Reshape", ["e", "shape"], ["ev"], name="view2"),
        helper.make_node("ReduceMean", ["ev"], ["s2"], name="mean2", axes=[2]),
        helper.make_node("Add", ["s1", "s2"], ["y"], name="sum"),
        helper.make_node("Neg", ["rv"], ["z"], name="neg_of_view"),
    ]
    graph = helper.make_graph(nodes, "two_branch_views", [info("x", [1, 4, 8, 8])],
                              [info("y", [1, 4, 1]), info("z", [1, 4, 64])],
                              [const("shape", np.array([1, 4, 64], np.int64)),
                               const("axes", np.array([2], np.int64))])
    x = rng.standard_normal((1, 4, 8, 8)).astype(np.float32)
    r = np.maximum(x, 0).reshape(1, 4, 64)
    e = np.exp(x).reshape(1, 4, 64)
    y = r.sum(axis=2, keepdims=True) + e.mean(axis=2, keepdims=True)
    return helper.make_model(graph, opset_imports=OPSET), [x], [y, -r], {"inplace_ops": 1}


def concat_merge(rng):
    """A multi-branch merge: four branches ending in different ops (Conv, Sigmoid, a view,
    Add) concatenated, then read by an in-place op and by a pooling."""
    w1 = rng.standard_normal((4, 3, 1, 1)).astype(np.float32)
    b1 = rng.standard_normal(4).astype(np.float32)
    w2 = rng.standard_normal((2, 3, 1, 1)).astype(np.float32)
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], name="branch_conv"),
        helper.make_node("Conv", ["x", "w2"], ["c2"], name="conv2"),
        helper.make_node("Sigmoid", ["c2"], ["s2"], name="branch_sigmoid"),
        helper.make_node("Relu", ["x"], ["r3"], name="relu3"),
        helper.make_node("Reshape", ["r3", "shape3"], ["v3"], name="branch_view"),
        helper.make_node("Tanh", ["x"], ["t4"], name="tanh4"),
        helper.make_node("Add", ["t4", "x"], ["a4"], name="branch_add"),
        helper.make_node("Concat", ["c1", "s2", "v3", "a4"], ["m"], name="merge", axis=1),
        helper.make_node("Relu", ["m"], ["y"], name="after_merge"),
        helper.make_node("GlobalAveragePool", ["m"], ["g"], name="pool"),
    ]
    graph = helper.make_graph(nodes, "concat_merge", [info("x", [1, 3, 4, 4])],
                              [info("y", [1, 12, 4, 4]), info("g", [1, 12, 1, 1])],
                              [const("w1", w1), const("b1", b1), const("w2", w2),
                               const("shape3", np.array([1, 3, 4, 4], np.int64))])
    x = rng.standard_normal((1, 3, 4, 4)).astype(np.float32)
    c1 = np.einsum("oc,nchw->nohw", w1[:, :, 0, 0], x) + b1[None, :, None, None]
    s2 = 1 / (1 + np.exp(-np.einsum("oc,nchw->nohw", w2[:, :, 0, 0], x)))
    m = np.concatenate([c1, s2, np.maximum(x, 0), np.tanh(x) + x], axis=1)
    return (helper.make_model(graph, opset_imports=OPSET), [x],
            [np.maximum(m, 0), m.mean(axis=(2, 3), keepdims=True)], {"elided_concats": 1})


def view_read_later(rng):
    """A view of a value that another op reads later: no in-place write may clobber it."""
    nodes = [
        helper.make_node("Exp", ["x"], ["a"], name="exp"),
        helper.make_node("Reshape", ["a", "s34"], ["v"], name="view"),
        helper.make_node("Tanh", ["v"], ["t"], name="tanh_of_view"),
        helper.make_node("Relu", ["a"], ["r"], name="relu_of_source"),
        helper.make_node("Reshape", ["t", "s26"], ["w"], name="back"),
        helper.make_node("Mul", ["w", "r"], ["m"], name="mul"),
        helper.make_node("Add", ["m", "a"], ["y"], name="reads_source_last"),
        helper.make_node("Sigmoid", ["v"], ["z"], name="reads_view_last"),
    ]
    graph = helper.make_graph(nodes, "view_read_later", [info("x", [2, 6])],
                              [info("y", [2, 6]), info("z", [3, 4])],
                              [const("s34", np.array([3, 4], np.int64)),
                               const("s26", np.array([2, 6], np.int64))])
    x = rng.standard_normal((2, 6)).astype(np.float32)
    a = np.exp(x)
    t = np.tanh(a.reshape(3, 4)).reshape(2, 6)
    y = t * np.maximum(a, 0) + a
    z = 1 / (1 + np.exp(-a.reshape(3, 4)))
    return helper.make_model(graph, opset_imports=OPSET), [x], [y, z], {"inplace_ops": 1}


def run_dlc(dlc, model, inputs, work, mode):
    out = os.path.join(work, "out_" + mode)
    shutil.rmtree(out, ignore_errors=True)
    env = dict(os.environ)
    args = [dlc, "run", model] + inputs + ["-o", out]
    if mode == "no-reuse":
        args.append("--no-reuse")
    if mode == "checked":
        env["DLC_CXXFLAGS"] = "-DDLC_CHECK_MEMORY"
    r = subprocess.run(args, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        return None, r.stderr
    return out, ""


def check_model(dlc, root, name, model, inputs, expected, minimum):
    """Compiles `model` (its memory report must show `minimum`) and runs it three ways."""
    work = os.path.abspath(os.path.join(root, name))
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    model_path = os.path.join(work, "model.onnx")
    with open(model_path, "wb") as f:
        f.write(model.SerializeToString())
    input_paths = []
    for i, x in enumerate(inputs):
        input_paths.append(os.path.join(work, "input_%d.npy" % i))
        np.save(input_paths[-1], x)

    report_path = os.path.join(work, "report.json")
    r = subprocess.run([dlc, "compile", model_path, "-o", os.path.join(work, "gen"),
                        "--report-json", report_path], capture_output=True, text=True)
    check(r.returncode == 0, "%s: compiles (%s)" % (name, r.stderr.strip()))
    if r.returncode == 0:
        report = json.load(open(report_path))
        for key, at_least in minimum.items():
            check(report[key] >= at_least, "%s: plan has %s >= %d (got %d)"
                  % (name, key, at_least, report[key]))
        check(report["arena_bytes"] < report["no_reuse_bytes"],
              "%s: reuse saves memory (%d < %d)"
              % (name, report["arena_bytes"], report["no_reuse_bytes"]))

    results = {}
    for mode in ("reuse", "no-reuse", "checked"):
        out, err = run_dlc(dlc, model_path, input_paths, work, mode)
        check(out is not None, "%s: dlc run (%s) %s" % (name, mode, err.strip()))
        if out:
            results[mode] = [np.load(os.path.join(out, o.name + ".npy"))
                             for o in model.graph.output]
    if len(results) != 3:
        return
    for mode in ("no-reuse", "checked"):
        same = all(np.array_equal(a, b, equal_nan=False)
                   for a, b in zip(results["reuse"], results[mode]))
        check(same, "%s: outputs bit-identical with reuse and %s" % (name, mode))
    for i, (got, want) in enumerate(zip(results["reuse"], expected)):
        check(np.allclose(got, want, rtol=1e-5, atol=1e-6),
              "%s: output %d matches numpy (max diff %.3g)"
              % (name, i, float(np.max(np.abs(got - want)))))


# The models draw from one generator in turn: every case builds its model (its setup, which
# draws) and only the selected ones are checked, so each sees the data of a full run.
SUITE = Cases(replay_setup=True)
for _build in (two_branch_views, concat_merge, view_read_later):
    SUITE.add(_build.__name__, lambda c, build=_build: functools.partial(
        check_model, c.dlc, c.work, build.__name__, *build(c.rng)))


class Context:
    def __init__(self, dlc, work):
        self.dlc, self.work = dlc, work
        self.rng = np.random.default_rng(7)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--dlc", help="the dlc to test (required unless --list)")
    p.add_argument("--work", help="a scratch folder (required unless --list)")
    args = SUITE.parse_args(p, required=["--dlc", "--work"])
    SUITE.run(args, Context(args.dlc, args.work))
    print("%d passed, %d failed" % (len(passes), len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
