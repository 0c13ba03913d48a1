"""aotirt::ModelGroup through `aotirt generate`: the prefill and decode
packages of aotirt.export_llm load as one group, so each weight is held once.
Checks the bytes of weights held against one package's weights blob, that
greedy generation still equals transformers, and that a missing package, a
pair from other exports and a shared weight of another dtype are refused by
name. Uses test_generate's cached export of the small Llama model."""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import zipfile
from pathlib import Path

import pytest

from test_generate import MISSING, _exported, _fails, _generate, _reference, requires_cuda
from cli_util import REPO, requires_cli

pytestmark = [
    requires_cli,
    pytest.mark.skipif(bool(MISSING), reason=f"not installed: {', '.join(MISSING)} (scripts/setup.sh installs them)"),
]


@pytest.fixture(scope="module")
def llm_dir() -> Path:
    return _exported("cpu")


def _blob_bytes(pt2: Path) -> int:
    """The size of a package's external weights blob."""
    with zipfile.ZipFile(pt2) as z:
        blobs = [i.file_size for i in z.infolist() if i.filename.endswith("_weights.blob")]
    assert len(blobs) == 1, blobs
    return blobs[0]


def test_the_pair_holds_one_copy_of_the_weights(llm_dir):
    prompt = [1, 17, 42, 99, 5, 63]
    got = _generate(llm_dir, "--prompt-ids", ",".join(map(str, prompt)), "-n", "12", "--ignore-eos")
    assert got["tokens"] == _reference(prompt, 12)
    one = _blob_bytes(llm_dir / "prefill.pt2")
    assert _blob_bytes(llm_dir / "decode.pt2") == one
    # aotirt's own accounting of the constants each library keeps in memory.
    assert 0 < got["weight_bytes"] <= 1.1 * one, (got["weight_bytes"], one)
    # Loaded apart, the two would hold about two copies.
    assert got["unshared_weight_bytes"] >= 1.8 * got["weight_bytes"]


@requires_cuda
def test_the_cuda_pair_holds_one_copy_of_the_weights():
    """The same on the GPU: the shared weights are the first package's
    device memory, and generation still equals transformers'."""
    cuda_dir = _exported("cuda")
    prompt = [1, 17, 42, 99, 5, 63]
    got = _generate(cuda_dir, "--prompt-ids", ",".join(map(str, prompt)), "-n", "12",
                    "--ignore-eos")
    assert got["tokens"] == _reference(prompt, 12, device="cuda")
    one = _blob_bytes(cuda_dir / "prefill.pt2")
    assert 0 < got["weight_bytes"] <= 1.1 * one, (got["weight_bytes"], one)
    assert got["unshared_weight_bytes"] >= 1.8 * got["weight_bytes"]


def test_the_stats_line_reports_the_weights_held(llm_dir):
    proc = _generate(llm_dir, "--prompt-ids", "1,17", "-n", "2", "--ignore-eos", check=False)
    assert proc.returncode == 0, proc.stderr
    assert "MiB held" in proc.stderr and "unshared" in proc.stderr


def test_a_missing_package_is_named_before_loading(llm_dir, tmp_path):
    copy = tmp_path / "d"
    shutil.copytree(llm_dir, copy)
    (copy / "decode.pt2").unlink()
    _fails(_generate(copy, "--prompt-ids", "1,2", check=False), "NOT_FOUND", "the decode package", "decode.pt2",
           "package 2 of 2")
    shutil.copyfile(llm_dir / "decode.pt2", copy / "decode.pt2")
    (copy / "prefill.pt2").unlink()
    _fails(_generate(copy, "--prompt-ids", "1,2", check=False), "NOT_FOUND", "the prefill package", "prefill.pt2")


def test_packages_of_another_export_are_refused(llm_dir, tmp_path):
    copy = tmp_path / "d"
    shutil.copytree(llm_dir, copy)
    cfg = json.loads((copy / "llm.json").read_text())
    cfg["export_id"] = "f" * 32
    (copy / "llm.json").write_text(json.dumps(cfg))
    _fails(_generate(copy, "--prompt-ids", "1,2", check=False), "not made by the export", "f" * 32)


def _norm_package(dtype: str, shape: tuple, extra: bool) -> Path:
    """A small package whose weight "model.model.norm.weight" has the FQN of
    the Llama pair's final norm (float32, [64]), here of |dtype| and |shape|,
    and, with |extra|, a second weight the pair does not have. Exported once
    and cached by torch version, this file and the arguments."""
    import torch

    tag = f"{dtype}-{'x'.join(map(str, shape))}-{'extra' if extra else 'one'}"
    key = hashlib.sha256(Path(__file__).read_bytes() + tag.encode()).hexdigest()[:12]
    cache = Path(os.environ.get("AOTIRT_CACHE_DIR", REPO / ".cache")) / "llm" / f"torch-{torch.__version__}"
    final = cache / f"group-{tag}-{key}.pt2"
    if final.is_file():
        return final
    import aotirt

    dt = getattr(torch, dtype)
    numel = 1
    for d in shape:
        numel *= d

    class Norm(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = torch.nn.Parameter(torch.linspace(0.5, 1.5, numel, dtype=dt).reshape(shape))

    class Inner(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.norm = Norm()

    class Middle(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.model = Inner()

    class Outer(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.model = Middle()
            self.extra = torch.nn.Parameter(torch.full((numel,), 2.0, dtype=dt)) if extra else None

        def forward(self, x):
            y = x * self.model.model.norm.weight.reshape(-1)
            return y + self.extra if self.extra is not None else y

    cache.mkdir(parents=True, exist_ok=True)
    partial = cache / f".group-{tag}-{os.getpid()}.pt2"
    with torch.no_grad():
        aotirt.export(Outer().eval(), (torch.ones(numel, dtype=dt),), partial)
    partial.rename(final)
    return final


def _pair_with_decode(llm_dir: Path, tmp_path: Path, decode: Path) -> Path:
    """A copy of the pair whose decode package is |decode|, and whose llm.json
    has no export id (so the packages' ids are not compared)."""
    copy = tmp_path / "d"
    shutil.copytree(llm_dir, copy)
    shutil.copyfile(decode, copy / "decode.pt2")
    cfg = json.loads((copy / "llm.json").read_text())
    del cfg["export_id"]
    (copy / "llm.json").write_text(json.dumps(cfg))
    return copy


def test_a_shared_weight_of_another_dtype_is_refused(llm_dir, tmp_path):
    # The group's own check on the shared weights must refuse the pair.
    copy = _pair_with_decode(llm_dir, tmp_path, _norm_package("float64", (64,), extra=False))
    _fails(_generate(copy, "--prompt-ids", "1,2", check=False), "INCOMPATIBLE", "the decode package",
           "weight 'model.model.norm.weight' is float64 but float32", "not one model's")


def test_a_shared_weight_of_another_shape_is_refused(llm_dir, tmp_path):
    # Same dtype and bytes, another shape: seen once the package, which has
    # a weight of its own too, has loaded its blob.
    copy = _pair_with_decode(llm_dir, tmp_path, _norm_package("float32", (8, 8), extra=True))
    _fails(_generate(copy, "--prompt-ids", "1,2", check=False), "INCOMPATIBLE", "the decode package",
           "weight 'model.model.norm.weight' has shape [8, 8]", "[64]", "not one model's")


def test_a_package_sharing_some_weights_loads(llm_dir, tmp_path):
    # One weight borrowed, one loaded: the group loads, and the pair is then
    # refused by Generator's own checks (the package is no decode step).
    copy = _pair_with_decode(llm_dir, tmp_path, _norm_package("float32", (64,), extra=True))
    _fails(_generate(copy, "--prompt-ids", "1,2", check=False), "the decode package takes 1 inputs")
