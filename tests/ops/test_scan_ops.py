"""Conformance of the scans (cumsum, cumprod, logcumsumexp, cummax, cummin)
with eager PyTorch on the same device: every dtype aotirt scans, contiguous
and strided inputs, each dim (negative too), 0-d and 0-size tensors, the
dtype argument, and lines long and many enough to take the parallel path.
Values must be equal (integers, and floats accumulated as torch does) or
within a tight tolerance (logcumsumexp). CUDA runs on a GPU machine.
"""
from __future__ import annotations

import ctypes

import pytest
import torch

from shim_harness import devices, provided
from shim_harness import ShimError, Shims, int32_ptr, library_path, out_handles, DTYPE_CODES

pytestmark = pytest.mark.skipif(not library_path().exists(),
                                reason=f"{library_path()} not built (scripts/build.sh)")

ALL_DTYPES = [torch.float32, torch.float64, torch.bfloat16, torch.float16, torch.int64, torch.int32,
              torch.int16, torch.int8, torch.uint8, torch.bool]
FLOATS = [torch.float32, torch.float64, torch.bfloat16, torch.float16]


def make(shape, dtype, device, strided=False, seed=0):
    g = torch.Generator().manual_seed(seed)
    if strided:  # the transpose of a contiguous tensor: same shape, other strides
        shape = tuple(reversed(shape))
    if dtype == torch.bool:
        t = torch.rand(shape, generator=g) > 0.5
    elif dtype.is_floating_point:
        t = (torch.randn(shape, generator=g) * 0.7 + 0.1).to(dtype)
    elif dtype == torch.uint8:
        t = torch.randint(0, 5, shape, generator=g).to(dtype)
    else:
        t = torch.randint(-4, 5, shape, generator=g).to(dtype)
    if strided:
        t = t.permute(*reversed(range(t.dim())))
    return t.to(device)


def run_scan(shims, op, device, t, dim, dtype=None):
    name = f"aoti_torch_{device}_{op}"
    h = shims.handle(t)
    if op in ("cummax", "cummin"):
        v, i = out_handles(2)
        shims.call(name, h, ctypes.c_int64(dim), ctypes.byref(v), ctypes.byref(i))
        return shims.tensor(v, device).to(device), shims.tensor(i, device).to(device)
    (r,) = out_handles(1)
    if op == "logcumsumexp":
        shims.call(name, h, ctypes.c_int64(dim), ctypes.byref(r))
    else:
        shims.call(name, h, ctypes.c_int64(dim), int32_ptr(None if dtype is None else DTYPE_CODES[dtype]),
                   ctypes.byref(r))
    return shims.tensor(r, device).to(device)


def eager(op, t, dim, dtype=None):
    if op == "cumsum":
        return torch.cumsum(t, dim, dtype=dtype)
    if op == "cumprod":
        return torch.cumprod(t, dim, dtype=dtype)
    if op == "logcumsumexp":
        return torch.logcumsumexp(t, dim)
    r = getattr(torch, op)(t, dim)
    return r.values, r.indices


SHAPES = [((), [0, -1]), ((0,), [0]), ((7,), [0, -1]), ((3, 4, 5), [0, 1, 2, -1]), ((2, 0, 3), [1, 2])]


def cases(dtypes):
    for device in devices():
        for dtype in dtypes:
            for shape, dims in SHAPES:
                for dim in dims:
                    for strided in ([False, True] if len(shape) > 1 else [False]):
                        yield pytest.param(device, dtype, shape, dim, strided,
                                           id=f"{device}-{str(dtype)[6:]}-{shape}-d{dim}{'-T' if strided else ''}")


def check(op, device, got, want):
    if isinstance(want, tuple):
        assert got[0].dtype == want[0].dtype and got[1].dtype == torch.int64
        assert got[0].stride() == want[0].stride() and got[1].stride() == want[1].stride()
        torch.testing.assert_close(got[0], want[0], rtol=0, atol=0, equal_nan=True)
        assert torch.equal(got[1], want[1]), f"indices differ:\n{got[1]}\n{want[1]}"
        return
    assert got.dtype == want.dtype, f"dtype {got.dtype}, torch gives {want.dtype}"
    assert got.shape == want.shape
    assert got.stride() == want.stride(), f"strides {got.stride()}, torch gives {want.stride()}"
    if op == "logcumsumexp":
        torch.testing.assert_close(got, want, equal_nan=True)
    elif device == "cpu":
        # The same accumulation order and type as torch's CPU kernels.
        torch.testing.assert_close(got, want, rtol=0, atol=0, equal_nan=True)
    else:
        # Another order of accumulation than torch's parallel scans: the
        # half types may land one rounding step away.
        tol = {torch.float16: dict(rtol=2e-3, atol=1e-3), torch.bfloat16: dict(rtol=1.6e-2, atol=1e-2)}
        torch.testing.assert_close(got, want, equal_nan=True, **tol.get(want.dtype, {}))


@pytest.mark.parametrize("op", ["cumsum", "cumprod", "cummax", "cummin"])
@pytest.mark.parametrize("device,dtype,shape,dim,strided", list(cases(ALL_DTYPES)))
def test_scan_matches_eager(shims, op, device, dtype, shape, dim, strided):
    if not provided(shims, f"aoti_torch_{device}_{op}"):
        pytest.skip(f"aoti_torch_{device}_{op} is not provided yet")
    t = make(shape, dtype, device, strided)
    check(op, device, run_scan(shims, op, device, t, dim), eager(op, t, dim))


@pytest.mark.parametrize("device,dtype,shape,dim,strided", list(cases(FLOATS)))
def test_logcumsumexp_matches_eager(shims, device, dtype, shape, dim, strided):
    if not provided(shims, f"aoti_torch_{device}_logcumsumexp"):
        pytest.skip(f"aoti_torch_{device}_logcumsumexp is not provided yet")
    t = make(shape, dtype, device, strided)
    check("logcumsumexp", device, run_scan(shims, "logcumsumexp", device, t, dim), eager("logcumsumexp", t, dim))


@pytest.mark.parametrize("device", devices())
@pytest.mark.parametrize("src,dst", [(torch.int32, torch.float32), (torch.bool, torch.int32),
                                     (torch.float32, torch.float64), (torch.float64, torch.float16)])
@pytest.mark.parametrize("op", ["cumsum", "cumprod"])
def test_dtype_argument(shims, device, src, dst, op):
    if not provided(shims, f"aoti_torch_{device}_{op}"):
        pytest.skip(f"aoti_torch_{device}_{op} is not provided yet")
    t = make((4, 6), src, device)
    check(op, device, run_scan(shims, op, device, t, 1, dst), eager(op, t, 1, dst))


@pytest.mark.parametrize("device", devices())
@pytest.mark.parametrize("op", ["cumsum", "cummax", "logcumsumexp"])
def test_large_scans_take_every_line(shims, device, op):
    # Many lines (the parallel path) and one long line.
    if not provided(shims, f"aoti_torch_{device}_{op}"):
        pytest.skip(f"aoti_torch_{device}_{op} is not provided yet")
    for shape, dim in [((512, 300), 1), ((300, 512), 0), ((1, 200000), 1)]:
        t = make(shape, torch.float32, device, seed=3)
        check(op, device, run_scan(shims, op, device, t, dim), eager(op, t, dim))


@pytest.mark.parametrize("device", devices())
@pytest.mark.parametrize("op,dtype", [("cumsum", torch.int64), ("cumsum", torch.float32), ("cumprod", torch.int64),
                                      ("cumsum", torch.bfloat16), ("logcumsumexp", torch.float32)])
def test_short_lines_across_tiles(shims, device, op, dtype):
    # CUDA scans small problems a block per line in tiles of 2,048: lines
    # that end inside, on and past a tile's end, and the size limits of that
    # path on either side.
    if not provided(shims, f"aoti_torch_{device}_{op}"):
        pytest.skip(f"aoti_torch_{device}_{op} is not provided yet")
    for shape in [(8, 2048), (5, 2049), (2, 3001), (3, 4096), (1, 4097), (256, 4096), (257, 4096), (9, 7)]:
        if op == "cumprod":  # small factors, so that products stay exact and nonzero
            t = torch.randint(1, 3, shape, generator=torch.Generator().manual_seed(5)).to(dtype).to(device)
            t[:, 40:] = 1
        else:
            t = make(shape, dtype, device, seed=5)
        got = run_scan(shims, op, device, t, 1)
        if dtype == torch.bfloat16:
            # Long bfloat16 sums: torch's CUDA kernel rounds partial sums to
            # bfloat16 on the way, aotirt keeps float32 to the end. Both are
            # held to the float32 sum rounded once, within two steps of it.
            want = eager(op, t.float(), 1).to(dtype)
            assert got.dtype == want.dtype and got.stride() == want.stride()
            torch.testing.assert_close(got, want, rtol=8e-3, atol=1e-2)
        else:
            check(op, device, got, eager(op, t, 1))


@pytest.mark.parametrize("device", devices())
def test_nan_and_ties_in_cummax_and_cummin(shims, device):
    t = torch.tensor([[1.0, 3.0, 3.0, float("nan"), 5.0, -1.0], [2.0, 2.0, 1.0, 1.0, 0.0, 0.0]], device=device)
    for op in ("cummax", "cummin"):
        if not provided(shims, f"aoti_torch_{device}_{op}"):
            pytest.skip(f"aoti_torch_{device}_{op} is not provided yet")
        check(op, device, run_scan(shims, op, device, t, 1), eager(op, t, 1))


@pytest.mark.parametrize("device", devices())
def test_bad_arguments_fail_cleanly(shims, device):
    name = f"aoti_torch_{device}_cumsum"
    if not provided(shims, name):
        pytest.skip(f"{name} is not provided yet")
    t = make((3, 4), torch.float32, device)
    with pytest.raises(ShimError):
        run_scan(shims, "cumsum", device, t, 2)  # dim out of range
    with pytest.raises(ShimError):
        run_scan(shims, "cumsum", device, torch.zeros(3, dtype=torch.complex64, device=device), 0)
    (r,) = out_handles(1)
    assert shims.fn(name)(None, ctypes.c_int64(0), None, ctypes.byref(r)) == 1  # null input
    assert shims.fn(name)(shims.handle(t), ctypes.c_int64(0), None, None) == 1  # null output
