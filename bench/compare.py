#!/usr/bin/env python3
"""CPU latency benchmark (not a test): dlc against ONNX Runtime on the same models, in the
same process, rounds interleaved, on 1 and 2 threads; then each engine's peak RSS measured
in a fresh process of its own.

usage: bench/compare.py [--dlc build/tools/dlc] [--models mlp,resnet18,vit,...] [--rounds 7]
                        [--threads 1,2] [--work build/bench]
Run it with a Python that has numpy and onnxruntime (scripts/bench_setup.sh makes
build/bench-venv). Models are exported by scripts/export_models.py with /usr/bin/python3
(PyTorch). Prints per model and thread count: dlc and ORT milliseconds (median and min of the
rounds), dlc/ORT of the medians, and both peak RSS in MB (of a Python process that loaded
numpy and the engine and ran the model: the same interpreter overhead for both). Each timed
batch starts after a 0.1 s pause and one untimed run, so neither engine runs beside the
other's still-spinning idle threads. Models with a symbolic batch dim (convnext, vit,
transformer) are compiled for the batch of their saved input.
"""
import argparse
import ctypes
import json
import os
import platform
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
MODELS = ["mlp", "resnet18", "resnet50", "mobilenetv2", "squeezenet", "convnext", "vit",
          "transformer"]
TORCH_PYTHON = "/usr/bin/python3"


class DlcOptions(ctypes.Structure):
    _fields_ = [("arena", ctypes.c_void_p), ("threads", ctypes.c_int)]


class DlcModel:
    """A model compiled by dlc into a static library, linked into a shared one for ctypes."""

    def __init__(self, dlc, onnx_path, work, name, cxx, input_shapes):
        """input_shapes: {input name: shape}, pinning symbolic dims (a model's batch)."""
        gen = os.path.join(work, "dlc")
        pins = []
        for input_name, shape in input_shapes.items():
            pins += ["--input-shape", "%s=%s" % (input_name, "x".join(map(str, shape)))]
        subprocess.run([dlc, "compile", onnx_path, "-o", gen, "--emit", "staticlib", "--name",
                        name] + pins, check=True, stdout=subprocess.DEVNULL)
        self.so = os.path.join(work, "lib%s.so" % name)
        subprocess.run([cxx, "-shared", "-o", self.so, "-Wl,--whole-archive",
                        os.path.join(gen, "lib%s.a" % name), "-Wl,--no-whole-archive",
                        "-lpthread"], check=True)
        self.name = name

    def load(self, threads):
        lib = ctypes.CDLL(self.so)
        self.lib = lib
        create = getattr(lib, self.name + "_create_with")
        create.argtypes = [ctypes.POINTER(DlcOptions), ctypes.POINTER(ctypes.c_void_p)]
        self.handle = ctypes.c_void_p()
        status = create(ctypes.byref(DlcOptions(None, threads)), ctypes.byref(self.handle))
        if status != 0:
            raise RuntimeError("%s_create_with failed: %d" % (self.name, status))
        self.run_fn = getattr(lib, self.name + "_run")
        self.run_fn.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p),
                                ctypes.POINTER(ctypes.c_void_p)]
        return self

    def bind(self, inputs, outputs):
        self.inputs = (ctypes.c_void_p * len(inputs))(*[a.ctypes.data for a in inputs])
        self.outputs = (ctypes.c_void_p * len(outputs))(*[a.ctypes.data for a in outputs])

    def run(self):
        if self.run_fn(self.handle, self.inputs, self.outputs) != 0:
            raise RuntimeError("%s_run failed" % self.name)

    def close(self):
        getattr(self.lib, self.name + "_destroy")(self.handle)


def ort_session(path, threads):
    import onnxruntime as ort
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    return ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])


def engines(args, name, threads):
    """(dlc run, ORT run, check) for one model, both bound to the same input."""
    import numpy as np
    model_dir = os.path.join(args.work, "models", name)
    onnx_path = os.path.join(model_dir, "model.onnx")
    x = np.load(os.path.join(model_dir, "input.npy"))
    expected = np.load(os.path.join(model_dir, "expected.npy"))
    session = ort_session(onnx_path, threads)
    input_name = session.get_inputs()[0].name
    feed = {input_name: x}
    dlc = DlcModel(args.dlc, onnx_path, os.path.join(args.work, "compare", name), name,
                   args.cxx, {input_name: x.shape}).load(threads)
    out = np.empty_like(expected)
    dlc.bind([x], [out])

    def check():
        ort_out = session.run(None, feed)[0]
        scale = float(np.max(np.abs(expected))) + 1e-30
        return (float(np.max(np.abs(out - expected))) / scale,
                float(np.max(np.abs(ort_out - expected))) / scale)

    return dlc, (lambda: session.run(None, feed)), check


def timed(fn, repeats):
    t = time.perf_counter()
    for _ in range(repeats):
        fn()
    return (time.perf_counter() - t) / repeats * 1e3


def settled_timed(fn, repeats):
    """timed() once the other engine's idle threads have stopped spinning: ORT's workers spin
    for tens of milliseconds after a run (dlc's for about one), and on two cores a spinning
    thread of one engine halves the other's two-thread speed."""
    time.sleep(0.1)
    fn()
    return timed(fn, repeats)


def rss_child(args):
    """Loads one engine, runs it a few times and prints its peak RSS in MB."""
    import numpy as np
    name, threads = args.models, args.rss_threads
    model_dir = os.path.join(args.work, "models", name)
    x = np.load(os.path.join(model_dir, "input.npy"))
    if args.rss_engine == "dlc":
        dlc = DlcModel.__new__(DlcModel)
        dlc.name = name
        dlc.so = os.path.join(args.work, "compare", name, "lib%s.so" % name)
        dlc.load(threads)
        out = np.empty_like(np.load(os.path.join(model_dir, "expected.npy")))
        dlc.bind([x], [out])
        run = dlc.run
    else:
        session = ort_session(os.path.join(model_dir, "model.onnx"), threads)
        feed = {session.get_inputs()[0].name: x}
        run = lambda: session.run(None, feed)
    for _ in range(5):
        run()
    print(peak_rss_mb())


def peak_rss_mb():
    # VmHWM, not ru_maxrss: Linux carries ru_maxrss over from the parent through fork and exec.
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024.0
    return float("nan")


def peak_rss(args, engine, name, threads):
    r = subprocess.run([sys.executable, os.path.abspath(__file__), "--work", args.work,
                        "--models", name, "--rss-engine", engine, "--rss-threads", str(threads)],
                       capture_output=True, text=True, check=True)
    return float(r.stdout.strip().splitlines()[-1])


def cpu_summary():
    flags, model = set(), platform.processor()
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
            if line.startswith("flags"):
                flags = set(line.split(":", 1)[1].split())
    except OSError:
        pass
    wanted = ["sse4_2", "avx", "avx2", "fma", "avx512f", "avx512bw", "avx512vl"]
    return "%s; %d cores; flags: %s" % (model, os.cpu_count(),
                                        " ".join(f for f in wanted if f in flags))


def main():
    # numpy's own OpenBLAS threads would spin beside the engines measured.
    os.environ["OPENBLAS_NUM_THREADS"] = "1"
    p = argparse.ArgumentParser()
    p.add_argument("--dlc", default=os.path.join(ROOT, "build", "tools", "dlc"))
    p.add_argument("--work", default=os.path.join(ROOT, "build", "bench"))
    p.add_argument("--models", default=",".join(MODELS))
    p.add_argument("--threads", default="1,2")
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--cxx", default=os.environ.get("CXX", "c++"))
    p.add_argument("--json", help="also write the results here")
    p.add_argument("--rss-engine", help=argparse.SUPPRESS)
    p.add_argument("--rss-threads", type=int, default=1, help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.rss_engine:
        rss_child(args)
        return
    import onnxruntime
    names = [m for m in args.models.split(",") if m]
    subprocess.run([TORCH_PYTHON, os.path.join(ROOT, "scripts", "export_models.py"),
                    os.path.join(args.work, "models"), "--models", ",".join(names)], check=True,
                   stdout=subprocess.DEVNULL)
    print("CPU: " + cpu_summary())
    print("ONNX Runtime %s (all graph optimizations, sequential); %d rounds, interleaved" %
          (onnxruntime.__version__, args.rounds))
    header = ("model", "thr", "dlc ms med", "dlc min", "ORT ms med", "ORT min", "dlc/ORT",
              "dlc MB", "ORT MB")
    print("%-12s %3s %10s %8s %10s %8s %8s %7s %7s" % header)
    results = []
    for name in names:
        for threads in [int(t) for t in args.threads.split(",")]:
            dlc, ort_run, check = engines(args, name, threads)
            dlc.run()
            ort_run()
            dlc_err, ort_err = check()
            if dlc_err > 1e-3:
                sys.exit("dlc's %s output is off from PyTorch's by %g (relative)" %
                         (name, dlc_err))
            # Repeats per round so that a round lasts about 0.2 s.
            repeats = max(1, int(0.2e3 / max(timed(dlc.run, 3), 1e-3)))
            times = {"dlc": [], "ort": []}
            for _ in range(args.rounds):
                times["dlc"].append(settled_timed(dlc.run, repeats))
                times["ort"].append(settled_timed(ort_run, repeats))
            dlc.close()
            rss = {e: peak_rss(args, e, name, threads) for e in ("dlc", "ort")}
            med = {e: statistics.median(v) for e, v in times.items()}
            row = {"model": name, "threads": threads, "dlc_ms": med["dlc"],
                   "dlc_min_ms": min(times["dlc"]), "ort_ms": med["ort"],
                   "ort_min_ms": min(times["ort"]), "ratio": med["dlc"] / med["ort"],
                   "dlc_rss_mb": rss["dlc"], "ort_rss_mb": rss["ort"],
                   "dlc_rel_err": dlc_err, "ort_rel_err": ort_err}
            results.append(row)
            print("%-12s %3d %10.3f %8.3f %10.3f %8.3f %8.2f %7.0f %7.0f" %
                  (name, threads, row["dlc_ms"], row["dlc_min_ms"], row["ort_ms"],
                   row["ort_min_ms"], row["ratio"], rss["dlc"], rss["ort"]), flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"cpu": cpu_summary(), "results": results}, f, indent=1)


if __name__ == "__main__":
    main()
