#!/usr/bin/python3
"""Compare an actual .npy output against an expected one.

Usage: compare_npy.py ACTUAL.npy EXPECTED.npy [--tol 1e-4] [--name NAME]

Passes (exit 0) iff the shapes match and
    max|actual - expected| <= tol * max(1, max(expected) - min(expected))
i.e. the tolerance is relative to the expected output's range (absolute for
ranges below 1). Prints one line: `NAME: max abs diff X, range R, OK|FAIL`.
Exit codes: 0 OK, 1 FAIL (shape mismatch, non-finite values or diff too large),
2 unreadable input or bad arguments.
"""
import argparse
import os
import sys

import numpy as np


def load(path):
    try:
        return np.load(path, allow_pickle=False)
    except Exception as e:  # noqa: BLE001 - any load failure is "unreadable"
        print(f"error: cannot read {path}: {e}", file=sys.stderr)
        sys.exit(2)


def default_name(actual_path, expected_path):
    # OUTDIR/<model>/expected.npy -> <model>; otherwise the expected file's stem.
    d = os.path.basename(os.path.dirname(os.path.abspath(expected_path)))
    return d or os.path.splitext(os.path.basename(expected_path))[0]


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("actual")
    ap.add_argument("expected")
    ap.add_argument("--tol", type=float, default=1e-4)
    ap.add_argument("--name", default=None,
                    help="label for the output line (default: expected file's directory name)")
    args = ap.parse_args()
    name = args.name or default_name(args.actual, args.expected)

    a = load(args.actual)
    e = load(args.expected)
    if a.shape != e.shape:
        print(f"{name}: FAIL: shape mismatch: actual {a.shape} vs expected {e.shape}")
        return 1
    a = a.astype(np.float64)
    e = e.astype(np.float64)
    if e.size == 0:
        print(f"{name}: max abs diff 0, range 0, OK (empty)")
        return 0
    if not np.all(np.isfinite(a)):
        bad = int(np.count_nonzero(~np.isfinite(a)))
        print(f"{name}: FAIL: actual has {bad} non-finite value(s)")
        return 1

    diff = np.abs(a - e)
    max_diff = float(np.nanmax(diff))
    rng = float(e.max() - e.min())
    bound = args.tol * max(1.0, rng)
    ok = max_diff <= bound
    status = "OK" if ok else "FAIL"
    print(f"{name}: max abs diff {max_diff:.6g}, range {rng:.6g}, {status}")
    if not ok:
        worst = np.unravel_index(int(np.nanargmax(diff)), diff.shape)
        print(f"{name}: FAIL: max abs diff {max_diff:.6g} exceeds tol {args.tol:g} * "
              f"max(1, range {rng:.6g}) = {bound:.6g}; worst at index {tuple(int(i) for i in worst)}: "
              f"actual {a[worst]:.6g}, expected {e[worst]:.6g}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
