#!/usr/bin/python3
"""Train a small CNN on sklearn's 8x8 digits and export it as the dlc example.

Writes (relative to the repository root, or --outdir):
  examples/digits/digits.onnx       opset 13, input "image" [16,1,8,8], output "logits" [16,10]
  examples/digits/samples.npy       float32 [16,1,8,8] test images (pixel values scaled to [0,1])
  examples/digits/labels.npy        int64 [16] their labels
  examples/digits/torch_logits.npy  float32 [16,10] PyTorch's logits for the samples

Deterministic (fixed seeds, fixed split, single thread) and fast (a few seconds on one core).
"""
import argparse
import os
import random
import sys
import time

import numpy as np
import torch
import torch.nn as nn
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

SEED = 0
BATCH = 16
EPOCHS = 30
OPSET = 13


class DigitsCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 8, 3, padding=1),
            nn.BatchNorm2d(8),
            nn.ReLU(),
            nn.Conv2d(8, 16, 3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(2),
        )
        self.classifier = nn.Sequential(
            nn.Flatten(),
            nn.Linear(16 * 4 * 4, 32),
            nn.ReLU(),
            nn.Linear(32, 10),
        )

    def forward(self, x):
        return self.classifier(self.features(x))


def digits_split():
    """scikit-learn's 8x8 digits scaled to [0, 1], split 75/25 (stratified, seeded):
    x_train, x_test (float32 [n,1,8,8]), y_train, y_test (int64)."""
    digits = load_digits()
    x = (digits.images.astype(np.float32) / 16.0).reshape(-1, 1, 8, 8)
    y = digits.target.astype(np.int64)
    return train_test_split(x, y, test_size=0.25, random_state=SEED, stratify=y)


def main():
    repo_root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--outdir", default=os.path.join(repo_root, "examples", "digits"))
    args = ap.parse_args()

    t0 = time.time()
    torch.set_num_threads(1)
    torch.manual_seed(SEED)
    np.random.seed(SEED)
    random.seed(SEED)

    x_train, x_test, y_train, y_test = digits_split()

    model = DigitsCNN()
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    loss_fn = nn.CrossEntropyLoss()
    xt, yt = torch.from_numpy(x_train), torch.from_numpy(y_train)
    gen = torch.Generator().manual_seed(SEED)
    model.train()
    for _ in range(EPOCHS):
        perm = torch.randperm(len(xt), generator=gen)
        for i in range(0, len(xt), 64):
            idx = perm[i:i + 64]
            opt.zero_grad()
            loss = loss_fn(model(xt[idx]), yt[idx])
            loss.backward()
            opt.step()
    t_train = time.time() - t0

    model.eval()
    with torch.no_grad():
        pred = model(torch.from_numpy(x_test)).argmax(1).numpy()
    acc = float((pred == y_test).mean())

    samples = np.ascontiguousarray(x_test[:BATCH], dtype=np.float32)
    labels = np.ascontiguousarray(y_test[:BATCH], dtype=np.int64)
    with torch.no_grad():
        logits = model(torch.from_numpy(samples)).numpy().astype(np.float32)

    os.makedirs(args.outdir, exist_ok=True)
    onnx_path = os.path.join(args.outdir, "digits.onnx")
    torch.onnx.export(
        model, torch.from_numpy(samples), onnx_path,
        opset_version=OPSET, do_constant_folding=True,
        input_names=["image"], output_names=["logits"],
        training=torch.onnx.TrainingMode.EVAL)
    np.save(os.path.join(args.outdir, "samples.npy"), samples)
    np.save(os.path.join(args.outdir, "labels.npy"), labels)
    np.save(os.path.join(args.outdir, "torch_logits.npy"), logits)

    print(f"train/test: {len(x_train)}/{len(x_test)} images, {EPOCHS} epochs, "
          f"train time {t_train:.1f} s")
    print(f"test accuracy: {acc * 100:.2f}%")
    print(f"sample batch accuracy: {(logits.argmax(1) == labels).mean() * 100:.1f}% "
          f"({BATCH} samples)")
    print(f"wrote {onnx_path} ({os.path.getsize(onnx_path)} bytes) and samples/labels/"
          f"torch_logits .npy in {args.outdir} (total {time.time() - t0:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
