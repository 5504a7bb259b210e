"""What a user measures and debugs with: --profile (each op's time) and --dump (each op's
values)."""
import csv
import json
import os
import subprocess

import numpy as np
from onnx import TensorProto, helper, numpy_helper

from clicheck import check, run  # noqa: E402  (tests/cli/clicheck.py)
from models import save  # noqa: E402  (tests/cli/models.py)


def check_profile(dlc, work):
    """--profile: `dlc run` writes profile.csv with every op of the schedule once (node, op,
    shapes, FLOPs) and per-op fastest times adding up to the fastest run within 10%, and
    profile.json, a Chrome trace of the same ops in order; the outputs are those of a plain
    run. Without --profile the generated code has no timer; the CUDA target refuses it."""
    rng = np.random.default_rng(0)
    f32 = TensorProto.FLOAT
    model = helper.make_model(helper.make_graph(
        [helper.make_node("Conv", ["x", "w"], ["c"], name="conv,1", pads=[1, 1, 1, 1]),
         helper.make_node("Relu", ["c"], ["r"], name="relu"),
         helper.make_node("Transpose", ["r"], ["t"], name="to_nhwc", perm=[0, 2, 3, 1]),
         helper.make_node("MatMul", ["t", "p"], ["m"], name="project"),
         helper.make_node("Softmax", ["m"], ["y"], name="soft\"max", axis=-1)],
        "g", [helper.make_tensor_value_info("x", f32, [1, 16, 32, 32])],
        [helper.make_tensor_value_info("y", f32, [1, 32, 32, 64])],
        [numpy_helper.from_array(rng.standard_normal((32, 16, 3, 3)).astype(np.float32), "w"),
         numpy_helper.from_array(rng.standard_normal((32, 64)).astype(np.float32), "p")]),
        opset_imports=[helper.make_opsetid("", 13)])
    path = save(model, os.path.join(work, "profiled.onnx"))
    xin = os.path.join(work, "profiled_x.npy")
    np.save(xin, rng.standard_normal((1, 16, 32, 32)).astype(np.float32))
    plain, profiled = os.path.join(work, "plain_run"), os.path.join(work, "profiled_run")
    r1 = run(dlc, "run", path, xin, "-o", plain)
    # One thread: a preempted worker stalls its whole team between the op timers, and on a
    # loaded machine (CI runs tests side by side) no run would then add up.
    r2 = subprocess.run([dlc, "run", path, xin, "-o", profiled, "--profile"], capture_output=True,
                        text=True, env=dict(os.environ, DLC_THREADS="1"))
    check(r1.returncode == 0 and r2.returncode == 0 and np.array_equal(
        np.load(os.path.join(plain, "y.npy")), np.load(os.path.join(profiled, "y.npy"))),
        "a profiled run gives the plain run's outputs (%s)" % (r1.stderr + r2.stderr).strip())
    src = os.path.join(work, "profiled_src")
    r = run(dlc, "compile", path, "-o", src, "--profile")
    source = open(os.path.join(src, "profiled.cpp")).read() if r.returncode == 0 else ""
    scheduled = source.count("dlc::rt::OpTimer")
    rows = []
    if os.path.exists(os.path.join(profiled, "profile.csv")):
        with open(os.path.join(profiled, "profile.csv")) as f:
            rows = list(csv.DictReader(f))
    ops, total = rows[:-1], rows[-1] if rows else {}
    nodes = [row["node"] for row in ops]
    check(scheduled == 4 and len(ops) == scheduled and len(set(nodes)) == len(nodes) and
          nodes == ["conv,1", "to_nhwc", "project", 'soft"max'] and
          ops[0]["op"] == "Conv" and ops[0]["shapes"] == "1x16x32x32, 32x16x3x3 -> 1x32x32x32" and
          float(ops[0]["flops"]) == 2 * 32 * 32 * 32 * 16 * 9 and
          float(ops[2]["flops"]) == 2 * 32 * 32 * 64 * 32,
          "profile.csv lists each of the %d scheduled ops once, with shapes and FLOPs (%s)"
          % (scheduled, [(row["node"], row["op"], row["flops"]) for row in ops]))
    if ops:
        # Fastest times, not medians: on a loaded machine a median run holds preempted ops, and
        # a sum of medians is no run's time.
        summed, whole = sum(float(row["min_us"]) for row in ops), float(total["min_us"])
        check(total["index"] == "total" and abs(summed - whole) <= 0.1 * whole,
              "the ops' fastest times add up to the fastest run within 10%% (%.1f of %.1f us)"
              % (summed, whole))
    try:
        with open(os.path.join(profiled, "profile.json")) as f:
            events = json.load(f)["traceEvents"]
    except (OSError, ValueError) as e:
        events = []
        print("profile.json: %s" % e)
    check([e["name"] for e in events] == nodes and all(e["ph"] == "X" and e["dur"] >= 0
                                                       for e in events) and
          all(a["ts"] + a["dur"] <= b["ts"] + 1e-3 for a, b in zip(events, events[1:])),
          "profile.json is a Chrome trace of the same ops, one after another")
    r = run(dlc, "compile", path, "-o", os.path.join(work, "unprofiled_src"))
    plain_source = open(os.path.join(work, "unprofiled_src", "profiled.cpp")).read() \
        if r.returncode == 0 else "OpTimer"
    check("OpTimer" not in plain_source and "dlc_op_profile" not in plain_source,
          "without --profile the generated code times nothing")
    r = run(dlc, "compile", path, "-o", os.path.join(work, "profiled_cuda"), "--profile",
            "--target", "cuda")
    check(r.returncode == 1 and "--profile times CPU schedules only" in r.stderr,
          "--profile --target cuda is refused (%s)" % r.stderr.strip())


def check_dump(dlc, work):
    """--dump: `dlc run` writes each op's results in schedule order with its node and ONNX
    value, listed in index.json; each held value equals numpy's computation of that node, the
    last one is the run's output, and the run's outputs are a plain run's. --dump does not
    combine with --profile or --train, and the CUDA target refuses it."""
    rng = np.random.default_rng(1)
    f32 = TensorProto.FLOAT
    w = rng.standard_normal((6, 5)).astype(np.float32)
    model = helper.make_model(helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["m"], name="project"),
         helper.make_node("Transpose", ["m"], ["t"], name="flip", perm=[1, 0]),
         helper.make_node("Exp", ["t"], ["e"], name="exp/1"),
         helper.make_node("ReduceSum", ["e"], ["y"], name="sum", axes=[1], keepdims=0)],
        "g", [helper.make_tensor_value_info("x", f32, [4, 6])],
        [helper.make_tensor_value_info("y", f32, [5])],
        [numpy_helper.from_array(w, "w")]), opset_imports=[helper.make_opsetid("", 11)])
    path = save(model, os.path.join(work, "dumped.onnx"))
    x = rng.standard_normal((4, 6)).astype(np.float32)
    xin = os.path.join(work, "dumped_x.npy")
    np.save(xin, x)
    plain, out, dump = (os.path.join(work, d) for d in ("dump_plain", "dump_out", "dump_dir"))
    r1 = run(dlc, "run", path, xin, "-o", plain)
    r2 = run(dlc, "run", path, xin, "-o", out, "--dump", dump)
    check(r1.returncode == 0 and r2.returncode == 0 and np.array_equal(
        np.load(os.path.join(plain, "y.npy")), np.load(os.path.join(out, "y.npy"))),
        "a dumped run gives the plain run's outputs (%s)" % (r1.stderr + r2.stderr).strip())
    try:
        with open(os.path.join(dump, "index.json")) as f:
            index = json.load(f)
    except (OSError, ValueError) as e:
        index = []
        print("index.json: %s" % e)
    m = x @ w
    want = {"m": m, "t": m.T, "e": np.exp(m.T), "y": np.exp(m.T).sum(axis=1)}
    last = {}
    for entry in index:
        if entry["value"]:
            last[entry["value"]] = np.load(os.path.join(dump, entry["file"]))
    check([e["file"] for e in index] == ["%05d-%s.npy" % (i, e["node"].replace("/", "_"))
                                         for i, e in enumerate(index)] and
          [e["node"] for e in index][-1:] == ["sum"] and all(e["result"] == 0 for e in index),
          "index.json lists the ops in schedule order, files named by number and node (%s)"
          % [(e["node"], e["value"]) for e in index])
    check(sorted(last) == sorted(want) and
          all(np.allclose(last[k], v, rtol=1e-5, atol=1e-6) for k, v in want.items()) and
          np.array_equal(last["y"], np.load(os.path.join(out, "y.npy"))),
          "each dumped ONNX value is numpy's value of its node (%s)" % sorted(last))
    r = run(dlc, "run", path, xin, "-o", out, "--dump", dump, "--profile")
    check(r.returncode != 0 and "--dump and --profile do not combine" in r.stderr,
          "--dump with --profile is refused (%s)" % r.stderr.strip())
    r = run(dlc, "compile", path, "-o", os.path.join(work, "dump_src"), "--dump")
    source = open(os.path.join(work, "dump_src", "dumped.h")).read() if r.returncode == 0 else ""
    check("dumped_set_dump" in source, "compile --dump gives the library dumped_set_dump")
    r = run(dlc, "compile", path, "-o", os.path.join(work, "dump_cuda"), "--dump",
            "--target", "cuda")
    check(r.returncode == 1 and "--dump reads CPU schedules only" in r.stderr,
          "--dump --target cuda is refused (%s)" % r.stderr.strip())
