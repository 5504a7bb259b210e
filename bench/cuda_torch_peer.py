#!/usr/bin/env python3
"""The GPU peer for bench/cuda_latency.cpp where ONNX Runtime's CUDA provider is not
installed: PyTorch on the same GPU running the same ONNX MLP (Gemm, Relu and Flatten nodes
only, weights read with onnx), eager and as a CUDA graph. Prints one line of JSON.

usage: bench/cuda_torch_peer.py MODEL.onnx INPUT.npy [RUNS]"""
import json
import sys
import time

import numpy as np
import onnx
import onnx.numpy_helper
import torch


def build(path):
    graph = onnx.load(path).graph
    weights = {t.name: torch.from_numpy(onnx.numpy_helper.to_array(t).copy()).cuda()
               for t in graph.initializer}
    steps = []
    for node in graph.node:
        attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
        if node.op_type == "Gemm":
            if attrs.get("transA", 0) or not attrs.get("transB", 0):
                raise SystemExit("only Gemm with transB=1 is mapped")
            steps.append(("gemm", node.input[1], node.input[2] if len(node.input) > 2 else None))
        elif node.op_type == "Relu":
            steps.append(("relu", None, None))
        elif node.op_type == "Flatten":
            steps.append(("flatten", None, None))
        else:
            raise SystemExit("op %s is not mapped" % node.op_type)

    def forward(x):
        for kind, w, b in steps:
            if kind == "gemm":
                x = torch.nn.functional.linear(x, weights[w], weights[b] if b else None)
            elif kind == "relu":
                x = torch.relu(x)
            else:
                x = torch.flatten(x, 1)
        return x
    return forward


def latency(fn, runs):
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        times.append((time.perf_counter() - start) * 1e6)
    times.sort()
    return times[len(times) // 2], times[0]


def main():
    path, input_path = sys.argv[1], sys.argv[2]
    runs = int(sys.argv[3]) if len(sys.argv) > 3 else 500
    torch.backends.cuda.matmul.allow_tf32 = False
    forward = build(path)
    x = torch.from_numpy(np.load(input_path)).cuda()
    with torch.no_grad():
        for _ in range(20):
            forward(x)
        torch.cuda.synchronize()
        eager = latency(lambda: forward(x), runs)
        graph = torch.cuda.CUDAGraph()
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            for _ in range(3):
                forward(x)
        torch.cuda.current_stream().wait_stream(stream)
        with torch.cuda.graph(graph):
            forward(x)
        graphed = latency(graph.replay, runs)
    print(json.dumps({"peer": "torch %s" % torch.__version__, "eager_us_median": eager[0],
                      "eager_us_min": eager[1], "graph_us_median": graphed[0],
                      "graph_us_min": graphed[1]}))


if __name__ == "__main__":
    main()
