#!/bin/bash
# The CUDA target's GPU check: one prepared script for a short lent GPU session. The GPU
# machine has CUDA, a C++ compiler and a Python with numpy, onnx and PyTorch, but no LLVM/MLIR,
# so it cannot build dlc: the CUDA sources are generated here first.
#
#   scripts/gpu_check.sh --prepare   here, after building dlc (build/tools/dlc) and exporting
#                                    the test models: writes build/gpu-carry (each model's
#                                    generated sources, input and PyTorch's expected output)
#   scripts/gpu_check.sh [OUT]       on the GPU machine, with build/gpu-carry carried: builds
#                                    each model with nvcc and compares its output (with the
#                                    lifecycle test, CUDA graphs included, on the first five;
#                                    two of them also with --cuda-jit, their kernels compiled
#                                    by NVRTC at create time, and the MLP built for sm_100
#                                    only, which falls back to NVRTC by itself),
#                                    runs Debian's ONNX node tests (their expected-failures
#                                    list is the emulated run's), checks an index fault's
#                                    report and three training steps against the CPU's,
#                                    runs the latency benchmark (bench/cuda_models.py:
#                                    without and with CUDA graphs, beside PyTorch), then the
#                                    lifecycle test under compute-sanitizer (memcheck,
#                                    racecheck); logs and summary.txt go to OUT ($OUT, else
#                                    build/gpu-check). The most telling steps come first, so a
#                                    session cut short still reports them.
set -u
cd "$(dirname "$0")/.."
# name:dims (the --dim pin of a symbolic batch dim, if any). ResNet-18's 47 MB of weights
# would take the carried folder past the device tool's 64 MiB; CI runs it emulated.
MODELS="mlp: mobilenetv2: squeezenet: transformer:batch=2 lstm_tagger:batch=2"
# Checked for their outputs only: LayerNorm/GELU/attention, ConvTranspose and Resize kernels.
EXTRA_MODELS="convnext:batch=2 vit:batch=2 unet:batch=2"
# Compiled with --cuda-jit as <model>_jit: their kernels go through NVRTC at create time.
JIT_MODELS="transformer:batch=2 mlp:"
CARRY=build/gpu-carry

if [ "${1:-}" = "--prepare" ]; then
  set -e
  rm -rf "$CARRY"
  prepare_model() { # ENTRY NAME [DLC OPTIONS...]
    local model=${1%%:*} dims=${1#*:} name=$2
    shift 2
    mkdir -p "$CARRY/$name"
    cp build/tests/models/$model/{input.npy,expected.npy} "$CARRY/$name/"
    build/tools/dlc compile build/tests/models/$model/model.onnx -o "$CARRY/$name/generated" \
      --target cuda --name "$name" ${dims:+--dim "$dims"} "$@"
  }
  for entry in $MODELS $EXTRA_MODELS; do
    prepare_model "$entry" "${entry%%:*}"
  done
  for entry in $JIT_MODELS; do
    prepare_model "$entry" "${entry%%:*}_jit" --cuda-jit
  done
  # Debian's ONNX node tests: generated (and checked emulated) here, sources and data packed.
  "${PYTHON:-/usr/bin/python3}" tests/onnx/run_node_tests.py --suite node \
    --data /usr/share/libonnx-testdata/data/node --cuda-emulate --dlc build/tools/dlc \
    --runtime-dir runtime --work build/gpu-node-work --pack build/gpu-node-pack > /dev/null
  tar czf "$CARRY/node-pack.tar.gz" -C build gpu-node-pack  # 50 MB of text, a tenth packed
  # The index-fault model, generated (and checked emulated) here.
  "${PYTHON:-/usr/bin/python3}" tests/cuda/test_cuda_faults.py "$CARRY/faults" --emulate --dlc build/tools/dlc \
    --runtime-lib build/runtime/libdlc_runtime.a > /dev/null
  # Training steps: sources, train inputs and the CPU step's results, checked emulated here.
  "${PYTHON:-/usr/bin/python3}" tests/cuda/test_cuda_train.py --emulate --dlc build/tools/dlc \
    --work "$CARRY/train" --runtime-lib build/runtime/libdlc_runtime.a > /dev/null
  # The latency benchmark's models (sources and graphs without their weights).
  "${PYTHON:-/usr/bin/python3}" bench/cuda_models.py --prepare "$CARRY/bench" > /dev/null
  du -sh "$CARRY"
  exit 0
fi

OUT_DIR=${1:-${OUT:-build/gpu-check}}
mkdir -p "$OUT_DIR"
SUMMARY="$OUT_DIR/summary.txt"
: > "$SUMMARY"
PY=${PYTHON:-python3}
export PATH="$PATH:${CUDA_HOME:-/usr/local/cuda}/bin"
step() { # NAME COMMAND...: runs it, logs to OUT/NAME.log, records the result in the summary
  local name=$1
  shift
  local start=$SECONDS
  "$@" > "$OUT_DIR/$name.log" 2>&1
  local rc=$?
  echo "$name: $([ $rc = 0 ] && echo PASS || echo "FAIL (exit $rc)") ($((SECONDS - start)) s)" \
    | tee -a "$SUMMARY"
  return $rc
}
{ nvidia-smi -L; nvcc --version | tail -2; } > "$OUT_DIR/machine.txt" 2>&1

# The CPU runtime once, in parallel (the runner reads .npy files with it).
RT="$OUT_DIR/runtime"
mkdir -p "$RT"
step runtime bash -c "ls runtime/*.cpp | xargs -P 16 -I{} sh -c \
  'c++ -std=c++17 -O2 -Iruntime -c {} -o $RT/\$(basename {} .cpp).o' && ar rcs $RT/libdlc_runtime.a $RT/*.o"

args_for() { # MODEL: run_cuda_model.py's arguments for the carried model
  echo tests/cuda/run_cuda_model.py --nvcc --generated "$CARRY/$1/generated" \
    --model-dir "$CARRY/$1" --name "$1" --runtime-lib "$RT/libdlc_runtime.a"
}
for entry in $MODELS $EXTRA_MODELS; do
  model=${entry%%:*}
  lifecycle=$(case " $MODELS " in *" $entry "*) echo --lifecycle ;; esac)
  step "$model" "$PY" $(args_for "$model") $lifecycle --work "$OUT_DIR/work/$model"
done
# The same kernels compiled by NVRTC at create time and launched from the loaded library.
for entry in $JIT_MODELS; do
  model=${entry%%:*}_jit
  step "$model" "$PY" $(args_for "$model") --lifecycle --work "$OUT_DIR/work/$model"
done
# A fat binary without this GPU's architecture (sm_100 SASS and PTX only): create finds no
# usable image and falls back to NVRTC by itself.
step mlp_fallback "$PY" $(args_for mlp) --cuda-arch sm_100 --lifecycle \
  --work "$OUT_DIR/work/mlp_fallback"
# Every node test that passes through the CUDA target here (emulated) must pass on the GPU.
mkdir -p "$OUT_DIR/work"
tar xzf "$CARRY/node-pack.tar.gz" -C "$OUT_DIR/work"
step node_tests "$PY" tests/onnx/run_node_tests.py --suite node --runtime-dir runtime \
  --work "$OUT_DIR/work/node" --from-pack "$OUT_DIR/work/gpu-node-pack" --jobs 16
grep -h "^suite node:" "$OUT_DIR/node_tests.log" | tee -a "$SUMMARY"
step faults "$PY" tests/cuda/test_cuda_faults.py "$OUT_DIR/work/faults" --nvcc \
  --generated "$CARRY/faults/build/generated" --runtime-lib "$RT/libdlc_runtime.a"
# cuBLAS and cuDNN sum in other orders than the CPU, and Adam turns a near-zero gradient
# into a step of +-lr whatever its rounding: a weight may differ by 2 lr (0.02) after a step.
step train "$PY" tests/cuda/test_cuda_train.py --nvcc --from-prepared "$CARRY/train" \
  --work "$OUT_DIR/work/train" --runtime-lib "$RT/libdlc_runtime.a" --tol 3e-2
# Latency of ResNet-18/50, MobileNetV2 and an MLP at batch 1 and 32 beside PyTorch.
step bench "$PY" bench/cuda_models.py --run "$CARRY/bench" "$OUT_DIR/work/bench" \
  --runtime-lib "$RT/libdlc_runtime.a"
grep -h '^{\|^model \|_b[0-9]' "$OUT_DIR/bench.log" | tee -a "$SUMMARY"
for entry in $MODELS; do
  model=${entry%%:*}
  step "${model}_memcheck" "$PY" $(args_for "$model") --lifecycle --work "$OUT_DIR/work/${model}_mc" \
    --sanitizer "compute-sanitizer --tool memcheck --leak-check full --error-exitcode 9"
  step "${model}_racecheck" "$PY" $(args_for "$model") --lifecycle --work "$OUT_DIR/work/${model}_rc" \
    --sanitizer "compute-sanitizer --tool racecheck --error-exitcode 9"
done
! grep -q FAIL "$SUMMARY"
