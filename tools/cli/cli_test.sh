#!/usr/bin/env bash
# End-to-end checks of the aotirt command-line tool: exit codes and error
# messages for bad input, and, when the model zoo cache has been built
# (tests/models/make_packages.py), real runs on its CPU packages.
#
#   cli_test.sh path/to/aotirt [path/to/aotirt_embed_example]
#
# The zoo is looked up under ${AOTIRT_CACHE_DIR:-<repo>/.cache}/zoo.
set -u

CLI=$1
EMBED=${2:-}
REPO=$(cd "$(dirname "$0")/../.." && pwd)
ZOO=${AOTIRT_CACHE_DIR:-$REPO/.cache}/zoo
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
failures=0

# expect CODE NEEDLE -- command...: the exit code must be CODE and the
# combined output must contain NEEDLE.
expect() {
  local code=$1 needle=$2
  shift 3
  local out rc
  out=$("$@" 2>&1)
  rc=$?
  if [[ $rc -ne $code || "$out" != *"$needle"* ]]; then
    echo "FAIL: $* -> rc=$rc (want $code), output:"
    echo "$out" | sed 's/^/    /'
    echo "    (wanted to contain: $needle)"
    failures=$((failures + 1))
  else
    echo "ok: $*"
  fi
}

echo "not a zip" > "$TMP/notzip.pt2"
touch "$TMP/file"

# ---- usage errors: exit 2 ----
expect 0 "aotirt " -- "$CLI" --version
expect 2 "aotirt: error: A subcommand is required" -- "$CLI"
expect 2 "aotirt: error: package is required" -- "$CLI" run
expect 2 "--output-dir is required" -- "$CLI" run x.pt2
expect 2 "bad device 'tpu'" -- "$CLI" run x.pt2 -o "$TMP/o" --device tpu
expect 2 "--iters" -- "$CLI" bench x.pt2 --iters 0
expect 2 "--warmup" -- "$CLI" bench x.pt2 --warmup -1
expect 2 "aotirt: error:" -- "$CLI" frobnicate
expect 0 "float32" -- "$CLI" run --help

# ---- runtime errors: exit 1 ----
expect 1 "aotirt: error: NOT_FOUND" -- "$CLI" inspect "$TMP/missing.pt2"
expect 1 "aotirt: error: DATA_LOSS" -- "$CLI" inspect "$TMP/notzip.pt2"
expect 1 "aotirt: error: NOT_FOUND" -- "$CLI" run "$TMP/missing.pt2" -o "$TMP/o"
expect 1 "aotirt: error: DATA_LOSS" -- "$CLI" bench "$TMP/notzip.pt2"
expect 1 "aotirt: error:" -- "$CLI" inspect "$TMP"
# The output directory is checked before the package is even opened.
expect 1 "output path '$TMP/file' exists and is not a directory" -- "$CLI" run "$TMP/missing.pt2" -o "$TMP/file"
expect 1 "cannot create output directory '$TMP/file/sub'" -- "$CLI" run "$TMP/missing.pt2" -o "$TMP/file/sub"

# ---- real packages ----
pkg() { compgen -G "$ZOO/torch-*-cpu/$1-*/model.pt2" | head -n 1; }
MULTI=$(pkg multi_io)
if [[ -n "$MULTI" ]]; then
  D=$(dirname "$MULTI")
  I=$D/inputs/set0
  expect 0 "output2: bool [6, 8]" -- "$CLI" run "$MULTI" -i "$I/input0.npy" -i "$I/input1.npy" -i "$I/input2.npy" -o "$TMP/out/new"
  # Integer and bool outputs are exact, and our files are laid out as numpy's.
  for k in 1 2; do
    if ! cmp -s "$TMP/out/new/output$k.npy" "$D/expected/set0/output$k.npy"; then
      echo "FAIL: output$k.npy differs from numpy's expected file"
      failures=$((failures + 1))
    fi
  done
  expect 1 "the model takes 3 input(s) but 1 --input file(s) were given" -- "$CLI" run "$MULTI" -i "$I/input0.npy" -o "$TMP/o"
  expect 1 "the model expects float32, but $I/input1.npy holds int64" -- \
    "$CLI" run "$MULTI" -i "$I/input1.npy" -i "$I/input0.npy" -i "$I/input2.npy" -o "$TMP/o"
  # input0 of the bf16 package is a float32 [4, 32] file.
  BF16_INPUT=$(dirname "$(pkg bf16)")/inputs/set0/input0.npy
  if [[ -f "$BF16_INPUT" ]]; then
    expect 1 "input 0 ('x'): the model expects shape [6, 8], but $BF16_INPUT has shape [4, 32]" -- \
      "$CLI" run "$MULTI" -i "$BF16_INPUT" -i "$I/input1.npy" -i "$I/input2.npy" -o "$TMP/o"
  fi
  expect 1 "NOT_FOUND: $TMP/none.npy" -- "$CLI" run "$MULTI" -i "$TMP/none.npy" -i "$I/input1.npy" -i "$I/input2.npy" -o "$TMP/o"
  expect 1 "bad magic" -- "$CLI" run "$MULTI" -i "$TMP/notzip.pt2" -i "$I/input1.npy" -i "$I/input2.npy" -o "$TMP/o"
  expect 1 "INCOMPATIBLE" -- "$CLI" run "$MULTI" --device cuda -i "$I/input0.npy" -i "$I/input1.npy" -i "$I/input2.npy" -o "$TMP/o"
  expect 0 "imported shims are provided" -- "$CLI" inspect "$MULTI"
  expect 0 "inputs (3, from aotirt metadata):" -- "$CLI" inspect "$MULTI"
  expect 0 '"missing_shims": 0' -- "$CLI" inspect --json "$MULTI"
  expect 0 '"median_us"' -- "$CLI" bench "$MULTI" --iters 3 --warmup 1 --json
  expect 0 '"peak_rss_mb"' -- "$CLI" bench "$MULTI" --iters 3 --warmup 1 --json
  expect 0 '"shim_profile"' -- "$CLI" bench "$MULTI" --iters 3 --warmup 1 --json --profile-shims
  expect 0 "3 runs after 1 warm-up runs" -- "$CLI" bench "$MULTI" --iters 3 --warmup 1
  if [[ -n "$EMBED" ]]; then
    expect 0 "run 2:" -- "$EMBED" "$MULTI"
    expect 1 "error: NOT_FOUND" -- "$EMBED" "$TMP/missing.pt2"
  fi
else
  echo "skip: no multi_io package under $ZOO (run tests/models/make_packages.py)"
fi

BF16=$(pkg bf16)
if [[ -n "$BF16" ]]; then
  D=$(dirname "$BF16")
  expect 0 "output0: float32 [4, 16]" -- "$CLI" run "$BF16" -i "$D/inputs/set0/input0.npy" -o "$TMP/bf"
  expect 0 "(converted from bfloat16)" -- "$CLI" run "$BF16" -i "$D/inputs/set0/input0.npy" -o "$TMP/bf"
  if ! grep -aq "'descr': '<f4'" "$TMP/bf/output0.npy"; then
    echo "FAIL: the bfloat16 output was not written as float32"
    failures=$((failures + 1))
  fi
fi

DYN=$(pkg dynamic_batch)
if [[ -n "$DYN" ]]; then
  expect 1 "has a dynamic dimension [?, 16]" -- "$CLI" bench "$DYN" --iters 2
  expect 0 "median" -- "$CLI" bench "$DYN" --iters 2 --dynamic-dim 3
fi

PLAIN=$(pkg mlp_plain)
if [[ -n "$PLAIN" ]]; then
  # No aotirt metadata: the specs come from the wrapper source's input checks.
  expect 0 "from the package's wrapper source" -- "$CLI" inspect "$PLAIN"
  expect 0 "median" -- "$CLI" bench "$PLAIN" --iters 2
fi

if [[ $failures -ne 0 ]]; then
  echo "$failures check(s) failed"
  exit 1
fi
echo "all checks passed"
