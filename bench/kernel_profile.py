#!/usr/bin/env python3
"""Where one aotirt run spends its GPU time, kernel by kernel, from Nsight
Compute (nsys does not run on the H200 machines; ncu does, with
--clock-control none).

  python bench/kernel_profile.py profile --workloads resnet50_b1,vit_b16_b1 [--cuda-graph]
  python bench/kernel_profile.py profile --workloads resnet50_b32 --system libtorch-aoti
  python bench/kernel_profile.py summarize bench/.work/kernels/resnet50_b1.csv [--json]

`profile` exports the workloads that are missing (as bench/run.py export does), runs
`aotirt bench PKG --iters 1 --warmup 1` (with `--system libtorch-aoti`,
libtorch's runner on the package the harness gives it, so both runtimes'
kernels can be set side by side) under
`ncu --clock-control none --metrics gpu__time_duration.sum --csv`, keeps the
table under --out (default bench/.work/kernels/<workload>[-graph|-libtorch].csv) and
prints a summary of the last run: each kernel with its launches and its total
and mean microseconds, largest total first. The last run is the final period
of the launch sequence (a run repeats the same kernels), so the load and the
warm-up do not count. `summarize` prints the same from a saved table.

ncu times each kernel alone, with caches flushed before it (its default
--cache-control all), so the sums exceed a run's latency; they rank where the
GPU time goes, and the count of launches is exact. `--cache-control none`
leaves the caches as the kernels before left them, as in a run (tables named
...-warm).
"""

from __future__ import annotations

import argparse
import csv
import glob
import io
import json
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

METRIC = "gpu__time_duration.sum"
# ncu's unit names for durations, in microseconds.
UNITS_US = {"ns": 1e-3, "nsecond": 1e-3, "us": 1.0, "usecond": 1.0, "ms": 1e3, "msecond": 1e3, "s": 1e6,
            "second": 1e6}


class ProfileError(Exception):
    """A problem with the input or the tools, worded for the user."""


@dataclass
class Kernel:
    name: str
    grid: str
    block: str
    us: float


def parse_ncu_csv(text: str, source: str = "the ncu output") -> list[Kernel]:
    """Kernels in launch order from `ncu --csv` output. Lines before ncu's
    table (the profiled program's own output, ncu's ==PROF== notes) are
    skipped; a table without the duration metric is an error."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith('"ID","Process ID"')), None)
    if start is None:
        notes = [line for line in lines if line.startswith("==ERROR==") or line.startswith("==WARNING==")]
        hint = f" (ncu said: {notes[-1]})" if notes else ""
        raise ProfileError(f"{source} holds no ncu table: no line starts with the \"ID\",\"Process ID\" "
                           f"header{hint}")
    rows = list(csv.reader(io.StringIO("\n".join(lines[start:]))))
    header = rows[0]
    need = ["Kernel Name", "Grid Size", "Block Size", "Metric Name", "Metric Unit", "Metric Value"]
    missing = [c for c in need if c not in header]
    if missing:
        raise ProfileError(f"{source}: the ncu table lacks the column(s) {', '.join(missing)}")
    col = {c: header.index(c) for c in need}
    kernels = []
    for n, row in enumerate(rows[1:], start=start + 2):
        if len(row) != len(header) or row[col["Metric Name"]] != METRIC:
            continue
        unit = row[col["Metric Unit"]].strip()
        if unit not in UNITS_US:
            raise ProfileError(f"{source}, line {n}: unknown duration unit {unit!r}")
        try:
            value = float(row[col["Metric Value"]].replace(",", ""))
        except ValueError:
            raise ProfileError(f"{source}, line {n}: {row[col['Metric Value']]!r} is not a number") from None
        kernels.append(Kernel(row[col["Kernel Name"]], row[col["Grid Size"]], row[col["Block Size"]],
                              value * UNITS_US[unit]))
    if not kernels:
        raise ProfileError(f"{source}: the ncu table has no {METRIC} rows (profile with --metrics {METRIC})")
    return kernels


def last_run(kernels: list[Kernel]) -> tuple[list[Kernel], bool]:
    """The kernels of the last run and True, or all of them and False when
    the sequence does not end in two equal runs. The run is the longest tail
    equal to the launches (names, grids, blocks) just before it, cut to its
    own period when it is two or more runs over."""
    keys = [(k.name, k.grid, k.block) for k in kernels]
    n = len(keys)
    p = next((p for p in range(n // 2, 0, -1) if keys[n - p:] == keys[n - 2 * p:n - p]), 0)
    if p == 0:
        return kernels, False
    block = keys[n - p:]
    p = next((d for d in range(1, p) if p % d == 0 and block == block[:d] * (p // d)), p)
    return kernels[n - p:], True


def summarize(kernels: list[Kernel]) -> dict:
    groups: dict[str, dict] = {}
    for k in kernels:
        g = groups.setdefault(k.name, {"kernel": k.name, "launches": 0, "total_us": 0.0})
        g["launches"] += 1
        g["total_us"] += k.us
    rows = sorted(groups.values(), key=lambda g: -g["total_us"])
    for g in rows:
        g["mean_us"] = g["total_us"] / g["launches"]
    return {"launches": len(kernels), "total_us": sum(k.us for k in kernels), "kernels": rows}


def format_summary(summary: dict, title: str, whole: bool, top: int = 25, flushed: bool = True) -> str:
    out = [f"### {title}", ""]
    scope = "the whole profile (no two equal runs at its end)" if whole else "the last run"
    caches = "caches flushed" if flushed else "caches as the kernels before left them"
    out.append(f"{summary['launches']} launches in {scope}, {summary['total_us']:.1f} us by ncu "
               f"(each kernel alone, {caches})")
    out += ["", "| launches | total us | mean us | share | kernel |", "|---|---|---|---|---|"]
    total = summary["total_us"] or 1.0
    for g in summary["kernels"][:top]:
        name = g["kernel"] if len(g["kernel"]) <= 110 else g["kernel"][:107] + "..."
        out.append(f"| {g['launches']} | {g['total_us']:.1f} | {g['mean_us']:.2f} | "
                   f"{100 * g['total_us'] / total:.1f}% | `{name}` |")
    left = summary["kernels"][top:]
    if left:
        out.append(f"| {sum(g['launches'] for g in left)} | {sum(g['total_us'] for g in left):.1f} | | | "
                   f"{len(left)} other kernels |")
    return "\n".join(out) + "\n"


def summarize_file(path: Path, as_json: bool) -> str:
    if not path.is_file():
        raise ProfileError(f"{path}: no such file")
    kernels = parse_ncu_csv(path.read_text(errors="replace"), str(path))
    run, found = last_run(kernels)
    summary = summarize(run)
    if as_json:
        return json.dumps({"source": str(path), "last_run": found, **summary}, indent=1) + "\n"
    return format_summary(summary, path.stem, not found)


def find_ncu() -> str:
    found = shutil.which("ncu") or next(iter(sorted(glob.glob("/usr/local/cuda*/bin/ncu"))), None)
    if not found:
        raise ProfileError("ncu (Nsight Compute) was not found on PATH or in /usr/local/cuda*/bin")
    return found


def export_missing(h) -> None:
    """Exports the harness's workloads that have no package yet (what
    `bench/run.py export` does, in this process)."""
    missing = [w for w in h.workloads if h.manifest(w) is None]
    if missing and (not h.phase_export() or any(h.manifest(w) is None for w in missing)):
        raise ProfileError(f"exporting {', '.join(missing)} failed (see the lines above)")


def profile(args, harness=None) -> str:
    import run  # the harness: work folders, manifests, library paths

    ncu = find_ncu()
    libtorch = args.system == "libtorch-aoti"
    if libtorch and args.cuda_graph:
        raise ProfileError("--cuda-graph is aotirt's mode; libtorch's runner has none")
    # With libtorch's runner, the export phase also builds the runner and
    # picks the package it runs (the aotirt one where it can).
    argv = ["export", "--device", "cuda", "--systems", args.system, "--work", args.work, "--aotirt-build",
            args.aotirt_build]
    h = harness or run.Harness(run.parse_args(argv + (["--workloads", args.workloads] if args.workloads else [])))
    if not libtorch and not h.aotirt_bin.exists():
        raise ProfileError(f"{h.aotirt_bin} not found: build aotirt with CUDA (--aotirt-build names the folder)")
    export_missing(h)
    if libtorch and not h.runner_bin.exists():
        raise ProfileError(f"libtorch's runner was not built ({h.runner_bin}; see the lines above)")
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    env = h.base_env() if libtorch else h.aotirt_env()
    ncu_args = [ncu, "--clock-control", "none", "--cache-control", args.cache_control, "--metrics", METRIC, "--csv"]
    suffix = "" if args.cache_control == "all" else "-warm"
    text = []
    for w in h.workloads:
        m = h.manifest(w)
        if libtorch:
            if not m.get("libtorch_package"):
                raise ProfileError(f"{w}: no package for libtorch's runner "
                                   f"({m.get('libtorch_package_note', 'not checked')})")
            cmd = ncu_args + [str(h.runner_bin),
                   str(h.wdir(w) / m["libtorch_package"]), "--device", "cuda", "--iters", "1", "--warmup", "1"]
            cmd += h.input_args(w, "--input", typed=True)
            name = w + "-libtorch" + suffix
        else:
            cmd = ncu_args + [str(h.aotirt_bin), "bench",
                   str(h.wdir(w) / m["package"]), "--device", "cuda", "--iters", "1", "--warmup", "1"]
            cmd += (["--cuda-graph"] if args.cuda_graph else []) + h.input_args(w, "--input", typed=False)
            name = w + ("-graph" if args.cuda_graph else "") + suffix
        csv_path = out_dir / f"{name}.csv"
        try:
            res = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=args.timeout_s)
        except subprocess.TimeoutExpired:
            raise ProfileError(f"{w}: ncu did not finish in {args.timeout_s:.0f} s (--timeout-s)") from None
        csv_path.write_text(res.stdout)
        if res.returncode != 0:
            tail = (res.stderr or res.stdout).strip().splitlines()[-3:]
            raise ProfileError(f"{w}: ncu exited with {res.returncode}: {' | '.join(tail)} (table: {csv_path})")
        kernels = parse_ncu_csv(res.stdout, str(csv_path))
        run_kernels, found = last_run(kernels)
        md = format_summary(summarize(run_kernels), name, not found, flushed=args.cache_control == "all")
        (out_dir / f"{name}.md").write_text(md)
        text.append(md)
    return "\n".join(text)


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("profile", help="run workloads under ncu and summarize their last run")
    p.add_argument("--workloads", help="comma-separated (default: all)")
    p.add_argument("--cuda-graph", action="store_true", help="profile `aotirt bench --cuda-graph`")
    p.add_argument("--cache-control", choices=["all", "none"], default="all",
                   help="ncu's: all flushes the caches before each kernel (the default); none leaves them as the "
                        "kernels before left them, as in a run (tables named <workload>[...]-warm)")
    p.add_argument("--system", choices=["aotirt", "libtorch-aoti"], default="aotirt",
                   help="whose kernels: aotirt's (default) or libtorch's runner's on the same workload")
    p.add_argument("--aotirt-build", default="build", help="aotirt build folder with bin/ and lib/ (default build)")
    p.add_argument("--work", default=str(HERE / ".work"), help="the harness's work folder (default bench/.work)")
    p.add_argument("--out", default=str(HERE / ".work" / "kernels"), help="where tables and summaries go")
    p.add_argument("--timeout-s", type=float, default=300, help="limit for one workload under ncu")
    s = sub.add_parser("summarize", help="summarize a saved `ncu --csv` table")
    s.add_argument("csv", type=Path)
    s.add_argument("--json", action="store_true", help="print JSON instead of markdown")
    return ap.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    try:
        if args.cmd == "summarize":
            sys.stdout.write(summarize_file(args.csv, args.json))
        else:
            sys.stdout.write(profile(args))
    except ProfileError as e:
        print(f"kernels: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
