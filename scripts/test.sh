#!/usr/bin/env bash
# Builds aotirt and runs every test: C++ unit and shim tests (ctest), then the
# model tests, which export real AOTInductor packages with torch (cached by
# torch version and model source) and compare aotirt's outputs with eager
# PyTorch, then the op conformance suite, the wheel (built and run without
# torch), the benchmark harness's own tests and the sanitizer builds. CUDA tests
# run when a GPU is present and are skipped visibly otherwise. The last line
# is the total: "N passed, N failed, N skipped".
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT="$(pwd)"

./scripts/setup.sh || { echo "setup failed"; exit 1; }

BUILD_DIR="${AOTIRT_BUILD_DIR:-build}"
CPU_ONLY_DIR="${AOTIRT_CPU_ONLY_BUILD_DIR:-build-cpu-only}"
export AOTIRT_CACHE_DIR="${AOTIRT_CACHE_DIR:-$ROOT/.cache}"

# The builds go through ccache (scripts/setup.sh installs it), kept in
# .cache/ccache: the CPU-only build then reuses the main build's objects, and
# a second run of this script rebuilds only what changed. A launcher or
# cache set by the caller wins.
if command -v ccache >/dev/null 2>&1; then
  export CMAKE_C_COMPILER_LAUNCHER="${CMAKE_C_COMPILER_LAUNCHER:-ccache}"
  export CMAKE_CXX_COMPILER_LAUNCHER="${CMAKE_CXX_COMPILER_LAUNCHER:-ccache}"
  export CMAKE_CUDA_COMPILER_LAUNCHER="${CMAKE_CUDA_COMPILER_LAUNCHER:-ccache}"
  export CCACHE_DIR="${CCACHE_DIR:-$AOTIRT_CACHE_DIR/ccache}" CCACHE_BASEDIR="${CCACHE_BASEDIR:-$ROOT}"
fi

T0=$(date +%s)
# Each step's header says how long the run has taken so far.
step() { printf '\n==== %s ==== (at %dm%02ds)\n' "$*" $((($(date +%s) - T0) / 60)) $((($(date +%s) - T0) % 60)); }

# Without a GPU the CUDA code is compiled to check it, never run, so one
# architecture is enough (a third of the device-code compile time);
# AOTIRT_CUDA_ARCHITECTURES overrides the choice either way.
cuda_archs="${AOTIRT_CUDA_ARCHITECTURES:-}"
if [ -z "$cuda_archs" ] && ! nvidia-smi -L >/dev/null 2>&1; then cuda_archs=90-real; fi
step "build ($BUILD_DIR)"
AOTIRT_BUILD_DIR="$BUILD_DIR" ./scripts/build.sh -DAOTIRT_BUILD_TESTS=ON \
  ${cuda_archs:+-DCMAKE_CUDA_ARCHITECTURES=$cuda_archs} || { echo "build failed"; exit 1; }
step "build, CPU only ($CPU_ONLY_DIR)"
cmake -S . -B "$CPU_ONLY_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release -DAOTIRT_BUILD_CUDA=OFF \
  -DAOTIRT_BUILD_TESTS=OFF -DAOTIRT_BUILD_EXAMPLES=OFF >/dev/null &&
  ninja -C "$CPU_ONLY_DIR" aotirt || { echo "CPU-only build failed"; exit 1; }

passed=0; failed=0; skipped=0
tally() {  # tally PASSED FAILED SKIPPED
  passed=$((passed + ${1:-0})); failed=$((failed + ${2:-0})); skipped=$((skipped + ${3:-0}))
}

if ! nvidia-smi -L >/dev/null 2>&1; then
  echo
  echo "SKIP: no GPU on this machine: CUDA tests are skipped (they run on a machine with one)."
fi

step "zoo packages (exported with torch; cached by torch version and source; two at a time)"
PYTHONPATH="$ROOT/python" .venv/bin/python tests/models/make_packages.py --device cpu --jobs 2 2>&1 |
  grep -v -E '^\s*$|Warning|warn\(' | tail -n 40
export AOTIRT_ZOO_MANIFEST
AOTIRT_ZOO_MANIFEST="$(ls -t "$AOTIRT_CACHE_DIR"/zoo/torch-*-cpu/manifest.json 2>/dev/null | head -1)"
echo "manifest: ${AOTIRT_ZOO_MANIFEST:-none}"

step "architecture zoo packages (torchvision, timm, transformers; two exports at a time)"
PYTHONPATH="$ROOT/python" .venv/bin/python tests/models/make_packages.py --zoo arch --device cpu --jobs 2 2>&1 |
  grep -E 'built|cached|FAILED|manifest:' | tail -n 60
export AOTIRT_ARCH_ZOO_MANIFEST
AOTIRT_ARCH_ZOO_MANIFEST="$(ls -t "$AOTIRT_CACHE_DIR"/zoo-arch/torch-*-cpu/manifest.json 2>/dev/null | head -1)"

step "C++ unit, shim, model-API and CUDA tests (ctest)"
ctest_log="$(mktemp)"
(cd "$BUILD_DIR" && ctest --output-on-failure -j2 --timeout 300) 2>&1 | tee "$ctest_log"
ct_total=$(grep -Eo 'tests passed, [0-9]+ tests failed out of [0-9]+' "$ctest_log" | grep -Eo '[0-9]+$' | tail -1)
ct_failed=$(grep -Eo '[0-9]+ tests failed out of' "$ctest_log" | grep -Eo '^[0-9]+' | tail -1)
ct_skipped=$(grep -c '\*\*\*Skipped' "$ctest_log")
if [ -z "$ct_total" ]; then
  echo "ctest did not report a result"; tally 0 1 0
else
  tally $((ct_total - ct_failed - ct_skipped)) "$ct_failed" "$ct_skipped"
fi
rm -f "$ctest_log"

# tally_summary PREFIX LOG WHAT: tallies the last "PREFIX: N passed, N failed[,
# N skipped]" line a step script printed to LOG; a failure when there is none.
tally_summary() {
  local line
  line=$(grep -E "^$1: [0-9]+ passed, [0-9]+ failed" "$2" | tail -1)
  if [ -z "$line" ]; then
    echo "$3 did not report a result"; tally 0 1 0
  else
    tally "$(echo "$line" | awk '{print $2}')" "$(echo "$line" | awk '{print $4}')" \
      "$(echo "$line" | grep -Eo '[0-9]+ skipped' | grep -Eo '[0-9]+')"
  fi
}

# run_pytest ARGS...: runs pytest and tallies its summary line.
run_pytest() {
  local log line p f k
  log="$(mktemp)"
  AOTIRT_BUILD_DIR="$ROOT/$BUILD_DIR" AOTIRT_CPU_ONLY_LIB="$ROOT/$CPU_ONLY_DIR/lib/libaotirt.so" \
  PYTHONPATH="$ROOT/python" .venv/bin/python -m pytest -q -rs "$@" 2>&1 | tee "$log"
  line=$(grep -E '^(=+ )?[0-9]+ (passed|failed)|^(=+ )?[0-9]+ (skipped|error)|no tests ran' "$log" | tail -1)
  p=$(echo "$line" | grep -Eo '[0-9]+ passed' | grep -Eo '[0-9]+')
  f=$(echo "$line" | grep -Eo '[0-9]+ (failed|errors?)' | awk '{s+=$1} END {print s+0}')
  k=$(echo "$line" | grep -Eo '[0-9]+ skipped' | grep -Eo '[0-9]+')
  if [ -z "$line" ]; then
    echo "pytest did not report a result"; tally 0 1 0
  else
    tally "${p:-0}" "${f:-0}" "${k:-0}"
  fi
  rm -f "$log"
}

# Two test files at a time (pytest-xdist; AOTIRT_MODEL_TEST_JOBS changes the
# count): most of their time is single-threaded export and start-up. The
# packages several files share are made once, under a lock
# (tests/models/cache_lock.py).
step "model tests (pytest: zoo vs eager, CLI, bad input, exporter; ${AOTIRT_MODEL_TEST_JOBS:-2} files at a time)"
run_pytest tests/models -n "${AOTIRT_MODEL_TEST_JOBS:-2}" --dist loadfile

step "op tests (pytest: op inventory and docs/ops.md, shim conformance with eager torch)"
run_pytest tests/ops

if [ "${AOTIRT_WHEEL_STEP:-1}" != 0 ]; then
  step "wheel (scripts/wheel-check.sh: built, installed without torch, the zoo through the Python API and CLI)"
  wheel_log="$(mktemp)"
  AOTIRT_CUDA_ARCHITECTURES="$cuda_archs" ./scripts/wheel-check.sh 2>&1 | tee "$wheel_log"
  tally_summary wheel "$wheel_log" "the wheel step"
  rm -f "$wheel_log"
else
  echo
  echo "SKIP: AOTIRT_WHEEL_STEP=0: the wheel (scripts/wheel-check.sh) was not built or tested."
fi

step "benchmark harness tests (pytest: process watcher, report, harness logic, kernel profiles, before/after pairs)"
run_pytest bench/tests

if [ "${AOTIRT_SANITIZE_STEP:-1}" != 0 ]; then
  step "sanitizers (scripts/sanitize.sh: ASan+UBSan and TSan builds, 60 s per fuzz target)"
  san_log="$(mktemp)"
  ./scripts/sanitize.sh 2>&1 | tee "$san_log"
  tally_summary sanitize "$san_log" "the sanitizer step"
  rm -f "$san_log"
else
  echo
  echo "SKIP: AOTIRT_SANITIZE_STEP=0: the sanitizer builds and fuzzers (scripts/sanitize.sh) were not run."
fi

if nvidia-smi -L >/dev/null 2>&1; then
  step "GPU: the zoo exported for CUDA in both recipes (default, triton)"
  gpu_log="$(mktemp)"
  AOTIRT_GPU_SKIP_UNIT=1 PYTHON="$ROOT/.venv/bin/python" ./scripts/gpu-check.sh "$BUILD_DIR" 2>&1 | tee "$gpu_log"
  tally_summary gpu "$gpu_log" "the GPU checks"
  rm -f "$gpu_log"
else
  echo
  echo "SKIP: no GPU: the CUDA zoo (default and triton recipes) and the CUDA architecture zoo were not run; scripts/gpu-check.sh runs them on a GPU machine."
fi

echo
echo "time: $((($(date +%s) - T0) / 60))m$(printf '%02d' $((($(date +%s) - T0) % 60)))s"
echo "total: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
