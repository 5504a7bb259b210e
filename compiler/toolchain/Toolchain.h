// Building generated code with the system C++ compiler.
#ifndef DLC_COMPILER_TOOLCHAIN_H
#define DLC_COMPILER_TOOLCHAIN_H

#include <string>
#include <vector>

namespace dlc {

// $CXX or c++, and the flags generated code is built with (plus $DLC_CXXFLAGS): portable
// x86-64, or -march=`cpu` when set (CompileOptions::cpu).
std::string cxxCompiler();
// cxxCompiler as the caches key it: the file its name runs, so that `c++` and `/usr/bin/c++`
// (CMake's name for it) share entries, with that file's size and time, so that an upgraded
// compiler builds afresh.
std::string cxxCompilerIdentity();
std::vector<std::string> cxxFlags(const std::string &cpu);
// The compiler and its flags, as compileSources takes them.
std::vector<std::string> cxxCommand(const std::string &cpu);

// The CUDA toolkit's nvcc: $DLC_NVCC, else nvcc on PATH, else /usr/local/cuda/bin/nvcc; ""
// with `error` set when there is none.
std::string nvccCompiler(std::string &error);
// The toolkit's headers (cuda_runtime.h, cublas_v2.h) beside `nvcc`'s bin folder.
std::string cudaIncludeDir(const std::string &nvcc);
// nvcc and its flags for generated CUDA code: SASS for each of `archs` ("sm_80", at least
// one) and PTX of the last, so the driver can compile it for newer GPUs.
std::vector<std::string> nvccCommand(const std::string &nvcc,
                                     const std::vector<std::string> &archs);

// Where dlc keeps built runtime objects and `dlc run` builds: $DLC_CACHE_DIR, else
// $XDG_CACHE_HOME/dlc, else ~/.cache/dlc; when that folder cannot be created or written,
// $TMPDIR/dlc-cache-<uid>. Empty, with `error` set, when none is writable.
std::string cacheDir(std::string &error);
// Moves the finished folder `built` to `dir` in one rename, so processes sharing the cache
// never see a half-written entry, and returns the folder to use. When another process got
// there first (`dir` has the file `marker` that finished entries have), `built` is dropped
// and `dir` used; when `dir` is an unfinished leftover, `built` is used where it is.
std::string publishCacheEntry(const std::string &built, const std::string &dir,
                              const std::string &marker);

// Compiles each source to an object in `objDir` (in parallel) with `command` (compiler and
// flags); on failure returns false and puts the compiler's output in `error`.
bool compileSources(const std::vector<std::string> &sources,
                    const std::vector<std::string> &includeDirs, const std::string &objDir,
                    const std::vector<std::string> &command, std::vector<std::string> &objects,
                    std::string &error);
// Objects of the embedded runtime, built once per runtime version, compiler and flags, then
// cached.
bool runtimeObjects(const std::string &cpu, std::vector<std::string> &objects, std::string &error);
// Writes the embedded runtime headers into `dir`.
bool writeRuntimeHeaders(const std::string &dir, std::string &error);
bool archive(const std::string &library, const std::vector<std::string> &objects,
             std::string &error);
bool link(const std::string &executable, const std::vector<std::string> &inputs,
          const std::vector<std::string> &libraries, std::string &error);
// Runs `argv`; returns its exit code (or -1 when it could not start).
int execute(const std::vector<std::string> &argv, std::string *output = nullptr);

bool writeFile(const std::string &path, const std::string &text, std::string &error);

} // namespace dlc

#endif
