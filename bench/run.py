#!/usr/bin/env python3
"""Benchmark harness: aotirt against libtorch's AOTI runner, eager PyTorch and
torch.compile (and, on a CPU, ONNX Runtime), side by side, on one device.

  python bench/run.py all     --device cuda   # export what is missing, measure, report
  python bench/run.py export  --device cuda   # packages, inputs, references -> bench/.work
  python bench/run.py measure --device cuda   # rows -> bench/.work, then report
  python bench/run.py report  --device cuda   # results from the rows measured so far
  python bench/run.py all --device cpu        # the CPU benchmark, at 1 and 2 threads
  python bench/run.py all --device cpu --quick  # small CPU run that proves the pipeline

On a CPU every system runs at each thread count of --threads (default 1,2;
quick: 1), from packages compiled for that thread count, plus the packages
compiled with freezing=True (aotirt-frozen, libtorch-aoti-frozen) and
ONNX Runtime on the model exported with torch.onnx.export (onnxruntime; its
packages come from ./bench/setup-cpu.sh).

Every phase skips what is already done (packages, measured rows) and stops
starting new work once --budget-s seconds have passed, so a run that does not
fit in one command finishes when the same command is given again; the last
line printed is `bench: COMPLETE ...` or `bench: INCOMPLETE (...)`. Before the
first timed row, the torch.compile systems' compilations run in parallel
worker processes (the prewarm) to fill the inductor cache the timed rows then
use. Results go to bench/results/<date>-<label>.{md,json,png} (quick runs:
bench/.work/results). docs/benchmarks.md describes the systems, metrics and
files.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import tempfile
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

import procmon  # noqa: E402
import report  # noqa: E402
from measure_util import device_label  # noqa: E402

ALL_WORKLOADS = list(report.WORKLOAD_ORDER)
# The CPU benchmark's workloads, then the others a CPU run may select.
CPU_WORKLOADS = list(report.CPU_WORKLOAD_ORDER)
CPU_ALLOWED = CPU_WORKLOADS + [w for w in ALL_WORKLOADS if w not in CPU_WORKLOADS]
QUICK_WORKLOADS = ["mlp", "gpt2_decode"]
CPP_SYSTEMS = ("aotirt", "aotirt-cudagraph", "libtorch-aoti")
PY_SYSTEMS = ("eager", "torch.compile", "torch.compile-reduce-overhead")
FROZEN_SYSTEMS = ("aotirt-frozen", "libtorch-aoti-frozen")
# Thread counts of a CPU run, unless --threads says otherwise.
CPU_THREADS, CPU_QUICK_THREADS = [1, 2], [1]
# Per-row time guesses, used only to decide whether to start a row before the
# budget runs out.
ROW_GUESS_S = {"aotirt": 20, "aotirt-cudagraph": 20, "libtorch-aoti": 25, "eager": 30,
               "torch.compile": 120, "torch.compile-reduce-overhead": 120,
               "onnxruntime": 30, "aotirt-frozen": 20, "libtorch-aoti-frozen": 25}
# A torch.compile row whose compilation was pre-warmed: Dynamo traces again,
# the rest comes from the inductor cache.
WARM_COMPILE_GUESS_S = 40
EXPORT_GUESS_S = 90
# The prewarm: the torch.compile systems' compilations, run in parallel
# worker processes before any row is timed.
PREWARM_SYSTEMS = ("torch.compile", "torch.compile-reduce-overhead")
PREWARM_TIMEOUT_S = 360  # one compilation (one process)
PREWARM_MIN_S = 60  # budget left below which no compilation is started
# Default timed and warm-up runs per workload (from the workload table),
# chosen so each (workload, system) times for a few seconds at most.
QUICK_ITERS, QUICK_WARMUP = 20, 3

_print_lock = threading.Lock()


def row_key(workload: str, system: str, threads: int | None = None) -> str:
    """A row's name in the results: workload/system, plus /tT on a CPU run
    (one row per thread count)."""
    return f"{workload}/{system}" + (f"/t{threads}" if threads else "")


def package_key(threads: int, frozen: bool = False) -> str:
    """The manifest's key of a CPU package: t2, frozen-t2."""
    return ("frozen-" if frozen else "") + f"t{threads}"


# aotirt's run-time switches that change how it computes (docs/cuda.md's
# options table); the benchmark measures its defaults.
TUNING_VARS = ("AOTIRT_CUDA_ALLOW_TF32", "AOTIRT_CUDA_CONV", "AOTIRT_CUDA_DISABLE", "AOTIRT_CUDA_GEMM",
               "AOTIRT_CUDA_OP_REPLAY")


def dropped_tuning_vars(env: dict) -> list:
    """The tuning switches set in |env|, which every measured row runs without."""
    return sorted(v for v in TUNING_VARS if v in env)


def log(msg: str) -> None:
    with _print_lock:
        print(f"[bench {time.strftime('%H:%M:%S')}] {msg}", flush=True)


class Budget:
    def __init__(self, seconds: float):
        self.start = time.monotonic()
        self.seconds = seconds

    def left(self) -> float:
        return self.seconds - (time.monotonic() - self.start)

    def allows(self, guess_s: float) -> bool:
        return self.left() >= guess_s


class Harness:
    def __init__(self, args):
        self.args = args
        self.device = args.device
        self.quick = args.quick
        self.tag = f"{args.device}{'-quick' if args.quick else ''}"
        self.work = Path(args.work).resolve()
        self.tagdir = self.work / self.tag
        self.rows_dir = self.tagdir / "rows"
        self.budget = Budget(args.budget_s)
        self.python = sys.executable
        # On a CPU: the CPU set of workloads and systems, each row at each
        # thread count; on CUDA one row per (workload, system), as ever.
        self.cpu = args.device == "cpu"
        self.system_order = report.CPU_SYSTEMS if self.cpu else report.SYSTEMS
        if self.cpu:
            self.workloads = self._pick(args.workloads, QUICK_WORKLOADS if args.quick else CPU_WORKLOADS,
                                        CPU_ALLOWED, "workload")
        else:
            self.workloads = self._pick(args.workloads, QUICK_WORKLOADS if args.quick else ALL_WORKLOADS,
                                        ALL_WORKLOADS, "workload")
        self.systems = self._pick(args.systems, self.system_order, self.system_order, "system")
        self.thread_counts = list(args.thread_counts) if self.cpu else [None]
        build = Path(args.aotirt_build)
        self.aotirt_build = build if build.is_absolute() else (REPO / build)
        self.aotirt_bin = self.aotirt_build / "bin" / "aotirt"
        self.runner_build = self.work / "libtorch_runner"
        self.runner_bin = self.runner_build / "aoti_libtorch_runner"
        self._env_cache = None
        self._help_cache: dict = {}
        self._shim_cache: dict = {}
        self.inductor_cache = self.tagdir / "inductor-cache"
        self.prewarm_file = self.tagdir / "prewarm.json"
        self._warm_lock = threading.Lock()
        self._warm_pool = None
        self._warm_futures: dict = {}
        self.prewarm_jobs = args.prewarm_jobs or max(1, min(6, (os.cpu_count() or 2) // 2))

    @staticmethod
    def _pick(text, default, allowed, what):
        if not text:
            return list(default)
        picked = [t.strip() for t in text.split(",") if t.strip()]
        bad = [p for p in picked if p not in allowed]
        if bad:
            sys.exit(f"unknown {what}(s): {', '.join(bad)}; choose from {', '.join(allowed)}")
        return picked

    # ---- environment ----

    def base_env(self, threads: int | None = None) -> dict:
        """The environment of every child; `threads` (a CPU row's thread
        count, else --threads on CUDA) pins OpenMP, OpenBLAS and MKL."""
        env = dict(os.environ)
        # Every row runs aotirt's defaults, as libtorch's runs torch's: a
        # tuning switch left in the shell (strict float32, a forced kernel
        # family) would measure another runtime. Library locations stay.
        for var in dropped_tuning_vars(env):
            del env[var]
        env["PYTHONUNBUFFERED"] = "1"
        threads = threads or self.args.threads
        if threads:
            for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
                env[var] = str(threads)
        paths = [str(REPO / "python"), str(HERE)]
        if env.get("PYTHONPATH"):
            paths.append(env["PYTHONPATH"])
        env["PYTHONPATH"] = os.pathsep.join(paths)
        return env

    def environment(self) -> dict:
        """Versions, device, library folders and copy bandwidth, measured once
        per work folder by a child process (the harness itself never touches
        the GPU, so it holds no device memory while others are measured)."""
        if self._env_cache is not None:
            return self._env_cache
        path = self.tagdir / "environment.json"
        if path.exists() and not self.args.force:
            self._env_cache = json.loads(path.read_text())
            return self._env_cache
        obs = procmon.run_observed([self.python, str(HERE / "worker.py"), "environment", "--device", self.device],
                                   env=self.base_env(), timeout_s=300)
        if not obs.ok():
            sys.exit(f"environment probe failed: {obs.failure()}")
        env = json.loads(obs.stdout.strip().splitlines()[-1])
        self.tagdir.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(env, indent=1))
        self._env_cache = env
        return env

    def inductor_cache_dir(self, threads: int | None = None) -> Path:
        """One inductor cache per thread count: the CPU code Inductor
        generates has torch.get_num_threads() written into it, and its FX
        graph cache key leaves the thread count out."""
        return self.inductor_cache if threads is None else self.tagdir / f"inductor-cache-t{threads}"

    def python_env(self, threads: int | None = None) -> dict:
        """The environment of the Python systems and of the prewarm: one
        inductor cache under the work folder (per thread count on a CPU), with
        its on-disk caches (FX graph, AOTAutograd, autotuning, Triton kernels)
        on."""
        env = self.base_env(threads)
        env["TORCHINDUCTOR_CACHE_DIR"] = str(self.inductor_cache_dir(threads))
        env["TORCHINDUCTOR_FX_GRAPH_CACHE"] = "1"
        env["TORCHINDUCTOR_AUTOGRAD_CACHE"] = "1"
        env.pop("TRITON_CACHE_DIR", None)  # so Triton's cache is the one inside it
        return env

    def aotirt_env(self, threads: int | None = None) -> dict:
        env = self.base_env(threads)
        dirs = []
        deps = self.aotirt_build / "lib" / "deps"
        if deps.is_dir():
            dirs.append(str(deps))
        dirs.append(str(self.aotirt_build / "lib"))
        # cuBLAS / cuDNN / the CUDA runtime come from the installed wheels.
        dirs += [d for d in self.environment().get("library_dirs", []) if "nvidia" in d]
        if env.get("LD_LIBRARY_PATH"):
            dirs.append(env["LD_LIBRARY_PATH"])
        env["LD_LIBRARY_PATH"] = os.pathsep.join(dirs)
        return env

    def help_text(self, sub: str) -> str:
        if sub not in self._help_cache:
            try:
                out = subprocess.run([str(self.aotirt_bin), sub, "--help"], capture_output=True, text=True,
                                     env=self.aotirt_env(), timeout=60)
                self._help_cache[sub] = out.stdout + out.stderr
            except OSError as e:
                self._help_cache[sub] = f"cannot run {self.aotirt_bin}: {e}"
        return self._help_cache[sub]

    def inspect_package(self, pkg: Path) -> dict | None:
        """`aotirt inspect --json PKG` (None when the binary is missing or
        fails): the shims the package imports, each with a `provided` flag
        from the binary itself."""
        if not self.aotirt_bin.exists():
            return None
        try:
            out = subprocess.run([str(self.aotirt_bin), "inspect", "--json", str(pkg)], capture_output=True,
                                 text=True, env=self.aotirt_env(), timeout=120)
        except (OSError, subprocess.SubprocessError):
            return None
        if out.returncode != 0:
            return None
        i = out.stdout.find("{")
        if i < 0:
            return None
        try:
            j = json.loads(out.stdout[i:])
        except json.JSONDecodeError:
            return None
        return j if isinstance(j.get("imported_shims"), list) else None

    def missing_shims(self, workload: str, key: str | None = None) -> tuple:
        """([shims the package imports that aotirt lacks], source). The
        binary's own view when it is there (`aotirt inspect --json`); else the
        export's check filtered by python/aotirt's lists for the device
        (provided_shims.txt, plus provided_shims_cuda.txt on CUDA). `key`
        names one of a CPU run's packages (t1, frozen-t2, ...)."""
        if (workload, key) in self._shim_cache:
            return self._shim_cache[(workload, key)]
        m = self.manifest(workload) or {}
        if key is None:
            name, listed = m.get("package"), m.get("missing_shims", [])
        else:
            name = m.get("packages", {}).get(key)
            listed = m.get("package_info", {}).get(key, {}).get("missing_shims", [])
        result = ([], "no package")
        if name:
            j = self.inspect_package(self.wdir(workload) / name)
            if j is not None:
                result = (sorted({s["name"] for s in j["imported_shims"] if not s.get("provided")}),
                          f"`aotirt inspect --json` of {self.aotirt_bin}")
            else:
                provided = provided_shims(self.device)
                result = (sorted(n for n in listed if _shim_name(n) not in provided),
                          "python/aotirt/provided_shims*.txt for " + self.device)
        self._shim_cache[(workload, key)] = result
        return result

    # ---- libtorch runner ----

    def wants_runner(self) -> bool:
        return any(s in ("libtorch-aoti", "libtorch-aoti-frozen") for s in self.systems)

    def build_runner(self) -> str | None:
        """Builds bench/libtorch_runner into the work folder with CMake
        (find_package(Torch)); if that fails, with one g++ command against the
        wheel's headers and libraries. None when built, else why not."""
        src = HERE / "libtorch_runner"
        newest = max(p.stat().st_mtime for p in src.iterdir())
        if self.runner_bin.exists() and self.runner_bin.stat().st_mtime > newest:
            return None
        probe = subprocess.run(
            [self.python, "-c", "import torch, torch.utils, os; print(torch.utils.cmake_prefix_path); "
             "print(os.path.dirname(torch.__file__)); print(int(torch._C._GLIBCXX_USE_CXX11_ABI)); "
             "print(int(torch.cuda.is_available() or torch.version.cuda is not None))"],
            capture_output=True, text=True)
        if probe.returncode != 0:
            return "cannot locate torch: " + probe.stderr.strip()[-300:]
        prefix, torch_dir, abi, has_cuda = probe.stdout.split()
        self.runner_build.mkdir(parents=True, exist_ok=True)
        errors = []
        if self.args.runner_build in ("auto", "cmake"):
            if not (shutil.which("cmake") and shutil.which("ninja")):
                errors.append("cmake or ninja not found")
            else:
                log("building the libtorch runner (cmake + ninja)")
                cfg = subprocess.run(["cmake", "-S", str(src), "-B", str(self.runner_build), "-G", "Ninja",
                                      "-DCMAKE_BUILD_TYPE=Release", f"-DCMAKE_PREFIX_PATH={prefix}"],
                                     capture_output=True, text=True)
                if cfg.returncode != 0:
                    errors.append("cmake configure failed: " + (cfg.stderr or cfg.stdout).strip()[-800:])
                else:
                    b = subprocess.run(["ninja", "-C", str(self.runner_build)], capture_output=True, text=True)
                    if b.returncode == 0:
                        return None
                    errors.append("cmake build failed: " + (b.stdout + b.stderr).strip()[-800:])
        if self.args.runner_build in ("auto", "gxx"):
            log("building the libtorch runner (g++ against the wheel)" + (f" after: {errors[-1][:200]}"
                                                                         if errors else ""))
            lib = os.path.join(torch_dir, "lib")
            libs = ["-ltorch", "-ltorch_cpu", "-lc10"] + (["-ltorch_cuda", "-lc10_cuda"] if has_cuda == "1" else [])
            cmd = ["g++", "-O2", "-std=c++17", f"-D_GLIBCXX_USE_CXX11_ABI={abi}",
                   "-I", os.path.join(torch_dir, "include"),
                   "-I", os.path.join(torch_dir, "include", "torch", "csrc", "api", "include"),
                   str(src / "runner.cpp"), str(src / "npy_io.cpp"), "-o", str(self.runner_bin),
                   "-L", lib, "-Wl,--no-as-needed"] + libs + [f"-Wl,-rpath,{lib}", "-pthread"]
            b = subprocess.run(cmd, capture_output=True, text=True)
            if b.returncode == 0:
                return None
            errors.append("g++ build failed: " + (b.stdout + b.stderr).strip()[-800:])
        return "; ".join(errors) or "no build method"

    # ---- export ----

    def wdir(self, workload: str) -> Path:
        return self.tagdir / workload

    def manifest(self, workload: str) -> dict | None:
        p = self.wdir(workload) / "manifest.json"
        return json.loads(p.read_text()) if p.exists() else None

    def _save_manifest(self, workload: str, m: dict) -> None:
        p = self.wdir(workload) / "manifest.json"
        tmp = p.with_suffix(".tmp")
        tmp.write_text(json.dumps(m, indent=1))
        os.replace(tmp, p)

    def exported(self, workload: str) -> bool:
        if self.cpu:
            # Every package the selection needs is written or recorded as
            # failed, and the inputs and references are there.
            return self.io_ready(workload) and all(
                self.artifact_done(workload, k) or self.artifact_failure(workload, k) for k in self.cpu_artifacts())
        m = self.manifest(workload)
        return bool(m and m.get("package") and (self.wdir(workload) / m["package"]).exists())

    def export_failure(self, workload: str) -> str | None:
        """Why the workload's export failed in an earlier call (not retried
        unless --force or --retry-failed, so repeated calls converge). On a
        CPU, the workload fails as a whole only when every one of its
        exports failed; a single package's failure fails the rows that need
        it (artifact_failure)."""
        if self.cpu:
            keys = self.cpu_artifacts()
            reasons = [self.artifact_failure(workload, k) for k in keys]
            if all(reasons) and not self.io_ready(workload):
                return "; ".join(f"{k}: {r}" for k, r in zip(keys, reasons))
            return None
        p = self.wdir(workload) / "export_failed.json"
        if p.exists() and not self.exported(workload):
            return json.loads(p.read_text()).get("reason", "export failed")
        return None

    # ---- CPU packages: one per thread count, frozen ones, the ONNX model ----

    def ort_missing(self) -> list:
        """The Python packages of the onnxruntime system that are not
        installed (./bench/setup-cpu.sh installs them)."""
        import importlib.util

        return [m for m in ("onnxruntime", "onnx", "onnxscript") if importlib.util.find_spec(m) is None]

    def cpu_artifacts(self) -> list:
        """What each workload of a CPU run exports for the selected systems:
        a package per thread count (t1, t2) for aotirt and libtorch's runner,
        one compiled with freezing=True per thread count (frozen-t1, ...) for
        their frozen rows, and the ONNX model (onnx) for onnxruntime. Every
        export also writes the inputs and eager references, all that eager
        and torch.compile need; a selection of those alone exports the first
        thread count's package, as a CUDA run would."""
        sel = set(self.systems)
        keys = []
        if sel & {"aotirt", "libtorch-aoti"}:
            keys += [package_key(t) for t in self.thread_counts]
        if sel & set(FROZEN_SYSTEMS):
            keys += [package_key(t, frozen=True) for t in self.thread_counts]
        if "onnxruntime" in sel and not self.ort_missing():
            keys.append("onnx")
        return keys or [package_key(self.thread_counts[0])]

    @staticmethod
    def artifact_flags(key: str) -> list:
        """worker.py export's flags for one CPU artifact (the --lean /
        --default choice apart)."""
        if key == "onnx":
            return ["--onnx"]
        threads = int(key.rsplit("t", 1)[1])
        return ["--key", key, "--package-name", f"model.{key.replace('-', '.')}.pt2", "--cpp-threads",
                str(threads)] + (["--freezing"] if key.startswith("frozen-") else [])

    def io_ready(self, workload: str) -> bool:
        m = self.manifest(workload)
        return bool(m and m.get("inputs") is not None and m.get("reference")
                    and all((self.wdir(workload) / f).exists() for f in m["reference"]))

    def artifact_file(self, workload: str, key: str) -> str | None:
        m = self.manifest(workload) or {}
        if key == "onnx":
            return (m.get("onnx") or {}).get("file")
        return m.get("packages", {}).get(key)

    def artifact_done(self, workload: str, key: str) -> bool:
        f = self.artifact_file(workload, key)
        return bool(f and (self.wdir(workload) / f).exists())

    def artifact_failure(self, workload: str, key: str) -> str | None:
        """Why this CPU artifact's export failed, if it did and is not there."""
        if self.artifact_done(workload, key):
            return None
        p = self.wdir(workload) / "export_failed.json"
        if not p.exists():
            return None
        return json.loads(p.read_text()).get("artifacts", {}).get(key)

    def _record_artifact(self, workload: str, key: str, err: str | None) -> None:
        p = self.wdir(workload) / "export_failed.json"
        state = json.loads(p.read_text()).get("artifacts", {}) if p.exists() else {}
        if err is None:
            state.pop(key, None)
        else:
            state[key] = err
        if not state:
            p.unlink(missing_ok=True)
            return
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(json.dumps({"artifacts": state, "at": datetime.datetime.now().isoformat(timespec="seconds")},
                                indent=1))

    def _export_cpu(self, workload: str, check: bool) -> str | None:
        """Exports the workload's CPU artifacts one after the other (each its
        own process; one workload's manifest is written by one at a time),
        checking each package with libtorch's runner as it comes. None when
        every one is written or recorded failed, "budget" when the budget
        stopped it."""
        redo = self.args.force
        for key in self.cpu_artifacts():
            if self.artifact_done(workload, key) and not redo:
                continue
            if self.artifact_failure(workload, key) and not (redo or self.args.retry_failed):
                continue
            if not self.budget.allows(EXPORT_GUESS_S):
                return "budget"
            lean = key != "onnx"
            default = lean and self.args.libtorch_package == "default"
            err = self._export_one(workload, lean=lean, default=default, extra=self.artifact_flags(key))
            if err == "budget":
                return "budget"
            self._record_artifact(workload, key, err)
            if err:
                log(f"export of {workload} {key} failed: {err}")
                continue
            if check and lean:
                self._check_libtorch_cpu(workload, key)
            # Its compilations can warm up while the other exports run.
            self.prewarm_submit([workload])
        return None

    def _libtorch_record(self, workload: str, key: str, name: str | None, note: str) -> None:
        m = self.manifest(workload)
        m.setdefault("libtorch_packages", {})[key] = name
        m.setdefault("libtorch_package_notes", {})[key] = note
        self._save_manifest(workload, m)

    def _check_libtorch_cpu(self, workload: str, key: str) -> None:
        """_check_libtorch for one CPU package (t1, frozen-t2, ...), run at
        its thread count: the package itself when the runner can run it,
        else one with AOTInductor's default options and the same
        cpp.threads and freezing."""
        m = self.manifest(workload)
        if key in m.get("libtorch_packages", {}) and not self.args.force:
            return
        threads = int(key.rsplit("t", 1)[1])
        mode = self.args.libtorch_package
        reason = None
        if mode in ("auto", "lean"):
            outdir = self.wdir(workload) / "outputs" / f"libtorch-check-{key}"
            outdir.mkdir(parents=True, exist_ok=True)
            cmd = [str(self.runner_bin), str(self.wdir(workload) / m["packages"][key]), "--device", self.device,
                   "--iters", "1", "--warmup", "0", "--output-dir", str(outdir)]
            cmd += self.input_args(workload, "--input", typed=True)
            obs = procmon.run_observed(cmd, env=self.base_env(threads), timeout_s=300)
            if obs.ok():
                self._libtorch_record(workload, key, m["packages"][key],
                                      "libtorch's runner runs the aotirt package itself")
                return
            reason = obs.failure()
            log(f"{workload} {key}: libtorch's runner cannot run the aotirt package ({reason})"
                + ("" if mode == "lean" else "; exporting a default-options package for it"))
            if mode == "lean":
                self._libtorch_record(workload, key, None, f"libtorch's runner failed on the aotirt package: {reason}")
                return
        name = m.get("default_packages", {}).get(key)
        if not name or not (self.wdir(workload) / name).exists():
            err = self._export_one(workload, lean=False, default=True, extra=self.artifact_flags(key))
            if err == "budget":
                return  # checked again by the next call
            if err:
                self._libtorch_record(workload, key, None, f"default-options export failed: {err}")
                return
            name = self.manifest(workload)["default_packages"][key]
        self._libtorch_record(workload, key, name, "a separate package with AOTInductor's default options"
                              + (f" (the aotirt package failed in libtorch's runner: {reason})" if reason else ""))

    def _record_export(self, workload: str, err: str | None) -> None:
        p = self.wdir(workload) / "export_failed.json"
        if err is None:
            p.unlink(missing_ok=True)
        else:
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(json.dumps({"reason": err, "at": datetime.datetime.now().isoformat(timespec="seconds")}))

    def input_args(self, workload: str, flag: str, typed: bool) -> list:
        m = self.manifest(workload)
        out = []
        for spec in m["inputs"]:
            f = str(self.wdir(workload) / spec["file"])
            out += [flag, f"{f}:{spec['dtype']}" if typed else f]
        return out

    def _export_one(self, workload: str, lean: bool, default: bool, extra: list = ()) -> str | None:
        flags = (["--lean"] if lean else []) + (["--default"] if default else []) + list(extra)
        cmd = [self.python, str(HERE / "worker.py"), "export", str(self.wdir(workload)), "--workload", workload,
               "--device", self.device] + (["--quick"] if self.quick else []) + flags
        left = self.budget.left()
        timeout = max(30.0, min(self.args.row_timeout_s, left))
        start = time.monotonic()
        obs = procmon.run_observed(cmd, env=self.base_env(), timeout_s=timeout)
        if not obs.ok():
            if procmon.stopping() or (obs.timed_out and left < self.args.row_timeout_s):
                return "budget"  # not the export's fault: the next call does it again
            self.wdir(workload).mkdir(parents=True, exist_ok=True)
            (self.wdir(workload) / "export.log").write_text(obs.stdout + "\n" + obs.stderr)
            return obs.failure()
        log(f"exported {workload} ({' '.join(flags)}) in {time.monotonic() - start:.0f} s")
        return None

    def _check_libtorch(self, workload: str) -> None:
        """Decides which package libtorch's runner uses: the aotirt package
        itself when the runner can run it, else one with default options."""
        m = self.manifest(workload)
        if m.get("libtorch_package") and not self.args.force:
            return
        mode = self.args.libtorch_package
        reason = None
        if mode in ("auto", "lean"):
            outdir = self.wdir(workload) / "outputs" / "libtorch-check"
            outdir.mkdir(parents=True, exist_ok=True)
            cmd = [str(self.runner_bin), str(self.wdir(workload) / m["package"]), "--device", self.device,
                   "--iters", "1", "--warmup", "0", "--output-dir", str(outdir)]
            cmd += self.input_args(workload, "--input", typed=True)
            obs = procmon.run_observed(cmd, timeout_s=300)
            if obs.ok():
                m["libtorch_package"] = m["package"]
                m["libtorch_package_note"] = "libtorch's runner runs the aotirt package itself"
                self._save_manifest(workload, m)
                return
            reason = obs.failure()
            log(f"{workload}: libtorch's runner cannot run the aotirt package ({reason}); "
                "exporting a default-options package for it")
            if mode == "lean":
                m["libtorch_package"] = None
                m["libtorch_package_note"] = f"libtorch's runner failed on the aotirt package: {reason}"
                self._save_manifest(workload, m)
                return
        if not m.get("default_package") or not (self.wdir(workload) / m["default_package"]).exists():
            err = self._export_one(workload, lean=False, default=True)
            if err == "budget":
                return  # checked again by the next call
            if err:
                m = self.manifest(workload)
                m["libtorch_package"] = None
                m["libtorch_package_note"] = f"default-options export failed: {err}"
                self._save_manifest(workload, m)
                return
            m = self.manifest(workload)
        m["libtorch_package"] = m["default_package"]
        m["libtorch_package_note"] = (
            "a separate package with AOTInductor's default options"
            + (f" (the aotirt package failed in libtorch's runner: {reason})" if reason else "")
        )
        self._save_manifest(workload, m)

    def phase_export(self) -> bool:
        """True when every selected workload has its packages."""
        self.tagdir.mkdir(parents=True, exist_ok=True)
        self.environment()
        runner_error = None
        if self.wants_runner():
            runner_error = self.build_runner()
            if runner_error:
                log(f"libtorch runner unavailable: {runner_error}")
                (self.tagdir / "runner_error.txt").write_text(runner_error)
            elif (self.tagdir / "runner_error.txt").exists():
                (self.tagdir / "runner_error.txt").unlink()
        retry = self.args.force or self.args.retry_failed
        failed_before = [w for w in self.workloads if not retry and self.export_failure(w)]
        if failed_before:
            log(f"export: failed in an earlier call, not retried (--retry-failed does): {', '.join(failed_before)}")
        todo = [w for w in self.workloads
                if (self.args.force or not self.exported(w)) and w not in failed_before]
        log(f"export: {len(self.workloads) - len(todo) - len(failed_before)} of {len(self.workloads)} workloads "
            "already exported" + (f"; exporting {', '.join(todo)}" if todo else ""))
        failures = {}
        # Compilations of workloads exported by an earlier call warm up
        # alongside this call's exports.
        self.prewarm_submit([w for w in self.workloads if w not in todo and self.exported(w)])

        check = self.wants_runner() and not runner_error

        def job(w):
            if self.cpu:
                return w, self._export_cpu(w, check)
            if not self.budget.allows(EXPORT_GUESS_S):
                return w, "budget"
            err = self._export_one(w, lean=True, default=self.args.libtorch_package == "default")
            if err:
                return w, err
            if check:
                # Here, so that a default-options export it may need runs
                # alongside the other exports.
                self._check_libtorch(w)
            # Its compilations can warm up while the other exports run.
            self.prewarm_submit([w])
            return w, None

        with ThreadPoolExecutor(max_workers=max(1, self.args.export_jobs)) as pool:
            for w, err in pool.map(job, todo):
                if self.cpu:
                    continue  # _export_cpu recorded each package's failure
                if err and err != "budget" and not procmon.stopping():
                    failures[w] = err
                    self._record_export(w, err)
                    log(f"export of {w} failed: {err}")
                elif err is None:
                    self._record_export(w, None)
        if check:  # packages exported by an earlier call
            for w in self.workloads:
                if self.cpu:
                    for key in self.cpu_artifacts():
                        if key != "onnx" and self.artifact_done(w, key) and self.budget.allows(30):
                            self._check_libtorch_cpu(w, key)
                elif self.exported(w) and self.budget.allows(30):
                    self._check_libtorch(w)
        done = [w for w in self.workloads if self.exported(w)]
        failed = [w for w in self.workloads if self.export_failure(w)]
        log(f"export: {len(done)} of {len(self.workloads)} workloads ready"
            + (f"; export failed (their rows are marked failed): {', '.join(failed)}" if failed else ""))
        return len(done) + len(failed) == len(self.workloads)

    # ---- prewarm ----

    def prewarm_state(self) -> dict:
        """{"workload/system[/tT]": {"status": "ok" | "failed" | "timeout", ...}}
        from the marker file; an entry means that compilation is not redone
        (ok), or not retried without --retry-failed (failed, timeout)."""
        with self._warm_lock:
            if self.prewarm_file.exists():
                return json.loads(self.prewarm_file.read_text())
        return {}

    def warm_status(self, workload: str, system: str, threads: int | None = None) -> str | None:
        return self.prewarm_state().get(row_key(workload, system, threads), {}).get("status")

    def _record_warm(self, workload: str, system: str, entry: dict, threads: int | None = None) -> None:
        with self._warm_lock:
            state = json.loads(self.prewarm_file.read_text()) if self.prewarm_file.exists() else {}
            state[row_key(workload, system, threads)] = {
                **entry, "at": datetime.datetime.now().isoformat(timespec="seconds")}
            self.prewarm_file.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.prewarm_file.with_suffix(".tmp")
            tmp.write_text(json.dumps(state, indent=1))
            os.replace(tmp, self.prewarm_file)

    def prewarm_pairs(self, workloads: list) -> list:
        """(workload, system) compilations still to warm: torch.compile rows
        not measured yet whose compilation has no marker entry; on a CPU
        (workload, system, threads), one per thread count."""
        if self.args.no_prewarm:
            return []
        state = self.prewarm_state()
        pairs = []
        for t in self.thread_counts:
            for s in PREWARM_SYSTEMS:
                if s not in self.systems:
                    continue
                for w in workloads:
                    # A CPU workload's compilations need only its inputs,
                    # there from its first export on.
                    ready = self.io_ready(w) if self.cpu else self.exported(w)
                    if not ready or not self.needs_row(w, s, t):
                        continue
                    st = state.get(row_key(w, s, t), {}).get("status")
                    if st == "ok" or (st and not self.args.retry_failed):
                        continue
                    pairs.append((w, s) if t is None else (w, s, t))
        return pairs

    def warm_command(self, workload: str, system: str, threads: int | None = None) -> list:
        return [self.python, str(HERE / "worker.py"), "python-warm", str(self.wdir(workload)), "--system", system,
                "--device", self.device] + (["--threads", str(threads)] if threads else [])

    def _warm_one(self, workload: str, system: str, threads: int | None = None) -> str:
        left = self.budget.left()
        if left < PREWARM_MIN_S:
            return "budget"
        timeout = min(PREWARM_TIMEOUT_S, left - 15)
        env = self.python_env(threads)
        # Compile workers split between the processes (not part of the
        # cache key, so the timed row still hits the cache).
        env["TORCHINDUCTOR_COMPILE_THREADS"] = str(max(1, (os.cpu_count() or 2) // self.prewarm_jobs))
        start = time.monotonic()
        obs = procmon.run_observed(self.warm_command(workload, system, threads), env=env, timeout_s=timeout,
                                   die_with_parent=True)
        took = time.monotonic() - start
        key = row_key(workload, system, threads)
        if procmon.stopping():
            return "stopped"
        if obs.ok():
            self._record_warm(workload, system, {"status": "ok", "seconds": round(took, 1)}, threads)
            log(f"prewarm {key}: compiled in {took:.0f} s")
            return "ok"
        if obs.timed_out and timeout < PREWARM_TIMEOUT_S:
            log(f"prewarm {key}: stopped at the budget after {took:.0f} s; the next call resumes it")
            return "budget"
        status = "timeout" if obs.timed_out else "failed"
        self.wdir(workload).mkdir(parents=True, exist_ok=True)
        log_name = f"prewarm-{system}" + (f"-t{threads}" if threads else "") + ".log"
        (self.wdir(workload) / log_name).write_text(obs.stdout + "\n" + obs.stderr)
        self._record_warm(workload, system, {"status": status, "seconds": round(took, 1),
                                             "reason": obs.failure()[-400:]}, threads)
        log(f"prewarm {key}: {obs.failure()[-300:]}")
        return status

    def prewarm_submit(self, workloads: list) -> None:
        """Starts (in the background, at most --prewarm-jobs at once) the
        compilations of these workloads that still need warming. A no-op
        unless this call prewarms (phases all and measure)."""
        if not getattr(self, "prewarm_enabled", False):
            return
        pairs = self.prewarm_pairs(workloads)
        with self._warm_lock:
            for pair in pairs:
                if pair in self._warm_futures:
                    continue
                if self._warm_pool is None:
                    self._warm_pool = ThreadPoolExecutor(max_workers=self.prewarm_jobs,
                                                         thread_name_prefix="prewarm")
                self._warm_futures[pair] = self._warm_pool.submit(self._warm_safely, *pair)

    def _warm_safely(self, workload: str, system: str, threads: int | None = None) -> str:
        try:
            return self._warm_one(workload, system, threads)
        except Exception as e:  # noqa: BLE001 - one compilation must not stop the run
            log(f"prewarm {row_key(workload, system, threads)}: {type(e).__name__}: {e}")
            return "error"

    def prewarm_finish(self) -> None:
        """Warms every selected compilation still cold and waits for all of
        them: called before the first timed row, so no timing overlaps a
        compilation."""
        if not getattr(self, "prewarm_enabled", False):
            return
        self.prewarm_submit([w for w in self.workloads if self.exported(w) or (self.cpu and self.io_ready(w))])
        with self._warm_lock:
            futures = dict(self._warm_futures)
            pool = self._warm_pool
        if not futures:
            return
        log(f"prewarm: {len(futures)} torch.compile compilation(s), {self.prewarm_jobs} at once, "
            f"inductor cache {self.inductor_cache}" + ("-t<threads>" if self.cpu else ""))
        start = time.monotonic()
        results = {pair: f.result() for pair, f in futures.items()}
        if pool is not None:
            pool.shutdown(wait=True)
        with self._warm_lock:
            self._warm_pool = None
            self._warm_futures = {}
        counts: dict = {}
        for r in results.values():
            counts[r] = counts.get(r, 0) + 1
        log(f"prewarm: done in {time.monotonic() - start:.0f} s: "
            + ", ".join(f"{n} {r}" for r, n in sorted(counts.items())))

    def row_guess(self, workload: str, system: str, threads: int | None = None) -> float:
        if system in PREWARM_SYSTEMS and self.warm_status(workload, system, threads) == "ok":
            return WARM_COMPILE_GUESS_S
        return ROW_GUESS_S[system]

    # ---- measure ----

    def row_path(self, workload: str, system: str, threads: int | None = None) -> Path:
        return self.rows_dir / (f"{workload}__{system}" + (f"__t{threads}" if threads else "") + ".json")

    def needs_row(self, workload: str, system: str, threads: int | None = None) -> bool:
        p = self.row_path(workload, system, threads)
        if self.args.force or not p.exists():
            return True
        if self.args.retry_failed:
            return json.loads(p.read_text()).get("status") != "ok"
        return False

    def iters(self, workload: str) -> tuple:
        if self.quick:
            n, w = QUICK_ITERS, QUICK_WARMUP
        else:
            import workloads as wl  # imports torch, but never touches a device

            n, w = wl.iterations(workload, self.cpu)
        return (self.args.iters or n), (self.args.warmup if self.args.warmup is not None else w)

    def _compare(self, workload: str, out_file: Path) -> float | None:
        m = self.manifest(workload)
        ref = self.wdir(workload) / m["reference"][0]
        if not out_file.exists():
            return None
        import numpy as np

        a, b = np.load(out_file).astype(np.float64), np.load(ref).astype(np.float64)
        if a.shape != b.shape:
            return None
        d = np.linalg.norm(b)
        return float(np.linalg.norm(a - b) / d) if d > 0 else float(np.linalg.norm(a - b))

    def _gpu(self):
        if self.device != "cuda":
            return None
        if not hasattr(self, "_gpu_mem"):
            self._gpu_mem = procmon.GpuMemory(0)
        return self._gpu_mem

    def _last_json(self, text: str) -> dict | None:
        for line in reversed(text.strip().splitlines()):
            line = line.strip()
            if line.startswith("{"):
                try:
                    return json.loads(line)
                except json.JSONDecodeError:
                    return None
        return None

    def _row_timeout(self) -> tuple:
        left = self.budget.left()
        return max(10.0, min(self.args.row_timeout_s, left)), left < self.args.row_timeout_s

    def cpu_package(self, workload: str, threads: int, frozen: bool, d: dict) -> tuple:
        """(package key, file name or None, the failed row when there is
        none) of a CPU row at `threads`."""
        key = package_key(threads, frozen)
        name = (self.manifest(workload) or {}).get("packages", {}).get(key)
        if name and (self.wdir(workload) / name).exists():
            return key, name, None
        why = self.artifact_failure(workload, key)
        return key, None, {**d, "status": "failed", "reason": f"export of the {key} package failed: {why}" if why
                           else f"no {key} package (run the export phase)"}

    def measure_aotirt(self, workload: str, graph: bool, threads: int | None = None, frozen: bool = False) -> dict:
        d = {"workload": workload, "system": "aotirt-cudagraph" if graph else ("aotirt-frozen" if frozen else "aotirt")}
        key = None
        if threads:
            d["threads"] = threads
            key, name, failed = self.cpu_package(workload, threads, frozen, d)
            if failed:
                return failed
            d["package"] = name
        if not self.aotirt_bin.exists():
            return {**d, "status": "skipped", "reason": f"{self.aotirt_bin} not found"}
        help_bench = self.help_text("bench")
        if graph:
            if self.device != "cuda":
                return {**d, "status": "skipped", "reason": "CUDA graphs need a CUDA device"}
            if "--cuda-graph" not in help_bench:
                return {**d, "status": "skipped", "reason": "`aotirt bench` has no --cuda-graph option in this build"}
        m = self.manifest(workload)
        pkg = str(self.wdir(workload) / (m["package"] if key is None else name))
        n, w = self.iters(workload)
        env = self.aotirt_env(threads)
        timeout, budget_bound = self._row_timeout()
        cmd = [str(self.aotirt_bin), "bench", pkg, "--device", self.device, "--json", "--iters", str(n),
               "--warmup", str(w)] + (["--cuda-graph"] if graph else [])
        cmd += self.input_args(workload, "--input", typed=False)
        obs = procmon.run_observed(cmd, env=env, timeout_s=timeout, gpu=self._gpu(), watch_maps=True)
        d["commands"] = [" ".join(obs.cmd)]
        if not obs.ok():
            if obs.timed_out and budget_bound:
                return {**d, "status": "budget"}
            # On a package it cannot load (the frozen ones may import shims
            # it lacks), aotirt's own error names the missing shims.
            missing, source = self.missing_shims(workload, key)
            return {**d, "status": "failed", "reason": "aotirt bench " + obs.failure(),
                    "missing_shims": missing, "missing_shims_source": source}
        j = self._last_json(obs.stdout) or {}
        d.update({k: j.get(k) for k in ("median_us", "p90_us", "p99_us", "min_us", "max_us", "mean_us", "load_ms",
                                         "first_run_us", "iters", "warmup")})
        d["synchronized"] = j.get("synchronized")
        d["peak_rss_mb"] = j.get("peak_rss_mb") or obs.polled_hwm_mb
        d["peak_rss_source"] = "aotirt bench" if j.get("peak_rss_mb") else "VmHWM polled every 20 ms (aotirt bench older than its peak_rss_mb field)"
        d["peak_device_mb"] = obs.peak_device_mb
        d["device_method"] = obs.device_method
        d["mapped_libs"] = sorted(obs.mapped_libs)
        d["bench_wall_s"] = obs.wall_s

        # Cold start: a fresh `aotirt run` process, exec to its first output line.
        help_run = self.help_text("run")
        if graph and "--cuda-graph" not in help_run:
            d["cold_note"] = "`aotirt run` has no --cuda-graph option: cold start not measured with graphs"
        else:
            outdir = self.wdir(workload) / "outputs" / (d["system"] + (f"-t{threads}" if threads else ""))
            shutil.rmtree(outdir, ignore_errors=True)
            cmd = [str(self.aotirt_bin), "run", pkg, "--device", self.device, "-o", str(outdir)]
            cmd += (["--cuda-graph"] if graph else []) + self.input_args(workload, "-i", typed=False)
            # Its stdout is a pipe here; line buffering lets the first line
            # show when it is printed rather than at exit.
            if shutil.which("stdbuf"):
                cmd = ["stdbuf", "-oL"] + cmd
            else:
                d["cold_note"] = "no stdbuf: aotirt run's first line is seen only when it exits"
            self._cold_start(d, workload, cmd, env, r"^output0:", outdir / "output0.npy", "aotirt run")
        d["status"] = "ok"
        return d

    def _cold_start(self, d: dict, workload: str, cmd: list, env: dict, marker: str, output: Path,
                    who: str) -> None:
        """Runs |cmd| as a fresh process --cold-runs times and records in |d|
        the median of when the line matching |marker| (its first output)
        appeared and of when it exited, each run's marker time, the largest
        VmHWM polled while they ran, and how far the last run's |output| is from the reference.
        One process varied by tens of milliseconds from run to run on an H200
        machine (the CUDA context alone), more than the 0.3x target leaves."""
        timeout, _ = self._row_timeout()
        markers, walls, rss = [], [], []
        for _ in range(max(1, self.args.cold_runs)):
            cold = procmon.run_observed(cmd, env=env, timeout_s=timeout, marker=marker)
            if not markers:
                d["commands"].append(" ".join(cold.cmd))
            if not cold.ok() or cold.marker_s is None:
                d["cold_note"] = f"{who} {cold.failure() if not cold.ok() else 'printed no first output'}"
                return
            markers.append(cold.marker_s)
            walls.append(cold.wall_s)
            rss.append(cold.polled_hwm_mb)
        d["cold_start_s"] = statistics.median(markers)
        d["cold_start_runs_s"] = markers
        d["cold_exit_s"] = statistics.median(walls)
        d["cold_peak_rss_mb"] = max((r for r in rss if r is not None), default=None)
        d["rel_err_vs_reference"] = self._compare(workload, output)

    def measure_libtorch(self, workload: str, threads: int | None = None, frozen: bool = False) -> dict:
        d = {"workload": workload, "system": "libtorch-aoti-frozen" if frozen else "libtorch-aoti"}
        if threads:
            d["threads"] = threads
        err_file = self.tagdir / "runner_error.txt"
        if err_file.exists():
            return {**d, "status": "skipped", "reason": "libtorch runner not built: " + err_file.read_text()}
        if not self.runner_bin.exists():
            return {**d, "status": "skipped", "reason": "libtorch runner not built (run the export phase)"}
        m = self.manifest(workload)
        if threads:
            key, _, failed = self.cpu_package(workload, threads, frozen, d)
            if failed:
                return failed
            if key not in m.get("libtorch_packages", {}):
                self._check_libtorch_cpu(workload, key)
                m = self.manifest(workload)
            if key not in m.get("libtorch_packages", {}):
                return {**d, "status": "skipped", "reason": "package not checked with libtorch's runner (run export)"}
            # The rest reads the package of this thread count as the one package.
            m = {**m, "libtorch_package": m["libtorch_packages"][key],
                 "libtorch_package_note": m.get("libtorch_package_notes", {}).get(key)}
        if "libtorch_package" not in m:
            # The export phase ran out of budget before checking it.
            self._check_libtorch(workload)
            m = self.manifest(workload)
        if "libtorch_package" not in m:
            return {**d, "status": "skipped", "reason": "package not checked with libtorch's runner (run export)"}
        if not m["libtorch_package"]:
            return {**d, "status": "failed", "reason": m.get("libtorch_package_note", "no package")}
        pkg = str(self.wdir(workload) / m["libtorch_package"])
        d["package"] = m["libtorch_package"]
        d["package_note"] = m.get("libtorch_package_note")
        n, w = self.iters(workload)
        timeout, budget_bound = self._row_timeout()
        env = self.base_env(threads)
        cmd = [str(self.runner_bin), pkg, "--device", self.device, "--json", "--iters", str(n), "--warmup", str(w)]
        cmd += self.input_args(workload, "--input", typed=True)
        obs = procmon.run_observed(cmd, env=env, timeout_s=timeout, gpu=self._gpu())
        d["commands"] = [" ".join(obs.cmd)]
        if not obs.ok():
            if obs.timed_out and budget_bound:
                return {**d, "status": "budget"}
            return {**d, "status": "failed", "reason": "libtorch runner " + obs.failure()}
        j = self._last_json(obs.stdout) or {}
        d.update({k: j.get(k) for k in ("median_us", "p90_us", "p99_us", "min_us", "max_us", "mean_us", "load_ms",
                                         "first_run_us", "iters", "warmup", "synchronized")})
        d["peak_rss_mb"] = j.get("peak_rss_mb") or obs.polled_hwm_mb
        d["peak_rss_source"] = "VmHWM of the runner" if j.get("peak_rss_mb") else "VmHWM polled every 20 ms"
        d["peak_device_mb"] = obs.peak_device_mb
        d["device_method"] = obs.device_method
        d["mapped_libs"] = [p for p, _ in j.get("mapped_libs", [])]
        d["bench_wall_s"] = obs.wall_s

        outdir = self.wdir(workload) / "outputs" / (d["system"] + (f"-t{threads}" if threads else ""))
        shutil.rmtree(outdir, ignore_errors=True)
        outdir.mkdir(parents=True)
        cmd = [str(self.runner_bin), pkg, "--device", self.device, "--iters", "1", "--warmup", "0",
               "--output-dir", str(outdir)] + self.input_args(workload, "--input", typed=True)
        self._cold_start(d, workload, cmd, env, r"^first_output", outdir / "output0.npy", "libtorch runner")
        d["status"] = "ok"
        return d

    def measure_python(self, workload: str, system: str, threads: int | None = None) -> dict:
        d = {"workload": workload, "system": system}
        if threads:
            d["threads"] = threads
        n, w = self.iters(workload)
        timeout, budget_bound = self._row_timeout()
        cmd = [self.python, str(HERE / "worker.py"), "python-system", str(self.wdir(workload)), "--system", system,
               "--device", self.device, "--iters", str(n), "--warmup", str(w)]
        cmd += ["--threads", str(threads)] if threads else []
        if system in PREWARM_SYSTEMS:
            warm = self.prewarm_state().get(row_key(workload, system, threads), {})
            d["inductor_cache_dir"] = str(self.inductor_cache_dir(threads))
            d["inductor_cache_prewarmed"] = warm.get("status") == "ok"
            if warm.get("status") == "ok":
                d["prewarm_s"] = warm.get("seconds")
            else:
                d["cold_note"] = ("the inductor cache was not pre-warmed for this row ("
                                  + (f"prewarm {warm['status']}: {warm.get('reason', '')[:200]}" if warm
                                     else "no prewarm") + "): its cold start includes compiling")
        obs = procmon.run_observed(cmd, env=self.python_env(threads), timeout_s=timeout, gpu=self._gpu(),
                                   marker=r"^first_output")
        d["commands"] = [" ".join(obs.cmd)]
        if not obs.ok():
            if obs.timed_out and budget_bound:
                return {**d, "status": "budget"}
            return {**d, "status": "failed", "reason": obs.failure()}
        j = self._last_json(obs.stdout) or {}
        for k, v in j.items():
            if k not in ("system", "device"):
                d[k] = v
        # Exec to first output, in this same fresh process: for torch.compile
        # that includes Dynamo's tracing and inductor's work, which finds its
        # compiled graphs in the cache the prewarm filled.
        d["cold_start_s"] = obs.marker_s
        d["cold_exit_s"] = None
        d["peak_rss_source"] = "VmHWM of the worker process"
        if d.get("peak_rss_mb") is None:
            d["peak_rss_mb"], d["peak_rss_source"] = obs.polled_hwm_mb, "VmHWM polled every 20 ms"
        d["peak_device_mb"] = obs.peak_device_mb
        d["device_method"] = obs.device_method
        d["process_wall_s"] = obs.wall_s
        d["status"] = "ok"
        return d

    def measure_onnxruntime(self, workload: str, threads: int) -> dict:
        """onnxruntime on the workload's ONNX model, in a fresh process
        (ort_worker.py, which does not import torch) at `threads` intra-op
        threads, timed, checked and watched as the Python systems are."""
        d = {"workload": workload, "system": "onnxruntime", "threads": threads}
        missing = self.ort_missing()
        if missing:
            return {**d, "status": "skipped",
                    "reason": f"not installed in this Python: {', '.join(missing)} (run ./bench/setup-cpu.sh)"}
        m = self.manifest(workload)
        onnx = m.get("onnx") or {}
        if not self.artifact_done(workload, "onnx"):
            why = self.artifact_failure(workload, "onnx")
            return {**d, "status": "failed", "reason": f"ONNX export failed: {why}" if why
                    else "no ONNX model (run the export phase)"}
        d["onnx_exporter"] = onnx.get("exporter")
        if onnx.get("fallback_reason"):
            d["onnx_fallback_reason"] = onnx["fallback_reason"]
        n, w = self.iters(workload)
        timeout, budget_bound = self._row_timeout()
        cmd = [self.python, str(HERE / "ort_worker.py"), str(self.wdir(workload)), "--threads", str(threads),
               "--iters", str(n), "--warmup", str(w)]
        obs = procmon.run_observed(cmd, env=self.base_env(threads), timeout_s=timeout, marker=r"^first_output")
        d["commands"] = [" ".join(obs.cmd)]
        if not obs.ok():
            if obs.timed_out and budget_bound:
                return {**d, "status": "budget"}
            reason = "onnxruntime " + obs.failure()
            lines = [line.strip() for line in obs.stderr.splitlines() if line.strip()]
            if not obs.timed_out and lines:
                # A Python exception: its last line is the message.
                reason = f"onnxruntime exit {obs.returncode}: {lines[-1]}"
            bf16 = any(spec["dtype"] == "bfloat16" for spec in m.get("inputs", []))
            if bf16 and "NOT_IMPLEMENTED" in reason:
                reason = ("onnxruntime has no CPU kernel for an operator of this bfloat16 graph (the session "
                          "cannot be created): " + reason)
            return {**d, "status": "failed", "reason": reason}
        j = self._last_json(obs.stdout) or {}
        for k, v in j.items():
            if k not in ("system", "device"):
                d[k] = v
        d["cold_start_s"] = obs.marker_s
        d["cold_exit_s"] = None
        d["peak_rss_source"] = "VmHWM of the worker process"
        if d.get("peak_rss_mb") is None:
            d["peak_rss_mb"], d["peak_rss_source"] = obs.polled_hwm_mb, "VmHWM polled every 20 ms"
        d["process_wall_s"] = obs.wall_s
        d["status"] = "ok"
        return d

    def measure_row(self, workload: str, system: str, threads: int | None = None) -> dict:
        if system in ("aotirt", "aotirt-cudagraph", "aotirt-frozen"):
            return self.measure_aotirt(workload, graph=system == "aotirt-cudagraph", threads=threads,
                                       frozen=system == "aotirt-frozen")
        if system in ("libtorch-aoti", "libtorch-aoti-frozen"):
            return self.measure_libtorch(workload, threads, frozen=system == "libtorch-aoti-frozen")
        if system == "onnxruntime":
            return self.measure_onnxruntime(workload, threads)
        return self.measure_python(workload, system, threads)

    def phase_measure(self) -> bool:
        """True when every selected row has been measured."""
        self.rows_dir.mkdir(parents=True, exist_ok=True)
        self.environment()
        if self.wants_runner() and not (self.tagdir / "runner_error.txt").exists():
            err = self.build_runner()  # a no-op when it is up to date
            if err:
                log(f"libtorch runner unavailable: {err}")
                (self.tagdir / "runner_error.txt").write_text(err)
        order = [s for s in self.system_order if s in self.systems]
        ready = [w for w in self.workloads if self.exported(w)]
        # A workload whose export failed: its rows say so, so that repeated
        # calls end (--retry-failed exports it again).
        for w in self.workloads:
            reason = self.export_failure(w)
            if reason is None:
                continue
            for t in self.thread_counts:
                for s in order:
                    if self.needs_row(w, s, t):
                        row = {"workload": w, "system": s, "status": "failed", "reason": f"export failed: {reason}",
                               "measured_at": datetime.datetime.now().isoformat(timespec="seconds")}
                        if t:
                            row["threads"] = t
                        self.row_path(w, s, t).write_text(json.dumps(row, indent=1))
        failed_exports = [w for w in self.workloads if self.export_failure(w)]
        complete = len(ready) + len(failed_exports) == len(self.workloads)
        if not complete:
            log(f"measure: not exported yet, left out: "
                f"{', '.join(w for w in self.workloads if w not in ready and w not in failed_exports)}")
        # On a CPU, every system at one thread count, then at the next.
        todo = [(w, s, t) for t in self.thread_counts for s in order for w in ready if self.needs_row(w, s, t)]
        log(f"measure: {len(ready) * len(order) * len(self.thread_counts) - len(todo)} rows already measured, "
            f"{len(todo)} to go")
        if todo:
            # Every compilation the torch.compile rows need, in parallel,
            # before the first timed row (the rows themselves run one at a
            # time, alone on the device).
            self.prewarm_finish()
        for w, s, t in todo:
            key = row_key(w, s, t)
            guess = self.row_guess(w, s, t)
            if not self.budget.allows(guess):
                log(f"budget: {self.budget.left():.0f} s left, {key} may take {guess:.0f} s; stopping here. "
                    "Run the same command again to continue.")
                complete = False
                break
            start = time.monotonic()
            d = self.measure_row(w, s, t)
            if procmon.stopping():
                complete = False
                break
            if d.get("status") == "budget":
                log(f"{key}: stopped at the budget; it will be measured by the next run")
                complete = False
                break
            d["measured_at"] = datetime.datetime.now().isoformat(timespec="seconds")
            self.row_path(w, s, t).write_text(json.dumps(d, indent=1))
            msg = (f"median {d.get('median_us'):.1f} us, p99 {d.get('p99_us'):.1f} us, cold "
                   f"{_s(d.get('cold_start_s'))} s, RSS {_s(d.get('peak_rss_mb'), 0)} MB"
                   if d.get("status") == "ok" and d.get("median_us") is not None
                   else f"{d.get('status')}: {d.get('reason', '')[:300]}")
            log(f"{key} ({time.monotonic() - start:.0f} s): {msg}")
        return complete

    # ---- report ----

    def commit(self) -> tuple:
        if self.args.commit:
            return self.args.commit, "--commit"
        if os.environ.get("AOTIRT_COMMIT"):
            return os.environ["AOTIRT_COMMIT"], "AOTIRT_COMMIT"
        try:
            head = subprocess.run(["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True, text=True,
                                  check=True).stdout.strip()
            dirty = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=no"],
                                   capture_output=True, text=True).stdout.strip()
            return head + ("-dirty" if dirty else ""), "git"
        except (OSError, subprocess.CalledProcessError):
            return "unknown", "none (pass --commit)"

    def footprint(self, details: dict) -> dict:
        """MiB on disk. aotirt: libaotirt.so plus the non-system libraries of
        its DT_NEEDED closure (what a CUDA deployment needs); the other files
        of lib/deps (OpenBLAS, libgfortran, libquadmath, SLEEF: loaded with
        dlopen by CPU ops only) apart, as optional. libtorch: everything in
        torch/lib. cuBLAS and cuDNN are left out of both."""
        env = self.environment()
        skip = re.compile(r"cublas|cudnn", re.I)

        def size(p: Path) -> int:
            return p.stat().st_size

        aot_files, optional, unresolved = {}, {}, []
        lib = self.aotirt_build / "lib"
        real = {}
        for p in sorted(lib.glob("libaotirt.so*")):
            if p.is_file():
                real.setdefault(p.resolve(), p.name)
        for rp, name in real.items():
            aot_files[name] = shipped_size(rp)
        deps = lib / "deps"
        bundled = {p.name: p for p in sorted(deps.iterdir()) if p.is_file()} if deps.is_dir() else {}
        if real:
            main_lib = lib / "libaotirt.so" if (lib / "libaotirt.so").exists() else next(iter(real))
            linked = ldd(main_lib, [deps] if deps.is_dir() else [])
            if not linked:
                # ldd gave nothing: count the whole bundle, as before the split.
                unresolved.append("(ldd gave no answer: every file of lib/deps counted)")
                linked = {name: str(p) for name, p in bundled.items()}
            deps_real = deps.resolve() if deps.is_dir() else None
            for name, path in linked.items():
                if SYSTEM_LIBS.match(name) or skip.search(name):
                    continue
                in_deps = name in bundled or (path and deps_real and Path(path).resolve().parent == deps_real)
                if in_deps and name in bundled:
                    aot_files["deps/" + name] = size(bundled[name])
                elif in_deps:
                    aot_files["deps/" + Path(path).name] = size(Path(path))
                elif path:
                    # Not bundled: the system's copy, as the bundle would copy it.
                    aot_files["linked/" + name] = size(Path(path))
                else:
                    unresolved.append(name)
        for name, p in bundled.items():
            if "deps/" + name not in aot_files and not skip.search(name) and not SYSTEM_LIBS.match(name):
                optional["deps/" + name] = size(p)
        torch_lib = Path(env["torch_lib"])
        torch_files = {p.name: size(p) for p in sorted(torch_lib.rglob("*"))
                       if p.is_file() and not p.is_symlink() and not skip.search(p.name)}
        fp = {
            "unit": "MiB",
            "aotirt_mb": sum(aot_files.values()) / MIB,
            "aotirt_files": {k: round(v / MIB, 2) for k, v in aot_files.items()},
            "aotirt_basis": "libaotirt.so (without its symbol tables, as the wheel and `cmake --install "
                            "--strip` ship it) plus the non-system libraries of its DT_NEEDED closure (ldd, "
                            "resolved against lib/deps first): what a CUDA deployment needs",
            "aotirt_optional_mb": sum(optional.values()) / MIB,
            "aotirt_optional_files": {k: round(v / MIB, 2) for k, v in optional.items()},
            "aotirt_optional_note": OPTIONAL_NOTE if deps.is_dir() else
            "no lib/deps bundle: the libraries only CPU ops load (OpenBLAS, SLEEF) are not counted",
            "aotirt_with_optional_mb": (sum(aot_files.values()) + sum(optional.values())) / MIB,
            "aotirt_unresolved": unresolved,
            "aotirt_cli_mb": size(self.aotirt_bin) / MIB if self.aotirt_bin.exists() else None,
            "libtorch_mb": sum(torch_files.values()) / MIB,
            "libtorch_dir": str(torch_lib),
            "left_out": "cuBLAS and cuDNN (both runtimes need them); aotirt's CLI binary is listed apart",
            "aotirt_has_bundled_deps": deps.is_dir(),
        }
        fp["ratio"] = fp["aotirt_mb"] / fp["libtorch_mb"] if fp["libtorch_mb"] else None
        fp["ratio_with_optional"] = (fp["aotirt_with_optional_mb"] / fp["libtorch_mb"]
                                     if fp["libtorch_mb"] else None)
        if self.device == "cpu":
            # A CPU deployment loads them.
            fp["ratio"] = fp["ratio_with_optional"]
            fp["ratio_basis"] = "aotirt_with_optional_mb: a CPU deployment needs the CPU-only libraries too"
        else:
            fp["ratio_basis"] = "aotirt_mb: libaotirt.so and its DT_NEEDED closure, as a CUDA deployment needs"
        # What the libtorch runner process actually mapped from torch's folder.
        for det in details.values():
            if det.get("system") == "libtorch-aoti" and det.get("mapped_libs"):
                mapped = {Path(p).resolve() for p in det["mapped_libs"]}
                fp["libtorch_runner_mapped_mb"] = sum(
                    p.stat().st_size for p in mapped
                    if p.exists() and str(p).startswith(str(torch_lib.resolve())) and not skip.search(p.name)) / MIB
                break
        return fp

    def physical_limit(self, rows: list) -> dict | None:
        m = self.manifest("gpt2_decode") if "gpt2_decode" in self.report_workloads else None
        if not m or "decode_bytes" not in m:
            return None
        env = self.environment()
        b = m["decode_bytes"]
        read = b["weight_bytes"] + b["kv_cache_bytes"]
        bw = env["copy_bandwidth_gbps"] * 1e9
        limit_us = read / bw * 1e6
        measured = {r["system"]: r["median_us"] for r in rows if r["workload"] == "gpt2_decode"}
        return {
            "workload": "gpt2_decode",
            "weight_bytes": b["weight_bytes"],
            "kv_cache_bytes": b["kv_cache_bytes"],
            "write_bytes": b["write_bytes"],
            "bytes_read": read,
            "copy_bandwidth_gbps": env["copy_bandwidth_gbps"],
            "bandwidth_note": "a device-to-device copy of 2 GiB (CPU: 256 MiB), bytes read plus written per second",
            "limit_us": limit_us,
            "measured_us": measured,
            "measured_over_limit": {s: (v / limit_us if v else None) for s, v in measured.items()},
        }

    def report_threads(self) -> list:
        """Thread counts the report covers: this mode's defaults and this
        call's selection ([None] on CUDA)."""
        if not self.cpu:
            return [None]
        default = CPU_QUICK_THREADS if self.quick else CPU_THREADS
        return sorted(set(default) | set(self.thread_counts))

    def phase_report(self) -> list:
        env = self.environment()
        details, rows = {}, []
        # Everything measured for this mode, not only this call's selection.
        if self.cpu:
            default = QUICK_WORKLOADS if self.quick else CPU_WORKLOADS
            order = CPU_ALLOWED
        else:
            default = QUICK_WORKLOADS if self.quick else ALL_WORKLOADS
            order = ALL_WORKLOADS
        report_workloads = [w for w in order if w in default or w in self.workloads]
        self.report_workloads = report_workloads
        for t in self.report_threads():
            for w in report_workloads:
                for s in self.system_order:
                    p = self.row_path(w, s, t)
                    d = json.loads(p.read_text()) if p.exists() else {"workload": w, "system": s, "status": "missing",
                                                                        "reason": "not measured yet"}
                    if t:
                        d.setdefault("threads", t)
                    details[row_key(w, s, t)] = d
                    rows.append(report.schema_row(d))
        try:
            footprint = self.footprint(details)
        except (OSError, KeyError) as e:
            footprint = {"error": str(e)}
        if self.cpu:
            ratios = report.compute_cpu_ratios(rows)
            reasons = {k: d.get("reason", d.get("status")) for k, d in details.items() if d.get("status") != "ok"}
            pending = {k for k, d in details.items() if d.get("status") == "missing"}
            targets = report.evaluate_cpu_targets(rows, ratios, reasons, pending)
        else:
            ratios = report.compute_ratios(rows)
            unsynced = {tuple(k.split("/", 1)) for k, d in details.items()
                        if d.get("status") == "ok" and self.device != "cpu" and d.get("synchronized") is not True}
            targets = report.evaluate_targets(rows, ratios, footprint, unsynchronized=unsynced)
        commit, commit_source = self.commit()
        notes = self.cpu_notes(details, commit_source) if self.cpu else self.notes(details, commit_source)
        label = self.args.label or (device_label(env.get("device_name", "")) if self.device == "cuda"
                                    else "cpu") + ("-quick" if self.quick else "")
        date = datetime.date.today().isoformat()
        doc = {
            "commit": commit,
            "device": env.get("device_name", self.device),
            "rows": rows,
            "footprint": footprint,
            "physical_limit": None if self.cpu else self.physical_limit(rows),
            "notes": notes,
            "ratios": ratios,
            "targets": targets,
            "label": label,
            "date": date,
            "quick": self.quick,
            "command": "python bench/run.py " + " ".join(sys.argv[1:]),
            "environment": {k: v for k, v in env.items() if k != "library_dirs"},
            "workload_descriptions": {w: (self.manifest(w) or {}).get("description", "") for w in report_workloads},
            "row_details": {k: {kk: vv for kk, vv in v.items() if kk != "mapped_libs"} for k, v in details.items()},
        }
        if self.cpu:
            doc.update({
                "kind": "cpu",
                "thread_counts": self.report_threads(),
                "systems": list(self.system_order),
                "ratios_vs_onnxruntime": report.compute_cpu_ratios(rows, baseline=report.ORT,
                                                                   metrics=["median_us", "p99_us"]),
                "onnx_exports": {w: (self.manifest(w) or {}).get("onnx") for w in report_workloads},
                "packages": {w: {k: {**v, "file": (self.manifest(w) or {}).get("packages", {}).get(k)}
                                 for k, v in ((self.manifest(w) or {}).get("package_info") or {}).items()}
                             for w in report_workloads},
            })
        if self.args.notes_md:
            doc["extra_markdown"] = Path(self.args.notes_md).read_text()
        if self.args.results_dir:
            out_dir = Path(self.args.results_dir)
        elif self.quick:
            out_dir = self.work / "results"
        else:
            # The full runs' results are committed: <date>-<gpu>.*, <date>-cpu.*.
            out_dir = HERE / "results"
        written = report.write_all(doc, out_dir / f"{date}-{label}")
        for p in written:
            log(f"wrote {p}")
        if self.args.copy_to:
            Path(self.args.copy_to).mkdir(parents=True, exist_ok=True)
            for p in written:
                shutil.copy(p, Path(self.args.copy_to) / p.name)
        self.print_summary(doc)
        return written

    def notes(self, details: dict, commit_source: str) -> list:
        env = self.environment()
        notes = []
        if self.quick:
            notes.append("QUICK run: tiny workloads and few iterations, to prove the pipeline; not a measurement")
        notes.append(f"commit taken from {commit_source}")
        if self.args.threads:
            notes.append(f"CPU threads pinned to {self.args.threads} (OMP_NUM_THREADS) in every measured process")
        pk = {}
        for w in self.report_workloads:
            m = self.manifest(w) or {}
            if m.get("libtorch_package_note"):
                pk.setdefault(m["libtorch_package_note"], []).append(w)
            if m.get("package"):
                missing, source = self.missing_shims(w)
                if missing:
                    notes.append(f"{w}: the package imports shims this aotirt build lacks (per {source}): "
                                 f"{', '.join(missing)}")
        for note, ws in pk.items():
            notes.append(f"libtorch-aoti package for {', '.join(ws)}: {note}")
        for key, d in details.items():
            if d.get("system", "").startswith("aotirt") and d.get("status") == "ok" and self.device != "cpu" \
                    and not d.get("synchronized"):
                notes.append(f"{key}: `aotirt bench` did not report synchronizing after each run, so its "
                             "latency may leave out queued device work")
            for k in ("cold_note",):
                if d.get(k):
                    notes.append(f"{key}: {d[k]}")
        notes.append(
            "timing: each run is the call plus a device synchronisation, timed with a host steady clock, after the "
            "first run and the warm-up runs; the Python systems run under torch.inference_mode, and "
            "reduce-overhead calls torch.compiler.cudagraph_mark_step_begin() before each call")
        notes.append(
            f"cold start: a fresh process, exec to its first output on the host (aotirt: `aotirt run`; "
            f"libtorch: the runner with one run; both the median of {max(1, self.args.cold_runs)} such processes; "
            f"Python systems: one process that imports torch, builds the model, "
            f"compiles if any and runs once); the page cache is warm; for torch.compile see the inductor cache note")
        compiled = {k: d for k, d in details.items() if d.get("system") in PREWARM_SYSTEMS and d.get("status") == "ok"}
        warmed = [k for k, d in compiled.items() if d.get("inductor_cache_prewarmed")]
        if warmed:
            notes.append(
                f"inductor cache: before any row was timed, separate processes (`worker.py python-warm`, "
                f"{self.prewarm_jobs} at once) compiled each torch.compile / reduce-overhead model with the same "
                "mode on the same inputs and ran it twice, filling the work folder's inductor cache "
                "(TORCHINDUCTOR_CACHE_DIR; FX graph, AOTAutograd, autotuning and Triton kernel caches). So the "
                f"cold start and first_run_us of {len(warmed)} of {len(compiled)} torch.compile rows are with a "
                "warm inductor cache: Dynamo traces the model again and the compiled code is loaded from the "
                "cache instead of being generated (reduce-overhead still records its CUDA graphs); "
                "a first compile on a clean machine takes longer")
        old_rows = [k for k, d in compiled.items() if "inductor_cache_prewarmed" not in d]
        if old_rows:
            notes.append(f"{', '.join(old_rows)}: measured without the prewarm, with whatever inductor cache the "
                         "machine held")
        notes.append(
            "peak RSS: the measuring process's own peak (VmHWM or wait4); peak device memory: the process's "
            "usage as NVML / nvidia-smi reports it, CUDA context included, polled every 20 ms")
        notes.append(
            "load: aotirt and libtorch, the time to load the package; Python systems, the time to build "
            "the model and move it to the device (torch.compile compiles at the first run, see first_run_us)")
        notes.append(
            f"TF32: cudnn.allow_tf32={env.get('cudnn_allow_tf32')}, matmul.allow_tf32={env.get('matmul_allow_tf32')} "
            "(PyTorch defaults, in eager, torch.compile and libtorch's runner alike)")
        if os.environ.get("CUDA_DEVICE_MAX_CONNECTIONS"):
            notes.append(f"CUDA_DEVICE_MAX_CONNECTIONS={os.environ['CUDA_DEVICE_MAX_CONNECTIONS']} in the "
                         "harness's environment, so in every system's")
        elif self.device == "cuda":
            notes.append("CUDA work queues: the aotirt CLI sets CUDA_DEVICE_MAX_CONNECTIONS=1 for itself (its "
                         "default, docs/cli.md); the other systems run with the driver's default of 8")
        return notes

    def cpu_notes(self, details: dict, commit_source: str) -> list:
        """The notes of a CPU run's results."""
        notes = []
        if self.quick:
            notes.append("QUICK run: tiny workloads and few iterations, to prove the pipeline; not a measurement")
        notes.append(f"commit taken from {commit_source}")
        notes.append(
            "threads: each row runs at its thread count T in every process: OMP_NUM_THREADS, OPENBLAS_NUM_THREADS "
            "and MKL_NUM_THREADS = T; aotirt and libtorch's runner run the package compiled for T threads "
            "(aotirt.export with Inductor's cpp.threads = T, which Inductor writes into the generated code), "
            "eager and torch.compile call torch.set_num_threads(T) first (torch.compile with one inductor cache "
            "per thread count), onnxruntime runs with intra_op_num_threads = T, inter_op_num_threads = 1")
        notes.append(
            "onnxruntime: the model exported with torch.onnx.export (the default exporter, else dynamo=False; "
            "which one per workload is in onnx_exports and the rows' onnx_exporter), run by ort_worker.py, which "
            "imports numpy and onnxruntime only, on the CPU execution provider with ORT_ENABLE_ALL graph "
            "optimisations and sequential execution; inputs fed as numpy arrays through InferenceSession.run "
            "(as OrtValues when an input is bfloat16)")
        notes.append(
            "aotirt-frozen, libtorch-aoti-frozen: the same runtimes on packages compiled with freezing=True "
            "(Inductor's CPU recipe: weights folded in as constants, convolutions and linears on oneDNN where "
            "Inductor chooses); aotirt's row is failed, with its load error, when the package needs shims it "
            "does not provide")
        pk = {}
        for w in self.report_workloads:
            m = self.manifest(w) or {}
            for key, note in (m.get("libtorch_package_notes") or {}).items():
                pk.setdefault(note, []).append(f"{w} {key}")
            for key in sorted((m.get("packages") or {})):
                missing, source = self.missing_shims(w, key)
                if missing:
                    notes.append(f"{w} {key}: the package imports shims this aotirt build lacks (per {source}): "
                                 f"{', '.join(missing)}")
            onnx = m.get("onnx") or {}
            if onnx.get("fallback_reason"):
                notes.append(f"{w}: torch.onnx.export's default exporter failed ({onnx['fallback_reason'][:300]}); "
                             f"exported with {onnx.get('exporter')}")
        for note, ws in pk.items():
            notes.append(f"libtorch-aoti package for {', '.join(ws)}: {note}")
        for key, d in details.items():
            if d.get("cold_note"):
                notes.append(f"{key}: {d['cold_note']}")
        notes.append(
            "timing: each run is the call alone (the CPU computes synchronously), timed with a host steady clock, "
            "after the first run and the warm-up runs; eager and torch.compile run under torch.inference_mode")
        notes.append(
            f"cold start: a fresh process, exec to its first output on the host (aotirt: `aotirt run`; libtorch: "
            f"the runner with one run; both the median of {max(1, self.args.cold_runs)} such processes; eager and "
            "torch.compile: one process that imports torch, builds the model, compiles if any and runs once, "
            "torch.compile with an inductor cache its prewarm filled; onnxruntime: one process that imports "
            "onnxruntime, creates the session and runs once); the page cache is warm")
        notes.append("peak RSS: the measuring process's own peak (VmHWM)")
        notes.append(
            "targets: at each thread count, aotirt against libtorch's runner on the same package (median latency "
            "<= 0.9x, peak RSS <= 0.3x, cold start <= 0.3x, per workload), and aotirt's median no slower than "
            f"onnxruntime's on at least {report.ORT_MIN_WINS} of the {report.ORT_OF} workloads (a smaller selection: "
            "the same share, rounded up); a workload either of the two has no latency for is not compared")
        return notes

    def rows_left(self) -> int:
        """Selected rows (workload, system, thread count) with no result yet."""
        return sum(1 for t in self.thread_counts for w in self.workloads for s in self.systems
                   if not self.row_path(w, s, t).exists())

    def rows_total(self) -> int:
        return len(self.workloads) * len(self.systems) * len(self.thread_counts)

    def print_summary_cpu(self, doc: dict) -> None:
        by = {(r["workload"], r["system"], r.get("threads")): r for r in doc["rows"]}
        systems = doc["systems"]
        for t in doc["thread_counts"]:
            rt = doc["ratios"].get(report.threads_key(t), {})
            print(f"\nmedian µs at {report.threads_label(t)} (ratio to libtorch-aoti):")
            print(f"{'workload':<20}" + "".join(f"{s[:20]:>22}" for s in systems))
            for w in self.report_workloads:
                cells = []
                for s in systems:
                    r = by.get((w, s, t))
                    rr = rt.get(w, {}).get(s, {}).get("median_us")
                    if r is None or r["median_us"] is None:
                        st = doc["row_details"].get(row_key(w, s, t), {}).get("status", "missing")
                        cells.append(f"{st:>22}")
                    else:
                        cells.append(f"{r['median_us']:>12.1f} ({'-' if rr is None else f'{rr:.2f}x'})".rjust(22))
                print(f"{w:<20}" + "".join(cells))
        counts: dict = {}
        for c in doc["targets"]:
            counts[c["result"]] = counts.get(c["result"], 0) + 1
        print("targets: " + ", ".join(f"{n} {r}" for r, n in sorted(counts.items())))

    def print_summary(self, doc: dict) -> None:
        if self.cpu:
            self.print_summary_cpu(doc)
            return
        print("\nmedian µs (ratio to libtorch-aoti):")
        by = {(r["workload"], r["system"]): r for r in doc["rows"]}
        header = f"{'workload':<16}" + "".join(f"{s[:22]:>24}" for s in report.SYSTEMS)
        print(header)
        for w in self.report_workloads:
            cells = []
            for s in report.SYSTEMS:
                r = by[(w, s)]
                rr = doc["ratios"].get(w, {}).get(s, {}).get("median_us")
                if r["median_us"] is None:
                    st = doc["row_details"][f"{w}/{s}"].get("status", "missing")
                    cells.append(f"{st:>24}")
                else:
                    cells.append(f"{r['median_us']:>14.1f} ({'-' if rr is None else f'{rr:.2f}x'})".rjust(24))
            print(f"{w:<16}" + "".join(cells))
        fails = [c for c in doc["targets"] if c["result"] == "fail"]
        passes = [c for c in doc["targets"] if c["result"] == "pass"]
        print(f"targets: {len(passes)} pass, {len(fails)} fail, "
              f"{len(doc['targets']) - len(passes) - len(fails)} n/a")


MIB = float(2**20)
# Libraries every Linux system has, or that come with the driver and CUDA
# (the same split as scripts/bundle-runtime.sh).
SYSTEM_LIBS = re.compile(r"^(libaotirt|linux-vdso|ld-linux|libc\.|libm\.|libdl\.|libpthread\.|librt\.|libstdc\+\+"
                         r"|libgcc_s|libcuda\.|libcudart|libcublas|libcudnn|libnv)")


OPTIONAL_NOTE = report.OPTIONAL_NOTE


def shipped_size(lib: Path) -> int:
    """Bytes of |lib| as it ships: a Release build's symbol tables (.symtab,
    .strtab) are stripped by the wheel's build and by `cmake --install
    --strip`, and no process loads them. The file's own size where `strip`
    is missing or fails."""
    try:
        with tempfile.TemporaryDirectory() as d:
            out = Path(d) / lib.name
            subprocess.run(["strip", "--strip-unneeded", "-o", str(out), str(lib)], check=True,
                           capture_output=True, timeout=120)
            return min(out.stat().st_size, lib.stat().st_size)
    except (OSError, subprocess.SubprocessError):
        return lib.stat().st_size


def parse_ldd(text: str) -> dict:
    """{name: resolved path, or None when "not found"} from ldd's output."""
    found = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[1] == "=>":
            if parts[2].startswith("/"):
                found[parts[0]] = parts[2]
            elif parts[2] == "not":
                found[parts[0]] = None
    return found


def ldd(lib: Path, library_dirs: list = ()) -> dict:
    """{name: path or None} of every shared library `lib` needs, its DT_NEEDED
    closure as the loader resolves it with `library_dirs` searched first
    (LD_LIBRARY_PATH)."""
    env = dict(os.environ)
    dirs = [str(d) for d in library_dirs]
    if dirs:
        env["LD_LIBRARY_PATH"] = os.pathsep.join(dirs + ([env["LD_LIBRARY_PATH"]] if env.get("LD_LIBRARY_PATH")
                                                         else []))
    try:
        out = subprocess.run(["ldd", str(lib)], capture_output=True, text=True, timeout=30, env=env).stdout
    except (OSError, subprocess.SubprocessError):
        return {}
    return parse_ldd(out)


SHIM_LISTS = {"cpu": ["provided_shims.txt"], "cuda": ["provided_shims.txt", "provided_shims_cuda.txt"]}


def _shim_name(name: str) -> str:
    """Full aoti_torch_* name (the lists may give it with or without the prefix)."""
    name = name.strip()
    return name if name.startswith("aoti_torch_") else "aoti_torch_" + name


def provided_shims(device: str, folder: Path | None = None) -> frozenset:
    """The shims python/aotirt's lists say a build for `device` provides
    (without importing torch)."""
    folder = folder or (REPO / "python" / "aotirt")
    names = set()
    for f in SHIM_LISTS.get(device, SHIM_LISTS["cpu"]):
        p = folder / f
        if not p.exists():
            continue
        for line in p.read_text().splitlines():
            line = line.split("#", 1)[0].strip()
            if line:
                names.add(_shim_name(line))
    return frozenset(names)


def _s(v, digits=2):
    return "-" if v is None else f"{v:.{digits}f}"


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("phase", choices=["all", "export", "measure", "report"])
    ap.add_argument("--device", choices=["cuda", "cpu"], default="cuda")
    ap.add_argument("--quick", action="store_true", help="mlp and a tiny GPT-2, few iterations")
    ap.add_argument("--workloads", help="comma-separated subset (default: the device's set; quick: mlp,gpt2_decode)")
    ap.add_argument("--systems", help="comma-separated subset of " + ", ".join(report.SYSTEMS)
                    + " (cpu: of " + ", ".join(report.CPU_SYSTEMS) + ")")
    ap.add_argument("--budget-s", type=float, default=540,
                    help="stop starting new work after this many seconds (default 540)")
    ap.add_argument("--row-timeout-s", type=float, default=420, help="limit for one export or one row")
    ap.add_argument("--force", action="store_true", help="redo exports / rows that exist")
    ap.add_argument("--retry-failed", action="store_true", help="measure again the rows that failed or were skipped")
    ap.add_argument("--iters", type=int, help="timed runs (default: per workload; quick: 20)")
    ap.add_argument("--cold-runs", type=int, default=5,
                    help="fresh processes whose median is the cold start of the aotirt and libtorch rows (default 5)")
    ap.add_argument("--warmup", type=int, help="warm-up runs (default: per workload; quick: 3)")
    ap.add_argument("--aotirt-build", default="build", help="aotirt build folder with bin/ and lib/ (default build)")
    ap.add_argument("--work", default=str(HERE / ".work"), help="work folder (default bench/.work)")
    ap.add_argument("--commit", help="commit hash to stamp (default: git, else $AOTIRT_COMMIT)")
    ap.add_argument("--label", help="results label (default: the GPU's model, h200 say, or cpu; -quick for quick runs)")
    ap.add_argument("--results-dir", help="where results go (default bench/results; quick: bench/.work/results)")
    ap.add_argument("--copy-to", help="also copy the result files to this folder")
    ap.add_argument("--libtorch-package", choices=["auto", "lean", "default"], default="auto",
                    help="package for libtorch's runner: auto = the aotirt package when the runner can run it, "
                         "else one exported with default options")
    ap.add_argument("--export-jobs", type=int, help="exports run at once (default: 3 on cuda, 2 on cpu)")
    ap.add_argument("--runner-build", choices=["auto", "cmake", "gxx"], default="auto",
                    help="how to build the libtorch runner: auto = CMake, then plain g++ if CMake fails")
    ap.add_argument("--threads",
                    help="cpu: comma-separated thread counts, every system measured at each (packages compiled "
                         "for it, OMP_NUM_THREADS, torch.set_num_threads, onnxruntime's intra-op threads); "
                         f"default {','.join(map(str, CPU_THREADS))}, quick {','.join(map(str, CPU_QUICK_THREADS))}. "
                         "cuda: OMP_NUM_THREADS etc. for every measured process; default unset")
    ap.add_argument("--notes-md", help="markdown file appended to the results (e.g. optimisations with figures)")
    ap.add_argument("--prewarm-jobs", type=int,
                    help="torch.compile compilations warmed at once before the timed rows "
                         "(default min(6, CPU cores / 2))")
    ap.add_argument("--no-prewarm", action="store_true",
                    help="do not pre-warm the inductor cache (the torch.compile rows then compile cold, "
                         "or with what the work folder's cache holds)")
    args = ap.parse_args(argv)
    args.thread_counts = None
    try:
        counts = [int(t) for t in args.threads.split(",") if t.strip()] if args.threads else []
    except ValueError:
        ap.error(f"--threads takes whole numbers: {args.threads!r}")
    if any(t < 1 for t in counts) or len(set(counts)) != len(counts):
        ap.error(f"--threads takes distinct positive numbers: {args.threads!r}")
    if args.device == "cpu":
        # Rows per thread count; each row's processes get its count.
        args.thread_counts = sorted(counts) or list(CPU_QUICK_THREADS if args.quick else CPU_THREADS)
        args.threads = None
    elif len(counts) > 1:
        ap.error("--threads takes one number on cuda")
    else:
        args.threads = counts[0] if counts else None
    if args.export_jobs is None:
        args.export_jobs = 3 if args.device == "cuda" else 2
    return args


def main() -> int:
    args = parse_args()

    h = Harness(args)
    h.prewarm_enabled = args.phase in ("all", "measure") and not args.no_prewarm
    log(f"{args.phase}: device {args.device}{' (quick)' if args.quick else ''}, workloads "
        f"{','.join(h.workloads)}, systems {','.join(h.systems)}, budget {args.budget_s:.0f} s, work {h.tagdir}")
    dropped = dropped_tuning_vars(os.environ)
    if dropped:
        log(f"measuring aotirt's defaults: {', '.join(dropped)} left out of every row's environment")

    def on_signal(signum, frame):
        # End every running child (rows, exports, compilations) before
        # unwinding, so none is left behind and none is recorded as failed.
        procmon.stop_all()
        raise SystemExit(128 + signum)

    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(sig, on_signal)
    complete = True
    try:
        if args.phase in ("all", "export"):
            complete = h.phase_export() and complete
        if args.phase in ("all", "measure"):
            complete = h.phase_measure() and complete
        if args.phase in ("all", "measure", "report"):
            h.phase_report()
    except BaseException as e:
        procmon.stop_all()
        why = f"stopped by signal {e.code - 128}" if isinstance(e, SystemExit) and isinstance(e.code, int) \
            and e.code > 128 else f"{type(e).__name__}: {e}"
        print(f"bench: INCOMPLETE ({why}; run the same command again to continue)", flush=True)
        raise
    print(final_line(args.phase, complete, h.rows_left(), h.rows_total()), flush=True)
    return 0


def final_line(phase: str, complete: bool, left: int, total: int) -> str:
    """The last line of every call, for whoever repeats the command until it
    is done: `bench: COMPLETE ...` only when nothing is left to do."""
    if phase == "export":
        return ("bench: COMPLETE (export: every workload exported)" if complete
                else "bench: INCOMPLETE (export: workloads left; run the same command again to continue)")
    if phase == "report":
        return (f"bench: REPORT WRITTEN ({total - left} of {total} rows measured"
                + (f", {left} left: run `measure` to continue)" if left else ")"))
    if complete and left == 0:
        return f"bench: COMPLETE (all {total} rows measured)"
    return (f"bench: INCOMPLETE ({left} of {total} rows left"
            + ("" if left else ", exports left") + "; run the same command again to continue)")


if __name__ == "__main__":
    sys.exit(main())
