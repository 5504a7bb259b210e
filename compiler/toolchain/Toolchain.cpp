#include "compiler/toolchain/Toolchain.h"
#include "compiler/Embedded.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Chrono.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/xxhash.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <sstream>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

namespace dlc {

std::string cxxCompiler() {
  const char *cxx = std::getenv("CXX");
  return cxx && *cxx ? cxx : "c++";
}

std::string cxxCompilerIdentity() {
  const std::string compiler = cxxCompiler();
  std::string path = compiler;
  if (!llvm::StringRef(compiler).contains('/'))
    if (auto found = llvm::sys::findProgramByName(compiler))
      path = *found;
  llvm::sys::fs::file_status status;
  if (llvm::sys::fs::status(path, status))
    return path;
  return path + " " + std::to_string(status.getSize()) + " " +
         std::to_string(llvm::sys::toTimeT(status.getLastModificationTime()));
}

namespace {
// $DLC_CXXFLAGS, word by word: on the compile and the link line, so that e.g.
// -fsanitize=address works for `dlc run`.
std::vector<std::string> userFlags() {
  std::vector<std::string> flags;
  if (const char *extra = std::getenv("DLC_CXXFLAGS")) {
    std::istringstream words(extra);
    for (std::string w; words >> w;)
      flags.push_back(w);
  }
  return flags;
}
} // namespace

std::vector<std::string> cxxFlags(const std::string &cpu) {
  // Without trapping math: gcc otherwise keeps every floating-point comparison in a branch of
  // its own (a compare may set an exception flag), so a fused chain with a clamp or a select
  // ran one element at a time (MobileNetV3's HardSwish chains: 1 ns per element). No value
  // changes, only exception flags that nothing reads; clang ignores them by default.
  std::vector<std::string> flags = {"-std=c++17", "-O3", "-fPIC", "-fno-trapping-math",
                                    "-Wall", "-Wextra"};
  if (!cpu.empty())
    flags.push_back("-march=" + cpu);
  for (auto &flag : userFlags())
    flags.push_back(flag);
  return flags;
}

std::vector<std::string> cxxCommand(const std::string &cpu) {
  std::vector<std::string> command = {cxxCompiler()}, flags = cxxFlags(cpu);
  command.insert(command.end(), flags.begin(), flags.end());
  return command;
}

std::string nvccCompiler(std::string &error) {
  if (const char *nvcc = std::getenv("DLC_NVCC"); nvcc && *nvcc) {
    if (llvm::sys::fs::can_execute(nvcc))
      return nvcc;
    error = "DLC_NVCC '" + std::string(nvcc) + "' is not an executable";
    return "";
  }
  if (auto found = llvm::sys::findProgramByName("nvcc"))
    return *found;
  const char *standard = "/usr/local/cuda/bin/nvcc";
  if (llvm::sys::fs::can_execute(standard))
    return standard;
  error = "none found (set DLC_NVCC, or put nvcc on PATH)";
  return "";
}

std::string cudaIncludeDir(const std::string &nvcc) {
  llvm::SmallString<256> dir(llvm::sys::path::parent_path(llvm::sys::path::parent_path(nvcc)));
  llvm::sys::path::append(dir, "include");
  return std::string(dir);
}

std::vector<std::string> nvccCommand(const std::string &nvcc,
                                     const std::vector<std::string> &archs) {
  std::vector<std::string> command = {nvcc, "-std=c++17", "-O3", "-Xcompiler",
                                      "-fPIC,-Wall,-Wextra"};
  for (const auto &arch : archs) {
    std::string number = arch.substr(3); // "sm_80" -> "80"
    command.insert(command.end(), {"-gencode", "arch=compute_" + number + ",code=sm_" + number});
  }
  // PTX of the newest architecture: the driver compiles it for GPUs newer than any listed.
  std::string newest = archs.back().substr(3);
  command.insert(command.end(), {"-gencode", "arch=compute_" + newest + ",code=compute_" + newest});
  return command;
}

namespace {

bool canWriteIn(const std::string &dir) {
  llvm::SmallString<256> probe;
  int fd;
  if (llvm::sys::fs::createUniqueFile(dir + "/.probe-%%%%%%", fd, probe))
    return false;
  ::close(fd);
  llvm::sys::fs::remove(probe);
  return true;
}

bool writableDir(const std::string &dir) {
  if (llvm::sys::fs::create_directories(dir))
    return false;
  return canWriteIn(dir);
}

// A folder in the shared temporary directory holds programs `dlc run` executes: it must be
// this user's own, not a symlink, and closed to everyone else.
bool privateDir(const std::string &dir) {
  ::mkdir(dir.c_str(), 0700);
  struct stat status;
  return ::lstat(dir.c_str(), &status) == 0 && S_ISDIR(status.st_mode) &&
         status.st_uid == ::getuid() && (status.st_mode & 077) == 0 && canWriteIn(dir);
}

// An exclusive lock on `path` (created if needed), held until destruction. Processes that
// build the same cache entry at once (parallel `dlc run`s, a build's dlc_add_model targets)
// take turns, so the first builds and the others find its result instead of each compiling
// the same objects. Where the file cannot be locked the entry is still built, unshared.
class FileLock {
public:
  explicit FileLock(const std::string &path)
      : fd_(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644)) {
    while (fd_ >= 0 && ::flock(fd_, LOCK_EX) != 0 && errno == EINTR) {
    }
  }
  ~FileLock() {
    if (fd_ >= 0)
      ::close(fd_); // releases the lock
  }
  FileLock(const FileLock &) = delete;
  FileLock &operator=(const FileLock &) = delete;

private:
  int fd_;
};

} // namespace

std::string cacheDir(std::string &error) {
  llvm::SmallString<256> preferred, fallback;
  if (const char *env = std::getenv("DLC_CACHE_DIR"); env && *env)
    preferred = env;
  else if (const char *xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    llvm::sys::path::append(preferred, xdg, "dlc");
  else if (const char *home = std::getenv("HOME"); home && *home)
    llvm::sys::path::append(preferred, home, ".cache", "dlc");
  llvm::sys::path::system_temp_directory(/*erasedOnReboot=*/true, fallback);
  llvm::sys::path::append(fallback, "dlc-cache-" + std::to_string(::getuid()));
  if (!preferred.empty() && writableDir(std::string(preferred)))
    return std::string(preferred);
  if (privateDir(std::string(fallback)))
    return std::string(fallback);
  error = "no writable cache folder: '" + std::string(preferred) + "' cannot be written and '" +
          std::string(fallback) + "' is not a private folder of this user (set DLC_CACHE_DIR)";
  return "";
}

std::string publishCacheEntry(const std::string &built, const std::string &dir,
                              const std::string &marker) {
  if (!llvm::sys::fs::rename(built, dir))
    return dir;
  if (!llvm::sys::fs::exists(dir + "/" + marker))
    return built; // `dir` is someone's unfinished leftover: not ours to delete
  llvm::sys::fs::remove_directories(built);
  return dir;
}

int execute(const std::vector<std::string> &argv, std::string *output) {
  auto program = llvm::sys::findProgramByName(argv[0]);
  if (!program) {
    if (output)
      *output = "cannot find program '" + argv[0] + "'";
    return -1;
  }
  std::vector<llvm::StringRef> args(argv.begin(), argv.end());
  llvm::SmallString<128> log;
  std::optional<llvm::StringRef> redirects[3];
  if (output) {
    llvm::sys::fs::createTemporaryFile("dlc-tool", "log", log);
    redirects[0] = llvm::StringRef("/dev/null");
    redirects[1] = redirects[2] = llvm::StringRef(log);
  }
  std::string message;
  int rc = llvm::sys::ExecuteAndWait(*program, args, std::nullopt,
                                     output ? llvm::ArrayRef(redirects)
                                            : llvm::ArrayRef<std::optional<llvm::StringRef>>(),
                                     0, 0, &message);
  if (output) {
    std::ifstream in(std::string(log.str()));
    std::stringstream text;
    text << in.rdbuf();
    *output = text.str() + message;
    llvm::sys::fs::remove(log);
  }
  return rc;
}

bool writeFile(const std::string &path, const std::string &text, std::string &error) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  out.close();
  if (!out) {
    error = "cannot write '" + path + "'";
    return false;
  }
  return true;
}

bool compileSources(const std::vector<std::string> &sources,
                    const std::vector<std::string> &includeDirs, const std::string &objDir,
                    const std::vector<std::string> &command, std::vector<std::string> &objects,
                    std::string &error) {
  objects.clear();
  for (const auto &src : sources)
    objects.push_back(objDir + "/" + llvm::sys::path::stem(src).str() + ".o");
  std::atomic<size_t> next{0};
  std::mutex errorMutex;
  bool ok = true;
  auto worker = [&] {
    for (size_t i; (i = next++) < sources.size();) {
      std::vector<std::string> argv = command;
      for (const auto &dir : includeDirs)
        argv.push_back("-I" + dir);
      argv.insert(argv.end(), {"-c", sources[i], "-o", objects[i]});
      std::string output;
      if (execute(argv, &output) != 0) {
        std::lock_guard<std::mutex> lock(errorMutex);
        ok = false;
        error += "compiling " + sources[i] + " failed:\n" + output;
      }
    }
  };
  unsigned jobs = std::max(
      1u, std::min<unsigned>(std::thread::hardware_concurrency(), (unsigned)sources.size()));
  std::vector<std::thread> threads;
  for (unsigned j = 0; j < jobs; ++j)
    threads.emplace_back(worker);
  for (auto &t : threads)
    t.join();
  return ok;
}

bool writeRuntimeHeaders(const std::string &dir, std::string &error) {
  for (const auto &file : embeddedFiles()) {
    llvm::StringRef name(file.name);
    if (file.isCpuRuntime() && name.ends_with(".h") &&
        !writeFile(dir + "/" + llvm::sys::path::filename(name).str(), file.text, error))
      return false;
  }
  return true;
}

namespace {
// cxxCommand for the runtime's sources, without what concerns generated code only:
// DLC_CHECK_MEMORY switches code in generated sources, and a user's -Werror is about their
// model (dlc's own build compiles the runtime with -Werror). Checked and -Werror builds so
// share the plain runtime instead of compiling an identical one.
std::vector<std::string> runtimeCommand(const std::string &cpu) {
  std::vector<std::string> command = cxxCommand(cpu);
  for (const char *generatedOnly : {"-DDLC_CHECK_MEMORY", "-Werror"})
    command.erase(std::remove(command.begin(), command.end(), generatedOnly), command.end());
  return command;
}
} // namespace

bool runtimeObjects(const std::string &cpu, std::vector<std::string> &objects, std::string &error) {
  const std::vector<std::string> command = runtimeCommand(cpu);
  std::string key = cxxCompilerIdentity();
  for (size_t i = 1; i < command.size(); ++i)
    key += " " + command[i];
  for (const auto &file : embeddedFiles())
    if (file.isCpuRuntime())
      key += std::string(file.name) + file.text;
  char hash[32];
  std::snprintf(hash, sizeof hash, "%016llx",
                (unsigned long long)llvm::xxh3_64bits(llvm::StringRef(key)));
  std::string cache = cacheDir(error);
  if (cache.empty())
    return false;
  std::string dir = cache + "/runtime-" + hash;
  std::string stamp = dir + "/complete";
  objects.clear();
  for (const auto &file : embeddedFiles()) {
    llvm::StringRef name(file.name);
    if (file.isCpuRuntime() && name.ends_with(".cpp"))
      objects.push_back(dir + "/" + llvm::sys::path::stem(name).str() + ".o");
  }
  if (llvm::sys::fs::exists(stamp))
    return true;
  FileLock lock(dir + ".lock");
  if (llvm::sys::fs::exists(stamp))
    return true; // built by the process that held the lock
  // Built in a private folder, then published whole.
  llvm::SmallString<256> tmp;
  if (llvm::sys::fs::createUniqueDirectory(cache + "/build", tmp)) {
    error = "cannot create a folder in the cache " + cache;
    return false;
  }
  std::string tmpDir(tmp.str());
  std::vector<std::string> paths, built;
  bool ok = writeRuntimeHeaders(tmpDir, error);
  for (const auto &file : embeddedFiles()) {
    llvm::StringRef name(file.name);
    if (ok && file.isCpuRuntime() && name.ends_with(".cpp")) {
      paths.push_back(tmpDir + "/" + llvm::sys::path::filename(name).str());
      ok = writeFile(paths.back(), file.text, error);
    }
  }
  ok = ok && compileSources(paths, {tmpDir}, tmpDir, command, built, error) &&
       writeFile(tmpDir + "/complete", "", error);
  if (!ok) {
    llvm::sys::fs::remove_directories(tmpDir);
    return false;
  }
  if (publishCacheEntry(tmpDir, dir, "complete") != dir)
    objects = built;
  return true;
}

bool archive(const std::string &library, const std::vector<std::string> &objects,
             std::string &error) {
  llvm::sys::fs::remove(library);
  std::vector<std::string> argv = {"ar", "rcs", library};
  argv.insert(argv.end(), objects.begin(), objects.end());
  std::string output;
  if (execute(argv, &output) != 0) {
    error = "ar failed:\n" + output;
    return false;
  }
  return true;
}

bool link(const std::string &executable, const std::vector<std::string> &inputs,
          const std::vector<std::string> &libraries, std::string &error) {
  std::vector<std::string> argv = {cxxCompiler()}, extra = userFlags();
  argv.insert(argv.end(), inputs.begin(), inputs.end());
  argv.insert(argv.end(), extra.begin(), extra.end());
  argv.insert(argv.end(), {"-o", executable});
  for (const std::string &library : libraries)
    argv.push_back("-l" + library);
  std::string output;
  if (execute(argv, &output) != 0) {
    error = "linking " + executable + " failed:\n" + output;
    return false;
  }
  return true;
}

} // namespace dlc
