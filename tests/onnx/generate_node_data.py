#!/usr/bin/env python3
"""Generates the ONNX backend node tests of the installed onnx package (model.onnx and
test_data_set_0 per test) into OUT/node, the same way `python -m onnx.backend.test.cmd_tools
generate-data` writes its model tests: the PyPI wheel ships the test definitions, not the data.
Regenerates only when OUT was made by another onnx version.

    build/onnx-venv/bin/python tests/onnx/generate_node_data.py OUT
"""
import argparse
import os
import shutil
import sys

import onnx
import onnx.backend.test.case.model as model_cases
import onnx.backend.test.case.node as node_cases
import onnx.backend.test.cmd_tools as cmd_tools


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("out")
    out = p.parse_args().out
    stamp = os.path.join(out, "node", ".onnx-version")
    if os.path.exists(stamp) and open(stamp).read().strip() == onnx.__version__:
        print("node tests of onnx %s already in %s" % (onnx.__version__, out))
        return 0
    shutil.rmtree(os.path.join(out, "node"), ignore_errors=True)
    cases = node_cases.collect_testcases(None)
    # generate_data writes whatever collect_testcases returns; hand it the node cases.
    model_cases.collect_testcases = lambda: cases
    cmd_tools.generate_data(argparse.Namespace(output=out))
    with open(stamp, "w") as f:
        f.write(onnx.__version__ + "\n")
    print("generated %d node tests of onnx %s in %s" % (len(cases), onnx.__version__, out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
