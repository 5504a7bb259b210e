#!/usr/bin/env python3
"""Per-op profiles of dlc, ONNX Runtime and OpenVINO on one model (not a test): where a peer
is faster, op by op, to start speed work from.

usage: bench/op_compare.py MODEL IN.npy [--dlc build/tools/dlc] [--threads 1,2] [--runs 30]
                           [--top 25] [--work build/op_compare] [--json OUT.json]
Run it with build/bench-venv's Python (scripts/bench_setup.sh). Each engine runs the model
with its own profiler on at the same settings as bench/compare.py (dlc run --profile: 10
runs; ORT's enable_profiling and OpenVINO's PERF_COUNT: `--runs`), and each node's fastest
time is kept. Prints, per thread count: the sum of the ops' times per engine, the time per
op type (the engines fuse differently: ORT folds a Relu into its Conv, dlc an Add into its
Conv, so compare the types that carry the work, Conv, MatMul), and dlc's slowest nodes
beside each peer's time for the same ONNX node (its fused nodes and relayouts mapped back).
"""
import argparse
import collections
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from compare import openvino_config, ort_session_options  # noqa: E402
from roofline import profile  # noqa: E402

WARM_UP = 3


def dlc_ops(args, threads):
    """{node: (op type, fastest us)}, {node: its shapes}."""
    rows, _ = profile(args.dlc, args.model, [args.input],
                      os.path.join(args.work, "dlc_%d" % threads), threads)
    ops, shapes = {}, {}
    for i, row in enumerate(rows):
        node = row["node"] or "#%d" % i
        op, us = ops.get(node, (row["op"], 0.0))
        ops[node] = (op, us + float(row["min_us"]))
        shapes.setdefault(node, row["shapes"])
    return ops, shapes


def ort_ops(args, threads, x):
    """ORT's {node: (op type, fastest us)} after the warm-up runs, and {node: output tensors,
    then input tensors} of its optimized graph."""
    import onnxruntime as ort
    options = ort_session_options(threads)
    options.enable_profiling = True
    options.profile_file_prefix = os.path.join(args.work, "ort_%d" % threads)
    # Its fused nodes (QuickGelu for SiLU) have new names; their outputs keep the ONNX ones.
    options.optimized_model_filepath = os.path.join(args.work, "ort_%d.onnx" % threads)
    options.log_severity_level = 3  # its warning that such a graph is for this machine only
    session = ort.InferenceSession(args.model, options, providers=["CPUExecutionProvider"])
    feed = {session.get_inputs()[0].name: x}
    for _ in range(args.runs + WARM_UP):
        session.run(None, feed)
    path = session.end_profiling()
    with open(path) as f:
        events = json.load(f)
    os.remove(path)
    per_node = collections.defaultdict(list)
    for e in events:
        if e.get("cat") == "Node" and e["name"].endswith("_kernel_time"):
            per_node[e["name"][:-len("_kernel_time")]].append((e["args"].get("op_name", "?"),
                                                              e["dur"]))
    import onnx
    tensors = {node.name: list(node.output) + list(node.input)
               for node in onnx.load(options.optimized_model_filepath).graph.node}
    ops = {node: (times[0][0], float(min(t for _, t in times[WARM_UP:] or times)))
           for node, times in per_node.items()}
    return ops, tensors


def openvino_ops(args, threads, x):
    import openvino as ov
    core = ov.Core()
    model = core.read_model(args.model)
    input_name = model.inputs[0].get_any_name()
    model.reshape({input_name: list(x.shape)})
    compiled = core.compile_model(model, "CPU", dict(openvino_config(threads), PERF_COUNT="YES"))
    request = compiled.create_infer_request()
    best = {}
    for i in range(args.runs + WARM_UP):
        request.infer({input_name: x})
        if i < WARM_UP:
            continue
        for info in request.get_profiling_info():
            us = info.real_time.total_seconds() * 1e6
            if info.status == info.Status.EXECUTED:
                op, old = best.get(info.node_name, (info.node_type, float("inf")))
                best[info.node_name] = (info.node_type + ":" + info.exec_type
                                        if op == info.node_type else op, min(old, us))
    return best, {}


def by_type(ops):
    sums = collections.Counter()
    for op, us in ops.values():
        sums[op.split(":")[0]] += us
    return sums


class NodeNames:
    """Maps a peer's node name to the ONNX node dlc times it under. The peers name fused and
    relaid nodes after an output tensor (ORT: "<tensor>_nchwc") or add a suffix (OpenVINO:
    "<node>/WithoutBiases"); dlc times a fused activation or residual Add with the conv
    before it, so a name walks back through producers until it meets a node dlc timed, first
    through inputs no other node reads (an Add's conv, not its skip path)."""

    SUFFIXES = ("_nchwc", "/WithoutBiases", "/fq_weights_0")

    def __init__(self, model, timed):
        import onnx
        graph = onnx.load(model, load_external_data=False).graph
        named = [node for node in graph.node if node.name]
        self.producer = {out: node.name for node in named for out in node.output}
        readers = collections.Counter(i for node in graph.node for i in node.input)
        self.inputs = {node.name: sorted(node.input, key=lambda i: readers[i] > 1)
                       for node in named}
        self.names = {node.name for node in named}
        self.timed = timed

    def resolve(self, name, tensors):
        """`tensors`: the peer's output tensors, then input tensors, of each node, where it
        says: a node it added (a relayout) maps to the first ONNX tensor it writes or reads."""
        peer_name = name
        for suffix in self.SUFFIXES:
            if name.endswith(suffix):
                name = name[:-len(suffix)]
        node = name if name in self.names else self.producer.get(name)
        # A fused node named after the ONNX node it started from, "<node>/QuickGeluFusion/".
        parts = name.split("/")
        for end in range(len(parts) - 1, 0, -1) if node is None else ():
            if "/".join(parts[:end]) in self.names:
                node = "/".join(parts[:end])
                break
        for tensor in tensors.get(peer_name, ()) if node is None else ():
            node = node or self.producer.get(tensor)
        return self.timed_producer(node, 4)

    def timed_producer(self, node, depth):
        if node is None or node in self.timed:
            return node
        for tensor in self.inputs.get(node, ()) if depth else ():
            found = self.timed_producer(self.producer.get(tensor), depth - 1)
            if found is not None:
                return found
        return None


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("model")
    p.add_argument("input")
    p.add_argument("--dlc", default=os.path.join(ROOT, "build", "tools", "dlc"))
    p.add_argument("--threads", default="1,2")
    p.add_argument("--runs", type=int, default=30)
    p.add_argument("--top", type=int, default=25)
    p.add_argument("--work", default=os.path.join(ROOT, "build", "op_compare"))
    p.add_argument("--json", help="also write every dlc node's row (shapes, each engine's us)")
    args = p.parse_args()
    rows = {}
    os.makedirs(args.work, exist_ok=True)
    x = np.load(args.input)
    for threads in [int(t) for t in args.threads.split(",")]:
        engines = {"dlc": dlc_ops(args, threads), "ort": ort_ops(args, threads, x),
                   "ov": openvino_ops(args, threads, x)}
        print("== %s, %d thread%s, each node's fastest of %d runs (dlc: 10)" % (
            os.path.basename(args.model), threads, "" if threads == 1 else "s", args.runs))
        print("sum of ops, us: " + ", ".join("%s %.0f" % (e, sum(us for _, us in ops.values()))
                                             for e, (ops, _) in engines.items()))
        sums = {e: by_type(ops) for e, (ops, _) in engines.items()}
        types = sorted(set().union(*sums.values()), key=lambda t: -max(s[t] for s in
                                                                       sums.values()))
        print("%-24s %9s %9s %9s" % ("op type", "dlc us", "ORT us", "OV us"))
        for t in types[:args.top]:
            print("%-24s %9.0f %9.0f %9.0f" % (t[:24], sums["dlc"][t], sums["ort"][t],
                                               sums["ov"][t]))
        names = NodeNames(args.model, engines["dlc"][0])
        matched = {}
        for peer in ("ort", "ov"):
            matched[peer] = collections.Counter()
            for node, (_, us) in engines[peer][0].items():
                matched[peer][names.resolve(node, engines[peer][1])] += us
        print("-- dlc's slowest nodes; each peer's nodes mapped to them (fused ops, relayouts of "
              "their output), us")
        print("%-44s %-10s %9s %9s %9s %6s" % ("node", "op", "dlc", "ORT", "OV", "dlc/b"))
        for node, (op, us) in sorted(engines["dlc"][0].items(), key=lambda kv: -kv[1][1])[
                :args.top]:
            peers = [matched[p].get(node, 0.0) for p in ("ort", "ov")]
            best = min(t for t in peers if t > 0) if any(peers) else 0.0
            print("%-44s %-10s %9.1f %9.1f %9.1f %6s" % (
                node[-44:], op[:10], us, peers[0], peers[1],
                "%.2f" % (us / best) if best else "-"))
        for peer in ("ort", "ov"):
            left = matched[peer].get(None, 0.0)
            print("%s: %.0f us in nodes of no ONNX node dlc timed" % (peer, left))
        print()
        rows[threads] = [{"node": node, "op": op, "shapes": engines["dlc"][1][node], "dlc": us,
                          "ort": matched["ort"].get(node, 0.0), "ov": matched["ov"].get(node, 0.0)}
                         for node, (op, us) in engines["dlc"][0].items()]
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
