#!/usr/bin/env python3
"""Finds the first ONNX node whose value in a dlc run departs from ONNX Runtime's.

    dlc run MODEL IN.npy... -o OUT --dump DUMP
    python scripts/compare_ort.py MODEL DUMP IN.npy... [--rtol 1e-3]

Needs onnx, onnxruntime and numpy. ONNX Runtime runs MODEL on the same inputs with every
value the dump holds as an extra graph output, and with its graph optimizations off, so each
value is the plain ONNX definition. Walking the nodes in graph order, each value dlc computed
is compared with ONNX Runtime's: floats by max |dlc - ort| / max |ort| (the scale of the
value), other types exactly. The first value over the tolerance is reported, with the nodes
between it and the last matching value whose values dlc never held on their own (fused into
the op that computed the departing value): the wrong one is among them.

Exit status: 0 when every compared value matches, 1 at a departure, 2 on bad arguments.
"""
import argparse
import json
import os
import sys

import numpy as np


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model")
    parser.add_argument("dump", help="the directory of dlc run --dump")
    parser.add_argument("inputs", nargs="*", help="the run's inputs, in graph-input order")
    parser.add_argument("--rtol", type=float, default=1e-3,
                        help="largest error relative to the value's scale (default 1e-3)")
    return parser.parse_args(argv)


def dumped_values(model, dump_dir):
    """ONNX value name -> the .npy file of the last op that computed it."""
    with open(os.path.join(dump_dir, "index.json")) as f:
        index = json.load(f)
    outputs_of = {node.name: list(node.output) for node in model.graph.node}
    files = {}
    for entry in index:
        name = entry["value"]
        if entry["result"] > 0:
            outputs = outputs_of.get(entry["node"], [])
            name = outputs[entry["result"]] if entry["result"] < len(outputs) else ""
        if name:
            # Ops that compute part of a node name its value too; the last one computed it.
            files.setdefault(name, []).append(os.path.join(dump_dir, entry["file"]))
    return files


def ort_values(model, names, feeds):
    import onnx
    import onnxruntime as ort

    probe = onnx.ModelProto()
    probe.CopyFrom(model)
    present = {o.name for o in probe.graph.output}
    for name in names:
        if name not in present:
            probe.graph.output.append(onnx.ValueInfoProto(name=name))
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    options.log_severity_level = 3
    session = ort.InferenceSession(probe.SerializeToString(), options,
                                   providers=["CPUExecutionProvider"])
    wanted = [o.name for o in session.get_outputs()]
    return dict(zip(wanted, session.run(wanted, feeds)))


def departure(ours, theirs):
    """The error of `ours` against `theirs` (0 when equal), or None when not comparable."""
    if ours.shape != theirs.shape:
        return None
    if ours.size == 0:
        return 0.0
    if np.issubdtype(theirs.dtype, np.floating):
        a, b = ours.astype(np.float64), theirs.astype(np.float64)
        if not np.array_equal(np.isnan(a), np.isnan(b)):
            return float("inf")
        finite = ~np.isnan(b)
        if not finite.any():
            return 0.0
        a, b = a[finite], b[finite]
        if not np.array_equal(a[np.isinf(b)], b[np.isinf(b)]):
            return float("inf")
        a, b = a[~np.isinf(b)], b[~np.isinf(b)]
        if b.size == 0:
            return 0.0
        scale = max(float(np.abs(b).max()), 1e-30)
        return float(np.abs(a - b).max()) / scale
    return 0.0 if np.array_equal(ours, theirs.astype(ours.dtype, copy=False)) else float("inf")


def main(argv):
    args = parse_args(argv)
    import onnx

    model = onnx.load(args.model)
    initializers = {i.name for i in model.graph.initializer}
    graph_inputs = [i.name for i in model.graph.input if i.name not in initializers]
    if len(args.inputs) != len(graph_inputs):
        print(f"compare_ort: the model takes {len(graph_inputs)} inputs "
              f"({', '.join(graph_inputs)}), {len(args.inputs)} given", file=sys.stderr)
        return 2
    feeds = {name: np.load(path) for name, path in zip(graph_inputs, args.inputs)}
    files = dumped_values(model, args.dump)
    if not files:
        print(f"compare_ort: {args.dump}/index.json lists no ONNX values", file=sys.stderr)
        return 2
    theirs = ort_values(model, files.keys(), feeds)

    compared, unheld = 0, []
    for node in model.graph.node:
        label = f"node '{node.name}' ({node.op_type})"
        held = False
        for name in node.output:
            if not name or name not in theirs:
                continue
            # The last op whose result has ONNX Runtime's shape (a layout change the compiler
            # put after it computed the value has another shape).
            candidates = [np.load(f) for f in files.get(name, [])]
            candidates = [c for c in candidates if c.shape == theirs[name].shape]
            if not candidates:
                continue
            held = True
            error = departure(candidates[-1], theirs[name])
            compared += 1
            if error is not None and error > args.rtol:
                print(f"first departure: {label}, value '{name}': error {error:.3g} of its scale "
                      f"(tolerance {args.rtol:g}); the {compared - 1} values before it match")
                if unheld:
                    print("its op also computed (fused) nodes whose values dlc did not hold: "
                          + ", ".join(unheld))
                return 1
        if held:
            unheld = []
        else:
            unheld.append(label)
    print(f"all {compared} values dlc held match ONNX Runtime's within {args.rtol:g}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
