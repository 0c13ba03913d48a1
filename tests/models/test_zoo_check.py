# The output comparison must be able to fail: these feed it wrong outputs and
# check that each kind of mismatch is reported.

from __future__ import annotations

import numpy as np

from zoo_check import compare_outputs

TOL = {"rtol": 1e-4, "atol": 1e-5}


def _setup(tmp_path, arrays):
    pkg = tmp_path / "pkg"
    (pkg / "expected").mkdir(parents=True)
    expected = []
    for i, a in enumerate(arrays):
        rel = f"expected/output{i}.npy"
        np.save(pkg / rel, a)
        expected.append({"file": rel})
    got = tmp_path / "got"
    got.mkdir()
    return pkg, expected, got


def test_identical_outputs_pass(tmp_path):
    arrays = [np.linspace(-1, 1, 6, dtype=np.float32), np.arange(3), np.array([True, False])]
    pkg, expected, got = _setup(tmp_path, arrays)
    for i, a in enumerate(arrays):
        np.save(got / f"output{i}.npy", a)
    assert compare_outputs(pkg, expected, got, TOL) == []


def test_each_mismatch_is_reported(tmp_path):
    f = np.linspace(-1, 1, 6, dtype=np.float32)
    pkg, expected, got = _setup(
        tmp_path, [f, np.arange(3), np.array([True, False]), f, f]
    )
    np.save(got / "output0.npy", f + 1e-2)                  # outside tolerance
    np.save(got / "output1.npy", np.array([0, 1, 3]))       # one int differs
    np.save(got / "output2.npy", np.array([True, True]))    # one bool differs
    np.save(got / "output3.npy", f.astype(np.float64))      # wrong dtype
    np.save(got / "output4.npy", f.reshape(2, 3))           # wrong shape
    np.save(got / "output5.npy", f)                         # one output too many
    problems = compare_outputs(pkg, expected, got, TOL)
    text = "\n".join(problems)
    assert "output0: max abs diff" in text
    assert "output1: 1 of 3" in text
    assert "output2: 1 of 2" in text
    assert "output3: dtype float64" in text
    assert "output4: shape (2, 3)" in text
    assert "more outputs than the 5 expected" in text


def test_missing_output_is_reported(tmp_path):
    pkg, expected, got = _setup(tmp_path, [np.ones(2, np.float32)])
    assert compare_outputs(pkg, expected, got, TOL) == [
        f"output0: {got / 'output0.npy'} was not written"
    ]


def test_within_tolerance_passes(tmp_path):
    f = np.linspace(1, 2, 5, dtype=np.float32)
    pkg, expected, got = _setup(tmp_path, [f])
    np.save(got / "output0.npy", f * (1 + 5e-5))
    assert compare_outputs(pkg, expected, got, TOL) == []
