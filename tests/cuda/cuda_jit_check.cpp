// Compiles generated CUDA models' kernel source with NVRTC, as a model's create does on a GPU
// its fat binary lacks, for each compute capability given (e.g. 7.5,8.0,12.0): each must give
// a cubin (or, beyond what this NVRTC knows, PTX) defining every kernel by name, and NVRTC
// must not warn (generated code compiles warning-free; a warning fails). Needs no GPU. Each DIR holds a model's source, headers and kernel count as the model embeds them
// (extracted from NAME.cu by run_cuda_model.py).
// Usage: cuda_jit_check MAJOR.MINOR[,MAJOR.MINOR...] DIR...
#include "dlc_cuda_calls.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace {

std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Compiles the model in `dir` for each of `archs`; the number of failures.
int check(const std::string &dir, const std::string &archs) {
  const int kernels = std::atoi(readFile(dir + "/kernel_count").c_str());
  const char *const names[] = {"dlc_cuda_rtc.h", "scalar_ops.h", "dlc_cuda_kernels.h"};
  std::string headerTexts[3];
  const char *headers[3];
  for (int i = 0; i < 3; ++i) {
    headerTexts[i] = readFile(dir + "/" + names[i]);
    headers[i] = headerTexts[i].c_str();
  }
  const std::string source = readFile(dir + "/kernels.cu");
  const dlc::cuda::KernelSource kernelSource = {source.c_str(), 3, headers, names, kernels};
  int failures = 0;
  std::stringstream list(archs);
  for (std::string arch; std::getline(list, arch, ',');) {
    int major = 0, minor = 0;
    std::sscanf(arch.c_str(), "%d.%d", &major, &minor);
    std::string image, warnings;
    const char *error = dlc::cuda::compileKernels(kernelSource, major, minor, &image, &warnings);
    // A cubin names its kernels in NUL-terminated strings, PTX in .entry lines.
    const bool ptx = image.find(".entry") != std::string::npos;
    int missing = 0;
    for (int k = 0; !error && k < kernels; ++k) {
      const std::string kernel = "kernel" + std::to_string(k);
      missing += image.find(ptx ? ".entry " + kernel + "(" : kernel + std::string(1, '\0')) ==
                 std::string::npos;
    }
    if (error || missing || image.empty() || !warnings.empty()) {
      const std::string why =
          error            ? std::string(error)
          : missing        ? std::to_string(missing) + " of " + std::to_string(kernels) +
                          " kernels missing"
          : image.empty()  ? std::string("an empty image")
                           : "NVRTC warns: " + warnings.substr(0, warnings.find('\n'));
      std::fprintf(stderr, "FAILED %s %s: %s\n", dir.c_str(), arch.c_str(), why.c_str());
      ++failures;
    } else {
      std::printf("ok %s %s: %s of %zu bytes with %d kernels\n", dir.c_str(), arch.c_str(),
                  ptx ? "PTX" : "cubin", image.size(), kernels);
    }
  }
  return failures;
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s MAJOR.MINOR[,MAJOR.MINOR...] DIR...\n", argv[0]);
    return 2;
  }
  int failures = 0;
  for (int i = 2; i < argc; ++i)
    failures += check(argv[i], argv[1]);
  return failures ? 1 : 0;
}
