"""Conformance of sort, sort.stable and topk with eager PyTorch on the same
device: every dtype aotirt sorts, contiguous and strided inputs, each dim,
0-d and 0-size tensors, ties, NaN, and k from 0 to the dimension's size.
Values and output strides must equal torch's; indices must equal them where
torch defines them (a stable sort) and otherwise point at the values.
"""
from __future__ import annotations

import ctypes

import pytest
import torch

from shim_harness import ShimError, Shims, library_path, out_handles
from test_scan_ops import ALL_DTYPES, SHAPES, devices, make, provided

pytestmark = pytest.mark.skipif(not library_path().exists(),
                                reason=f"{library_path()} not built (scripts/build.sh)")


def call(shims, device, op, t, *args):
    name = f"aoti_torch_{device}_{op}"
    if not provided(shims, name):
        pytest.skip(f"{name} is not provided yet")
    v, i = out_handles(2)
    shims.call(name, shims.handle(t), *args, ctypes.byref(v), ctypes.byref(i))
    return shims.tensor(v, device).to(device), shims.tensor(i, device).to(device)


def check_pointing(t, dim, values, indices):
    """The indices pick the values out of the input."""
    assert indices.dtype == torch.int64
    if values.numel():
        picked = torch.gather(t if t.dim() else t.reshape(1), dim, indices if t.dim() else indices.reshape(1))
        torch.testing.assert_close(picked.reshape(values.shape), values, rtol=0, atol=0, equal_nan=True)


def with_ties(shape, dtype, device, strided):
    t = make(shape, dtype, device, strided)
    if dtype.is_floating_point and t.numel() > 2:
        flat = t.reshape(-1) if t.is_contiguous() else None
        if flat is not None:
            flat[1] = flat[0]
            flat[-1] = float("nan")
    return t


def cases():
    for device in devices():
        for dtype in ALL_DTYPES:
            for shape, dims in SHAPES:
                for dim in dims:
                    for strided in ([False, True] if len(shape) > 1 else [False]):
                        yield pytest.param(device, dtype, shape, dim, strided,
                                           id=f"{device}-{str(dtype)[6:]}-{shape}-d{dim}{'-T' if strided else ''}")


@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("device,dtype,shape,dim,strided", list(cases()))
def test_sort_matches_eager(shims, device, dtype, shape, dim, strided, descending):
    t = with_ties(shape, dtype, device, strided)
    stable = ctypes.byref(ctypes.c_int32(1))
    v, i = call(shims, device, "sort_stable", t, stable, ctypes.c_int64(dim), ctypes.c_int32(descending))
    want = torch.sort(t, dim=dim, descending=descending, stable=True)
    assert v.stride() == want.values.stride() and i.stride() == want.indices.stride()
    torch.testing.assert_close(v, want.values, rtol=0, atol=0, equal_nan=True)
    assert torch.equal(i, want.indices), "a stable sort's indices differ from torch's"
    v2, i2 = call(shims, device, "sort", t, ctypes.c_int64(dim), ctypes.c_int32(descending))
    torch.testing.assert_close(v2, want.values, rtol=0, atol=0, equal_nan=True)
    check_pointing(t, dim, v2, i2)


@pytest.mark.parametrize("largest", [True, False])
@pytest.mark.parametrize("device,dtype,shape,dim,strided", list(cases()))
def test_topk_matches_eager(shims, device, dtype, shape, dim, strided, largest):
    if dtype == torch.bool:
        pytest.skip("torch has no topk of bool to compare with")
    t = with_ties(shape, dtype, device, strided)
    n = t.shape[dim] if t.dim() else 1
    for k in sorted({0, min(1, n), n // 2, n}):
        v, i = call(shims, device, "topk", t, ctypes.c_int64(k), ctypes.c_int64(dim), ctypes.c_int32(largest),
                    ctypes.c_int32(1))
        want = torch.topk(t, k, dim=dim, largest=largest, sorted=True)
        assert v.shape == want.values.shape and v.stride() == want.values.stride()
        if t.dim() == 0 and k == 0 and device != "cpu":
            # A 0-d output holds one element whatever k is. torch's CPU
            # kernel writes the input's there; its CUDA kernel writes nothing
            # for k = 0 (the value is whatever the fresh memory held), so
            # only the CPU's answer is defined.
            continue
        torch.testing.assert_close(v, want.values, rtol=0, atol=0, equal_nan=True)
        check_pointing(t, dim, v, i)


@pytest.mark.parametrize("device", devices())
def test_large_sorts_take_every_line(shims, device):
    for shape, dim in [((256, 300), 1), ((300, 256), 0), ((1, 100000), 1)]:
        t = make(shape, torch.float32, device, seed=5)
        v, i = call(shims, device, "sort_stable", t, ctypes.byref(ctypes.c_int32(1)), ctypes.c_int64(dim),
                    ctypes.c_int32(0))
        want = torch.sort(t, dim=dim, stable=True)
        assert torch.equal(v, want.values) and torch.equal(i, want.indices)
        v, i = call(shims, device, "topk", t, ctypes.c_int64(10), ctypes.c_int64(dim), ctypes.c_int32(1),
                    ctypes.c_int32(1))
        assert torch.equal(v, torch.topk(t, 10, dim=dim).values)


@pytest.mark.parametrize("device", devices())
def test_bad_arguments_fail_cleanly(shims, device):
    t = make((3, 4), torch.float32, device)
    with pytest.raises(ShimError):
        call(shims, device, "topk", t, ctypes.c_int64(5), ctypes.c_int64(1), ctypes.c_int32(1), ctypes.c_int32(1))
    with pytest.raises(ShimError):
        call(shims, device, "topk", t, ctypes.c_int64(-1), ctypes.c_int64(1), ctypes.c_int32(1), ctypes.c_int32(1))
    with pytest.raises(ShimError):
        call(shims, device, "sort", t, ctypes.c_int64(2), ctypes.c_int32(0))
    with pytest.raises(ShimError):
        call(shims, device, "sort", torch.zeros(3, dtype=torch.complex64, device=device), ctypes.c_int64(0),
             ctypes.c_int32(0))
