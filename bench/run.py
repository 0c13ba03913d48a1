#!/usr/bin/env python3
"""Benchmark harness: aotirt against libtorch's AOTI runner, eager PyTorch and
torch.compile, side by side, on one device.

  python bench/run.py all     --device cuda   # export what is missing, measure, report
  python bench/run.py export  --device cuda   # packages, inputs, references -> bench/.work
  python bench/run.py measure --device cuda   # rows -> bench/.work, then report
  python bench/run.py report  --device cuda   # results from the rows measured so far
  python bench/run.py all --device cpu --quick  # small CPU run that proves the pipeline

Every phase skips what is already done (packages, measured rows) and stops
starting new work once --budget-s seconds have passed, so a run that does not
fit in one command finishes when the same command is given again. Results go
to bench/results/<date>-<label>.{md,json,png} (quick runs: bench/.work/results).
docs/benchmarks.md describes the systems, metrics and files.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import shutil
import subprocess
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

ALL_WORKLOADS = list(report.WORKLOAD_ORDER)
QUICK_WORKLOADS = ["mlp", "gpt2_decode"]
CPP_SYSTEMS = ("aotirt", "aotirt-cudagraph", "libtorch-aoti")
PY_SYSTEMS = ("eager", "torch.compile", "torch.compile-reduce-overhead")
# Per-row time guesses, used only to decide whether to start a row before the
# budget runs out.
ROW_GUESS_S = {"aotirt": 20, "aotirt-cudagraph": 20, "libtorch-aoti": 25, "eager": 30,
               "torch.compile": 120, "torch.compile-reduce-overhead": 120}
EXPORT_GUESS_S = 90
# Default timed and warm-up runs per workload (from the workload table),
# chosen so each (workload, system) times for a few seconds at most.
QUICK_ITERS, QUICK_WARMUP = 20, 3

_print_lock = threading.Lock()


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
        self.workloads = self._pick(args.workloads, QUICK_WORKLOADS if args.quick else ALL_WORKLOADS,
                                    ALL_WORKLOADS, "workload")
        self.systems = self._pick(args.systems, report.SYSTEMS, report.SYSTEMS, "system")
        build = Path(args.aotirt_build)
        self.aotirt_build = build if build.is_absolute() else (REPO / build)
        self.aotirt_bin = self.aotirt_build / "bin" / "aotirt"
        self.runner_build = self.work / "libtorch_runner"
        self.runner_bin = self.runner_build / "aoti_libtorch_runner"
        self._env_cache = None
        self._help_cache: dict = {}

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

    def base_env(self) -> dict:
        env = dict(os.environ)
        env["PYTHONUNBUFFERED"] = "1"
        if self.args.threads:
            for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
                env[var] = str(self.args.threads)
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

    def aotirt_env(self) -> dict:
        env = self.base_env()
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

    # ---- libtorch runner ----

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
        m = self.manifest(workload)
        return bool(m and m.get("package") and (self.wdir(workload) / m["package"]).exists())

    def input_args(self, workload: str, flag: str, typed: bool) -> list:
        m = self.manifest(workload)
        out = []
        for spec in m["inputs"]:
            f = str(self.wdir(workload) / spec["file"])
            out += [flag, f"{f}:{spec['dtype']}" if typed else f]
        return out

    def _export_one(self, workload: str, lean: bool, default: bool) -> str | None:
        flags = (["--lean"] if lean else []) + (["--default"] if default else [])
        cmd = [self.python, str(HERE / "worker.py"), "export", str(self.wdir(workload)), "--workload", workload,
               "--device", self.device] + (["--quick"] if self.quick else []) + flags
        timeout = max(30.0, min(self.args.row_timeout_s, self.budget.left()))
        start = time.monotonic()
        obs = procmon.run_observed(cmd, env=self.base_env(), timeout_s=timeout)
        if not obs.ok():
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
        if "libtorch-aoti" in self.systems:
            runner_error = self.build_runner()
            if runner_error:
                log(f"libtorch runner unavailable: {runner_error}")
                (self.tagdir / "runner_error.txt").write_text(runner_error)
            elif (self.tagdir / "runner_error.txt").exists():
                (self.tagdir / "runner_error.txt").unlink()
        todo = [w for w in self.workloads if self.args.force or not self.exported(w)]
        log(f"export: {len(self.workloads) - len(todo)} of {len(self.workloads)} workloads already exported"
            + (f"; exporting {', '.join(todo)}" if todo else ""))
        failures = {}

        check = "libtorch-aoti" in self.systems and not runner_error

        def job(w):
            if not self.budget.allows(EXPORT_GUESS_S):
                return w, "budget"
            err = self._export_one(w, lean=True, default=self.args.libtorch_package == "default")
            if err:
                return w, err
            if check:
                # Here, so that a default-options export it may need runs
                # alongside the other exports.
                self._check_libtorch(w)
            return w, None

        with ThreadPoolExecutor(max_workers=max(1, self.args.export_jobs)) as pool:
            for w, err in pool.map(job, todo):
                if err and err != "budget":
                    failures[w] = err
                    log(f"export of {w} failed: {err}")
        if check:  # packages exported by an earlier call
            for w in self.workloads:
                if self.exported(w) and self.budget.allows(30):
                    self._check_libtorch(w)
        done = [w for w in self.workloads if self.exported(w)]
        log(f"export: {len(done)} of {len(self.workloads)} workloads ready")
        return len(done) == len(self.workloads)

    # ---- measure ----

    def row_path(self, workload: str, system: str) -> Path:
        return self.rows_dir / f"{workload}__{system}.json"

    def needs_row(self, workload: str, system: str) -> bool:
        p = self.row_path(workload, system)
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

            n, w = wl.WORKLOADS[workload].iters, wl.WORKLOADS[workload].warmup
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

    def measure_aotirt(self, workload: str, graph: bool) -> dict:
        d = {"workload": workload, "system": "aotirt-cudagraph" if graph else "aotirt"}
        if not self.aotirt_bin.exists():
            return {**d, "status": "skipped", "reason": f"{self.aotirt_bin} not found"}
        help_bench = self.help_text("bench")
        if graph:
            if self.device != "cuda":
                return {**d, "status": "skipped", "reason": "CUDA graphs need a CUDA device"}
            if "--cuda-graph" not in help_bench:
                return {**d, "status": "skipped", "reason": "`aotirt bench` has no --cuda-graph option in this build"}
        m = self.manifest(workload)
        pkg = str(self.wdir(workload) / m["package"])
        n, w = self.iters(workload)
        env = self.aotirt_env()
        timeout, budget_bound = self._row_timeout()
        cmd = [str(self.aotirt_bin), "bench", pkg, "--device", self.device, "--json", "--iters", str(n),
               "--warmup", str(w)] + (["--cuda-graph"] if graph else [])
        cmd += self.input_args(workload, "--input", typed=False)
        obs = procmon.run_observed(cmd, env=env, timeout_s=timeout, gpu=self._gpu(), watch_maps=True)
        d["commands"] = [" ".join(obs.cmd)]
        if not obs.ok():
            if obs.timed_out and budget_bound:
                return {**d, "status": "budget"}
            return {**d, "status": "failed", "reason": "aotirt bench " + obs.failure(),
                    "missing_shims": m.get("missing_shims", [])}
        j = self._last_json(obs.stdout) or {}
        d.update({k: j.get(k) for k in ("median_us", "p90_us", "p99_us", "min_us", "max_us", "mean_us", "load_ms",
                                         "first_run_us", "iters", "warmup")})
        d["synchronized"] = j.get("synchronized")
        d["peak_rss_mb"] = j.get("peak_rss_mb") or obs.max_rss_mb
        d["peak_rss_source"] = "aotirt bench" if j.get("peak_rss_mb") else "wait4 ru_maxrss"
        d["peak_device_mb"] = obs.peak_device_mb
        d["device_method"] = obs.device_method
        d["mapped_libs"] = sorted(obs.mapped_libs)
        d["bench_wall_s"] = obs.wall_s

        # Cold start: a fresh `aotirt run` process, exec to its first output line.
        help_run = self.help_text("run")
        if graph and "--cuda-graph" not in help_run:
            d["cold_note"] = "`aotirt run` has no --cuda-graph option: cold start not measured with graphs"
        else:
            outdir = self.wdir(workload) / "outputs" / d["system"]
            shutil.rmtree(outdir, ignore_errors=True)
            cmd = [str(self.aotirt_bin), "run", pkg, "--device", self.device, "-o", str(outdir)]
            cmd += (["--cuda-graph"] if graph else []) + self.input_args(workload, "-i", typed=False)
            # Its stdout is a pipe here; line buffering lets the first line
            # show when it is printed rather than at exit.
            if shutil.which("stdbuf"):
                cmd = ["stdbuf", "-oL"] + cmd
            else:
                d["cold_note"] = "no stdbuf: aotirt run's first line is seen only when it exits"
            timeout, _ = self._row_timeout()
            cold = procmon.run_observed(cmd, env=env, timeout_s=timeout, marker=r"^output0:")
            d["commands"].append(" ".join(cold.cmd))
            if cold.ok():
                d["cold_start_s"] = cold.marker_s
                d["cold_exit_s"] = cold.wall_s
                d["cold_peak_rss_mb"] = cold.max_rss_mb
                d["rel_err_vs_reference"] = self._compare(workload, outdir / "output0.npy")
            else:
                d["cold_note"] = "aotirt run " + cold.failure()
        d["status"] = "ok"
        return d

    def measure_libtorch(self, workload: str) -> dict:
        d = {"workload": workload, "system": "libtorch-aoti"}
        err_file = self.tagdir / "runner_error.txt"
        if err_file.exists():
            return {**d, "status": "skipped", "reason": "libtorch runner not built: " + err_file.read_text()}
        if not self.runner_bin.exists():
            return {**d, "status": "skipped", "reason": "libtorch runner not built (run the export phase)"}
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
        cmd = [str(self.runner_bin), pkg, "--device", self.device, "--json", "--iters", str(n), "--warmup", str(w)]
        cmd += self.input_args(workload, "--input", typed=True)
        obs = procmon.run_observed(cmd, env=self.base_env(), timeout_s=timeout, gpu=self._gpu())
        d["commands"] = [" ".join(obs.cmd)]
        if not obs.ok():
            if obs.timed_out and budget_bound:
                return {**d, "status": "budget"}
            return {**d, "status": "failed", "reason": "libtorch runner " + obs.failure()}
        j = self._last_json(obs.stdout) or {}
        d.update({k: j.get(k) for k in ("median_us", "p90_us", "p99_us", "min_us", "max_us", "mean_us", "load_ms",
                                         "first_run_us", "iters", "warmup", "synchronized")})
        d["peak_rss_mb"] = j.get("peak_rss_mb") or obs.max_rss_mb
        d["peak_rss_source"] = "VmHWM of the runner"
        d["peak_device_mb"] = obs.peak_device_mb
        d["device_method"] = obs.device_method
        d["mapped_libs"] = [p for p, _ in j.get("mapped_libs", [])]
        d["bench_wall_s"] = obs.wall_s

        outdir = self.wdir(workload) / "outputs" / "libtorch-aoti"
        shutil.rmtree(outdir, ignore_errors=True)
        outdir.mkdir(parents=True)
        cmd = [str(self.runner_bin), pkg, "--device", self.device, "--iters", "1", "--warmup", "0",
               "--output-dir", str(outdir)] + self.input_args(workload, "--input", typed=True)
        timeout, _ = self._row_timeout()
        cold = procmon.run_observed(cmd, env=self.base_env(), timeout_s=timeout, marker=r"^first_output")
        d["commands"].append(" ".join(cold.cmd))
        if cold.ok():
            d["cold_start_s"] = cold.marker_s
            d["cold_exit_s"] = cold.wall_s
            d["cold_peak_rss_mb"] = cold.max_rss_mb
            d["rel_err_vs_reference"] = self._compare(workload, outdir / "output0.npy")
        else:
            d["cold_note"] = "libtorch runner " + cold.failure()
        d["status"] = "ok"
        return d

    def measure_python(self, workload: str, system: str) -> dict:
        d = {"workload": workload, "system": system}
        n, w = self.iters(workload)
        timeout, budget_bound = self._row_timeout()
        cmd = [self.python, str(HERE / "worker.py"), "python-system", str(self.wdir(workload)), "--system", system,
               "--device", self.device, "--iters", str(n), "--warmup", str(w)]
        obs = procmon.run_observed(cmd, env=self.base_env(), timeout_s=timeout, gpu=self._gpu(),
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
        # that includes compiling (with whatever inductor cache the machine has).
        d["cold_start_s"] = obs.marker_s
        d["cold_exit_s"] = None
        d["peak_rss_source"] = "VmHWM of the worker process"
        if d.get("peak_rss_mb") is None:
            d["peak_rss_mb"] = obs.max_rss_mb
        d["peak_device_mb"] = obs.peak_device_mb
        d["device_method"] = obs.device_method
        d["process_wall_s"] = obs.wall_s
        d["status"] = "ok"
        return d

    def measure_row(self, workload: str, system: str) -> dict:
        if system in ("aotirt", "aotirt-cudagraph"):
            return self.measure_aotirt(workload, graph=system == "aotirt-cudagraph")
        if system == "libtorch-aoti":
            return self.measure_libtorch(workload)
        return self.measure_python(workload, system)

    def phase_measure(self) -> bool:
        """True when every selected row has been measured."""
        self.rows_dir.mkdir(parents=True, exist_ok=True)
        self.environment()
        if "libtorch-aoti" in self.systems and not (self.tagdir / "runner_error.txt").exists():
            err = self.build_runner()  # a no-op when it is up to date
            if err:
                log(f"libtorch runner unavailable: {err}")
                (self.tagdir / "runner_error.txt").write_text(err)
        order = [s for s in report.SYSTEMS if s in self.systems]
        ready = [w for w in self.workloads if self.exported(w)]
        complete = len(ready) == len(self.workloads)
        if not complete:
            log(f"measure: not exported yet, left out: {', '.join(w for w in self.workloads if w not in ready)}")
        todo = [(w, s) for s in order for w in ready if self.needs_row(w, s)]
        log(f"measure: {len(ready) * len(order) - len(todo)} rows already measured, {len(todo)} to go")
        for w, s in todo:
            if not self.budget.allows(ROW_GUESS_S[s]):
                log(f"budget: {self.budget.left():.0f} s left; stopping before {w}/{s}. Run the same command "
                    "again to continue.")
                complete = False
                break
            start = time.monotonic()
            d = self.measure_row(w, s)
            if d.get("status") == "budget":
                log(f"{w}/{s}: stopped at the budget; it will be measured by the next run")
                complete = False
                break
            d["measured_at"] = datetime.datetime.now().isoformat(timespec="seconds")
            self.row_path(w, s).write_text(json.dumps(d, indent=1))
            msg = (f"median {d.get('median_us'):.1f} us, p99 {d.get('p99_us'):.1f} us, cold "
                   f"{_s(d.get('cold_start_s'))} s, RSS {_s(d.get('peak_rss_mb'), 0)} MB"
                   if d.get("status") == "ok" and d.get("median_us") is not None
                   else f"{d.get('status')}: {d.get('reason', '')[:300]}")
            log(f"{w}/{s} ({time.monotonic() - start:.0f} s): {msg}")
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
        env = self.environment()
        skip = re.compile(r"cublas|cudnn", re.I)

        def size(p: Path) -> int:
            return p.stat().st_size

        aot_files = {}
        lib = self.aotirt_build / "lib"
        real = {}
        for p in sorted(lib.glob("libaotirt.so*")):
            if p.is_file():
                real[p.resolve()] = p.name
        for rp, name in real.items():
            aot_files[name] = size(rp)
        deps = lib / "deps"
        if deps.is_dir():
            for p in sorted(deps.iterdir()):
                if p.is_file() and not skip.search(p.name):
                    aot_files["deps/" + p.name] = size(p)
        elif real:
            # No bundle: count the non-system libraries it links, as
            # scripts/bundle-runtime.sh would copy them.
            for name, path in _linked_libraries(next(iter(real))).items():
                if not skip.search(name):
                    aot_files["linked/" + name] = size(Path(path))
        torch_lib = Path(env["torch_lib"])
        torch_files = {p.name: size(p) for p in sorted(torch_lib.rglob("*"))
                       if p.is_file() and not p.is_symlink() and not skip.search(p.name)}
        fp = {
            "unit": "MiB",
            "aotirt_mb": sum(aot_files.values()) / MIB,
            "aotirt_files": {k: round(v / MIB, 2) for k, v in aot_files.items()},
            "aotirt_cli_mb": size(self.aotirt_bin) / MIB if self.aotirt_bin.exists() else None,
            "libtorch_mb": sum(torch_files.values()) / MIB,
            "libtorch_dir": str(torch_lib),
            "left_out": "cuBLAS and cuDNN (both runtimes need them); aotirt's CLI binary is listed apart",
            "aotirt_has_bundled_deps": deps.is_dir(),
        }
        fp["ratio"] = fp["aotirt_mb"] / fp["libtorch_mb"] if fp["libtorch_mb"] else None
        # What the libtorch runner process actually mapped from torch's folder.
        for key, det in details.items():
            if key.endswith("/libtorch-aoti") and det.get("mapped_libs"):
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

    def phase_report(self) -> list:
        env = self.environment()
        details, rows = {}, []
        # Everything measured for this mode, not only this call's selection.
        default = QUICK_WORKLOADS if self.quick else ALL_WORKLOADS
        report_workloads = [w for w in ALL_WORKLOADS if w in default or w in self.workloads]
        self.report_workloads = report_workloads
        for w in report_workloads:
            for s in report.SYSTEMS:
                p = self.row_path(w, s)
                d = json.loads(p.read_text()) if p.exists() else {"workload": w, "system": s, "status": "missing",
                                                                    "reason": "not measured yet"}
                details[f"{w}/{s}"] = d
                rows.append(report.schema_row(d))
        ratios = report.compute_ratios(rows)
        try:
            footprint = self.footprint(details)
        except (OSError, KeyError) as e:
            footprint = {"error": str(e)}
        unsynced = {tuple(k.split("/", 1)) for k, d in details.items()
                    if d.get("status") == "ok" and self.device != "cpu" and d.get("synchronized") is not True}
        targets = report.evaluate_targets(rows, ratios, footprint, unsynchronized=unsynced)
        commit, commit_source = self.commit()
        notes = self.notes(details, commit_source)
        label = self.args.label or ("h200" if self.device == "cuda" else "cpu") + ("-quick" if self.quick else "")
        date = datetime.date.today().isoformat()
        doc = {
            "commit": commit,
            "device": env.get("device_name", self.device),
            "rows": rows,
            "footprint": footprint,
            "physical_limit": self.physical_limit(rows),
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
        if self.args.notes_md:
            doc["extra_markdown"] = Path(self.args.notes_md).read_text()
        if self.args.results_dir:
            out_dir = Path(self.args.results_dir)
        elif self.quick or self.device != "cuda":
            out_dir = self.work / "results"
        else:
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
            if m.get("missing_shims"):
                notes.append(f"{w}: the package imports shims aotirt lacks: {', '.join(m['missing_shims'])}")
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
            "cold start: a fresh process, exec to its first output on the host (aotirt: `aotirt run`; "
            "libtorch: the runner with one run; Python systems: import torch, build the model, "
            "compile if any, run once); the page cache is warm, and torch.compile uses whatever "
            "inductor cache the machine holds")
        notes.append(
            "peak RSS: the measuring process's own peak (VmHWM or wait4); peak device memory: the process's "
            "usage as NVML / nvidia-smi reports it, CUDA context included, polled every 20 ms")
        notes.append(
            "load: aotirt and libtorch, the time to load the package; Python systems, the time to build "
            "the model and move it to the device (torch.compile compiles at the first run, see first_run_us)")
        notes.append(
            f"TF32: cudnn.allow_tf32={env.get('cudnn_allow_tf32')}, matmul.allow_tf32={env.get('matmul_allow_tf32')} "
            "(PyTorch defaults, in eager, torch.compile and libtorch's runner alike)")
        return notes

    def print_summary(self, doc: dict) -> None:
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


def _linked_libraries(lib: Path) -> dict:
    """{name: path} of the non-system shared libraries `lib` links, by ldd."""
    try:
        out = subprocess.run(["ldd", str(lib)], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return {}
    found = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[1] == "=>" and parts[2].startswith("/") and not SYSTEM_LIBS.match(parts[0]):
            found[parts[0]] = parts[2]
    return found


def _s(v, digits=2):
    return "-" if v is None else f"{v:.{digits}f}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("phase", choices=["all", "export", "measure", "report"])
    ap.add_argument("--device", choices=["cuda", "cpu"], default="cuda")
    ap.add_argument("--quick", action="store_true", help="mlp and a tiny GPT-2, few iterations")
    ap.add_argument("--workloads", help="comma-separated subset (default: all; quick: mlp,gpt2_decode)")
    ap.add_argument("--systems", help="comma-separated subset of " + ", ".join(report.SYSTEMS))
    ap.add_argument("--budget-s", type=float, default=540,
                    help="stop starting new work after this many seconds (default 540)")
    ap.add_argument("--row-timeout-s", type=float, default=420, help="limit for one export or one row")
    ap.add_argument("--force", action="store_true", help="redo exports / rows that exist")
    ap.add_argument("--retry-failed", action="store_true", help="measure again the rows that failed or were skipped")
    ap.add_argument("--iters", type=int, help="timed runs (default: per workload; quick: 20)")
    ap.add_argument("--warmup", type=int, help="warm-up runs (default: per workload; quick: 3)")
    ap.add_argument("--aotirt-build", default="build", help="aotirt build folder with bin/ and lib/ (default build)")
    ap.add_argument("--work", default=str(HERE / ".work"), help="work folder (default bench/.work)")
    ap.add_argument("--commit", help="commit hash to stamp (default: git, else $AOTIRT_COMMIT)")
    ap.add_argument("--label", help="results label (default h200, or cpu-quick / h200-quick)")
    ap.add_argument("--results-dir", help="where results go (default bench/results; quick: bench/.work/results)")
    ap.add_argument("--copy-to", help="also copy the result files to this folder")
    ap.add_argument("--libtorch-package", choices=["auto", "lean", "default"], default="auto",
                    help="package for libtorch's runner: auto = the aotirt package when the runner can run it, "
                         "else one exported with default options")
    ap.add_argument("--export-jobs", type=int, help="exports run at once (default: 3 on cuda, 2 on cpu)")
    ap.add_argument("--runner-build", choices=["auto", "cmake", "gxx"], default="auto",
                    help="how to build the libtorch runner: auto = CMake, then plain g++ if CMake fails")
    ap.add_argument("--threads", type=int,
                    help="CPU threads for every measured process (OMP_NUM_THREADS, ...); default: unset, "
                         "but 1 for --device cpu --quick, where a busy small machine makes OpenMP spin")
    ap.add_argument("--notes-md", help="markdown file appended to the results (e.g. optimisations with figures)")
    args = ap.parse_args()
    if args.threads is None and args.device == "cpu" and args.quick:
        args.threads = 1
    if args.export_jobs is None:
        args.export_jobs = 3 if args.device == "cuda" else 2

    h = Harness(args)
    log(f"{args.phase}: device {args.device}{' (quick)' if args.quick else ''}, workloads "
        f"{','.join(h.workloads)}, systems {','.join(h.systems)}, budget {args.budget_s:.0f} s, work {h.tagdir}")
    complete = True
    if args.phase in ("all", "export"):
        complete = h.phase_export() and complete
    if args.phase in ("all", "measure"):
        complete = h.phase_measure() and complete
    if args.phase in ("all", "measure", "report"):
        h.phase_report()
    if args.phase != "report":
        print("COMPLETE" if complete else "INCOMPLETE: run the same command again to continue", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
