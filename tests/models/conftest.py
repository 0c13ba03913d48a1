# Shared fixtures for the zoo tests: the packages are built (or taken from the
# cache) once per session, so `pytest tests/models` works on a fresh clone.

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
for p in (str(REPO / "python"), str(HERE)):
    if p not in sys.path:
        sys.path.insert(0, p)


@pytest.fixture(scope="session")
def zoo_manifest() -> dict:
    import make_packages
    from zoo_check import zoo_device

    root = os.environ.get("AOTIRT_ZOO_DIR")
    return make_packages.ensure_packages(zoo_device(), Path(root) if root else None)


@pytest.fixture(scope="session")
def zoo_root(zoo_manifest) -> Path:
    return Path(zoo_manifest["root"])
