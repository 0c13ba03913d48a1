#!/usr/bin/env python3
# Runs the packages make_cuda_models.py wrote through the aotirt command-line
# tool (so through libaotirt.so, as users run them) and compares each output
# with eager PyTorch's. Prints one PASS/FAIL line per model, the fallback ops
# each library imports, and a summary line "models: N passed, N failed".
#
# Usage: check_cuda_models.py AOTIRT_CLI MODELS_DIR
# AOTIRT_LIB_PATH, when set, becomes the tool's LD_LIBRARY_PATH (and only the
# tool's: this Python process keeps its own libraries).

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np


def tool_env():
    env = dict(os.environ)
    if os.environ.get("AOTIRT_LIB_PATH"):
        env["LD_LIBRARY_PATH"] = os.environ["AOTIRT_LIB_PATH"]
    return env


def check(cli, d):
    meta = json.loads((d / "meta.json").read_text())
    inputs = sorted(d.glob("input*.npy"), key=lambda p: int(p.stem[5:]))
    inspect = subprocess.run([cli, "inspect", str(d / "model.pt2"), "--json"], capture_output=True, text=True, env=tool_env())
    if inspect.returncode == 0:
        info = json.loads(inspect.stdout)
        shims = [s["name"] if isinstance(s, dict) else s for s in info.get("imported_shims", [])]
        ops = sorted(s for s in shims if "_cuda_" in s)
        print(f"  {d.name}: fallback ops {ops}")
    with tempfile.TemporaryDirectory() as out:
        cmd = [cli, "run", str(d / "model.pt2"), "--output-dir", out]
        for p in inputs:
            cmd += ["--input", str(p)]
        r = subprocess.run(cmd, capture_output=True, text=True, env=tool_env())
        if r.returncode != 0:
            return f"aotirt run failed ({r.returncode}): {r.stderr.strip()}"
        for i in range(meta["outputs"]):
            got = np.load(Path(out) / f"output{i}.npy").astype(np.float64)
            want = np.load(d / f"expected{i}.npy").astype(np.float64)
            if got.shape != want.shape:
                return f"output {i}: shape {got.shape}, expected {want.shape}"
            err = np.abs(got - want) / (meta["atol"] + meta["rtol"] * np.abs(want))
            worst = float(err.max()) if err.size else 0.0
            if not np.isfinite(worst) or worst > 1.0:
                return f"output {i}: max scaled error {worst:.3g} (max abs diff {np.abs(got - want).max():.3g})"
    return None


def main():
    cli, root = sys.argv[1], Path(sys.argv[2])
    passed = failed = 0
    for d in sorted(p for p in root.iterdir() if (p / "model.pt2").exists()):
        problem = check(cli, d)
        if problem is None:
            passed += 1
            print(f"PASS {d.name}")
        else:
            failed += 1
            print(f"FAIL {d.name}: {problem}")
    print(f"models: {passed} passed, {failed} failed")
    return 0 if failed == 0 and passed > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
