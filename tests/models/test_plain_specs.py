"""Input specs of plain packages: a model exported with plain
torch._inductor.aoti_compile_and_package (no aotirt metadata) whose inputs
are bfloat16, float16 and int64, with a dynamic batch dimension. aotirt
learns their dtypes and shapes from the input checks in the package's
wrapper source, so the CLI converts float32 .npy files for the half-precision
inputs, names a wrong dtype or rank before the run, and `aotirt inspect`
shows the specs and where they came from. Without a readable wrapper source
the specs stay unknown and the errors say so. One tiny package is exported,
once per torch version and export source, into the test cache."""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

from cli_util import CLI, REPO, cpu_zoo_packages, requires_cli

pytestmark = requires_cli

# Exports the model and saves, for two batch sizes, float32 inputs and the
# eager outputs (bfloat16 ones widened to float32) computed from the inputs
# as the runtime sees them: rounded to the model's dtypes.
EXPORT_SRC = r"""
import sys
from pathlib import Path
import numpy as np
import torch
import aotirt

out = Path(sys.argv[1])
torch.manual_seed(0)

class Mixed(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(8, 4)

    def forward(self, a, b, idx):
        y = self.lin(a.float()) + b.float().sum(-1, keepdim=True) + idx.float().unsqueeze(-1)
        return y, a * 2 + 1

model = Mixed().eval()
def example(n, seed):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(n, 8, generator=g).to(torch.bfloat16), torch.randn(n, 5, generator=g).to(torch.float16),
            torch.arange(n) % 3)

aotirt.prepare_vec_isa()
batch = torch.export.Dim("batch", min=1, max=64)
ep = torch.export.export(model, example(3, 0), dynamic_shapes={"a": {0: batch}, "b": {0: batch}, "idx": {0: batch}})
torch._inductor.aoti_compile_and_package(ep, package_path=str(out / "model.pt2"),
                                         inductor_configs=dict(aotirt.LEAN_OPTIONS))
with torch.no_grad():
    for n, seed in ((3, 1), (7, 2)):
        ins = example(n, seed)
        for i, t in enumerate(ins):
            np.save(out / f"in{n}_{i}.npy", (t.float() if t.is_floating_point() else t).numpy())
        for i, t in enumerate(model(*ins)):
            np.save(out / f"out{n}_{i}.npy", t.float().numpy())
"""


@pytest.fixture(scope="module")
def plain() -> Path:
    """The exported package's folder, built once per torch version and export source."""
    import torch

    cache = Path(os.environ.get("AOTIRT_CACHE_DIR", REPO / ".cache")) / "plain-specs" / f"torch-{torch.__version__}"
    key = hashlib.sha256(EXPORT_SRC.encode()).hexdigest()[:12]
    folder = cache / f"mixed-{key}"
    if not (folder / "model.pt2").exists():
        tmp = cache / f".partial-{os.getpid()}-{key}"
        tmp.mkdir(parents=True, exist_ok=True)
        env = dict(os.environ, PYTHONPATH=str(REPO / "python"))
        proc = subprocess.run([sys.executable, "-c", EXPORT_SRC, str(tmp)], capture_output=True, text=True, env=env)
        assert proc.returncode == 0, proc.stderr[-3000:]
        tmp.rename(folder)
    return folder


def run_cli(args, tmp_path: Path):
    tmpdir = tmp_path / "cli-tmp"
    tmpdir.mkdir(exist_ok=True)
    env = dict(os.environ, TMPDIR=str(tmpdir))
    proc = subprocess.run([str(CLI), *map(str, args)], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode >= 0, f"CLI killed by signal {-proc.returncode}: {proc.stderr}"
    return proc


def expect_error(proc, *fragments):
    assert proc.returncode == 1, f"expected a runtime error, got {proc.returncode}: {proc.stdout}{proc.stderr}"
    for frag in fragments:
        assert frag.lower() in proc.stderr.lower(), f"{frag!r} not in: {proc.stderr}"


def inputs(plain: Path, n: int) -> list[str]:
    files = []
    for i in range(3):
        files += ["--input", str(plain / f"in{n}_{i}.npy")]
    return files


def rewrite(src: Path, dst: Path, edit) -> Path:
    """Copies a package, passing each entry through edit(name, bytes) -> bytes or None (dropped)."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_STORED) as zout:
        for info in zin.infolist():
            data = edit(info.filename, zin.read(info.filename))
            if data is not None:
                zout.writestr(info.filename, data)
    return dst


def is_wrapper_source(name: str) -> bool:
    return name.endswith(".wrapper.cpp")


def test_package_has_no_aotirt_metadata_but_a_wrapper_source(plain):
    with zipfile.ZipFile(plain / "model.pt2") as z:
        names = z.namelist()
        meta = [n for n in names if n.endswith("wrapper_metadata.json")]
        assert len(meta) == 1 and "aotirt.inputs" not in json.loads(z.read(meta[0]))
        assert [n for n in names if is_wrapper_source(n)], names


@pytest.mark.parametrize("n", [3, 7])
def test_float32_npy_feeds_half_inputs(plain, tmp_path, n):
    out = tmp_path / "out"
    proc = run_cli(["run", plain / "model.pt2", *inputs(plain, n), "--output-dir", out], tmp_path)
    assert proc.returncode == 0, proc.stderr
    y = np.load(out / "output0.npy")
    assert y.dtype == np.float32 and y.shape == (n, 4)
    np.testing.assert_allclose(y, np.load(plain / f"out{n}_0.npy"), rtol=1e-5, atol=1e-5)
    # The bfloat16 output, written as float32.
    z = np.load(out / "output1.npy")
    assert z.dtype == np.float32 and z.shape == (n, 8)
    np.testing.assert_allclose(z, np.load(plain / f"out{n}_1.npy"), rtol=1e-2, atol=1e-2)
    assert "converted from bfloat16" in proc.stdout


def test_inspect_shows_specs_from_the_wrapper_source(plain, tmp_path):
    text = run_cli(["inspect", plain / "model.pt2"], tmp_path)
    assert text.returncode == 0, text.stderr
    assert "inputs (3, from the package's wrapper source):" in text.stdout, text.stdout
    lines = {line.split()[1]: line.split()[2:] for line in text.stdout.splitlines() if line.startswith("  ")
             and len(line.split()) >= 4 and line.split()[0].isdigit()}
    assert lines["arg2_1"][0] == "bfloat16" and " ".join(lines["arg2_1"][1:]) == "[?, 8]", text.stdout
    assert lines["arg3_1"][0] == "float16" and " ".join(lines["arg3_1"][1:]) == "[?, 5]", text.stdout
    assert lines["arg4_1"][0] == "int64" and " ".join(lines["arg4_1"][1:]) == "[?]", text.stdout

    js = run_cli(["inspect", plain / "model.pt2", "--json"], tmp_path)
    assert js.returncode == 0, js.stderr
    info = json.loads(js.stdout)
    assert info["spec_source"] == "wrapper source"
    assert [(s["dtype"], s["shape"]) for s in info["inputs"]] == [
        ("bfloat16", [-1, 8]), ("float16", [-1, 5]), ("int64", [-1])]
    # Outputs: names only (the wrapper does not check them).
    assert [s["name"] for s in info["outputs"]] == ["output0", "output1"]
    assert all(s["dtype"] is None for s in info["outputs"])


def test_inspect_of_an_aotirt_export_says_aotirt_metadata(tmp_path):
    zoo = cpu_zoo_packages(("mlp",))
    assert "mlp" in zoo, "zoo package mlp failed to export"
    js = run_cli(["inspect", zoo["mlp"]["pt2"], "--json"], tmp_path)
    assert js.returncode == 0, js.stderr
    assert json.loads(js.stdout)["spec_source"] == "aotirt metadata"
    text = run_cli(["inspect", zoo["mlp"]["pt2"]], tmp_path)
    assert "from aotirt metadata" in text.stdout, text.stdout


def test_bench_makes_random_inputs_from_the_learned_specs(plain, tmp_path):
    proc = run_cli(["bench", plain / "model.pt2", "--iters", "2", "--warmup", "0", "--dynamic-dim", "4", "--json"],
                   tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["iters"] == 2


def test_float32_npy_for_an_int_input_is_named_before_the_run(plain, tmp_path):
    bad = tmp_path / "idx.npy"
    np.save(bad, np.arange(3, dtype=np.float32))
    args = inputs(plain, 3)
    args[5] = str(bad)
    proc = run_cli(["run", plain / "model.pt2", *args, "--output-dir", tmp_path / "o"], tmp_path)
    expect_error(proc, "input 2 ('arg4_1')", "expects int64", "holds float32")
    assert "unmatched dtype" not in proc.stderr, "the library ran: the error should come before the run"


def test_wrong_rank_is_named_before_the_run(plain, tmp_path):
    bad = tmp_path / "a.npy"
    np.save(bad, np.zeros((3, 8, 1), dtype=np.float32))
    args = inputs(plain, 3)
    args[1] = str(bad)
    proc = run_cli(["run", plain / "model.pt2", *args, "--output-dir", tmp_path / "o"], tmp_path)
    expect_error(proc, "input 0 ('arg2_1')", "expects shape [?, 8]", "[3, 8, 1]")


def test_without_wrapper_source_specs_are_unknown(plain, tmp_path):
    pkg = rewrite(plain / "model.pt2", tmp_path / "nosource.pt2",
                  lambda name, data: None if is_wrapper_source(name) else data)
    text = run_cli(["inspect", pkg], tmp_path)
    assert text.returncode == 0, text.stderr
    assert "inputs: unknown (the package records no aotirt metadata and carries no wrapper source)" in text.stdout
    js = json.loads(run_cli(["inspect", pkg, "--json"], tmp_path).stdout)
    assert js["spec_source"] == "none" and js["inputs"] == [] and "no wrapper source" in js["spec_note"]
    # The float32 data reaches the library, whose own check refuses it; the
    # error names the inputs whose dtype aotirt could not learn.
    proc = run_cli(["run", pkg, *inputs(plain, 3), "--output-dir", tmp_path / "o"], tmp_path)
    expect_error(proc, "could not learn the dtype of input 0 ('arg2_1')", "carries no wrapper source")


def test_unreadable_wrapper_source_leaves_specs_unknown(plain, tmp_path):
    pkg = rewrite(plain / "model.pt2", tmp_path / "garbage.pt2",
                  lambda name, data: b"}{ not C++ \x00\xff" * 1000 if is_wrapper_source(name) else data)
    js = run_cli(["inspect", pkg, "--json"], tmp_path)
    assert js.returncode == 0, js.stderr
    info = json.loads(js.stdout)
    assert info["spec_source"] == "none" and "no input checks" in info["spec_note"], info


def test_a_lying_wrapper_source_cannot_override_the_library(plain, tmp_path):
    # The source claims float32 for the bfloat16 input: the CLI passes the
    # float32 data unconverted and the library's own check refuses it.
    pkg = rewrite(plain / "model.pt2", tmp_path / "lying.pt2",
                  lambda name, data: data.replace(b"aoti_torch_dtype_bfloat16()", b"aoti_torch_dtype_float32()")
                  if is_wrapper_source(name) else data)
    info = json.loads(run_cli(["inspect", pkg, "--json"], tmp_path).stdout)
    assert info["inputs"][0]["dtype"] == "float32"
    proc = run_cli(["run", pkg, *inputs(plain, 3), "--output-dir", tmp_path / "o"], tmp_path)
    expect_error(proc, "INTERNAL")
