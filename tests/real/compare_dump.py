"""`dlc run --dump` and scripts/compare_ort.py, the accuracy bisect: on a model dlc computes
right, every value it held matches ONNX Runtime's; with one op planted wrong (the model dlc
compiles has a Sigmoid where the reference has a Tanh), the script names that node, and the
values before it still match.
"""
import argparse
import json
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

COMPARE = os.path.join(os.path.dirname(__file__), "..", "..", "scripts", "compare_ort.py")


def model(middle_op):
    """x -> MatMul -> Add -> middle_op -> Mul -> MatMul -> Softmax, with a second use of the
    Add's value (so that it is held, not fused away)."""
    rng = np.random.default_rng(7)
    weights = [
        numpy_helper.from_array(rng.standard_normal((8, 16)).astype(np.float32), "w1"),
        numpy_helper.from_array(rng.standard_normal(16).astype(np.float32), "b1"),
        numpy_helper.from_array(np.array(0.5, np.float32), "half"),
        numpy_helper.from_array(rng.standard_normal((16, 4)).astype(np.float32), "w2"),
    ]
    nodes = [
        helper.make_node("MatMul", ["x", "w1"], ["h"], name="first_matmul"),
        helper.make_node("Add", ["h", "b1"], ["biased"], name="bias"),
        helper.make_node(middle_op, ["biased"], ["act"], name="activation"),
        helper.make_node("Mul", ["act", "half"], ["scaled"], name="scale"),
        helper.make_node("MatMul", ["scaled", "w2"], ["logits"], name="second_matmul"),
        helper.make_node("Softmax", ["logits"], ["probs"], name="softmax", axis=-1),
        helper.make_node("ReduceSum", ["biased"], ["total"], name="total", keepdims=0),
    ]
    graph = helper.make_graph(
        nodes, "bisect", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 8])],
        [helper.make_tensor_value_info("probs", TensorProto.FLOAT, [3, 4]),
         helper.make_tensor_value_info("total", TensorProto.FLOAT, [])], weights)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--dlc", required=True)
    parser.add_argument("--work", required=True)
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    reference = os.path.join(args.work, "reference.onnx")
    planted = os.path.join(args.work, "planted.onnx")
    onnx.save(model("Tanh"), reference)
    onnx.save(model("Sigmoid"), planted)
    x = os.path.join(args.work, "x.npy")
    np.save(x, np.random.default_rng(3).standard_normal((3, 8)).astype(np.float32))
    failures = []

    def dump_and_compare(path, tag):
        out, dump = os.path.join(args.work, tag, "out"), os.path.join(args.work, tag, "dump")
        run = subprocess.run([args.dlc, "run", path, x, "-o", out, "--dump", dump],
                             capture_output=True, text=True)
        if run.returncode != 0:
            failures.append(f"{tag}: dlc run --dump failed: {run.stderr.strip()}")
            return None
        with open(os.path.join(dump, "index.json")) as f:
            index = json.load(f)
        # The dumped output is the value the run returned.
        last = [e for e in index if e["value"] == "probs"]
        if not last or not np.array_equal(np.load(os.path.join(dump, last[-1]["file"])),
                                          np.load(os.path.join(out, "probs.npy"))):
            failures.append(f"{tag}: the dump's last 'probs' is not the run's output")
        return subprocess.run([sys.executable, COMPARE, reference, dump, x],
                              capture_output=True, text=True)

    def expect(tag, result, code, must_contain, what):
        """Whether the script exited `code` saying `must_contain`; a failure otherwise."""
        if result is None:
            return False
        print(result.stdout.strip())
        if result.returncode == code and must_contain in result.stdout:
            return True
        failures.append(f"{tag}: expected {what}, got exit {result.returncode}: "
                        f"{result.stdout.strip()} {result.stderr.strip()}")
        return False

    same = dump_and_compare(reference, "same")
    if expect("reference model", same, 0, "match", "every value to match") and \
            int(same.stdout.split()[1]) < 4:
        failures.append(f"reference model: too few values compared: {same.stdout.strip()}")
    wrong = dump_and_compare(planted, "planted")
    if expect("planted model", wrong, 1, "node 'activation'", "node 'activation' named") and \
            "node 'bias'" in wrong.stdout.split("first departure:")[1].split(",")[0]:
        failures.append("planted model: a value before the planted node departed")
    for failure in failures:
        print("FAIL:", failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
