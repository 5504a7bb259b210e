#!/usr/bin/python3
"""GPU latency of dlc's CUDA target next to PyTorch on the same GPU, for ResNet-18, ResNet-50,
MobileNetV2 and an MLP at batch 1 and 32 (each dlc model without and with CUDA graphs; the
peer eager and as a CUDA graph; float32, TF32 off on both sides). ONNX Runtime's CUDA provider
would be the natural peer, but the lent GPU machine cannot install it (no network, and the
wheel exceeds what can be carried there); PyTorch is installed there.

The GPU machine cannot run dlc, and the weights of ResNet-50 at two batch sizes are far more
than can be carried, so the work is split:
  bench/cuda_models.py --prepare DIR   here: exports the models (torchvision, random weights)
      and compiles each with --target cuda; DIR keeps, per model and batch, the generated
      sources without their weights file, and the ONNX graph without its weights
      (initializer shapes kept), about 5 MB in all.
  bench/cuda_models.py --run DIR OUT   there: fills each weights file and each initializer
      with random values (latency does not depend on them), builds bench/cuda_latency.cpp
      against each model with nvcc, runs it, runs the same ONNX graph in PyTorch, and prints
      one JSON line per measurement and a table of dlc's latency over PyTorch's.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import onnx
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
BATCHES = (1, 32)
# Initializers up to this many elements keep their values (shapes, Clip bounds); larger ones
# travel as shapes only.
KEPT_ELEMENTS = 64


def torch_models():
    import torch
    import torchvision

    torch.manual_seed(0)
    mlp = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(784, 512), torch.nn.ReLU(),
                              torch.nn.Linear(512, 512), torch.nn.ReLU(),
                              torch.nn.Linear(512, 10))
    return {"mlp": (mlp, (1, 28, 28)),
            "resnet18": (torchvision.models.resnet18(), (3, 224, 224)),
            "resnet50": (torchvision.models.resnet50(), (3, 224, 224)),
            "mobilenetv2": (torchvision.models.mobilenet_v2(), (3, 224, 224))}


def prepare(args):
    import torch

    shutil.rmtree(args.dir, ignore_errors=True)
    os.makedirs(args.dir)
    for name, (model, sample) in torch_models().items():
        model.eval()
        for batch in BATCHES:
            entry = "%s_b%d" % (name, batch)
            folder = os.path.join(args.dir, entry)
            os.makedirs(folder)
            path = os.path.join(folder, "model.onnx")
            torch.onnx.export(model, torch.zeros((batch,) + sample), path, opset_version=13,
                              input_names=["input"], output_names=["output"])
            generated = os.path.join(folder, "generated")
            if subprocess.run([args.dlc, "compile", path, "-o", generated, "--target", "cuda",
                               "--name", entry]).returncode != 0:
                return 1
            os.remove(os.path.join(generated, entry + ".weights.bin"))
            graph = onnx.load(path)
            shapes = {}
            for init in graph.graph.initializer:
                if int(np.prod(init.dims)) > KEPT_ELEMENTS:
                    shapes[init.name] = list(init.dims)
            kept = [i for i in graph.graph.initializer if i.name not in shapes]
            del graph.graph.initializer[:]
            graph.graph.initializer.extend(kept)
            onnx.save(graph, path)
            with open(os.path.join(folder, "manifest.json"), "w") as f:
                json.dump({"input_shape": [batch] + list(sample), "random_initializers": shapes},
                          f)
    return 0


def weight_bytes(generated, entry):
    with open(os.path.join(generated, entry + ".h")) as f:
        return int(re.search(r"_WEIGHT_BYTES \(\(size_t\)(\d+)u\)", f.read()).group(1))


def build(args, entry, out):
    """Fills the entry's weights file, builds its latency program; the program's path."""
    sys.path.insert(0, os.path.join(ROOT, "tests", "cuda"))
    from run_cuda_model import model_build

    folder = os.path.join(args.dir, entry)
    generated = os.path.join(folder, "generated")
    rng = np.random.default_rng(0)
    count = weight_bytes(generated, entry) // 4
    rng.uniform(-0.05, 0.05, count).astype(np.float32).tofile(
        os.path.join(generated, entry + ".weights.bin"))
    work = os.path.join(out, entry)
    os.makedirs(work, exist_ok=True)
    options = argparse.Namespace(nvcc=True, check_nvcc=False, cuda_arch=args.cuda_arch,
                                 nvcc_path=args.nvcc_path, generated=generated, work=work,
                                 runtime_lib=args.runtime_lib, runtime_dir=args.runtime_dir)
    built = model_build(options, generated, entry)
    if built is None:
        return None
    command, sources, libs = built
    exe = os.path.join(work, "cuda_latency")
    if subprocess.run(command + [os.path.join(HERE, "cuda_latency.cpp")] + sources +
                      ["-o", exe] + libs).returncode != 0:
        return None
    return exe


def torch_forward(path, random_initializers, device="cuda"):
    """The ONNX graph at `path` as a PyTorch function (the ops these models use), with random
    values for the initializers listed in `random_initializers`. Constants are made here, so
    that a call copies nothing from the host (it is captured as a CUDA graph)."""
    import torch
    import torch.nn.functional as F

    graph = onnx.load(path).graph
    rng = np.random.default_rng(0)
    values = {i.name: torch.from_numpy(numpy_helper.to_array(i).copy()).to(device)
              for i in graph.initializer}
    for name, shape in random_initializers.items():
        values[name] = torch.from_numpy(
            rng.uniform(-0.05, 0.05, shape).astype(np.float32)).to(device)
    steps = []
    for node in graph.node:
        a = {attr.name: onnx.helper.get_attribute_value(attr) for attr in node.attribute}
        op = node.op_type
        if op == "Constant":
            values[node.output[0]] = torch.from_numpy(
                numpy_helper.to_array(a["value"]).copy()).to(device)
            continue
        if op == "Conv":
            pads = a.get("pads", [0, 0, 0, 0])
            if pads[:2] != pads[2:]:
                raise SystemExit("Conv with asymmetric padding is not mapped")
            f = (lambda a, pads: lambda x: F.conv2d(
                x[0], x[1], x[2] if len(x) > 2 else None, a.get("strides", 1), pads[:2],
                a.get("dilations", 1), a.get("group", 1)))(a, pads)
        elif op == "BatchNormalization":
            f = (lambda eps: lambda x: F.batch_norm(x[0], x[3], x[4], x[1], x[2], False, 0.0,
                                                    eps))(a.get("epsilon", 1e-5))
        elif op == "Relu":
            f = lambda x: torch.relu(x[0])  # noqa: E731
        elif op == "Clip":
            bounds = [values[i].item() if i else None for i in list(node.input[1:]) + [""] * 2]
            f = (lambda lo, hi: lambda x: torch.clamp(x[0], lo, hi))(bounds[0], bounds[1])
        elif op == "Add":
            f = lambda x: x[0] + x[1]  # noqa: E731
        elif op == "MaxPool":
            pads = a.get("pads", [0, 0, 0, 0])
            f = (lambda a, pads: lambda x: F.max_pool2d(x[0], a["kernel_shape"],
                                                        a.get("strides", 1), pads[:2]))(a, pads)
        elif op == "GlobalAveragePool":
            f = lambda x: F.adaptive_avg_pool2d(x[0], 1)  # noqa: E731
        elif op == "Flatten":
            f = (lambda axis: lambda x: torch.flatten(x[0], axis))(a.get("axis", 1))
        elif op == "Gemm":
            f = (lambda transB: lambda x: F.linear(x[0], x[1] if transB else x[1].t(),
                                                   x[2] if len(x) > 2 else None))(
                a.get("transB", 0))
        else:
            raise SystemExit("op %s is not mapped" % op)
        steps.append((f, list(node.input), node.output[0]))

    def forward(x):
        env = dict(values)
        env[graph.input[0].name] = x
        for f, inputs, output in steps:
            env[output] = f([env[i] if i else None for i in inputs])
        return env[graph.output[0].name]
    return forward


def torch_latency(forward, x, runs):
    import torch

    def timed(fn):
        times = []
        for _ in range(runs):
            start = time.perf_counter()
            fn()
            torch.cuda.synchronize()
            times.append((time.perf_counter() - start) * 1e6)
        times.sort()
        return times[len(times) // 2], times[0]

    with torch.no_grad():
        for _ in range(20):
            forward(x)
        torch.cuda.synchronize()
        eager = timed(lambda: forward(x))
        graph = torch.cuda.CUDAGraph()
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            for _ in range(3):
                forward(x)
        torch.cuda.current_stream().wait_stream(stream)
        with torch.cuda.graph(graph):
            forward(x)
        graphed = timed(graph.replay)
    return eager, graphed


def run_all(args):
    import torch

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cudnn.benchmark = True
    os.makedirs(args.out, exist_ok=True)
    entries = sorted(e for e in os.listdir(args.dir)
                     if os.path.exists(os.path.join(args.dir, e, "manifest.json")))
    # nvcc builds in parallel; the measurements one at a time.
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 4) as pool:
        programs = dict(zip(entries, pool.map(lambda e: build(args, e, args.out), entries)))
    rows, failed = [], False
    for entry in entries:
        folder = os.path.join(args.dir, entry)
        with open(os.path.join(folder, "manifest.json")) as f:
            manifest = json.load(f)
        x = np.random.default_rng(1).standard_normal(manifest["input_shape"]).astype(np.float32)
        input_path = os.path.join(args.out, entry, "input.npy")
        np.save(input_path, x)
        dlc = {}
        if programs[entry]:
            r = subprocess.run([programs[entry], input_path, str(args.runs)], capture_output=True,
                               text=True)
            for line in r.stdout.splitlines():
                result = json.loads(line)
                print(json.dumps(result), flush=True)
                dlc[result["cuda_graph"]] = result["latency_us_median"]
            failed = failed or r.returncode != 0
            if r.returncode:
                print(r.stderr, file=sys.stderr)
        else:
            failed = True
        forward = torch_forward(os.path.join(folder, "model.onnx"),
                                manifest["random_initializers"])
        eager, graphed = torch_latency(forward, torch.from_numpy(x).cuda(), args.runs)
        peer = {"peer": "torch %s" % torch.__version__, "model": entry,
                "eager_us_median": eager[0], "graph_us_median": graphed[0]}
        print(json.dumps(peer), flush=True)
        rows.append((entry, dlc.get(0), dlc.get(1), eager[0], graphed[0]))
    print("\n%-16s %10s %10s %10s %10s %8s %8s" % ("model", "dlc us", "dlc+graph", "torch us",
                                                   "torch+gr", "ratio", "ratio gr"))
    for entry, plain, graph, eager, graphed in rows:
        def ratio(a, b):
            return "%.2f" % (a / b) if a and b else "-"
        print("%-16s %10s %10s %10.1f %10.1f %8s %8s" % (
            entry, "%.1f" % plain if plain else "-", "%.1f" % graph if graph else "-", eager,
            graphed, ratio(plain, eager), ratio(graph, graphed)))
    print("ratio: dlc's median latency over PyTorch's (eager / both as CUDA graphs); below 1 is "
          "faster")
    return 1 if failed else 0


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    mode = p.add_mutually_exclusive_group(required=True)
    mode.add_argument("--prepare", metavar="DIR", help="export and compile the models into DIR")
    mode.add_argument("--run", metavar="DIR", help="build and measure the models DIR holds")
    p.add_argument("out", nargs="?", help="with --run: where builds and inputs go")
    p.add_argument("--dlc", default=os.path.join(ROOT, "build", "tools", "dlc"))
    p.add_argument("--runs", type=int, default=200)
    p.add_argument("--cuda-arch", default="sm_90")
    p.add_argument("--nvcc-path", default="nvcc")
    p.add_argument("--runtime-lib", help="libdlc_runtime.a (the CPU runtime)")
    p.add_argument("--runtime-dir", default=os.path.join(ROOT, "runtime"))
    args = p.parse_args()
    if args.prepare:
        args.dir = args.prepare
        return prepare(args)
    if not args.out:
        p.error("--run needs OUT")
    args.dir = args.run
    return run_all(args)


if __name__ == "__main__":
    sys.exit(main())
