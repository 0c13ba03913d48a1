# Turns the measured rows into the results: the JSON the issue specifies
# (commit, device, rows) plus footprint, physical limit, ratios to the
# libtorch runner, targets and notes; a markdown table with pass/fail against
# the targets; and a bar chart of median latency relative to libtorch.

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
COLORS = {
    "aotirt": "tab:blue",
    "aotirt-cudagraph": "tab:cyan",
    "libtorch-aoti": "tab:orange",
    "eager": "tab:green",
    "torch.compile": "tab:red",
    "torch.compile-reduce-overhead": "tab:purple",
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


def schema_row(detail: dict) -> dict:
    row = {"workload": detail["workload"], "system": detail["system"]}
    for k in ROW_KEYS:
        v = detail.get(k)
        row[k] = None if v is None or (isinstance(v, float) and math.isnan(v)) else v
    return row


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


def render_markdown(doc: dict) -> str:
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

    fp = doc.get("footprint") or {}
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
        lines.append(f"- ratio: {'–' if ratio is None else f'{ratio:.2%}'} (target ≤ {FOOTPRINT_LIMIT:.0%})"
                     + (f"; basis: {basis}" if basis else ""))
        rw = fp.get("ratio_with_optional")
        if rw is not None and rw != ratio:
            lines.append(f"- ratio with the optional libraries: {rw:.2%}")
        lines.append("")

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


def render_chart(doc: dict, path: Path) -> bool:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
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
