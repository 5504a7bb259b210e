#!/usr/bin/python3
"""Training steps compiled with `dlc compile --train --target cuda`, checked against the CPU
training step of the same model (`dlc run --train`, itself checked against PyTorch by
tests/train): a few steps on one batch, then each step's loss and every trained weight must
match within --tol. The models together cover every gradient kernel and both optimizers:
the bundled digits CNN (Conv, MaxPool, Gemm, cross entropy, Adam), a CNN with batch norm in
training mode, LeakyRelu, AvgPool, Clip, Dropout and global average pooling (BCE with logits,
SGD with Nesterov momentum and weight decay), and an embedding model (Gather, Slice, Tanh,
Softmax, mean; MSE, AdamW), a Gemm into ONNX's Mish (opset 18, written with onnx.helper:
PyTorch 1.13 exports Mish as its composition), and a MobileNetV2-style network whose feature layers are frozen
(--trainable: only the classifier trains), so its depthwise and pointwise convolutions have
constant weights, the case the CPU pipeline runs channels-last. The runner (cuda_train_runner.cpp) also checks save/load of the
state. --emulate runs the generated kernels on the host; --nvcc builds them for a GPU;
--check-nvcc only compiles them. Each case's inputs, CPU results and CUDA sources are
prepared in a folder of --work, which --from-prepared takes on a machine without dlc."""
import argparse
import os
import shutil
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
from run_cuda_model import add_build_arguments, model_build, run, skipped  # noqa: E402

STEPS = 3


def torch_models(work):
    """(name, onnx path, inputs, labels, loss, optimizer, extra flags) of the models exported
    from PyTorch."""
    import torch
    from torch import nn

    torch.manual_seed(0)
    rng = np.random.default_rng(0)

    class ConvNet(nn.Module):
        def __init__(self):
            super().__init__()
            # Batch norms over 100, 9 and 1 elements per channel row: the CUDA kernels' row
            # sums take 8 at a time, then the rest.
            self.body = nn.Sequential(
                nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.LeakyReLU(0.1),
                nn.AvgPool2d(2), nn.Conv2d(8, 8, 3, stride=2, padding=1), nn.BatchNorm2d(8),
                nn.ReLU6(), nn.Dropout(0.25), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                nn.BatchNorm1d(8), nn.Linear(8, 4))

        def forward(self, x):
            return self.body(x)

    class Embedder(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed, self.fc = nn.Embedding(10, 6), nn.Linear(6, 3)

        def forward(self, tokens):
            h = torch.tanh(self.embed(tokens)[:, 1:]).mean(dim=1)
            return torch.softmax(self.fc(h), dim=1)

    class InvertedResidual(nn.Module):
        def __init__(self, channels, expand):
            super().__init__()
            hidden = channels * expand
            self.body = nn.Sequential(
                nn.Conv2d(channels, hidden, 1), nn.ReLU6(),
                nn.Conv2d(hidden, hidden, 3, padding=1, groups=hidden), nn.ReLU6(),
                nn.Conv2d(hidden, channels, 1))

        def forward(self, x):
            return x + self.body(x)

    class FrozenMobileNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.features = nn.Sequential(
                nn.Conv2d(3, 8, 3, stride=2, padding=1), nn.ReLU6(),
                nn.Conv2d(8, 8, 3, padding=1, groups=8), nn.ReLU6(), nn.Conv2d(8, 16, 1),
                InvertedResidual(16, 4), InvertedResidual(16, 2))
            self.classifier = nn.Linear(16, 5)

        def forward(self, x):
            return self.classifier(self.features(x).mean(dim=(2, 3)))

    cases = []
    for name, model, inputs, labels, loss, optimizer, extra in (
            ("convnet", ConvNet(), [rng.standard_normal((4, 3, 10, 10), dtype=np.float32)],
             (rng.random((4, 4)) > 0.5).astype(np.float32), "bce_with_logits",
             "sgd:lr=0.1,momentum=0.9,nesterov=1,weight_decay=0.01", []),
            ("embedder", Embedder(), [rng.integers(0, 10, (5, 4), dtype=np.int64)],
             rng.random((5, 3), dtype=np.float32), "mse", "adamw:lr=0.01,weight_decay=0.1", []),
            ("frozen_mobilenet", FrozenMobileNet(),
             [rng.standard_normal((2, 3, 16, 16), dtype=np.float32)],
             rng.integers(0, 5, 2, dtype=np.int64), "cross_entropy", "sgd:lr=0.1,momentum=0.9",
             ["--trainable", "classifier"])):
        model.train()
        path = os.path.join(work, name + ".onnx")
        torch.onnx.export(model, tuple(torch.from_numpy(x) for x in inputs), path,
                          opset_version=13, input_names=["x%d" % i for i in range(len(inputs))],
                          output_names=["y"], do_constant_folding=False,
                          training=torch.onnx.TrainingMode.TRAINING)
        cases.append((name, path, inputs, labels, loss, optimizer, extra))
    return cases


def mish_case(work):
    """Gemm then Mish (dlc.mish and its gradient kernel), MSE, SGD."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(2)
    weight = numpy_helper.from_array(rng.standard_normal((6, 5)).astype(np.float32), "w")
    bias = numpy_helper.from_array(rng.standard_normal(5).astype(np.float32), "b")
    graph = helper.make_graph(
        [helper.make_node("Gemm", ["x0", "w", "b"], ["h"]), helper.make_node("Mish", ["h"], ["y"])],
        "mish", [helper.make_tensor_value_info("x0", TensorProto.FLOAT, [4, 6])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 5])], [weight, bias])
    path = os.path.join(work, "mish.onnx")
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)]), path)
    return ("mish", path, [rng.standard_normal((4, 6), dtype=np.float32) * 2],
            rng.standard_normal((4, 5), dtype=np.float32), "mse", "sgd:lr=0.1", [])


def digits_case():
    rng = np.random.default_rng(1)
    return ("digits", os.path.join(ROOT, "examples", "digits", "digits.onnx"),
            [rng.standard_normal((16, 1, 8, 8), dtype=np.float32)],
            rng.integers(0, 10, 16, dtype=np.int64), "cross_entropy", "adam:lr=0.01", [])


def prepare_case(args, case):
    """Writes the case's folder: its train inputs (in0.npy, ..., labels last), the CPU step's
    results (cpu/) and the generated CUDA sources (generated/). False after a failed step."""
    name, onnx, inputs, labels, loss, optimizer, extra = case
    folder = os.path.join(args.work, name)
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    files = []
    for i, x in enumerate(inputs + [labels]):
        files.append(os.path.join(folder, "in%d.npy" % i))
        np.save(files[-1], x)
    training = ["--train", "--loss", loss, "--optimizer", optimizer] + extra
    # The CPU step's build goes to dlc's cache, out of the folder (which may be carried to a
    # GPU machine).
    return run([args.dlc, "run", onnx] + files[:-1] + ["--labels", files[-1], "--steps",
                                                        str(STEPS), "-o",
                                                        os.path.join(folder, "cpu")] +
               training) == 0 and run([args.dlc, "compile", onnx, "-o",
                                      os.path.join(folder, "generated"), "--target", "cuda",
                                      "--name", name] + training) == 0


def check_case(args, name, folder):
    """Builds the runner on the sources prepared in `folder`, runs it on the train inputs there
    and compares with the CPU step's results; builds in args.work/name."""
    work = os.path.join(args.work, name)
    os.makedirs(work, exist_ok=True)
    generated = os.path.join(folder, "generated")
    built = model_build(argparse.Namespace(**dict(vars(args), work=work,
                                                  generated=generated if args.from_prepared
                                                  else None)), generated, name)
    if built is None:
        return False
    if args.check_nvcc:
        return True
    build, sources, libs = built
    exe = os.path.join(work, "train_runner")
    if run(build + [os.path.join(HERE, "cuda_train_runner.cpp")] + sources + ["-o", exe] +
           libs) != 0:
        return False
    out = os.path.join(work, "cuda")
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    files = sorted((f for f in os.listdir(folder) if f.startswith("in")),
                   key=lambda f: int(f[2:-4]))
    if run([exe, out, str(STEPS)] + [os.path.join(folder, f) for f in files]) != 0:
        return False
    cpu = os.path.join(folder, "cpu")
    expected = sorted(f for f in os.listdir(cpu) if f.endswith(".npy"))
    got = sorted(f for f in os.listdir(out) if f.endswith(".npy"))
    if expected != got:
        print("FAILED %s: the CPU step wrote %s, the CUDA step %s" % (name, expected, got))
        return False
    worst, where = 0.0, ""
    for f in expected:
        a, b = np.load(os.path.join(out, f)), np.load(os.path.join(cpu, f))
        error = float(np.max(np.abs(a - b) / (np.abs(b) + 1.0))) if a.size else 0.0
        if not np.all(np.isfinite(a)):
            error = float("inf")
        if error > worst or not where:
            worst, where = error, f
    ok = worst <= args.tol
    print("%s %s: %d steps, losses and %d trained weights match the CPU step (worst %.1e in %s)"
          % ("ok" if ok else "FAILED", name, STEPS, len(expected) - 1, worst, where))
    return ok


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--dlc", help="dlc, which prepares the cases (in --work)")
    p.add_argument("--from-prepared", metavar="DIR",
                   help="the cases a run with --dlc prepared in its --work (a GPU machine "
                        "without dlc, PyTorch or the CPU step gets them from one with)")
    p.add_argument("--work", required=True)
    add_build_arguments(p)
    p.add_argument("--tol", type=float, default=1e-4,
                   help="largest |cuda - cpu| / (|cpu| + 1) of any loss or weight")
    args = p.parse_args()
    if skipped(args):
        return 77
    os.makedirs(args.work, exist_ok=True)
    if args.from_prepared:
        names = sorted(n for n in os.listdir(args.from_prepared)
                       if os.path.isdir(os.path.join(args.from_prepared, n, "generated")))
        folders = [os.path.join(args.from_prepared, n) for n in names]
    else:
        cases = [digits_case(), mish_case(args.work)] + torch_models(args.work)
        if not all(prepare_case(args, case) for case in cases):
            return 1
        names = [case[0] for case in cases]
        folders = [os.path.join(args.work, n) for n in names]
    failed = [n for n, folder in zip(names, folders) if not check_case(args, n, folder)]
    if failed:
        print("FAILED: " + ", ".join(failed))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
