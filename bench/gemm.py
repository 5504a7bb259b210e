#!/usr/bin/env python3
"""GEMM benchmark (not a test): dlc's sgemm, for every instruction set this CPU runs, against
numpy's (OpenBLAS) on one thread, interleaved in one process, on the shapes the models use.

usage: bench/gemm.py [--rounds 7] [--cxx c++] [--cold]
Run with a Python whose numpy comes from PyPI (OpenBLAS bundled), e.g. build/bench-venv
(scripts/bench_setup.sh). Prints GFLOP/s (best of the rounds) and dlc/numpy. --cold writes a
buffer of twice the last-level cache before every timed product and then reads A and writes C
again, so the weights (B, or A for the convolutions) come from memory, as a network's do when
they outgrow the caches (BERT-base's 340 MB), and the activations from cache.
"""
import argparse
import ctypes
import glob
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
ISAS = ["baseline", "avx2", "avx512"]
# (label, m, n, k, transB, packed operand): square; ResNet convs as (out channels) x (pixels)
# x (window) with the weights (A) packed ahead of time as compiled models have them; the
# MLP's layers at batch 8 with the transposed weights (B) packed; linear layers (weights, B,
# packed) of BERT-base on 128 tokens, a LLaMA-style MLP on 256 and ConvNeXt-T's stages
# (pixels x channels).
SHAPES = [("1024^3", 1024, 1024, 1024, False, None),
          ("linear 128x3072x768", 128, 3072, 768, False, "B"),
          ("linear 128x768x3072", 128, 768, 3072, False, "B"),
          ("linear 128x2304x768", 128, 2304, 768, False, "B"),
          ("linear 256x2048x768", 256, 2048, 768, False, "B"),
          ("linear 256x768x2048", 256, 768, 2048, False, "B"),
          ("linear 3136x96x384", 3136, 96, 384, False, "B"),
          ("linear 3136x384x96", 3136, 384, 96, False, "B"),
          ("linear 784x192x768", 784, 192, 768, False, "B"),
          ("linear 196x384x1536", 196, 384, 1536, False, "B"),
          ("linear 49x768x3072", 49, 768, 3072, False, "B"),
          ("conv 64x3136x576", 64, 3136, 576, False, "A"),
          ("conv 128x784x1152", 128, 784, 1152, False, "A"),
          ("conv 512x49x4608", 512, 49, 4608, False, "A"),
          ("mlp 8x512x784", 8, 512, 784, True, "B"), ("mlp 8x256x512", 8, 256, 512, True, "B"),
          ("mlp 8x10x256", 8, 10, 256, True, "B")]


def build_library(cxx, work):
    lib = os.path.join(work, "libdlc_gemm_bench.so")
    sources = sorted(glob.glob(os.path.join(ROOT, "runtime", "*.cpp")))
    subprocess.run([cxx, "-std=c++17", "-O3", "-fPIC", "-shared", "-I", os.path.join(ROOT, "runtime"),
                    os.path.join(HERE, "gemm_shim.cpp")] + sources + ["-o", lib], check=True)
    return ctypes.CDLL(lib)


def last_level_cache_bytes():
    sizes = [0]
    for path in glob.glob("/sys/devices/system/cpu/cpu0/cache/index*/size"):
        text = open(path).read().strip()
        scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:], 1)
        sizes.append(int(text.rstrip("KMG")) * scale)
    return max(sizes) or 64 << 20


def best_seconds(fn, rounds, evict=None):
    fn()
    best = float("inf")
    for _ in range(rounds):
        if evict:
            evict()
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--cxx", default=os.environ.get("CXX", "c++"))
    p.add_argument("--shapes", help="only shapes whose label contains this")
    p.add_argument("--isa", choices=ISAS, help="only this instruction set's kernels")
    p.add_argument("--cold", action="store_true", help="operands from memory, not cache")
    args = p.parse_args()
    for var in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):
        os.environ.pop(var, None)
    os.environ["OPENBLAS_NUM_THREADS"] = "1"
    import numpy as np
    from threadpoolctl import threadpool_limits, threadpool_info
    blas = [i.get("internal_api", "?") + " " + i.get("version", "?") for i in threadpool_info()]
    with tempfile.TemporaryDirectory() as work:
        lib = build_library(args.cxx, work)
        best = lib.dlc_bench_isa()
        isas = [i for i in range(best + 1) if not args.isa or ISAS[i] == args.isa]
        fp = ctypes.POINTER(ctypes.c_float)
        lib.dlc_bench_sgemm.argtypes = [ctypes.c_int] * 3 + [ctypes.c_int64] * 3 + [
            fp, ctypes.c_int64, fp, ctypes.c_int64, fp, ctypes.c_int64, fp, fp]
        lib.dlc_bench_packed_bytes.restype = ctypes.c_size_t
        lib.dlc_bench_packed_bytes.argtypes = [ctypes.c_int, ctypes.c_int64, ctypes.c_int64]
        lib.dlc_bench_pack.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int64,
                                       ctypes.c_int64, fp, ctypes.c_int64, fp]
        flush = np.zeros(2 * last_level_cache_bytes() // 4 if args.cold else 0, np.float32)
        print("numpy %s (%s); dlc kernels: %s; 1 thread, best of %d rounds%s" %
              (np.__version__, ", ".join(blas), ", ".join(ISAS[i] for i in isas), args.rounds,
               "; operands from memory" if args.cold else ""))
        print("%-20s %10s" % ("shape", "numpy") +
              "".join("%10s %8s" % (ISAS[i], "/numpy") for i in isas))
        rng = np.random.default_rng(0)
        with threadpool_limits(limits=1):
            for label, m, n, k, trans_b, packed in SHAPES:
                if args.shapes and args.shapes not in label:
                    continue
                a = rng.standard_normal((m, k), dtype=np.float32)
                b = rng.standard_normal((n, k) if trans_b else (k, n), dtype=np.float32)
                packed_a = packed_b = None
                if packed == "A":
                    packed_a = np.empty(lib.dlc_bench_packed_bytes(0, m, k) // 4, np.float32)
                    lib.dlc_bench_pack(0, 0, m, k, a.ctypes.data_as(fp), k,
                                       packed_a.ctypes.data_as(fp))
                if packed == "B":
                    packed_b = np.empty(lib.dlc_bench_packed_bytes(1, n, k) // 4, np.float32)
                    lib.dlc_bench_pack(1, int(trans_b), n, k, b.ctypes.data_as(fp),
                                       n if not trans_b else k, packed_b.ctypes.data_as(fp))
                pa = packed_a.ctypes.data_as(fp) if packed_a is not None else None
                pb = packed_b.ctypes.data_as(fp) if packed_b is not None else None
                c = np.empty((m, n), np.float32)
                flops = 2.0 * m * n * k
                rounds = args.rounds if args.cold else max(args.rounds, int(2e9 / flops))
                bt = b.T if trans_b else b
                ref = a @ bt
                evict = None
                if args.cold:
                    activations = b if packed == "A" else a

                    def evict():
                        flush.fill(1.0)
                        activations.sum()
                        c.fill(0.0)
                times = {}
                # Interleaved: each round times numpy and then every dlc kernel.
                for _ in range(rounds):
                    for key in ["numpy"] + isas:
                        if key == "numpy":
                            fn = lambda: np.matmul(a, bt, out=c)
                        else:
                            fn = lambda isa=key: lib.dlc_bench_sgemm(
                                isa, 0, int(trans_b), m, n, k, a.ctypes.data_as(fp), k,
                                b.ctypes.data_as(fp), n if not trans_b else k,
                                c.ctypes.data_as(fp), n, pa, pb)
                        times[key] = min(times.get(key, float("inf")), best_seconds(fn, 1, evict))
                        if key != "numpy":
                            err = float(np.max(np.abs(c - ref)) / (np.max(np.abs(ref)) + 1e-30))
                            if err > 1e-4:
                                sys.exit("dlc %s gave wrong results on %s (rel err %g)" %
                                         (ISAS[key], label, err))
                row = "%-20s %10.1f" % (label, flops / times["numpy"] / 1e9)
                for isa in isas:
                    row += "%10.1f %8.2f" % (flops / times[isa] / 1e9,
                                             (flops / times[isa]) / (flops / times["numpy"]))
                print(row)


if __name__ == "__main__":
    main()
