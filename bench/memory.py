#!/usr/bin/python3
"""Memory benchmark (not a test): for each model, dlc's arena against the lower bound (peak of
simultaneously live bytes), the bytes without reuse, and the naive first-fit planner, all
measured by the same dlc build in this run.

usage: bench/memory.py [--dlc build/tools/dlc] [--work build/bench] [--models a,b,...]
"""
import argparse
import glob
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
EXPORTED = ["mlp", "resnet18", "resnet50", "mobilenetv2", "squeezenet"]


def report(dlc, model, work, *flags):
    os.makedirs(work, exist_ok=True)
    path = os.path.join(work, "report.json")
    r = subprocess.run([dlc, "compile", model, "-o", os.path.join(work, "gen"), "--emit",
                        "mlir", "--report-json", path] + list(flags),
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(r.stderr.strip())
    return json.load(open(path))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--dlc", default=os.path.join(ROOT, "build", "tools", "dlc"))
    p.add_argument("--work", default=os.path.join(ROOT, "build", "bench"))
    p.add_argument("--models", default=",".join(EXPORTED))
    p.add_argument("--regressions", default=os.path.join(ROOT, "build", "tests", "memory"),
                   help="also report the memory regression models found here")
    args = p.parse_args()
    names = [m for m in args.models.split(",") if m]
    models_dir = os.path.join(args.work, "models")
    subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "export_models.py"),
                    models_dir, "--models", ",".join(names)], check=True,
                   stdout=subprocess.DEVNULL)
    models = [(n, os.path.join(models_dir, n, "model.onnx")) for n in names]
    models += [(os.path.basename(os.path.dirname(m)), m)
               for m in sorted(glob.glob(os.path.join(args.regressions, "*", "model.onnx")))]

    header = ("model", "arena", "lower bound", "arena/LB", "no reuse", "no-reuse/arena",
              "first-fit/LB", "in-place", "elided concats")
    rows = []
    for name, path in models:
        work = os.path.join(args.work, "plans", name)
        best = report(args.dlc, path, work)
        naive = report(args.dlc, path, work, "--first-fit")
        lb = max(best["lower_bound_bytes"], 1)
        rows.append((name, best["arena_bytes"], best["lower_bound_bytes"],
                     "%.4f" % (best["arena_bytes"] / lb), best["no_reuse_bytes"],
                     "%.2f" % (best["no_reuse_bytes"] / max(best["arena_bytes"], 1)),
                     "%.4f" % (naive["arena_bytes"] / lb), best["inplace_ops"],
                     best["elided_concats"]))
    widths = [max(len(str(r[i])) for r in rows + [header]) for i in range(len(header))]
    line = lambda r: "| " + " | ".join(str(c).rjust(w) for c, w in zip(r, widths)) + " |"
    print(line(header))
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for r in rows:
        print(line(r))


if __name__ == "__main__":
    sys.exit(main())
