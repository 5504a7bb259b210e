#!/usr/bin/env python3
"""Per-op roofline (not a test): where a model's time goes, and how far each op is from what
this machine can do, measured in the same run.

usage: bench/roofline.py MODEL IN.npy... [--dlc build/tools/dlc] [--threads 1,2] [--top 15]
                         [--work build/roofline] [-- dlc pins, e.g. --dim batch=1]
Run it with a Python that has numpy and onnx (build/bench-venv, scripts/bench_setup.sh).

First the ceilings, through dlc's own kernels and profiler (`dlc run --profile`) at each
thread count: the sgemm peak (one 1024x1024x1024 MatMul), the L2 bandwidth (an Add whose
operands and result fit in L2: 3 x 64 KiB) and the DRAM bandwidth (an Add over 3 x 64 MiB).
Then the model's own profile at each thread count, and per op, slowest first: its share of
the run, GFLOP/s and GB/s, the threads it ran on, and its efficiency, the time it would take
at the roofline (the longer of FLOPs at the sgemm peak and bytes at DRAM bandwidth) over the
time it took. An op far below 100% with a large share is where speed work starts.
"""
import argparse
import csv
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def profile(dlc, model, inputs, out, threads, pins=()):
    """(ops, total): profile.csv's op rows and its median run in microseconds."""
    env = dict(os.environ, DLC_THREADS=str(threads))
    r = subprocess.run([dlc, "run", model, *inputs, "-o", out, "--profile", *pins], env=env,
                       capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("dlc run --profile %s failed: %s" % (model, r.stderr.strip()))
    with open(os.path.join(out, "profile.csv")) as f:
        rows = list(csv.DictReader(f))
    return rows[:-1], float(rows[-1]["median_us"])


def probe(work, name, nodes, inputs, outputs, initializers=()):
    """A one-op model and seeded inputs for it: (model path, input paths)."""
    path = os.path.join(work, name + ".onnx")
    onnx.save(helper.make_model(
        helper.make_graph(nodes, name, [helper.make_tensor_value_info(n, TensorProto.FLOAT, s)
                                        for n, s in inputs],
                          [helper.make_tensor_value_info(n, TensorProto.FLOAT, s)
                           for n, s in outputs], list(initializers)),
        opset_imports=[helper.make_opsetid("", 13)]), path)
    rng = np.random.default_rng(0)
    files = []
    for n, s in inputs:
        files.append(os.path.join(work, "%s_%s.npy" % (name, n)))
        np.save(files[-1], rng.standard_normal(s).astype(np.float32))
    return path, files


def ceilings(dlc, work, threads):
    """{"gflops": sgemm peak, "l2": GB/s, "dram": GB/s} at `threads` threads."""
    rng = np.random.default_rng(1)
    n = 1024
    gemm = probe(work, "peak_sgemm", [helper.make_node("MatMul", ["a", "b"], ["c"], name="mm")],
                 [("a", [n, n])], [("c", [n, n])],
                 [numpy_helper.from_array(rng.standard_normal((n, n)).astype(np.float32), "b")])
    result = {}
    ops, _ = profile(dlc, *gemm, os.path.join(work, "peak_sgemm_run"), threads)
    result["gflops"] = float(ops[0]["gflops"])
    for key, elements in (("l2", 16 << 10), ("dram", 16 << 20)):
        add = probe(work, "bandwidth_" + key,
                    [helper.make_node("Add", ["x", "y"], ["z"], name="add")],
                    [("x", [elements]), ("y", [elements])], [("z", [elements])])
        ops, _ = profile(dlc, *add, os.path.join(work, "bandwidth_%s_run" % key), threads)
        result[key] = float(ops[0]["gbytes_per_s"])
    return result


def main():
    argv = sys.argv[1:]
    pins = argv[argv.index("--") + 1:] if "--" in argv else []
    argv = argv[:argv.index("--")] if "--" in argv else argv
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("model")
    p.add_argument("inputs", nargs="*")
    p.add_argument("--dlc", default=os.path.join(ROOT, "build", "tools", "dlc"))
    p.add_argument("--threads", default="1,2")
    p.add_argument("--top", type=int, default=15)
    p.add_argument("--work", default=os.path.join(ROOT, "build", "roofline"))
    args = p.parse_args(argv)
    os.makedirs(args.work, exist_ok=True)
    for threads in [int(t) for t in args.threads.split(",")]:
        ceiling = ceilings(args.dlc, args.work, threads)
        ops, total = profile(args.dlc, args.model, args.inputs,
                             os.path.join(args.work, "model_run_%d" % threads), threads, pins)
        print("== %s, %d thread%s: %.1f us per run; ceilings: sgemm %.1f GFLOP/s, L2 %.1f GB/s, "
              "DRAM %.1f GB/s" % (os.path.basename(args.model), threads,
                                  "" if threads == 1 else "s", total, ceiling["gflops"],
                                  ceiling["l2"], ceiling["dram"]))
        print("%6s %6s  %-16s %-36s %9s %8s %8s %4s %6s" % (
            "us", "share", "op", "node", "GFLOP/s", "GB/s", "of peak", "thr", "eff."))
        for row in sorted(ops, key=lambda r: -float(r["median_us"]))[:args.top]:
            us = float(row["median_us"])
            at_roof = max(float(row["flops"]) / (ceiling["gflops"] * 1e3),
                          float(row["bytes"]) / (ceiling["dram"] * 1e3))
            print("%6.1f %5.1f%%  %-16s %-36s %9.2f %8.2f %7.1f%% %4s %5.0f%%" % (
                us, 100 * us / total, row["op"][:16], row["node"][-36:], float(row["gflops"]),
                float(row["gbytes_per_s"]), 100 * float(row["gflops"]) / ceiling["gflops"],
                row["threads"], 100 * at_roof / us if us > 0 else 0))


if __name__ == "__main__":
    main()
