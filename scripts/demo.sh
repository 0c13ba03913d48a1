#!/usr/bin/env bash
# Builds aotirt, exports a small built-in CNN with PyTorch, runs it through
# the aotirt CLI (no libtorch in that process), and prints the largest
# difference from eager PyTorch and the time per run.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$(pwd)"
DEVICE="${1:-cpu}"

./scripts/setup.sh
AOTIRT_NINJA_FLAGS=aotirt_cli ./scripts/build.sh >/dev/null
CLI="$ROOT/build/bin/aotirt"

WORK="$(mktemp -d "${TMPDIR:-/tmp}/aotirt-demo-XXXXXX")"
trap 'rm -rf "$WORK"' EXIT

echo "== exporting the demo model with torch (AOTInductor, $DEVICE)"
.venv/bin/python examples/demo/demo_model.py "$WORK" --device "$DEVICE" 2>&1 | grep -v -i warn || true

echo "== aotirt inspect"
"$CLI" inspect "$WORK/small_cnn.pt2"

echo "== aotirt run"
"$CLI" run "$WORK/small_cnn.pt2" --input "$WORK/input.npy" --output-dir "$WORK/out" --device "$DEVICE"

.venv/bin/python - "$WORK" <<'PY'
import sys, numpy as np
work = sys.argv[1]
got = np.load(f"{work}/out/output0.npy"); want = np.load(f"{work}/expected.npy")
diff = float(np.abs(got - want).max())
print(f"largest difference from eager PyTorch: {diff:.3g} over {want.size} outputs")
if not np.allclose(got, want, rtol=1e-4, atol=1e-5):
    sys.exit("MISMATCH: aotirt's output differs from eager PyTorch")
PY

echo "== aotirt bench"
"$CLI" bench "$WORK/small_cnn.pt2" --input "$WORK/input.npy" --device "$DEVICE" --warmup 10 --iters 100
echo "eager PyTorch, same model and input: $(cat "$WORK/eager_us.txt") us per run"
