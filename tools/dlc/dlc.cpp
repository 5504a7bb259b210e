// dlc: the ahead-of-time ONNX compiler's command line.
#include "compiler/driver/Driver.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <set>
#include <string>
#include <vector>

namespace {

const char kUsage[] = R"(usage:
  dlc compile MODEL -o DIR [--name N] [--emit source|staticlib|mlir]
              [--target cpu|cuda|cpu,cuda] [--cuda-arch sm_80,sm_90] [--allow-tf32] [--cuda-jit]
              [--cpu native|x86-64-v2|x86-64-v3|x86-64-v4]
              [--dim NAME=N[,NAME=N]] [--input-shape INPUT=AxBxC] [--sequence INPUT=AxB,CxD]
              [--absent INPUT[,INPUT]] [--input-value INPUT=V[,V]]
              [--no-reuse | --first-fit] [--fused-chains code|interpret]
              [--report] [--report-json FILE]
              [--report-memory FILE.svg] [--profile | --dump]
      Compile an ONNX model (.onnx or .pb) to C++ sources (NAME.h, NAME.cpp, weights) or to
      a static library libNAME.a with its header. --report prints arena bytes, the lower
      bound, bytes without reuse, in-place ops, elided concats and weight bytes; --no-reuse
      gives every value its own memory; --first-fit uses the naive planner (comparisons);
      --fused-chains interpret runs fused elementwise chains on the runtime's interpreter
      rather than as generated code (comparisons: the same bits). Build generated code with
      -DDLC_CHECK_MEMORY to poison memory whose values are dead (reads after reuse show up as
      NaN).
      --profile times every op of each run: NAME_profile() gives each op's node, op type,
      shapes, FLOPs, bytes, time and threads (CPU target). With run, the model runs 10 more
      times and DIR/profile.csv (per op: median and minimum time, share of the run, GFLOP/s,
      GB/s, threads) and DIR/profile.json (a Chrome trace, for Perfetto) are written.
      --dump hands every op's results to a function after the op ran (NAME_set_dump: its ONNX
      node, the ONNX value it computes, the data; CPU target). With run, --dump DUMPDIR
      writes them as DUMPDIR/NNNNN-<node>.npy in the order the ops ran, listed in
      DUMPDIR/index.json; scripts/compare_ort.py finds the first that departs from ONNX
      Runtime's value.
      Shapes are static: --dim gives every input dim named NAME (a symbolic dim such as
      'batch') a value; --input-shape gives one input all its dims (also unnamed ones).
      dlc inspect lists the symbolic dims and the option that pins each. A sequence input
      needs --sequence INPUT=AxB,CxD: its length and each element's shape ('scalar' for
      rank 0, nothing after '=' for an empty sequence); its elements become the inputs
      INPUT[0], INPUT[1], ..., and a sequence output becomes the outputs OUT[0], OUT[1], ...
      The library runs on any x86-64 and picks AVX2 or AVX-512 kernels by CPUID when the CPU
      has them; --cpu builds for one deployment CPU instead (-march; x86-64-v3 is AVX2+FMA,
      x86-64-v4 AVX-512), which then will not run on older CPUs. Models use $DLC_THREADS
      threads (default: the cores the process may use; NAME_create_with picks per model).
      An optional input holds its value (pinned like a tensor or sequence) unless --absent
      names it. --input-value fixes an input's value (row-major, in its element type):
      it becomes a constant and the compiled model no longer takes it, e.g. a sample
      rate or a flag an If branches on, whose other branch then is not compiled.
      All of these work with run.
      --target cuda builds for NVIDIA GPUs (NAME.cu; the library needs nvcc: $DLC_NVCC, PATH
      or /usr/local/cuda/bin) with machine code for each --cuda-arch and PTX of the last;
      cpu,cuda puts both in one library, the GPU model as NAME_cuda. Its MatMul/Gemm products
      are float32 throughout; --allow-tf32 lets cuBLAS use TF32 tensor cores (faster, inputs
      rounded to 10 mantissa bits). On a GPU the fat binary cannot run (older than every
      --cuda-arch), create compiles the kernels' embedded source with NVRTC; --cuda-jit does
      so on every GPU. Link with nvrtc too. --train works with --target cuda as well.
      Training (--train): also emit a training step, NAME_train_step(), that runs forward,
      loss, backward and the optimizer update on the model's state with one planned arena.
        --loss mse|cross_entropy|bce_with_logits|l1|none   (required; mean reduction; labels
            are int64 class indices for cross_entropy, else shaped like the output; with
            none the output itself must be a scalar loss)
        --loss-output NAME      the graph output the loss uses (default: the only one)
        --optimizer sgd[:lr=,momentum=,weight_decay=,nesterov=] |
                    adam[:lr=,beta1=,beta2=,eps=,weight_decay=] | adamw[...]   (default sgd)
        --trainable NAME[,NAME] / --freeze NAME[,NAME]   initializer names or name prefixes
      Integer initializers and batch-norm running statistics are never trained.
  dlc run MODEL IN.npy... -o DIR [--no-reuse] [--profile | --dump DUMPDIR]
  dlc run MODEL IN.npy... --train --labels LABELS.npy --steps N [--loss ...] [--optimizer ...]
          [--load-state FILE] [--save-state FILE] -o DIR
      Training quick check: N steps on the same batch; writes DIR/loss.npy (each step's loss,
      before its update) and DIR/<weight name>.npy for every trained weight afterwards;
      starts from / saves the state file (weights, moments, step count, learning rate).
      Compile (cached), build and run the model on the inputs (graph-input order); writes
      DIR/<output name>.npy for each graph output. $DLC_CXXFLAGS adds compiler and linker
      flags (e.g. -DDLC_CHECK_MEMORY, -fsanitize=address). Builds are cached in
      $DLC_CACHE_DIR (default $XDG_CACHE_HOME/dlc or ~/.cache/dlc; a temporary folder when
      that cannot be written); parallel runs share it safely.
  dlc export-weights STATE MODEL -o OUT.onnx
      Write the trained weights and running statistics of a state file (save_state,
      dlc run --save-state) into the ONNX model it was compiled from.
  dlc inspect MODEL
      Print opsets, inputs/outputs with shapes, an op histogram and the parameter count.
  dlc ops
      List the supported ONNX op types.
  dlc link-libraries cpu|cuda|cpu,cuda
      List the libraries (as -l names them) a program linking a library built for these
      targets needs besides it, one per line (dlc_add_model links them).
  dlc --help | --version
)";

const std::set<std::string> kPinFlags = {"--dim", "--input-shape", "--sequence", "--absent",
                                         "--input-value"};

// A pinning option (kPinFlags) and its spec into `pins`; false when malformed.
bool parsePin(const std::string &flag, const std::string &spec, dlc::ShapePins &pins) {
  auto number = [](const std::string &text, int64_t &out) {
    char *end = nullptr;
    out = std::strtoll(text.c_str(), &end, 10);
    return !text.empty() && !*end;
  };
  // Splits `text` at `separator`; false when a part does not parse.
  auto each = [](const std::string &text, char separator, auto parse) {
    for (size_t start = 0; start <= text.size();) {
      size_t end = std::min(text.find(separator, start), text.size());
      if (!parse(text.substr(start, end - start)))
        return false;
      start = end + 1;
    }
    return true;
  };
  auto shape = [&](const std::string &text, std::vector<int64_t> &dims) {
    if (text == "scalar")
      return true;
    return each(text, 'x', [&](const std::string &part) {
      int64_t d;
      if (!number(part, d))
        return false;
      dims.push_back(d);
      return true;
    });
  };
  if (flag == "--input-shape" || flag == "--sequence") {
    size_t eq = spec.find('=');
    if (eq == std::string::npos || eq == 0)
      return false;
    std::string name = spec.substr(0, eq), rest = spec.substr(eq + 1);
    if (flag == "--input-shape")
      return rest != "scalar" && shape(rest, pins.inputShapes[name]);
    auto &elements = pins.sequences[name];
    return rest.empty() || each(rest, ',', [&](const std::string &part) {
             elements.emplace_back();
             return shape(part, elements.back());
           });
  }
  if (flag == "--input-value") {
    size_t eq = spec.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size())
      return false;
    auto &values = pins.inputValues[spec.substr(0, eq)];
    values.clear();
    return each(spec.substr(eq + 1), ',', [&](const std::string &v) {
      values.push_back(v);
      return !v.empty();
    });
  }
  if (flag == "--absent")
    return !spec.empty() && each(spec, ',', [&](const std::string &name) {
      pins.absent.insert(name);
      return !name.empty();
    });
  return !spec.empty() && each(spec, ',', [&](const std::string &item) {
    size_t eq = item.rfind('=');
    int64_t value;
    if (eq == std::string::npos || eq == 0 || !number(item.substr(eq + 1), value))
      return false;
    pins.dims[item.substr(0, eq)] = value;
    return true;
  });
}

// What each pinning option wants, for its usage error.
std::string pinForm(const std::string &flag) {
  return flag == "--dim"           ? "NAME=N"
         : flag == "--input-shape" ? "INPUT=AxBxC"
         : flag == "--absent"      ? "INPUT[,INPUT]"
         : flag == "--input-value" ? "INPUT=V[,V] (its values, row-major)"
                                   : "INPUT=AxB,CxD (one shape per element; 'scalar' for "
                                     "rank 0; nothing after '=' for an empty sequence)";
}

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
  if (command == "link-libraries") {
    if (args.size() != 2)
      return usageError("link-libraries takes one target list (cpu, cuda or cpu,cuda)");
    return dlc::linkLibrariesCommand(args[1]);
  }

  std::vector<std::string> positional;
  dlc::CompileOptions options;
  std::string labels, steps, optimizer, loadState, saveState, dumpDir;
  // Comma-separated names, one or more per flag.
  auto addNames = [](std::vector<std::string> &into, const std::string &list) {
    for (size_t start = 0; start <= list.size();) {
      size_t comma = std::min(list.find(',', start), list.size());
      if (comma > start)
        into.push_back(list.substr(start, comma - start));
      start = comma + 1;
    }
  };
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
    else if (a == "--cuda-arch") {
      std::string list;
      ok = value(list);
      options.cudaArchs.clear();
      addNames(options.cudaArchs, list);
    } else if (a == "--cpu")
      ok = value(options.cpu);
    else if (a == "--report-json")
      ok = value(options.reportJsonPath);
    else if (a == "--report-memory")
      ok = value(options.reportSvgPath);
    else if (a == "--report")
      options.report = true;
    else if (a == "--profile")
      options.profile = true;
    else if (a == "--dump") {
      // run writes the values into DIR; compile gives the library NAME_set_dump.
      options.dump = true;
      if (command == "run")
        ok = value(dumpDir);
    }
    else if (a == "--train")
      options.train.enabled = true;
    else if (a == "--loss")
      ok = value(options.train.loss);
    else if (a == "--loss-output")
      ok = value(options.train.lossOutput);
    else if (a == "--optimizer")
      ok = value(optimizer);
    else if (a == "--labels")
      ok = value(labels);
    else if (a == "--steps")
      ok = value(steps);
    else if (a == "--load-state")
      ok = value(loadState);
    else if (a == "--save-state")
      ok = value(saveState);
    else if (kPinFlags.count(a)) {
      std::string spec;
      ok = value(spec);
      if (ok && !parsePin(a, spec, options.pins))
        return usageError(a + " wants " + pinForm(a) + ", got '" + spec + "'");
    } else if (a == "--freeze" || a == "--trainable") {
      std::string list;
      ok = value(list);
      addNames(a == "--freeze" ? options.train.freeze : options.train.trainable, list);
    } else if (a == "--no-reuse")
      options.reuse = false;
    else if (a == "--allow-tf32")
      options.cuda.allowTf32 = true;
    else if (a == "--cuda-jit")
      options.cuda.alwaysJit = true;
    else if (a == "--first-fit")
      options.firstFit = true;
    else if (a == "--fused-chains") {
      std::string how;
      ok = value(how);
      if (ok && how != "code" && how != "interpret")
        return usageError("--fused-chains wants code or interpret, got '" + how + "'");
      options.interpretFusedChains = how == "interpret";
    }
    else if (a.rfind("--", 0) == 0 && a.find('=') != std::string::npos) {
      // --flag=value spellings of the options above.
      std::string flag = a.substr(0, a.find('=')), v = a.substr(a.find('=') + 1);
      if (flag == "--name")
        options.name = v;
      else if (flag == "--emit")
        options.emit = v;
      else if (flag == "--target")
        options.target = v;
      else if (flag == "--cuda-arch") {
        options.cudaArchs.clear();
        addNames(options.cudaArchs, v);
      } else if (flag == "--cpu")
        options.cpu = v;
      else if (flag == "--report-json")
        options.reportJsonPath = v;
      else if (flag == "--report-memory")
        options.reportSvgPath = v;
      else if (flag == "--loss")
        options.train.loss = v;
      else if (flag == "--loss-output")
        options.train.lossOutput = v;
      else if (flag == "--optimizer")
        optimizer = v;
      else if (flag == "--labels")
        labels = v;
      else if (flag == "--steps")
        steps = v;
      else if (flag == "--load-state")
        loadState = v;
      else if (flag == "--dump" && command == "run") {
        options.dump = true;
        dumpDir = v;
      }
      else if (flag == "--save-state")
        saveState = v;
      else if (kPinFlags.count(flag)) {
        if (!parsePin(flag, v, options.pins))
          return usageError(flag + " wants " + pinForm(flag) + ", got '" + v + "'");
      } else if (flag == "--freeze")
        addNames(options.train.freeze, v);
      else if (flag == "--trainable")
        addNames(options.train.trainable, v);
      else
        return usageError("unknown option '" + flag + "'");
    } else if (a.size() > 1 && a[0] == '-')
      return usageError("unknown option '" + a + "'");
    else
      positional.push_back(a);
    if (!ok)
      return usageError("option '" + a + "' needs a value");
  }

  dlc::TrainOptions &train = options.train;
  bool trainFlags = train.enabled || !train.loss.empty() || !train.lossOutput.empty() ||
                    !optimizer.empty() || !train.freeze.empty() || !train.trainable.empty();
  if (trainFlags && !train.enabled)
    return usageError("--loss, --loss-output, --optimizer, --freeze and --trainable need --train");
  if (train.enabled && train.loss.empty())
    return usageError("--train needs --loss (mse, cross_entropy, bce_with_logits, l1 or none)");
  std::string error;
  if (!optimizer.empty() && !train.parseOptimizer(optimizer, error))
    return usageError(error);
  if ((!labels.empty() || !steps.empty() || !loadState.empty() || !saveState.empty()) &&
      !(command == "run" && train.enabled))
    return usageError("--labels, --steps, --load-state and --save-state are for dlc run --train");

  if (options.dump && options.profile)
    return usageError("--dump and --profile do not combine: the profile would time the dump");
  if (options.dump && command == "run" && train.enabled)
    return usageError("--dump dumps inference runs, not --train");
  if (command == "compile") {
    if (positional.size() != 1)
      return usageError("compile takes one MODEL");
    if (options.outDir.empty())
      return usageError("compile needs -o DIR");
    options.model = positional[0];
    return dlc::compileCommand(options);
  }
  if (command == "export-weights") {
    if (positional.size() != 2 || options.outDir.empty())
      return usageError("export-weights takes STATE MODEL -o OUT.onnx");
    return dlc::exportWeightsCommand(positional[0], positional[1], options.outDir);
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
    std::vector<std::string> inputs(positional.begin() + 1, positional.end());
    if (!train.enabled)
      return dlc::runCommand(options, inputs, options.outDir, dumpDir);
    if (labels.empty() != (train.loss == "none"))
      return usageError(train.loss == "none" ? "--loss none takes no --labels"
                                             : "run --train needs --labels LABELS.npy");
    char *end = nullptr;
    long count = std::strtol(steps.c_str(), &end, 10);
    if (steps.empty() || *end || count < 1 || count > 1000000)
      return usageError("run --train needs --steps N (1 to 1000000)");
    return dlc::trainRunCommand(options, inputs, {labels, int(count), loadState, saveState},
                                options.outDir);
  }
  return usageError("unknown command '" + command + "'");
}
