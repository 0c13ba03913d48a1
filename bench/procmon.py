# Runs one measured process and watches it from outside: the time from spawn
# to a marker line on its stdout (cold start), its peak resident set (from
# wait4), its peak device memory (NVML, or nvidia-smi when NVML's Python
# binding is missing), and the shared libraries it mapped. Every system is
# measured this way, so the numbers mean the same thing for each.

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field


@dataclass
class Observed:
    cmd: list
    returncode: int | None = None
    timed_out: bool = False
    stdout: str = ""
    stderr: str = ""
    wall_s: float = 0.0
    marker_s: float | None = None  # spawn -> first stdout line matching the marker
    # wait4's ru_maxrss. Linux keeps in it the peak of the memory the child
    # had before exec, which is the harness's own at fork (500-1100 MB here),
    # so it is at least that: not a measure of a small process.
    max_rss_mb: float | None = None
    # The largest VmHWM read from /proc while the process ran (every poll):
    # its own peak, up to the last reading before its exit.
    polled_hwm_mb: float | None = None
    peak_device_mb: float | None = None
    device_method: str | None = None
    mapped_libs: set = field(default_factory=set)
    not_started: str | None = None  # why it was never started (the harness is stopping)

    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out and self.not_started is None

    def failure(self) -> str:
        if self.not_started:
            return f"not started: {self.not_started}"
        if self.timed_out:
            return f"timed out after {self.wall_s:.0f} s"
        tail = (self.stderr.strip() or self.stdout.strip()).splitlines()[-6:]
        return f"exit {self.returncode}: " + " | ".join(tail)


class GpuMemory:
    """Reads per-process and total device memory of one GPU."""

    def __init__(self, index: int = 0):
        self.index = index
        self.nvml = None
        self.handle = None
        self.smi = shutil.which("nvidia-smi")
        try:
            import pynvml  # nvidia-ml-py

            pynvml.nvmlInit()
            self.handle = pynvml.nvmlDeviceGetHandleByIndex(index)
            self.nvml = pynvml
        except Exception:
            self.nvml = None

    @property
    def available(self) -> bool:
        return self.nvml is not None or self.smi is not None

    def total_used_mb(self) -> float | None:
        if self.nvml is not None:
            try:
                return self.nvml.nvmlDeviceGetMemoryInfo(self.handle).used / 2**20
            except Exception:
                return None
        if self.smi:
            out = _run_quiet([self.smi, f"--id={self.index}", "--query-gpu=memory.used",
                              "--format=csv,noheader,nounits"])
            try:
                return float(out.strip().splitlines()[0])
            except (ValueError, IndexError):
                return None
        return None

    def per_process_mb(self) -> dict:
        if self.nvml is not None:
            try:
                procs = self.nvml.nvmlDeviceGetComputeRunningProcesses(self.handle)
                return {p.pid: (p.usedGpuMemory or 0) / 2**20 for p in procs}
            except Exception:
                return {}
        if self.smi:
            out = _run_quiet([self.smi, f"--id={self.index}", "--query-compute-apps=pid,used_memory",
                              "--format=csv,noheader,nounits"])
            found = {}
            for line in out.splitlines():
                parts = [p.strip() for p in line.split(",")]
                if len(parts) == 2 and parts[0].isdigit():
                    try:
                        found[int(parts[0])] = float(parts[1])
                    except ValueError:
                        pass
            return found
        return {}


# Process groups of the commands running now, so that a harness that is told
# to stop (SIGTERM, SIGINT) ends them instead of leaving them running.
_live: dict = {}
_live_lock = threading.RLock()  # reentrant: stop_all() may run in a signal handler
_stopping = threading.Event()


def stopping() -> bool:
    """True once stop_all() ran: results from now on are not to be kept."""
    return _stopping.is_set()


def stop_all() -> int:
    """Kills every running command's process group and refuses to start new
    ones; returns how many groups were signalled."""
    _stopping.set()
    with _live_lock:
        pids = list(_live)
    for pid in pids:
        try:
            os.killpg(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    return len(pids)


def live_count() -> int:
    with _live_lock:
        return len(_live)


def _pdeathsig_prefix() -> list:
    """`setpriv --pdeathsig KILL` when available: the command is killed if
    the thread that started it dies, even when the harness is killed with
    SIGKILL and cannot clean up."""
    global _PDEATHSIG
    if _PDEATHSIG is None:
        _PDEATHSIG = []
        exe = shutil.which("setpriv")
        if exe:
            try:
                out = subprocess.run([exe, "--help"], capture_output=True, text=True, timeout=10)
                if "--pdeathsig" in out.stdout + out.stderr:
                    _PDEATHSIG = [exe, "--pdeathsig", "KILL", "--"]
            except (OSError, subprocess.SubprocessError):
                pass
    return list(_PDEATHSIG)


_PDEATHSIG = None


def _run_quiet(cmd) -> str:
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=10).stdout
    except Exception:
        return ""


def _descendants(pid: int) -> set:
    """pid and its live descendants (torch.compile starts worker processes)."""
    children: dict = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
            ppid = int(stat[stat.rfind(")") + 2 :].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append(int(entry))
    out, todo = set(), [pid]
    while todo:
        p = todo.pop()
        if p in out:
            continue
        out.add(p)
        todo.extend(children.get(p, []))
    return out


def _read_hwm_mb(pid: int) -> float | None:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024.0
    except (OSError, ValueError, IndexError):
        pass
    return None


def _read_maps(pid: int, into: set) -> None:
    try:
        with open(f"/proc/{pid}/maps") as f:
            for line in f:
                i = line.find("/")
                if i >= 0 and ".so" in line:
                    into.add(line[i:].rstrip("\n"))
    except OSError:
        pass


def run_observed(
    cmd: list,
    *,
    env: dict | None = None,
    cwd: str | None = None,
    timeout_s: float = 600,
    marker: str | None = None,
    gpu: GpuMemory | None = None,
    poll_s: float = 0.02,
    watch_maps: bool = False,
    die_with_parent: bool = False,
) -> Observed:
    """Run `cmd` to completion while watching it; never raises for the
    command's own failure (see Observed.ok()). die_with_parent: start it
    under `setpriv --pdeathsig KILL` where available (for unmeasured helper
    processes; measured ones are started directly)."""
    obs = Observed(cmd=[str(c) for c in cmd])
    if _stopping.is_set():
        obs.not_started = "the harness is stopping"
        return obs
    argv = (_pdeathsig_prefix() if die_with_parent else []) + obs.cmd
    pattern = re.compile(marker) if marker else None
    stderr_file = tempfile.TemporaryFile(mode="w+b")
    baseline = gpu.total_used_mb() if gpu and gpu.available else None
    start = time.perf_counter()
    with _live_lock:
        if _stopping.is_set():
            stderr_file.close()
            obs.not_started = "the harness is stopping"
            return obs
        proc = subprocess.Popen(
            argv,
            stdout=subprocess.PIPE,
            stderr=stderr_file,
            env=env,
            cwd=cwd,
            start_new_session=True,  # so a timeout ends its workers too
        )
        _live[proc.pid] = proc
    lines: list = []

    def read_stdout():
        for raw in iter(proc.stdout.readline, b""):
            now = time.perf_counter()
            line = raw.decode(errors="replace")
            lines.append(line)
            if pattern and obs.marker_s is None and pattern.search(line):
                obs.marker_s = now - start

    reader = threading.Thread(target=read_stdout, daemon=True)
    reader.start()

    done = threading.Event()
    peaks = {"pid": None, "delta": None}

    def watch():
        last_maps = 0.0
        family, last_family = {proc.pid}, 0.0
        while not done.is_set():
            if gpu and gpu.available:
                per = gpu.per_process_mb()
                if per:
                    if time.perf_counter() - last_family > 0.5:
                        family, last_family = _descendants(proc.pid), time.perf_counter()
                    mine = sum(v for p, v in per.items() if p in family)
                    if mine and (peaks["pid"] is None or mine > peaks["pid"]):
                        peaks["pid"] = mine
                total = gpu.total_used_mb()
                if total is not None and baseline is not None:
                    d = total - baseline
                    if peaks["delta"] is None or d > peaks["delta"]:
                        peaks["delta"] = d
            hwm = _read_hwm_mb(proc.pid)
            if hwm is not None and (obs.polled_hwm_mb is None or hwm > obs.polled_hwm_mb):
                obs.polled_hwm_mb = hwm
            now = time.perf_counter()
            if watch_maps and now - last_maps > 0.2:
                _read_maps(proc.pid, obs.mapped_libs)
                last_maps = now
            done.wait(poll_s)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()

    def kill_group():
        obs.timed_out = True
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    timer = threading.Timer(timeout_s, kill_group)
    timer.start()
    try:
        # wait4 gives the child's own peak RSS; Popen.wait would lose it.
        # Waits for the exit without reaping: while the leader is a zombie
        # its group id cannot be reused, so the group can be ended safely
        # (helpers it left behind, such as compile workers, end with it).
        os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOWAIT)
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        _, status, usage = os.wait4(proc.pid, 0)
    except BaseException:
        # Interrupted (the harness is being stopped): end the group, reap it.
        timer.cancel()
        kill_group()
        try:
            os.wait4(proc.pid, 0)
        except ChildProcessError:
            pass
        with _live_lock:
            _live.pop(proc.pid, None)
        done.set()
        raise
    finally:
        timer.cancel()
    with _live_lock:
        _live.pop(proc.pid, None)
    obs.wall_s = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    obs.returncode = proc.returncode
    obs.max_rss_mb = usage.ru_maxrss / 1024.0
    done.set()
    watcher.join()
    reader.join(timeout=10)
    obs.stdout = "".join(lines)
    stderr_file.seek(0)
    obs.stderr = stderr_file.read().decode(errors="replace")
    stderr_file.close()
    if peaks["pid"] is not None:
        obs.peak_device_mb, obs.device_method = peaks["pid"], "nvml-per-process" if gpu.nvml else "nvidia-smi-per-process"
    elif peaks["delta"] is not None:
        obs.peak_device_mb, obs.device_method = max(peaks["delta"], 0.0), "device-total-delta"
    return obs
