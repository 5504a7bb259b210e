#!/bin/sh
# The real-model suites' Python, VENV: ONNX Runtime (the reference, and the transformer
# optimizer whose outputs are tested), onnx and transformers (the models the optimizer is given
# are built from its configs) from PyPI, beside Debian's torch (--system-site-packages). numpy
# stays below 2: Debian's torch is built against 1.x.
set -eu
venv=$1
wanted='onnx==1.23.2 onnxruntime==1.32.0 transformers==4.36.2'
if ! "$venv/bin/python" - "$wanted" 2>/dev/null <<'PY'
import sys
from importlib.metadata import version
sys.exit(any(version(p.split("==")[0]) != p.split("==")[1] for p in sys.argv[1].split()))
PY
then
  /usr/bin/python3 -m venv --system-site-packages "$venv"
  # shellcheck disable=SC2086
  "$venv/bin/pip" install -q --disable-pip-version-check $wanted 'numpy<2'
fi
