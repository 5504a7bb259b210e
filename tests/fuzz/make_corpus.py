#!/usr/bin/python3
"""Seed corpus for dlc_fuzz, made from the test models: the bundled digits classifier, every
ONNX backend node-test model whose ops dlc supports, and every hostile model of
tests/hostile/test_hostile.py. Files are named by content hash, as libFuzzer names its own.

usage: make_corpus.py --dlc DLC --out DIR
"""
import argparse
import glob
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile

import onnx

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
NODE_DATA = "/usr/share/libonnx-testdata/data/node"
MAX_BYTES = 64 * 1024  # keeps each fuzz iteration fast

sys.path.insert(0, os.path.join(ROOT, "tests", "hostile"))
import test_hostile  # noqa: E402  (the hostile cases' builders)


def add(out, data):
    if len(data) <= MAX_BYTES:
        with open(os.path.join(out, hashlib.sha1(data).hexdigest()), "wb") as f:
            f.write(data)
        return 1
    return 0


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--dlc", required=True)
    p.add_argument("--out", required=True)
    args = p.parse_args()
    shutil.rmtree(args.out, ignore_errors=True)
    os.makedirs(args.out)
    supported = set(subprocess.run([args.dlc, "ops"], capture_output=True, text=True,
                                   check=True).stdout.split())
    count = add(args.out, open(os.path.join(ROOT, "examples", "digits", "digits.onnx"),
                               "rb").read())
    for path in sorted(glob.glob(os.path.join(NODE_DATA, "*", "model.onnx"))):
        data = open(path, "rb").read()
        if {n.op_type for n in onnx.load_from_string(data).graph.node} <= supported:
            count += add(args.out, data)
    with tempfile.TemporaryDirectory() as scratch:
        for name, build, _ in test_hostile.CASES:
            folder = os.path.join(scratch, name)
            os.makedirs(folder)
            count += add(args.out, build(folder).SerializeToString())
    print("%d seed inputs in %s" % (count, args.out))


if __name__ == "__main__":
    main()
