#!/bin/sh
# The benchmarks' Python: numpy (with its own OpenBLAS), onnxruntime, openvino, threadpoolctl,
# onnx and sympy (ONNX Runtime's symbolic shape inference, for FLOP counts) from PyPI in
# build/bench-venv, apart from the system's packages so the peers are the upstream builds.
# PyTorch (for exporting the models) stays the system's, in build/export-venv.
set -eu
cd "$(dirname "$0")/.."
if [ ! -x build/bench-venv/bin/python ]; then
  /usr/bin/python3 -m venv build/bench-venv
fi
build/bench-venv/bin/pip install -q numpy onnxruntime openvino threadpoolctl onnx sympy
# Exporting the Hugging Face models: transformers 4.36 (the last to run on Debian's PyTorch
# 1.13) over the system's packages.
if [ ! -x build/export-venv/bin/python ]; then
  /usr/bin/python3 -m venv --system-site-packages build/export-venv
fi
build/export-venv/bin/pip install -q "transformers==4.36.2"
