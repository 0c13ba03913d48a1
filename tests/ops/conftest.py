"""The fixture every op test shares (one Shims per test module), and the
results the suite records for docs/ops.md.

With AOTIRT_OP_RESULTS=PATH, the run writes PATH as JSON: for every shim a
test called, the dtypes of its input tensors in the calls that succeeded
within passing tests, and "fail" if a test calling it failed. Under
pytest-xdist each worker writes PATH.<worker> and the controller merges them.
tests/ops/op_inventory.py reads the committed results-<device>.json files.
"""
import glob
import json
import os

import pytest

from shim_harness import Shims

_RESULTS = {}  # symbol -> {"dtypes": set, "status": "pass" | "fail"}


@pytest.fixture(scope="module")
def shims():
    s = Shims()
    yield s
    s.release()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.when != "call":
        return
    s = getattr(item, "funcargs", {}).get("shims")
    if not isinstance(s, Shims):
        return
    for symbol, dtypes in s.take_calls().items():
        entry = _RESULTS.setdefault(symbol, {"dtypes": set(), "status": "pass"})
        if report.passed:
            entry["dtypes"] |= dtypes
        elif report.failed:
            entry["status"] = "fail"


def _merge(into, symbol, dtypes, status):
    entry = into.setdefault(symbol, {"dtypes": set(), "status": "pass"})
    entry["dtypes"] |= set(dtypes)
    if status == "fail":
        entry["status"] = "fail"


def pytest_sessionfinish(session):
    path = os.environ.get("AOTIRT_OP_RESULTS")
    if not path:
        return
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    merged = {}
    for symbol, entry in _RESULTS.items():
        _merge(merged, symbol, entry["dtypes"], entry["status"])
    if worker is None:
        # The controller (or a run without xdist): fold in the workers' parts.
        for part in glob.glob(glob.escape(path) + ".gw*"):
            with open(part) as f:
                for symbol, entry in json.load(f).items():
                    _merge(merged, symbol, entry["dtypes"], entry["status"])
            os.remove(part)
    out = path + f".{worker}" if worker else path
    data = {s: {"dtypes": sorted(e["dtypes"]), "status": e["status"]} for s, e in sorted(merged.items())}
    with open(out, "w") as f:
        json.dump(data, f, indent=1, sort_keys=True)
        f.write("\n")
