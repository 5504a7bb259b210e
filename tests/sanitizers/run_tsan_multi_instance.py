#!/usr/bin/python3
"""The generated API's threading rule under ThreadSanitizer: compiles examples/digits/digits.onnx with
DLC_CXXFLAGS=-fsanitize=thread into libdigits.a (private DLC_CACHE_DIR, so the runtime is built
with TSan too), builds multi_instance.cpp against it with -fsanitize=thread and runs it: several
instances on several threads, compared bit for bit with a single-threaded reference, created and
destroyed on different threads. Fails on a mismatch or on any TSan report. Prints the shuffle
seed; --seed reruns one."""
import argparse
import os
import shutil
import subprocess
import sys
import time

TSAN_EXITCODE = 66


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--dlc", required=True)
    p.add_argument("--source-dir", default=os.path.dirname(os.path.dirname(here)),
                   help="the repository (for examples/digits)")
    p.add_argument("--work", required=True)
    p.add_argument("--cxx", default=os.environ.get("CXX", "c++"))
    p.add_argument("--seed", help="shuffle seed (default: random, printed)")
    args = p.parse_args()
    example = os.path.join(os.path.abspath(args.source_dir), "examples", "digits")
    work = os.path.abspath(args.work)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    gen = os.path.join(work, "gen")
    env = dict(os.environ, DLC_CACHE_DIR=os.path.join(work, "dlc_cache"),
               DLC_CXXFLAGS=(os.environ.get("DLC_CXXFLAGS", "") + " -fsanitize=thread -g").strip())
    start = time.time()
    r = subprocess.run([args.dlc, "compile", os.path.join(example, "digits.onnx"), "-o", gen,
                        "--emit", "staticlib"], env=env)
    if r.returncode != 0:
        print("FAIL: dlc compile exited with %d" % r.returncode)
        return 1
    program = os.path.join(work, "multi_instance")
    r = subprocess.run([args.cxx, "-std=c++17", "-O1", "-g", "-fsanitize=thread", "-pthread",
                        "-Wall", "-Wextra", "-Werror", "-I" + gen,
                        os.path.join(here, "multi_instance.cpp"),
                        os.path.join(gen, "libdigits.a"), "-o", program])
    if r.returncode != 0:
        print("FAIL: building multi_instance.cpp failed")
        return 1
    print("compile + build: %.1f s" % (time.time() - start))
    run_env = dict(os.environ, TSAN_OPTIONS=":".join(
        o for o in (os.environ.get("TSAN_OPTIONS", ""),
                    "halt_on_error=1:exitcode=%d:second_deadlock_stack=1" % TSAN_EXITCODE) if o))
    start = time.time()
    cmd = [program, os.path.join(example, "samples.npy")] + ([args.seed] if args.seed else [])
    r = subprocess.run(cmd, env=run_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True)
    sys.stdout.write(r.stdout)
    sys.stdout.write(r.stderr)
    print("run: %.1f s" % (time.time() - start))
    if "ThreadSanitizer" in r.stderr or r.returncode == TSAN_EXITCODE:
        print("FAIL: ThreadSanitizer reported a problem (exit status %d)" % r.returncode)
        return 1
    if r.returncode != 0:
        print("FAIL: multi_instance exited with %d" % r.returncode)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
