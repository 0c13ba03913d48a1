#!/usr/bin/env bash
# Installs into .venv what the CPU benchmark (bench/run.py --device cpu) needs
# beyond scripts/setup.sh: ONNX Runtime with the ONNX exporter's packages, and
# the model and chart libraries of the full workload set. Kept apart from
# scripts/setup.sh so that the project's own tests never pull these in.
# Safe to run again: it installs nothing when every package is already there
# at the pinned version. torch stays at the version scripts/setup.sh pinned.
#
#   ./scripts/setup.sh && ./bench/setup-cpu.sh
set -euo pipefail
cd "$(dirname "$0")/.."

TORCH_VERSION="2.11.0"
# name==version pairs checked (and installed) as given; torchvision must be
# the release built against TORCH_VERSION.
PINNED=("onnxruntime==1.32.0" "onnx==1.23.2" "onnxscript==0.7.2" "torchvision==0.26.0")
# Checked by import only; any release that pip picks for this torch.
UNPINNED=(transformers matplotlib)

log() { printf '[bench setup] %s\n' "$*"; }

if [ ! -x .venv/bin/python ]; then
  echo "bench/setup-cpu.sh: no .venv; run ./scripts/setup.sh first" >&2
  exit 1
fi

missing=()
for spec in "${PINNED[@]}"; do
  name="${spec%%==*}"
  want="${spec#*==}"
  have="$(.venv/bin/python -c "import importlib.metadata as m; print(m.version('$name'))" 2>/dev/null || true)"
  [ "${have%%+*}" = "$want" ] || missing+=("$spec")
done
for name in "${UNPINNED[@]}"; do
  .venv/bin/python -c "import $name" 2>/dev/null || missing+=("$name")
done

if [ ${#missing[@]} -eq 0 ]; then
  log "present in .venv: ${PINNED[*]} ${UNPINNED[*]}"
  exit 0
fi

# The constraint keeps pip from replacing torch while resolving the others.
constraints="$(mktemp)"
trap 'rm -f "$constraints"' EXIT
echo "torch==$TORCH_VERSION" >"$constraints"
log "installing into .venv: ${missing[*]}"
.venv/bin/python -m pip install -q --disable-pip-version-check -c "$constraints" "${missing[@]}"

have="$(.venv/bin/python -c 'import torch; print(torch.__version__.split("+")[0])')"
if [ "$have" != "$TORCH_VERSION" ]; then
  echo "bench/setup-cpu.sh: torch is $have after the install, expected $TORCH_VERSION" >&2
  exit 1
fi
log "done"
