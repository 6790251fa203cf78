#!/usr/bin/env bash
#===- setup-debian.sh - Install Parallax's build dependencies -------------===#
#
# Installs exactly the Debian 12 packages Parallax needs to build and test.
# Idempotent: packages already installed are skipped, and nothing (not even
# `apt-get update`) runs when everything is present. With --bench, also
# what the benchmarks and examples/models/export.py need (PyTorch,
# torchvision, matplotlib for plots); the build and the tests do not.
#
#===----------------------------------------------------------------------===#
set -euo pipefail

PACKAGES=(
  # Toolchain and build system; jemalloc, the compiler tools' malloc.
  g++ cmake ninja-build ccache python3 libjemalloc-dev
  # LLVM/MLIR 22 (libMLIR.so, libLLVM.so, mlir-tblgen, lit, FileCheck, not);
  # clang's sanitizer and libFuzzer runtimes for the runtime's checks.
  llvm-22-dev llvm-22-tools libmlir-22-dev mlir-22-tools clang-22
  libclang-rt-22-dev
  # Matrix products of compiled programs: oneDNN for large tiles, OpenBLAS
  # for small ones (both loaded at run time: lib/Runtime/CpuKernels.cpp).
  libopenblas-dev libdnnl2
  # The threads of generated loop nests (LLVM's OpenMP runtime).
  libomp-22-dev
  # Distributed programs: MPI runtime and mpirun.
  openmpi-bin libopenmpi-dev
  # ONNX importer: libonnx (loading, checker, shape inference, version
  # converter) and protobuf.
  libonnx-dev libprotobuf-dev protobuf-compiler
  # Tests: GoogleTest, ONNX's backend test models, and numpy/onnx for the
  # conformance runner (Debian's /usr/bin/python3 packages).
  libgtest-dev libonnx-testdata python3-numpy python3-onnx
)
if [[ "${1:-}" == --bench ]]; then
  # bench/*.py and the reference-data generators: PyTorch 1.13 on OpenBLAS
  # (and oneDNN); BLIS for bench/cpu_libraries.py (at a
  # lower alternatives priority than OpenBLAS: libblas.so.3 stays OpenBLAS).
  PACKAGES+=(python3-torch python3-torchvision python3-matplotlib
             libopenblas0-pthread libblis4-pthread)
elif [[ $# -gt 0 ]]; then
  echo "setup: unknown option '$1' (--bench adds the benchmarks' packages)" >&2
  exit 2
fi

missing=()
for pkg in "${PACKAGES[@]}"; do
  if [[ "$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null)" != "install ok installed" ]]; then
    missing+=("$pkg")
  fi
done

if ((${#missing[@]} == 0)); then
  echo "setup: all ${#PACKAGES[@]} Debian packages already installed"
  exit 0
fi

SUDO=()
if [[ "$(id -u)" != 0 ]]; then
  SUDO=(sudo)
fi
echo "setup: installing ${missing[*]}"
"${SUDO[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${SUDO[@]}" apt-get install -y -qq \
  --no-install-recommends "${missing[@]}"
