#!/usr/bin/python3
"""Run-time data errors on the CUDA target: a model with two Gathers of one index input (over
rows, 5 of them, and over columns, 3) is built with run_cuda_model.py. An index valid for the
first and out of range for the second must make the run fail with DLC_INVALID_INPUT_DATA
naming the second node; the next run on the same model, with good indices, must match NumPy.
The arguments after the work directory go to run_cuda_model.py (--emulate, or --nvcc
--skip-without-gpu)."""
import os
import subprocess
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper, save

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    if len(sys.argv) < 3:
        print("usage: test_cuda_faults.py WORK_DIR RUN_CUDA_MODEL_ARGS...")
        return 2
    work, rest = sys.argv[1], sys.argv[2:]
    model_dir = os.path.join(work, "model")
    os.makedirs(model_dir, exist_ok=True)
    data = np.arange(15, dtype=np.float32).reshape(5, 3)
    graph = helper.make_graph(
        [helper.make_node("Gather", ["data", "idx"], ["rows"], name="rows", axis=0),
         helper.make_node("Gather", ["data", "idx"], ["cols"], name="cols", axis=1)],
        "faults",
        [helper.make_tensor_value_info("idx", TensorProto.INT64, [4])],
        [helper.make_tensor_value_info("rows", TensorProto.FLOAT, [4, 3]),
         helper.make_tensor_value_info("cols", TensorProto.FLOAT, [5, 4])],
        [numpy_helper.from_array(data, "data")])
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]),
         os.path.join(model_dir, "model.onnx"))
    good = np.array([0, -1, 2, 1], np.int64)
    np.save(os.path.join(model_dir, "input.npy"), good)
    np.save(os.path.join(model_dir, "expected.npy"), data[good])
    bad = os.path.join(model_dir, "bad.npy")
    np.save(bad, np.array([0, 4, 1, 2], np.int64))
    return subprocess.run(
        [sys.executable, os.path.join(HERE, "run_cuda_model.py"), "--model-dir", model_dir,
         "--work", os.path.join(work, "build"), "--name", "faults",
         "--fault", "node 'cols' (Gather): index out of range", bad] + rest).returncode


if __name__ == "__main__":
    sys.exit(main())
