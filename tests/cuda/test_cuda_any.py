#!/usr/bin/python3
"""The device-choosing API of a --target cpu,cuda library (NAME_any.h): the bundled digits
model compiled for both targets, built with cuda_any_check.cpp (emulated with --emulate, by
nvcc for a GPU with --nvcc) and run on its samples. The arguments are run_cuda_model.py's
build arguments."""
import argparse
import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
from run_cuda_model import add_build_arguments, model_build, run, skipped  # noqa: E402


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--dlc", required=True)
    p.add_argument("--work", required=True)
    add_build_arguments(p)
    args = p.parse_args()
    if skipped(args):
        return 77
    shutil.rmtree(args.work, ignore_errors=True)
    gen = os.path.join(args.work, "generated")
    if run([args.dlc, "compile", os.path.join(ROOT, "examples", "digits", "digits.onnx"), "-o",
            gen, "--target", "cpu,cuda", "--name", "digits"]) != 0:
        return 1
    args.generated = None
    built = model_build(args, gen, "digits_cuda")
    if built is None:
        return 1
    if args.check_nvcc:
        return 0
    command, sources, libs = built
    # The CUDA model's build, with the CPU model and the device-choosing API added.
    command = [a if a != os.path.join(gen, "digits_cuda.h") else os.path.join(gen, "digits_any.h")
               for a in command if a != "-DDLC_MODEL=digits_cuda"] + ["-DDLC_MODEL=digits"]
    exe = os.path.join(args.work, "cuda_any_check")
    if run(command + [os.path.join(HERE, "cuda_any_check.cpp"), os.path.join(gen, "digits.cpp"),
                      os.path.join(gen, "digits_weights.cpp"),
                      os.path.join(gen, "digits_any.cpp")] + sources + ["-o", exe] + libs) != 0:
        return 1
    return run([exe, os.path.join(ROOT, "examples", "digits", "samples.npy")])


if __name__ == "__main__":
    sys.exit(main())
