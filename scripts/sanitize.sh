#!/usr/bin/env bash
# Sanitizer builds and fuzzing (docs/testing.md). CPU only (no CUDA). Stages:
#
#   asan  build-asan (GCC, -DAOTIRT_SANITIZE=address,undefined): every ctest
#         test (unit, shim, zoo API, CLI, concurrency, the fuzz targets'
#         regression corpora), then the CLI model tests (tests/models
#         test_zoo.py's CLI runs and test_bad_input.py) against its CLI.
#   tsan  build-tsan (GCC, -DAOTIRT_SANITIZE=thread): the concurrency tests
#         (tests/sanitize) and the unit tests that start threads.
#   fuzz  build-fuzz (clang, -DAOTIRT_BUILD_FUZZERS=ON): each libFuzzer target
#         of tests/fuzz for --fuzz-seconds (default 60), --fuzz-jobs at a time.
#
#   scripts/sanitize.sh [--only asan,tsan,fuzz] [--fuzz-seconds N] [--fuzz-jobs N]
#                       [--fuzz-targets zip_package,metadata,npy,model_load,wrapper_source]
#
# A long fuzzing session: scripts/sanitize.sh --only fuzz --fuzz-seconds 3600.
# Each target's corpus grows in build-fuzz/fuzz-corpus/<target> across runs;
# a crash leaves its input in build-fuzz/fuzz-artifacts/<target>/ (copy it to
# tests/fuzz/regressions/<target>/ to replay it in every ASan run).
#
# The zoo packages come from the cache scripts/test.sh fills
# (tests/models/make_packages.py); this script makes them when missing.
# The last line is "sanitize: N passed, N failed, N skipped" (scripts/test.sh
# adds it to its total); the exit status is non-zero on any failure.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT="$(pwd)"

STAGES="asan,tsan,fuzz"
FUZZ_SECONDS=60
# Every target at once: each still fuzzes for FUZZ_SECONDS of wall time,
# and CI pays one minute instead of three.
FUZZ_JOBS=5
FUZZ_TARGETS="zip_package,metadata,npy,model_load,wrapper_source"
while [ $# -gt 0 ]; do
  case "$1" in
    --only) STAGES="$2"; shift 2 ;;
    --only=*) STAGES="${1#*=}"; shift ;;
    --fuzz-seconds) FUZZ_SECONDS="$2"; shift 2 ;;
    --fuzz-seconds=*) FUZZ_SECONDS="${1#*=}"; shift ;;
    --fuzz-jobs) FUZZ_JOBS="$2"; shift 2 ;;
    --fuzz-jobs=*) FUZZ_JOBS="${1#*=}"; shift ;;
    --fuzz-targets) FUZZ_TARGETS="$2"; shift 2 ;;
    --fuzz-targets=*) FUZZ_TARGETS="${1#*=}"; shift ;;
    -h|--help) sed -n '2,/^[^#]/p' "$0" | grep '^#' | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "sanitize.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done

ASAN_DIR="${AOTIRT_ASAN_BUILD_DIR:-build-asan}"
TSAN_DIR="${AOTIRT_TSAN_BUILD_DIR:-build-tsan}"
FUZZ_DIR="${AOTIRT_FUZZ_BUILD_DIR:-build-fuzz}"
CLANG_CC="${AOTIRT_CLANG:-clang-14}"
CLANG_CXX="${AOTIRT_CLANGXX:-clang++-14}"
NICE="nice -n ${AOTIRT_NICE:-10}"
JOBS="${AOTIRT_SANITIZE_JOBS:-$(nproc)}"
SUPP="$ROOT/tests/sanitize"
PY="$ROOT/.venv/bin/python"
[ -x "$PY" ] || PY=python3
export AOTIRT_CACHE_DIR="${AOTIRT_CACHE_DIR:-$ROOT/.cache}"

# Sanitizer settings for everything started below. Suppressions cover
# third-party code only (each line of the files says why).
# allocator_may_return_null: tests check that a huge request fails cleanly
# (malloc returns null, as without ASan) instead of aborting the process.
export ASAN_OPTIONS="detect_leaks=1:detect_stack_use_after_return=1:check_initialization_order=1:strict_init_order=1:allocator_may_return_null=1${ASAN_OPTIONS_EXTRA:+:$ASAN_OPTIONS_EXTRA}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:suppressions=$SUPP/ubsan.supp"
export LSAN_OPTIONS="suppressions=$SUPP/lsan.supp:print_suppressions=0"
export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:allocator_may_return_null=1:suppressions=$SUPP/tsan.supp:print_suppressions=0"

# The sanitizer runtimes intercept dlopen, and glibc then searches the
# RUNPATH of the runtime (none) instead of the caller's: the libraries aotirt
# opens at run time (OpenBLAS's OpenMP build, oneDNN) are found through
# LD_LIBRARY_PATH instead, pointing where the RUNPATH points.
SAN_LIBRARY_PATH="/usr/lib/$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)/openblas-openmp:$ROOT/.venv/lib"

# Tests that cannot work under ASan, left out of its ctest run (-E). Keep the
# reason beside each:
#   ModelHardeningTest.OutOfMemoryIsAStatusNotAnException: caps the address
#     space (RLIMIT_AS) and expects std::bad_alloc; ASan's shadow memory needs
#     terabytes of address space, and its operator new aborts the process on
#     an allocation failure instead of throwing.
ASAN_CTEST_EXCLUDE="${AOTIRT_ASAN_CTEST_EXCLUDE:-^ModelHardeningTest\.OutOfMemoryIsAStatusNotAnException\$}"
# The same for the CLI model tests (pytest --deselect):
#   test_bad_input.py::test_out_of_memory_is_a_clean_error: runs the CLI under
#     `ulimit -v` (RLIMIT_AS), which leaves ASan no room for its shadow memory.
ASAN_PYTEST_DESELECT=(tests/models/test_bad_input.py::test_out_of_memory_is_a_clean_error)

passed=0; failed=0; skipped=0
tally() { passed=$((passed + ${1:-0})); failed=$((failed + ${2:-0})); skipped=$((skipped + ${3:-0})); }
step() { printf '\n---- sanitize: %s ----\n' "$*"; }
has_stage() { [[ ",$STAGES," == *",$1,"* ]]; }
timings=()
elapsed() { local s=$(( $(date +%s) - $1 )); printf '%dm%02ds' $((s / 60)) $((s % 60)); }

# configure DIR ARGS...: a CPU-only Ninja build, -O1 with assertions on
# (cmake/sanitize.cmake adds line tables and the sanitizer flags).
configure() {
  local dir=$1; shift
  mkdir -p "$dir"
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1" -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1" \
    -DAOTIRT_BUILD_CUDA=OFF -DAOTIRT_BUILD_TESTS=ON "$@" >"$dir/sanitize-configure.log" 2>&1 ||
    { cat "$dir/sanitize-configure.log"; return 1; }
}

# build DIR [TARGETS...]
build() {
  local dir=$1; shift
  local t0; t0=$(date +%s)
  $NICE ninja -C "$dir" -j "$JOBS" "$@" >"$dir/sanitize-build.log" 2>&1 ||
    { tail -n 60 "$dir/sanitize-build.log"; return 1; }
  echo "built in $(elapsed "$t0")"
}

# The zoo manifest the C++ zoo tests read; made (or found in the cache) once.
zoo_manifest() {
  if [ -z "${AOTIRT_ZOO_MANIFEST:-}" ]; then
    AOTIRT_ZOO_MANIFEST="$(ls -t "$AOTIRT_CACHE_DIR"/zoo/torch-*-cpu/manifest.json 2>/dev/null | head -1)"
    if [ -z "$AOTIRT_ZOO_MANIFEST" ] && [ -x "$ROOT/.venv/bin/python" ]; then
      echo "no zoo packages cached: exporting them (tests/models/make_packages.py)"
      PYTHONPATH="$ROOT/python" "$ROOT/.venv/bin/python" tests/models/make_packages.py --device cpu 2>&1 | tail -n 20
      AOTIRT_ZOO_MANIFEST="$(ls -t "$AOTIRT_CACHE_DIR"/zoo/torch-*-cpu/manifest.json 2>/dev/null | head -1)"
    fi
  fi
  export AOTIRT_ZOO_MANIFEST
  echo "zoo manifest: ${AOTIRT_ZOO_MANIFEST:-none (zoo tests will fail)}"
}

# run_ctest DIR LOG ARGS...: runs ctest and tallies its summary.
run_ctest() {
  local dir=$1 log=$2; shift 2
  (cd "$dir" && ctest --output-on-failure "$@") >"$log" 2>&1
  local total failed_n skipped_n
  total=$(grep -Eo 'tests passed, [0-9]+ tests failed out of [0-9]+' "$log" | grep -Eo '[0-9]+$' | tail -1)
  failed_n=$(grep -Eo '[0-9]+ tests failed out of' "$log" | grep -Eo '^[0-9]+' | tail -1)
  skipped_n=$(grep -c '\*\*\*Skipped' "$log")
  grep -E 'tests passed|Total Test time' "$log"
  if [ -z "$total" ]; then
    echo "ctest did not report a result (log: $log)"; tail -n 40 "$log"; tally 0 1 0
  else
    tally $((total - failed_n - skipped_n)) "$failed_n" "$skipped_n"
    if [ "$failed_n" -gt 0 ]; then
      sed -n '/The following tests FAILED/,$p' "$log"
      # The sanitizer reports of the failed tests.
      grep -n -E 'ERROR: (Address|Leak|Thread|UndefinedBehavior)Sanitizer|runtime error:|SUMMARY: ' "$log" | head -n 40
      echo "full log: $log"
    fi
  fi
}

# run_gtest NAME LOG BINARY ARGS...: one gtest binary, tallied per test.
run_gtest() {
  local name=$1 log=$2; shift 2
  "$@" >"$log" 2>&1
  local rc=$? p f k
  # GCC 12's TSan runtime guesses the size of a dynamic TLS block from a
  # glibc 2.19 header whenever the block lies 16 bytes into a page; on a newer
  # glibc that size is garbage and the runtime dies mapping its shadow
  # ("ThreadSanitizer failed to allocate"). That is the tool failing, not a
  # finding: say so and run once more.
  if [ $rc -ne 0 ] && grep -q 'ThreadSanitizer failed to allocate' "$log" &&
     ! grep -q 'WARNING: ThreadSanitizer' "$log"; then
    echo "$name: the TSan runtime failed to map shadow memory (not a finding); running again"
    "$@" >"$log" 2>&1
    rc=$?
  fi
  p=$(grep -Eo '^\[  PASSED  \] [0-9]+' "$log" | grep -Eo '[0-9]+$' | tail -1)
  f=$(grep -Eo '^\[  FAILED  \] [0-9]+ test' "$log" | grep -Eo '[0-9]+' | tail -1)
  k=$(grep -Eo '^\[  SKIPPED \] [0-9]+' "$log" | grep -Eo '[0-9]+$' | tail -1)
  echo "$name: ${p:-0} passed, ${f:-0} failed, ${k:-0} skipped (exit $rc)"
  if [ $rc -ne 0 ] && [ -z "$f" ]; then
    # A sanitizer stopped the process: count that as one failure.
    f=1
  fi
  tally "${p:-0}" "${f:-0}" "${k:-0}"
  if [ $rc -ne 0 ]; then
    grep -n -E 'WARNING: ThreadSanitizer|ERROR: (Address|Leak|Thread|UndefinedBehavior)Sanitizer|runtime error:|SUMMARY: |^\[  FAILED  \]' "$log" | head -n 40
    echo "full log: $log"
  fi
}

# One function a stage, run by the loop at the end: each returns non-zero
# only when its build failed; the tests it runs tally themselves.

# ---------------------------------------------------------------- ASan+UBSan
asan_stage() {
  step "ASan+UBSan build ($ASAN_DIR)"
  zoo_manifest
  configure "$ASAN_DIR" -DAOTIRT_SANITIZE=address,undefined && build "$ASAN_DIR" || return 1
  LOGS="$ROOT/$ASAN_DIR/sanitize-logs"; mkdir -p "$LOGS"
  # Seeds made from the zoo, replayed by the fuzz_regressions_* tests too.
  python3 tests/fuzz/make_seeds.py --out "$ASAN_DIR/fuzz-seeds" \
    --fake-model "$ASAN_DIR/lib/libaotirt_fake_model.so" >/dev/null ||
    echo "make_seeds.py failed: the fuzz replays use the committed seeds only"
  step "ASan+UBSan: ctest (unit, shim, zoo API, CLI, concurrency, fuzz regressions)"
  # The zoo API tests are listed from the manifest when ctest starts; drop a
  # list made before the manifest existed (it would run no zoo test).
  rm -f "$ASAN_DIR"/tests/aotirt_zoo_api_test*_tests.cmake
  LD_LIBRARY_PATH="$SAN_LIBRARY_PATH${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
    run_ctest "$ASAN_DIR" "$LOGS/ctest.log" -j "$JOBS" --timeout 900 -E "$ASAN_CTEST_EXCLUDE"
  step "ASan+UBSan: CLI model tests (tests/models: test_zoo.py CLI runs, test_bad_input.py)"
  log="$LOGS/pytest.log"
  LD_LIBRARY_PATH="$SAN_LIBRARY_PATH${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
  AOTIRT_CLI="$ROOT/$ASAN_DIR/bin/aotirt" AOTIRT_BUILD_DIR="$ROOT/$ASAN_DIR" PYTHONPATH="$ROOT/python" \
    "$PY" -m pytest -q -rs -p no:cacheprovider tests/models/test_zoo.py tests/models/test_bad_input.py \
    -k "cli_matches_eager or test_bad_input" "${ASAN_PYTEST_DESELECT[@]/#/--deselect=}" >"$log" 2>&1
  line=$(grep -E '^(=+ )?[0-9]+ (passed|failed)|^(=+ )?[0-9]+ (skipped|error)|no tests ran' "$log" | tail -1)
  echo "${line:-pytest did not report a result}"
  if [ -z "$line" ]; then
    tail -n 40 "$log"; tally 0 1 0
  else
    p=$(echo "$line" | grep -Eo '[0-9]+ passed' | grep -Eo '[0-9]+')
    f=$(echo "$line" | grep -Eo '[0-9]+ (failed|errors?)' | awk '{s+=$1} END {print s+0}')
    k=$(echo "$line" | grep -Eo '[0-9]+ skipped' | grep -Eo '[0-9]+')
    tally "${p:-0}" "${f:-0}" "${k:-0}"
    [ "${f:-0}" -gt 0 ] && { grep -E '^(FAILED|ERROR) |Sanitizer|runtime error:' "$log" | head -n 40; echo "full log: $log"; }
  fi
  return 0
}

# ---------------------------------------------------------------------- TSan
tsan_stage() {
  step "TSan build ($TSAN_DIR)"
  zoo_manifest
  configure "$TSAN_DIR" -DAOTIRT_SANITIZE=thread -DAOTIRT_BUILD_EXAMPLES=OFF &&
    build "$TSAN_DIR" aotirt_model_concurrency_test aotirt_tsan_unit_tests || return 1
  LOGS="$ROOT/$TSAN_DIR/sanitize-logs"; mkdir -p "$LOGS"
  step "TSan: concurrency tests"
  # libgomp is not built with TSan: it cannot see the barriers of OpenMP
  # parallel regions, and would report every one of them. One OpenMP thread
  # per team keeps those regions serial; aotirt's own threads (several
  # threads on one model, loads, the allocator, prewarm) are what is checked.
  export OMP_NUM_THREADS=1
  export LD_LIBRARY_PATH="$SAN_LIBRARY_PATH${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  run_gtest "concurrency (tests/sanitize)" "$LOGS/concurrency.log" "$TSAN_DIR/bin/aotirt_model_concurrency_test"
  # The unit test files that start threads of their own (tests/sanitize/CMakeLists.txt).
  run_gtest "unit tests with threads" "$LOGS/unit.log" "$TSAN_DIR/bin/aotirt_tsan_unit_tests"
  unset OMP_NUM_THREADS
  return 0
}

# ---------------------------------------------------------------------- fuzz
fuzz_stage() {
  step "libFuzzer build ($FUZZ_DIR, $CLANG_CXX)"
  IFS=',' read -r -a targets <<<"$FUZZ_TARGETS"
  exes=(); for t in "${targets[@]}"; do exes+=("aotirt_fuzz_$t"); done
  if ! command -v "$CLANG_CXX" >/dev/null; then
    echo "$CLANG_CXX not found (scripts/setup.sh installs clang-14): fuzzers not run"; tally 0 1 0
    return 0
  fi
  configure "$FUZZ_DIR" -DCMAKE_C_COMPILER="$CLANG_CC" \
    -DCMAKE_CXX_COMPILER="$CLANG_CXX" -DAOTIRT_BUILD_FUZZERS=ON -DAOTIRT_BUILD_EXAMPLES=OFF &&
    build "$FUZZ_DIR" "${exes[@]}" aotirt_fake_model || return 1
  zoo_manifest >/dev/null
  python3 tests/fuzz/make_seeds.py --out "$FUZZ_DIR/fuzz-seeds" \
    --fake-model "$FUZZ_DIR/lib/libaotirt_fake_model.so" >/dev/null ||
    echo "make_seeds.py failed: fuzzing from the committed seeds only"
  step "fuzzing: ${#targets[@]} target(s), ${FUZZ_SECONDS}s each, $FUZZ_JOBS at a time"
  LOGS="$ROOT/$FUZZ_DIR/fuzz-logs"; mkdir -p "$LOGS"
  fuzz_one() {  # fuzz_one TARGET: exits with the fuzzer's status
    local t=$1 exe="$FUZZ_DIR/bin/aotirt_fuzz_$1" corpus art dict=()
    corpus="$FUZZ_DIR/fuzz-corpus/$t"; art="$FUZZ_DIR/fuzz-artifacts/$t/"
    mkdir -p "$corpus" "$art"
    [ -f "tests/fuzz/dicts/$t.dict" ] && dict=(-dict="tests/fuzz/dicts/$t.dict")
    # New inputs go to the first directory; the others only seed it.
    local dirs=("$corpus") d
    for d in "tests/fuzz/seeds/$t" "tests/fuzz/regressions/$t" "$FUZZ_DIR/fuzz-seeds/$t"; do
      [ -d "$d" ] && dirs+=("$d")
    done
    $NICE "$exe" -max_total_time="$FUZZ_SECONDS" -timeout=30 -rss_limit_mb=2048 -print_final_stats=1 \
      -artifact_prefix="$art" "${dict[@]}" "${dirs[@]}" >"$LOGS/$t.log" 2>&1
  }
  pids=(); names=()
  for t in "${targets[@]}"; do
    fuzz_one "$t" & pids+=($!); names+=("$t")
    while [ "$(jobs -rp | wc -l)" -ge "$FUZZ_JOBS" ]; do sleep 1; done
  done
  for i in "${!pids[@]}"; do
    t=${names[$i]}
    if wait "${pids[$i]}"; then
      execs=$(grep -Eo 'stat::number_of_executed_units: [0-9]+' "$LOGS/$t.log" | grep -Eo '[0-9]+$')
      cov=$(grep -Eo 'cov: [0-9]+' "$LOGS/$t.log" | tail -1 | grep -Eo '[0-9]+')
      echo "fuzz $t: ok (${execs:-?} runs, coverage ${cov:-?} edges, corpus $(ls "$FUZZ_DIR/fuzz-corpus/$t" | wc -l) inputs)"
      tally 1 0 0
    else
      echo "fuzz $t: FAILED (log: $LOGS/$t.log)"
      grep -E -A 24 'ERROR: (libFuzzer|AddressSanitizer|LeakSanitizer|UndefinedBehaviorSanitizer)|runtime error:|fuzzer: ' "$LOGS/$t.log" | head -n 40
      grep -E 'Test unit written to' "$LOGS/$t.log"
      echo "replay: $FUZZ_DIR/bin/aotirt_fuzz_$t FILE; keep the input in tests/fuzz/regressions/$t/"
      tally 0 1 0
    fi
  done
  return 0
}

# The stages asked for, in order, each timed; a stage whose build failed
# counts as one failure (its tests could not run).
for stage in asan tsan fuzz; do
  has_stage "$stage" || continue
  t0=$(date +%s)
  "${stage}_stage" || { echo "$stage: build failed"; tally 0 1 0; }
  timings+=("$stage $(elapsed "$t0")")
done

echo
echo "sanitize: time ${timings[*]:-none}"
echo "sanitize: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
