#include "compiler/driver/Driver.h"
#include "compiler/codegen/Codegen.h"
#include "compiler/Embedded.h"
#include "compiler/import/Importer.h"
#include "dialects/Locations.h"
#include "compiler/Pipeline.h"
#include "compiler/driver/Report.h"
#include "compiler/toolchain/Toolchain.h"
#include "compiler/target/Target.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"

#include <algorithm>
#include <iostream>
#include <set>

using namespace mlir;

namespace dlc {
namespace {

void reportError(const std::string &file, const std::string &message) {
  std::cerr << "dlc: error: " << file << ": " << message << "\n";
}

// Once per process: a library for several targets imports its model once per target.
void reportWarning(const std::string &file, const std::string &message) {
  static std::set<std::string> reported;
  if (reported.insert(file + message).second)
    std::cerr << "dlc: warning: " << file << ": " << message << "\n";
}

// "node 'conv1' (Conv): " for ops imported from ONNX nodes, "" otherwise.
std::string nodePrefix(Location loc) {
  std::string node = onnxNodeName(loc), opType = onnxOpType(loc);
  if (node.empty())
    return "";
  return (opType.empty() ? "value '" + node + "'" : "node '" + node + "' (" + opType + ")") + ": ";
}

std::string defaultName(const std::string &model) {
  std::string stem = llvm::sys::path::stem(model).str(), name;
  for (char c : stem)
    name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0])))
    name = "model_" + name;
  return name;
}

bool validName(const std::string &name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0])))
    return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

// The memory reports the options ask for, written only once the compile has succeeded.
struct Reports {
  std::string text, json, svg;

  void make(const CompileOptions &options, ModuleOp module, int64_t weightBytes) {
    MemoryReport report = memoryReport(module, weightBytes);
    if (options.report)
      text = reportText(report);
    if (!options.reportJsonPath.empty())
      json = reportJson(report);
    if (!options.reportSvgPath.empty())
      svg = memorySvg(module);
  }

  bool write(const CompileOptions &options) const {
    std::cout << text;
    std::string error;
    if ((!json.empty() && !writeFile(options.reportJsonPath, json, error)) ||
        (!svg.empty() && !writeFile(options.reportSvgPath, svg, error))) {
      reportError(options.model, error);
      return false;
    }
    return true;
  }
};

// Imports, runs `target`'s pipeline and generates code; reports errors itself.
bool generate(const CompileOptions &options, const Target &target, const std::string &name,
              const std::string &weightsPath, GeneratedModel &out, std::string *mlirText,
              Reports *reports) {
  const std::string &modelPath = options.model;
  DialectRegistry registry;
  registerAll(registry);
  MLIRContext context(registry);
  context.disableMultithreading(); // 2-core CI machines gain nothing from a thread pool
  bool failedDiagnostics = false;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    if (diag.getSeverity() == DiagnosticSeverity::Warning)
      reportWarning(modelPath, nodePrefix(diag.getLocation()) + diag.str());
    if (diag.getSeverity() != DiagnosticSeverity::Error)
      return success();
    failedDiagnostics = true;
    reportError(modelPath, nodePrefix(diag.getLocation()) + diag.str());
    return success();
  });
  std::vector<std::string> errors;
  OwningOpRef<ModuleOp> module = importOnnxFile(context, modelPath, errors, options.pins);
  if (!module) {
    for (const auto &e : errors)
      reportError(modelPath, e);
    return false;
  }
  PassManager pm(&context);
  const PlanningOptions planning{options.reuse, options.firstFit};
  if (options.train.enabled) {
    if (!buildTrainStep(*module, options.train))
      return false;
    buildTrainingPipeline(pm, options.train, target, planning);
  } else {
    lowerTrainingModeOps(*module);
    target.buildPipeline(pm, planning);
  }
  if (failed(pm.run(*module)) || failedDiagnostics)
    return false;
  if (mlirText) {
    llvm::raw_string_ostream os(*mlirText);
    module->print(os, OpPrintingFlags().enableDebugInfo(/*enable=*/true, /*prettyForm=*/false));
  } else if (!generateCode(*module, target, name, modelPath, weightsPath, out,
                           {options.cuda, options.profile, options.dump, options.interpretFusedChains}) ||
             failedDiagnostics) {
    return false;
  }
  if (reports)
    reports->make(options, *module, out.weights.size());
  return true;
}

// Files are written into a private directory first and moved into `outDir` only when
// everything succeeded, so a failed compile leaves no partial output behind (not even the
// output directory and its parents, where this compile created them).
class StagingDir {
public:
  bool create(const std::string &outDir, std::string &error) {
    target = outDir;
    for (llvm::StringRef dir = outDir; !dir.empty() && !llvm::sys::fs::exists(dir);
         dir = llvm::sys::path::parent_path(dir))
      createdTop = dir.str();
    if (llvm::sys::fs::create_directories(outDir)) {
      error = "cannot create output directory '" + outDir + "'";
      return false;
    }
    llvm::SmallString<256> tmp;
    if (llvm::sys::fs::createUniqueDirectory(outDir + "/.dlc-staging", tmp)) {
      error = "cannot create a staging directory in '" + outDir + "'";
      return false;
    }
    path = std::string(tmp.str());
    return true;
  }
  // Moves the listed files from staging into the output directory.
  bool commit(const std::vector<std::string> &files, std::string &error) {
    for (const auto &f : files)
      if (llvm::sys::fs::rename(path + "/" + f, target + "/" + f)) {
        error = "cannot move '" + f + "' into '" + target + "'";
        return false;
      }
    committed = true;
    return true;
  }
  ~StagingDir() {
    if (!path.empty())
      llvm::sys::fs::remove_directories(path);
    if (committed || createdTop.empty())
      return;
    // Each only if empty: never someone else's files.
    llvm::StringRef dir = target;
    while (!llvm::sys::fs::remove(dir) && dir != createdTop)
      dir = llvm::sys::path::parent_path(dir);
  }
  std::string path;

private:
  std::string target, createdTop; // createdTop: the outermost folder this compile created
  bool committed = false;
};

bool writeBinary(const std::string &path, const std::vector<char> &bytes, std::string &error) {
  return writeFile(path, std::string(bytes.begin(), bytes.end()), error);
}

// Emits sources (and with `staticlib` builds libNAME.a) into `outDir`; returns the exit code.
int compileTo(const CompileOptions &options, const std::string &outDir) {
  std::string name = options.name.empty() ? defaultName(options.model) : options.name;
  if (!validName(name)) {
    reportError(options.model, "--name '" + name + "' is not a C identifier");
    return 1;
  }
  // --target: cpu, cuda or both; with several, the first is NAME and each other NAME_<target>.
  // Taken in allTargets() order; an unknown or repeated word leaves fewer targets than words.
  const std::vector<const Target *> targets = targetsNamed(options.target);
  if (targets.empty()) {
    reportError(options.model, "--target '" + options.target + "' is not cpu, cuda or cpu,cuda");
    return 1;
  }
  // The CUDA flags are the driver's to check: they reach the CUDA target's codegen only.
  const bool anyCuda = llvm::is_contained(targets, findTarget("cuda"));
  for (auto [given, flag] : {std::pair{options.cuda.allowTf32, "--allow-tf32"},
                             std::pair{options.cuda.alwaysJit, "--cuda-jit"}})
    if (given && !anyCuda) {
      reportError(options.model, std::string(flag) + " applies to --target cuda");
      return 1;
    }
  if (options.emit == "mlir" && targets.size() > 1) {
    reportError(options.model, "--emit mlir takes one --target");
    return 1;
  }
  for (const std::string &arch : options.cudaArchs)
    if (arch.size() < 4 || arch.compare(0, 3, "sm_") ||
        !std::all_of(arch.begin() + 3, arch.end(), ::isdigit)) {
      reportError(options.model, "--cuda-arch '" + arch + "' is not of the form sm_NN (sm_80)");
      return 1;
    }
  if (anyCuda && options.cudaArchs.empty()) {
    reportError(options.model, "--cuda-arch needs at least one architecture (sm_80)");
    return 1;
  }
  Toolchain tools{options.cpu, "", options.cudaArchs};
  if (options.emit == "staticlib" &&
      llvm::any_of(targets, [](const Target *t) { return t->needsNvcc(); })) {
    std::string why;
    tools.nvcc = nvccCompiler(why);
    if (tools.nvcc.empty()) {
      reportError(options.model,
                  "--target cuda --emit staticlib needs the CUDA toolkit's nvcc: " + why);
      return 1;
    }
  }
  static const char *const cpus[] = {"", "native", "x86-64-v2", "x86-64-v3", "x86-64-v4"};
  if (std::find(std::begin(cpus), std::end(cpus), options.cpu) == std::end(cpus)) {
    reportError(options.model, "--cpu '" + options.cpu +
                                   "' is not one of native, x86-64-v2, x86-64-v3, x86-64-v4");
    return 1;
  }
  if (options.emit != "source" && options.emit != "staticlib" && options.emit != "mlir") {
    reportError(options.model, "--emit must be source, staticlib or mlir");
    return 1;
  }
  llvm::SmallString<256> absOut(outDir);
  llvm::sys::fs::make_absolute(absOut);
  // One generated model per target: the CPU one first (it makes the reports).
  struct Variant {
    const Target *target;
    std::string name, weightsFile;
    GeneratedModel generated;
  };
  std::vector<Variant> variants;
  std::string mlirText;
  Reports reports;
  for (const Target *target : targets) {
    Variant variant;
    variant.target = target;
    variant.name = variants.empty() ? name : name + "_" + target->name();
    variant.weightsFile = variant.name + ".weights.bin";
    if (!generate(options, *target, variant.name, std::string(absOut) + "/" + variant.weightsFile,
                  variant.generated, options.emit == "mlir" ? &mlirText : nullptr,
                  variants.empty() ? &reports : nullptr))
      return 1;
    variants.push_back(std::move(variant));
  }
  std::string error;
  StagingDir staging;
  if (!staging.create(std::string(absOut), error)) {
    reportError(options.model, error);
    return 1;
  }
  const std::string &dir = staging.path;
  std::vector<std::string> files;
  auto emit = [&](const std::string &file, const std::string &text) {
    files.push_back(file);
    return writeFile(dir + "/" + file, text, error);
  };
  bool ok = true;
  if (options.emit == "mlir") {
    ok = emit(name + ".mlir", mlirText);
  } else {
    for (const Variant &v : variants) {
      ok = ok && emit(v.name + ".h", v.generated.header) &&
           emit(v.name + v.target->sourceExtension(), v.generated.source) &&
           emit(v.name + "_weights.cpp", v.generated.weightsSource) &&
           writeBinary(dir + "/" + v.weightsFile, v.generated.weights, error);
      files.push_back(v.weightsFile);
    }
    // Both models of a cpu,cuda library behind one API that picks the device at create time.
    if (variants.size() > 1)
      ok = ok && emit(name + "_any.h", anyDeviceSource(name, options.model, true)) &&
           emit(name + "_any.cpp", anyDeviceSource(name, options.model, false));
    ok = ok && writeRuntimeHeaders(dir, error);
    for (const auto &f : embeddedFiles())
      if (f.isCpuRuntime() && llvm::StringRef(f.name).ends_with(".h"))
        files.push_back(llvm::sys::path::filename(f.name).str());
    // A target's runtime that ships as source is built with the generated code.
    for (const Variant &v : variants)
      for (const std::string &file : v.target->shippedRuntimeFiles())
        ok = ok && emit(llvm::sys::path::filename(file).str(), embeddedFile(file));
  }
  if (ok && options.emit == "staticlib") {
    // The library embeds the staged weights files; the emitted NAME_weights.cpp names their
    // final place.
    std::string buildDir = dir + "/build";
    std::vector<std::string> objects;
    ok = !llvm::sys::fs::create_directory(buildDir);
    auto build = [&](const std::vector<BuildStep> &steps) {
      for (const BuildStep &step : steps) {
        std::vector<std::string> built;
        ok = ok &&
             compileSources(step.sources, step.includeDirs, buildDir, step.command, built, error);
        objects.insert(objects.end(), built.begin(), built.end());
      }
    };
    for (const Variant &v : variants) {
      std::string stagedWeights = buildDir + "/" + v.name + "_weights.cpp";
      ok = ok &&
           writeFile(stagedWeights,
                     weightsSource(v.name, v.generated.weights.size(), dir + "/" + v.weightsFile),
                     error);
      build(v.target->modelBuild(dir + "/" + v.name + v.target->sourceExtension(), stagedWeights,
                                 dir, tools));
      build(v.target->runtimeBuild(dir, tools));
    }
    if (variants.size() > 1)
      build({{{dir + "/" + name + "_any.cpp"}, {dir}, cxxCommand("")}});
    std::vector<std::string> runtime;
    ok = ok && runtimeObjects(options.cpu, runtime, error);
    objects.insert(objects.end(), runtime.begin(), runtime.end());
    ok = ok && archive(dir + "/lib" + name + ".a", objects, error);
    files.push_back("lib" + name + ".a");
  }
  if (!ok || !staging.commit(files, error)) {
    reportError(options.model, error.empty() ? "cannot write the output" : error);
    return 1;
  }
  return reports.write(options) ? 0 : 1;
}

// Path and modification time of the running dlc, so a rebuilt dlc never reuses old builds.
std::string dlcBinaryIdentity() {
  static int anchor;
  std::string exe = llvm::sys::fs::getMainExecutable("dlc", &anchor);
  llvm::sys::fs::file_status status;
  if (exe.empty() || llvm::sys::fs::status(exe, status))
    return exe;
  return exe + std::to_string(status.getLastModificationTime().time_since_epoch().count());
}

} // namespace

int compileCommand(const CompileOptions &options) { return compileTo(options, options.outDir); }

int linkLibrariesCommand(const std::string &targetList) {
  const std::vector<const Target *> targets = targetsNamed(targetList);
  if (targets.empty()) {
    std::cerr << "dlc: error: link-libraries: '" << targetList << "' is not cpu, cuda or cpu,cuda\n";
    return 1;
  }
  for (const std::string &library : linkLibraries(targets))
    std::cout << library << "\n";
  return 0;
}

int listOpsCommand() {
  for (const auto &op : supportedOnnxOps())
    std::cout << op << "\n";
  return 0;
}

namespace {

// Everything of the compile options that changes the generated code.
std::string optionsKey(const CompileOptions &c) {
  std::string key = std::string(c.reuse ? "reuse" : "no-reuse") + (c.firstFit ? "first-fit" : "") +
                    (c.profile ? "|profile" : "") + (c.dump ? "|dump" : "") +
                    (c.interpretFusedChains ? "|interpret-chains" : "") + "|cpu " + c.cpu;
  for (const auto &[name, value] : c.pins.dims)
    key += "|dim " + name + "=" + std::to_string(value);
  for (const auto &[name, dims] : c.pins.inputShapes) {
    key += "|shape " + name + "=";
    for (int64_t d : dims)
      key += std::to_string(d) + "x";
  }
  for (const auto &name : c.pins.absent)
    key += "|absent " + name;
  for (const auto &[name, values] : c.pins.inputValues) {
    key += "|value " + name + "=";
    for (const auto &v : values)
      key += v + ",";
  }
  for (const auto &[name, elements] : c.pins.sequences) {
    key += "|sequence " + name + "=";
    for (const auto &dims : elements) {
      for (int64_t d : dims)
        key += std::to_string(d) + "x";
      key += ",";
    }
  }
  const TrainOptions &t = c.train;
  if (!t.enabled)
    return key;
  key += "|train|" + t.loss + "|" + t.lossOutput + "|" + t.optimizer;
  for (float v : {t.learningRate, t.momentum, t.weightDecay, t.beta1, t.beta2, t.eps})
    key += "|" + std::to_string(v);
  key += t.nesterov ? "|nesterov" : "";
  for (const auto *names : {&t.trainable, &t.freeze}) {
    key += "|";
    for (const auto &n : *names)
      key += n + ",";
  }
  return key;
}

// Compiles `compile.model` (cached per model content, dlc binary, toolchain and options)
// with `runnerTemplate` as its main program; returns the runner's path, "" after an error.
std::string cachedRunner(const CompileOptions &compile, const char *runnerTemplate) {
  const std::string &model = compile.model;
  if (compile.target != "cpu") {
    reportError(model, "dlc run runs the model on the CPU; build --target cuda with "
                       "dlc compile (see README)");
    return "";
  }
  auto bytes = llvm::MemoryBuffer::getFile(model);
  if (!bytes) {
    reportError(model, "cannot open file");
    return "";
  }
  std::string key = (*bytes)->getBuffer().str() + DLC_VERSION + dlcBinaryIdentity() +
                    cxxCompilerIdentity() + optionsKey(compile) + runnerTemplate;
  for (const auto &flag : cxxFlags(compile.cpu))
    key += " " + flag;
  char hash[32];
  std::snprintf(hash, sizeof hash, "%016llx", (unsigned long long)llvm::xxh3_64bits(key));
  std::string error, cache = cacheDir(error);
  if (cache.empty()) {
    reportError(model, error);
    return "";
  }
  std::string entry = cache + "/run-" + hash, runner = entry + "/runner";
  const std::string name = "model"; // (its macros are MODEL_...)
  if (llvm::sys::fs::exists(runner))
    return runner;
  // Built in a private folder and published whole: `dlc run`s of the same model in
  // parallel (ninja -j) each build, and one wins.
  llvm::SmallString<256> tmp;
  if (llvm::sys::fs::createUniqueDirectory(cache + "/build", tmp)) {
    reportError(model, "cannot create a folder in the cache " + cache);
    return "";
  }
  std::string buildDir(tmp.str());
  CompileOptions options = compile;
  options.name = name;
  options.emit = "staticlib";
  if (compileTo(options, buildDir) != 0) {
    llvm::sys::fs::remove_directories(buildDir);
    return "";
  }
  std::string source = embeddedFile(runnerTemplate);
  for (size_t pos; (pos = source.find("@NAME@")) != std::string::npos;)
    source.replace(pos, 6, name);
  for (size_t pos; (pos = source.find("@UPPER_NAME@")) != std::string::npos;)
    source.replace(pos, 12, "MODEL");
  std::vector<std::string> objects;
  bool ok = writeFile(buildDir + "/runner.cpp", source, error) &&
            compileSources({buildDir + "/runner.cpp"}, {buildDir}, buildDir,
                           cxxCommand(compile.cpu), objects, error);
  objects.push_back(buildDir + "/lib" + name + ".a");
  ok = ok && link(buildDir + "/runner", objects, findTarget(compile.target)->linkLibraries(), error);
  if (!ok) {
    llvm::sys::fs::remove_directories(buildDir);
    reportError(model, error.empty() ? "cannot build the runner" : error);
    return "";
  }
  return publishCacheEntry(buildDir, entry, "runner") + "/runner";
}

int runIn(const std::string &model, const std::string &outDir, std::vector<std::string> argv) {
  if (llvm::sys::fs::create_directories(outDir)) {
    reportError(model, "cannot create output directory '" + outDir + "'");
    return 1;
  }
  return execute(argv) == 0 ? 0 : 1;
}

} // namespace

int runCommand(const CompileOptions &compile, const std::vector<std::string> &inputs,
               const std::string &outDir, const std::string &dumpDir) {
  std::string runner = cachedRunner(compile, "codegen_templates/runner.cpp.tpl");
  if (runner.empty())
    return 1;
  std::vector<std::string> argv = {runner, outDir};
  if (compile.dump) {
    if (llvm::sys::fs::create_directories(dumpDir)) {
      reportError(compile.model, "cannot create dump directory '" + dumpDir + "'");
      return 1;
    }
    argv.push_back(dumpDir);
  }
  argv.insert(argv.end(), inputs.begin(), inputs.end());
  return runIn(compile.model, outDir, argv);
}

int trainRunCommand(const CompileOptions &compile, const std::vector<std::string> &inputs,
                    const TrainRun &run, const std::string &outDir) {
  std::string runner = cachedRunner(compile, "codegen_templates/train_runner.cpp.tpl");
  if (runner.empty())
    return 1;
  std::vector<std::string> argv = {runner,     outDir,        std::to_string(run.steps),
                                   run.labels, run.loadState, run.saveState};
  argv.insert(argv.end(), inputs.begin(), inputs.end());
  return runIn(compile.model, outDir, argv);
}

} // namespace dlc
