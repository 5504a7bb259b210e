// Building generated code with the system C++ compiler.
#ifndef DLC_COMPILER_TOOLCHAIN_H
#define DLC_COMPILER_TOOLCHAIN_H

#include <string>
#include <vector>

namespace dlc {

// $CXX or c++, and the flags generated code is built with (plus $DLC_CXXFLAGS): portable
// x86-64, or -march=`cpu` when set (CompileOptions::cpu).
std::string cxxCompiler();
std::vector<std::string> cxxFlags(const std::string &cpu);

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

// Compiles each source to an object in `objDir` (in parallel); on failure returns false and
// puts the compiler's output in `error`.
bool compileSources(const std::vector<std::string> &sources,
                    const std::vector<std::string> &includeDirs, const std::string &objDir,
                    const std::string &cpu, std::vector<std::string> &objects,
                    std::string &error);
// Objects of the embedded runtime, built once per runtime version, compiler and flags, then
// cached.
bool runtimeObjects(const std::string &cpu, std::vector<std::string> &objects,
                    std::string &error);
// Writes the embedded runtime headers into `dir`.
bool writeRuntimeHeaders(const std::string &dir, std::string &error);
bool archive(const std::string &library, const std::vector<std::string> &objects,
             std::string &error);
bool link(const std::string &executable, const std::vector<std::string> &inputs,
          std::string &error);
// Runs `argv`; returns its exit code (or -1 when it could not start).
int execute(const std::vector<std::string> &argv, std::string *output = nullptr);

bool writeFile(const std::string &path, const std::string &text, std::string &error);

} // namespace dlc

#endif
