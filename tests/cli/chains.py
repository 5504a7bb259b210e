"""Fused elementwise chains as generated code: the same bits as the runtime's interpreter
(--fused-chains interpret) and numpy's values, on chains with every kind of step (unary,
binary, Clip, LeakyRelu, vector math first, in the middle and last), every way of reading an
input (same shape, scalar, per channel), lengths that end in partial blocks and chunks, and
one and two threads."""
import os
import subprocess

import numpy as np
from onnx import TensorProto, helper, numpy_helper

from clicheck import check, run  # noqa: E402  (tests/cli/clicheck.py)
from models import save  # noqa: E402  (tests/cli/models.py)


def erf(x):
    from math import erf as scalar_erf
    return np.vectorize(scalar_erf)(x.astype(np.float64))


def chain_models(rng):
    """(name, model, input, numpy's output) for each chain."""
    f32 = TensorProto.FLOAT
    cases = []
    # GELU as exporters write it: math in the middle, scalar constants, 222 elements.
    shape = [2, 3, 37]
    x = rng.standard_normal(shape).astype(np.float32) * 3
    nodes = [helper.make_node("Div", ["x", "sqrt2"], ["d"]), helper.make_node("Erf", ["d"], ["e"]),
             helper.make_node("Add", ["e", "one"], ["a"]), helper.make_node("Mul", ["x", "a"], ["m"]),
             helper.make_node("Mul", ["m", "half"], ["y"])]
    consts = [numpy_helper.from_array(np.array(v, np.float32), n)
              for n, v in (("sqrt2", 1.4142135), ("one", 1.0), ("half", 0.5))]
    want = x * (erf(x / 1.4142135) + 1) * 0.5
    cases.append(("gelu", nodes, consts, shape, x, want))
    # Per-channel scale and shift, Relu, then x * sigmoid: gathered inputs, math last but one.
    shape = [1, 8, 5, 7]
    x = rng.standard_normal(shape).astype(np.float32)
    s = rng.standard_normal((1, 8, 1, 1)).astype(np.float32)
    b = rng.standard_normal((1, 8, 1, 1)).astype(np.float32)
    nodes = [helper.make_node("Mul", ["x", "s"], ["xs"]), helper.make_node("Add", ["xs", "b"], ["t"]),
             helper.make_node("Relu", ["t"], ["r"]), helper.make_node("Sigmoid", ["r"], ["g"]),
             helper.make_node("Mul", ["r", "g"], ["y"])]
    consts = [numpy_helper.from_array(s, "s"), numpy_helper.from_array(b, "b")]
    r = np.maximum(x.astype(np.float64) * s + b, 0)
    cases.append(("affine_silu", nodes, consts, shape, x, r / (1 + np.exp(-r))))
    # Clip, Tanh, LeakyRelu and Exp last over 3 chunks and a bit: math first and last.
    shape = [3, 261]
    x = rng.standard_normal(shape).astype(np.float32) * 2
    nodes = [helper.make_node("Tanh", ["x"], ["h"]), helper.make_node("Clip", ["h", "lo", "hi"], ["c"]),
             helper.make_node("LeakyRelu", ["c"], ["l"], alpha=0.1),
             helper.make_node("Sub", ["l", "x"], ["d"]), helper.make_node("Exp", ["d"], ["y"])]
    consts = [numpy_helper.from_array(np.array(v, np.float32), n)
              for n, v in (("lo", -0.5), ("hi", 0.75))]
    c = np.clip(np.tanh(x.astype(np.float64)), -0.5, 0.75)
    cases.append(("clip_exp", nodes, consts, shape, x,
                  np.exp(np.where(c < 0, 0.1 * c, c) - x)))
    # Broadcast inputs each read its own way (FusedChains.cpp, chainInput): a bias whose
    # period is a multiple of the 256-element chunk as a pointer into it, a per-channel value
    # whose repeat is as a value per chunk; a period of 384 and a repeat of 7 * 7 * 384 are
    # gathered.
    for name, width, scale_shape in (("broadcast_by_index", 512, (2, 4, 1, 1, 1)),
                                     ("broadcast_gathered", 384, (1, 4, 1, 1, 1))):
        shape = [2, 4, 7, 7, width]
        x = rng.standard_normal(shape).astype(np.float32)
        bias = rng.standard_normal((width,)).astype(np.float32)
        scale = rng.standard_normal(scale_shape).astype(np.float32)
        nodes = [helper.make_node("Add", ["x", "bias"], ["a"]),
                 helper.make_node("Mul", ["a", "scale"], ["y"])]
        consts = [numpy_helper.from_array(bias, "bias"), numpy_helper.from_array(scale, "scale")]
        cases.append((name, nodes, consts, shape, x, (x.astype(np.float64) + bias) * scale))
    for name, nodes, consts, shape, x, want in cases:
        graph = helper.make_graph(nodes, name, [helper.make_tensor_value_info("x", f32, shape)],
                                  [helper.make_tensor_value_info("y", f32, shape)], consts)
        yield name, helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), x, want


def check_fused_chains(dlc, work):
    rng = np.random.default_rng(5)
    for name, model, x, want in chain_models(rng):
        path = save(model, os.path.join(work, "chain_%s.onnx" % name))
        xin = os.path.join(work, "chain_%s_x.npy" % name)
        np.save(xin, x)
        outputs, sources = {}, {}
        for how in ("code", "interpret"):
            src = os.path.join(work, "chain_%s_%s_src" % (name, how))
            r = run(dlc, "compile", path, "-o", src, "--name", "chain", "--fused-chains", how)
            sources[how] = open(os.path.join(src, "chain.cpp")).read() if r.returncode == 0 else ""
            for threads in ("1", "2"):
                out = os.path.join(work, "chain_%s_%s_%s" % (name, how, threads))
                env = dict(os.environ, DLC_THREADS=threads)
                r = subprocess.run([dlc, "run", path, xin, "-o", out, "--fused-chains", how],
                                   capture_output=True, text=True, env=env)
                outputs[how, threads] = (np.load(os.path.join(out, "y.npy"))
                                         if r.returncode == 0 else None)
                if r.returncode != 0:
                    print(r.stderr)
        check("DLC_FUSED_CHAIN(" in sources["code"] and "fusedElementwiseF32" not in sources["code"]
              and "fusedElementwiseF32" in sources["interpret"],
              "%s: one fused chain, as code by default and interpreted on request" % name)
        if name == "broadcast_by_index":
            check("in[1] + begin % 512;" in sources["code"] and
                  "in[2][begin / 25088 % 8];" in sources["code"],
                  "%s: inputs read by index arithmetic, not gathered" % name)
        got = list(outputs.values())
        check(all(g is not None for g in got) and
              all(np.array_equal(g, got[0]) for g in got[1:]),
              "%s: generated code and interpreter give the same bits, on 1 and 2 threads" % name)
        if got[0] is not None:
            # Relative to the output's scale: GELU's float cancellation far left is inherent.
            error = float(np.max(np.abs(got[0] - want)) / np.max(np.abs(want)))
            check(error < 1e-6, "%s: numpy's values (error %.2g of the scale)" % (name, error))

