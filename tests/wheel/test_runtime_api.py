# The installed wheel's Python runtime API and CLI, in a virtual environment
# without torch (scripts/wheel-check.sh makes it): every zoo package exported
# earlier in the test run is loaded with aotirt.load and compared with the
# eager outputs saved beside it, then threads, the console script, the CMake
# package and bad input. AOTIRT_ZOO_MANIFEST names the zoo's manifest.

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import aotirt

MANIFEST = os.environ.get("AOTIRT_ZOO_MANIFEST", "")
pytestmark = pytest.mark.skipif(not os.path.isfile(MANIFEST), reason="AOTIRT_ZOO_MANIFEST names no zoo manifest")


def manifest():
    return json.loads(Path(MANIFEST).read_text())


def packages():
    if not os.path.isfile(MANIFEST):
        return []
    return [p for p in manifest()["packages"] if "error" not in p]


def package(name):
    m = manifest()
    for p in m["packages"]:
        if p["name"] == name and "error" not in p:
            return Path(m["root"]) / p["dir"], p
    pytest.skip(f"the zoo has no {name} package")


def load_npy(pkg_dir, entry):
    """A saved tensor as the model takes it (bfloat16 and float16 are stored widened)."""
    a = np.load(pkg_dir / entry["file"])
    if entry["dtype"] == "bfloat16":
        return a.astype(ml_dtypes.bfloat16)
    if entry["dtype"] == "float16":
        return a.astype(np.float16)
    return a


def close(got, want, tol):
    got = np.asarray(got)
    if got.dtype == ml_dtypes.bfloat16 or got.dtype == np.float16:
        got = got.astype(np.float32)
    assert got.shape == want.shape, (got.shape, want.shape)
    if want.dtype.kind in "biu":
        assert np.array_equal(got, want)
    else:
        np.testing.assert_allclose(got, want, rtol=tol["rtol"], atol=tol["atol"])


def test_no_torch_here():
    """The runtime imports without torch, and this environment has none."""
    assert importlib.util.find_spec("torch") is None
    assert "torch" not in sys.modules
    assert aotirt.runtime_version() == aotirt.__version__


@pytest.mark.parametrize("pkg", packages(), ids=lambda p: p["name"])
def test_zoo_matches_eager(pkg):
    pkg_dir = Path(manifest()["root"]) / pkg["dir"]
    for s in pkg["input_sets"]:
        m = aotirt.load(pkg_dir / pkg["package"])  # a fresh model per set, as the zoo's eager run
        inputs = [load_npy(pkg_dir, e) for e in s["inputs"]]
        calls = [s["expected"], *s.get("expected_repeat", [])]
        for expected in calls:
            outs = m(*inputs)
            assert len(outs) == len(expected)
            for got, e in zip(outs, expected):
                close(got, np.load(pkg_dir / e["file"]), pkg["tolerance"])
                assert str(np.asarray(got).dtype) == e["dtype"]


def test_specs_and_inspect():
    pkg_dir, info = package("multi_io")
    m = aotirt.load(pkg_dir / "model.pt2", device="cpu")
    assert m.device == "cpu"
    assert [s.dtype for s in m.inputs] == ["float32", "int64", "bool"]
    assert m.inputs[0].shape == (6, 8)
    assert [s.dtype for s in m.outputs] == ["float32", "int64", "bool"]
    seen = aotirt.inspect(pkg_dir / "model.pt2")
    assert seen["device"] == "cpu" and seen["missing_shims"] == []
    assert [s["dtype"] for s in seen["inputs"]] == ["float32", "int64", "bool"]
    dyn_dir, _ = package("dynamic_batch")
    assert aotirt.load(dyn_dir / "model.pt2").inputs[0].shape[0] is None
    assert "multi_io" in repr(m) or "model.pt2" in repr(m)


def test_outputs_modes_and_strided_inputs():
    pkg_dir, info = package("mlp")
    m = aotirt.load(pkg_dir / "model.pt2")
    x = load_npy(pkg_dir, info["input_sets"][0]["inputs"][0])
    want = m(x)[0]
    # A strided view is copied densely first.
    wide = np.zeros((x.shape[0], x.shape[1] * 2), dtype=x.dtype)
    wide[:, ::2] = x
    assert not wide[:, ::2].flags.c_contiguous
    assert np.array_equal(m(wide[:, ::2])[0], want)
    # DLPack arrays read as numpy without a copy.
    out = m.run([x], outputs="dlpack")[0]
    assert not isinstance(out, np.ndarray)
    view = np.from_dlpack(out)
    assert np.array_equal(view, want)
    assert np.array_equal(m.run([x], outputs="numpy")[0], want)
    # Outputs own their memory: they outlive the model.
    kept = m(x)[0]
    del m
    assert np.array_equal(kept, want)


def test_threads_match_serial():
    pkg_dir, info = package("mlp")
    m = aotirt.load(pkg_dir / "model.pt2", num_runners=4)
    rng = np.random.default_rng(0)
    x = load_npy(pkg_dir, info["input_sets"][0]["inputs"][0])
    inputs = [(x + rng.standard_normal(x.shape).astype(x.dtype)) for _ in range(16)]
    serial = [m(i)[0] for i in inputs]
    results = {}
    errors = []

    def worker(t):
        try:
            for _ in range(10):
                for k in range(t, len(inputs), 4):
                    results.setdefault(k, []).append(m(inputs[k])[0])
        except Exception as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for k, outs in results.items():
        for o in outs:
            assert np.array_equal(o, serial[k])


def test_bad_input():
    pkg_dir, info = package("mlp")
    m = aotirt.load(pkg_dir / "model.pt2")
    x = load_npy(pkg_dir, info["input_sets"][0]["inputs"][0])
    # The CLI's wording, with "the input" where the CLI names the .npy file.
    with pytest.raises(aotirt.InvalidArgumentError,
                       match=r"input 0 \('x'\): the model expects float32, but the input holds float64") as e:
        m(x.astype(np.float64))
    assert e.value.code == "INVALID_ARGUMENT" and str(e.value).startswith("INVALID_ARGUMENT: ")
    assert isinstance(e.value, aotirt.Error) and isinstance(e.value, ValueError)
    with pytest.raises(aotirt.InvalidArgumentError,
                       match=r"the model expects shape \[4, 32\], but the input has shape \[4, 31\]"):
        m(x[:, :-1].copy())
    with pytest.raises(aotirt.InvalidArgumentError, match="takes 1 input"):
        m(x, x)
    with pytest.raises(aotirt.InvalidArgumentError, match="takes 1 input"):
        m()
    with pytest.raises(aotirt.InvalidArgumentError, match="numpy array or a DLPack"):
        m(x.tolist())
    with pytest.raises(aotirt.InvalidArgumentError, match="numpy dtype object"):
        m(np.array([object()] * 4))
    with pytest.raises(aotirt.InvalidArgumentError, match="list of inputs"):
        m.run(x)
    with pytest.raises(aotirt.InvalidArgumentError, match="outputs must be"):
        m.run([x], outputs="torch")
    with pytest.raises(aotirt.InvalidArgumentError, match="num_runners"):
        aotirt.load(pkg_dir / "model.pt2", num_runners=0)
    # The model still runs after all of that.
    assert np.array_equal(m(x)[0], m(x)[0])


def test_bad_packages(tmp_path):
    pkg_dir, _ = package("mlp")
    with pytest.raises(aotirt.NotFoundError):
        aotirt.load(tmp_path / "missing.pt2")
    junk = tmp_path / "junk.pt2"
    junk.write_bytes(b"not a zip" * 100)
    with pytest.raises(aotirt.Error) as e:
        aotirt.load(junk)
    assert e.value.code in ("DATA_LOSS", "INVALID_ARGUMENT")
    with pytest.raises(aotirt.Error):
        aotirt.inspect(junk)
    # A CPU package on a device that is not there, or of the wrong type.
    with pytest.raises(aotirt.Error) as e:
        aotirt.load(pkg_dir / "model.pt2", device="cuda:0")
    assert e.value.code in ("UNAVAILABLE", "INCOMPATIBLE", "INVALID_ARGUMENT")
    with pytest.raises(aotirt.InvalidArgumentError):
        aotirt.load(pkg_dir / "model.pt2", device="tpu")


def test_console_script(tmp_path):
    pkg_dir, info = package("mlp")
    s = info["input_sets"][0]
    exe = Path(sys.executable).parent / "aotirt"
    r = subprocess.run([str(exe), "run", str(pkg_dir / "model.pt2"), "-i", str(pkg_dir / s["inputs"][0]["file"]),
                        "-o", str(tmp_path)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    close(np.load(tmp_path / "output0.npy"), np.load(pkg_dir / s["expected"][0]["file"]), info["tolerance"])
    r = subprocess.run([str(exe), "run", str(tmp_path / "missing.pt2")], capture_output=True, text=True)
    assert r.returncode != 0 and "error" in r.stderr


def test_cmake_package(tmp_path):
    """C++ users find_package(aotirt) from site-packages."""
    cmake = subprocess.run(["cmake", "--version"], capture_output=True)
    if cmake.returncode != 0:
        pytest.skip("no cmake")
    assert (Path(aotirt.cmake_dir()) / "aotirtConfig.cmake").is_file()
    src = tmp_path / "src"
    src.mkdir()
    (src / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.16)\nproject(user CXX)\nset(CMAKE_CXX_STANDARD 17)\n"
        "find_package(aotirt REQUIRED)\nadd_executable(user main.cpp)\n"
        "target_link_libraries(user PRIVATE aotirt::aotirt)\n")
    (src / "main.cpp").write_text(
        '#include <aotirt/model.h>\n#include <cstdio>\n'
        'int main(int argc, char** argv) {\n'
        '  auto m = aotirt::Model::load(argv[1]);\n'
        '  if (!m.ok()) { std::printf("%s\\n", m.status().to_string().c_str()); return 1; }\n'
        '  std::printf("%s %zu\\n", aotirt::version(), (*m)->num_inputs());\n  return 0;\n}\n')
    build = tmp_path / "build"
    subprocess.run(["cmake", "-S", str(src), "-B", str(build), f"-Daotirt_DIR={aotirt.cmake_dir()}"], check=True,
                   capture_output=True)
    subprocess.run(["cmake", "--build", str(build)], check=True, capture_output=True)
    pkg_dir, _ = package("mlp")
    r = subprocess.run([str(build / "user"), str(pkg_dir / "model.pt2")], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.strip() == f"{aotirt.__version__} 1"
