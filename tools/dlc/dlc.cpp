// dlc: the ahead-of-time ONNX compiler's command line.
#include "compiler/Driver.h"

#include <cstring>
#include <iostream>
#include <string>
#include <vector>

namespace {

const char kUsage[] = R"(usage:
  dlc compile MODEL -o DIR [--name N] [--emit source|staticlib|mlir] [--target cpu]
              [--no-reuse | --first-fit] [--report] [--report-json FILE]
              [--report-memory FILE.svg]
      Compile an ONNX model (.onnx or .pb) to C++ sources (NAME.h, NAME.cpp, weights) or to
      a static library libNAME.a with its header. --report prints arena bytes, the lower
      bound, bytes without reuse, in-place ops, elided concats and weight bytes; --no-reuse
      gives every value its own memory; --first-fit uses the naive planner (comparisons). Build generated code with -DDLC_CHECK_MEMORY to
      poison memory whose values are dead (reads after reuse show up as NaN).
  dlc run MODEL IN.npy... -o DIR [--no-reuse]
      Compile (cached), build and run the model on the inputs (graph-input order); writes
      DIR/<output name>.npy for each graph output. $DLC_CXXFLAGS adds compiler and linker
      flags (e.g. -DDLC_CHECK_MEMORY, -fsanitize=address). Builds are cached in
      $DLC_CACHE_DIR (default $XDG_CACHE_HOME/dlc or ~/.cache/dlc; a temporary folder when
      that cannot be written); parallel runs share it safely.
  dlc inspect MODEL
      Print opsets, inputs/outputs with shapes, an op histogram and the parameter count.
  dlc ops
      List the supported ONNX op types.
  dlc --help | --version
)";

int usageError(const std::string &message) {
  std::cerr << "dlc: error: " << message << "\n" << kUsage;
  return 2;
}

} // namespace

int main(int argc, char **argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty())
    return usageError("no command given");
  const std::string command = args[0];
  if (command == "--help" || command == "-h" || command == "help") {
    std::cout << kUsage;
    return 0;
  }
  if (command == "--version") {
    std::cout << "dlc " << DLC_VERSION << "\n";
    return 0;
  }
  if (command == "ops")
    return dlc::listOpsCommand();

  std::vector<std::string> positional;
  dlc::CompileOptions options;
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string &a = args[i];
    auto value = [&](std::string &into) {
      if (i + 1 >= args.size())
        return false;
      into = args[++i];
      return true;
    };
    bool ok = true;
    if (a == "-o")
      ok = value(options.outDir);
    else if (a == "--name")
      ok = value(options.name);
    else if (a == "--emit")
      ok = value(options.emit);
    else if (a == "--target")
      ok = value(options.target);
    else if (a == "--report-json")
      ok = value(options.reportJsonPath);
    else if (a == "--report-memory")
      ok = value(options.reportSvgPath);
    else if (a == "--report")
      options.report = true;
    else if (a == "--no-reuse")
      options.reuse = false;
    else if (a == "--first-fit")
      options.firstFit = true;
    else if (a.rfind("--", 0) == 0 && a.find('=') != std::string::npos) {
      // --flag=value spellings of the options above.
      std::string flag = a.substr(0, a.find('=')), v = a.substr(a.find('=') + 1);
      if (flag == "--name") options.name = v;
      else if (flag == "--emit") options.emit = v;
      else if (flag == "--target") options.target = v;
      else if (flag == "--report-json") options.reportJsonPath = v;
      else if (flag == "--report-memory") options.reportSvgPath = v;
      else return usageError("unknown option '" + flag + "'");
    } else if (a.size() > 1 && a[0] == '-')
      return usageError("unknown option '" + a + "'");
    else
      positional.push_back(a);
    if (!ok)
      return usageError("option '" + a + "' needs a value");
  }

  if (command == "compile") {
    if (positional.size() != 1)
      return usageError("compile takes one MODEL");
    if (options.outDir.empty())
      return usageError("compile needs -o DIR");
    options.model = positional[0];
    return dlc::compileCommand(options);
  }
  if (command == "inspect") {
    if (positional.size() != 1)
      return usageError("inspect takes one MODEL");
    return dlc::inspectCommand(positional[0]);
  }
  if (command == "run") {
    if (positional.empty())
      return usageError("run takes MODEL and its inputs");
    if (options.outDir.empty())
      return usageError("run needs -o DIR");
    options.model = positional[0];
    options.emit = "staticlib";
    return dlc::runCommand(options, {positional.begin() + 1, positional.end()}, options.outDir);
  }
  return usageError("unknown command '" + command + "'");
}
