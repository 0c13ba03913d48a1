# Helpers shared by the zoo tests: finding a package in the manifest and
# comparing a directory of output<i>.npy files with the expected outputs.

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest


def zoo_device() -> str:
    """Device the zoo tests build for and run on (AOTIRT_TEST_DEVICE, default cpu)."""
    return os.environ.get("AOTIRT_TEST_DEVICE", "cpu")


def package_entry(manifest: dict, name: str) -> dict:
    for pkg in manifest["packages"]:
        if pkg["name"] == name:
            if "error" in pkg:
                pytest.fail(f"package {name} was not built: {pkg['error']}")
            return pkg
    pytest.fail(f"package {name} is not in the manifest")


def compare_outputs(pkg_dir: Path, expected: list, got_dir: Path, tolerance: dict) -> list:
    """Problems found comparing got_dir/output<i>.npy with the expected files."""
    problems = []
    for i, e in enumerate(expected):
        got_path = got_dir / f"output{i}.npy"
        if not got_path.is_file():
            problems.append(f"output{i}: {got_path} was not written")
            continue
        want = np.load(pkg_dir / e["file"])
        got = np.load(got_path)
        if got.dtype != want.dtype:
            problems.append(f"output{i}: dtype {got.dtype}, expected {want.dtype}")
            continue
        if got.shape != want.shape:
            problems.append(f"output{i}: shape {got.shape}, expected {want.shape}")
            continue
        if want.dtype.kind == "f":
            if not np.allclose(got, want, rtol=tolerance["rtol"], atol=tolerance["atol"]):
                diff = np.abs(got.astype(np.float64) - want)
                problems.append(
                    f"output{i}: max abs diff {diff.max():.3g} (tolerance rtol "
                    f"{tolerance['rtol']}, atol {tolerance['atol']})"
                )
        elif not np.array_equal(got, want):
            problems.append(
                f"output{i}: {int((got != want).sum())} of {want.size} {want.dtype} values differ"
            )
    extra = got_dir / f"output{len(expected)}.npy"
    if extra.exists():
        problems.append(f"more outputs than the {len(expected)} expected ({extra.name} exists)")
    return problems
