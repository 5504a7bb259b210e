#!/usr/bin/python3
"""The bundled digits CNN trained from its fresh initialization by a C++ program linking the
library `dlc compile --train` made (examples/run_example.cmake MODE=train), against PyTorch
training the same model from the same weights on the same batches in the same order (Adam,
lr 3e-3, cross entropy, 30 epochs). The test accuracies must agree within 1 point."""
import argparse
import os
import re
import subprocess
import sys

import numpy as np
import onnx
import torch
import torch.nn.functional as F
from onnx import numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
from make_digits_example import DigitsCNN  # noqa: E402

EPOCHS = 30
BATCH = 64


def pytorch_accuracy(example):
    torch.set_num_threads(1)
    model = DigitsCNN()
    initial = {t.name: numpy_helper.to_array(t)
               for t in onnx.load(os.path.join(example, "digits_train.onnx")).graph.initializer}
    state = model.state_dict()
    for name, value in initial.items():
        state[name] = torch.from_numpy(value.copy())
    model.load_state_dict(state)
    load = lambda name: torch.from_numpy(np.load(os.path.join(example, name + ".npy")))
    x, y, tx, ty = (load(n) for n in ("train_images", "train_labels", "test_images",
                                      "test_labels"))
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    model.train()
    first_epoch_loss = 0.0
    for epoch in range(EPOCHS):
        for i in range(0, len(x), BATCH):
            opt.zero_grad()
            loss = F.cross_entropy(model(x[i:i + BATCH]), y[i:i + BATCH])
            loss.backward()
            opt.step()
            if epoch == 0:
                first_epoch_loss += loss.item() / (len(x) // BATCH)
    model.eval()
    with torch.no_grad():
        correct = sum(int((model(tx[i:i + BATCH]).argmax(1) == ty[i:i + BATCH]).sum())
                      for i in range(0, len(tx), BATCH))
    return 100.0 * correct / len(tx), first_epoch_loss


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--dlc", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--check-memory", action="store_true",
                   help="build the library with -DDLC_CHECK_MEMORY (dead memory poisoned)")
    args = p.parse_args()
    env = dict(os.environ)
    if args.check_memory:
        env["DLC_CXXFLAGS"] = (env.get("DLC_CXXFLAGS", "") + " -DDLC_CHECK_MEMORY").strip()
    r = subprocess.run(["cmake", "-DDLC=" + os.path.abspath(args.dlc), "-DSOURCE_DIR=" + ROOT,
                        "-DBUILD_DIR=" + os.path.abspath(args.work), "-DMODE=train",
                        "-DEPOCHS=%d" % EPOCHS, "-P",
                        os.path.join(ROOT, "examples", "run_example.cmake")],
                       capture_output=True, text=True, env=env)
    print(r.stdout + r.stderr)
    match = re.search(r"test accuracy: \d+/\d+ = ([0-9.]+)%", r.stdout + r.stderr)
    epoch1 = re.search(r"epoch  1  loss ([0-9.]+)", r.stdout + r.stderr)
    if r.returncode != 0 or not match or not epoch1:
        print("FAIL: the training example did not run")
        return 1
    dlc_acc, dlc_loss = float(match.group(1)), float(epoch1.group(1))
    torch_acc, torch_loss = pytorch_accuracy(os.path.join(ROOT, "examples", "digits"))
    print("first epoch's mean loss: dlc %.4f, PyTorch %.4f" % (dlc_loss, torch_loss))
    print("test accuracy after %d epochs: dlc %.2f%%, PyTorch %.2f%%"
          % (EPOCHS, dlc_acc, torch_acc))
    ok = abs(dlc_acc - torch_acc) <= 1.0 and abs(dlc_loss - torch_loss) <= 1e-3 * max(1, torch_loss)
    print("ok" if ok else "FAIL: dlc's training differs from PyTorch's")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
