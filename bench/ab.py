#!/usr/bin/env python3
"""Before/after figures for one change, on one machine: `aotirt bench` on the
harness's workloads under two or more sets of environment variables, the
variants alternating within each repetition so that drift on the machine
touches them alike.

  python bench/ab.py --workloads vit_b16_b1,bert_base_s128 \\
      --variant new: --variant gemm:AOTIRT_CUDA_DISABLE=attention_tc --graph both --reps 2

A variant is NAME:VAR=VALUE[,VAR=VALUE...] (NAME: alone runs the default
environment). --graph off|on|both adds or leaves out `--cuda-graph`. The
workloads are exported first when missing (as `bench/run.py export` does).
Prints a markdown table (each variant's medians and their range) and writes
it, with the JSON, to --out (default bench/.work/ab). This is how the
before/after pairs in bench/notes.md are measured; the full comparison with
libtorch and PyTorch stays `bench/run.py`.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from kernel_profile import ProfileError, export_missing  # noqa: E402


def parse_variant(text: str) -> tuple[str, dict]:
    name, sep, rest = text.partition(":")
    if not sep or not name.strip():
        raise ProfileError(f"variant {text!r}: write NAME:VAR=VALUE[,VAR=VALUE...] or NAME:")
    env = {}
    for item in filter(None, (s.strip() for s in rest.split(","))):
        var, eq, value = item.partition("=")
        if not eq or not var or not var.replace("_", "").isalnum():
            raise ProfileError(f"variant {name}: {item!r} is not VAR=VALUE")
        env[var] = value
    return name.strip(), env


def bench_once(h, workload: str, graph: bool, extra_env: dict, args) -> dict:
    m = h.manifest(workload)
    cmd = [str(h.aotirt_bin), "bench", str(h.wdir(workload) / m["package"]), "--device", h.device, "--json",
           "--iters", str(args.iters), "--warmup", str(args.warmup)] + (["--cuda-graph"] if graph else [])
    cmd += h.input_args(workload, "--input", typed=False)
    env = {**h.aotirt_env(), **extra_env}
    try:
        res = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=args.timeout_s)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {args.timeout_s:.0f} s"}
    j = h._last_json(res.stdout) if res.returncode == 0 else None
    if not j or not isinstance(j.get("median_us"), (int, float)):
        tail = (res.stderr or res.stdout).strip().splitlines()[-1:] or ["no output"]
        return {"error": f"aotirt bench exited with {res.returncode}: {tail[0]}"}
    return {"median_us": j["median_us"], "p99_us": j.get("p99_us"), "peak_rss_mb": j.get("peak_rss_mb"),
            "load_ms": j.get("load_ms")}


def measure(h, variants: list, args) -> list:
    graphs = {"off": [False], "on": [True], "both": [False, True]}[args.graph]
    results = []
    for w in h.workloads:
        for graph in graphs:
            keys = ("median_us", "peak_rss_mb", "load_ms")
            cells = {name: {key: [] for key in keys} for name, _ in variants}
            errors = {}
            for _ in range(args.reps):
                for name, env in variants:
                    r = bench_once(h, w, graph, env, args)
                    if "error" in r:
                        errors[name] = r["error"]
                        continue
                    for key in keys:
                        if isinstance(r.get(key), (int, float)):
                            cells[name][key].append(r[key])
            results.append({"workload": w, "cuda_graph": graph,
                            "variants": [{"name": n, "env": e, **cells[n], "error": errors.get(n)}
                                         for n, e in variants]})
    return results


def _range(xs: list, digits: int) -> str:
    lo, hi = min(xs), max(xs)
    return f"{lo:.{digits}f}" if lo == hi else f"{lo:.{digits}f}-{hi:.{digits}f}"


def format_table(results: list, variants: list) -> str:
    names = [n for n, _ in variants]
    head = ["| workload | graph | " + " | ".join(names) + " |", "|---|---|" + "---|" * len(names)]
    out, memory = list(head), list(head)
    for r in results:
        cells, mem = [], []
        for v in r["variants"]:
            xs = v["median_us"]
            if v["error"] and not xs:
                cells.append(f"failed: {v['error']}")
            elif xs:
                cells.append(_range(xs, 1))
            else:
                cells.append("-")
            rss, load = v.get("peak_rss_mb") or [], v.get("load_ms") or []
            mem.append(" / ".join([_range(rss, 0) if rss else "-", _range(load, 0) if load else "-"]))
        row = f"| {r['workload']} | {'yes' if r['cuda_graph'] else 'no'} | "
        out.append(row + " | ".join(cells) + " |")
        memory.append(row + " | ".join(mem) + " |")
    legend = "; ".join(f"{n}: " + (", ".join(f"{k}={v}" for k, v in e.items()) or "default environment")
                       for n, e in variants)
    return ("\n".join(out) + f"\n\nMedian us per call, the range over the repetitions. {legend}.\n\n" +
            "\n".join(memory) + "\n\nPeak RSS (MiB) / load (ms) of the same runs, as `aotirt bench --json` reports them.\n")


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workloads", required=True, help="comma-separated harness workloads")
    ap.add_argument("--variant", action="append", required=True, help="NAME:VAR=VALUE[,...], repeatable")
    ap.add_argument("--graph", choices=["off", "on", "both"], default="off", help="with --cuda-graph or not")
    ap.add_argument("--reps", type=int, default=2, help="repetitions of every variant (default 2)")
    ap.add_argument("--iters", type=int, default=300)
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--device", choices=["cuda", "cpu"], default="cuda")
    ap.add_argument("--aotirt-build", default="build", help="aotirt build folder with bin/ and lib/ (default build)")
    ap.add_argument("--work", default=str(HERE / ".work"), help="the harness's work folder (default bench/.work)")
    ap.add_argument("--out", default=str(HERE / ".work" / "ab"), help="where the table and JSON go")
    ap.add_argument("--timeout-s", type=float, default=300, help="limit for one `aotirt bench`")
    args = ap.parse_args(argv)
    if args.reps < 1 or args.iters < 1 or args.warmup < 0:
        ap.error("--reps and --iters must be positive, --warmup not negative")
    return args


def run_ab(args, harness=None) -> str:
    import run

    variants = [parse_variant(v) for v in args.variant]
    if len({n for n, _ in variants}) != len(variants):
        raise ProfileError("two variants have the same name")
    h = harness or run.Harness(run.parse_args(
        ["export", "--device", args.device, "--systems", "aotirt", "--work", args.work, "--aotirt-build",
         args.aotirt_build, "--workloads", args.workloads]))
    if not h.aotirt_bin.exists():
        raise ProfileError(f"{h.aotirt_bin} not found (--aotirt-build names the build folder)")
    export_missing(h)
    results = measure(h, variants, args)
    md = format_table(results, variants)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "ab.md").write_text(md)
    (out / "ab.json").write_text(json.dumps({"device": args.device, "iters": args.iters, "warmup": args.warmup,
                                             "reps": args.reps, "results": results}, indent=1))
    return md


def main(argv=None) -> int:
    try:
        args = parse_args(argv)
        sys.stdout.write(run_ab(args))
    except ProfileError as e:
        print(f"ab: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
