"""Frozen packages (Inductor's freezing=True CPU recipe): a small ResNet-like
CNN (convolution + batch norm + ReLU, a residual sum, a depthwise convolution
with hardswish, a linear head) and an MLP, exported with freezing so their
weights are prepacked for oneDNN and their convolutions and linears call the
mkldnn shims, then run through the aotirt CLI and compared with eager
PyTorch. A build without oneDNN must refuse them at load with UNIMPLEMENTED
naming those shims."""
from __future__ import annotations

import os
import re
import subprocess
import zipfile
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import aotirt
from aotirt._symbols import dynamic_symbols

REPO = Path(__file__).resolve().parent.parent.parent
BUILD = Path(os.environ.get("AOTIRT_BUILD_DIR", REPO / "build"))
CLI = Path(os.environ.get("AOTIRT_CLI", BUILD / "bin" / "aotirt"))
LIB = BUILD / "lib" / "libaotirt.so"

pytestmark = pytest.mark.skipif(not CLI.exists() or not LIB.exists(), reason=f"aotirt not built in {BUILD}")

ONEDNN_SHIM = re.compile(r"^aoti_torch_cpu_(mkldnn_|_linear_pointwise)")


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c1 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.b1 = nn.BatchNorm2d(c)
        self.c2 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.b2 = nn.BatchNorm2d(c)

    def forward(self, x):
        return F.relu(self.b2(self.c2(F.relu(self.b1(self.c1(x))))) + x)


class SmallResNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 5, stride=2, padding=2, bias=False), nn.BatchNorm2d(16), nn.ReLU())
        self.block = Block(16)
        self.down = nn.Sequential(nn.Conv2d(16, 32, 1, stride=2), nn.BatchNorm2d(32))
        self.dw = nn.Sequential(nn.Conv2d(32, 32, 3, padding=1, groups=32, bias=False), nn.BatchNorm2d(32),
                                nn.Hardswish())
        self.fc = nn.Linear(32, 10)

    def forward(self, x):
        x = self.dw(self.down(self.block(self.stem(x))))
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


class Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(48, 96)
        self.fc2 = nn.Linear(96, 96)
        self.fc3 = nn.Linear(96, 12)

    def forward(self, x):
        return self.fc3(F.gelu(self.fc2(F.relu(self.fc1(x)))))


def _randomize_bn(module: nn.Module, gen: torch.Generator) -> None:
    # Non-trivial running statistics, so folding them into the weights matters.
    for m in module.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.running_mean.copy_(torch.randn(m.num_features, generator=gen) * 0.1)
            m.running_var.copy_(torch.rand(m.num_features, generator=gen) + 0.5)
            m.weight.data.copy_(torch.rand(m.num_features, generator=gen) + 0.5)
            m.bias.data.copy_(torch.randn(m.num_features, generator=gen) * 0.1)


MODELS = {
    "frozen_cnn": (SmallResNet, (2, 3, 32, 32)),
    "frozen_mlp": (Mlp, (8, 48)),
}


@pytest.fixture(scope="module")
def frozen(tmp_path_factory):
    root = tmp_path_factory.mktemp("frozen")
    out = {}
    for name, (cls, shape) in MODELS.items():
        gen = torch.Generator().manual_seed(7)
        torch.manual_seed(7)
        model = cls().eval()
        _randomize_bn(model, gen)
        x = torch.randn(*shape, generator=gen)
        path = root / f"{name}.pt2"
        with torch.no_grad():
            want = model(x)
        # With autograd on: aotirt.export turns it off itself, or Inductor
        # would silently skip the freezing (test_packages_are_really_frozen).
        assert torch.is_grad_enabled()
        aotirt.export(model, (x,), path, device="cpu", freezing=True)
        np.save(root / f"{name}_x.npy", x.numpy())
        out[name] = (path, root / f"{name}_x.npy", want.numpy())
    return out


def _imports(pt2: Path) -> set:
    return set(aotirt.imported_shims(pt2))


def _has_onednn_shims() -> bool:
    return any(ONEDNN_SHIM.match(s) for s in dynamic_symbols(str(LIB)).defined)


def test_packages_are_really_frozen(frozen):
    cnn = _imports(frozen["frozen_cnn"][0])
    assert {"aoti_torch_cpu_mkldnn__convolution_pointwise", "aoti_torch_cpu__linear_pointwise"} <= cnn
    assert "aoti_torch_cpu_mkldnn__convolution_pointwise_binary_" in cnn  # the residual sum, in place
    assert "aoti_torch_cpu_convolution" not in cnn
    assert "aoti_torch_cpu__linear_pointwise" in _imports(frozen["frozen_mlp"][0])
    # The weights are prepacked (layout _mkldnn with a oneDNN descriptor).
    with zipfile.ZipFile(frozen["frozen_cnn"][0]) as zf:
        wrapper = next(n for n in zf.namelist() if n.endswith(".wrapper.cpp"))
        source = zf.read(wrapper).decode()
    assert "cached_torch_layout__mkldnn" in source and "opaque_metadata" in source


@pytest.mark.parametrize("name", sorted(MODELS))
def test_frozen_package_matches_eager(frozen, name, tmp_path):
    if not _has_onednn_shims():
        pytest.skip("this build has no oneDNN (test_frozen_package_is_refused_without_onednn covers it)")
    pt2, x, want = frozen[name]
    proc = subprocess.run([str(CLI), "run", str(pt2), "--input", str(x), "--output-dir", str(tmp_path)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    got = np.load(tmp_path / "output0.npy")
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_frozen_package_is_refused_without_onednn(frozen, tmp_path):
    if _has_onednn_shims():
        pytest.skip("this build has oneDNN (test_frozen_package_matches_eager covers it)")
    pt2, x, _ = frozen["frozen_cnn"]
    proc = subprocess.run([str(CLI), "run", str(pt2), "--input", str(x), "--output-dir", str(tmp_path)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode != 0
    assert "UNIMPLEMENTED" in proc.stderr, proc.stderr
    for shim in ("aoti_torch_cpu_mkldnn__convolution_pointwise", "aoti_torch_cpu__linear_pointwise"):
        assert shim in proc.stderr, proc.stderr
