"""Bad input through the CLI: every case must exit non-zero with a clear
message naming the problem, never crash, and leave no temporary files.
Hostile packages too: corrupted weights, metadata that lies, is nested or
inflates without end, memory that runs out, and signals mid-run."""
from __future__ import annotations

import hashlib
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import time
import warnings
import zipfile
from pathlib import Path

import numpy as np
import pytest

import cache_lock
from cli_util import CLI, REPO, cpu_zoo_packages, requires_cli

pytestmark = requires_cli


@pytest.fixture(scope="module")
def zoo():
    out = cpu_zoo_packages(("mlp", "mlp_plain", "transformer"))
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


def rewrite_package(src: Path, dst: Path, edit_metadata=None, drop=lambda name: False, edit_entry=None,
                    add=None):
    """Copies a .pt2, optionally editing its *_metadata.json, editing any entry
    (edit_entry(name, bytes) -> bytes), dropping entries, or adding some
    ({file name: bytes}, placed beside the library)."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_STORED) as zout:
        for info in zin.infolist():
            if drop(info.filename):
                continue
            data = zin.read(info.filename)
            if edit_metadata and info.filename.endswith("wrapper_metadata.json"):
                meta = json.loads(data)
                edit_metadata(meta)
                data = json.dumps(meta).encode()
            if edit_entry:
                data = edit_entry(info.filename, data)
            zout.writestr(info.filename, data)
            if add and info.filename.endswith(".so"):
                folder = info.filename.rsplit("/", 1)[0]
                for name, extra in add.items():
                    zout.writestr(f"{folder}/{name}", extra)


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


def test_duplicate_entry_names(tmp_path, zoo):
    # A second weights blob under the same name: which one would load is
    # up to the reader, so the package is refused.
    bad = tmp_path / "dup.pt2"
    rewrite_package(zoo["mlp"]["pt2"], bad)
    with zipfile.ZipFile(zoo["mlp"]["pt2"]) as z:
        blob = next(n for n in z.namelist() if n.endswith("_weights.blob"))
        data = z.read(blob)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zipfile warns about the duplicate name
        with zipfile.ZipFile(bad, "a") as z:
            z.writestr(blob, bytes(len(data)))
    expect_error(run_cli(["run", bad, "--input", zoo["mlp"]["inputs"][0], "--output-dir", tmp_path / "o"],
                         tmp_path), "appears twice", blob)


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
    """Without aotirt metadata the shape learned from the package's wrapper
    source names it before the run; without that source too, the model
    library's own input checks must catch it."""
    x = np.load(zoo["mlp_plain"]["inputs"][0])
    bad = tmp_path / "shape.npy"
    np.save(bad, np.concatenate([x, x], axis=-1))
    expect_error(run_cli(["run", zoo["mlp_plain"]["pt2"], "--input", bad, "--output-dir", tmp_path / "o"],
                         tmp_path), "the model expects shape")
    bare = tmp_path / "no_source.pt2"
    rewrite_package(zoo["mlp_plain"]["pt2"], bare, drop=lambda name: name.endswith(".wrapper.cpp"))
    expect_error(run_cli(["run", bare, "--input", bad, "--output-dir", tmp_path / "o"], tmp_path))


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


def cached_package(name: str, source: str) -> Path:
    """A package exported by |source| (given the output path), built once per torch version and source."""
    import torch

    cache = Path(os.environ.get("AOTIRT_CACHE_DIR", REPO / ".cache")) / "bad" / f"torch-{torch.__version__}"
    key = hashlib.sha256(source.encode()).hexdigest()[:12]
    pt2 = cache / f"{name}-{key}.pt2"
    with cache_lock.held(cache / f".{pt2.name}.lock"):
        if not pt2.exists():
            tmp = cache / f".partial-{os.getpid()}-{pt2.name}"  # the name must end in .pt2
            proc = subprocess.run([sys.executable, "-c", source, str(tmp)], capture_output=True, text=True)
            assert proc.returncode == 0, proc.stderr[-2000:]
            tmp.rename(pt2)
    return pt2


# A shim name no torch declares and aotirt does not provide, of the length of
# the FFT shim's, so the library's tables keep their layout.
MISSING_SHIM = "aoti_torch_cpu__fft_r2x"


@pytest.fixture(scope="module")
def fft_pkg():
    """A real package whose forward calls the CPU FFT fallback (_fft_r2c)."""
    return cached_package("fft", UNSUPPORTED_SRC)


@pytest.fixture(scope="module")
def unsupported_pkg(fft_pkg, tmp_path_factory):
    """The FFT package with its library's import of aoti_torch_cpu__fft_r2c
    renamed to a shim aotirt lacks: a real library that imports one unknown
    fallback op (every op a CPU package can emit today is provided)."""
    import zipfile

    out = tmp_path_factory.mktemp("unsupported") / "missing-shim.pt2"
    with zipfile.ZipFile(fft_pkg) as src, zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            data = src.read(info)
            if info.filename.endswith(".so"):
                assert b"aoti_torch_cpu__fft_r2c" in data
                data = data.replace(b"aoti_torch_cpu__fft_r2c", MISSING_SHIM.encode())
            dst.writestr(info, data)
    return out


def test_fft_package_matches_eager(tmp_path, fft_pkg):
    import torch

    x = np.random.default_rng(0).standard_normal((4, 16)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    proc = run_cli(["run", fft_pkg, "--input", tmp_path / "x.npy", "--output-dir", tmp_path / "o"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    got = np.load(tmp_path / "o" / "output0.npy")
    want = torch.fft.rfft(torch.from_numpy(x)).abs().numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_symbol_that_cannot_be_resolved(tmp_path, unsupported_pkg):
    x = tmp_path / "x.npy"
    np.save(x, np.random.default_rng(0).standard_normal((4, 16)).astype(np.float32))
    expect_error(run_cli(["run", unsupported_pkg, "--input", x, "--output-dir", tmp_path / "o"], tmp_path),
                 "does not provide", MISSING_SHIM)


def test_inspect_marks_missing_symbol(tmp_path, unsupported_pkg):
    proc = run_cli(["inspect", unsupported_pkg], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert MISSING_SHIM in proc.stdout
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


# ---- hostile packages (issue #32) ----


# Runs a command and reports its exit code and peak RSS. A process forked
# from this one (pytest, with torch loaded) would count this process's
# memory in its own peak, so the CLI is started by this small, fresh Python
# instead, which also applies the address-space limit.
MEASURE_SRC = """
import json, os, resource, subprocess, sys
limit = int(os.environ.pop("AOTIRT_TEST_LIMIT_AS"))
report = os.environ.pop("AOTIRT_TEST_REPORT")
def cap():
    if limit:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
p = subprocess.Popen(sys.argv[1:], preexec_fn=cap)
_, status, usage = os.wait4(p.pid, 0)
with open(report, "w") as f:
    json.dump({"rc": os.waitstatus_to_exitcode(status), "maxrss_kib": usage.ru_maxrss}, f)
"""


def run_cli_measured(args, tmp_path: Path, limit_as: int = 0, timeout: float = 120):
    """Like run_cli, and also returns the CLI's own peak RSS in MiB.
    |limit_as| caps its address space (RLIMIT_AS, bytes), as ulimit -v does."""
    tmpdir = tmp_path / "cli-tmp"
    tmpdir.mkdir(exist_ok=True)
    report = tmp_path / "measure.json"
    report.unlink(missing_ok=True)
    env = dict(os.environ, TMPDIR=str(tmpdir), AOTIRT_TEST_LIMIT_AS=str(limit_as), AOTIRT_TEST_REPORT=str(report))
    proc = subprocess.Popen([sys.executable, "-c", MEASURE_SRC, str(CLI), *map(str, args)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        raise AssertionError(f"CLI did not finish in {timeout} s: {err[-2000:]}")
    assert proc.returncode == 0, f"the measuring helper failed: {err[-2000:]}"
    measured = json.loads(report.read_text())
    result = subprocess.CompletedProcess(args, measured["rc"], out, err)
    assert result.returncode >= 0, f"CLI killed by signal {-result.returncode}: {result.stderr[-2000:]}"
    assert list(tmpdir.iterdir()) == [], f"temporary files left behind: {list(tmpdir.iterdir())}"
    return result, measured["maxrss_kib"] / 1024


def mlp_args(pkg, zoo, tmp_path):
    return ["run", pkg, "--input", zoo["mlp"]["inputs"][0], "--output-dir", tmp_path / "o"]


def metadata_entry(name: str) -> bool:
    return name.endswith("wrapper_metadata.json")


def test_deeply_nested_metadata_is_refused(tmp_path, zoo):
    # Serialising a 100,000-level value back to text overflowed the stack
    # (SIGSEGV), in `inspect` too.
    bad = tmp_path / "nested.pt2"
    deep = b"[" * 100000 + b"]" * 100000

    def nest(name, data):
        return data.rstrip()[:-1] + b', "unused": ' + deep + b"}" if metadata_entry(name) else data

    rewrite_package(zoo["mlp"]["pt2"], bad, edit_entry=nest)
    expect_error(run_cli(["inspect", bad], tmp_path), "nests deeper than the 32 levels")
    expect_error(run_cli(mlp_args(bad, zoo, tmp_path), tmp_path), "nests deeper than the 32 levels")


def test_metadata_bomb_is_refused_before_it_is_inflated(tmp_path, zoo):
    # 128 MiB of JSON deflates to about 128 KB; `run` used to inflate and
    # parse it three times (2.6 GB of RSS for a 0.9 MB bomb).
    bad = tmp_path / "bomb.pt2"
    with zipfile.ZipFile(zoo["mlp"]["pt2"]) as zin, zipfile.ZipFile(bad, "w", zipfile.ZIP_STORED) as zout:
        for info in zin.infolist():
            data = zin.read(info.filename)
            if not metadata_entry(info.filename):
                zout.writestr(info.filename, data)
                continue
            entry = zipfile.ZipInfo(info.filename)
            entry.compress_type = zipfile.ZIP_DEFLATED
            with zout.open(entry, "w") as f:
                f.write(data.rstrip()[:-1] + b', "pad": "')
                chunk = b" " * (1 << 20)
                for _ in range(128):
                    f.write(chunk)
                f.write(b'"}')
    assert bad.stat().st_size < 8 << 20
    good = zoo["mlp"]["pt2"]
    for args, baseline_args in ((["inspect", bad], ["inspect", good]),
                                (mlp_args(bad, zoo, tmp_path), mlp_args(good, zoo, tmp_path))):
        # Against the same command on the intact package, so the bound is
        # on what the bomb adds, not on the CLI's own size (a sanitizer
        # build, the libraries it links).
        _, baseline_mib = run_cli_measured(baseline_args, tmp_path)
        proc, peak_mib = run_cli_measured(args, tmp_path)
        expect_error(proc, "more than the 4 MiB aotirt accepts")
        assert peak_mib < baseline_mib + 32, (
            f"{args[0]} peaked at {peak_mib:.0f} MiB refusing a metadata bomb, {baseline_mib:.0f} MiB on the "
            f"intact package")


def test_shape_of_2_to_63_is_refused(tmp_path, zoo):
    # 2^63 used to wrap to a negative size, which reads as "dynamic".
    bad = tmp_path / "huge_shape.pt2"
    rewrite_package(zoo["mlp"]["pt2"], bad, edit_metadata=lambda m: m.update(
        {"aotirt.inputs": json.dumps([{"name": "x", "dtype": "float32", "shape": [2**63, 32]}])}))
    expect_error(run_cli(["inspect", bad], tmp_path), "more than 2^63-1")
    expect_error(run_cli(mlp_args(bad, zoo, tmp_path), tmp_path), "more than 2^63-1")


@pytest.mark.parametrize("how", ["truncated", "empty", "extended"])
def test_weights_blob_of_the_wrong_length(tmp_path, zoo, how):
    # A short blob crashed or ran with garbage weights (rc 0); an empty one
    # made the library read past a static array; a long one went unnoticed.
    with zipfile.ZipFile(zoo["mlp"]["pt2"]) as z:
        blob = next(i for i in z.infolist() if i.filename.endswith("_weights.blob"))
    new_size = {"truncated": blob.file_size // 2, "empty": 0, "extended": blob.file_size + 64}[how]

    def resize(name, data):
        if not name.endswith("_weights.blob"):
            return data
        return data[:new_size] + bytes(max(0, new_size - len(data)))

    bad = tmp_path / f"blob_{how}.pt2"
    rewrite_package(zoo["mlp"]["pt2"], bad, edit_entry=resize)
    proc = run_cli(mlp_args(bad, zoo, tmp_path), tmp_path)
    expect_error(proc, "DATA_LOSS", f"is {new_size} bytes", f"expects {blob.file_size} bytes")


@pytest.mark.parametrize("lie", ["shape", "dtype"])
def test_metadata_that_disagrees_with_the_library(tmp_path, zoo, lie):
    # The metadata says [2, 32] (or float64) and the input matches it; the
    # library was compiled for float32 [4, 32], and its kernels read past
    # the buffer (rc 0, garbage). Its own input checks now refuse the run.
    x = np.load(zoo["mlp"]["inputs"][0])
    spec = {"name": "x", "dtype": "float32", "shape": [4, 32]}
    if lie == "shape":
        spec["shape"] = [2, 32]
        x = x[:2]
    else:
        spec["dtype"] = "float64"
        x = x.astype(np.float64)
    bad = tmp_path / f"lying_{lie}.pt2"
    rewrite_package(zoo["mlp"]["pt2"], bad, edit_metadata=lambda m: m.update({"aotirt.inputs": json.dumps([spec])}))
    xf = tmp_path / "x.npy"
    np.save(xf, np.ascontiguousarray(x))
    proc = run_cli(["run", bad, "--input", xf, "--output-dir", tmp_path / "o"], tmp_path)
    expect_error(proc, "input checks are on", "unmatched dtype" if lie == "dtype" else "unmatched dim value")


def test_metadata_input_count_that_disagrees_with_the_library(tmp_path, zoo):
    bad = tmp_path / "two_inputs.pt2"
    rewrite_package(zoo["mlp"]["pt2"], bad, edit_metadata=lambda m: m.update(
        {"aotirt.inputs": json.dumps([{"name": "x"}, {"name": "y"}])}))
    expect_error(run_cli(mlp_args(bad, zoo, tmp_path), tmp_path), "lists 2 inputs but the model library takes 1")


def test_out_of_memory_is_a_clean_error(tmp_path, zoo):
    # Metadata (under the size cap) whose 2,000,000-dimension shape needs more
    # memory than `ulimit -v` leaves: std::bad_alloc used to escape the API
    # and abort the CLI (SIGABRT) through its input-reading thread.
    bad = tmp_path / "big_spec.pt2"
    shape = "[" + ",".join(["0"] * 2_000_000) + "]"
    rewrite_package(zoo["mlp"]["pt2"], bad, edit_metadata=lambda m: m.update(
        {"aotirt.inputs": '[{"name":"x","dtype":"float32","shape":' + shape + "}]"}))
    for limit_mib in (48, 64):
        for args in (mlp_args(bad, zoo, tmp_path), ["inspect", bad]):
            proc, _ = run_cli_measured(args, tmp_path, limit_as=limit_mib << 20, timeout=60)
            if proc.returncode == 0:
                continue  # enough memory after all (inspect prints the shape)
            # 127: the loader could not even map the libraries under the cap.
            assert proc.returncode in (1, 2, 127), f"ulimit {limit_mib} MiB: rc {proc.returncode}: {proc.stderr}"
            assert "error" in proc.stderr.lower(), proc.stderr
            assert "terminate called" not in proc.stderr, proc.stderr


SLOW_SRC = """
import sys, torch
class Slow(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = torch.nn.Linear(64, 512)
        self.layers = torch.nn.ModuleList(torch.nn.Linear(512, 512) for _ in range(8))
    def forward(self, x):
        h = self.inp(x)
        for layer in self.layers:
            h = torch.tanh(layer(h))
        return h.sum(dim=1)
n = torch.export.Dim("n", min=1, max=1 << 20)
ep = torch.export.export(Slow().eval(), (torch.randn(8, 64),), dynamic_shapes=({0: n},))
torch._inductor.aoti_compile_and_package(ep, package_path=sys.argv[1], inductor_configs={
    "aot_inductor.link_libtorch": False, "aot_inductor.package_constants_in_so": False,
    "aot_inductor.package_constants_on_disk_format": "binary_blob"})
"""


@pytest.fixture(scope="module")
def slow_pkg(tmp_path_factory):
    """A CPU package whose run on 65536 rows takes seconds, with a stray .cubin
    entry (which a CPU model used to extract to a temporary directory)."""
    pt2 = cached_package("slow", SLOW_SRC)
    d = tmp_path_factory.mktemp("slow")
    with_cubin = d / "slow_cubin.pt2"
    rewrite_package(pt2, with_cubin, add={"stray.cubin": bytes(4096)})
    x = d / "x.npy"
    np.save(x, np.random.default_rng(0).standard_normal((65536, 64)).astype(np.float32))
    return with_cubin, x


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_signal_during_a_run_leaves_no_temporary_files(tmp_path, slow_pkg, sig):
    pkg, x = slow_pkg
    tmpdir = tmp_path / "cli-tmp"
    tmpdir.mkdir()
    env = dict(os.environ, TMPDIR=str(tmpdir))

    # The CLI leaves a signal its caller ignores ignored (nohup), and a test
    # run started in the background can inherit SIGINT ignored: the child
    # gets the default actions back first.
    def default_signals():
        for s in (signal.SIGINT, signal.SIGTERM):
            signal.signal(s, signal.SIG_DFL)

    proc = subprocess.Popen([str(CLI), "run", str(pkg), "--input", str(x), "--output-dir", str(tmp_path / "o")],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, preexec_fn=default_signals)
    try:
        deadline = time.monotonic() + 60
        while not any(tmpdir.iterdir()):  # the run's temporary directory appears
            assert proc.poll() is None, f"the run ended before it made a temporary directory: {proc.stderr.read()}"
            assert time.monotonic() < deadline, "no temporary directory within 60 s"
            time.sleep(0.005)
        time.sleep(0.5)  # into the load and the run
        assert proc.poll() is None, "the run ended before the signal; make the slow model slower"
        proc.send_signal(sig)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    err = proc.stderr.read().decode(errors="replace")
    assert proc.returncode == -sig, f"expected death by signal {sig}, got rc {proc.returncode}: {err}"
    assert list(tmpdir.iterdir()) == [], f"left behind: {list(tmpdir.rglob('*'))}"


def test_slow_package_runs(tmp_path, slow_pkg):
    # The same package, to completion on a few rows: the stray .cubin is
    # ignored by a CPU model and nothing is left in TMPDIR.
    pkg, _ = slow_pkg
    x = tmp_path / "x.npy"
    np.save(x, np.random.default_rng(1).standard_normal((3, 64)).astype(np.float32))
    proc = run_cli(["run", pkg, "--input", x, "--output-dir", tmp_path / "o"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert np.load(tmp_path / "o" / "output0.npy").shape == (3,)


PLANTED_SRC = r"""
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
__attribute__((constructor)) static void planted(void) {
  const char* marker = getenv("AOTIRT_TEST_MARKER");
  if (marker) {
    int fd = open(marker, O_WRONLY | O_CREAT, 0600);
    if (fd >= 0) close(fd);
  }
}
"""


def test_inspect_never_runs_package_code(tmp_path):
    # SECURITY.md's two claims: `inspect` reads a package as data only, while
    # loading it (`run`) runs its library's code -- here a constructor that
    # leaves a marker file -- before any check of aotirt's can object.
    import platform

    cc = shutil.which("cc")
    if not cc:
        pytest.skip("no C compiler to build the planted library")
    src, so = tmp_path / "planted.c", tmp_path / "planted.so"
    src.write_text(PLANTED_SRC)
    subprocess.run([cc, "-shared", "-fPIC", "-o", str(so), str(src)], check=True)
    pkg = tmp_path / "planted.pt2"
    meta = {"AOTI_DEVICE_KEY": "cpu", "AOTI_PLATFORM": "linux", "AOTI_MACHINE": platform.machine()}
    with zipfile.ZipFile(pkg, "w") as z:
        z.writestr("planted/data/aotinductor/model/p.wrapper.so", so.read_bytes())
        z.writestr("planted/data/aotinductor/model/p.wrapper_metadata.json", json.dumps(meta))
    marker = tmp_path / "constructor-ran"
    os.environ["AOTIRT_TEST_MARKER"] = str(marker)
    try:
        proc = run_cli(["inspect", pkg], tmp_path)
        assert proc.returncode == 0, proc.stderr
        assert not marker.exists(), "aotirt inspect ran code from the package"
        x = tmp_path / "x.npy"
        np.save(x, np.zeros(4, np.float32))
        proc = run_cli(["run", pkg, "--input", x, "--output-dir", tmp_path / "o"], tmp_path)
        expect_error(proc, "AOTInductorModelContainerCreateWithDevice")
        assert marker.exists(), "loading a package did not run its library's constructor (SECURITY.md says it does)"
    finally:
        del os.environ["AOTIRT_TEST_MARKER"]
