#!/usr/bin/python3
"""The training half of the bundled example: the digits CNN from a fresh (seeded)
initialization and sklearn's 8x8 digits, for examples/digits/train.cpp.

Writes (relative to the repository root, or --outdir):
  examples/digits/digits_train.onnx   opset 13, untrained, batch 64, batch norm kept
                                      (TrainingMode.PRESERVE: nothing folded)
  examples/digits/train_images.npy    float32 [1344,1,8,8] (21 batches of 64), shuffled once
  examples/digits/train_labels.npy    int64 [1344]
  examples/digits/test_images.npy     float32 [448,1,8,8] (7 batches of 64)
  examples/digits/test_labels.npy     int64 [448]
The split is make_digits_example.py's; partial batches are left out because a compiled
model's shapes are fixed.
"""
import argparse
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_digits_example import SEED, DigitsCNN, digits_split  # noqa: E402

TRAIN_BATCH = 64


def main():
    repo_root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--outdir", default=os.path.join(repo_root, "examples", "digits"))
    args = ap.parse_args()
    torch.manual_seed(SEED)
    x_train, x_test, y_train, y_test = digits_split()
    order = np.random.default_rng(SEED).permutation(len(x_train))
    keep = len(x_train) // TRAIN_BATCH * TRAIN_BATCH
    x_train, y_train = x_train[order][:keep], y_train[order][:keep]
    keep = len(x_test) // TRAIN_BATCH * TRAIN_BATCH
    x_test, y_test = x_test[:keep], y_test[:keep]
    model = DigitsCNN().eval()
    os.makedirs(args.outdir, exist_ok=True)
    torch.onnx.export(model, torch.from_numpy(x_train[:TRAIN_BATCH]),
                      os.path.join(args.outdir, "digits_train.onnx"), opset_version=13,
                      do_constant_folding=False, input_names=["image"],
                      output_names=["logits"], training=torch.onnx.TrainingMode.PRESERVE)
    for name, array in (("train_images", x_train), ("train_labels", y_train),
                        ("test_images", x_test), ("test_labels", y_test)):
        np.save(os.path.join(args.outdir, name + ".npy"), np.ascontiguousarray(array))
    print("wrote digits_train.onnx, %d training and %d test images to %s"
          % (len(x_train), len(x_test), args.outdir))
    return 0


if __name__ == "__main__":
    sys.exit(main())
