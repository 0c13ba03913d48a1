#!/usr/bin/env python3
"""The Python API's cost, side by side in one run, on the CPU MLP workload
(bench/workloads.py: 64->128->10, batch 8, float32):

* per call: `model(x)` through the installed wheel's Python API against the
  C++ API (`aotirt bench`, the same libaotirt.so from the same wheel), in
  interleaved rounds; the difference is what Python adds;
* cold start: a fresh `python -c "import aotirt; aotirt.load(P)(x)"` against
  `python -c "import torch; torch._inductor.aoti_load_package(P)(x)"` on the
  same package, interleaved, wall time from spawn to exit.

    python bench/python_api.py [--venv .cache/wheel-venv] [--out bench/results]

--venv is a virtual environment with the wheel installed and no torch
(scripts/wheel-check.sh makes .cache/wheel-venv); this script itself runs
with torch (.venv) to export the package. Writes <date>-<label>-python-api.{md,json}.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "python"))
sys.path.insert(0, str(REPO / "bench"))

import aotirt  # noqa: E402  (the exporter, from the source tree)
import workloads  # noqa: E402

PER_CALL = r"""
import json, sys, time
import numpy as np
import aotirt
m = aotirt.load(sys.argv[1])
x = np.load(sys.argv[2])
for _ in range(500):
    m(x)
times = []
for _ in range(int(sys.argv[3])):
    t0 = time.perf_counter_ns()
    m(x)
    times.append(time.perf_counter_ns() - t0)
times.sort()
print(json.dumps({"median_us": times[len(times) // 2] / 1e3, "p90_us": times[len(times) * 9 // 10] / 1e3}))
"""

AOTIRT_COLD = "import sys, numpy as np, aotirt; aotirt.load(sys.argv[1])(np.load(sys.argv[2]))"
TORCH_COLD = ("import sys, numpy as np, torch; "
              "torch._inductor.aoti_load_package(sys.argv[1])(torch.from_numpy(np.load(sys.argv[2])))")


def export_mlp(work: Path) -> tuple:
    pkg, x_path = work / "mlp.pt2", work / "x.npy"
    if not pkg.is_file():
        w = workloads.WORKLOADS["mlp"]
        model, inputs = w.build(False)
        aotirt.export(model.eval(), tuple(inputs), str(pkg), device="cpu")
        np.save(x_path, inputs[0].numpy())
    return pkg, x_path


def cpp_per_call(cli: Path, pkg: Path, x: Path, iters: int, env) -> dict:
    out = subprocess.run([str(cli), "bench", str(pkg), "-i", str(x), "--iters", str(iters), "--warmup", "500",
                          "--json"], capture_output=True, text=True, env=env, check=True).stdout
    j = json.loads(out)
    return {"median_us": j["median_us"], "p90_us": j["p90_us"]}


def py_per_call(python: Path, pkg: Path, x: Path, iters: int, env) -> dict:
    out = subprocess.run([str(python), "-c", PER_CALL, str(pkg), str(x), str(iters)], capture_output=True,
                         text=True, env=env, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def cold(python: Path, code: str, pkg: Path, x: Path, env) -> float:
    t0 = time.perf_counter()
    subprocess.run([str(python), "-c", code, str(pkg), str(x)], check=True, env=env, capture_output=True)
    return (time.perf_counter() - t0) * 1e3


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--venv", type=Path, default=REPO / ".cache" / "wheel-venv")
    p.add_argument("--out", type=Path, default=REPO / "bench" / "results")
    p.add_argument("--label", default="cpu")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--iters", type=int, default=20000)
    p.add_argument("--cold-runs", type=int, default=7)
    args = p.parse_args()

    wheel_python = args.venv / "bin" / "python"
    if not wheel_python.is_file():
        print(f"python_api: no wheel environment at {args.venv} (scripts/wheel-check.sh makes it)",
              file=sys.stderr)
        return 2
    cli = args.venv / "bin" / "aotirt"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["OMP_NUM_THREADS"] = env.get("OMP_NUM_THREADS", "1")
    work = REPO / "bench" / ".work" / "python-api"
    work.mkdir(parents=True, exist_ok=True)
    pkg, x = export_mlp(work)

    cpp, py = [], []
    for _ in range(args.rounds):  # interleaved, so drift hits both sides alike
        cpp.append(cpp_per_call(cli, pkg, x, args.iters, env))
        py.append(py_per_call(wheel_python, pkg, x, args.iters, env))
    cpp_us = statistics.median(r["median_us"] for r in cpp)
    py_us = statistics.median(r["median_us"] for r in py)

    torch_env = dict(env)
    cold_aotirt, cold_torch = [], []
    with tempfile.TemporaryDirectory() as tmp:
        torch_env["TORCHINDUCTOR_CACHE_DIR"] = tmp
        # The package is built without linking libtorch (aotirt's lean
        # options): torch resolves its aoti_torch_* imports once libtorch's
        # symbols are global, which torch's own switch does.
        torch_env["TORCH_USE_RTLD_GLOBAL"] = "1"
        cold(Path(sys.executable), TORCH_COLD, pkg, x, torch_env)  # page cache warm for both
        cold(wheel_python, AOTIRT_COLD, pkg, x, env)
        for _ in range(args.cold_runs):
            cold_aotirt.append(cold(wheel_python, AOTIRT_COLD, pkg, x, env))
            cold_torch.append(cold(Path(sys.executable), TORCH_COLD, pkg, x, torch_env))
    a_ms, t_ms = statistics.median(cold_aotirt), statistics.median(cold_torch)

    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                            cwd=REPO).stdout.strip()
    result = {
        "date": datetime.date.today().isoformat(), "commit": commit, "machine": platform.processor() or
        platform.machine(), "cpus": os.cpu_count(), "torch": torch.__version__, "workload": "mlp",
        "omp_num_threads": env["OMP_NUM_THREADS"],
        "per_call": {"cpp_median_us": cpp_us, "python_median_us": py_us, "added_us": py_us - cpp_us,
                     "target_added_us": 5.0, "rounds": {"cpp": cpp, "python": py}, "iters": args.iters},
        "cold_start": {"aotirt_python_ms": a_ms, "torch_aoti_load_package_ms": t_ms, "ratio": a_ms / t_ms,
                       "target_ratio": 0.3, "aotirt_runs_ms": cold_aotirt, "torch_runs_ms": cold_torch},
    }
    stem = f"{result['date']}-{args.label}-python-api"
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / f"{stem}.json").write_text(json.dumps(result, indent=1))
    md = f"""# The Python API's cost: per call and cold start

`bench/python_api.py` on {os.cpu_count()} CPU cores ({result['machine']}), tree of commit {commit},
torch {torch.__version__}, `OMP_NUM_THREADS={env['OMP_NUM_THREADS']}`. Workload: the MLP (64->128->10,
batch 8, float32), one package for every system.

| measure | aotirt, Python API | C++ API / torch | difference or ratio | target |
|---|---:|---:|---:|---:|
| per call, median of {args.rounds} interleaved rounds of {args.iters} calls (us) | {py_us:.2f} | {cpp_us:.2f} (C++ API) | +{py_us - cpp_us:.2f} us | at most +5 us |
| cold start, spawn to exit, median of {args.cold_runs} (ms) | {a_ms:.0f} | {t_ms:.0f} (`aoti_load_package`) | {a_ms / t_ms:.2f}x | at most 0.3x |
"""
    (args.out / f"{stem}.md").write_text(md)
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
