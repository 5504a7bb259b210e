#!/usr/bin/python3
"""A model compiled with `dlc compile --target cuda`, built, run on its saved input and
compared with PyTorch's output (exported by scripts/export_models.py).

Without a GPU (--emulate) the generated CUDA source is built as C++ with -DDLC_CUDA_EMULATE
against the CPU runtime library: every generated kernel body runs on the host, launched over
its grid. With --nvcc it is built by nvcc against CUDA and cuBLAS and runs on the GPU.
--generated DIR skips the compile (a GPU machine without dlc gets the sources from one
with it); --check-nvcc only compiles the generated source with nvcc (-Werror host code)."""
import argparse
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
# What a program with a CUDA model links beside the model and the runtimes.
CUDA_LIBS = ["-lnvrtc", "-lcudnn", "-lcublas", "-lcudart", "-lpthread"]
ROOT = os.path.dirname(os.path.dirname(HERE))


def cuda_runtime_sources(mode):
    """The CUDA runtime's sources a build compiles: the calls both implementations share and the
    one for `mode`, "emulate" (on the host, with -DDLC_CUDA_EMULATE) or "gpu"."""
    return ["dlc_cuda.cpp", "dlc_cuda_emulated.cpp" if mode == "emulate" else "dlc_cuda_device.cpp"]


def run(cmd, **kw):
    print("+ " + " ".join(cmd), flush=True)
    return subprocess.run(cmd, **kw).returncode


def gpu_present():
    smi = shutil.which("nvidia-smi")
    return bool(smi) and subprocess.run([smi, "-L"], stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL).returncode == 0


def add_build_arguments(p):
    """The arguments model_build and skipped read."""
    mode = p.add_mutually_exclusive_group(required=True)
    mode.add_argument("--emulate", action="store_true")
    mode.add_argument("--nvcc", action="store_true")
    mode.add_argument("--check-nvcc", action="store_true")
    p.add_argument("--runtime-lib", help="libdlc_runtime.a (the CPU runtime)")
    p.add_argument("--runtime-dir", default=os.path.join(ROOT, "runtime"),
                   help="CPU runtime sources, built when --runtime-lib is not given")
    p.add_argument("--cuda-arch", default="sm_80,sm_90")
    p.add_argument("--nvcc-path", default="nvcc",
                   help="the nvcc to use; empty or missing: skip (exit 77) in nvcc modes")
    p.add_argument("--skip-without-gpu", action="store_true",
                   help="exit 77 (ctest's skip) when nvidia-smi finds no GPU")


def skipped(args):
    """Whether this machine cannot do what args ask (printed as ctest's SKIPPED)."""
    if (args.nvcc or args.check_nvcc) and not shutil.which(args.nvcc_path or "nvcc-missing"):
        print("SKIPPED: nvcc not found (the CUDA toolkit is not installed here)")
        return True
    if args.skip_without_gpu and not gpu_present():
        print("SKIPPED: no GPU here (run scripts/gpu_check.sh where one is)")
        return True
    return False


# Compute capabilities the NVRTC check compiles for: older than the default fat binary,
# in it, newer, and beyond any NVRTC (PTX of the newest it knows).
JIT_CHECK_ARCHS = "7.5,8.0,9.0,12.0,20.0"


def extract_kernel_source(cu, folder):
    """Writes the kernel source and headers that the generated `cu` embeds for NVRTC, and its
    kernel count, into `folder` (cuda_jit_check's input); False when they are not there."""
    with open(cu) as f:
        text = f.read()
    literals = re.findall(r'R"dlcjit\((.*?)\)dlcjit"', text, re.S)
    count = re.search(r"constexpr int kKernelCount = (\d+);", text)
    if len(literals) != 4 or not count:
        print("FAILED: %s embeds %d kernel source texts, not 4" % (cu, len(literals)))
        return False
    os.makedirs(folder, exist_ok=True)
    for file, text in zip(["dlc_cuda_rtc.h", "scalar_ops.h", "dlc_cuda_kernels.h", "kernels.cu",
                           "kernel_count"], literals + [count.group(1)]):
        with open(os.path.join(folder, file), "w") as f:
            f.write(text)
    return True


def build_jit_checker(cuda_runtime_dir, work):
    """cuda_jit_check built against the CUDA runtime sources in `cuda_runtime_dir` (with
    dlc_runtime.h beside or above them); its path, or None."""
    cuda_home = os.environ.get("CUDA_HOME", "/usr/local/cuda")
    exe = os.path.join(work, "cuda_jit_check")
    include = [a for d in (cuda_runtime_dir, os.path.dirname(cuda_runtime_dir),
                           os.path.join(cuda_home, "include")) for a in ("-I", d)]
    ok = run(["c++", "-std=c++17", "-O1", "-Wall", "-Wextra", "-Werror"] + include +
             [os.path.join(HERE, "cuda_jit_check.cpp")] +
             [os.path.join(cuda_runtime_dir, f) for f in cuda_runtime_sources("gpu")] + ["-o", exe,
              "-L" + os.path.join(cuda_home, "lib64")] + CUDA_LIBS) == 0
    return exe if ok else None


def jit_check(args, gen, name):
    """The kernel source NAME.cu embeds, compiled by NVRTC for each of JIT_CHECK_ARCHS."""
    folder = os.path.join(args.work, "jit")
    if not extract_kernel_source(os.path.join(gen, name + ".cu"), folder):
        return False
    exe = build_jit_checker(gen, args.work)
    return bool(exe) and run([exe, JIT_CHECK_ARCHS, folder]) == 0


def model_build(args, gen, name):
    """How to build a program around the model `name` generated in `gen`: (compiler command,
    sources and libraries to add to it), after compiling its kernels with nvcc in the nvcc
    modes; None after a failed step. Reads args.nvcc/check_nvcc (else emulated), cuda_arch,
    nvcc_path, generated, work, runtime_lib and runtime_dir."""
    weights_source = os.path.join(gen, name + "_weights.cpp")
    if args.generated:
        # Generated on another machine: its .incbin names the weights file where dlc wrote it.
        with open(weights_source) as f:
            text = f.read()
        weights_source = os.path.join(args.work, name + "_weights.cpp")
        here = os.path.abspath(os.path.join(gen, name + ".weights.bin"))
        with open(weights_source, "w") as f:
            f.write(re.sub(r'\.incbin \\"[^"]*\\"', lambda m: '.incbin \\"%s\\"' % here, text))
    warnings = ["-Wall", "-Wextra", "-Werror"]
    if args.check_nvcc or args.nvcc:
        archs = args.cuda_arch.split(",")
        gencode = [f for a in archs for f in
                   ("-gencode", "arch=compute_%s,code=sm_%s" % (a[3:], a[3:]))]
        # PTX of the newest architecture too, for GPUs the fat binary lacks.
        newest = archs[-1][3:]
        gencode += ["-gencode", "arch=compute_%s,code=compute_%s" % (newest, newest)]
        nvcc = [args.nvcc_path, "-std=c++17", "-O3", "-I", gen, "-Xcompiler", ",".join(warnings),
                "-Werror", "all-warnings"] + gencode
        obj = os.path.join(args.work, name + "_cuda.o")
        if run(nvcc + ["-c", os.path.join(gen, name + ".cu"), "-o", obj]) != 0:
            return None
        if args.check_nvcc:
            return ([], [], []) if jit_check(args, gen, name) else None
        # The host side (CUDA runtime, weights, runner, CPU runtime) by the C++ compiler.
        cuda_home = os.environ.get("CUDA_HOME", "/usr/local/cuda")
        sources = [obj] + [os.path.join(gen, f) for f in cuda_runtime_sources("gpu")] + [
            weights_source]
        build = ["c++", "-std=c++17", "-O2", "-I", gen, "-I", os.path.join(cuda_home, "include")
                 ] + warnings + ["-DDLC_MODEL=" + name, "-include", os.path.join(gen, name + ".h")]
        libs = ["-L" + os.path.join(cuda_home, "lib64")] + CUDA_LIBS
    else:
        sources = ["-x", "c++", os.path.join(gen, name + ".cu"), "-x", "none"] + [
            os.path.join(gen, f) for f in cuda_runtime_sources("emulate")] + [weights_source]
        build = ["c++", "-std=c++17", "-O2", "-DDLC_CUDA_EMULATE", "-I", gen] + warnings + [
            "-DDLC_MODEL=" + name, "-include", os.path.join(gen, name + ".h")]
        libs = ["-lpthread"]
    if args.runtime_lib:
        runtime = [args.runtime_lib]
    else:
        runtime = sorted(os.path.join(args.runtime_dir, f) for f in os.listdir(args.runtime_dir)
                         if f.endswith(".cpp"))
    return build, sources + runtime, libs


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--dlc")
    p.add_argument("--model-dir", required=True, help="holds model.onnx, input.npy, expected.npy")
    p.add_argument("--work", required=True)
    p.add_argument("--name", required=True)
    p.add_argument("--dim", action="append", default=[])
    p.add_argument("--generated", help="sources already generated here")
    add_build_arguments(p)
    p.add_argument("--tol", default="1e-4")
    p.add_argument("--lifecycle", action="store_true",
                   help="also build and run tests/cuda/cuda_lifecycle.cpp on the model")
    p.add_argument("--fault", nargs=2, metavar=("TEXT", "BAD_NPY"),
                   help="first run on BAD_NPY, which must fail with DLC_INVALID_INPUT_DATA "
                        "naming TEXT (then the good run on the same model)")
    p.add_argument("--sanitizer", default="",
                   help="run the programs under this command (e.g. compute-sanitizer)")
    args = p.parse_args()

    if skipped(args):
        return 77
    os.makedirs(args.work, exist_ok=True)
    gen = args.generated or os.path.join(args.work, "generated")
    if not args.generated:
        shutil.rmtree(gen, ignore_errors=True)
        pins = [a for d in args.dim for a in ("--dim", d)]
        if run([args.dlc, "compile", os.path.join(args.model_dir, "model.onnx"), "-o", gen,
                "--target", "cuda", "--name", args.name] + pins) != 0:
            return 1
    name = args.name
    built = model_build(args, gen, name)
    if built is None:
        return 1
    if args.check_nvcc:
        return 0
    build, sources, libs = built
    sanitizer = args.sanitizer.split()
    input_npy = os.path.join(args.model_dir, "input.npy")
    exe = os.path.join(args.work, name + "_runner")
    if run(build + [os.path.join(HERE, "cuda_runner.cpp")] + sources + ["-o", exe] + libs) != 0:
        return 1
    out = os.path.join(args.work, "out")
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    fault = ["--fault"] + args.fault if args.fault else []
    if run(sanitizer + [exe] + fault + [out, input_npy]) != 0:
        return 1
    if run([sys.executable, os.path.join(ROOT, "scripts", "compare_npy.py"),
            os.path.join(out, "output0.npy"), os.path.join(args.model_dir, "expected.npy"),
            "--tol", args.tol, "--name", name + " (cuda%s)" % (
                "" if args.nvcc else ", emulated")]) != 0:
        return 1
    programs = [os.path.join(HERE, "cuda_lifecycle.cpp")] if args.lifecycle else []
    for program in programs:
        exe = os.path.join(args.work, os.path.splitext(os.path.basename(program))[0])
        if run(build + [program] + sources + ["-o", exe] + libs) != 0:
            return 1
        if run(sanitizer + [exe, input_npy]) != 0:
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
