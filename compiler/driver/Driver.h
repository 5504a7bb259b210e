// The commands of the `dlc` tool; each returns the process exit code and reports errors on
// stderr as `dlc: error: <file>: ...`.
#ifndef DLC_COMPILER_DRIVER_H
#define DLC_COMPILER_DRIVER_H

#include "compiler/codegen/Codegen.h"
#include "compiler/import/Importer.h"
#include "compiler/Training.h"

#include <string>
#include <vector>

namespace dlc {

struct CompileOptions {
  std::string model;
  std::string outDir;
  std::string name;            // default: the model file's stem, made an identifier
  std::string emit = "source"; // source | staticlib | mlir
  std::string target = "cpu";  // cpu | cuda | cpu,cuda
  // --cuda-arch: the GPU architectures the CUDA library carries machine code for (PTX of the
  // last one too).
  std::vector<std::string> cudaArchs = {"sm_80", "sm_90"};
  CudaCodegenOptions cuda; // --allow-tf32, --cuda-jit

  // --cpu: "" builds portable code that picks its kernels by CPUID at run time; otherwise the
  // -march of the deployment CPU (native, x86-64-v2, x86-64-v3, x86-64-v4).
  std::string cpu;
  bool reuse = true;          // false: every value gets its own memory (debugging)
  bool firstFit = false;      // the naive planner, for comparisons
  bool profile = false;       // --profile: time every op of each run (NAME_profile)
  bool dump = false;          // --dump: hand every op's results to a function (NAME_set_dump)
  bool interpretFusedChains = false; // --fused-chains interpret (comparisons)
  bool report = false;        // print the memory report
  std::string reportJsonPath; // write the memory report as JSON
  std::string reportSvgPath;  // draw the memory plan
  TrainOptions train;         // --train: add a training step
  ShapePins pins;             // --dim, --input-shape
};

int compileCommand(const CompileOptions &options);
int inspectCommand(const std::string &model);
// Compiles (cached per model, flags and options), builds and runs `compile.model`. With
// compile.profile it runs the model 10 more times and writes DIR/profile.csv and
// DIR/profile.json (a Chrome trace); with compile.dump it writes every op's results into
// `dumpDir` (NNNNN-<node>.npy in the order the ops ran, listed in dumpDir/index.json).
int runCommand(const CompileOptions &compile, const std::vector<std::string> &inputs,
               const std::string &outDir, const std::string &dumpDir = "");
// `dlc run --train`: `steps` training steps on one batch; writes DIR/loss.npy and each
// trained weight as DIR/<name>.npy.
struct TrainRun {
  std::string labels;
  int steps = 1;
  std::string loadState, saveState; // "" for none
};
int trainRunCommand(const CompileOptions &compile, const std::vector<std::string> &inputs,
                    const TrainRun &run, const std::string &outDir);
int listOpsCommand();
// Prints the libraries a program linking a library built for `targetList` (--target's form)
// needs, one per line, for build systems.
int linkLibrariesCommand(const std::string &targetList);
// Writes the weights and running statistics of a state file into the ONNX model they were
// trained from, as `outPath`.
int exportWeightsCommand(const std::string &statePath, const std::string &modelPath,
                         const std::string &outPath);

} // namespace dlc

#endif
