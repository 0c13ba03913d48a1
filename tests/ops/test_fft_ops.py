"""Conformance of the FFTs (_fft_c2c, _fft_r2c, and the device-generic
aoti_torch__fft_c2c) with eager PyTorch: complex64/complex128 and
float32/float64, each normalization (0 none, 1 1/sqrt(n), 2 1/n), forward
and backward, onesided and full r2c, one or several dims in any order,
contiguous, transposed, sliced and misaligned inputs, and output strides
exactly as torch's kernels on the same device lay them out (torch's CUDA
path transforms at most three dims per cuFFT plan, and does an r2c in one
plan unless it has more than three dims or they begin with 0, 1, so its
strides can differ from the CPU's). CUDA runs on a GPU machine where a CUDA shim
exists. Values agree within FFT rounding.
"""
from __future__ import annotations

import ctypes

import pytest
import torch

from shim_harness import devices, provided
from shim_harness import ShimError, Shims, library_path, out_handles

pytestmark = pytest.mark.skipif(not library_path().exists(),
                                reason=f"{library_path()} not built (scripts/build.sh)")


def need(shims, name):
    if not provided(shims, name):
        pytest.skip(f"{name} is not provided yet")


def call(shims, name, t, dims, norm, flag, device="cpu"):
    need(shims, name)
    arr = (ctypes.c_int64 * max(len(dims), 1))(*dims)
    (r,) = out_handles(1)
    shims.call(name, shims.handle(t), arr, ctypes.c_int64(len(dims)), ctypes.c_int64(norm), ctypes.c_int32(flag),
               ctypes.byref(r))
    return shims.tensor(r, device)


def make(shape, dtype, layout, seed=0, device="cpu"):
    g = torch.Generator().manual_seed(seed)
    real = dtype in (torch.float32, torch.float64)
    if layout == "transposed":
        shape = tuple(reversed(shape))
    elif layout == "sliced":
        shape = shape[:-1] + (shape[-1] * 2,)
    t = torch.randn(shape, generator=g, dtype=torch.float64)
    if not real:
        t = torch.complex(t, torch.randn(shape, generator=g, dtype=torch.float64))
    if layout == "misaligned":
        # One element past an aligned start: a real input is then not
        # aligned as its complex type (cuFFT's r2c wants that).
        flat = torch.zeros(t.numel() + 1, dtype=t.dtype)
        flat[1:] = t.flatten()
        t = flat.to(dtype).to(device)[1:].view(shape)
        return t
    t = t.to(dtype).to(device)
    if layout == "transposed":
        t = t.permute(tuple(reversed(range(t.dim()))))
    elif layout == "sliced":
        t = t[..., ::2]
    return t


def op(device, kind):
    return f"aoti_torch_{device}__fft_{kind}"


def check(got, want):
    assert got.dtype == want.dtype, f"dtype {got.dtype}, torch gives {want.dtype}"
    assert got.shape == want.shape
    assert got.stride() == want.stride(), f"strides {got.stride()}, torch gives {want.stride()}"
    tol = 1e-4 if want.dtype == torch.complex64 else 1e-10
    scale = max(want.abs().max().item(), 1.0) if want.numel() else 1.0
    torch.testing.assert_close(got, want, rtol=tol, atol=tol * scale)


SHAPE = (3, 4, 6)
DIMS = [[2], [0], [0, 2], [2, 0], [1, 0], [0, 1], [2, 1, 0]]
LAYOUTS = ["contiguous", "transposed", "sliced", "misaligned"]


@pytest.mark.parametrize("device", devices())
@pytest.mark.parametrize("dtype", [torch.complex64, torch.complex128])
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dims", DIMS, ids=str)
@pytest.mark.parametrize("norm,forward", [(0, True), (1, True), (2, True), (0, False), (2, False)])
def test_fft_c2c_matches_eager(shims, device, dtype, layout, dims, norm, forward):
    t = make(SHAPE, dtype, layout, device=device)
    got = call(shims, op(device, "c2c"), t, dims, norm, int(forward), device)
    check(got, torch.ops.aten._fft_c2c(t, dims, norm, forward))


@pytest.mark.parametrize("device", devices())
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dims", DIMS, ids=str)
@pytest.mark.parametrize("norm,onesided", [(0, True), (1, True), (2, True), (0, False), (2, False)])
def test_fft_r2c_matches_eager(shims, device, dtype, layout, dims, norm, onesided):
    t = make(SHAPE, dtype, layout, device=device)
    got = call(shims, op(device, "r2c"), t, dims, norm, int(onesided), device)
    check(got, torch.ops.aten._fft_r2c(t, dims, norm, onesided))


@pytest.mark.parametrize("device", devices())
@pytest.mark.parametrize("shape,dims", [((7,), [0]), ((1,), [0]), ((5, 1), [1]), ((2, 1, 1, 3), [3]),
                                        ((2, 1, 1, 3), [0]), ((1, 1, 3, 1), [2]), ((1, 1, 3, 1), [0, 3]),
                                        ((2, 3), []), ((), []), ((64, 257), [1]), ((16, 9, 10), [0, 1, 2]),
                                        ((4096, 300), [0]), ((300, 4096), [1]),
                                        ((2, 3, 4, 5), [0, 1, 2, 3]), ((2, 3, 4, 5, 3), [4, 2, 0, 1, 3]),
                                        ((2, 3, 4, 5), [2, 0, 3]), ((2, 3, 4, 5), [3, 1])])
@pytest.mark.parametrize("kind", ["c2c", "r2c"])
@pytest.mark.parametrize("onesided", [True, False])
def test_fft_odd_shapes(shims, device, shape, dims, kind, onesided):
    if kind == "r2c" and not dims:
        pytest.skip("r2c needs a dim")
    if kind == "c2c" and not onesided:
        pytest.skip("onesided is r2c's")
    dtype = torch.complex64 if kind == "c2c" else torch.float32
    for layout in ("contiguous", "transposed"):
        t = make(shape, dtype, layout, seed=1, device=device)
        got = call(shims, op(device, kind), t, dims, 2, int(onesided), device)
        want = getattr(torch.ops.aten, f"_fft_{kind}")(t, dims, 2, onesided)
        check(got, want)


@pytest.mark.parametrize("device", devices())
@pytest.mark.parametrize("kind", ["c2c", "r2c"])
def test_fft_of_zero_size_batches(shims, device, kind):
    # torch's MKL rejects some 0-size transforms; where torch gives a result,
    # aotirt must give the same.
    dtype = torch.complex64 if kind == "c2c" else torch.float32
    t = make((0, 4), dtype, "contiguous", device=device)
    try:
        want = getattr(torch.ops.aten, f"_fft_{kind}")(t, [1], 1, True)
    except RuntimeError:
        pytest.skip("torch refuses this 0-size transform")
    check(call(shims, op(device, kind), t, [1], 1, 1, device), want)


@pytest.mark.parametrize("device", devices())
def test_fft_of_a_broadcast_input(shims, device):
    t = make((3, 1), torch.complex128, "contiguous", device=device).expand(3, 4)
    check(call(shims, op(device, "c2c"), t, [0], 0, 1, device), torch.ops.aten._fft_c2c(t, [0], 0, True))
    r = make((3, 1), torch.float64, "contiguous", device=device).expand(3, 4)
    check(call(shims, op(device, "r2c"), r, [1], 1, 0, device), torch.ops.aten._fft_r2c(r, [1], 1, False))


@pytest.mark.parametrize("device", devices())
def test_fft_round_trip_and_input_untouched(shims, device):
    t = make((4, 10), torch.complex128, "contiguous", device=device)
    keep = t.clone()
    f = call(shims, op(device, "c2c"), t, [1], 0, 1, device)
    back = call(shims, op(device, "c2c"), f, [1], 2, 0, device)
    torch.testing.assert_close(back, t, rtol=1e-12, atol=1e-12)
    assert torch.equal(t, keep)
    r = make((6, 10), torch.float32, "transposed", device=device)
    keep = r.clone()
    call(shims, op(device, "r2c"), r, [0, 1], 0, 0, device)
    assert torch.equal(r, keep)


@pytest.mark.parametrize("device", devices())
@pytest.mark.parametrize("dims", [[1], [0, 1]], ids=str)
def test_device_generic_fft_c2c(shims, device, dims):
    t = make((5, 8), torch.complex64, "transposed", device=device)
    need(shims, op(device, "c2c"))  # the generic op forwards to the device's own
    got = call(shims, "aoti_torch__fft_c2c", t, dims, 1, 1, device)
    check(got, torch.ops.aten._fft_c2c(t, dims, 1, True))


@pytest.mark.parametrize("device", devices())
def test_fft_bad_arguments(shims, device):
    c = make((3, 4), torch.complex64, "contiguous", device=device)
    r = make((3, 4), torch.float32, "contiguous", device=device)
    c2c, r2c = op(device, "c2c"), op(device, "r2c")
    need(shims, c2c)
    need(shims, r2c)
    for name, t, dims, norm in [(c2c, c, [2], 0), (c2c, c, [1, 1], 0), (c2c, c, [-1], 0), (c2c, c, [0], 3),
                                (c2c, r, [0], 0), (r2c, c, [0], 0), (r2c, r, [], 0), (r2c, r.half(), [0], 0),
                                ("aoti_torch__fft_c2c", r, [0], 0)]:
        with pytest.raises(ShimError):
            call(shims, name, t, dims, norm, 1, device)
