#!/usr/bin/env bash
# Builds the wheel (scripts/wheel.sh) and tests it as users get it:
#   1. installed with its dependencies into .cache/wheel-venv, a virtual
#      environment without torch: tests/wheel/test_runtime_api.py runs the zoo
#      through the Python API and the `aotirt` console script, threads, the
#      CMake package and bad input; tests/wheel/test_generator_api.py runs
#      aotirt.Generator on the LLM pair tests/models/test_generate.py
#      exported, against transformers' tokens saved beside it;
#   2. installed alone into a folder put ahead of the source tree for .venv's
#      python (torch): tests/wheel/test_dlpack_torch.py checks DLPack round
#      trips with torch without copies.
# AOTIRT_ZOO_MANIFEST names the CPU zoo's manifest (scripts/test.sh exports
# the zoo first). The last line is "wheel: N passed, N failed, N skipped".
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT="$(pwd)"
unset PYTHONPATH  # the source tree's python/aotirt must not shadow the wheel
export AOTIRT_CACHE_DIR="${AOTIRT_CACHE_DIR:-$ROOT/.cache}"
passed=0; failed=0; skipped=0

finish() {
  echo "wheel: $passed passed, $failed failed, $skipped skipped"
  [ "$failed" -eq 0 ]
  exit $?
}

dist="$AOTIRT_CACHE_DIR/wheel-dist"
if ! ./scripts/wheel.sh "$dist"; then
  echo "FAILED: the wheel did not build"; failed=1; finish
fi
wheel="$(ls "$dist"/aotirt-*.whl | head -1)"
size=$(stat -c %s "$wheel")
# The wheel is kept small: it carries no CUDA library of NVIDIA's.
if [ "$size" -gt $((30 * 1024 * 1024)) ]; then
  echo "FAILED: the wheel is $((size / 1024 / 1024)) MiB, over the 30 MiB budget"; failed=$((failed + 1))
fi

tally_pytest() {  # tally_pytest LOG
  local line p f k
  line=$(grep -E '^(=+ )?[0-9]+ (passed|failed|skipped)|no tests ran' "$1" | tail -1)
  p=$(echo "$line" | grep -Eo '[0-9]+ passed' | grep -Eo '[0-9]+')
  f=$(echo "$line" | grep -Eo '[0-9]+ (failed|errors?)' | awk '{s+=$1} END {print s+0}')
  k=$(echo "$line" | grep -Eo '[0-9]+ skipped' | grep -Eo '[0-9]+')
  [ -z "$line" ] && f=1
  passed=$((passed + ${p:-0})); failed=$((failed + ${f:-0})); skipped=$((skipped + ${k:-0}))
}

# 1. A virtual environment without torch, made once; the wheel is
# reinstalled into it on every run.
venv="$AOTIRT_CACHE_DIR/wheel-venv"
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv" || { echo "FAILED: python3 -m venv"; failed=$((failed + 1)); finish; }
fi
"$venv/bin/python" -m pip install -q --disable-pip-version-check pytest || { failed=$((failed + 1)); finish; }
"$venv/bin/python" -m pip install -q --disable-pip-version-check --force-reinstall "$wheel" ||
  { echo "FAILED: pip install of the wheel"; failed=$((failed + 1)); finish; }
log="$(mktemp)"
# From a folder outside the source tree, so that `import aotirt` finds the
# installed wheel, not python/aotirt.
(cd "$venv" && PATH="$venv/bin:$PATH" "$venv/bin/python" -m pytest -q -rs -p no:cacheprovider \
  "$ROOT/tests/wheel/test_runtime_api.py" "$ROOT/tests/wheel/test_generator_api.py") 2>&1 | tee "$log"
tally_pytest "$log"

# 2. DLPack with torch: the wheel's files ahead of everything else.
target="$AOTIRT_CACHE_DIR/wheel-target"
rm -rf "$target"
.venv/bin/python -m pip install -q --disable-pip-version-check --no-deps --target "$target" "$wheel" ||
  { echo "FAILED: pip install --target"; failed=$((failed + 1)); finish; }
(cd "$target" && PYTHONPATH="$target" "$ROOT/.venv/bin/python" -m pytest -q -rs -p no:cacheprovider \
  "$ROOT/tests/wheel/test_dlpack_torch.py") 2>&1 | tee "$log"
tally_pytest "$log"
rm -f "$log"
finish
