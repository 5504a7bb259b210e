#!/usr/bin/env python3
"""CPU latency benchmark (not a test): dlc against ONNX Runtime and OpenVINO (f32) on the same
models, in the same process, rounds interleaved, on 1 and 2 threads; then each engine's peak
RSS measured in a fresh process of its own.

usage: bench/compare.py [--dlc build/tools/dlc] [--models all|project|families|mlp,vit,...]
                        [--rounds 7] [--baseline-dlc OLD/build/tools/dlc]
                        [--threads 1,2] [--work build/bench] [--no-rss]
Run it with a Python that has numpy, onnx, onnxruntime, openvino, threadpoolctl and sympy
(scripts/bench_setup.sh makes build/bench-venv). Models are exported by
scripts/export_models.py with build/export-venv (the system's PyTorch and transformers).
Prints per model and thread count: each engine's milliseconds (median of the rounds), dlc / the
faster peer, dlc's GFLOP/s over the model's convolution and matrix-product FLOPs and that as %
of the same rounds' sgemm peak (the faster of numpy's OpenBLAS and dlc's own GEMM on 2048^3
with as many threads, the best of one product per round; the best round's); then the same two
figures taken round by round, each round's dlc time against the peers' and the peak measured in
that round, and their medians ("rnd"): the machine's speed drifts by a third over minutes, and a
drift between one engine's rounds and another's moves the medians' ratio but not a round's; and
each engine's peak RSS in MB (of a
Python process that loaded numpy and the engine and ran the model: the same interpreter
overhead for all). Each timed batch starts after a 0.1 s pause and one untimed run, so no
engine runs beside another's still-spinning idle threads. OpenVINO runs with
INFERENCE_PRECISION_HINT=f32, PERFORMANCE_HINT=LATENCY, NUM_STREAMS=1, INFERENCE_NUM_THREADS =
the thread count and ENABLE_CPU_PINNING=NO (pinning the shared calling thread would pin every
thread the other engines start afterwards). Models with a symbolic batch dim (convnext, vit,
transformer) are compiled for the batch of their saved input.
"""
import argparse
import ctypes
import gc
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
# Networks of the sizes users ship (scripts/export_models.py lists them): the speed goals are
# judged on these beside the project's own models.
FAMILIES = ["mobilenetv3_large", "efficientnet_b0", "convnext_tiny", "regnet", "deit_small",
            "bert_encoder", "whisper_encoder", "yolo_detector", "db_detector", "hf_bert_128",
            "hf_bert_512", "hf_gpt2", "hf_llama"]
MODEL_SETS = {"project": MODELS, "families": FAMILIES, "all": MODELS + FAMILIES}
# The system's PyTorch with transformers beside it (scripts/bench_setup.sh).
TORCH_PYTHON = os.path.join(ROOT, "build", "export-venv", "bin", "python")


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


def ort_session_options(threads):
    import onnxruntime as ort
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    return options


def ort_session(path, threads):
    import onnxruntime as ort
    return ort.InferenceSession(path, ort_session_options(threads),
                                providers=["CPUExecutionProvider"])


def openvino_config(threads):
    """f32, latency mode, one stream, `threads` threads."""
    # No CPU pinning: OpenVINO pins the thread that calls it, and every thread the other
    # engines start from it afterwards inherits that one core (their 2-thread runs got slower
    # than their 1-thread ones).
    return {"INFERENCE_PRECISION_HINT": "f32", "PERFORMANCE_HINT": "LATENCY", "NUM_STREAMS": "1",
            "INFERENCE_NUM_THREADS": str(threads), "ENABLE_CPU_PINNING": "NO"}


def openvino_request(path, input_name, shape, threads):
    """An OpenVINO infer request for the model at f32, latency mode, one stream."""
    import openvino as ov
    core = ov.Core()
    model = core.read_model(path)
    model.reshape({input_name: list(shape)})
    compiled = core.compile_model(model, "CPU", openvino_config(threads))
    return compiled.create_infer_request()


PEERS = ("ort", "ov")
ENGINE_NAMES = {"dlc": "dlc", "ort": "ORT", "ov": "OpenVINO", "base": "baseline dlc"}


def engines(args, name, threads):
    """({engine: run function}, errors against PyTorch's output, close) for one model, all
    bound to the same input; close releases every engine."""
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
    request = openvino_request(onnx_path, input_name, x.shape, threads)
    runs = {"dlc": dlc.run, "ort": lambda: session.run(None, feed),
            "ov": lambda: request.infer({0: x})}
    base = None
    if args.baseline_dlc:
        # Its own library name: both libraries define the same runtime, each kept to itself.
        base = DlcModel(args.baseline_dlc, onnx_path, os.path.join(args.work, "compare-base", name),
                        name + "_base", args.cxx, {input_name: x.shape}).load(threads)
        base_out = np.empty_like(expected)
        base.bind([x], [base_out])
        runs["base"] = base.run

    def outputs():
        result = {"dlc": out, "ort": session.run(None, feed)[0],
                  "ov": np.array(request.infer({0: x})[0])}
        if base:
            result["base"] = base_out
        return result

    scale = float(np.max(np.abs(expected))) + 1e-30
    errors = lambda: {e: float(np.max(np.abs(v - expected))) / scale
                      for e, v in outputs().items()}
    def close():
        # Every engine is gone before the next thread count's are made: a peer's compiled
        # model left alive slowed the next ones' 2-thread runs (both peers' and dlc's) by up
        # to 2x here.
        dlc.close()
        if base:
            base.close()
        runs.clear()
        nonlocal session, request
        session = request = None
        gc.collect()

    return runs, errors, close


def model_gflop(path, shape):
    """Multiply-add FLOPs (2 per multiply-add) of the model's Conv, ConvTranspose, MatMul and
    Gemm nodes at the input shape, in GFLOP: the work the sgemm peak measures."""
    import numpy as np
    import onnx
    from onnxruntime.tools.symbolic_shape_infer import SymbolicShapeInference
    model = onnx.load(path)
    initializers = {i.name for i in model.graph.initializer}
    graph_input = [i for i in model.graph.input if i.name not in initializers][0]
    for dim, size in zip(graph_input.type.tensor_type.shape.dim, shape):
        dim.ClearField("dim_param")
        dim.dim_value = size
    # ONNX Runtime's symbolic inference follows the shape arithmetic of Hugging Face exports
    # (Shape, Gather, Concat into Reshape, Expand), where onnx's leaves MatMul shapes unknown.
    model = SymbolicShapeInference.infer_shapes(model, auto_merge=True)
    shapes = {}
    for v in list(model.graph.value_info) + list(model.graph.input) + list(model.graph.output):
        dims = v.type.tensor_type.shape.dim
        if all(d.HasField("dim_value") for d in dims):
            shapes[v.name] = [d.dim_value for d in dims]
    for i in model.graph.initializer:
        shapes[i.name] = list(i.dims)
    flops = 0.0
    for node in model.graph.node:
        ins = [shapes.get(n) for n in node.input]
        out = shapes.get(node.output[0])
        if not out or len(ins) < 2 or any(not s for s in ins[:2]):
            continue
        if node.op_type in ("Conv", "ConvTranspose"):
            w = ins[1]
            # Each output element sums (in / group) x kernel products (ConvTranspose: each
            # input element scatters (out / group) x kernel of them): w[1:] either way.
            count = float(np.prod(out)) if node.op_type == "Conv" else float(np.prod(ins[0]))
            flops += 2 * float(np.prod(w[1:])) * count
        elif node.op_type in ("MatMul", "Gemm"):
            k = ins[0][-1]
            if node.op_type == "Gemm" and any(a.name == "transA" and a.i for a in node.attribute):
                k = ins[0][0]
            flops += 2.0 * float(np.prod(out)) * k
    return flops / 1e9


PEAK_SIZE = 2048


class SgemmPeak:
    """The machine's sgemm speed, measured when asked: the better of numpy's OpenBLAS and dlc's
    own GEMM (a compiled PEAK_SIZE^3 MatMul, its constant B packed as models' weights are) on a
    PEAK_SIZE^3 product. numpy's OpenBLAS alone ran below dlc's convolutions on this machine,
    which made "% of peak" exceed 100."""

    def __init__(self, args):
        import numpy as np
        import onnx
        from onnx import helper, numpy_helper
        rng = np.random.default_rng(0)
        self.a = rng.standard_normal((PEAK_SIZE, PEAK_SIZE)).astype(np.float32)
        b = rng.standard_normal((PEAK_SIZE, PEAK_SIZE)).astype(np.float32)
        work = os.path.join(args.work, "compare", "sgemm_peak")
        os.makedirs(work, exist_ok=True)
        path = os.path.join(work, "model.onnx")
        shape = [PEAK_SIZE, PEAK_SIZE]
        graph = helper.make_graph(
            [helper.make_node("MatMul", ["a", "b"], ["c"])], "sgemm_peak",
            [helper.make_tensor_value_info("a", onnx.TensorProto.FLOAT, shape)],
            [helper.make_tensor_value_info("c", onnx.TensorProto.FLOAT, shape)],
            [numpy_helper.from_array(b, "b")])
        onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
        self.dlc = DlcModel(args.dlc, path, work, "sgemm_peak", args.cxx, {"a": shape})
        self.c = np.empty_like(self.a)

    def gflops(self, threads, tries=3):
        """GFLOP/s of the faster library with `threads` threads, best of `tries` products each.
        The dlc model lives only for this measurement: a model left alive (its idle threads)
        slowed the engines measured next."""
        from threadpoolctl import threadpool_limits
        a = self.a
        with threadpool_limits(limits=threads, user_api="blas"):
            a @ a
            best = min(timed(lambda: a @ a, 1) for _ in range(tries))
        model = self.dlc.load(threads)
        model.bind([self.a], [self.c])
        model.run()
        best = min([best] + [timed(model.run, 1) for _ in range(tries)])
        model.close()
        return 2 * PEAK_SIZE ** 3 / (best * 1e-3) / 1e9


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
    elif args.rss_engine == "ov":
        import onnx
        path = os.path.join(model_dir, "model.onnx")
        initializers = {i.name for i in onnx.load(path).graph.initializer}
        input_name = [i.name for i in onnx.load(path).graph.input if i.name not in initializers][0]
        request = openvino_request(path, input_name, x.shape, threads)
        run = lambda: request.infer({0: x})
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
    p.add_argument("--models", default="all",
                   help="a set (%s) or model names, comma-separated" % "|".join(MODEL_SETS))
    p.add_argument("--threads", default="1,2")
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--cxx", default=os.environ.get("CXX", "c++"))
    p.add_argument("--json", help="also write the results here")
    p.add_argument("--no-rss", action="store_true", help="skip the peak RSS measurements")
    p.add_argument("--baseline-dlc", help="another dlc (an earlier build) timed in the same "
                   "rounds: adds dlc / baseline per model, to show no model got slower")
    p.add_argument("--rss-engine", help=argparse.SUPPRESS)
    p.add_argument("--rss-threads", type=int, default=1, help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.rss_engine:
        rss_child(args)
        return
    import onnxruntime
    import openvino
    names = MODEL_SETS.get(args.models) or [m for m in args.models.split(",") if m]
    subprocess.run([TORCH_PYTHON, os.path.join(ROOT, "scripts", "export_models.py"),
                    os.path.join(args.work, "models"), "--models", ",".join(names)], check=True,
                   stdout=subprocess.DEVNULL)
    thread_counts = [int(t) for t in args.threads.split(",")]
    peak_meter = SgemmPeak(args)
    peaks = {t: peak_meter.gflops(t) for t in thread_counts}
    print("CPU: " + cpu_summary())
    print("ONNX Runtime %s (all graph optimizations, sequential), OpenVINO %s (f32, latency); "
          "%d rounds, interleaved" % (onnxruntime.__version__, openvino.__version__,
                                      args.rounds))
    print("sgemm peak (the faster of numpy's OpenBLAS and dlc's GEMM, 2048^3) at the start: " +
          ", ".join("%.1f GFLOP/s on %d thread%s" % (peaks[t], t, "s" * (t > 1))
                    for t in thread_counts) + "; each row's % peak is of its own rounds' peak")
    header = ("model", "thr", "dlc ms", "ORT ms", "OV ms", "dlc/best", "GFLOP", "dlc GF/s",
              "% peak", "rnd d/b", "rnd %pk")
    if args.baseline_dlc:
        header += ("dlc/base",)
    print(("%-12s %3s %9s %9s %9s %8s %6s %8s %6s %7s %7s" + " %8s" * bool(args.baseline_dlc)) %
          header)
    results = []
    for name in names:
        model_dir = os.path.join(args.work, "models", name)
        import numpy as np
        gflop = model_gflop(os.path.join(model_dir, "model.onnx"),
                            np.load(os.path.join(model_dir, "input.npy")).shape)
        for threads in thread_counts:
            runs, errors, close = engines(args, name, threads)
            for run in runs.values():
                run()
            errs = errors()
            for engine, err in errs.items():
                if err > 1e-3:
                    sys.exit("%s's %s output is off from PyTorch's by %g (relative)" %
                             (ENGINE_NAMES[engine], name, err))
            # Repeats per round so that a round lasts about 0.2 s.
            repeats = max(1, int(0.2e3 / max(timed(runs["dlc"], 3), 1e-3)))
            times = {e: [] for e in runs}
            # The peak is measured in the same rounds too: on a shared machine the speed the
            # cores give changes over minutes (the start-of-run figure varied 80-128 GFLOP/s
            # on one thread between runs), and a model's % of peak must compare like with like.
            round_peaks = []
            for _ in range(args.rounds):
                for engine, run in runs.items():
                    times[engine].append(settled_timed(run, repeats))
                round_peaks.append(peak_meter.gflops(threads, tries=1))
            peak = max(round_peaks)
            round_ratios = [times["dlc"][r] / min(times[e][r] for e in PEERS)
                            for r in range(args.rounds)]
            round_fractions = [gflop / (times["dlc"][r] * 1e-3) / round_peaks[r]
                               for r in range(args.rounds)]
            close()
            med = {e: statistics.median(v) for e, v in times.items()}
            best_peer = min(PEERS, key=lambda e: med[e])
            gflops = gflop / (med["dlc"] * 1e-3)
            row = {"model": name, "threads": threads, "gflop": gflop,
                   "ratio": med["dlc"] / med[best_peer], "best_peer": ENGINE_NAMES[best_peer],
                   "dlc_gflops": gflops, "peak_fraction": gflops / peak,
                   "sgemm_peak_gflops": peak,
                   "round_ratio": statistics.median(round_ratios),
                   "round_peak_fraction": statistics.median(round_fractions)}
            for e in times:
                row.update({e + "_ms": med[e], e + "_min_ms": min(times[e]),
                            e + "_rel_err": errs[e]})
            results.append(row)
            if "base" in med:
                row["baseline_ratio"] = med["dlc"] / med["base"]
            print("%-12s %3d %9.3f %9.3f %9.3f %8.2f %6.2f %8.1f %5.0f%% %7.2f %6.0f%%" %
                  (name, threads, med["dlc"], med["ort"], med["ov"], row["ratio"], gflop, gflops,
                   100 * row["peak_fraction"], row["round_ratio"],
                   100 * row["round_peak_fraction"]) +
                  (" %8.2f" % row["baseline_ratio"] if "base" in med else ""), flush=True)
    for t in thread_counts:
        rows = [r for r in results if r["threads"] == t]
        print("geomean dlc / faster peer on %d thread%s: %.2f (round by round: %.2f)" %
              (t, "s" * (t > 1), statistics.geometric_mean([r["ratio"] for r in rows]),
               statistics.geometric_mean([r["round_ratio"] for r in rows])))
    if args.baseline_dlc:
        for t in thread_counts:
            against = [r["baseline_ratio"] for r in results if r["threads"] == t]
            print("dlc / baseline on %d thread%s: geomean %.2f, worst %.2f" %
                  (t, "s" * (t > 1), statistics.geometric_mean(against), max(against)))
    if len(thread_counts) == 2:
        one, two = thread_counts
        pairs = [(a, b) for a in results if a["threads"] == one
                 for b in results if b["threads"] == two and b["model"] == a["model"]]
        speedups = [a["dlc_ms"] / b["dlc_ms"] for a, b in pairs]
        # Below a millisecond a model's ops take microseconds each, and handing a region to
        # another thread, not the kernels, decides its scaling (the peers' too).
        sized = [a["dlc_ms"] / b["dlc_ms"] for a, b in pairs if a["dlc_ms"] >= 1.0]
        print("geomean dlc speedup %d -> %d threads: %.2fx over all %d models%s" %
              (one, two, statistics.geometric_mean(speedups), len(speedups),
               "; %.2fx over the %d taking 1 ms or more on %d thread%s" %
               (statistics.geometric_mean(sized), len(sized), one, "s" * (one > 1))
               if sized else ""))
    # Peak RSS after all the timing: the children's runs beside the timed ones disturbed them.
    if not args.no_rss:
        print("peak RSS, MB (a fresh process per engine):")
        print("%-12s %3s %7s %7s %7s" % ("model", "thr", "dlc", "ORT", "OV"))
        for row in results:
            for e in ("dlc",) + PEERS:
                row[e + "_rss_mb"] = peak_rss(args, e, row["model"], row["threads"])
            print("%-12s %3d %7.0f %7.0f %7.0f" % (row["model"], row["threads"], row["dlc_rss_mb"],
                                                  row["ort_rss_mb"], row["ov_rss_mb"]), flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"cpu": cpu_summary(), "sgemm_peak_gflops": peaks, "results": results},
                      f, indent=1)


if __name__ == "__main__":
    main()
