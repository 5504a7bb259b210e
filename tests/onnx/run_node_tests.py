#!/usr/bin/python3
"""ONNX backend tests through dlc: compile, build, run, compare with the shipped outputs.

Runs every test of one suite (a folder of <test>/model.onnx + test_data_set_0): compiles each
model with `dlc compile --emit source`, builds all that compile into one harness binary (the
runtime built once, the generated models batched a few dozen to a translation unit), runs it,
and compares each output with numpy at rtol 1e-3 / atol 1e-5. Prints a line per test, a
pass/fail table per op, and the suite's counts; exits non-zero on any unexpected result.

Every test either passes or is listed with its reason in tests/onnx/expected/<suite>.txt (an
unsupported op, an element type, a sequence input, ...); a listed test that starts passing
fails the run until the list is updated. `--update-expected` rewrites the list from this run,
deriving each reason from the test's error.

With --cuda-emulate every model is compiled with --target cuda and its generated CUDA source
built as C++ with -DDLC_CUDA_EMULATE (each kernel body runs on the host over its grid, cuBLAS
calls run the column-major product they describe), so the CUDA kernels are checked against the
same outputs without a GPU; its expected failures are in expected/<suite>-cuda.txt while the
CUDA target fails tests the CPU target passes, else in the CPU's list (--update-expected
writes or removes the CUDA list accordingly).
With --nvrtc as well (it needs the CUDA toolkit), each model's kernel source as the model
embeds it for NVRTC is compiled by NVRTC for compute capability 7.5 (a GPU older than the fat
binary, where create compiles the kernels); a model that NVRTC refuses or warns about fails.
With --pack DIR as well, the generated sources and converted data are also written to DIR (a
folder a GPU machine without dlc or the ONNX test data can take); there, --from-pack DIR builds
the harness with nvcc against CUDA, cuBLAS and cuDNN, runs it on the GPU and compares with the
same list (--skip-without-gpu: exit 77 when there is none).

With --skip-same-as DIR, a test whose model and first data set are byte for byte those of a test
in DIR is left out: another run covers it (onnx 1.23.2's node tests hold 445 of Debian's
unchanged, which the Debian suite's run with the same options already checks).

With --sanitize address,undefined the harness (generated code, runtime, harness) is compiled and
linked with -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer and
run with leak detection on; any sanitizer report, or any other crash of the harness, fails the
run.

Tests whose integer graph inputs decide output shapes (Slice bounds, Reshape's shape, axes given
as run-time inputs) cannot compile to static shapes; each also runs as a `<name>_frozen` variant
in which those inputs become initializers holding the test's own values, so the op is still
checked against the same reference outputs.
"""
import argparse
import collections
import concurrent.futures
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time

import numpy as np
import onnx
from onnx import numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness_build import (SANITIZER_EXITCODE, SANITIZER_REPORTS, cuda_helpers,  # noqa: E402
                           dlc_built_runtime, nvrtc_check, sanitizer_env, write_build)

RTOL, ATOL = 1e-3, 1e-5
# bfloat16 carries 8 significant bits: its references round every intermediate to bfloat16,
# dlc computes in float32 and rounds once, so results may differ by a unit or two of bfloat16.
BFLOAT16_RTOL = 2.0 ** -6
# The same holds for float16 outputs (11 significant bits): within two float16 units.
FLOAT16_RTOL = 2.0 ** -9


def parse_args():
    here = os.path.dirname(os.path.abspath(__file__))
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--dlc")
    p.add_argument("--runtime-dir", required=True, help="directory of the runtime sources")
    p.add_argument("--work", required=True)
    p.add_argument("--suite", required=True, help="suite name: node, node-1.23.2, simple, ...")
    p.add_argument("--data", help="folder of the suite's test folders")
    p.add_argument("--expected-failures",
                   help="default: expected/<suite>.txt beside this script")
    p.add_argument("--update-expected", action="store_true",
                   help="rewrite the expected-failures list from this run")
    p.add_argument("--batch", type=int, default=40,
                   help="generated models per translation unit")
    p.add_argument("--filter", default="", help="regex on test names")
    p.add_argument("--skip-same-as", metavar="DIR",
                   help="leave out tests byte-identical to one in this suite folder")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    p.add_argument("--cxx", default=os.environ.get("CXX", "c++"))
    p.add_argument("--check-memory", action="store_true",
                   help="build generated code with -DDLC_CHECK_MEMORY (dead memory poisoned)")
    p.add_argument("--cuda-emulate", action="store_true",
                   help="compile for --target cuda and run the kernels emulated on the host")
    p.add_argument("--nvrtc", action="store_true",
                   help="with --cuda-emulate: also compile every model's kernels with NVRTC "
                        "(a warning fails; nothing is run)")
    p.add_argument("--nvcc", default="", metavar="PATH", help="the nvcc of --from-pack")
    p.add_argument("--runtime-lib", metavar="LIB",
                   help="the CPU runtime built (libdlc_runtime.a); without it, and with "
                        "--from-pack, the harness compiles the runtime's sources (with "
                        "--sanitize it links the runtime dlc builds with the sanitizer flags)")
    p.add_argument("--pack", metavar="DIR",
                   help="with --cuda-emulate: also write the generated sources and data to DIR")
    p.add_argument("--from-pack", metavar="DIR",
                   help="build and run a --pack folder on the GPU (nvcc, CUDA libraries)")
    p.add_argument("--cuda-arch", default="native", help="nvcc -arch for --from-pack")
    p.add_argument("--skip-without-gpu", action="store_true",
                   help="with --from-pack: exit 77 (ctest's skip) when nvidia-smi finds no GPU")
    p.add_argument("--sanitize", default="", metavar="LIST",
                   help="build the harness with -fsanitize=LIST (e.g. address,undefined); "
                        "any sanitizer report fails the run")
    args = p.parse_args()
    if not args.from_pack and not (args.dlc and args.data):
        p.error("--dlc and --data are needed (except with --from-pack)")
    if (args.pack or args.nvrtc) and not args.cuda_emulate:
        p.error("--pack and --nvrtc go with --cuda-emulate")
    if args.skip_same_as and args.update_expected:
        p.error("--update-expected rewrites the whole suite's list: drop --skip-same-as")
    # A CUDA run's own list, expected/<suite>-cuda.txt, exists only while the CUDA target
    # fails tests the CPU target passes; otherwise it reads the CPU's list.
    args.cpu_expected_failures = os.path.join(here, "expected", args.suite + ".txt")
    args.cuda_expected_failures = None
    if not args.expected_failures:
        args.expected_failures = args.cpu_expected_failures
        if args.cuda_emulate or args.from_pack:
            args.cuda_expected_failures = os.path.join(here, "expected",
                                                       args.suite + "-cuda.txt")
            if os.path.exists(args.cuda_expected_failures):
                args.expected_failures = args.cuda_expected_failures
    return args


def derive_reason(name, error):
    """A short, stable reason for a new entry of the expected-failures list."""
    m = re.search(r"(\d+) unsupported ops?: (.*)$", error, re.M)
    if m:
        return "unsupported op%s: %s" % ("s" if int(m.group(1)) > 1 else "",
                                         re.sub(r" x\d+", "", m.group(2)))
    m = re.search(r"op (\S+) \(opset \d+\) is not supported", error)
    if m:
        return "unsupported op: " + m.group(1)
    m = re.search(r"no CUDA kernel for op (\S+?):? ", error)
    if m:
        return "no CUDA kernel: " + m.group(1)
    m = re.search(r"op domain '([^']+)' is not supported", error)
    if m:
        return "domain " + m.group(1)
    m = re.search(r"unsupported element type (\w+)", error)
    if m:
        return "element type " + m.group(1)
    if "must be a compile-time constant" in error:
        if name.endswith("_frozen"):
            return "a shape-deciding value computed from the frozen inputs by ops dlc does not fold"
        return "shape-deciding input fed at run time"
    if "is not a tensor" in error:
        return "non-tensor value (sequence/optional/map)"
    first = error.splitlines()[0] if error else ""
    first = re.sub(r"^.*?model\.onnx: ", "", first)
    return first[:110]


def write_expected_failures(path, suite, failures):
    """Rewrites the list: one `name  # reason` line per failing test, grouped by reason, each
    reason derived from the test's current error (so a list never explains a failure by a
    cause that has since been fixed)."""
    by_reason = collections.defaultdict(list)
    for name, error in failures.items():
        by_reason[derive_reason(name, error)].append(name)
    lines = ["# ONNX %s tests that do not pass, with the reason (run_node_tests.py fails when"
             % suite,
             "# one starts passing; --update-expected rewrites this file from a run).",
             ""]
    for reason in sorted(by_reason):
        for name in sorted(by_reason[reason]):
            lines.append("%s  # %s" % (name, reason))
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def load_expected_failures(path):
    expected = {}
    if os.path.exists(path):
        for line in open(path):
            line = line.split("#", 1)
            name = line[0].strip()
            if name:
                expected[name] = line[1].strip() if len(line) > 1 else ""
    return expected


Test = collections.namedtuple("Test", "name source ops model frozen")

# Ops whose listed inputs decide the output shape (or a sequence's or optional's structure, as
# If's condition may), or (Resize's roi, MelWeightMatrix's frequencies) are tables dlc builds
# at compile time.
SHAPE_INPUTS = {
    "Slice": (1, 2, 3, 4), "Reshape": (1,), "Squeeze": (1,), "Unsqueeze": (1,), "Expand": (1,),
    "Tile": (1,), "ConstantOfShape": (0,), "Range": (0, 1, 2), "Pad": (1, 3), "Split": (1,),
    "TopK": (1,), "OneHot": (1,), "Resize": (1, 2, 3), "Upsample": (1,), "CenterCropPad": (1,),
    "Compress": (1,), "AffineGrid": (1,), "Col2Im": (1, 2), "Dropout": (1, 2),
    "ReduceSum": (1,), "ReduceMean": (1,), "ReduceMax": (1,), "ReduceMin": (1,),
    "ReduceProd": (1,), "ReduceL1": (1,), "ReduceL2": (1,), "ReduceLogSum": (1,),
    "ReduceLogSumExp": (1,), "ReduceSumSquare": (1,), "CumSum": (1,), "CumProd": (1,),
    "Loop": (0, 1), "HannWindow": (0,), "HammingWindow": (0,), "BlackmanWindow": (0,),
    "DFT": (1, 2), "STFT": (1, 3), "MaxUnpool": (2,), "MelWeightMatrix": (0, 1, 2, 3, 4),
    "SequenceInsert": (2,), "SequenceAt": (1,), "SequenceErase": (1,), "SplitToSequence": (1,),
    "If": (0,), "NonZero": (0,), "NonMaxSuppression": (0, 1, 2, 3, 4),
}


def parse_value(declared, raw):
    """A test value of the declared type: an array, a list of arrays for a sequence, and for
    an optional its value or None."""
    if declared.HasField("optional_type"):
        optional = onnx.OptionalProto()
        optional.ParseFromString(raw)
        if optional.HasField("tensor_value"):
            return numpy_helper.to_array(optional.tensor_value)
        if optional.HasField("sequence_value"):
            return [numpy_helper.to_array(t) for t in optional.sequence_value.tensor_values]
        return None
    if declared.HasField("sequence_type"):
        sequence = onnx.SequenceProto()
        sequence.ParseFromString(raw)
        return [numpy_helper.to_array(t) for t in sequence.tensor_values]
    tensor = onnx.TensorProto()
    tensor.ParseFromString(raw)
    return numpy_helper.to_array(tensor)


def test_data(test_dir):
    """(kind, index, value) for the first test data set's inputs and outputs (parse_value)."""
    graph = onnx.load(os.path.join(test_dir, "model.onnx"), load_external_data=False).graph
    data = os.path.join(test_dir, "test_data_set_0")
    for f in sorted(os.listdir(data)):
        m = re.match(r"(input|output)_(\d+)\.pb$", f)
        if not m:
            continue
        kind, index = m.group(1), int(m.group(2))
        declared = (graph.input if kind == "input" else graph.output)[index].type
        with open(os.path.join(data, f), "rb") as fh:
            raw = fh.read()
        yield kind, index, parse_value(declared, raw)


def shape_deciding_inputs(model):
    # Old models list initializers among the inputs too; those are constants already.
    graph_inputs = {i.name for i in model.graph.input} - {t.name for t in model.graph.initializer}
    return {n.input[i] for n in model.graph.node for i in SHAPE_INPUTS.get(n.op_type, ())
            if i < len(n.input) and n.input[i] in graph_inputs}


def frozen_variant(model, test_dir, shape_inputs):
    """The model with the graph inputs named in shape_inputs turned into initializers holding
    the test's values, or None."""
    graph_inputs = [i.name for i in model.graph.input]
    if not shape_inputs:
        return None, []
    frozen = onnx.ModelProto()
    frozen.CopyFrom(model)
    values = {graph_inputs[i]: a for kind, i, a in test_data(test_dir) if kind == "input"}
    del frozen.graph.input[:]
    kept = []
    for i, name in enumerate(graph_inputs):
        if name in shape_inputs:
            frozen.graph.initializer.append(numpy_helper.from_array(values[name], name))
        else:
            frozen.graph.input.append(model.graph.input[i])
            kept.append(i)
    return frozen, kept


def test_digest(test_dir):
    """A hash of the test's model and first data set (names and bytes)."""
    digest = hashlib.sha256()
    with open(os.path.join(test_dir, "model.onnx"), "rb") as f:
        digest.update(f.read())
    data = os.path.join(test_dir, "test_data_set_0")
    for name in sorted(os.listdir(data)):
        with open(os.path.join(data, name), "rb") as f:
            digest.update(name.encode() + b"\0" + f.read())
    return digest.hexdigest()


def suite_digests(data_dir):
    return {test_digest(os.path.join(data_dir, name)) for name in os.listdir(data_dir)
            if os.path.exists(os.path.join(data_dir, name, "model.onnx"))}


def select_tests(data_dir, name_filter, work, skip_digests=frozenset()):
    """The tests to run, and how many were left out as byte-identical to another suite's."""
    selected, skipped = [], 0
    for name in sorted(os.listdir(data_dir)):
        model_path = os.path.join(data_dir, name, "model.onnx")
        if not os.path.exists(model_path) or not re.search(name_filter, name):
            continue
        if skip_digests and test_digest(os.path.join(data_dir, name)) in skip_digests:
            skipped += 1
            continue
        model = onnx.load(model_path)
        ops = sorted({n.op_type for n in model.graph.node}) or ["(no node)"]
        source = os.path.join(data_dir, name)
        selected.append(Test(name, source, ops, model_path, None))
        shape_inputs = shape_deciding_inputs(model)
        # An expanded test inlines the op's function body, which passes the shape-deciding
        # inputs through casts and arithmetic first: freeze what the op's own test freezes.
        unexpanded = os.path.join(data_dir, re.sub(r"_expanded(_ver\d+)?$", "", name),
                                  "model.onnx")
        if unexpanded != model_path and os.path.exists(unexpanded):
            own_inputs = {i.name for i in model.graph.input}
            shape_inputs |= shape_deciding_inputs(onnx.load(unexpanded)) & own_inputs
        frozen, kept = frozen_variant(model, source, shape_inputs)
        if frozen is not None:
            os.makedirs(os.path.join(work, name + "_frozen"), exist_ok=True)
            path = os.path.join(work, name + "_frozen", "model.onnx")
            onnx.save(frozen, path)
            selected.append(Test(name + "_frozen", source, ops, path, kept))
    return selected, skipped


def is_ml_dtype(array):
    """bfloat16, float8, 4- and 2-bit arrays (ml_dtypes): NumPy cannot name them in .npy, dlc
    reads and writes their bits as unsigned integers of the same width."""
    return array.dtype.type.__module__ == "ml_dtypes"


def convert_data(test, work_dir):
    """Writes the test's inputs (without frozen ones) and expected outputs as .npy, numbered
    in graph order; a sequence's elements take one number each, as dlc makes them inputs
    and outputs of their own."""
    out = os.path.join(work_dir, "data")
    os.makedirs(out, exist_ok=True)
    inputs, outputs = [], []
    for kind, i, value in sorted(test_data(test.source), key=lambda d: (d[0], d[1])):
        if kind == "input" and test.frozen is not None and i not in test.frozen:
            continue
        (inputs if kind == "input" else outputs).extend(
            value if isinstance(value, list) else [] if value is None else [value])
    for i, array in enumerate(inputs):
        if is_ml_dtype(array):
            array = array.view(np.uint16 if array.itemsize == 2 else np.uint8)
        np.save(os.path.join(out, "input_%d.npy" % i), array)
    for i, array in enumerate(outputs):
        path = os.path.join(out, "expected_%d.npy" % i)
        if is_ml_dtype(array):
            # bfloat16, float8, 4- and 2-bit types (ml_dtypes) do not survive .npy: keep
            # their values, and the type's name to read dlc's bits by.
            with open(path[:-4] + ".type", "w") as f:
                f.write(array.dtype.name)
            array = array.astype(np.int32 if "int" in array.dtype.name else np.float32)
        np.save(path, array)


def pin_options(test):
    """--dim pinning each symbolic input dim to the size the test's data has, as a user pins
    an exported model's batch dim, --sequence giving each sequence input's elements, and
    --absent naming the optional inputs the test leaves empty."""
    model = onnx.load(test.model, load_external_data=False)
    values = {i: v for kind, i, v in test_data(test.source) if kind == "input"}
    source_inputs = [i.name for i in onnx.load(os.path.join(test.source, "model.onnx"),
                                                load_external_data=False).graph.input]
    dims, options, absent = {}, [], []
    for graph_input in model.graph.input:
        if graph_input.name not in source_inputs:
            continue
        index = source_inputs.index(graph_input.name)
        value = values.get(index)
        if value is None and graph_input.type.HasField("optional_type") and index in values:
            absent.append(graph_input.name)
            continue
        if isinstance(value, list):
            shapes = ",".join("x".join(map(str, a.shape)) or "scalar" for a in value)
            options += ["--sequence", "%s=%s" % (graph_input.name, shapes)]
            continue
        shape = graph_input.type.tensor_type.shape.dim
        if value is None or len(shape) != value.ndim:
            continue
        for d, dim in enumerate(shape):
            if dim.dim_param:
                dims[dim.dim_param] = value.shape[d]
    if dims:
        options += ["--dim", ",".join("%s=%d" % item for item in sorted(dims.items()))]
    if absent:
        options += ["--absent", ",".join(absent)]
    return options


def compile_model(dlc, work, test, cuda):
    gen = os.path.join(work, test.name, "gen")
    target = ["--target", "cuda"] if cuda else []
    r = subprocess.run([dlc, "compile", test.model, "-o", gen, "--name", test.name,
                        "--emit", "source"] + target + pin_options(test), capture_output=True,
                       text=True)
    return r.returncode, r.stderr.strip()


def compare(work, name):
    data = os.path.join(work, name, "data")
    i = 0
    while os.path.exists(os.path.join(data, "expected_%d.npy" % i)):
        expected = np.load(os.path.join(data, "expected_%d.npy" % i))
        out = os.path.join(work, name, "out", "output_%d.npy" % i)
        if not os.path.exists(out):
            return "no output %d" % i
        actual = np.load(out)
        if actual.shape != expected.shape:
            return "output %d shape %s, expected %s" % (i, actual.shape, expected.shape)
        stored_type = os.path.join(data, "expected_%d.type" % i)
        rtol = RTOL
        if os.path.exists(stored_type):
            # dlc writes these types' bits as integers of the same width (sign-extended for
            # the signed small integers, which ml_dtypes reads from the low bits).
            import ml_dtypes
            name = open(stored_type).read()
            actual = actual.view(getattr(ml_dtypes, name)).astype(expected.dtype)
            if name == "bfloat16":
                rtol = BFLOAT16_RTOL
        if expected.dtype == np.float16:
            rtol = FLOAT16_RTOL
        if expected.dtype.kind in "fc":
            ok = np.allclose(actual, expected, rtol=rtol, atol=ATOL, equal_nan=True)
        else:
            ok = np.array_equal(actual, expected)
        if not ok:
            diff = np.max(np.abs(actual.astype(np.float64) - expected.astype(np.float64)))
            return "output %d differs (max abs diff %.3g)" % (i, diff)
        i += 1
    return None


# The generated files of one test that a pack carries (the runtime sources come from the
# checkout the GPU machine has).
def generated_files(name):
    return [name + ".cu", name + ".h", name + "_weights.cpp", name + ".weights.bin"]


def pack(pack_dir, work, tests, results):
    """Writes each compiled test's generated files and data, and a manifest of every test
    (with the compile errors), to `pack_dir`."""
    shutil.rmtree(pack_dir, ignore_errors=True)
    os.makedirs(pack_dir)
    for t in tests:
        if t.name in results:
            continue
        os.makedirs(os.path.join(pack_dir, t.name, "gen"))
        for f in generated_files(t.name):
            shutil.copy(os.path.join(work, t.name, "gen", f), os.path.join(pack_dir, t.name, "gen"))
        shutil.copytree(os.path.join(work, t.name, "data"), os.path.join(pack_dir, t.name, "data"))
    with open(os.path.join(pack_dir, "manifest.json"), "w") as f:
        json.dump({"tests": [[t.name, t.ops, t.frozen is not None] for t in tests],
                   "results": results}, f)


def unpack(pack_dir, work):
    """The tests and compile errors of a pack, its files placed in `work` as a compile would
    have left them (each weights file's .incbin names its new place)."""
    with open(os.path.join(pack_dir, "manifest.json")) as f:
        manifest = json.load(f)
    tests = [Test(name, None, ops, None, [] if frozen else None)
             for name, ops, frozen in manifest["tests"]]
    results = manifest["results"]
    for t in tests:
        if t.name in results:
            continue
        target = os.path.join(work, t.name)
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(os.path.join(pack_dir, t.name), target)
        weights = os.path.join(target, "gen", t.name + "_weights.cpp")
        here = os.path.join(target, "gen", t.name + ".weights.bin")
        with open(weights) as f:
            text = f.read()
        with open(weights, "w") as f:
            f.write(re.sub(r'\.incbin \\"[^"]*\\"', lambda m: '.incbin \\"%s\\"' % here, text))
    return tests, results


class PhaseTimes:
    """Wall time per phase, printed at the end: where a suite's time goes (CI's budget)."""

    def __init__(self):
        self.start, self.phases = time.monotonic(), []

    def mark(self, phase):
        now = time.monotonic()
        self.phases.append((phase, now - self.start))
        self.start = now

    def __str__(self):
        return "time: " + ", ".join("%s %.1f s" % p for p in self.phases)


def main():
    times = PhaseTimes()
    args = parse_args()
    here = os.path.dirname(os.path.abspath(__file__))
    work = os.path.abspath(args.work)
    os.makedirs(work, exist_ok=True)
    expected_failures = load_expected_failures(args.expected_failures)
    if args.from_pack:
        if args.skip_without_gpu and not cuda_helpers("gpu_present")[0]():
            print("SKIPPED: no GPU here")
            return 77
        tests, results = unpack(args.from_pack, work)
        skipped = 0
    else:
        tests, skipped = select_tests(args.data, args.filter, work,
                                      suite_digests(args.skip_same_as) if args.skip_same_as
                                      else frozenset())
    print("suite %s: %d tests (%d of them frozen variants)"
          % (args.suite, len(tests), sum(t.frozen is not None for t in tests)))
    if skipped:
        print("%d tests left out: byte-identical to tests of %s" % (skipped, args.skip_same_as))

    if not args.from_pack:
        results = {}
        with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
            futures = {pool.submit(compile_model, args.dlc, work, t, args.cuda_emulate): t.name
                       for t in tests}
            for f in concurrent.futures.as_completed(futures):
                rc, err = f.result()
                if rc != 0:
                    results[futures[f]] = "compile: " + (err or "exit status %d" % rc)
    compiled = [t.name for t in tests if t.name not in results]
    for t in tests:
        if t.name in compiled and not args.from_pack:
            convert_data(t, os.path.join(work, t.name))
    if args.pack:
        pack(args.pack, work, tests, results)
    cuda = "gpu" if args.from_pack else "emulate" if args.cuda_emulate else ""
    nvcc = args.nvcc or shutil.which("nvcc") or os.path.join(
        os.environ.get("CUDA_HOME", "/usr/local/cuda"), "bin", "nvcc")
    runtime_lib = None
    if args.sanitize and compiled and not args.from_pack:
        carrier = next(t.model for t in tests if t.name in compiled)
        runtime_lib, error = dlc_built_runtime(args.dlc, carrier, work, args.sanitize)
        if not runtime_lib:
            print("FAILED: dlc building the sanitized runtime: " + error)
            return 1
    elif args.runtime_lib and not args.from_pack:
        runtime_lib = os.path.abspath(args.runtime_lib)
    write_build(work, compiled, os.path.abspath(args.runtime_dir), here, args.cxx,
                args.check_memory, args.sanitize, args.batch, cuda, nvcc, args.cuda_arch,
                runtime_lib)
    times.mark("compile")
    build = subprocess.run(["ninja", "-C", work, "-j", str(args.jobs)], capture_output=True,
                           text=True)
    times.mark("build")
    if build.returncode != 0:
        print(build.stdout[-6000:])
        print("FAILED: building the harness")
        return 1
    run = subprocess.run([os.path.join(work, "harness"), work], capture_output=True, text=True,
                         env=sanitizer_env() if args.sanitize else None)
    # The harness exits 0 or 1 (some model failed); anything else is a crash or a sanitizer
    # report, which fails the run even when every output that was written matches.
    crashed = run.returncode not in (0, 1)
    reports = [l for l in run.stderr.splitlines()
               if args.sanitize and any(r in l for r in SANITIZER_REPORTS)]
    if crashed or reports:
        print(run.stderr[-12000:])
    run_errors = dict(l.split(": ", 1) for l in run.stdout.splitlines() if ": " in l)
    for n in compiled:
        results[n] = run_errors.get(n) or compare(work, n)
    times.mark("run")
    if cuda == "emulate" and args.nvrtc:
        for n, why in nvrtc_check(work, compiled, os.path.abspath(args.runtime_dir),
                                  args.jobs).items():
            results[n] = results[n] or "NVRTC: " + why
        times.mark("nvrtc")

    per_op = collections.defaultdict(lambda: [0, 0])
    passed = failed = xfailed = 0
    failures = {}
    for name, _, ops, _, _ in tests:
        error = results.get(name)
        if error:
            failures[name] = error
        shown = error.splitlines()[0] if error else ""
        for op in ops:
            per_op[op][0 if not error else 1] += 1
        if name in expected_failures:
            if error:
                xfailed += 1
                print("XFAIL %s: %s (%s)" % (name, shown, expected_failures[name]))
                continue
            shown = "passes but is listed in %s; remove it there" % args.expected_failures
        if shown:
            failed += 1
            print("FAIL  %s: %s" % (name, shown))
        else:
            passed += 1
            print("PASS  %s" % name)
    print("\n%-26s %6s %6s" % ("op", "pass", "fail"))
    for op in sorted(per_op):
        print("%-26s %6d %6d" % (op, per_op[op][0], per_op[op][1]))
    originals = [t.name for t in tests if t.frozen is None]
    direct = sum(n not in failures for n in originals)
    via_frozen = sum(n in failures and (n + "_frozen") in results and
                     not results[n + "_frozen"] for n in originals)
    print("\nsuite %s: %d of %d tests pass (%.1f%%); %d more pass as frozen variants "
          "(%.1f%% with them)" % (args.suite, direct, len(originals),
                                  100.0 * direct / max(1, len(originals)), via_frozen,
                                  100.0 * (direct + via_frozen) / max(1, len(originals))))
    print("expected failures (listed with reasons): %d" % xfailed)
    print("%d passed, %d failed" % (passed, failed))
    print(times)
    if args.update_expected:
        path = args.cuda_expected_failures or args.expected_failures
        if args.cuda_expected_failures and \
                set(failures) == set(load_expected_failures(args.cpu_expected_failures)):
            if os.path.exists(path):
                os.remove(path)
            print("the CUDA target fails the CPU's list (%s): %s not needed" %
                  (args.cpu_expected_failures, path))
        else:
            write_expected_failures(path, args.suite, failures)
            print("rewrote %s: %d entries" % (path, len(failures)))
        failed = 0
    if reports:
        print("FAILED: %d sanitizer report(s), the first: %s" % (len(reports), reports[0]))
    if crashed:
        print("FAILED: the harness exited with status %d%s" % (
            run.returncode, " (a sanitizer report)" if run.returncode == SANITIZER_EXITCODE
            else ""))
    return 1 if failed or crashed or reports else 0


if __name__ == "__main__":
    sys.exit(main())
