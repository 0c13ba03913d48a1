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


def tie_heavy(shape, dtype, device, seed=7):
    """Values drawn from a few hundred levels, so every path meets many equal
    keys; floats also hold NaN, -0.0, 0.0 and the infinities."""
    g = torch.Generator().manual_seed(seed)
    n = 1
    for s in shape:
        n *= s
    if dtype == torch.uint8:
        t = torch.randint(0, 256, (n,), generator=g).to(dtype)
    elif dtype == torch.bool:
        t = torch.rand((n,), generator=g) > 0.5
    elif dtype.is_floating_point:
        t = (torch.randint(-300, 300, (n,), generator=g).to(torch.float64) / 8).to(dtype)
        special = torch.tensor([float("nan"), -0.0, 0.0, float("inf"), float("-inf")], dtype=dtype)
        pick = torch.randint(0, 20, (n,), generator=g)
        t = torch.where(pick < 5, special[pick.clamp(max=4)], t)
    else:
        lo, hi = (-128, 128) if dtype == torch.int8 else (-3000, 3000)
        t = torch.randint(lo, hi, (n,), generator=g).to(dtype)
        if dtype == torch.int64:
            t = t * (1 << 40)  # keys that need their high bytes
    return t.reshape(shape).to(device)


# Shapes that take each path of the CUDA sort (cuda_sort.cu): one block per
# line at each block size, one long line, several long lines (the line in
# the key; 8-byte keys: by key, then by line), and lines strided in memory
# ([300000, 3] along dim 0: the input and both outputs go through copies).
SORT_PATHS = [((16384, 64), 1), ((1000, 300), 1), ((512, 2000), 1), ((64, 4096), 1), ((1 << 20,), 0),
              ((3, 300000), 1), ((33, 4097), 1), ((300000, 3), 0), ((5000, 2), 0)]
PATH_DTYPES = [torch.float32, torch.bfloat16, torch.float16, torch.float64, torch.int64, torch.int32,
               torch.int16, torch.uint8]


@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("dtype", PATH_DTYPES, ids=lambda d: str(d)[6:])
@pytest.mark.parametrize("shape,dim", SORT_PATHS, ids=lambda x: str(x))
@pytest.mark.parametrize("device", devices())
def test_sort_paths_stay_stable(shims, device, shape, dim, dtype, descending):
    if device == "cpu" and shape[0] * (shape[1] if len(shape) > 1 else 1) > 200000 and dtype != torch.float32:
        pytest.skip("one dtype of the long lines is enough for the CPU")
    t = tie_heavy(shape, dtype, device)
    v, i = call(shims, device, "sort_stable", t, ctypes.byref(ctypes.c_int32(1)), ctypes.c_int64(dim),
                ctypes.c_int32(descending))
    want = torch.sort(t, dim=dim, descending=descending, stable=True)
    assert v.stride() == want.values.stride()
    torch.testing.assert_close(v, want.values, rtol=0, atol=0, equal_nan=True)
    assert torch.equal(i, want.indices), "a stable sort's indices differ from torch's"


# (shape, k): topk by radix select (k at most half of a line longer than
# 4096), by a whole-line sort (k above half, or short lines), k == n, and a
# select whose k candidates are themselves too many for one block.
TOPK_PATHS = [((1, 1 << 21), 1000), ((64, 50257), 50), ((3, 20000), 9000), ((16384, 64), 8), ((4, 5000), 4000),
              ((2, 9000), 9000), ((1, 100000), 5000), ((5, 8192), 1)]


@pytest.mark.parametrize("largest", [True, False])
@pytest.mark.parametrize("dtype", PATH_DTYPES, ids=lambda d: str(d)[6:])
@pytest.mark.parametrize("shape,k", TOPK_PATHS, ids=lambda x: str(x))
@pytest.mark.parametrize("device", devices())
def test_topk_paths_match_eager(shims, device, shape, k, dtype, largest):
    if device == "cpu" and shape[0] * shape[1] > 200000 and dtype != torch.float32:
        pytest.skip("one dtype of the long lines is enough for the CPU")
    t = tie_heavy(shape, dtype, device)
    v, i = call(shims, device, "topk", t, ctypes.c_int64(k), ctypes.c_int64(1), ctypes.c_int32(largest),
                ctypes.c_int32(1))
    want = torch.topk(t, k, dim=1, largest=largest, sorted=True)
    assert v.shape == want.values.shape and v.stride() == want.values.stride()
    torch.testing.assert_close(v, want.values, rtol=0, atol=0, equal_nan=True)
    check_pointing(t, 1, v, i)
    # Each index once: equal values may come in any order, but not twice.
    s = torch.sort(i, dim=1).values
    assert bool((s[:, 1:] > s[:, :-1]).all()), "an index comes twice"


@pytest.mark.parametrize("device", devices())
def test_topk_of_none_and_of_a_transposed_input(shims, device):
    t = tie_heavy((50000, 2), torch.float32, device).t()  # lines strided in memory
    for k in (0, 1, 700, 50000):
        v, i = call(shims, device, "topk", t, ctypes.c_int64(k), ctypes.c_int64(1), ctypes.c_int32(1),
                    ctypes.c_int32(1))
        want = torch.topk(t, k, dim=1)
        assert v.shape == want.values.shape and v.stride() == want.values.stride()
        torch.testing.assert_close(v, want.values, rtol=0, atol=0, equal_nan=True)
        check_pointing(t, 1, v, i)
    # Along dim 0 of a [n, 3] tensor: the outputs' lines are strided too.
    t = tie_heavy((9000, 3), torch.bfloat16, device)
    v, i = call(shims, device, "topk", t, ctypes.c_int64(100), ctypes.c_int64(0), ctypes.c_int32(0),
                ctypes.c_int32(1))
    want = torch.topk(t, 100, dim=0, largest=False)
    assert v.stride() == want.values.stride()
    torch.testing.assert_close(v, want.values, rtol=0, atol=0, equal_nan=True)
    check_pointing(t, 0, v, i)
