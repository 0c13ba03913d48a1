#!/usr/bin/env bash
# Runs aotirt's CUDA tests on a machine with a GPU, from a build made on
# another machine: it builds nothing. Expects <build>/bin/aotirt_cuda_tests,
# <build>/bin/aotirt, <build>/lib/libaotirt.so and the libraries that
# scripts/bundle-runtime.sh copied to <build>/lib/deps. cuBLASLt and cuDNN
# come from the NVIDIA wheels next to the machine's torch (or from
# LD_LIBRARY_PATH).
#
#   tests/cuda/run_on_gpu.sh [BUILD_DIR] [WORK_DIR]
#
# 1. aotirt_cuda_tests (gtest), 2. when python3 has torch and a GPU: exports
# small CUDA models that call the fallback ops (make_cuda_models.py) and runs
# them through the aotirt tool against eager PyTorch (check_cuda_models.py).
# The last lines are the pass/fail counts; the exit code is non-zero on any
# failure. Optional: AOTIRT_GPU_BENCH=1 times each model with `aotirt bench`;
# AOTIRT_GPU_MEMCHECK=<gtest filter> reruns those tests under
# compute-sanitizer's memcheck (slow; its error count is reported).
set -uo pipefail
# Strict float32 (references are computed without TF32).
export AOTIRT_CUDA_ALLOW_TF32="${AOTIRT_CUDA_ALLOW_TF32:-0}"
cd "$(dirname "$0")/../.."
BUILD="${1:-build-cuda}"
WORK="${2:-${TMPDIR:-/tmp}/aotirt-cuda-gpu}"
PY="${PYTHON:-python3}"
mkdir -p "$WORK"

libdirs="$PWD/$BUILD/lib/deps:$PWD/$BUILD/lib"
nv="$($PY -c 'import nvidia; print(list(nvidia.__path__)[0])' 2>/dev/null || true)"
if [ -n "$nv" ]; then
  for lib in libcublasLt.so.13 libcudnn.so.9; do
    f="$(find "$nv" -name "$lib" 2>/dev/null | head -1)"
    [ -n "$f" ] && libdirs="$libdirs:$(dirname "$f")"
  done
fi
export AOTIRT_LIB_PATH="$libdirs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
nvidia-smi -L || echo "nvidia-smi failed: the GPU tests will skip"

# The model export takes minutes; it runs while the unit tests do.
models_ok=0
export_pid=""
if $PY -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
  (PYTHONUNBUFFERED=1 timeout "${AOTIRT_EXPORT_TIMEOUT:-420}" $PY tests/cuda/make_cuda_models.py "$WORK/models" \
     >"$WORK/export.log" 2>&1) &
  export_pid=$!
  models_ok=1
else
  echo "SKIP models: python3 has no torch with a GPU"
fi

echo "==== aotirt_cuda_tests ===="
LD_LIBRARY_PATH="$AOTIRT_LIB_PATH" "$BUILD/bin/aotirt_cuda_tests" 2>&1 | tee "$WORK/cuda_tests.log"
gtest_rc=${PIPESTATUS[0]}
t_pass=$(grep -Eo '^\[  PASSED  \] [0-9]+' "$WORK/cuda_tests.log" | grep -Eo '[0-9]+$' | tail -1)
t_fail=$(grep -Eo '^\[  FAILED  \] [0-9]+ tests?,' "$WORK/cuda_tests.log" | grep -Eo '[0-9]+' | tail -1)
t_skip=$(grep -Eo '^\[  SKIPPED \] [0-9]+ tests?,' "$WORK/cuda_tests.log" | grep -Eo '[0-9]+' | tail -1)

m_line="models: not run"
m_rc=0
if [ -n "$export_pid" ]; then
  wait "$export_pid"
  echo "==== model export ===="
  cat "$WORK/export.log" | grep -v -E 'Warning|warn\(' | tail -n 40
  echo "==== models through the aotirt tool ===="
  $PY tests/cuda/check_cuda_models.py "$PWD/$BUILD/bin/aotirt" "$WORK/models" 2>&1 | tee "$WORK/models.log"
  m_rc=${PIPESTATUS[0]}
  m_line="$(grep -E '^models:' "$WORK/models.log" | tail -1)"
  [ -n "$m_line" ] || { m_line="models: no result"; m_rc=1; }
fi

if [ "${AOTIRT_GPU_BENCH:-0}" = 1 ] && [ -d "$WORK/models" ]; then
  echo "==== aotirt bench ===="
  for m in "$WORK"/models/*/model.pt2; do
    echo "-- $(basename "$(dirname "$m")")"
    ins=()
    for f in $(ls "$(dirname "$m")"/input*.npy | sort -V); do ins+=(--input "$f"); done
    LD_LIBRARY_PATH="$AOTIRT_LIB_PATH" "$BUILD/bin/aotirt" bench "$m" --iters 200 --warmup 20 "${ins[@]}" 2>&1 | tail -n 6
  done
fi

mc_line=""
if [ -n "${AOTIRT_GPU_MEMCHECK:-}" ]; then
  echo "==== compute-sanitizer memcheck: ${AOTIRT_GPU_MEMCHECK} ===="
  if command -v compute-sanitizer >/dev/null; then
    LD_LIBRARY_PATH="$AOTIRT_LIB_PATH" timeout "${AOTIRT_MEMCHECK_TIMEOUT:-240}" compute-sanitizer --tool memcheck \
      "$BUILD/bin/aotirt_cuda_tests" --gtest_filter="$AOTIRT_GPU_MEMCHECK" >"$WORK/memcheck.log" 2>&1
    mc_rc=$?
    grep -E '^\[  (PASSED|FAILED) |ERROR SUMMARY' "$WORK/memcheck.log" | tail -n 3
    mc_line="memcheck: exit $mc_rc, $(grep -Eo 'ERROR SUMMARY: [0-9]+ errors?' "$WORK/memcheck.log" | tail -1)"
  else
    mc_line="memcheck: compute-sanitizer not found"
  fi
fi

echo
echo "cuda tests: ${t_pass:-0} passed, ${t_fail:-0} failed, ${t_skip:-0} skipped (gtest exit $gtest_rc)"
echo "$m_line"
[ -n "$mc_line" ] && echo "$mc_line"
[ "$gtest_rc" -eq 0 ] && [ "$m_rc" -eq 0 ]
