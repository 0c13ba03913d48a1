#!/usr/bin/env bash
# Runs aotirt's GPU checks on a machine with an NVIDIA GPU, from a CUDA build
# made elsewhere (this script builds nothing): the CUDA unit tests, then the
# model zoo exported for CUDA in both recipes -- AOTInductor's default
# (cuBLAS/cuDNN/attention fallbacks) and the Triton-only one (GEMM and conv in
# Triton, attention as math) -- run through the C++ API and the CLI and
# compared with eager PyTorch. Prints pass/fail counts; exits non-zero on any
# failure.
#
#   scripts/gpu-check.sh BUILD_DIR      (BUILD_DIR holds bin/, lib/ and lib/deps
#                                        from scripts/bundle-runtime.sh)
#
# The zoo's API test runs twice per recipe, the second time with every weights
# blob through aotirt's pinned upload (src/backends/cuda/runtime/cuda_upload.h).
# The architecture zoo (tests/models/arch_zoo.py) is exported for CUDA
# beside them and run through the CLI; AOTIRT_GPU_ARCH=0 leaves it out.
# The op conformance suite (tests/ops) runs while they export; last,
# greedy generation on CUDA is compared with transformers'.
# AOTIRT_GPU_RECIPES="default" checks one recipe; AOTIRT_GPU_SKIP_UNIT=1 skips
# the unit tests; AOTIRT_CUDA_ALLOW_TF32 defaults to 0 here (strict float32).
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT="$(pwd)"
BUILD="$ROOT/${1:-build-gpu}"
PY="${PYTHON:-python3}"
export AOTIRT_CACHE_DIR="${AOTIRT_CACHE_DIR:-$ROOT/.cache-gpu}"
LOG="${OUT:-$ROOT/.cache-gpu}"
mkdir -p "$AOTIRT_CACHE_DIR" "$LOG"

libdirs="$BUILD/lib/deps:$BUILD/lib"
nv="$($PY -c 'import nvidia; print(list(nvidia.__path__)[0])' 2>/dev/null || true)"
for lib in libcublasLt.so.13 libcudnn.so.9; do
  f="$(find "$nv" -name "$lib" 2>/dev/null | head -1)"
  [ -n "$f" ] && libdirs="$libdirs:$(dirname "$f")"
done
export LD_LIBRARY_PATH="$libdirs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PYTHONPATH="$ROOT/python${PYTHONPATH:+:$PYTHONPATH}" AOTIRT_BUILD_DIR="$BUILD" AOTIRT_CLI="$BUILD/bin/aotirt" AOTIRT_TEST_DEVICE=cuda
# The references are computed without TF32; so are the checks (aotirt's
# default follows PyTorch's and lets cuDNN use TF32).
export AOTIRT_CUDA_ALLOW_TF32="${AOTIRT_CUDA_ALLOW_TF32:-0}"
RECIPES="${AOTIRT_GPU_RECIPES:-default triton}"
nvidia-smi -L

# Exports take minutes: both recipes build while the unit tests run.
for recipe in $RECIPES; do
  (AOTIRT_TEST_RECIPE=$recipe timeout "${AOTIRT_EXPORT_TIMEOUT:-330}" $PY tests/models/make_packages.py \
     --device cuda >"$LOG/export-$recipe.log" 2>&1) &
done

ARCH="${AOTIRT_GPU_ARCH:-1}"
if [ "$ARCH" != 0 ]; then
  (timeout "${AOTIRT_ARCH_EXPORT_TIMEOUT:-480}" $PY tests/models/make_packages.py --zoo arch --device cuda \
     --jobs "${AOTIRT_ARCH_JOBS:-4}" >"$LOG/export-arch.log" 2>&1) &
fi

passed=0; failed=0
count_gtest() {  # count_gtest LOGFILE
  local p f
  p=$(grep -Eo '^\[  PASSED  \] [0-9]+' "$1" | grep -Eo '[0-9]+$' | tail -1)
  f=$(grep -Eo '^\[  FAILED  \] [0-9]+ tests?,' "$1" | grep -Eo '[0-9]+' | tail -1)
  [ -z "$p$f" ] && f=1
  passed=$((passed + ${p:-0})); failed=$((failed + ${f:-0}))
}

if [ "${AOTIRT_GPU_SKIP_UNIT:-0}" != 1 ]; then  # scripts/test.sh ran them through ctest already
  echo "==== CUDA unit tests ===="
  # AOTIRT_CUDA_CONV=aotirt: channels-last float32 convolutions stay on
  # aotirt's 3xTF32 kernels after other cases have loaded cuDNN.
  AOTIRT_CUDA_CONV=aotirt "$BUILD/bin/aotirt_cuda_tests" >"$LOG/cuda_tests.log" 2>&1
  grep -E '^\[  (PASSED|FAILED|SKIPPED) |Failure' "$LOG/cuda_tests.log" | head -30
  count_gtest "$LOG/cuda_tests.log"
  # float32 attention falls back to the fused kernel without cuBLASLt.
  echo "==== CUDA attention tests without cuBLASLt ===="
  AOTIRT_CUBLASLT_LIBRARY=/nonexistent/libcublasLt.so.13 "$BUILD/bin/aotirt_cuda_tests" \
    --gtest_filter='CudaAttentionTest.*' >"$LOG/cuda_attention_no_cublaslt.log" 2>&1
  grep -E '^\[  (PASSED|FAILED) |Failure' "$LOG/cuda_attention_no_cublaslt.log" | head -10
  count_gtest "$LOG/cuda_attention_no_cublaslt.log"
  # aotirt's TF32 convolutions run only where TF32 is allowed (PyTorch's
  # default for convolutions, off above for the strict checks).
  echo "==== CUDA TF32 convolution shim tests ===="
  AOTIRT_CUDA_ALLOW_TF32=1 "$BUILD/bin/aotirt_cuda_tests" --gtest_filter='CudaConvTf32Shim.*' \
    >"$LOG/cuda_conv_tf32.log" 2>&1
  grep -E '^\[  (PASSED|FAILED|SKIPPED) |Failure' "$LOG/cuda_conv_tf32.log" | head -10
  count_gtest "$LOG/cuda_conv_tf32.log"
fi

# The op conformance suite (tests/ops) on both devices against eager torch.
echo "==== op conformance (CPU and CUDA vs eager) ===="
xdist=$($PY -c 'import xdist' 2>/dev/null && echo "-n 8")
AOTIRT_OP_RESULTS="$LOG/ops-results.json" $PY -m pytest -q -p no:cacheprovider $xdist tests/ops >"$LOG/ops.log" 2>&1
# The CUDA and device-generic part of what the suite recorded: commit it as
# tests/ops/results-cuda.json to fill the CUDA column of docs/ops.md.
$PY - "$LOG/ops-results.json" "$LOG/results-cuda.json" <<'PYEOF' || true
import json, sys
data = json.load(open(sys.argv[1]))
keep = {k: v for k, v in data.items() if not k.startswith("aoti_torch_cpu_")}
json.dump(keep, open(sys.argv[2], "w"), indent=1, sort_keys=True)
PYEOF
grep -E '^FAILED' "$LOG/ops.log" | head -20
line=$(tail -1 "$LOG/ops.log"); echo "ops: $line"
p=$(echo "$line" | grep -Eo '[0-9]+ passed' | grep -Eo '[0-9]+'); f=$(echo "$line" | grep -Eo '[0-9]+ (failed|errors?)' | awk '{s+=$1} END {print s+0}')
[ -z "$p" ] && f=$((f + 1))
passed=$((passed + ${p:-0})); failed=$((failed + ${f:-0}))
wait

for recipe in $RECIPES; do
  echo "==== zoo, CUDA, recipe $recipe ===="
  grep -E 'built|cached|FAILED' "$LOG/export-$recipe.log" | sed 's#/.*/##' | head -20
  manifest="$(ls -t "$AOTIRT_CACHE_DIR"/zoo/torch-*-cuda$([ $recipe = default ] || echo -$recipe)/manifest.json 2>/dev/null | head -1)"
  if [ -z "$manifest" ]; then echo "no manifest for $recipe"; failed=$((failed + 1)); continue; fi
  AOTIRT_ZOO_MANIFEST="$manifest" "$BUILD/bin/aotirt_zoo_api_test" >"$LOG/zoo-api-$recipe.log" 2>&1
  grep -E '^\[  (PASSED|FAILED) |^\[       OK|Failure|INVALID|INTERNAL|differ' "$LOG/zoo-api-$recipe.log" | head -30
  count_gtest "$LOG/zoo-api-$recipe.log"
  # Faults at each step of load and run on cuda:0: failed device and host
  # allocations, a full disk, read errors (tests/unit/fault_injection_test.cpp).
  if [ "$recipe" = default ] && [ -x "$BUILD/bin/aotirt_unit_tests" ]; then
    AOTIRT_ZOO_MANIFEST=/nonexistent AOTIRT_FAULT_TEST_CUDA_MANIFEST="$manifest" \
      "$BUILD/bin/aotirt_unit_tests" --gtest_filter='FaultInjectionTest.*' >"$LOG/fault-$recipe.log" 2>&1
    grep -E '^\[  (PASSED|FAILED) |^\[       OK|Failure' "$LOG/fault-$recipe.log" | head -10
    count_gtest "$LOG/fault-$recipe.log"
  fi
  # Again with every package's weights through aotirt's pinned upload (by
  # default only blobs of 16 MiB and more take it): the log must show uploads.
  AOTIRT_ZOO_MANIFEST="$manifest" AOTIRT_CUDA_DISABLE=upload_threshold AOTIRT_LOG_LEVEL=debug \
    "$BUILD/bin/aotirt_zoo_api_test" --gtest_filter='Zoo/ZooApiTest.MatchesEager/*' \
    >"$LOG/zoo-api-upload-$recipe.log" 2>&1
  grep -E '^\[  (PASSED|FAILED) |Failure' "$LOG/zoo-api-upload-$recipe.log" | head -10
  count_gtest "$LOG/zoo-api-upload-$recipe.log"
  uploads=$(grep -c 'weight upload from' "$LOG/zoo-api-upload-$recipe.log")
  echo "weight uploads: $uploads"
  [ "$uploads" -gt 0 ] || { echo "FAILED: no package took the weight upload"; failed=$((failed + 1)); }
  AOTIRT_TEST_RECIPE=$recipe $PY -m pytest -q -p no:cacheprovider tests/models/test_zoo.py -k cli \
    >"$LOG/zoo-cli-$recipe.log" 2>&1
  line=$(tail -1 "$LOG/zoo-cli-$recipe.log"); echo "CLI: $line"
  p=$(echo "$line" | grep -Eo '[0-9]+ passed' | grep -Eo '[0-9]+'); f=$(echo "$line" | grep -Eo '[0-9]+ (failed|errors?)' | awk '{s+=$1} END {print s+0}')
  [ -z "$p" ] && f=$((f + 1))
  passed=$((passed + ${p:-0})); failed=$((failed + ${f:-0}))
  # Steady-state latency of a few packages, for the record.
  for name in mlp cnn transformer bf16; do
    d="$(dirname "$manifest")/$(python3 -c "import json,sys; m=json.load(open('$manifest')); print(next((p['dir'] for p in m['packages'] if p['name']=='$name' and 'dir' in p), ''))")"
    [ -f "$d/model.pt2" ] && echo "$name: $("$BUILD/bin/aotirt" bench "$d/model.pt2" --device cuda --iters 200 --warmup 20 --json 2>/dev/null | tr -d '\n' | cut -c1-300)"
  done
done

if [ "$ARCH" != 0 ]; then
  echo "==== architecture zoo (CUDA, CLI vs eager) ===="
  grep -E 'FAILED' "$LOG/export-arch.log" | head -20
  export AOTIRT_ARCH_ZOO_MANIFEST
  AOTIRT_ARCH_ZOO_MANIFEST="$(ls -t "$AOTIRT_CACHE_DIR"/zoo-arch/torch-*-cuda/manifest.json 2>/dev/null | head -1)"
  $PY -m pytest -q -p no:cacheprovider tests/models/test_arch_zoo.py >"$LOG/arch-zoo.log" 2>&1
  grep -E '^FAILED' "$LOG/arch-zoo.log" | head -40
  line=$(tail -1 "$LOG/arch-zoo.log"); echo "architecture zoo: $line"
  p=$(echo "$line" | grep -Eo '[0-9]+ passed' | grep -Eo '[0-9]+'); f=$(echo "$line" | grep -Eo '[0-9]+ (failed|errors?)' | awk '{s+=$1} END {print s+0}')
  [ -z "$p" ] && f=$((f + 1))
  passed=$((passed + ${p:-0})); failed=$((failed + ${f:-0}))
fi

echo "==== generation (CUDA, aotirt generate vs transformers) ===="
$PY -m pytest -q -p no:cacheprovider tests/models/test_generate.py -k cuda >"$LOG/generate.log" 2>&1
grep -E '^FAILED' "$LOG/generate.log" | head -10
line=$(tail -1 "$LOG/generate.log"); echo "generation: $line"
p=$(echo "$line" | grep -Eo '[0-9]+ passed' | grep -Eo '[0-9]+'); f=$(echo "$line" | grep -Eo '[0-9]+ (failed|errors?)' | awk '{s+=$1} END {print s+0}')
[ -z "$p" ] && f=$((f + 1))
passed=$((passed + ${p:-0})); failed=$((failed + ${f:-0}))

echo
echo "gpu: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
