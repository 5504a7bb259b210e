#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine for dlc, builds it, and runs one job:
#   scripts/quickstart.sh example   compile the bundled digits classifier, link a tiny program
#                                   against the generated static library, print predictions
#   scripts/quickstart.sh test      the whole test suite (what CI runs)
# Re-running is cheap: installed packages and the build directory are reused.
set -euo pipefail

job=${1:-}
if [[ "$job" != example && "$job" != test ]]; then
  echo "usage: $0 example|test" >&2
  exit 2
fi
cd "$(dirname "$0")/.."
build=${DLC_BUILD_DIR:-build}
# ccache hits across clones in other folders (CI builds a fresh clone each time).
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1

# The example needs only the compiler's build dependencies.
packages=(
  build-essential cmake ninja-build ccache lld-19
  llvm-19-dev llvm-19-tools libmlir-19-dev mlir-19-tools libzstd-dev
  libonnx-dev libprotobuf-dev protobuf-compiler
)
# The tests also need Catch2, the ONNX test data, Python with ONNX and PyTorch (reference
# models), clang with libFuzzer (fuzzing, sanitized compiler) and valgrind.
[[ "$job" == test ]] && packages+=(
  git catch2 libonnx-testdata python3 python3-numpy python3-onnx python3-torch
  python3-torchvision python3-sklearn python3-venv python3-pip clang-19 libclang-rt-19-dev
  valgrind
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  sudo=""
  [[ $(id -u) -eq 0 ]] || sudo="sudo"
  echo "== installing: ${missing[*]}"
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

fuzz_args=()
if [[ "$job" == test ]]; then
  # onnx 1.23.2 (its node tests) from PyPI, beside Debian's packages. numpy stays below 2:
  # Debian's torch and scipy, visible through --system-site-packages, are built against 1.x.
  venv="$build/onnx-venv"
  if ! "$venv/bin/python" -c 'import onnx, sys; sys.exit(onnx.__version__ != "1.23.2")' \
      2>/dev/null; then
    echo "== installing onnx 1.23.2 into $venv"
    mkdir -p "$build"
    /usr/bin/python3 -m venv --system-site-packages "$venv"
    "$venv/bin/pip" install -q --disable-pip-version-check onnx==1.23.2 'numpy<2'
  fi

  # dlc_fuzz and a sanitized dlc come from a second tree built by clang with ASan+UBSan.
  fuzz_build="$build-fuzz"
  echo "== configuring and building the fuzz target and a sanitized dlc in $fuzz_build"
  cmake -G Ninja -S . -B "$fuzz_build" -DCMAKE_BUILD_TYPE=Release -DDLC_FUZZ=ON \
    -DCMAKE_C_COMPILER=clang-19 -DCMAKE_CXX_COMPILER=clang++-19 >/dev/null
  ninja -C "$fuzz_build" -j"$(nproc)" dlc dlc_fuzz
  fuzz_args=(-DDLC_FUZZ_BUILD_DIR="$(cd "$fuzz_build" && pwd)")
fi

echo "== configuring and building dlc in $build"
if [[ "$job" == test ]]; then
  cmake -G Ninja -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=ON \
    "${fuzz_args[@]}" >/dev/null
  ninja -C "$build" -j"$(nproc)"
else
  cmake -G Ninja -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF >/dev/null
  ninja -C "$build" -j"$(nproc)" dlc
fi

case "$job" in
example)
  cmake -DDLC="$build/tools/dlc" -DSOURCE_DIR="$PWD" -DBUILD_DIR="$build/example" \
    -P examples/run_example.cmake
  ;;
test)
  ctest --test-dir "$build" -j"$(nproc)" --output-on-failure
  ;;
esac
