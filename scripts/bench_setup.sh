#!/bin/sh
# The benchmarks' Python: numpy (with its own OpenBLAS), onnxruntime, openvino, threadpoolctl
# and onnx from PyPI in build/bench-venv, apart from the system's packages so the peers are the
# upstream builds. PyTorch (for exporting the models) stays the system's /usr/bin/python3.
set -eu
cd "$(dirname "$0")/.."
if [ ! -x build/bench-venv/bin/python ]; then
  /usr/bin/python3 -m venv build/bench-venv
fi
build/bench-venv/bin/pip install -q numpy onnxruntime openvino threadpoolctl onnx
