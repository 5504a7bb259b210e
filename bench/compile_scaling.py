#!/usr/bin/python3
"""Compile-time scaling benchmark (not a test): `dlc compile` (to sources) on generated graphs
of growing size, with the growth factor per 10x more nodes. Linear planning shows as ~10x per
10x; a quadratic pass as ~100x.

Graphs:
  relu_chain   Relu after Relu: one in-place chain, one storage group.
  branching    per step: a = Relu(x), b = Sigmoid(x), x' = Add(a, b), plus every 4th step an
               Add of the value 8 steps back (skip connections keep several values alive).

usage: bench/compile_scaling.py [--dlc build/tools/dlc] [--work build/bench/scaling]
                                [--chain 1000,10000,100000] [--branching 1000,10000]
"""
import argparse
import math
import os
import subprocess
import sys
import time

from onnx import TensorProto, helper

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
WIDTH = 64


def relu_chain(n):
    nodes = [helper.make_node("Relu", ["v%d" % i], ["v%d" % (i + 1)], name="r%d" % i)
             for i in range(n)]
    return nodes, "v%d" % n


def branching(n):
    nodes, x, history = [], "x0", ["x0"]
    step = 0
    while len(nodes) < n:
        a, b, y = "a%d" % step, "b%d" % step, "x%d" % (step + 1)
        nodes += [helper.make_node("Relu", [x], [a], name="relu%d" % step),
                  helper.make_node("Sigmoid", [x], [b], name="sig%d" % step),
                  helper.make_node("Add", [a, b], [y], name="add%d" % step)]
        if step % 4 == 3 and len(history) >= 8:
            z = y + "s"
            nodes.append(helper.make_node("Add", [y, history[-8]], [z], name="skip%d" % step))
            y = z
        history.append(y)
        x = y
        step += 1
    return nodes, x


def save(kind, n, path):
    nodes, last = {"relu_chain": relu_chain, "branching": branching}[kind](n)
    first = nodes[0].input[0]
    graph = helper.make_graph(
        nodes, kind, [helper.make_tensor_value_info(first, TensorProto.FLOAT, [1, WIDTH])],
        [helper.make_tensor_value_info(last, TensorProto.FLOAT, [1, WIDTH])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    with open(path, "wb") as f:
        f.write(model.SerializeToString())
    return len(nodes)


def timed_compile(dlc, model, out):
    """Wall and CPU seconds and peak RSS (MB) of one `dlc compile`, as GNU time measures it
    (rusage taken in this process would count the forked Python's memory too)."""
    start = time.perf_counter()
    r = subprocess.run(["/usr/bin/time", "-f", "%U %S %M", dlc, "compile", model, "-o", out],
                       capture_output=True, text=True)
    wall = time.perf_counter() - start
    if r.returncode != 0:
        raise RuntimeError(r.stderr.strip())
    user, system, rss_kb = r.stderr.strip().splitlines()[-1].split()
    return wall, float(user) + float(system), int(rss_kb) / 1024


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--dlc", default=os.path.join(ROOT, "build", "tools", "dlc"))
    p.add_argument("--work", default=os.path.join(ROOT, "build", "bench", "scaling"))
    p.add_argument("--chain", default="1000,10000,100000")
    p.add_argument("--branching", default="1000,10000")
    args = p.parse_args()
    os.makedirs(args.work, exist_ok=True)
    print("| graph | nodes | wall s | cpu s | growth per 10x (cpu) | peak RSS MB |")
    print("|---|---|---|---|---|---|")
    for kind, sizes in (("relu_chain", args.chain), ("branching", args.branching)):
        previous = None
        for n in [int(s) for s in sizes.split(",") if s]:
            model = os.path.join(args.work, "%s_%d.onnx" % (kind, n))
            nodes = save(kind, n, model)
            wall, cpu, rss = timed_compile(args.dlc, model,
                                           os.path.join(args.work, "%s_%d" % (kind, n)))
            # CPU-time ratio scaled to exactly 10x the nodes: 10x is linear, 100x quadratic.
            growth = "" if previous is None else "%.1fx" % (
                (cpu / max(previous[1], 1e-3)) ** (math.log(10) / math.log(nodes / previous[0])))
            print("| %s | %d | %.2f | %.2f | %s | %.0f |" % (kind, nodes, wall, cpu, growth, rss))
            sys.stdout.flush()
            previous = (nodes, cpu)


if __name__ == "__main__":
    main()
