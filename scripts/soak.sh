#!/usr/bin/env bash
# Soak test (docs/testing.md, "Soak test"): runs tests/soak's aotirt_soak on a
# zoo package, on the CPU and, where nvidia-smi sees a GPU, on CUDA. Each run
# loads, runs and unloads the package --cycles times, then runs one loaded
# model from --threads threads, --runs-per-thread runs each, and checks that
# RSS, device memory, open file descriptors and temporary files end where
# they started (after a warm-up) and that every run's outputs equal the
# first run's, bit for bit. Not part of scripts/test.sh or CI: a full run is
# long.
#
#   scripts/soak.sh [--quick] [--build-dir DIR] [--package NAME]
#                   [--cpu-manifest FILE] [--cuda-manifest FILE]
#                   [--cpu-only | --cuda-only] [-- EXTRA aotirt_soak ARGS]
#
#   --quick          200 cycles and 4 threads x 200 runs instead of the full
#                    10000 cycles and 16 threads x 10000 runs
#   --build-dir DIR  use the build in DIR (relative to the repository root,
#                    as for scripts/gpu-check.sh) as it is: a build, or a
#                    copy made with scripts/bundle-runtime.sh (bin/, lib/,
#                    lib/deps), as on a GPU machine; nothing is built.
#                    Without it, $AOTIRT_BUILD_DIR (default build/) is
#                    brought up to date with ninja (target aotirt_soak).
#   --package NAME   the zoo package to soak (default mlp)
#   --cpu-manifest, --cuda-manifest
#                    the zoo manifests to take packages from. Defaults:
#                    $AOTIRT_ZOO_MANIFEST, else the newest
#                    $AOTIRT_CACHE_DIR/zoo/torch-*-cpu/manifest.json; for
#                    CUDA $AOTIRT_ZOO_CUDA_MANIFEST, else the newest
#                    zoo/torch-*-cuda/manifest.json under $AOTIRT_CACHE_DIR,
#                    .cache-gpu (scripts/gpu-check.sh's cache) or .cache.
#
# JSON figures and logs go to $OUT when it is set, else build dir/soak-logs.
# The last line is "soak: N passed, N failed, N skipped"; the exit status is
# non-zero when any run was not flat or could not run. Without a GPU the CUDA
# run prints "SKIP: no GPU" and counts as skipped.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT="$(pwd)"

QUICK=0
BUILD_DIR=""
PACKAGE=mlp
CPU_MANIFEST="${AOTIRT_ZOO_MANIFEST:-}"
CUDA_MANIFEST="${AOTIRT_ZOO_CUDA_MANIFEST:-}"
DO_CPU=1
DO_CUDA=1
EXTRA=()
usage() { sed -n '2,/^[^#]/p' "$0" | grep '^#' | sed 's/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) QUICK=1; shift ;;
    --build-dir) BUILD_DIR="${2:?--build-dir needs a directory}"; shift 2 ;;
    --build-dir=*) BUILD_DIR="${1#*=}"; shift ;;
    --package) PACKAGE="${2:?--package needs a name}"; shift 2 ;;
    --package=*) PACKAGE="${1#*=}"; shift ;;
    --cpu-manifest) CPU_MANIFEST="${2:?--cpu-manifest needs a file}"; shift 2 ;;
    --cpu-manifest=*) CPU_MANIFEST="${1#*=}"; shift ;;
    --cuda-manifest) CUDA_MANIFEST="${2:?--cuda-manifest needs a file}"; shift 2 ;;
    --cuda-manifest=*) CUDA_MANIFEST="${1#*=}"; shift ;;
    --cpu-only) DO_CUDA=0; shift ;;
    --cuda-only) DO_CPU=0; shift ;;
    --) shift; EXTRA=("$@"); break ;;
    -h|--help) usage; exit 0 ;;
    *) echo "soak.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done

if [ $QUICK = 1 ]; then
  SIZE=(--cycles 200 --threads 4 --runs-per-thread 200)
else
  SIZE=(--cycles 10000 --threads 16 --runs-per-thread 10000)
fi

# The binary: a given build is used as it is (a bundle on a GPU machine has
# no sources or build files to build with); the default build is updated.
if [ -n "$BUILD_DIR" ]; then
  BUILD="$(cd "$BUILD_DIR" 2>/dev/null && pwd)" || { echo "soak.sh: no directory '$BUILD_DIR'" >&2; exit 2; }
else
  BUILD="$ROOT/${AOTIRT_BUILD_DIR:-build}"
  if [ ! -f "$BUILD/build.ninja" ]; then
    echo "soak.sh: $BUILD is not configured: run scripts/build.sh (or scripts/test.sh) first," >&2
    echo "         or pass --build-dir" >&2
    exit 2
  fi
  echo "building aotirt_soak in $BUILD"
  nice -n "${AOTIRT_NICE:-10}" ninja -C "$BUILD" aotirt_soak >"$BUILD/soak-build.log" 2>&1 ||
    { tail -n 40 "$BUILD/soak-build.log"; echo "soak.sh: build failed ($BUILD/soak-build.log)" >&2; exit 1; }
fi
SOAK="$BUILD/bin/aotirt_soak"
[ -x "$SOAK" ] || { echo "soak.sh: $SOAK not found (a build with -DAOTIRT_BUILD_TESTS=ON makes it)" >&2; exit 2; }

# As scripts/gpu-check.sh: a bundle's libraries (lib/deps from
# scripts/bundle-runtime.sh, then lib/), and cuBLASLt/cuDNN from the nvidia
# Python wheels where the machine has them (aotirt opens them at run time).
libdirs="$BUILD/lib/deps:$BUILD/lib"
PY="${PYTHON:-python3}"
[ -x "$ROOT/.venv/bin/python" ] && [ -z "${PYTHON:-}" ] && PY="$ROOT/.venv/bin/python"
nv="$($PY -c 'import nvidia; print(list(nvidia.__path__)[0])' 2>/dev/null || true)"
if [ -n "$nv" ]; then
  for lib in libcublasLt.so.13 libcudnn.so.9 libcudart.so.13; do
    f="$(find "$nv" -name "$lib" 2>/dev/null | head -1)"
    [ -n "$f" ] && libdirs="$libdirs:$(dirname "$f")"
  done
fi
export LD_LIBRARY_PATH="$libdirs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

LOG="${OUT:-$BUILD/soak-logs}"
mkdir -p "$LOG" || { echo "soak.sh: cannot create $LOG" >&2; exit 2; }

# newest PATTERN...: the most recent existing file among the globs.
newest() { ls -t "$@" 2>/dev/null | head -1; }
CACHE="${AOTIRT_CACHE_DIR:-$ROOT/.cache}"
[ -n "$CPU_MANIFEST" ] || CPU_MANIFEST="$(newest "$CACHE"/zoo/torch-*-cpu/manifest.json)"
[ -n "$CUDA_MANIFEST" ] || CUDA_MANIFEST="$(newest "$CACHE"/zoo/torch-*-cuda/manifest.json \
  "$ROOT"/.cache-gpu/zoo/torch-*-cuda/manifest.json "$ROOT"/.cache/zoo/torch-*-cuda/manifest.json)"

# package_path MANIFEST: the .pt2 of $PACKAGE listed in MANIFEST, or nothing.
package_path() {
  "$PY" - "$1" "$PACKAGE" <<'EOF' 2>/dev/null
import json, os, sys
path, name = sys.argv[1], sys.argv[2]
for p in json.load(open(path)).get("packages", []):
    if p.get("name") == name and "dir" in p and "error" not in p:
        print(os.path.join(os.path.dirname(path), p["dir"], p.get("package", "model.pt2")))
        break
EOF
}

passed=0; failed=0; skipped=0
# soak DEVICE MANIFEST: one aotirt_soak run, tallied.
soak() {
  local device=$1 manifest=$2 pt2 rc tag
  tag="${device//:/}"
  printf '\n==== soak: %s on %s (%s) ====\n' "$PACKAGE" "$device" "$([ $QUICK = 1 ] && echo quick || echo full)"
  if [ -z "$manifest" ] || [ ! -f "$manifest" ]; then
    echo "FAILED: no zoo manifest for $device${manifest:+ ($manifest does not exist)}:"
    echo "        export the zoo (tests/models/make_packages.py --device ${device%%:*}) or pass --${device%%:*}-manifest"
    failed=$((failed + 1)); return
  fi
  pt2="$(package_path "$manifest")"
  if [ -z "$pt2" ] || [ ! -f "$pt2" ]; then
    echo "FAILED: package '$PACKAGE' not in $manifest (or its export failed)"
    failed=$((failed + 1)); return
  fi
  echo "package: $pt2"
  "$SOAK" --package "$pt2" --device "$device" "${SIZE[@]}" --json "$LOG/soak-$tag.json" "${EXTRA[@]}" \
    2>"$LOG/soak-$tag.log"
  rc=$?
  # The log holds progress lines and any message from the runtime.
  grep -v '^  \(cycles\|runs\): [0-9]* of [0-9]*$' "$LOG/soak-$tag.log" | tail -n 20
  if [ $rc -eq 0 ]; then passed=$((passed + 1)); else echo "FAILED: aotirt_soak exited $rc (log: $LOG/soak-$tag.log)"; failed=$((failed + 1)); fi
}

[ $DO_CPU = 1 ] && soak cpu "$CPU_MANIFEST"
if [ $DO_CUDA = 1 ]; then
  if nvidia-smi -L >/dev/null 2>&1; then
    soak cuda "$CUDA_MANIFEST"
  else
    echo
    echo "SKIP: no GPU (nvidia-smi sees none): the CUDA soak runs on a machine with one."
    skipped=$((skipped + 1))
  fi
fi

echo
echo "soak: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
