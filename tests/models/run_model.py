#!/usr/bin/python3
"""A real network through `dlc run`, compared with PyTorch's output (exported beforehand by
scripts/export_models.py). Prints how long compile + build + run took.

--sanitize address,undefined builds the generated code, the runtime and the runner with
-fsanitize=address,undefined (through DLC_CXXFLAGS) and runs it with leak detection on; any
sanitizer report makes the runner, and so `dlc run`, fail."""
import argparse
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "testlib"))
from sanitizers import sanitizer_env, sanitizer_flags  # noqa: E402


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--dlc", required=True)
    p.add_argument("--model-dir", required=True)
    p.add_argument("--compare", required=True, help="scripts/compare_npy.py")
    p.add_argument("--tol", default="1e-4")
    p.add_argument("--dim", action="append", default=[],
                   help="NAME=N, passed to dlc run (pins a symbolic dim)")
    p.add_argument("--check-memory", action="store_true",
                   help="build with -DDLC_CHECK_MEMORY: memory of dead values is poisoned")
    p.add_argument("--sanitize", default="", metavar="LIST",
                   help="build with -fsanitize=LIST (e.g. address,undefined); any sanitizer "
                        "report fails the run")
    args = p.parse_args()
    d = os.path.abspath(args.model_dir)
    tags = (["checked"] if args.check_memory else []) + (
        ["sanitize_" + args.sanitize.replace(",", "_")] if args.sanitize else [])
    tag = "_".join(tags) or "default"
    out = os.path.join(d, "dlc_out_" + tag)
    # The cache is the environment's ($DLC_CACHE_DIR; ctest gives every test one per build
    # tree), so the runtime is built once per flag set, not once per model.
    env = dict(os.environ)
    if args.check_memory:
        env["DLC_CXXFLAGS"] = (env.get("DLC_CXXFLAGS", "") + " -DDLC_CHECK_MEMORY").strip()
    if args.sanitize:
        # The flags the node-test harness gives dlc too: one sanitized runtime in the cache.
        env["DLC_CXXFLAGS"] = (env.get("DLC_CXXFLAGS", "") + " " +
                               sanitizer_flags(args.sanitize)).strip()
        # Leaks too; every report is fatal, so the runner and `dlc run` exit non-zero.
        env = sanitizer_env(env)
    subprocess.run(["rm", "-rf", out], check=True)
    start = time.time()
    pins = [a for dim in args.dim for a in ("--dim", dim)]
    r = subprocess.run([args.dlc, "run", os.path.join(d, "model.onnx"),
                        os.path.join(d, "input.npy"), "-o", out] + pins, env=env)
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
