"""Building the node-test harness: the registry of generated models, the ninja file (runtime
objects cached across suites, batches of generated models per translation unit, the CUDA
variants), sanitizer settings and the NVRTC check of the CUDA kernels. Used by
run_node_tests.py."""
import concurrent.futures
import hashlib
import os
import re
import shutil
import subprocess
import sys


sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "testlib"))
from sanitizers import (SANITIZER_EXITCODE, SANITIZER_REPORTS, sanitizer_env,  # noqa: E402,F401
                        sanitizer_flags)


def dlc_built_runtime(dlc, model, work, sanitize):
    """The runtime as `dlc` builds it with `sanitize`'s flags as DLC_CXXFLAGS: compiled once
    into dlc's cache, which tests/models/run_model.py --sanitize shares (the sanitized
    runtime is the costliest thing either builds). The runtime comes inside the static
    library of `model`; (its path, None) or (None, dlc's error)."""
    out = os.path.join(work, "dlc-built-runtime")
    shutil.rmtree(out, ignore_errors=True)
    env = dict(os.environ, DLC_CXXFLAGS=(os.environ.get("DLC_CXXFLAGS", "") + " " +
                                         sanitizer_flags(sanitize)).strip())
    r = subprocess.run([dlc, "compile", model, "-o", out, "--name", "runtime_carrier",
                        "--emit", "staticlib"], capture_output=True, text=True, env=env)
    if r.returncode != 0:
        return None, r.stderr.strip()
    return os.path.join(out, "libruntime_carrier.a"), None


# What the CUDA models' registry functions (in the batches) share with registry.cpp.
CUDA_REGISTRY_DECLARATIONS = r"""
struct CudaModel {
  void *model;
  dlc_cuda_context *context;
};

// The model's run and synchronize come type-erased: one copy of this function serves every
// model (a template instantiated per model took a suite's registry 34 s to compile).
dlc_status runOnDevice(CudaModel *m, const dlc_model_info *info, const dlc_tensor *i, int ni,
                       const dlc_tensor *o, int no,
                       dlc_status (*run)(void *, const void *const *, void *const *),
                       dlc_status (*synchronize)(void *));
"""

# runOnDevice runs on device buffers that start one element past an allocation: aligned for
# their dtype but not to 16 bytes, as a caller's pointers may be, so the kernels that move 16
# bytes at a time must take their element path.
CUDA_REGISTRY_HELPER = r"""
dlc_status runOnDevice(CudaModel *m, const dlc_model_info *info, const dlc_tensor *i, int ni,
                       const dlc_tensor *o, int no,
                       dlc_status (*run)(void *, const void *const *, void *const *),
                       dlc_status (*synchronize)(void *)) {
  dlc_status s = dlc_check_tensors(info->inputs, info->num_inputs, i, ni);
  if (s == DLC_OK)
    s = dlc_check_tensors(info->outputs, info->num_outputs, o, no);
  if (s != DLC_OK)
    return s;
  std::vector<void *> blocks;
  bool placed = true;
  auto place = [&](const dlc_tensor_info &t) -> unsigned char * {
    void *block = nullptr;
    if (dlc::cuda::allocate(m->context, t.bytes + 16, &block)) {
      placed = false;
      return nullptr;
    }
    blocks.push_back(block);
    return static_cast<unsigned char *>(block) + std::max<size_t>(1, dlc_dtype_size(t.dtype));
  };
  std::vector<const void *> in;
  std::vector<void *> out;
  for (int k = 0; k < ni; ++k) {
    unsigned char *device = place(info->inputs[k]);
    if (device && info->inputs[k].bytes &&
        dlc::cuda::copyToDevice(m->context, device, i[k].data, info->inputs[k].bytes))
      placed = false;
    in.push_back(device);
  }
  for (int k = 0; k < no; ++k)
    out.push_back(place(info->outputs[k]));
  in.push_back(nullptr);
  out.push_back(nullptr);
  s = placed ? run(m->model, in.data(), out.data()) : DLC_DEVICE_ERROR;
  for (int k = 0; s == DLC_OK && k < no; ++k)
    if (info->outputs[k].bytes &&
        dlc::cuda::copyToHost(m->context, o[k].data, out[k], info->outputs[k].bytes))
      s = DLC_DEVICE_ERROR;
  const dlc_status synchronized = synchronize(m->model);
  if (s == DLC_OK)
    s = synchronized;
  for (void *block : blocks)
    dlc::cuda::deallocate(m->context, block);
  return s;
}
"""

# The registry's create/run/destroy of a CUDA model: on a context of its own on device 0, run
# through runOnDevice.
CUDA_REGISTRY_FUNCTIONS = (
    "dlc_status %(n)s_c(void **m) {\n"
    "  CudaModel *h = new CudaModel{nullptr, nullptr};\n"
    "  %(n)s_model *model = nullptr;\n"
    "  dlc_status s = dlc_cuda_context_create(0, &h->context);\n"
    "  dlc_cuda_options o = {0, h->context, 0};\n"
    "  if (s == DLC_OK) s = %(n)s_create(&o, &model);\n"
    "  if (s != DLC_OK) { dlc_cuda_context_release(h->context); delete h; return s; }\n"
    "  h->model = model;\n  *m = h;\n  return s;\n}\n"
    "dlc_status %(n)s_r(void *m, const dlc_tensor *i, int ni, const dlc_tensor *o, int no) {\n"
    "  return runOnDevice(\n"
    "      static_cast<CudaModel *>(m), %(n)s_info(), i, ni, o, no,\n"
    "      [](void *x, const void *const *in, void *const *out) {\n"
    "        return %(n)s_run(static_cast<%(n)s_model *>(x), in, out);\n      },\n"
    "      [](void *x) { return %(n)s_synchronize(static_cast<%(n)s_model *>(x)); });\n}\n"
    "void %(n)s_d(void *m) {\n  CudaModel *h = static_cast<CudaModel *>(m);\n"
    "  %(n)s_destroy(static_cast<%(n)s_model *>(h->model));\n"
    "  dlc_cuda_context_release(h->context);\n  delete h;\n}")


def batch_registration(index, names, cuda):
    """The harness's create/run/destroy wrappers of `names` and registerBatch<index>, which
    appends them to the registry: written into the batch that compiles those models."""
    lines = ["namespace {"]
    for n in names:
        if cuda:
            lines.append(CUDA_REGISTRY_FUNCTIONS % {"n": n})
            continue
        lines.append(
            "dlc_status %(n)s_c(void **m) { return %(n)s_create(nullptr, "
            "reinterpret_cast<%(n)s_model **>(m)); }\n"
            "dlc_status %(n)s_r(void *m, const dlc_tensor *i, int ni, const dlc_tensor *o, "
            "int no) { return %(n)s_run_checked(static_cast<%(n)s_model *>(m), i, ni, o, no); }\n"
            "void %(n)s_d(void *m) { %(n)s_destroy(static_cast<%(n)s_model *>(m)); }" % {"n": n})
    lines.append("} // namespace\n")
    lines.append("void registerBatch%d(std::vector<RegisteredModel> &models) {" % index)
    lines.append("  models.insert(models.end(), {")
    for n in names:
        lines.append('    {"%(n)s", %(n)s_info, %(n)s_c, %(n)s_r, %(n)s_d},' % {"n": n})
    lines.append("  });\n}\n")
    return lines


def write_build(work, names, runtime_dir, here, cxx, check_memory, sanitize, batch, cuda, nvcc,
                cuda_arch, runtime_lib):
    """cuda: "" (CPU code), "emulate" (the CUDA sources on the host) or "gpu" (the batches built
    by `nvcc` for `cuda_arch`, linked with CUDA, cuBLAS and cuDNN). `runtime_lib`: the CPU
    runtime already built, or None to compile its sources with the harness's flags."""
    batches = [names[b:b + batch] for b in range(0, len(names), batch)]
    # Each batch registers its own models: the registry that wrapped every model in one
    # translation unit took longer to compile than any batch.
    lines = ['#include "registry.h"\n']
    if cuda:
        lines.append('#include "dlc_cuda_calls.h"\n\n#include <algorithm>\n'
                     + CUDA_REGISTRY_DECLARATIONS + CUDA_REGISTRY_HELPER)
    for b in range(len(batches)):
        lines.append("void registerBatch%d(std::vector<RegisteredModel> &models);" % b)
    lines.append("\nconst std::vector<RegisteredModel> &registeredModels() {")
    lines.append("  static const std::vector<RegisteredModel> models = [] {")
    lines.append("    std::vector<RegisteredModel> all;")
    for b in range(len(batches)):
        lines.append("    registerBatch%d(all);" % b)
    lines.append("    return all;\n  }();\n  return models;\n}\n")
    with open(os.path.join(work, "registry.cpp"), "w") as f:
        f.write("\n".join(lines))

    # -Werror: generated code must compile warning-free.
    flags = "-std=c++17 -O1 -Wall -Wextra -Werror -I%s -I%s" % (runtime_dir, here)
    cuda_home = os.environ.get("CUDA_HOME", "/usr/local/cuda")
    libs = ""
    if cuda:
        flags += " -I%s" % os.path.join(runtime_dir, "cuda")
    if cuda == "emulate":
        flags += " -DDLC_CUDA_EMULATE"
    if cuda == "gpu":
        flags += " -I%s" % os.path.join(cuda_home, "include")
        libs = "-L%s -lnvrtc -lcudnn -lcublas -lcudart" % os.path.join(cuda_home, "lib64")
    if check_memory:
        flags += " -DDLC_CHECK_MEMORY"
    san = sanitizer_flags(sanitize)
    if san:
        flags += " " + san
    # The CPU runtime does not depend on the harness's flags (only generated code reads
    # DLC_CHECK_MEMORY): a suite given a built one compiles only the CUDA runtime's sources.
    runtime = [] if runtime_lib else [os.path.join(runtime_dir, f)
                                      for f in sorted(os.listdir(runtime_dir))
                                      if f.endswith(".cpp")]
    if cuda:
        cuda_runtime_sources, = cuda_helpers("cuda_runtime_sources")
        runtime += [os.path.join(runtime_dir, "cuda", f) for f in cuda_runtime_sources(cuda)]
    sources = [os.path.join(here, "harness.cpp"), os.path.join(work, "registry.cpp")]
    # Generated models keep their internals in their own namespace, so a few dozen share one
    # translation unit: the runtime headers and the standard library are parsed once per batch.
    for b, members in enumerate(batches):
        path = os.path.join(work, "batch_%d.cpp" % b)
        text = ['#include "registry.h"']
        if cuda:
            text.append('#include "dlc_cuda_calls.h"\n' + CUDA_REGISTRY_DECLARATIONS)
        for n in members:
            text.append('#include "%s/%s/gen/%s.%s"' % (work, n, n, "cu" if cuda else "cpp"))
            text.append('#include "%s/%s/gen/%s_weights.cpp"' % (work, n, n))
        text += batch_registration(b, members, cuda)
        with open(path, "w") as f:
            f.write("\n".join(text))
        sources.append(path)
    ninja = ["cxx = %s" % cxx, "flags = %s" % flags, "ldflags = %s" % san, "libs = %s" % libs,
             "rule cc\n  command = $cxx $flags -MMD -MF $out.d -c $in -o $out\n"
             "  depfile = $out.d\n  deps = gcc",
             # Suites running at once may build the same cached object: each writes its own
             # file and renames it into place.
             "rule cached_cc\n  command = $cxx $flags -c $in -o $out.tmp$$$$ && "
             "mv -f $out.tmp$$$$ $out",
             "rule link\n  command = $cxx $ldflags $in -o $out $libs -lm -pthread"]
    if cuda == "gpu":
        ninja.append("rule nvcc\n  command = %s -std=c++17 -O1 -arch=%s -x cu -I%s -I%s "
                     "-Xcompiler -Wall,-Wextra,-Werror -Werror all-warnings -c $in -o $out"
                     % (nvcc, cuda_arch, runtime_dir, os.path.join(runtime_dir, "cuda")))
    # The runtime's objects are the same for every suite built with the same compiler and
    # flags: one cache beside the suites' work folders, keyed by those and the runtime's text.
    objects = []
    cache = os.path.join(os.path.dirname(work), "runtime-objects", runtime_key(cxx, flags,
                                                                               runtime_dir))
    os.makedirs(cache, exist_ok=True)
    for s in runtime:
        obj = os.path.join(cache, os.path.basename(s)[:-4] + ".o")
        objects.append(obj)
        if not os.path.exists(obj):
            ninja.append("build %s: cached_cc %s" % (obj, s))
    for i, s in enumerate(sources):
        obj = "obj/%d_%s.o" % (i, os.path.basename(s)[:-4])
        batch_source = os.path.basename(s).startswith("batch_")
        objects.append(obj)
        ninja.append("build %s: %s %s" % (obj, "nvcc" if cuda == "gpu" and batch_source else "cc",
                                          s))
        if cuda == "emulate" and batch_source:
            # The emulated build of a batch only has to run, on small tensors: without the
            # optimizer it compiles in half the time. The CPU suites build the same emitter's
            # host code at -O1, NVRTC checks the kernels (run_node_tests.py), and every
            # cuda_nvcc_* model goes through nvcc whole.
            ninja.append("  flags = %s" % flags.replace("-O1", "-O0"))
    # A static library after the objects that need it.
    ninja.append("build harness: link %s" % " ".join(objects + ([runtime_lib] if runtime_lib
                                                               else [])))
    with open(os.path.join(work, "build.ninja"), "w") as f:
        f.write("\n".join(ninja) + "\n")


def runtime_key(cxx, flags, runtime_dir):
    """What the runtime's objects depend on: the compiler (its version too), the flags and
    every runtime source and header."""
    digest = hashlib.sha256((cxx + "\0" + flags + "\0").encode())
    version = subprocess.run([cxx, "--version"], capture_output=True, text=True).stdout
    digest.update(version.encode())
    for folder in (runtime_dir, os.path.join(runtime_dir, "cuda")):
        for name in sorted(os.listdir(folder)):
            path = os.path.join(folder, name)
            if os.path.isfile(path):
                with open(path, "rb") as f:
                    digest.update(name.encode() + b"\0" + f.read())
    return digest.hexdigest()[:16]


def cuda_helpers(*names):
    """The named functions of tests/cuda/run_cuda_model.py, which the CUDA model tests share."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(
        __file__))), "cuda"))
    import run_cuda_model
    return [getattr(run_cuda_model, name) for name in names]


# Kernels one NVRTC program compiles: a program's fixed cost (the headers, the compiler's
# start) is most of a small model's, and models repeat each other's kernels (a suite's 8500
# kernels are 1900 distinct ones), so each distinct kernel is compiled once, in programs of
# about this many.
NVRTC_PROGRAM_KERNELS = 100
KERNEL_HEADERS = ("dlc_cuda_rtc.h", "scalar_ops.h", "dlc_cuda_kernels.h")
KERNEL_INCLUDE = '#include "dlc_cuda_kernels.h"\n'


def renumber_kernels(source, delta):
    return re.sub(r"\bkernel(\d+)\(", lambda m: "kernel%d(" % (int(m.group(1)) + delta), source)


def kernel_units(folder):
    """The kernel source of the model in `folder` (as cuda_jit_check reads it) as units that
    compile alone, each numbered from kernel0, with its kernel count: one unit per kernel
    when the source is just its kernels' definitions, else the whole source as one."""
    with open(os.path.join(folder, "kernel_count")) as f:
        count = int(f.read())
    with open(os.path.join(folder, "kernels.cu")) as f:
        source = f.read().replace(KERNEL_INCLUDE, "", 1)
    head, *definitions = re.split(r"(?m)^(?=DLC_GLOBAL )", source)
    if head.strip() or len(definitions) != count or any(
            re.findall(r"\bkernel(\d+)\(", d) != [str(k)] for k, d in enumerate(definitions)):
        return [(source, count)]
    return [(renumber_kernels(d, -k), 1) for k, d in enumerate(definitions)]


def write_kernel_program(header_folder, units, combined):
    """One folder, as cuda_jit_check reads it, holding `units` (kernel_units) numbered one
    after another, with the headers of `header_folder`."""
    os.makedirs(combined, exist_ok=True)
    for header in KERNEL_HEADERS:
        with open(os.path.join(header_folder, header)) as f, \
                open(os.path.join(combined, header), "w") as out:
            out.write(f.read())
    parts, total = [KERNEL_INCLUDE], 0
    for source, count in units:
        parts.append(renumber_kernels(source, total))
        total += count
    with open(os.path.join(combined, "kernels.cu"), "w") as f:
        f.write("".join(parts))
    with open(os.path.join(combined, "kernel_count"), "w") as f:
        f.write(str(total))


def nvrtc_check(work, names, runtime_dir, jobs):
    """The kernel source each CUDA model embeds, compiled by NVRTC as its create would on a GPU
    older than the fat binary (compute capability 7.5); {model: why} for those that fail.
    The models' distinct kernels go NVRTC_PROGRAM_KERNELS to a program; when one fails, each
    model using its kernels is compiled alone, which names the models at fault."""
    build_jit_checker, extract_kernel_source = cuda_helpers("build_jit_checker",
                                                            "extract_kernel_source")

    folders, errors = {}, {}
    for n in names:
        folder = os.path.join(work, n, "jit")
        if extract_kernel_source(os.path.join(work, n, "gen", n + ".cu"), folder):
            folders[folder] = n
        else:
            errors[n] = "no kernel source for NVRTC in %s.cu" % n
    exe = build_jit_checker(os.path.join(runtime_dir, "cuda"), work)
    if not exe:
        return {n: "cuda_jit_check did not build" for n in names}

    def check(dirs):
        """cuda_jit_check over `dirs`: {dir: why} for those that fail."""
        run = subprocess.run([exe, "7.5"] + dirs, capture_output=True, text=True)
        failed = {}
        for line in run.stderr.splitlines():
            m = re.match(r"FAILED (\S+) \S+: (.*)", line)
            if m:
                failed[m.group(1)] = m.group(2)
        # A crash names no folder: none of them passes.
        if run.returncode != 0 and not failed:
            failed = {d: "cuda_jit_check exited with status %d" % run.returncode for d in dirs}
        return failed

    # Each distinct kernel goes to one program; a program remembers the models that use its
    # kernels, and a model passes when every program holding its kernels does.
    programs, users, program_of, last_kernels = [], [], {}, 0
    for folder in folders:
        for unit in kernel_units(folder):
            if unit not in program_of:
                if not programs or last_kernels >= NVRTC_PROGRAM_KERNELS:
                    programs.append([])
                    users.append(set())
                    last_kernels = 0
                program_of[unit] = len(programs) - 1
                programs[-1].append(unit)
                last_kernels += unit[1]
            users[program_of[unit]].add(folder)

    def check_program(index):
        combined = os.path.join(work, "nvrtc-program-%d" % index)
        write_kernel_program(next(iter(folders)), programs[index], combined)
        together = check([combined])
        if not together:
            return {}
        # Compiled alone, each model using its kernels either fails on its own or the
        # program's failure came from combining them, which must not pass unseen either.
        alone = check(sorted(users[index]))
        return alone or {folder: "fails only beside other models' kernels: " +
                         together[combined] for folder in users[index]}

    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        for failed in pool.map(check_program, range(len(programs))):
            for folder, why in failed.items():
                if folder in folders:
                    errors[folders[folder]] = why
    return errors
