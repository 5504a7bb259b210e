"""What the real-model suites share: run a model through ONNX Runtime and through `dlc run` on
the same seeded inputs and compare, the error relative to each output's scale.

The scale is the output's largest magnitude, with a floor (1e-3) so that outputs near zero
are compared absolutely rather than by a ratio of tiny numbers.
"""
import os
import subprocess

import numpy as np
import onnx
import onnxruntime as ort

SCALE_FLOOR = 1e-3


def ort_outputs(path, feeds):
    """ONNX Runtime's outputs by name, one thread, graph optimizations off (the model as it is
    written is the reference)."""
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    options.intra_op_num_threads = 1
    session = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    return dict(zip(names, session.run(names, feeds)))


def dlc_outputs(dlc, path, feeds, work, pins=()):
    """`dlc run`'s outputs by name, or the error text when it fails. `pins` are extra
    arguments (--dim NAME=N, --input-shape ...)."""
    os.makedirs(work, exist_ok=True)
    inputs = []
    for name, value in feeds.items():
        inputs.append(os.path.join(work, "in_%d.npy" % len(inputs)))
        np.save(inputs[-1], value)
    out = os.path.join(work, "out")
    r = subprocess.run([dlc, "run", path, *inputs, "-o", out, *pins], capture_output=True,
                       text=True)
    if r.returncode != 0:
        return None, r.stderr.strip()
    return {name[:-4]: np.load(os.path.join(out, name)) for name in os.listdir(out)
            if name.endswith(".npy")}, ""


def relative_error(got, want):
    """max |got - want| / max(max |want|, SCALE_FLOOR); inf when shapes or dtypes differ."""
    if got.shape != want.shape or got.dtype != want.dtype:
        return float("inf")
    if got.dtype == np.bool_ or np.issubdtype(got.dtype, np.integer):
        return 0.0 if np.array_equal(got, want) else float("inf")
    want64 = want.astype(np.float64)
    scale = max(float(np.abs(want64).max(initial=0.0)), SCALE_FLOOR)
    return float(np.abs(got.astype(np.float64) - want64).max(initial=0.0)) / scale


def compare(dlc, path, feeds, work, pins=()):
    """(worst relative error over the outputs, a one-line description). The error is inf when
    dlc fails (the description then says why) or an output is missing."""
    want = ort_outputs(path, feeds)
    got, error = dlc_outputs(dlc, path, feeds, work, pins)
    if got is None:
        return float("inf"), "dlc failed: " + " | ".join(error.splitlines()[:3])
    worst, where = 0.0, ""
    for name, value in want.items():
        e = relative_error(got[name], value) if name in got else float("inf")
        if e >= worst:
            worst, where = e, name
    return worst, "worst output %r: relative error %.2e" % (where, worst)


def graph_inputs(path):
    """(name, numpy dtype, dims with symbolic ones as their names) for each graph input that is
    not an initializer."""
    model = onnx.load(path, load_external_data=False)
    initializers = {t.name for t in model.graph.initializer}
    result = []
    for i in model.graph.input:
        if i.name in initializers:
            continue
        t = i.type.tensor_type
        dims = [d.dim_value if d.HasField("dim_value") and d.dim_value > 0 else
                (d.dim_param or "?") for d in t.shape.dim]
        result.append((i.name, onnx.helper.tensor_dtype_to_np_dtype(t.elem_type), dims))
    return result
