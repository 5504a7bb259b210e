#!/usr/bin/python3
"""Training-step benchmark (not a test): one SGD step of the same model, batch and loss,
timed side by side in one run for dlc (`dlc compile --train`), PyTorch (this interpreter's
torch) and ONNX Runtime training (when `onnxruntime.training` imports: run this script with
a venv's python made by `python3 -m venv --system-site-packages` + `pip install
onnxruntime-training==1.19.2`). Median of --steps timed steps after --warmup untimed ones, at 1
and 2 threads. Also prints dlc's training arena against its lower bound.

usage: bench/train.py [--dlc build/tools/dlc] [--work build/bench-train]
                      [--models mlp,resnet18] [--steps 10] [--warmup 2]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
LR = 0.01


def make_model(name):
    torch.manual_seed(0)
    if name == "mlp":
        model = nn.Sequential(nn.Flatten(), nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 256),
                              nn.ReLU(), nn.Linear(256, 10))
        return model, torch.randn(64, 1, 28, 28), 10
    if name == "resnet18":
        import torchvision
        return torchvision.models.resnet18(num_classes=10), torch.randn(8, 3, 224, 224), 10
    raise ValueError(name)


def labels_for(x, classes):
    return torch.from_numpy(np.random.default_rng(0).integers(0, classes, x.shape[0]))


def time_steps(step, steps, warmup):
    for _ in range(warmup):
        step()
    times = []
    for _ in range(steps):
        start = time.perf_counter()
        step()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def bench_torch(model, x, y, threads, steps, warmup):
    torch.set_num_threads(threads)
    model.train()
    opt = torch.optim.SGD(model.parameters(), lr=LR)

    def step():
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt.step()
    return time_steps(step, steps, warmup)


def bench_ort(model, x, y, threads, steps, warmup, work):
    try:
        import onnx
        import onnxruntime
        from onnxruntime.training import api as ort_api
        from onnxruntime.training import artifacts
    except ImportError:
        return None
    path = os.path.join(work, "ort_model.onnx")
    model.train()
    torch.onnx.export(model, x, path, input_names=["x"], output_names=["y"],
                      training=torch.onnx.TrainingMode.TRAINING, do_constant_folding=False,
                      opset_version=14)
    onnx_model = onnx.load(path)
    params = [n for n, _ in model.named_parameters()]
    frozen = [t.name for t in onnx_model.graph.initializer if t.name not in params]
    out = os.path.join(work, "ort_artifacts")
    os.makedirs(out, exist_ok=True)
    artifacts.generate_artifacts(onnx_model, requires_grad=params, frozen_params=frozen,
                                 loss=artifacts.LossType.CrossEntropyLoss,
                                 optimizer=artifacts.OptimType.SGD, artifact_directory=out)
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    state = ort_api.CheckpointState.load_checkpoint(os.path.join(out, "checkpoint"))
    module = ort_api.Module(os.path.join(out, "training_model.onnx"), state, None, "cpu",
                            session_options=options)
    optimizer = ort_api.Optimizer(os.path.join(out, "optimizer_model.onnx"), module)
    optimizer.set_learning_rate(LR)
    module.train()
    xn, yn = x.numpy(), y.numpy()

    def step():
        module(xn, yn)
        optimizer.step()
        module.lazy_reset_grad()
    return time_steps(step, steps, warmup)


def bench_dlc(dlc, model, x, classes, steps, warmup, work):
    path = os.path.join(work, "dlc_model.onnx")
    model.eval()
    torch.onnx.export(model, x, path, input_names=["x"], output_names=["y"],
                      training=torch.onnx.TrainingMode.PRESERVE, do_constant_folding=False,
                      opset_version=13)
    gen = os.path.join(work, "dlc_gen")
    report = os.path.join(work, "dlc_report.json")
    start = time.time()
    subprocess.run([dlc, "compile", path, "-o", gen, "--emit", "staticlib", "--name",
                    "bench_model", "--train", "--loss", "cross_entropy", "--optimizer",
                    "sgd:lr=%g" % LR, "--report-json", report], check=True)
    exe = os.path.join(work, "train_bench")
    subprocess.run([os.environ.get("CXX", "c++"), "-std=c++17", "-O2", "-I" + gen,
                    os.path.join(HERE, "train_bench.cpp"), os.path.join(gen, "libbench_model.a"),
                    "-o", exe], check=True)
    build = time.time() - start
    r = subprocess.run([exe, str(steps), str(warmup), str(classes)], check=True,
                       capture_output=True, text=True)
    times = [float(t) for t in r.stdout.split("\n")[0].split()]
    with open(report) as f:
        plan = json.load(f)
    return statistics.median(times), plan, build


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--dlc", default=os.path.join(ROOT, "build", "tools", "dlc"))
    p.add_argument("--work", default=os.path.join(ROOT, "build", "bench-train"))
    p.add_argument("--models", default="mlp,resnet18")
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--warmup", type=int, default=2)
    args = p.parse_args()
    rows = []
    for name in args.models.split(","):
        work = os.path.join(args.work, name)
        os.makedirs(work, exist_ok=True)
        model, x, classes = make_model(name)
        y = labels_for(x, classes)
        dlc_ms, plan, build = bench_dlc(os.path.abspath(args.dlc), model, x, classes,
                                        args.steps, args.warmup, work)
        print("%s: dlc compile + build %.1f s; training arena %d bytes, lower bound %d "
              "(%.3fx), saved for backward %d, state %d" % (
                  name, build, plan["train_arena_bytes"], plan["train_lower_bound_bytes"],
                  plan["train_arena_bytes"] / max(plan["train_lower_bound_bytes"], 1),
                  plan["saved_bytes"], plan["state_bytes"]))
        for threads in (1, 2):
            torch_ms = bench_torch(make_model(name)[0], x, y, threads, args.steps, args.warmup)
            ort_ms = bench_ort(make_model(name)[0], x, y, threads, args.steps, args.warmup, work)
            rows.append((name, threads, dlc_ms, torch_ms, ort_ms))
            sys.stdout.flush()
    print("\nmedian ms per training step (SGD, cross entropy); dlc's kernels are "
          "single-threaded, so its 2-thread figure is its 1-thread run")
    print("%-9s %7s %10s %14s %12s %12s" % ("model", "threads", "dlc", "PyTorch " +
                                            torch.__version__.split("+")[0], "ORT training",
                                            "dlc/fastest"))
    for name, threads, dlc_ms, torch_ms, ort_ms in rows:
        peers = [t for t in (torch_ms, ort_ms) if t is not None]
        print("%-9s %7d %10.2f %14.2f %12s %12.2f" % (
            name, threads, dlc_ms, torch_ms, "%.2f" % ort_ms if ort_ms else "n/a",
            dlc_ms / min(peers)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
