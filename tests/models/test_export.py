# Tests of the export side (python/aotirt): the metadata written into
# packages, the refusal of models that need shims aotirt lacks, and the
# symbol readers. Packages come from the zoo cache where possible; the few
# tests that must compile use tiny models that build in seconds.

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
import torch

import aotirt
import aotirt._export as export_impl
from aotirt._symbols import dynamic_symbols
from zoo_check import package_entry

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent


def _pt2(manifest, root, name) -> Path:
    pkg = package_entry(manifest, name)
    return root / pkg["dir"] / pkg["package"]


def _wrapper_and_kernel_metadata(pt2: Path) -> dict:
    with zipfile.ZipFile(pt2) as zf:
        return {
            n: json.loads(zf.read(n))
            for n in zf.namelist()
            if "/data/aotinductor/" in n and n.endswith("_metadata.json")
        }


def test_metadata_lands_in_every_metadata_json(zoo_manifest, zoo_root):
    pt2 = _pt2(zoo_manifest, zoo_root, "mlp")
    found = _wrapper_and_kernel_metadata(pt2)
    assert any(n.endswith(".wrapper_metadata.json") for n in found)
    for name, meta in found.items():
        assert json.loads(meta[aotirt.INPUTS_KEY]) == [
            {"name": "x", "dtype": "float32", "shape": [4, 32]}
        ], name
        outputs = json.loads(meta[aotirt.OUTPUTS_KEY])
        assert [(o["dtype"], o["shape"]) for o in outputs] == [("float32", [4, 16])], name
        assert meta[aotirt.FORMAT_KEY] == "1"
        assert meta["AOTI_DEVICE_KEY"] == zoo_manifest["device"]


def test_metadata_matches_saved_inputs_and_outputs(zoo_manifest, zoo_root):
    # For every aotirt-exported package the declared signature must agree
    # with the example inputs and eager outputs stored beside it.
    checked = 0
    for pkg in zoo_manifest["packages"]:
        if "error" in pkg or pkg["plain"]:
            continue
        meta = aotirt.read_metadata(zoo_root / pkg["dir"] / pkg["package"])
        inputs = json.loads(meta[aotirt.INPUTS_KEY])
        outputs = json.loads(meta[aotirt.OUTPUTS_KEY])
        for s in pkg["input_sets"]:
            for declared, saved in ((inputs, s["inputs"]), (outputs, s["expected"])):
                assert len(declared) == len(saved), pkg["name"]
                for d, e in zip(declared, saved):
                    assert d["dtype"] == e["dtype"], (pkg["name"], d, e)
                    assert len(d["shape"]) == len(e["shape"]), (pkg["name"], d, e)
                    for want, have in zip(d["shape"], e["shape"]):
                        assert want in (have, aotirt.DYNAMIC_DIM), (pkg["name"], d, e)
        checked += 1
    assert checked >= 5


def test_multi_io_signature(zoo_manifest, zoo_root):
    meta = aotirt.read_metadata(_pt2(zoo_manifest, zoo_root, "multi_io"))
    inputs = json.loads(meta[aotirt.INPUTS_KEY])
    outputs = json.loads(meta[aotirt.OUTPUTS_KEY])
    assert [(i["name"], i["dtype"]) for i in inputs] == [
        ("x", "float32"), ("idx", "int64"), ("mask", "bool")
    ]
    assert [o["dtype"] for o in outputs] == ["float32", "int64", "bool"]
    assert len({o["name"] for o in outputs}) == 3


def test_dynamic_dim_is_minus_one(zoo_manifest, zoo_root):
    meta = aotirt.read_metadata(_pt2(zoo_manifest, zoo_root, "dynamic_batch"))
    assert json.loads(meta[aotirt.INPUTS_KEY])[0]["shape"] == [-1, 16]
    assert json.loads(meta[aotirt.OUTPUTS_KEY])[0]["shape"] == [-1, 8]


def test_bf16_signature(zoo_manifest, zoo_root):
    meta = aotirt.read_metadata(_pt2(zoo_manifest, zoo_root, "bf16"))
    assert json.loads(meta[aotirt.INPUTS_KEY])[0]["dtype"] == "bfloat16"
    assert json.loads(meta[aotirt.OUTPUTS_KEY])[0]["dtype"] == "bfloat16"


def test_plain_package_has_no_aotirt_metadata(zoo_manifest, zoo_root):
    meta = aotirt.read_metadata(_pt2(zoo_manifest, zoo_root, "mlp_plain"))
    assert aotirt.INPUTS_KEY not in meta and aotirt.OUTPUTS_KEY not in meta
    assert meta["AOTI_DEVICE_KEY"] == zoo_manifest["device"]


def test_packages_carry_weights_blob_not_libtorch(zoo_manifest, zoo_root):
    for name in ("mlp", "mlp_plain"):
        with zipfile.ZipFile(_pt2(zoo_manifest, zoo_root, name)) as zf:
            names = zf.namelist()
        assert any(n.endswith(".wrapper_weights.blob") for n in names), name
        assert any(n.endswith(".wrapper.so") for n in names), name


def test_imported_shims_of_mlp(zoo_manifest, zoo_root):
    shims = aotirt.imported_shims(_pt2(zoo_manifest, zoo_root, "mlp"))
    assert shims == sorted(shims)
    assert "aoti_torch_empty_strided" in shims
    assert all(s.startswith("aoti_torch_") for s in shims)
    # A Linear layer reaches a GEMM fallback on every device.
    assert any(s.endswith(("_addmm_out", "_mm_out")) for s in shims)


@pytest.mark.skipif(shutil.which("nm") is None, reason="binutils nm is not installed")
def test_elf_reader_agrees_with_nm(zoo_manifest, zoo_root, tmp_path):
    libs = []
    with zipfile.ZipFile(_pt2(zoo_manifest, zoo_root, "transformer")) as zf:
        for n in zf.namelist():
            if n.endswith(".so"):
                libs.append(Path(zf.extract(n, tmp_path)))
    runtime = REPO / "build" / "lib" / "libaotirt.so"
    if runtime.is_file():
        libs.append(runtime)
    assert libs
    for lib in libs:
        by_nm = dynamic_symbols(lib, use_nm=True)
        by_elf = dynamic_symbols(lib, use_nm=False)
        assert by_nm.undefined == by_elf.undefined, lib
        assert by_nm.defined == by_elf.defined, lib
        assert by_nm.unversioned_imports == by_elf.unversioned_imports, lib


def test_elf_reader_rejects_non_elf(tmp_path):
    bogus = tmp_path / "not.so"
    bogus.write_bytes(b"hello world, not an ELF file")
    with pytest.raises(OSError, match="not an ELF"):
        dynamic_symbols(bogus, use_nm=False)


def _shim_list(name):
    path = REPO / "python" / "aotirt" / name
    lines = path.read_text().splitlines() if path.is_file() else []
    assert all(line.startswith("aoti_torch_") for line in lines), name
    assert lines == sorted(set(lines)), f"{name} must be sorted and free of repeats"
    return lines


def test_provided_shims_files_are_clean_lists():
    base = _shim_list("provided_shims.txt")
    cuda = _shim_list("provided_shims_cuda.txt")
    assert base
    assert not set(base) & set(cuda), "the CUDA list holds only what a CUDA build adds"
    assert aotirt.provided_shims() == frozenset(base)
    assert aotirt.provided_shims("cpu") == frozenset(base)
    assert aotirt.provided_shims("cuda:0") == frozenset(base) | frozenset(cuda)


# --- export behaviour that needs a compile -----------------------------------


class _Scale(torch.nn.Module):
    """Pointwise only, so the library imports no fallback op."""

    def forward(self, x):
        return x * 3.0 + 1.0


class _Linear(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 3)

    def forward(self, x):
        return self.fc(x)


def _device():
    from zoo_check import zoo_device

    return zoo_device()


def test_export_pointwise_model_with_real_shim_list(tmp_path):
    path = tmp_path / "scale.pt2"
    x = torch.arange(1.0, 7.0).reshape(2, 3)
    result = aotirt.export(_Scale(), (x,), path, device=_device())
    assert result == str(path) and path.is_file()
    assert set(aotirt.imported_shims(path)) <= aotirt.provided_shims(_device())
    meta = aotirt.read_metadata(path)
    assert json.loads(meta[aotirt.INPUTS_KEY]) == [
        {"name": "x", "dtype": "float32", "shape": [2, 3]}
    ]
    # No staging leftovers next to the package.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["scale.pt2"]


def test_export_refuses_missing_shims_and_removes_output(tmp_path, monkeypatch):
    path = tmp_path / "linear.pt2"
    path.write_bytes(b"stale package from an earlier export")
    torch.manual_seed(0)
    x = torch.randn(2, 4)

    # The real list minus every fallback op: a Linear layer needs a GEMM.
    core = frozenset(
        n for n in aotirt.provided_shims(_device())
        if not n.startswith(("aoti_torch_cpu_", "aoti_torch_cuda_"))
    )
    monkeypatch.setattr(export_impl, "provided_shims", lambda device=None: core)
    with pytest.raises(aotirt.ExportError) as info:
        aotirt.export(_Linear(), (x,), path, device=_device())
    err = info.value
    assert err.missing_shims, "the refusal must name the missing shims"
    assert all(n not in core for n in err.missing_shims)
    assert any(n.endswith(("_addmm_out", "_mm_out")) for n in err.missing_shims)
    for name in err.missing_shims:
        assert name in str(err)
    assert not path.exists(), "a refused export must not leave a package behind"
    assert list(tmp_path.iterdir()) == []


def test_export_without_check_keeps_package(tmp_path, monkeypatch):
    monkeypatch.setattr(export_impl, "provided_shims", lambda device=None: frozenset())
    path = tmp_path / "linear.pt2"
    torch.manual_seed(0)
    aotirt.export(_Linear(), (torch.randn(2, 4),), path, device=_device(), check_shims=False)
    assert path.is_file()


class _Counter(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("count", torch.zeros((), dtype=torch.int64))

    def forward(self, x):
        self.count.add_(1)
        return x + self.count


def test_stateful_model_turns_off_uniform_constant_folding(monkeypatch, tmp_path):
    captured = {}

    def fake_compile(ep, package_path, inductor_configs):
        captured.update(inductor_configs)
        raise RuntimeError("stop before compiling")

    monkeypatch.setattr(torch._inductor, "aoti_compile_and_package", fake_compile)
    with pytest.raises(RuntimeError, match="stop before compiling"):
        aotirt.export(_Counter(), (torch.ones(2),), tmp_path / "c.pt2")
    assert captured["joint_graph_constant_folding"] is False
    for key, value in aotirt.LEAN_OPTIONS.items():
        assert captured[key] == value

    captured.clear()
    with pytest.raises(RuntimeError, match="stop before compiling"):
        aotirt.export(_Scale(), (torch.ones(2),), tmp_path / "s.pt2")
    assert "joint_graph_constant_folding" not in captured
    assert list(tmp_path.iterdir()) == []


# --- refusals before compiling ------------------------------------------------


class _IntOutput(torch.nn.Module):
    def forward(self, x):
        return x + 1, 7


def test_rejects_non_tensor_output(tmp_path):
    with pytest.raises(aotirt.ExportError, match="not a tensor"):
        aotirt.export(_IntOutput(), (torch.ones(2),), tmp_path / "m.pt2")
    assert list(tmp_path.iterdir()) == []


def test_rejects_link_libtorch(tmp_path):
    with pytest.raises(aotirt.ExportError, match="link_libtorch"):
        aotirt.export(
            _Scale(), (torch.ones(2),), tmp_path / "m.pt2",
            inductor_configs={"aot_inductor.link_libtorch": True},
        )


def test_rejects_non_string_metadata(tmp_path):
    with pytest.raises(aotirt.ExportError, match="must be str"):
        aotirt.export(
            _Scale(), (torch.ones(2),), tmp_path / "m.pt2",
            **{"aot_inductor.metadata": {"version": 3}},
        )


def test_rejects_path_without_pt2_suffix(tmp_path):
    with pytest.raises(aotirt.ExportError, match="end in .pt2"):
        aotirt.export(_Scale(), (torch.ones(2),), tmp_path / "m.zip")


def test_read_metadata_errors(tmp_path):
    empty = tmp_path / "empty.pt2"
    with zipfile.ZipFile(empty, "w") as zf:
        zf.writestr("empty/archive_format", "pt2")
    with pytest.raises(ValueError, match="holds 0 models"):
        aotirt.read_metadata(empty)


def test_shims_command_line(zoo_manifest, zoo_root):
    pt2 = _pt2(zoo_manifest, zoo_root, "mlp")
    env = dict(os.environ, PYTHONPATH=str(REPO / "python"))
    proc = subprocess.run(
        [sys.executable, "-m", "aotirt", "shims", str(pt2)],
        capture_output=True, text=True, env=env,
    )
    listed = [l.split()[0] for l in proc.stdout.splitlines() if l and not l.startswith("#")]
    assert listed == aotirt.imported_shims(pt2)
    missing = [l.split()[0] for l in proc.stdout.splitlines() if l.endswith("MISSING")]
    provided = aotirt.provided_shims(zoo_manifest["device"])
    assert missing == [n for n in listed if n not in provided]
    assert proc.returncode == (1 if missing else 0)


def test_saved_inputs_are_seeded_and_nonzero(zoo_manifest, zoo_root):
    for pkg in zoo_manifest["packages"]:
        if "error" in pkg:
            continue
        for s in pkg["input_sets"]:
            for e in s["inputs"]:
                a = np.load(zoo_root / pkg["dir"] / e["file"])
                if a.dtype != np.bool_:
                    assert np.count_nonzero(a) > a.size // 2, (pkg["name"], e["file"])
