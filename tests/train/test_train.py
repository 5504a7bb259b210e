#!/usr/bin/python3
"""Training steps compiled by `dlc compile --train`, checked against PyTorch.

Each case builds a model in PyTorch, exports it to ONNX (eval mode, no constant folding, so
initializer names are the parameters' names), runs `dlc run --train` on one batch and
compares with torch.optim on the same model, data and settings:
  * gradients: one step of plain SGD with lr=1, so the step's change of each weight is its
    gradient; every weight within 1e-4 of PyTorch autograd (max-abs diff / max-abs grad);
  * finite differences (float64, central) on tiny models, at 1e-2;
  * optimizers: 20 steps of SGD (momentum, weight decay, nesterov), Adam and AdamW, weights
    within 1e-4 (max-abs diff / max-abs weight);
  * every loss of every step within 1e-4 relative.
--check-memory builds with -DDLC_CHECK_MEMORY (dead memory poisoned) and must agree too.
`--list` names the cases, `-k PATTERN` runs only those whose name the regular expression
PATTERN matches (tests/testlib/cases.py).
A case run alone sees the same random data as in a full run.
"""
import argparse
import functools
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "testlib"))
from cases import Cases  # noqa: E402  (tests/testlib/cases.py)
from models import (Activations, BasicBlock, Elementwise, EmbedSlice, Indexing,  # noqa: E402
                    NormAttention, Recurrent, Resample, SavedForBackward, SmallCnn, TwoBranch)

failures = []


def check(ok, what):
    print(("ok    " if ok else "FAIL  ") + what)
    if not ok:
        failures.append(what)


def relative(a, b, scale):
    return float(np.max(np.abs(a - b))) / max(float(np.max(np.abs(scale))), 1e-12)


class Runner:
    def __init__(self, dlc, work, check_memory):
        self.mode = torch.onnx.TrainingMode.PRESERVE
        self.dlc, self.work = dlc, work
        # Generated training code must build warning-free too.
        self.env = dict(os.environ,
                        DLC_CXXFLAGS=(os.environ.get("DLC_CXXFLAGS", "") + " -Werror").strip())
        if check_memory:
            self.env["DLC_CXXFLAGS"] = (self.env.get("DLC_CXXFLAGS", "") +
                                        " -DDLC_CHECK_MEMORY").strip()

    def export(self, name, model, inputs, opset=13):
        path = os.path.join(self.work, name + ".onnx")
        torch.onnx.export(model, tuple(inputs), path, opset_version=opset,
                          input_names=["x%d" % i for i in range(len(inputs))],
                          output_names=["y"], do_constant_folding=False,
                          training=self.mode)
        return path

    def train(self, onnx, inputs, labels, steps, loss, optimizer, extra=()):
        """`dlc run --train`; the outputs by name (loss and trained weights), None on error."""
        d = tempfile.mkdtemp(dir=self.work)
        files = []
        for i, x in enumerate(list(inputs) + ([] if labels is None else [labels])):
            files.append(os.path.join(d, "in%d.npy" % i))
            np.save(files[-1], x)
        out = os.path.join(d, "out")
        given = files if labels is None else files[:-1]
        label_args = [] if labels is None else ["--labels", files[-1]]
        r = subprocess.run([self.dlc, "run", onnx] + given + ["--train"] + label_args +
                           ["--steps", str(steps),
                            "--loss", loss, "--optimizer", optimizer, "-o", out] + list(extra),
                           env=self.env, capture_output=True, text=True)
        if r.returncode != 0:
            print(r.stdout + r.stderr)
            return None
        result = {f[:-4]: np.load(os.path.join(out, f)) for f in os.listdir(out)}
        return result


def torch_losses(kind):
    return {
        "cross_entropy": lambda y, t: F.cross_entropy(y, t),
        "mse": lambda y, t: F.mse_loss(y, t),
        "l1": lambda y, t: F.l1_loss(y, t),
        "bce_with_logits": lambda y, t: F.binary_cross_entropy_with_logits(y, t),
    }[kind]


def reference(model, inputs, labels, steps, loss, make_optimizer):
    """Trains a copy of `model` in training mode; returns (losses, weights by name)."""
    model = model_copy(model)
    model.train()
    opt = make_optimizer(model.parameters())
    fn = torch_losses(loss)
    losses = []
    xs = [torch.from_numpy(x) for x in inputs]
    t = torch.from_numpy(labels)
    for _ in range(steps):
        opt.zero_grad()
        value = fn(model(*xs), t)
        losses.append(value.item())
        value.backward()
        opt.step()
    return np.array(losses, dtype=np.float32), {
        n: p.detach().numpy().copy() for n, p in model.named_parameters()}


def model_copy(model):
    import copy
    return copy.deepcopy(model)


def distinct_parameters(model):
    """Exporters merge equal initializers (a fresh BN's or LayerNorm's scale and running
    variance are all ones), which would tie parameters that PyTorch trains separately: make
    each distinct."""
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, (nn.BatchNorm2d, nn.LayerNorm)):
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.2, 0.2)
            if isinstance(m, nn.BatchNorm2d):
                m.running_mean.uniform_(-0.1, 0.1)
                m.running_var.uniform_(0.5, 1.5)
    return model


def gradient_case(run, name, model, inputs, labels, loss="cross_entropy", tol=1e-4, opset=13):
    """The setup (the parameters made distinct: this draws); returns the checks."""
    model = distinct_parameters(model).eval()

    def checks():
        onnx = run.export(name, model, [torch.from_numpy(x) for x in inputs], opset)
        got = run.train(onnx, inputs, labels, 1, loss, "sgd:lr=1")
        if got is None:
            return check(False, "%s: dlc run --train failed" % name)
        m = model_copy(model)
        m.train()
        value = torch_losses(loss)(m(*[torch.from_numpy(x) for x in inputs]),
                                   torch.from_numpy(labels))
        value.backward()
        check(abs(got["loss"][0] - value.item()) <= 1e-4 * max(1.0, abs(value.item())),
              "%s: loss %.6f vs PyTorch %.6f" % (name, got["loss"][0], value.item()))
        worst, count = 0.0, 0
        for n, p in m.named_parameters():
            key = n.replace("/", "_")
            if key not in got:
                check(False, "%s: no trained weight '%s' in dlc's output" % (name, n))
                continue
            grad = p.grad.numpy()
            dlc_grad = p.detach().numpy() - got[key]
            # A gradient that is zero in exact arithmetic (a bias before a batch norm) is float
            # noise in both: measure against the model's largest gradient there.
            floor = 1e-3 * max(float(np.abs(q.grad).max()) for q in m.parameters())
            err = relative(dlc_grad, grad, np.maximum(np.abs(grad).max(), floor))
            worst, count = max(worst, err), count + 1
            if err > tol:
                check(False, "%s: gradient of %s off by %.2e (relative)" % (name, n, err))
        check(count > 0 and worst <= tol,
              "%s: %d weight gradients match autograd (worst %.1e)" % (name, count, worst))
    return checks


def replayed_dropout_mask(seed, step, ratio, shape):
    """runtime/train.cpp's dropoutMaskF32, in numpy: splitmix64 keyed by (seed, step)."""
    m64 = np.uint64(0xFFFFFFFFFFFFFFFF)
    gamma = np.uint64(0x9e3779b97f4a7c15)

    def mix64(z):
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xbf58476d1ce4e5b9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94d049bb133111eb)
        return z ^ (z >> np.uint64(31))
    with np.errstate(over="ignore"):
        stream = mix64(np.uint64(seed) ^ mix64(np.uint64(step) + gamma)) & m64
        index = np.arange(1, int(np.prod(shape)) + 1, dtype=np.uint64)
        bits = mix64(stream + index * gamma)
    u = (bits >> np.uint64(40)).astype(np.float32) * np.float32(1.0 / 16777216.0)
    keep = np.float32(1.0) / (np.float32(1.0) - np.float32(ratio))
    return np.where(u < np.float32(ratio), np.float32(0), keep).reshape(shape)


class DropoutNet(nn.Module):
    """Linear, dropout, batch norm, linear; `mask` replaces dropout with a given mask."""

    def __init__(self, p):
        super().__init__()
        self.fc1, self.drop, self.bn = nn.Linear(6, 10), nn.Dropout(p), nn.BatchNorm1d(10)
        self.fc2 = nn.Linear(10, 3)
        self.mask = None

    def forward(self, x):
        h = torch.relu(self.fc1(x))
        h = h * self.mask if self.mask is not None else self.drop(h)
        return self.fc2(self.bn(h))


class OwnLoss(nn.Module):
    """A model whose output is its loss (`--loss none`): mean squared activation."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(5, 4)

    def forward(self, x):
        return (torch.tanh(self.fc(x)) ** 2).mean()


def own_loss_case(run, f32):
    """The setup (a model and its input drawn); returns the checks."""
    model = OwnLoss()
    x = f32(3, 5)

    def checks():
        onnx = run.export("own_loss", model, [torch.from_numpy(x)])
        got = run.train(onnx, [x], None, 1, "none", "sgd:lr=1")
        if got is None:
            return check(False, "own_loss: dlc run --train --loss none failed")
        value = model(torch.from_numpy(x))
        value.backward()
        worst = max(relative(q.detach().numpy() - got[n], q.grad.numpy(), q.grad.numpy())
                    for n, q in model.named_parameters())
        check(abs(got["loss"][0] - value.item()) <= 1e-5 and worst <= 1e-4,
              "own_loss (--loss none): loss and gradients match autograd (worst %.1e)" % worst)
    return checks


def dropout_case(run, p, x, labels):
    """A model exported in training mode (Dropout and BatchNormalization with training_mode):
    p = 0 against PyTorch, p > 0 against PyTorch with dlc's mask replayed. The setup (the
    model made, and exported: tracing its dropout draws); returns the checks."""
    name = "dropout_%g" % p
    model = DropoutNet(p)
    model.train()
    old_mode, run.mode = run.mode, torch.onnx.TrainingMode.TRAINING
    try:
        onnx = run.export(name, model, [torch.from_numpy(x)])
    finally:
        run.mode = old_mode

    def checks():
        got = run.train(onnx, [x], labels, 1, "cross_entropy", "sgd:lr=1")
        if got is None:
            return check(False, "%s: dlc run --train failed" % name)
        reference = model_copy(model)
        reference.train()
        if p > 0:
            reference.mask = torch.from_numpy(replayed_dropout_mask(0, 0, p, (8, 10)))
        value = F.cross_entropy(reference(torch.from_numpy(x)), torch.from_numpy(labels))
        value.backward()
        worst = max(relative(q.detach().numpy() - got[n], q.grad.numpy(), q.grad.numpy())
                    for n, q in reference.named_parameters())
        check(abs(got["loss"][0] - value.item()) <= 1e-4 * abs(value.item()) and worst <= 1e-4,
              "%s: loss and gradients match PyTorch%s (worst %.1e)"
              % (name, " with dlc's mask replayed" if p else "", worst))
    return checks


def finite_difference_case(run, name, model, inputs, labels, loss):
    """dlc's gradients against central differences of the float64 loss."""
    model.eval()
    onnx = run.export(name, model, [torch.from_numpy(x) for x in inputs])
    got = run.train(onnx, inputs, labels, 1, loss, "sgd:lr=1")
    if got is None:
        return check(False, "%s: dlc run --train failed" % name)
    m = model_copy(model).double()
    m.train()
    xs = [torch.from_numpy(x).double() for x in inputs]
    t = torch.from_numpy(labels)
    t = t if t.dtype == torch.int64 else t.double()
    fn = torch_losses(loss)
    worst = 0.0
    with torch.no_grad():
        for n, p in m.named_parameters():
            fd = np.zeros(p.shape)
            flat = p.view(-1)
            for i in range(flat.numel()):
                h = 1e-6
                old = flat[i].item()
                flat[i] = old + h
                up = fn(m(*xs), t).item()
                flat[i] = old - h
                down = fn(m(*xs), t).item()
                flat[i] = old
                fd.reshape(-1)[i] = (up - down) / (2 * h)
            base = dict(model.named_parameters())[n].detach().numpy()
            worst = max(worst, relative(base - got[n], fd, fd))
    check(worst <= 1e-2, "%s: gradients match finite differences (worst %.1e)" % (name, worst))


def optimizer_case(run, name, model, inputs, labels, spec, make_optimizer, steps=20,
                   loss="cross_entropy"):
    """The setup (the parameters made distinct: this draws); returns the checks."""
    model = distinct_parameters(model).eval()

    def checks():
        onnx = run.export(name, model, [torch.from_numpy(x) for x in inputs])
        got = run.train(onnx, inputs, labels, steps, loss, spec)
        if got is None:
            return check(False, "%s: dlc run --train failed" % name)
        losses, weights = reference(model, inputs, labels, steps, loss, make_optimizer)
        loss_err = relative(got["loss"], losses, losses)
        check(got["loss"].shape == (steps,) and loss_err <= 1e-4,
              "%s: %d losses match PyTorch (%.1e)" % (name, steps, loss_err))
        worst = max(relative(got[n], w, w) for n, w in weights.items())
        check(worst <= 1e-4, "%s: weights after %d steps of %s match torch.optim (%.1e)"
              % (name, steps, spec, worst))
    return checks


def cli(run, args):
    return subprocess.run([run.dlc] + args, env=run.env, capture_output=True, text=True)


def refused(run, name, args, expected, output=None):
    """A clear error (every expected fragment on stderr), a non-zero exit, nothing written."""
    r = cli(run, args)
    ok = r.returncode not in (0, None) and r.returncode > 0 and all(
        e in r.stderr for e in expected) and (output is None or not os.path.exists(output))
    check(ok, "%s: refused (%s)" % (name, r.stderr.strip().splitlines()[0] if r.stderr else
                                        "no message, exit %d" % r.returncode))


def onnx_model(path, nodes, inputs, outputs, initializers, opset=13):
    import onnx
    from onnx import helper
    graph = helper.make_graph(nodes, "g", inputs, outputs, initializers)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)]), path)
    return path


def attention_op_case(run, f32, classes):
    """The ONNX Attention op (opset 23: 3-D inputs, two heads, causal), which PyTorch 1.13
    cannot export: the model is written with onnx.helper and its gradients compared with the
    same computation in PyTorch. The setup (the data and weights drawn); returns the checks."""
    from onnx import TensorProto, helper, numpy_helper
    x, labels = f32(2, 4, 6), classes(2, 3)
    weights = {"wq": f32(6, 8) * 0.5, "wk": f32(6, 8) * 0.5, "wv": f32(6, 8) * 0.5,
               "wo": f32(8, 3) * 0.5}

    def checks():
        nodes = [helper.make_node("MatMul", ["x0", "w" + c], [c]) for c in "qkv"] + [
            helper.make_node("Attention", ["q", "k", "v"], ["a"], q_num_heads=2, kv_num_heads=2,
                             is_causal=1),
            helper.make_node("ReduceMean", ["a", "axis1"], ["pooled"], keepdims=0),
            helper.make_node("MatMul", ["pooled", "wo"], ["y"])]
        inits = [numpy_helper.from_array(v, k) for k, v in weights.items()]
        inits.append(numpy_helper.from_array(np.array([1], dtype=np.int64), "axis1"))
        path = onnx_model(os.path.join(run.work, "attention_op.onnx"), nodes,
                          [helper.make_tensor_value_info("x0", TensorProto.FLOAT, [2, 4, 6])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])], inits,
                          opset=23)
        got = run.train(path, [x], labels, 1, "cross_entropy", "sgd:lr=1")
        if got is None:
            return check(False, "attention_op: dlc run --train failed")
        w = {k: torch.tensor(v, requires_grad=True) for k, v in weights.items()}
        heads = lambda t: t.reshape(2, 4, 2, 4).transpose(1, 2)
        q, k, v = (heads(torch.from_numpy(x) @ w["w" + c]) for c in "qkv")
        scores = q @ k.transpose(2, 3) / 2.0
        scores = scores.masked_fill(~torch.ones(4, 4, dtype=torch.bool).tril(), float("-inf"))
        a = (torch.softmax(scores, -1) @ v).transpose(1, 2).reshape(2, 4, 8)
        loss = F.cross_entropy(a.mean(1) @ w["wo"], torch.from_numpy(labels))
        loss.backward()
        worst = max(relative(weights[k] - got[k], w[k].grad.numpy(), w[k].grad.numpy())
                    for k in weights)
        check(abs(got["loss"][0] - loss.item()) <= 1e-4 * max(1.0, abs(loss.item())) and
              worst <= 1e-4, "attention_op: loss %.6f vs PyTorch %.6f, gradients within %.1e" %
              (got["loss"][0], loss.item(), worst))
    return checks


def bad_input_cases(run, f32, classes):
    """The setup (the weights and data drawn, in the order the checks use them); returns the
    checks."""
    from onnx import TensorProto, helper, numpy_helper
    floor_w, mlp_model, vector_w = f32(3, 4), nn.Sequential(nn.Linear(4, 3)), f32(4)
    x_value, wrong_value = f32(2, 4), f32(3, 3)

    def checks():
        tensor = lambda n, shape, t=TensorProto.FLOAT: helper.make_tensor_value_info(n, t, shape)
        out = os.path.join(run.work, "refused_out")
        relu = onnx_model(os.path.join(run.work, "no_weights.onnx"),
                          [helper.make_node("Relu", ["x"], ["y"], name="r")], [tensor("x", [2, 3])],
                          [tensor("y", [2, 3])], [])
        refused(run, "a model without float weights",
                ["compile", relu, "-o", out, "--train", "--loss", "mse"],
                ["no float weights to train"], out)
        floor = onnx_model(
            os.path.join(run.work, "floor.onnx"),
            [helper.make_node("MatMul", ["x", "w"], ["h"], name="mm"),
             helper.make_node("Floor", ["h"], ["y"], name="floor1")],
            [tensor("x", [2, 3])], [tensor("y", [2, 4])],
            [numpy_helper.from_array(floor_w, "w")])
        refused(run, "an op without a gradient on the trainable path",
                ["compile", floor, "-o", out, "--train", "--loss", "mse"],
                ["node 'floor1' (Floor): has no gradient, but lies on the path from trainable "
                 "weight 'w' to the loss"], out)
        mlp = run.export("refused_mlp", mlp_model, [torch.zeros(2, 4)])
        refused(run, "a loss on a missing output",
                ["compile", mlp, "-o", out, "--train", "--loss", "mse", "--loss-output", "nope"],
                ["--loss-output 'nope' is not a graph output"], out)
        refused(run, "an unknown loss",
                ["compile", mlp, "-o", out, "--train", "--loss", "bogus"],
                ["--loss 'bogus' is not"], out)
        vector = onnx_model(
            os.path.join(run.work, "vector.onnx"),
            [helper.make_node("Mul", ["x", "w"], ["y"], name="m")], [tensor("x", [4])],
            [tensor("y", [4])], [numpy_helper.from_array(vector_w, "w")])
        refused(run, "cross entropy on a rank-1 output",
                ["compile", vector, "-o", out, "--train", "--loss", "cross_entropy"],
                ["cross_entropy needs an output of rank >= 2"], out)
        refused(run, "--loss none on a non-scalar output",
                ["compile", vector, "-o", out, "--train", "--loss", "none"],
                ["--loss none needs a scalar loss output"], out)
        refused(run, "a frozen name that names nothing",
                ["compile", mlp, "-o", out, "--train", "--loss", "mse", "--freeze", "0.wieght"],
                ["'0.wieght' (given to --freeze) names no float initializer"], out)
        refused(run, "everything frozen",
                ["compile", mlp, "-o", out, "--train", "--loss", "mse", "--freeze", "0."],
                ["every float weight is frozen"], out)
        refused(run, "--train without --loss", ["compile", mlp, "-o", out, "--train"],
                ["--train needs --loss"], out)
        refused(run, "an unknown optimizer setting",
                ["compile", mlp, "-o", out, "--train", "--loss", "mse", "--optimizer",
                 "sgd:lr=0.1,betas=2"], ["unknown setting 'betas'"], out)
        d = tempfile.mkdtemp(dir=run.work)
        x, wrong = os.path.join(d, "x.npy"), os.path.join(d, "labels.npy")
        np.save(x, x_value)
        np.save(wrong, wrong_value)
        refused(run, "labels whose shape cannot match",
                ["run", mlp, x, "--train", "--loss", "mse", "--labels", wrong, "--steps", "1",
                 "-o", os.path.join(d, "o")],
                ["training step failed: invalid argument", "labels: float32 [2x3]"])
    return checks


def inference_unchanged_case(run):
    """Without --train nothing of training reaches the library: the model's symbols and its
    arena are those measured before training existed (dlc 0.1.0, commit 3caf7da)."""
    import json
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    out = os.path.join(run.work, "digits_inference")
    report = os.path.join(run.work, "digits.json")
    r = cli(run, ["compile", os.path.join(root, "examples", "digits", "digits.onnx"), "-o", out,
                  "--emit", "staticlib", "--report-json", report])
    if r.returncode != 0:
        return check(False, "inference build of the example: " + r.stderr)
    with open(report) as f:
        plan = json.load(f)
    check(plan["arena_bytes"] == 116736 and "saved_bytes" not in plan,
          "inference arena unchanged (%d bytes, no saved-for-backward memory)"
          % plan["arena_bytes"])
    nm = subprocess.run(["nm", "-g", "--defined-only", os.path.join(out, "libdigits.a")],
                        capture_output=True, text=True).stdout
    model_symbols = sorted(line.split()[-1] for line in nm.splitlines()
                           if line.split() and "digits" in line.split()[-1] and
                           not line.endswith(":") and
                           "__to_chars" not in line)
    expected = sorted([
        "_ZN6digits5Model10runCheckedEPK10dlc_tensoriS3_i", "_ZN6digits5Model3runEPKPKvPKPv",
        "_ZN6digits5Model3runEPKfPf", "_ZN6digits5Model4initERKNS_7OptionsE",
        "_ZN6digits5ModelD1Ev", "_ZN6digits5ModelD2Ev", "digits_create", "digits_create_with", "digits_destroy",
        "digits_info", "digits_last_error", "digits_run", "digits_run_checked",
        "dlc_weights_digits"])
    check(model_symbols == expected,
          "inference library exports the same model symbols as before (no train step)")


def state_file_cases(run, f32, classes):
    """save_state / load_state resume training exactly; export-weights gives an ONNX model
    whose inference matches PyTorch after the same training; foreign or truncated state
    files are refused. The setup (the seed, the models made and the data drawn, in the order
    the checks use them); returns the checks."""
    torch.manual_seed(3)
    model = distinct_parameters(SmallCnn()).eval()
    x, labels = f32(4, 2, 8, 8), classes(4, 3)
    other_model, other_x, other_labels = nn.Sequential(nn.Linear(4, 3)), f32(2, 4), classes(2, 3)

    def checks():
        onnx = run.export("state_cnn", model, [torch.from_numpy(x)])
        spec = "sgd:lr=0.05,momentum=0.9"
        d = tempfile.mkdtemp(dir=run.work)
        state = os.path.join(d, "state.bin")
        first = run.train(onnx, [x], labels, 3, "cross_entropy", spec, ["--save-state", state])
        rest = run.train(onnx, [x], labels, 2, "cross_entropy", spec, ["--load-state", state])
        whole = run.train(onnx, [x], labels, 5, "cross_entropy", spec)
        if first is None or rest is None or whole is None:
            return check(False, "state round trip: dlc run --train failed")
        resumed = np.concatenate([first["loss"], rest["loss"]])
        check(np.array_equal(resumed, whole["loss"]) and
              all(np.array_equal(rest[k], whole[k]) for k in whole if k != "loss"),
              "3 steps, save, load, 2 steps == 5 steps (bit for bit)")
        state5 = os.path.join(d, "state5.bin")
        run.train(onnx, [x], labels, 5, "cross_entropy", spec, ["--save-state", state5])
        trained = os.path.join(d, "trained.onnx")
        r = cli(run, ["export-weights", state5, onnx, "-o", trained])
        check(r.returncode == 0, "export-weights: " + (r.stdout + r.stderr).strip())
        xin = os.path.join(d, "x.npy")
        np.save(xin, x)
        r = cli(run, ["run", trained, xin, "-o", os.path.join(d, "inference")])
        ref = model_copy(model)
        ref.train()
        opt = torch.optim.SGD(ref.parameters(), lr=0.05, momentum=0.9)
        for _ in range(5):
            opt.zero_grad()
            F.cross_entropy(ref(torch.from_numpy(x)), torch.from_numpy(labels)).backward()
            opt.step()
        ref.eval()
        expected = ref(torch.from_numpy(x)).detach().numpy()
        if r.returncode != 0:
            return check(False, "the exported model compiles and runs: " + r.stderr)
        got = np.load(os.path.join(d, "inference", "y.npy"))
        err = relative(got, expected, expected)
        check(err <= 1e-4, "exported model (weights and running statistics after 5 steps) "
                           "matches PyTorch in eval mode (%.1e)" % err)
        other = run.export("state_other", other_model, [torch.zeros(2, 4)])
        xo, yo = os.path.join(d, "xo.npy"), os.path.join(d, "yo.npy")
        np.save(xo, other_x)
        np.save(yo, other_labels)
        train_other = ["run", other, xo, "--train", "--loss", "cross_entropy", "--labels", yo,
                       "--steps", "1", "-o", os.path.join(d, "o")]
        refused(run, "a state file of another model", train_other + ["--load-state", state],
                ["state file truncated, damaged or of another model"])
        truncated = os.path.join(d, "truncated.bin")
        with open(state, "rb") as f, open(truncated, "wb") as g:
            g.write(f.read()[:-5])
        refused(run, "a truncated state file",
                ["run", onnx, xin, "--train", "--loss", "cross_entropy", "--optimizer", spec,
                 "--labels", yo, "--steps", "1", "-o", os.path.join(d, "o"),
                 "--load-state", truncated],
                ["state file truncated, damaged or of another model"])
        refused(run, "export-weights of a truncated state", ["export-weights", truncated, onnx,
                                                              "-o", os.path.join(d, "t.onnx")],
                ["truncated state file"], os.path.join(d, "t.onnx"))
        refused(run, "export-weights into another model", ["export-weights", state, other,
                                                            "-o", os.path.join(d, "t.onnx")],
                ["the state is of another model"], os.path.join(d, "t.onnx"))
    return checks


# ---- the cases ------------------------------------------------------------------------------

# The cases draw their data and initial weights in turn from seeded generators (numpy's and
# torch's), so each case is its setup (which draws) returning its checks: every case's setup
# runs, in order, and only the selected cases' checks, so a case run alone sees the data of a
# full run.
SUITE = Cases(replay_setup=True)
IDS = np.array([[1, 3, 3, 10, 0], [7, 7, 2, 5, 9]], dtype=np.int64)  # repeats add up


class Context:
    """The runner, the seeded generator, and the models and data that several cases share,
    made on first use."""

    def __init__(self, run):
        self.run = run
        self.rng = np.random.default_rng(0)

    def f32(self, *shape):
        return self.rng.standard_normal(shape).astype(np.float32)

    def classes(self, n, c):
        return self.rng.integers(0, c, n).astype(np.int64)

    @functools.cached_property
    def mlp(self):
        return nn.Sequential(nn.Linear(12, 16), nn.ReLU(), nn.Linear(16, 16), nn.Sigmoid(),
                             nn.Linear(16, 5))

    @functools.cached_property
    def mlp_x(self):
        return self.f32(6, 12)

    @functools.cached_property
    def opt_model(self):
        return nn.Sequential(nn.Linear(10, 12), nn.ReLU(), nn.Linear(12, 4))

    @functools.cached_property
    def opt_data(self):
        """(inputs, labels) of the optimizer cases."""
        return [self.f32(8, 10)], self.classes(8, 4)

    @functools.cached_property
    def dropout_data(self):
        return self.f32(8, 6), self.classes(8, 3)


def gradient(name, make, **options):
    """A gradient case; make(c) gives (model, inputs, labels), made or drawn in that order."""
    SUITE.add(name, lambda c: gradient_case(c.run, name, *make(c), **options))


def optimizer(name, make, spec, make_optimizer, **options):
    """An optimizer case; make(c) gives (model, inputs, labels), made or drawn in that order."""
    SUITE.add(name, lambda c: optimizer_case(c.run, name, *make(c), spec, make_optimizer,
                                             **options))


gradient("mlp", lambda c: (c.mlp, [c.mlp_x], c.classes(6, 5)))
gradient("mlp_mse", lambda c: (c.mlp, [c.mlp_x], c.f32(6, 5)), loss="mse")
gradient("mlp_l1", lambda c: (c.mlp, [c.mlp_x], c.f32(6, 5)), loss="l1")
gradient("mlp_bce", lambda c: (c.mlp, [c.mlp_x], (c.rng.random((6, 5)) > 0.5).astype(np.float32)),
         loss="bce_with_logits")
gradient("small_cnn", lambda c: (SmallCnn(), [c.f32(4, 2, 8, 8)], c.classes(4, 3)))
gradient("two_branch_concat", lambda c: (TwoBranch(), [c.f32(2, 3, 4, 4)], c.classes(2, 5)))
gradient("saved_for_backward", lambda c: (SavedForBackward(), [c.f32(4, 6)], c.classes(4, 3)))
gradient("resnet_basic_block", lambda c: (BasicBlock(), [c.f32(2, 4, 8, 8)], c.classes(2, 4)))
gradient("elementwise", lambda c: (Elementwise(), [c.f32(3, 4)], c.f32(3, 5)), loss="mse")
gradient("activations", lambda c: (Activations(), [c.f32(5, 4)], c.f32(5, 6)), loss="mse")
gradient("embedding_slices", lambda c: (EmbedSlice(), [IDS], c.classes(2, 4)))
gradient("indexing", lambda c: (Indexing(), [c.f32(4, 5)], c.classes(4, 3)), opset=16)
gradient("resample", lambda c: (Resample(), [c.f32(2, 2, 3, 3)], c.classes(2, 4)))
gradient("recurrent", lambda c: (Recurrent(), [c.f32(2, 6, 3)], c.classes(2, 3)))
SUITE.add("attention_op", lambda c: attention_op_case(c.run, c.f32, c.classes))
gradient("norm_attention", lambda c: (NormAttention(), [c.f32(2, 5, 8)], c.classes(2, 3)),
         opset=17)

SUITE.add("tiny_fd", lambda c: functools.partial(
    finite_difference_case, c.run, "tiny_fd", nn.Sequential(nn.Linear(3, 4), nn.Tanh(),
                                                            nn.Linear(4, 2)),
    [c.f32(2, 3)], c.classes(2, 2), "cross_entropy"))
SUITE.add("tiny_conv_fd", lambda c: functools.partial(
    finite_difference_case, c.run, "tiny_conv_fd",
    nn.Sequential(nn.Conv2d(1, 2, 2), nn.ReLU(), nn.Flatten(), nn.Linear(8, 2)),
    [c.f32(2, 1, 3, 3)], c.f32(2, 2), "mse"))

optimizer("sgd_momentum_wd", lambda c: (c.opt_model, *c.opt_data),
          "sgd:lr=0.05,momentum=0.9,weight_decay=0.01",
          lambda ps: torch.optim.SGD(ps, lr=0.05, momentum=0.9, weight_decay=0.01))
optimizer("sgd_nesterov", lambda c: (c.opt_model, *c.opt_data),
          "sgd:lr=0.05,momentum=0.8,nesterov=1",
          lambda ps: torch.optim.SGD(ps, lr=0.05, momentum=0.8, nesterov=True))
optimizer("adam", lambda c: (c.opt_model, *c.opt_data),
          "adam:lr=0.01,beta1=0.8,beta2=0.99,eps=1e-6,weight_decay=0.001",
          lambda ps: torch.optim.Adam(ps, lr=0.01, betas=(0.8, 0.99), eps=1e-6,
                                      weight_decay=0.001))
optimizer("adamw", lambda c: (c.opt_model, *c.opt_data), "adamw:lr=0.01,weight_decay=0.1",
          lambda ps: torch.optim.AdamW(ps, lr=0.01, weight_decay=0.1))
optimizer("cnn_bn_sgd", lambda c: (SmallCnn(), [c.f32(4, 2, 8, 8)], c.classes(4, 3)),
          "sgd:lr=0.1,momentum=0.9", lambda ps: torch.optim.SGD(ps, lr=0.1, momentum=0.9),
          steps=10)
for _p in (0.0, 0.3):
    SUITE.add("dropout_%g" % _p, lambda c, p=_p: dropout_case(c.run, p, *c.dropout_data))
SUITE.add("own_loss", lambda c: own_loss_case(c.run, c.f32))
SUITE.add("inference_unchanged", lambda c: functools.partial(inference_unchanged_case, c.run))
SUITE.add("state_file", lambda c: state_file_cases(c.run, c.f32, c.classes))
SUITE.add("bad_inputs", lambda c: bad_input_cases(c.run, c.f32, c.classes))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--dlc", help="the dlc to test (required unless --list)")
    p.add_argument("--check-memory", action="store_true")
    args = SUITE.parse_args(p, required=["--dlc"])
    torch.manual_seed(0)
    work = tempfile.mkdtemp(prefix="dlc-train-")
    try:
        SUITE.run(args, Context(Runner(os.path.abspath(args.dlc), work, args.check_memory)))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("%d failure(s)" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
