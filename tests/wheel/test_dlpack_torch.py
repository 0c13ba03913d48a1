# DLPack between torch and the installed wheel's runtime API, in an
# environment with torch (scripts/wheel-check.sh puts the wheel's install
# ahead of the source tree): torch tensors go in and come out without a copy,
# on the CPU and, on a machine with a GPU, on CUDA. AOTIRT_ZOO_MANIFEST names
# the CPU zoo; AOTIRT_CUDA_ZOO_MANIFEST, where set, the CUDA one.

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest
import torch

import aotirt


def package(manifest_env, name):
    path = os.environ.get(manifest_env, "")
    if not os.path.isfile(path):
        pytest.skip(f"{manifest_env} names no zoo manifest")
    m = json.loads(Path(path).read_text())
    for p in m["packages"]:
        if p["name"] == name and "error" not in p:
            return Path(m["root"]) / p["dir"], p
    pytest.skip(f"the zoo has no {name} package")


def test_wheel_is_the_one_tested():
    assert "site-packages" in aotirt.__file__ or "wheel" in aotirt.__file__, aotirt.__file__


def devices():
    return [("cpu", "AOTIRT_ZOO_MANIFEST"), ("cuda", "AOTIRT_CUDA_ZOO_MANIFEST")]


def need(device):
    if device == "cuda" and not torch.cuda.is_available():
        pytest.skip("no GPU: the CUDA DLPack round trip runs on a machine with one")


@pytest.mark.parametrize("device,manifest_env", devices())
def test_round_trip_without_copies(device, manifest_env):
    need(device)
    pkg_dir, info = package(manifest_env, "view_output")
    m = aotirt.load(pkg_dir / "model.pt2", device=device)
    x = torch.from_numpy(np.load(pkg_dir / info["input_sets"][0]["inputs"][0]["file"])).to(device)
    view, total = m.run([x], outputs="dlpack")
    v = torch.from_dlpack(view)
    t = torch.from_dlpack(total)
    # The first output is the input's own memory: in and out without a copy.
    assert v.data_ptr() == x.data_ptr()
    assert v.device == x.device
    torch.testing.assert_close(v, x.view(x.shape[0], -1))
    want = torch.from_numpy(np.load(pkg_dir / info["input_sets"][0]["expected"][1]["file"])).to(device)
    torch.testing.assert_close(t, want, rtol=1e-5, atol=1e-5)
    # Taken twice, the same output is the same memory.
    assert torch.from_dlpack(total).data_ptr() == t.data_ptr()
    # "auto" keeps device outputs on the device, host ones as numpy.
    auto = m(x)
    assert isinstance(auto[1], np.ndarray) == (device == "cpu")


@pytest.mark.parametrize("device,manifest_env", devices())
def test_torch_inputs_match_numpy_inputs(device, manifest_env):
    need(device)
    pkg_dir, info = package(manifest_env, "multi_io")
    m = aotirt.load(pkg_dir / "model.pt2", device=device)
    arrays = [np.load(pkg_dir / e["file"]) for e in info["input_sets"][0]["inputs"]]
    tensors = [torch.from_numpy(a).to(device) for a in arrays]
    from_numpy = m.run(arrays, outputs="numpy")
    from_torch = [torch.from_dlpack(o).cpu().numpy() for o in m.run(tensors, outputs="dlpack")]
    for a, b in zip(from_numpy, from_torch):
        assert np.array_equal(a, b)
    # A strided torch tensor is copied densely, with the same result.
    x = tensors[0]
    wide = torch.zeros(x.shape[0], x.shape[1] * 2, dtype=x.dtype, device=device)
    wide[:, ::2] = x
    strided = m.run([wide[:, ::2], tensors[1], tensors[2]], outputs="numpy")
    for a, b in zip(from_numpy, strided):
        assert np.array_equal(a, b)


def test_bfloat16_through_dlpack():
    pkg_dir, info = package("AOTIRT_ZOO_MANIFEST", "bf16")
    m = aotirt.load(pkg_dir / "model.pt2")
    x = torch.from_numpy(np.load(pkg_dir / info["input_sets"][0]["inputs"][0]["file"])).to(torch.bfloat16)
    out = torch.from_dlpack(m.run([x], outputs="dlpack")[0])
    assert out.dtype == torch.bfloat16
    want = torch.from_numpy(np.load(pkg_dir / info["input_sets"][0]["expected"][0]["file"]))
    torch.testing.assert_close(out.float(), want, rtol=2e-2, atol=2e-2)
