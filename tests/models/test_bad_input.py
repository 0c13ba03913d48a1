"""Bad input through the CLI: every case must exit non-zero with a clear
message naming the problem, never crash, and leave no temporary files."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(REPO / "python"))

import make_packages  # noqa: E402

BUILD = Path(os.environ.get("AOTIRT_BUILD_DIR", REPO / "build"))
CLI = Path(os.environ.get("AOTIRT_CLI", BUILD / "bin" / "aotirt"))

pytestmark = pytest.mark.skipif(not CLI.exists(), reason=f"aotirt CLI not built at {CLI}")


@pytest.fixture(scope="module")
def zoo():
    names = ("mlp", "mlp_plain", "transformer")
    manifest = make_packages.ensure_packages("cpu", only=list(names), log=lambda *_: None)
    root = Path(manifest["root"])
    out = {}
    for p in manifest["packages"]:
        if p["name"] in names and "error" not in p:
            d = root / p["dir"]
            s = p["input_sets"][0]
            out[p["name"]] = {
                "pt2": d / p["package"],
                "inputs": [d / e["file"] for e in s["inputs"]],
            }
    assert "mlp" in out and "mlp_plain" in out, "zoo packages mlp/mlp_plain failed to export"
    return out


def run_cli(args, tmp_path: Path):
    """Runs the CLI with a private TMPDIR and checks nothing is left in it."""
    tmpdir = tmp_path / "cli-tmp"
    tmpdir.mkdir(exist_ok=True)
    env = dict(os.environ, TMPDIR=str(tmpdir))
    proc = subprocess.run([str(CLI), *map(str, args)], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode >= 0, f"CLI killed by signal {-proc.returncode}: {proc.stderr}"
    assert list(tmpdir.iterdir()) == [], f"temporary files left behind: {list(tmpdir.iterdir())}"
    return proc


def expect_error(proc, *fragments):
    assert proc.returncode != 0, f"expected failure, got success: {proc.stdout}"
    assert proc.returncode in (1, 2), f"unexpected exit code {proc.returncode}: {proc.stderr}"
    err = proc.stderr.lower()
    assert "error" in err, proc.stderr
    for frag in fragments:
        assert frag.lower() in err, f"{frag!r} not in: {proc.stderr}"


def rewrite_package(src: Path, dst: Path, edit_metadata=None, drop=lambda name: False):
    """Copies a .pt2, optionally editing its *_metadata.json or dropping entries."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_STORED) as zout:
        for info in zin.infolist():
            if drop(info.filename):
                continue
            data = zin.read(info.filename)
            if edit_metadata and info.filename.endswith("wrapper_metadata.json"):
                meta = json.loads(data)
                edit_metadata(meta)
                data = json.dumps(meta).encode()
            zout.writestr(info.filename, data)


def test_missing_file(tmp_path, zoo):
    expect_error(run_cli(["run", tmp_path / "nope.pt2", "--input", zoo["mlp"]["inputs"][0],
                          "--output-dir", tmp_path / "o"], tmp_path), "does not exist")


def test_unreadable_path_directory(tmp_path, zoo):
    expect_error(run_cli(["run", tmp_path, "--input", zoo["mlp"]["inputs"][0], "--output-dir", tmp_path / "o"],
                         tmp_path), "directory")


def test_not_a_zip(tmp_path, zoo):
    bad = tmp_path / "text.pt2"
    bad.write_text("this is not a zip archive\n" * 100)
    expect_error(run_cli(["run", bad, "--input", zoo["mlp"]["inputs"][0], "--output-dir", tmp_path / "o"],
                         tmp_path), "not a zip")


def test_truncated_zip(tmp_path, zoo):
    data = zoo["mlp"]["pt2"].read_bytes()
    bad = tmp_path / "truncated.pt2"
    bad.write_bytes(data[: len(data) // 2])
    expect_error(run_cli(["run", bad, "--input", zoo["mlp"]["inputs"][0], "--output-dir", tmp_path / "o"],
                         tmp_path), "truncated")


def test_zip_without_model(tmp_path, zoo):
    bad = tmp_path / "empty_model.pt2"
    with zipfile.ZipFile(bad, "w") as z:
        z.writestr("package/archive_format", "pt2")
        z.writestr("package/data/weights/readme.txt", "no model here")
    expect_error(run_cli(["run", bad, "--input", zoo["mlp"]["inputs"][0], "--output-dir", tmp_path / "o"],
                         tmp_path), "no aotinductor model")


def test_zip_without_library(tmp_path, zoo):
    bad = tmp_path / "nolib.pt2"
    rewrite_package(zoo["mlp"]["pt2"], bad, drop=lambda n: n.endswith(".so"))
    expect_error(run_cli(["run", bad, "--input", zoo["mlp"]["inputs"][0], "--output-dir", tmp_path / "o"],
                         tmp_path), "no compiled library")


def test_metadata_for_another_device(tmp_path, zoo):
    bad = tmp_path / "cuda_meta.pt2"
    rewrite_package(zoo["mlp"]["pt2"], bad, edit_metadata=lambda m: m.update(AOTI_DEVICE_KEY="cuda"))
    expect_error(run_cli(["run", bad, "--input", zoo["mlp"]["inputs"][0], "--output-dir", tmp_path / "o",
                          "--device", "cpu"], tmp_path), "compiled for cuda")
    # On the device it names, it is refused too: no GPU here, or (on a GPU) the
    # forged metadata lacks a compute capability.
    expect_error(run_cli(["run", bad, "--input", zoo["mlp"]["inputs"][0], "--output-dir", tmp_path / "o"],
                         tmp_path))


def test_cpu_package_on_cuda_device(tmp_path, zoo):
    expect_error(run_cli(["run", zoo["mlp"]["pt2"], "--input", zoo["mlp"]["inputs"][0],
                          "--output-dir", tmp_path / "o", "--device", "cuda"], tmp_path), "compiled for cpu")


def test_bad_package_on_a_named_gpu_reports_the_package(tmp_path, zoo):
    # A device named with --device starts before the package is read; the
    # package's own error still wins over the device's (no GPU here).
    data = Path(zoo["mlp"]["pt2"]).read_bytes()
    bad = tmp_path / "truncated.pt2"
    bad.write_bytes(data[: len(data) // 2])
    expect_error(run_cli(["run", bad, "--input", zoo["mlp"]["inputs"][0], "--output-dir", tmp_path / "o",
                          "--device", "cuda"], tmp_path), "truncated")


def test_cpu_isa_this_machine_lacks(tmp_path, zoo):
    bad = tmp_path / "neon.pt2"
    rewrite_package(zoo["mlp"]["pt2"], bad, edit_metadata=lambda m: m.update(AOTI_CPU_ISA="NEON"))
    expect_error(run_cli(["run", bad, "--input", zoo["mlp"]["inputs"][0], "--output-dir", tmp_path / "o"],
                         tmp_path), "NEON")


def test_unknown_device_string(tmp_path, zoo):
    proc = run_cli(["run", zoo["mlp"]["pt2"], "--input", zoo["mlp"]["inputs"][0], "--output-dir",
                    tmp_path / "o", "--device", "tpu:0"], tmp_path)
    expect_error(proc, "tpu")


def test_wrong_number_of_inputs(tmp_path, zoo):
    x = zoo["mlp"]["inputs"][0]
    expect_error(run_cli(["run", zoo["mlp"]["pt2"], "--input", x, "--input", x, "--output-dir", tmp_path / "o"],
                         tmp_path), "1 input", "2")


def test_wrong_dtype(tmp_path, zoo):
    x = np.load(zoo["mlp"]["inputs"][0])
    bad = tmp_path / "int.npy"
    np.save(bad, x.astype(np.int64))
    expect_error(run_cli(["run", zoo["mlp"]["pt2"], "--input", bad, "--output-dir", tmp_path / "o"], tmp_path),
                 "int64", "float32")


def test_wrong_shape(tmp_path, zoo):
    x = np.load(zoo["mlp"]["inputs"][0])
    bad = tmp_path / "shape.npy"
    np.save(bad, np.concatenate([x, x], axis=-1))
    expect_error(run_cli(["run", zoo["mlp"]["pt2"], "--input", bad, "--output-dir", tmp_path / "o"], tmp_path),
                 "shape")


def test_wrong_shape_plain_package(tmp_path, zoo):
    """Without aotirt metadata the model library's own input checks must catch it."""
    x = np.load(zoo["mlp_plain"]["inputs"][0])
    bad = tmp_path / "shape.npy"
    np.save(bad, np.concatenate([x, x], axis=-1))
    expect_error(run_cli(["run", zoo["mlp_plain"]["pt2"], "--input", bad, "--output-dir", tmp_path / "o"],
                         tmp_path))


def test_output_dir_not_writable(tmp_path, zoo):
    blocker = tmp_path / "a_file"
    blocker.write_text("x")
    expect_error(run_cli(["run", zoo["mlp"]["pt2"], "--input", zoo["mlp"]["inputs"][0],
                          "--output-dir", blocker / "out"], tmp_path), str(blocker / "out"))


def test_missing_input_file(tmp_path, zoo):
    expect_error(run_cli(["run", zoo["mlp"]["pt2"], "--input", tmp_path / "missing.npy",
                          "--output-dir", tmp_path / "o"], tmp_path), "missing.npy")


def test_inspect_bad_file(tmp_path):
    bad = tmp_path / "text.pt2"
    bad.write_text("not a zip")
    expect_error(run_cli(["inspect", bad], tmp_path), "not a zip")


UNSUPPORTED_SRC = """
import sys, torch
class M(torch.nn.Module):
    def forward(self, x):
        return torch.fft.rfft(x).abs()
ep = torch.export.export(M(), (torch.randn(4, 16),))
torch._inductor.aoti_compile_and_package(ep, package_path=sys.argv[1], inductor_configs={
    "aot_inductor.link_libtorch": False, "aot_inductor.package_constants_in_so": False,
    "aot_inductor.package_constants_on_disk_format": "binary_blob"})
"""


@pytest.fixture(scope="module")
def unsupported_pkg():
    """A real package that imports a fallback op aotirt lacks (FFT), built once per source."""
    import hashlib

    import torch

    cache = Path(os.environ.get("AOTIRT_CACHE_DIR", REPO / ".cache")) / "bad" / f"torch-{torch.__version__}"
    key = hashlib.sha256(UNSUPPORTED_SRC.encode()).hexdigest()[:12]
    pt2 = cache / f"fft-{key}.pt2"
    if not pt2.exists():
        cache.mkdir(parents=True, exist_ok=True)
        tmp = cache / f".partial-{os.getpid()}-{pt2.name}"  # the name must end in .pt2
        proc = subprocess.run([sys.executable, "-c", UNSUPPORTED_SRC, str(tmp)], capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr[-2000:]
        tmp.rename(pt2)
    return pt2


def test_symbol_that_cannot_be_resolved(tmp_path, unsupported_pkg):
    x = tmp_path / "x.npy"
    np.save(x, np.random.default_rng(0).standard_normal((4, 16)).astype(np.float32))
    expect_error(run_cli(["run", unsupported_pkg, "--input", x, "--output-dir", tmp_path / "o"], tmp_path),
                 "does not provide", "aoti_torch_cpu__fft_r2c")


def test_inspect_marks_missing_symbol(tmp_path, unsupported_pkg):
    proc = run_cli(["inspect", unsupported_pkg], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "aoti_torch_cpu__fft_r2c" in proc.stdout
    assert "missing" in proc.stdout.lower()


def test_blas_library_missing(tmp_path, zoo):
    # OpenBLAS is loaded when an op first needs it (here the transformer's
    # attention and its GEMMs of many rows); a missing one is a clean error.
    # The MLP's four-row GEMMs run on aotirt's own kernels and need no BLAS.
    assert "transformer" in zoo, "zoo package transformer failed to export"
    env_extra = {"AOTIRT_BLAS_LIBRARY": str(tmp_path / "no-such-libblas.so")}
    for name, fails in (("transformer", True), ("mlp", False)):
        tmpdir = tmp_path / f"cli-tmp-{name}"
        tmpdir.mkdir()
        env = dict(os.environ, TMPDIR=str(tmpdir), **env_extra)
        inputs = sum((["--input", str(i)] for i in zoo[name]["inputs"]), [])
        proc = subprocess.run([str(CLI), "run", str(zoo[name]["pt2"]), *inputs, "--output-dir",
                               str(tmp_path / f"o-{name}")], capture_output=True, text=True, env=env, timeout=120)
        assert list(tmpdir.iterdir()) == []
        if fails:
            expect_error(proc, "openblas", "AOTIRT_BLAS_LIBRARY", "no-such-libblas.so")
        else:
            assert proc.returncode == 0, proc.stderr


def test_cuda_graph_on_cpu_package(tmp_path, zoo):
    expect_error(run_cli(["run", zoo["mlp"]["pt2"], "--input", zoo["mlp"]["inputs"][0], "--output-dir",
                          tmp_path / "o", "--cuda-graph"], tmp_path), "cuda graphs", "cpu model")
