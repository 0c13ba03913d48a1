#!/usr/bin/env python3
"""Inventory of torch's AOTInductor fallback-op surface against what aotirt
provides, and the generator of docs/ops.md.

The surface is every `aoti_torch_<dev>_<op>` declared in the C shim headers of
the installed torch (parsed as text, so no torch import and no compiler are
needed); an op counts as provided when libaotirt.so exports its symbol.

    op_inventory.py                 regenerate docs/ops.md
    op_inventory.py --check         exit 1 if docs/ops.md is not what it would write
    op_inventory.py --json OUT      also write the inventory as JSON
    op_inventory.py --results F..   fill "tested dtypes" from conformance runs
                                    (default: the committed tests/ops/results-*.json)

Exit status: 0 done, 1 the doc is stale (--check), 2 bad input (headers,
library, exceptions or results file missing or malformed).
"""
from __future__ import annotations

import argparse
import difflib
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Set

REPO = Path(__file__).resolve().parent.parent.parent
DEFAULT_DOC = REPO / "docs" / "ops.md"
DEFAULT_EXCEPTIONS = REPO / "tests" / "ops" / "exceptions.json"
# What the conformance suite recorded on each device (AOTIRT_OP_RESULTS, see
# tests/ops/conftest.py); committed, so the doc's dtype column is reproducible.
DEFAULT_RESULTS = sorted((REPO / "tests" / "ops").glob("results-*.json"))
SCRIPT = "tests/ops/op_inventory.py"

# Relative to a torch include root (site-packages/torch/include).
AOTI_SUBDIR = Path("torch") / "csrc" / "inductor" / "aoti_torch"

DEVICES = ("cpu", "cuda")
GROUPS = ("cpu", "cuda", "generic")
DEVICE_TITLES = {"cpu": "CPU", "cuda": "CUDA"}

# Exceptions are for ops nobody will ever run through aotirt; if they grow
# past this share of a device's surface, the coverage figure stops meaning
# much, so the doc says so.
EXCEPTION_LIMIT_PERCENT = 10


# Device-generic entry points that aotirt implements for some devices only
# (the CPU one, computed in the CPU backend), with no device op to forward to
# on the others yet. Exported, they still fail on a CUDA tensor, so they
# count as missing there. None today: every generic op forwards to the
# device's own op.
GENERIC_DEVICES: dict = {}


@dataclass(frozen=True)
class HeaderSource:
    group: str   # "cpu", "cuda" or "generic" (counts for both devices)
    path: str    # relative to the aoti_torch include directory
    prefix: str  # every op declared there starts with this


HEADER_SOURCES = (
    HeaderSource("cpu", "generated/c_shim_cpu.h", "aoti_torch_cpu_"),
    # oneDNN, quantized and c10d CPU ops, hand-written in torch.
    HeaderSource("cpu", "c/shim_cpu.h", "aoti_torch_cpu_"),
    HeaderSource("cuda", "generated/c_shim_cuda.h", "aoti_torch_cuda_"),
    HeaderSource("generic", "generated/c_shim_aten.h", "aoti_torch_aten_"),
    # Older device-generic entry points that packages made by earlier torch
    # releases still import; they carry no device in their names.
    HeaderSource("generic", "c/shim_deprecated.h", "aoti_torch_"),
)

# The declarations span lines and some carry a [[deprecated(...)]] attribute
# before the export macro, so the pattern runs over the whole text.
DECLARATION = re.compile(r"\bAOTI_TORCH_EXPORT\s+AOTITorchError\s+(aoti_torch_\w+)\s*\(")


class InventoryError(Exception):
    """Input the inventory cannot be built from; main() exits 2 with it."""


def strip_comments(text: str) -> str:
    """Drops // and /* */ comments so a commented-out declaration is not
    counted, leaving string literals (the deprecation messages) intact."""
    out: List[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            # Keep a space so tokens either side of the comment stay apart.
            out.append(" ")
            i = n if j < 0 else j + 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


def parse_header_text(text: str, prefix: str, where: str = "header") -> List[str]:
    """The op symbols declared in one header's text, sorted and unique."""
    symbols = sorted(set(DECLARATION.findall(strip_comments(text))))
    wrong = [s for s in symbols if not s.startswith(prefix)]
    if wrong:
        # A declaration outside the file's naming scheme means torch changed
        # the layout this script assumes; better to stop than miscount.
        raise InventoryError(f"{where}: declarations without the prefix {prefix}: {', '.join(wrong)}")
    return symbols


def is_backward(symbol: str) -> bool:
    return "backward" in symbol


def find_aoti_dir(torch_include: Optional[Path] = None) -> Path:
    """The aoti_torch include directory. --torch-include may name it, the
    torch include root above it, or the torch package; without it the repo's
    .venv (the pinned torch the project tests with) comes first, then the
    torch this interpreter would import."""
    if torch_include is not None:
        base = Path(torch_include)
        for candidate in (base, base / AOTI_SUBDIR, base / "include" / AOTI_SUBDIR):
            if (candidate / "generated").is_dir():
                return candidate
        raise InventoryError(f"--torch-include {base}: no aoti_torch headers there "
                             f"(expected {AOTI_SUBDIR}/generated below it)")
    candidates = sorted(REPO.glob(".venv/lib/python3*/site-packages/torch/include"))
    # find_spec locates a top-level package without running its __init__.
    spec = importlib.util.find_spec("torch")
    if spec is not None and spec.submodule_search_locations:
        candidates += [Path(p) / "include" for p in spec.submodule_search_locations]
    for include in candidates:
        if (include / AOTI_SUBDIR / "generated").is_dir():
            return include / AOTI_SUBDIR
    raise InventoryError("torch's C shim headers not found: install torch in .venv "
                         "(scripts/setup.sh) or pass --torch-include DIR")


def torch_version(aoti_dir: Path) -> str:
    """torch's version read from torch/version.py next to the headers, without
    the local suffix (+cu130, +cpu): the CPU and CUDA wheels ship the same
    headers, and the doc must not differ between them."""
    # aoti_dir is <torch>/include/torch/csrc/inductor/aoti_torch.
    parents = aoti_dir.resolve().parents
    version_py = parents[4] / "version.py" if len(parents) > 4 else None
    if version_py is None or not version_py.is_file():
        return "unknown"
    match = re.search(r"^__version__\s*=\s*['\"]([^'\"]+)['\"]", version_py.read_text(), re.M)
    return match.group(1).split("+")[0] if match else "unknown"


def parse_headers(aoti_dir: Path) -> Dict[str, Dict[str, str]]:
    """group -> {symbol: header it is declared in}."""
    missing = [s.path for s in HEADER_SOURCES if not (aoti_dir / s.path).is_file()]
    if missing:
        raise InventoryError(f"{aoti_dir}: missing shim headers: {', '.join(missing)}")
    ops: Dict[str, Dict[str, str]] = {g: {} for g in GROUPS}
    for source in HEADER_SOURCES:
        text = (aoti_dir / source.path).read_text()
        symbols = parse_header_text(text, source.prefix, source.path)
        if not symbols:
            raise InventoryError(f"{aoti_dir / source.path}: no AOTI_TORCH_EXPORT declarations found")
        for symbol in symbols:
            ops[source.group].setdefault(symbol, source.path)
    return ops


def default_library() -> Path:
    build = Path(os.environ.get("AOTIRT_BUILD_DIR", REPO / "build"))
    return build / "lib" / "libaotirt.so"


def read_exported_symbols(library: Path) -> Set[str]:
    """The dynamic symbols the library defines, as `nm -D --defined-only`
    lists them, without symbol versions."""
    if not Path(library).is_file():
        raise InventoryError(f"{library}: library not found; build aotirt first "
                             "(scripts/build.sh) or pass --library PATH")
    if shutil.which("nm") is None:
        raise InventoryError("nm not found (binutils); it lists the library's exports")
    proc = subprocess.run(["nm", "-D", "--defined-only", str(library)],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise InventoryError(f"nm -D {library} failed: {proc.stderr.strip()}")
    return {line.split()[-1].split("@")[0] for line in proc.stdout.splitlines() if line.strip()}


def _load_json(path: Path, what: str):
    try:
        return json.loads(Path(path).read_text())
    except FileNotFoundError:
        raise InventoryError(f"{path}: {what} not found") from None
    except json.JSONDecodeError as e:
        raise InventoryError(f"{path}: {what} is not valid JSON: {e}") from None


def load_exceptions(path: Path) -> Dict[str, Dict[str, str]]:
    """group -> {symbol: reason}, checked for shape only; validate_exceptions
    checks it against the headers and the library."""
    data = _load_json(path, "exceptions file")
    if not isinstance(data, dict):
        raise InventoryError(f"{path}: expected an object with the keys {', '.join(GROUPS)}")
    unknown = sorted(set(data) - set(GROUPS))
    if unknown:
        raise InventoryError(f"{path}: unknown sections {', '.join(unknown)} (allowed: {', '.join(GROUPS)})")
    result: Dict[str, Dict[str, str]] = {g: {} for g in GROUPS}
    for group in GROUPS:
        section = data.get(group, {})
        if not isinstance(section, dict):
            raise InventoryError(f"{path}: section {group!r} must map op symbol -> reason")
        for symbol, reason in section.items():
            if not isinstance(reason, str) or not reason.strip():
                raise InventoryError(f"{path}: {group}/{symbol}: an exception needs a reason")
            result[group][symbol] = reason.strip()
    return result


def validate_exceptions(exceptions: Dict[str, Dict[str, str]], ops: Dict[str, Dict[str, str]],
                        exported: Set[str]) -> None:
    """An exception must name an inference op of its section that aotirt does
    not export. A misspelt entry excuses nothing while looking as if it did,
    and one left behind after the op was implemented contradicts the table,
    so each is an error rather than a note."""
    problems: List[str] = []
    for group in GROUPS:
        for symbol in sorted(exceptions.get(group, {})):
            if symbol not in ops[group]:
                elsewhere = [g for g in GROUPS if symbol in ops[g]]
                hint = f" (it is a {elsewhere[0]} op)" if elsewhere else ""
                problems.append(f"{group}/{symbol}: unknown op in torch's {group} headers{hint}")
            elif is_backward(symbol):
                problems.append(f"{group}/{symbol}: backward ops are outside the surface; "
                                "they need no exception")
            elif symbol in exported:
                problems.append(f"{group}/{symbol}: libaotirt.so provides it; remove the exception")
    if problems:
        raise InventoryError("exceptions: " + "; ".join(problems))


def load_results(paths) -> Dict[str, dict]:
    """symbol -> {"dtypes": [...], "status": "pass"|"fail"}, merged over the
    conformance runs in |paths| (one per device): the dtypes are the union,
    and a failure in any run is a failure."""
    if paths is None:
        return {}
    if isinstance(paths, (str, Path)):
        paths = [paths]
    results: Dict[str, dict] = {}
    for path in paths:
        data = _load_json(path, "results file")
        if not isinstance(data, dict):
            raise InventoryError(f"{path}: expected an object mapping op symbol -> result")
        for symbol, entry in data.items():
            if (not isinstance(entry, dict) or entry.get("status") not in ("pass", "fail")
                    or not isinstance(entry.get("dtypes"), list)
                    or not all(isinstance(d, str) for d in entry["dtypes"])):
                raise InventoryError(f"{path}: {symbol}: expected "
                                     '{"dtypes": [names], "status": "pass" or "fail"}')
            merged = results.setdefault(symbol, {"dtypes": [], "status": "pass"})
            merged["dtypes"] = sorted(set(merged["dtypes"]) | set(entry["dtypes"]))
            if entry["status"] == "fail":
                merged["status"] = "fail"
    return results


def build_inventory(ops: Dict[str, Dict[str, str]], exported: Iterable[str],
                    exceptions: Dict[str, Dict[str, str]], results: Dict[str, dict],
                    version: str = "unknown") -> dict:
    """The whole inventory as plain data: what the doc and --json are made of."""
    exported = set(exported)
    validate_exceptions(exceptions, ops, exported)
    known = set().union(*(ops[g] for g in GROUPS))
    unknown_results = sorted(set(results) - known)
    if unknown_results:
        # A conformance suite may also test non-op shims; those have no row.
        print(f"op_inventory: note: results for symbols outside the op surface ignored: "
              f"{', '.join(unknown_results)}", file=sys.stderr)
    devices = {}
    for device in DEVICES:
        declared = {**{s: (h, "generic") for s, h in ops["generic"].items()},
                    **{s: (h, device) for s, h in ops[device].items()}}
        rows, backward = [], []
        for symbol in sorted(declared):
            header, group = declared[symbol]
            if is_backward(symbol):
                backward.append(symbol)
                continue
            reason = exceptions.get(group, {}).get(symbol)
            served = group != "generic" or device in GENERIC_DEVICES.get(symbol, DEVICES)
            status = "provided" if symbol in exported and served else ("exception" if reason else "missing")
            result = results.get(symbol)
            rows.append({
                "symbol": symbol,
                "header": header,
                "generic": group == "generic",
                "status": status,
                "reason": reason,
                # Sorted here so the doc does not depend on the order a run listed them.
                "tested_dtypes": sorted(set(result["dtypes"])) if result else [],
                "test_status": result["status"] if result else None,
            })
        surface = len(rows)
        if surface == 0:
            raise InventoryError(f"no {device} ops in the headers")
        count = {s: sum(r["status"] == s for r in rows) for s in ("provided", "missing", "exception")}
        devices[device] = {
            "surface": surface,
            "provided": count["provided"],
            "missing": count["missing"],
            "exceptions": count["exception"],
            "backward_excluded": len(backward),
            # Rounded down, so a figure never claims more than is there.
            "coverage_percent": count["provided"] * 100 // surface,
            "exceptions_over_limit": count["exception"] * 100 >= EXCEPTION_LIMIT_PERCENT * surface,
            "ops": rows,
            "backward": backward,
        }
    return {"torch_version": version, "exception_limit_percent": EXCEPTION_LIMIT_PERCENT,
            "devices": devices}


def _cell(text: str) -> str:
    # A reason is free text: keep it on one line and out of the column syntax.
    return " ".join(text.split()).replace("|", "\\|")


def _dtypes_cell(row: dict) -> str:
    if not row["tested_dtypes"] and row["test_status"] is None:
        return ""
    text = ", ".join(row["tested_dtypes"])
    return f"{text} (fail)" if row["test_status"] == "fail" else text


def _percent(part: int, whole: int) -> str:
    return f"{part * 100 // whole}%"


def render_markdown(inv: dict, results_name: Optional[str] = None) -> str:
    devs = inv["devices"]
    limit = inv["exception_limit_percent"]
    lines = [
        "# Fallback-op coverage",
        "",
        "<!-- Generated by tests/ops/op_inventory.py; do not edit by hand. -->",
        "",
        "This file measures how much of torch's AOTInductor fallback-op surface aotirt "
        "provides. The surface is every op the C shim headers of the installed torch "
        f"({inv['torch_version']}) declare: `generated/c_shim_cpu.h` and `c/shim_cpu.h` "
        "for the CPU, `generated/c_shim_cuda.h` for CUDA, and the device-generic "
        "`generated/c_shim_aten.h` and `c/shim_deprecated.h`, which count for both "
        "devices, except that a generic op aotirt implements for the CPU only "
        "(`GENERIC_DEVICES` in `tests/ops/op_inventory.py`) counts as missing for CUDA. Backward ops are left out (a model library for inference does not "
        "call them). An op is *provided* when aotirt exports its symbol (as "
        "`python/aotirt/provided_shims*.txt` list it, which every build is checked "
        "against), an "
        "*exception* when it is deliberately not provided (`tests/ops/exceptions.json` "
        "gives the reason), and *missing* otherwise. The file is generated by "
        f"`{SCRIPT}`; regenerate it after a build with "
        f"`.venv/bin/python {SCRIPT}` (`--library PATH` reads a build's exports "
        "instead, `--results FILE` fills the tested dtypes), and "
        f"`.venv/bin/python {SCRIPT} --check` tells whether it is current.",
        "",
    ]
    for device in DEVICES:
        d = devs[device]
        lines += [f"{DEVICE_TITLES[device]} coverage: {d['coverage_percent']}% "
                  f"({d['provided']} of {d['surface']} ops provided)", ""]
    lines += [
        "| device | surface | provided | exceptions | missing | backward (excluded) |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for device in DEVICES:
        d = devs[device]
        lines.append(f"| {DEVICE_TITLES[device]} | {d['surface']} | {d['provided']} | "
                     f"{d['exceptions']} | {d['missing']} | {d['backward_excluded']} |")
    lines += ["", "Tested dtypes: " + (f"the dtypes of the calls that passed in the conformance runs, "
                                       f"from {results_name}; (fail) marks an op with a failing test."
                                       if results_name else
                                       "no conformance results were given, so the column is empty."),
              ""]

    lines += ["## Exceptions", ""]
    for device in DEVICES:
        d = devs[device]
        lines.append(f"{DEVICE_TITLES[device]}: {d['exceptions']} of {d['surface']} ops "
                     f"({_percent(d['exceptions'], d['surface'])}; the limit is under {limit}%).")
        lines.append("")
    for device in DEVICES:
        d = devs[device]
        if d["exceptions_over_limit"]:
            lines += [f"**Warning:** {DEVICE_TITLES[device]} exceptions are {d['exceptions']} of "
                      f"{d['surface']} ops ({_percent(d['exceptions'], d['surface'])}), not under "
                      f"{limit}%.", ""]
    # A generic op's exception shows in both device tables but is one entry.
    listed: Dict[str, str] = {}
    for device in DEVICES:
        for row in devs[device]["ops"]:
            if row["status"] == "exception":
                listed[row["symbol"]] = row["reason"]
    if listed:
        lines += ["| op | reason |", "|---|---|"]
        lines += [f"| `{s}` | {_cell(listed[s])} |" for s in sorted(listed)]
    else:
        lines.append("None.")
    lines.append("")

    for device in DEVICES:
        d = devs[device]
        lines += [
            f"## {DEVICE_TITLES[device]} ops",
            "",
            f"{d['surface']} ops: {d['provided']} provided, {d['exceptions']} exceptions, "
            f"{d['missing']} missing; {d['backward_excluded']} backward ops excluded. "
            "Ops marked (generic) come from the device-generic headers.",
            "",
            "| op | status | tested dtypes | reason |",
            "|---|---|---|---|",
        ]
        for row in d["ops"]:
            name = f"`{row['symbol']}`" + (" (generic)" if row["generic"] else "")
            lines.append(f"| {name} | {row['status']} | {_dtypes_cell(row)} | "
                         f"{_cell(row['reason'] or '')} |")
        lines.append("")
    return "\n".join(lines)


SHIM_LISTS = (REPO / "python" / "aotirt" / "provided_shims.txt",
              REPO / "python" / "aotirt" / "provided_shims_cuda.txt")


def read_shim_lists(paths=SHIM_LISTS) -> Set[str]:
    """The shims aotirt provides, as python/aotirt/provided_shims*.txt list
    them: what a full build exports (tests/models/test_symbols.py holds every
    build to them), so the doc does not depend on which build is at hand."""
    names: Set[str] = set()
    for path in paths:
        try:
            names |= {line.strip() for line in Path(path).read_text().splitlines() if line.strip()}
        except FileNotFoundError:
            raise InventoryError(f"{path}: provided-shim list not found") from None
    return names


def run(args: argparse.Namespace) -> int:
    aoti_dir = find_aoti_dir(args.torch_include)
    ops = parse_headers(aoti_dir)
    exported = read_exported_symbols(args.library) if args.library else read_shim_lists()
    exceptions = load_exceptions(args.exceptions)
    results = load_results(args.results)
    inv = build_inventory(ops, exported, exceptions, results, torch_version(aoti_dir))
    # Only the file's name goes into the doc: a path would differ per machine.
    text = render_markdown(inv, ", ".join(f"`{p.name}`" for p in args.results) if args.results else None)

    if args.json:
        Path(args.json).write_text(json.dumps(inv, indent=2, sort_keys=True) + "\n")
    for device in DEVICES:
        d = inv["devices"][device]
        if d["exceptions_over_limit"]:
            print(f"op_inventory: warning: {device} exceptions are not under "
                  f"{EXCEPTION_LIMIT_PERCENT}% of its ops", file=sys.stderr)
    summary = ", ".join(f"{DEVICE_TITLES[dev]} {inv['devices'][dev]['coverage_percent']}% "
                        f"({inv['devices'][dev]['provided']}/{inv['devices'][dev]['surface']})"
                        for dev in DEVICES)
    doc = Path(args.doc)
    if args.check:
        current = doc.read_text() if doc.is_file() else None
        if current == text:
            print(f"{doc} is current: {summary}")
            return 0
        if current is None:
            print(f"op_inventory: {doc} does not exist; generate it with "
                  f".venv/bin/python {SCRIPT}", file=sys.stderr)
            return 1
        diff = list(difflib.unified_diff(current.splitlines(), text.splitlines(),
                                         f"{doc} (committed)", f"{doc} (regenerated)", lineterm=""))
        shown = diff[:40]
        print("\n".join(shown + ([f"... {len(diff) - len(shown)} more diff lines"]
                                 if len(diff) > len(shown) else [])), file=sys.stderr)
        print(f"op_inventory: {doc} is stale (headers, library, exceptions or results changed); "
              f"regenerate it with .venv/bin/python {SCRIPT}", file=sys.stderr)
        return 1
    doc.write_text(text)
    print(f"wrote {doc}: {summary}")
    return 0


def parse_args(argv: Optional[List[str]]) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--check", action="store_true",
                   help="regenerate in memory; exit 1 if the doc differs")
    p.add_argument("--json", type=Path, metavar="OUT", help="write the inventory as JSON")
    p.add_argument("--results", type=Path, nargs="*", metavar="FILE", default=DEFAULT_RESULTS,
                   help='conformance results, merged: {symbol: {"dtypes": [...], "status": '
                        '"pass"|"fail"}} (default: tests/ops/results-*.json; none: --results '
                        'with no file)')
    p.add_argument("--library", type=Path, metavar="PATH",
                   help="read the provided shims from this libaotirt.so's exports instead of "
                        "python/aotirt/provided_shims*.txt")
    p.add_argument("--torch-include", type=Path, metavar="DIR",
                   help="torch's include dir (or its aoti_torch dir) instead of the installed torch's")
    p.add_argument("--exceptions", type=Path, default=DEFAULT_EXCEPTIONS, metavar="FILE",
                   help="exceptions file (default: tests/ops/exceptions.json)")
    p.add_argument("--doc", type=Path, default=DEFAULT_DOC, metavar="FILE",
                   help="the doc to write or check (default: docs/ops.md)")
    return p.parse_args(argv)


def main(argv: Optional[List[str]] = None) -> int:
    args = parse_args(argv)
    try:
        return run(args)
    except InventoryError as e:
        print(f"op_inventory: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
