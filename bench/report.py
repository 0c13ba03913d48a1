# Turns the measured rows into the results: the JSON the issue specifies
# (commit, device, rows) plus footprint, physical limit, ratios to the
# libtorch runner, targets and notes; a markdown table with pass/fail against
# the targets; and a bar chart of median latency relative to libtorch.
# A CPU run's results (doc["kind"] == "cpu") have a row per (workload,
# system, thread count), ratios per thread count to libtorch's runner and to
# onnxruntime, and the CPU targets; render_markdown and render_chart lay them
# out per thread count.

from __future__ import annotations

import json
import math
from pathlib import Path

SYSTEMS = [
    "aotirt",
    "aotirt-cudagraph",
    "libtorch-aoti",
    "eager",
    "torch.compile",
    "torch.compile-reduce-overhead",
]
WORKLOAD_ORDER = [
    "mlp",
    "resnet50_b1",
    "resnet50_b32",
    "vit_b16_b1",
    "gpt2_decode",
    "gpt2_prefill512",
    "bert_base_s128",
]
# The CPU benchmark: its systems and workloads (bench/workloads.py's
# CPU_WORKLOADS), in report order.
CPU_SYSTEMS = [
    "aotirt",
    "libtorch-aoti",
    "onnxruntime",
    "eager",
    "torch.compile",
    "aotirt-frozen",
    "libtorch-aoti-frozen",
]
CPU_WORKLOAD_ORDER = [
    "mlp",
    "resnet18_b1",
    "mobilenet_v3_b1",
    "bert_base_s128",
    "gpt2_decode128_f32",
    "gpt2_decode128_bf16",
    "vit_s16_b1",
]
COLORS = {
    "aotirt": "tab:blue",
    "aotirt-cudagraph": "tab:cyan",
    "libtorch-aoti": "tab:orange",
    "eager": "tab:green",
    "torch.compile": "tab:red",
    "torch.compile-reduce-overhead": "tab:purple",
    "onnxruntime": "tab:gray",
    "aotirt-frozen": "tab:cyan",
    "libtorch-aoti-frozen": "tab:brown",
}
ROW_KEYS = ["median_us", "p99_us", "cold_start_s", "load_ms", "peak_rss_mb", "peak_device_mb"]
BASELINE = "libtorch-aoti"

# The targets, as ratios to the libtorch runner in the same run.
LATENCY_LIMIT = 0.9
COLD_LIMIT = 0.3
RSS_LIMIT = 0.3
FOOTPRINT_LIMIT = 0.02
GRAPH_LIMIT = 0.5
GRAPH_WORKLOADS = ("gpt2_decode", "resnet50_b1")
OPTIONAL_NOTE = "loaded only by CPU ops; a CUDA deployment can leave them out"
# The CPU targets, in one run at each thread count: latency, peak RSS and
# cold start as above against libtorch's runner, and aotirt no slower than
# onnxruntime on at least 5 of the 7 workloads.
ORT = "onnxruntime"
ORT_MIN_WINS, ORT_OF = 5, 7


def schema_row(detail: dict) -> dict:
    row = {"workload": detail["workload"], "system": detail["system"]}
    if detail.get("threads") is not None:
        row["threads"] = detail["threads"]  # CPU runs: one row per thread count
    for k in ROW_KEYS:
        v = detail.get(k)
        row[k] = None if v is None or (isinstance(v, float) and math.isnan(v)) else v
    return row


def threads_key(threads) -> str:
    return f"t{threads}"


def threads_label(threads) -> str:
    return f"{threads} thread" + ("" if threads == 1 else "s")


def _ratio(a, b):
    if a is None or b is None or b == 0:
        return None
    return a / b


def compute_ratios(rows: list) -> dict:
    """{workload: {system: {metric: system / libtorch}}}."""
    by = {(r["workload"], r["system"]): r for r in rows}
    out: dict = {}
    for r in rows:
        base = by.get((r["workload"], BASELINE))
        if base is None:
            continue
        entry = {k: _ratio(r[k], base[k]) for k in ROW_KEYS}
        out.setdefault(r["workload"], {})[r["system"]] = entry
    return out


def _check(name, workload, value, limit, detail=""):
    if value is None:
        result = "n/a"
    else:
        result = "pass" if value <= limit else "fail"
    return {
        "target": name,
        "workload": workload,
        "value": value,
        "limit": limit,
        "result": result,
        "detail": detail,
    }


def evaluate_targets(rows: list, ratios: dict, footprint: dict | None, unsynchronized=frozenset()) -> list:
    """The issue's targets as checks. A latency taken without synchronising
    after each run (`unsynchronized`: (workload, system) pairs) is not
    evidence either way: its checks read "invalid"."""
    by = {(r["workload"], r["system"]): r for r in rows}
    workloads = [w for w in WORKLOAD_ORDER if any(r["workload"] == w for r in rows)]
    checks = []
    for w in workloads:
        rw = ratios.get(w, {}).get("aotirt", {})
        checks.append(_check("steady latency (median) <= 0.9x libtorch, no graphs", w,
                             rw.get("median_us"), LATENCY_LIMIT))
    for w in workloads:
        rw = ratios.get(w, {}).get("aotirt", {})
        checks.append(_check("cold start <= 0.3x libtorch", w, rw.get("cold_start_s"), COLD_LIMIT))
    for w in workloads:
        rw = ratios.get(w, {}).get("aotirt", {})
        checks.append(_check("peak RSS <= 0.3x libtorch", w, rw.get("peak_rss_mb"), RSS_LIMIT))
    fp = (footprint or {}).get("ratio")
    checks.append(_check("footprint <= 2% of libtorch (cuBLAS, cuDNN left out)", "-", fp, FOOTPRINT_LIMIT))
    for w in GRAPH_WORKLOADS:
        if w not in workloads:
            continue
        rg = ratios.get(w, {}).get("aotirt-cudagraph", {})
        checks.append(_check("CUDA graphs: median <= 0.5x libtorch", w, rg.get("median_us"), GRAPH_LIMIT))
        g = by.get((w, "aotirt-cudagraph"), {}).get("median_us")
        ro = by.get((w, "torch.compile-reduce-overhead"), {}).get("median_us")
        value = _ratio(g, ro)
        c = _check("CUDA graphs: faster than torch.compile reduce-overhead", w, value, 1.0)
        if value is not None and value >= 1.0:
            c["result"] = "fail"  # strictly faster
        checks.append(c)
    for c in checks:
        latency = "median" in c["target"] or "faster" in c["target"]
        system = "aotirt-cudagraph" if c["target"].startswith("CUDA graphs") else "aotirt"
        if latency and (c["workload"], system) in unsynchronized:
            c["result"] = "invalid"
            c["detail"] = "the latency was taken without a device synchronisation after each run"
    return checks


def compute_cpu_ratios(rows: list, baseline: str = BASELINE, metrics=ROW_KEYS) -> dict:
    """{"tT": {workload: {system: {metric: system / baseline}}}}: a CPU run's
    ratios, each within its thread count."""
    by = {(r["workload"], r["system"], r.get("threads")): r for r in rows}
    out: dict = {}
    for r in rows:
        base = by.get((r["workload"], baseline, r.get("threads")))
        if base is None:
            continue
        entry = {k: _ratio(r[k], base[k]) for k in metrics}
        out.setdefault(threads_key(r.get("threads")), {}).setdefault(r["workload"], {})[r["system"]] = entry
    return out


def ort_required(n_workloads: int) -> int:
    """Workloads on which aotirt must be no slower than onnxruntime: 5 of
    the CPU set's 7; the same share of a smaller selection, rounded up."""
    if n_workloads == ORT_OF:
        return ORT_MIN_WINS
    return math.ceil(n_workloads * ORT_MIN_WINS / ORT_OF)


def evaluate_cpu_targets(rows: list, ratios: dict, reasons: dict | None = None, pending=frozenset()) -> list:
    """The CPU targets at each thread count, as checks: aotirt's median
    latency <= 0.9x libtorch's runner, peak RSS and cold start <= 0.3x, per
    workload; and one check of how many workloads aotirt is no slower than
    onnxruntime on (at least ort_required of them). A workload where either
    has no latency is not compared; `reasons` ({"workload/system/tT": why})
    names why in the detail. While rows of `pending` (keys of rows not
    measured yet) could still make up the count, it reads n/a, not fail."""
    reasons = reasons or {}
    threads = sorted({r["threads"] for r in rows if r.get("threads") is not None})
    order = CPU_WORKLOAD_ORDER + [w for w in WORKLOAD_ORDER if w not in CPU_WORKLOAD_ORDER]
    by = {(r["workload"], r["system"], r.get("threads")): r for r in rows}
    checks = []
    for t in threads:
        present = [w for w in order if any(r["workload"] == w and r.get("threads") == t for r in rows)]
        present += sorted({r["workload"] for r in rows if r.get("threads") == t} - set(present))
        rt = ratios.get(threads_key(t), {})
        for name, metric, limit in (
            ("median latency <= 0.9x libtorch", "median_us", LATENCY_LIMIT),
            ("peak RSS <= 0.3x libtorch", "peak_rss_mb", RSS_LIMIT),
            ("cold start <= 0.3x libtorch", "cold_start_s", COLD_LIMIT),
        ):
            for w in present:
                c = _check(name, w, rt.get(w, {}).get("aotirt", {}).get(metric), limit)
                c["threads"] = t
                checks.append(c)
        wins, losses, absent, waiting = [], [], [], 0
        for w in present:
            a = by.get((w, "aotirt", t), {}).get("median_us")
            o = by.get((w, ORT, t), {}).get("median_us")
            if a is None or o is None:
                who = ORT if o is None else "aotirt"
                why = reasons.get(f"{w}/{who}/t{t}", "no result")
                absent.append(f"{w} ({who}: {' '.join(str(why).split())[:120]})")
                waiting += any(f"{w}/{s}/t{t}" in pending for s in ("aotirt", ORT))
            elif a <= o:
                wins.append(w)
            else:
                losses.append(w)
        need = ort_required(len(present))
        compared = len(wins) + len(losses)
        if len(wins) >= need:
            result = "pass"
        elif compared == 0 or len(wins) + waiting >= need:
            result = "n/a"  # nothing compared yet, or rows still to measure could meet it
        else:
            result = "fail"
        detail = (f"no slower on {len(wins)} of {compared} compared: {', '.join(wins) or 'none'}"
                  + (f"; slower on {', '.join(losses)}" if losses else "")
                  + (f"; not compared: {'; '.join(absent)}" if absent else ""))
        checks.append({"target": f"no slower than onnxruntime on at least {need} of {len(present)} workloads",
                       "workload": "-", "threads": t, "value": len(wins) if compared else None, "limit": need,
                       "comparison": ">=", "compared": compared, "result": result, "detail": detail})
    return checks


def _fmt(v, digits=1):
    if v is None:
        return "–"
    if isinstance(v, float):
        if abs(v) >= 1000:
            return f"{v:,.0f}"
        return f"{v:.{digits}f}"
    return str(v)


def _fmt_ratio(v):
    return "–" if v is None else f"{v:.2f}x"


def _target_cell(workload: str, system: str, checks: list) -> str:
    if system not in ("aotirt", "aotirt-cudagraph"):
        return ""
    parts = []
    for c in checks:
        if c["workload"] != workload:
            continue
        is_graph = c["target"].startswith("CUDA graphs")
        if (system == "aotirt-cudagraph") != is_graph:
            continue
        short = {
            "steady latency (median) <= 0.9x libtorch, no graphs": "median ≤0.9x",
            "cold start <= 0.3x libtorch": "cold ≤0.3x",
            "peak RSS <= 0.3x libtorch": "RSS ≤0.3x",
            "CUDA graphs: median <= 0.5x libtorch": "median ≤0.5x",
            "CUDA graphs: faster than torch.compile reduce-overhead": "< reduce-overhead",
        }[c["target"]]
        parts.append(f"{short} {c['result'].upper()}")
    return "; ".join(parts)


def _footprint_lines(fp: dict, target: bool = True) -> list:
    lines = []
    if fp:
        lines += ["## Install footprint (cuBLAS and cuDNN left out)", ""]
        files = ", ".join(f"{k} {v}" for k, v in fp.get("aotirt_files", {}).items())
        if "aotirt_optional_files" in fp:
            lines.append(
                f"- aotirt: {_fmt(fp.get('aotirt_mb'))} MiB: libaotirt.so and the non-system libraries of its "
                f"DT_NEEDED closure, what a CUDA deployment needs ({files})"
            )
            opt = fp.get("aotirt_optional_files") or {}
            if opt:
                ofiles = ", ".join(f"{k} {v}" for k, v in opt.items())
                lines.append(
                    f"- aotirt, optional: {_fmt(fp.get('aotirt_optional_mb'))} MiB ({ofiles}): "
                    f"{fp.get('aotirt_optional_note', OPTIONAL_NOTE)}"
                )
            else:
                lines.append(f"- aotirt, optional: none counted ({fp.get('aotirt_optional_note', OPTIONAL_NOTE)})")
            if fp.get("aotirt_unresolved"):
                lines.append(f"- not found by ldd (not counted): {', '.join(fp['aotirt_unresolved'])}")
        else:  # results written before the split
            lines.append(f"- aotirt: {_fmt(fp.get('aotirt_mb'))} MiB ({files})")
        lines.append(f"- libtorch: {_fmt(fp.get('libtorch_mb'))} MiB (everything in {fp.get('libtorch_dir', 'torch/lib')})")
        if fp.get("libtorch_runner_mapped_mb") is not None:
            lines.append(
                f"- of which the libtorch runner process mapped: {_fmt(fp['libtorch_runner_mapped_mb'])} MiB"
            )
        ratio = fp.get("ratio")
        basis = fp.get("ratio_basis")
        lines.append(f"- ratio: {'–' if ratio is None else f'{ratio:.2%}'}"
                     + (f" (target ≤ {FOOTPRINT_LIMIT:.0%})" if target else "")
                     + (f"; basis: {basis}" if basis else ""))
        rw = fp.get("ratio_with_optional")
        if rw is not None and rw != ratio:
            lines.append(f"- ratio with the optional libraries: {rw:.2%}")
        lines.append("")
    return lines


def render_markdown(doc: dict) -> str:
    if doc.get("kind") == "cpu":
        return render_markdown_cpu(doc)
    rows, details, ratios, checks = doc["rows"], doc["row_details"], doc["ratios"], doc["targets"]
    env = doc.get("environment", {})
    lines = [f"# aotirt benchmark — {doc['label']} — {doc['date']}", ""]
    lines.append(f"- commit: `{doc['commit']}`")
    lines.append(f"- device: {doc['device']}")
    lines.append(
        f"- torch {env.get('torch', '?')}, torchvision {env.get('torchvision', '?')}, "
        f"transformers {env.get('transformers', '?')}"
        + (f", CUDA {env['cuda']}, cuDNN {env.get('cudnn')}" if env.get("cuda") else "")
    )
    lines.append(f"- command: `{doc.get('command', '')}`")
    lines.append(
        "- latency: per call, synchronised, median and p99 (nearest rank) over the timed runs; "
        "ratios are to `libtorch-aoti` (libtorch's AOTIModelPackageLoader) in this run"
    )
    lines.append("")

    summary = [c for c in checks]
    if summary:
        lines += ["## Targets", "", "| target | workload | ratio | limit | result |", "|---|---|---|---|---|"]
        for c in summary:
            v = "–" if c["value"] is None else f"{c['value']:.3f}"
            lines.append(f"| {c['target']} | {c['workload']} | {v} | {c['limit']} | {c['result'].upper()} |")
        lines.append("")

    present = [w for w in WORKLOAD_ORDER if any(r["workload"] == w for r in rows)]
    lines += ["## Median latency relative to libtorch-aoti", ""]
    lines.append("| workload | " + " | ".join(SYSTEMS) + " |")
    lines.append("|---" * (len(SYSTEMS) + 1) + "|")
    for w in present:
        cells = [_fmt_ratio(ratios.get(w, {}).get(s, {}).get("median_us")) for s in SYSTEMS]
        lines.append(f"| {w} | " + " | ".join(cells) + " |")
    lines.append("")

    by = {(r["workload"], r["system"]): r for r in rows}
    for w in present:
        desc = doc.get("workload_descriptions", {}).get(w, "")
        lines += [f"## {w}" + (f": {desc}" if desc else ""), ""]
        lines.append(
            "| system | median µs | p99 µs | median vs libtorch | cold start s | vs libtorch | load ms "
            "| peak RSS MB | vs libtorch | peak device MB | out err | target |"
        )
        lines.append("|---|---|---|---|---|---|---|---|---|---|---|---|")
        for s in SYSTEMS:
            r = by.get((w, s))
            if r is None:
                continue
            d = details.get(f"{w}/{s}", {})
            rr = ratios.get(w, {}).get(s, {})
            if d.get("status") != "ok":
                why = " ".join(str(d.get("reason", "not measured")).replace("|", "/").split())[:400]
                lines.append(f"| {s} | {d.get('status', 'missing')}: {why} |" + " |" * 10)
                continue
            err = d.get("rel_err_vs_reference")
            lines.append(
                f"| {s} | {_fmt(r['median_us'])} | {_fmt(r['p99_us'])} | {_fmt_ratio(rr.get('median_us'))} "
                f"| {_fmt(r['cold_start_s'], 2)} | {_fmt_ratio(rr.get('cold_start_s'))} | {_fmt(r['load_ms'])} "
                f"| {_fmt(r['peak_rss_mb'], 0)} | {_fmt_ratio(rr.get('peak_rss_mb'))} "
                f"| {_fmt(r['peak_device_mb'], 0)} | {'–' if err is None else f'{err:.1e}'} "
                f"| {_target_cell(w, s, checks)} |"
            )
        lines.append("")

    lines += _footprint_lines(doc.get("footprint") or {})

    pl = doc.get("physical_limit") or {}
    if pl:
        lines += ["## Physical limit of the decode step", ""]
        lines.append(
            f"Bytes read per step: {pl['bytes_read'] / 1e6:.1f} MB (weights {pl['weight_bytes'] / 1e6:.1f} MB + "
            f"KV cache {pl['kv_cache_bytes'] / 1e6:.1f} MB); measured copy bandwidth "
            f"{pl['copy_bandwidth_gbps']:.0f} GB/s (bytes read + written); limit "
            f"**{pl['limit_us']:.1f} µs** per step."
        )
        lines.append("")
        lines.append("| system | median µs | × limit |")
        lines.append("|---|---|---|")
        for s, v in pl.get("measured_us", {}).items():
            lines.append(f"| {s} | {_fmt(v)} | {_fmt_ratio(None if v is None else v / pl['limit_us'])} |")
        lines.append("")

    notes = doc.get("notes") or []
    if notes:
        lines += ["## Notes", ""]
        lines += [f"- {n}" for n in notes]
        lines.append("")
    extra = doc.get("extra_markdown")
    if extra:
        lines += [extra.rstrip(), ""]
    return "\n".join(lines)


CPU_SHORT = {
    "median latency <= 0.9x libtorch": "median ≤0.9x",
    "peak RSS <= 0.3x libtorch": "RSS ≤0.3x",
    "cold start <= 0.3x libtorch": "cold ≤0.3x",
}


def _cpu_value(c: dict) -> str:
    if c.get("comparison") == ">=":
        return "–" if c["value"] is None else f"{c['value']} of {c['compared']}"
    return "–" if c["value"] is None else f"{c['value']:.3f}"


def _cpu_present(rows: list, threads) -> list:
    order = CPU_WORKLOAD_ORDER + [w for w in WORKLOAD_ORDER if w not in CPU_WORKLOAD_ORDER]
    seen = {r["workload"] for r in rows if r.get("threads") == threads}
    return [w for w in order if w in seen] + sorted(seen - set(order))


def _why(d: dict) -> str:
    return " ".join(str(d.get("reason", "not measured")).replace("|", "/").split())[:400]


def render_markdown_cpu(doc: dict) -> str:
    """A CPU run: the targets per thread count, median latency over
    libtorch's runner and over onnxruntime per thread count, a table per
    (thread count, workload), the footprint and the notes."""
    rows, details, checks = doc["rows"], doc["row_details"], doc["targets"]
    ratios, vs_ort = doc["ratios"], doc.get("ratios_vs_onnxruntime", {})
    systems = doc.get("systems", CPU_SYSTEMS)
    env = doc.get("environment", {})
    threads = doc.get("thread_counts") or sorted({r["threads"] for r in rows if r.get("threads") is not None})
    lines = [f"# aotirt benchmark — {doc['label']} — {doc['date']}", ""]
    lines.append(f"- commit: `{doc['commit']}`")
    lines.append(f"- device: {doc['device']}")
    lines.append(
        f"- torch {env.get('torch', '?')}, torchvision {env.get('torchvision', '?')}, "
        f"transformers {env.get('transformers', '?')}, onnxruntime {env.get('onnxruntime', '?')}, "
        f"onnx {env.get('onnx', '?')}, onnxscript {env.get('onnxscript', '?')}"
    )
    lines.append(f"- command: `{doc.get('command', '')}`")
    lines.append(
        "- every system at the same thread count, at " + " and ".join(str(t) for t in threads)
        + ": OMP_NUM_THREADS (and OpenBLAS's, MKL's) in every process, packages compiled for that "
        "count (Inductor's cpp.threads), torch.set_num_threads for eager and torch.compile, "
        "intra_op_num_threads for onnxruntime"
    )
    lines.append(
        "- latency: per call, median and p99 (nearest rank) over the timed runs; ratios are to "
        "`libtorch-aoti` (libtorch's AOTIModelPackageLoader on the same package) and to `onnxruntime` "
        "at the same thread count in this run"
    )
    lines.append("")

    counts: dict = {}
    for c in checks:
        counts[c["result"]] = counts.get(c["result"], 0) + 1
    lines += ["## Targets", ""]
    lines.append("Targets: " + ", ".join(f"{n} {r}" for r, n in sorted(counts.items())) + ".")
    lines.append("")
    for t in threads:
        mine = [c for c in checks if c.get("threads") == t]
        if not mine:
            continue
        lines += [f"### {threads_label(t)}", "", "| target | workload | value | limit | result | detail |",
                  "|---|---|---|---|---|---|"]
        for c in mine:
            limit = f"≥ {c['limit']}" if c.get("comparison") == ">=" else f"{c['limit']}"
            detail = " ".join(str(c.get("detail", "")).replace("|", "/").split())
            lines.append(f"| {c['target']} | {c['workload']} | {_cpu_value(c)} | {limit} "
                         f"| {c['result'].upper()} | {detail} |")
        lines.append("")

    for title, table in (("libtorch-aoti", ratios), ("onnxruntime", vs_ort)):
        lines += [f"## Median latency relative to {title}", ""]
        for t in threads:
            rt = table.get(threads_key(t), {})
            lines += [f"{threads_label(t)}:", ""]
            lines.append("| workload | " + " | ".join(systems) + " |")
            lines.append("|---" * (len(systems) + 1) + "|")
            for w in _cpu_present(rows, t):
                cells = [_fmt_ratio(rt.get(w, {}).get(s, {}).get("median_us")) for s in systems]
                lines.append(f"| {w} | " + " | ".join(cells) + " |")
            lines.append("")

    by = {(r["workload"], r["system"], r.get("threads")): r for r in rows}
    for t in threads:
        lines += [f"## {threads_label(t)}", ""]
        rt, ot = ratios.get(threads_key(t), {}), vs_ort.get(threads_key(t), {})
        for w in _cpu_present(rows, t):
            desc = doc.get("workload_descriptions", {}).get(w, "")
            lines += [f"### {w}, {threads_label(t)}" + (f": {desc}" if desc else ""), ""]
            lines.append(
                "| system | median µs | p99 µs | vs libtorch | vs onnxruntime | cold start s | vs libtorch "
                "| load ms | peak RSS MB | vs libtorch | out err | target |"
            )
            lines.append("|---|---|---|---|---|---|---|---|---|---|---|---|")
            for s in systems:
                r = by.get((w, s, t))
                if r is None:
                    continue
                d = details.get(f"{w}/{s}/t{t}", {})
                if d.get("status") != "ok":
                    lines.append(f"| {s} | {d.get('status', 'missing')}: {_why(d)} |" + " |" * 10)
                    continue
                rr, ro = rt.get(w, {}).get(s, {}), ot.get(w, {}).get(s, {})
                err = d.get("rel_err_vs_reference")
                target = "; ".join(f"{CPU_SHORT[c['target']]} {c['result'].upper()}" for c in checks
                                   if s == "aotirt" and c.get("threads") == t and c["workload"] == w
                                   and c["target"] in CPU_SHORT)
                lines.append(
                    f"| {s} | {_fmt(r['median_us'])} | {_fmt(r['p99_us'])} | {_fmt_ratio(rr.get('median_us'))} "
                    f"| {_fmt_ratio(ro.get('median_us'))} | {_fmt(r['cold_start_s'], 2)} "
                    f"| {_fmt_ratio(rr.get('cold_start_s'))} | {_fmt(r['load_ms'])} | {_fmt(r['peak_rss_mb'], 0)} "
                    f"| {_fmt_ratio(rr.get('peak_rss_mb'))} | {'–' if err is None else f'{err:.1e}'} | {target} |"
                )
            lines.append("")

    lines += _footprint_lines(doc.get("footprint") or {}, target=False)
    notes = doc.get("notes") or []
    if notes:
        lines += ["## Notes", ""]
        lines += [f"- {n}" for n in notes]
        lines.append("")
    extra = doc.get("extra_markdown")
    if extra:
        lines += [extra.rstrip(), ""]
    return "\n".join(lines)


def render_chart_cpu(doc: dict, path: Path) -> bool:
    """Median latency over libtorch's runner, a panel per thread count."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    ratios = doc["ratios"]
    threads = doc.get("thread_counts") or []
    systems = doc.get("systems", CPU_SYSTEMS)
    panels = [t for t in threads if ratios.get(threads_key(t))] or threads[:1]
    if not panels:
        return False
    fig, axes = plt.subplots(1, len(panels), figsize=(max(7, 6.5 * len(panels)), 5.4), squeeze=False,
                             sharey=True)
    details = doc.get("row_details", {})
    values = [v for t in panels for per in ratios.get(threads_key(t), {}).values() for r in per.values()
              for v in [r.get("median_us")] if v]
    bottom = min(0.25, min(values) / 2) if values else 0.25
    shown = set()
    for ax, t in zip(axes[0], panels):
        rt = ratios.get(threads_key(t), {})
        workloads = _cpu_present(doc["rows"], t)
        have = [s for s in systems if any(rt.get(w, {}).get(s, {}).get("median_us") for w in workloads)
                or any(details.get(f"{w}/{s}/t{t}", {}).get("status") in ("failed", "skipped") for w in workloads)]
        width = 0.8 / max(len(have), 1)
        for i, s in enumerate(have):
            xs, ys, failed = [], [], []
            for j, w in enumerate(workloads):
                x = j + (i - (len(have) - 1) / 2) * width
                v = rt.get(w, {}).get(s, {}).get("median_us")
                if v:
                    xs.append(x)
                    ys.append(v)
                elif details.get(f"{w}/{s}/t{t}", {}).get("status") in ("failed", "skipped"):
                    failed.append(x)
            ax.bar(xs, ys, width=width, label=s if s not in shown else None, color=COLORS[s])
            # A row that failed or was skipped: a cross at the foot of its place.
            ax.plot(failed, [bottom * 1.15] * len(failed), linestyle="none", marker="x", color=COLORS[s])
            shown.add(s)
        ax.set_yscale("log")
        ax.set_ylim(bottom=bottom)
        ax.axhline(1.0, color="black", linewidth=0.8)
        ax.axhline(LATENCY_LIMIT, color="tab:red", linewidth=0.8, linestyle="--",
                   label="target 0.9x" if "target" not in shown else None)
        shown.add("target")
        ax.set_xticks(range(len(workloads)))
        ax.set_xticklabels(workloads, rotation=25, fontsize=8)
        ax.set_title(threads_label(t), fontsize=9)
    axes[0][0].set_ylabel("median latency / libtorch-aoti (log; × failed or skipped)")
    commit = doc["commit"][:12] + ("-dirty" if doc["commit"].endswith("-dirty") else "")
    fig.suptitle(f"{doc['device']} — commit {commit} — {doc['date']}", fontsize=9)
    fig.legend(fontsize=8, ncol=5, loc="lower center", frameon=False)
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True


def render_chart(doc: dict, path: Path) -> bool:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    if doc.get("kind") == "cpu":
        return render_chart_cpu(doc, path)
    ratios = doc["ratios"]
    workloads = [w for w in WORKLOAD_ORDER if w in ratios]
    systems = [s for s in SYSTEMS if any(ratios[w].get(s, {}).get("median_us") for w in workloads)]
    fig, ax = plt.subplots(figsize=(max(7, 1.6 * len(workloads) + 2), 5.2))
    width = 0.8 / max(len(systems), 1)
    for i, s in enumerate(systems):
        xs, ys = [], []
        for j, w in enumerate(workloads):
            v = ratios[w].get(s, {}).get("median_us")
            if v:
                xs.append(j + (i - (len(systems) - 1) / 2) * width)
                ys.append(v)
        ax.bar(xs, ys, width=width, label=s, color=COLORS[s])
    ax.set_yscale("log")
    values = [v for w in workloads for s in systems for v in [ratios[w].get(s, {}).get("median_us")] if v]
    if values:
        # Room below 1.0 so libtorch's own bar (1.0) is visible.
        ax.set_ylim(bottom=min(0.25, min(values) / 2))
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.axhline(LATENCY_LIMIT, color="tab:red", linewidth=0.8, linestyle="--", label="target 0.9x")
    ax.set_xticks(range(len(workloads)))
    ax.set_xticklabels(workloads, rotation=20)
    ax.set_ylabel("median latency / libtorch-aoti (log)")
    commit = doc["commit"][:12] + ("-dirty" if doc["commit"].endswith("-dirty") else "")
    ax.set_title(f"{doc['device']} — commit {commit} — {doc['date']}", fontsize=9)
    ax.legend(fontsize=8, ncol=4, loc="upper center", bbox_to_anchor=(0.5, -0.16), frameon=False)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True


def write_all(doc: dict, stem: Path) -> list:
    """Writes stem.json, stem.md and stem.png; returns the paths written."""
    stem.parent.mkdir(parents=True, exist_ok=True)
    out = []
    js = stem.with_suffix(".json")
    js.write_text(json.dumps(doc, indent=1) + "\n")
    out.append(js)
    md = stem.with_suffix(".md")
    png = stem.with_suffix(".png")
    if render_chart(doc, png):
        out.append(png)
        doc_md = render_markdown(doc) + f"\n![median latency relative to libtorch]({png.name})\n"
    else:
        doc_md = render_markdown(doc) + "\n(no chart: matplotlib is not installed)\n"
    md.write_text(doc_md)
    out.append(md)
    return out


def main() -> int:
    """Re-renders the markdown and chart of a results JSON, e.g. after adding
    the optimisation notes: python bench/report.py RESULTS.json [--notes-md F]."""
    import argparse

    ap = argparse.ArgumentParser(description=main.__doc__)
    ap.add_argument("results_json")
    ap.add_argument("--notes-md", help="markdown appended to the results (replaces an earlier one)")
    args = ap.parse_args()
    path = Path(args.results_json)
    doc = json.loads(path.read_text())
    if args.notes_md:
        doc["extra_markdown"] = Path(args.notes_md).read_text()
    for p in write_all(doc, path.with_suffix("")):
        print(f"wrote {p}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
