#!/usr/bin/python3
"""A real network through `dlc run`, compared with PyTorch's output (exported beforehand by
scripts/export_models.py). Prints how long compile + build + run took."""
import argparse
import os
import subprocess
import sys
import time


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--dlc", required=True)
    p.add_argument("--model-dir", required=True)
    p.add_argument("--compare", required=True, help="scripts/compare_npy.py")
    p.add_argument("--tol", default="1e-4")
    p.add_argument("--check-memory", action="store_true",
                   help="build with -DDLC_CHECK_MEMORY: memory of dead values is poisoned")
    args = p.parse_args()
    d = os.path.abspath(args.model_dir)
    tag = "checked" if args.check_memory else "default"
    out = os.path.join(d, "dlc_out_" + tag)
    # A private cache so the timing includes the full compile and build.
    env = dict(os.environ, DLC_CACHE_DIR=os.path.join(d, "dlc_cache_" + tag))
    if args.check_memory:
        env["DLC_CXXFLAGS"] = (env.get("DLC_CXXFLAGS", "") + " -DDLC_CHECK_MEMORY").strip()
    subprocess.run(["rm", "-rf", env["DLC_CACHE_DIR"], out], check=True)
    start = time.time()
    r = subprocess.run([args.dlc, "run", os.path.join(d, "model.onnx"),
                        os.path.join(d, "input.npy"), "-o", out], env=env)
    print("%s (%s): dlc compile + build + run: %.1f s"
          % (os.path.basename(d), tag, time.time() - start))
    if r.returncode != 0:
        print("FAIL: dlc run exited with %d" % r.returncode)
        return 1
    outputs = [f for f in os.listdir(out) if f.endswith(".npy")]
    if len(outputs) != 1:
        print("FAIL: expected one output, got %s" % outputs)
        return 1
    return subprocess.run([sys.executable, args.compare, os.path.join(out, outputs[0]),
                           os.path.join(d, "expected.npy"), "--tol", args.tol]).returncode


if __name__ == "__main__":
    sys.exit(main())
