"""What the tests that run the aotirt CLI on zoo packages share: where the
CLI is ($AOTIRT_CLI, else bin/aotirt of $AOTIRT_BUILD_DIR, else of build/),
the mark that skips such a module when it is not built, and the zoo's CPU
packages by name. conftest.py puts this folder and python/ on sys.path."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

import make_packages

REPO = Path(__file__).resolve().parent.parent.parent
BUILD = Path(os.environ.get("AOTIRT_BUILD_DIR", REPO / "build"))
CLI = Path(os.environ.get("AOTIRT_CLI", BUILD / "bin" / "aotirt"))

# A module's pytestmark: its tests need the CLI.
requires_cli = pytest.mark.skipif(not CLI.exists(), reason=f"aotirt CLI not built at {CLI}")


def cpu_zoo_packages(names) -> dict[str, dict]:
    """The zoo's CPU packages among |names| that exported (made, or taken from
    the cache, quietly): for each its .pt2 ("pt2") and the files of its first
    input set ("inputs"). A package that failed to export is left out; the
    caller says which it cannot do without."""
    manifest = make_packages.ensure_packages("cpu", only=list(names), log=lambda *_: None)
    root = Path(manifest["root"])
    found = {}
    for p in manifest["packages"]:
        if p["name"] in names and "error" not in p:
            d = root / p["dir"]
            found[p["name"]] = {"pt2": d / p["package"], "inputs": [d / e["file"] for e in p["input_sets"][0]["inputs"]]}
    return found
