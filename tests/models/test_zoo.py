# Runs every zoo package through the aotirt CLI and compares its outputs with
# eager PyTorch; also runs them through libtorch's own loader as a reference,
# which shows whether a mismatch is aotirt's or the package's.

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import zoo
from zoo_check import compare_outputs, package_entry, zoo_device

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
NAMES = [m.name for m in zoo.MODELS]


@pytest.fixture(scope="session")
def cli() -> str:
    path = os.environ.get("AOTIRT_CLI") or str(REPO / "build" / "bin" / "aotirt")
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        pytest.skip(f"aotirt CLI not found at {path}: build it or set AOTIRT_CLI")
    return path


def _missing_shims(pkg: dict) -> list:
    import aotirt

    provided = aotirt.provided_shims(zoo_device())
    return [n for n in pkg["imported_shims"] if n not in provided]


@pytest.mark.parametrize("name", NAMES)
def test_cli_matches_eager(name, zoo_manifest, zoo_root, cli, tmp_path):
    pkg = package_entry(zoo_manifest, name)
    pkg_dir = zoo_root / pkg["dir"]
    for s in pkg["input_sets"]:
        out_dir = tmp_path / s["name"]
        cmd = [cli, "run", str(pkg_dir / pkg["package"])]
        for e in s["inputs"]:
            cmd += ["--input", str(pkg_dir / e["file"])]
        cmd += ["--output-dir", str(out_dir), "--device", zoo_device()]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        if proc.returncode != 0:
            missing = _missing_shims(pkg)
            hint = f"\nshims the package imports that aotirt lacks: {missing}" if missing else ""
            pytest.fail(
                f"{' '.join(cmd)}\nexited {proc.returncode}\nstdout:\n{proc.stdout}\n"
                f"stderr:\n{proc.stderr}{hint}"
            )
        problems = compare_outputs(pkg_dir, s["expected"], out_dir, pkg["tolerance"])
        assert not problems, f"{name} {s['name']}:\n" + "\n".join(problems)


def test_cpu_packages_are_vectorised(zoo_manifest, zoo_root):
    """Every CPU package of the zoo compiles its kernels for a vector ISA on a
    CPU that has one (a spoilt Inductor probe made them scalar: see
    python/aotirt/_vec_isa.py)."""
    import aotirt
    from test_vec_isa import host_has_vector_isa

    if zoo_device() != "cpu":
        pytest.skip("CUDA packages carry no CPU kernels")
    if not host_has_vector_isa():
        pytest.skip("this CPU has no AVX2: scalar kernels are expected")
    scalar = {}
    for pkg in zoo_manifest["packages"]:
        if "error" in pkg:
            continue
        isa = aotirt.read_metadata(zoo_root / pkg["dir"] / pkg["package"]).get("AOTI_CPU_ISA", "")
        if not isa or isa == "INVALID_VEC_ISA":
            scalar[pkg["name"]] = isa
    assert not scalar, f"CPU packages compiled without a vector ISA: {scalar}"


@pytest.mark.parametrize("preset", [None, "4"])
def test_cli_uses_one_cuda_connection_unless_told(preset, zoo_manifest, zoo_root, cli, tmp_path):
    # The CLI asks the driver for one hardware work queue (less host memory)
    # unless the caller chose a number.
    pkg = package_entry(zoo_manifest, "mlp")
    pkg_dir = zoo_root / pkg["dir"]
    s = pkg["input_sets"][0]
    cmd = [cli, "run", str(pkg_dir / pkg["package"]), "--output-dir", str(tmp_path / "out"), "--device", zoo_device()]
    for e in s["inputs"]:
        cmd += ["--input", str(pkg_dir / e["file"])]
    env = {k: v for k, v in os.environ.items() if k != "CUDA_DEVICE_MAX_CONNECTIONS"}
    env["AOTIRT_LOG_LEVEL"] = "debug"
    if preset:
        env["CUDA_DEVICE_MAX_CONNECTIONS"] = preset
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr
    want = f"CUDA_DEVICE_MAX_CONNECTIONS={preset} (set by the caller)" if preset else \
        "CUDA_DEVICE_MAX_CONNECTIONS=1 (the CLI's default)"
    assert want in proc.stderr, proc.stderr
    assert not compare_outputs(pkg_dir, s["expected"], tmp_path / "out", pkg["tolerance"])


def _cli_cmd(cli, pkg_dir, pkg, files, out_dir):
    cmd = [cli, "run", str(pkg_dir / pkg["package"]), "--output-dir", str(out_dir), "--device", zoo_device()]
    for f in files:
        cmd += ["--input", str(f)]
    return cmd


def test_cli_reads_inputs_beside_the_load(zoo_manifest, zoo_root, cli, tmp_path):
    # `aotirt run` reads and converts its inputs (here float32 files for a
    # bfloat16 model) on a thread while the model loads; the outputs are the
    # same as eager PyTorch's.
    pkg = package_entry(zoo_manifest, "bf16")
    pkg_dir = zoo_root / pkg["dir"]
    s = pkg["input_sets"][0]
    env = {**os.environ, "AOTIRT_LOG_LEVEL": "debug"}
    cmd = _cli_cmd(cli, pkg_dir, pkg, [pkg_dir / e["file"] for e in s["inputs"]], tmp_path / "out")
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr
    assert "run: inputs read beside the load" in proc.stderr, proc.stderr
    assert not compare_outputs(pkg_dir, s["expected"], tmp_path / "out", pkg["tolerance"])


def test_cli_input_errors_are_the_same_after_the_early_read(zoo_manifest, zoo_root, cli, tmp_path):
    # The inputs are read beside the load whatever their shapes; the check
    # after the load fails with the usual message and a non-zero exit.
    import numpy as np

    pkg = package_entry(zoo_manifest, "mlp")
    pkg_dir = zoo_root / pkg["dir"]
    bad = tmp_path / "bad.npy"
    np.save(bad, np.zeros((3, 5, 7), dtype=np.float32))
    env = {**os.environ, "AOTIRT_LOG_LEVEL": "debug"}
    proc = subprocess.run(_cli_cmd(cli, pkg_dir, pkg, [bad], tmp_path / "out"), capture_output=True, text=True,
                          timeout=300, env=env)
    assert proc.returncode != 0
    assert "the model expects shape" in proc.stderr, proc.stderr
    assert str(bad) in proc.stderr
    assert not (tmp_path / "out" / "output0.npy").exists()


@pytest.fixture(scope="session")
def reference_outputs(zoo_manifest, zoo_root, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("reference")
    proc = subprocess.run(
        [sys.executable, str(HERE / "reference_run.py"),
         "--manifest", str(zoo_root / "manifest.json"), "--out", str(out)],
        capture_output=True, text=True, timeout=1200,
    )
    if not (out / "status.json").is_file():
        pytest.fail(f"reference_run.py failed:\n{proc.stdout}\n{proc.stderr}")
    return out


@pytest.mark.parametrize("name", NAMES)
def test_libtorch_reference_matches_eager(name, zoo_manifest, zoo_root, reference_outputs):
    pkg = package_entry(zoo_manifest, name)
    status = json.loads((reference_outputs / "status.json").read_text())
    assert status.get(name) == "ok", f"libtorch could not run {name}:\n{status.get(name)}"
    pkg_dir = zoo_root / pkg["dir"]
    problems = []
    for s in pkg["input_sets"]:
        got = reference_outputs / name / s["name"]
        problems += compare_outputs(pkg_dir, s["expected"], got, pkg["tolerance"])
        for k, files in enumerate(s.get("expected_repeat", [])):
            problems += [
                f"call {k + 1}: {p}"
                for p in compare_outputs(pkg_dir, files, got / f"call{k + 1}", pkg["tolerance"])
            ]
    assert not problems, f"{name}:\n" + "\n".join(problems)
