"""Conformance of the tensor-structure ops with eager PyTorch on the same
device: the views (permute, reshape, narrow, slice, squeeze, view_as_real /
view_as_complex, view.dtype) must give torch's sizes, strides and storage
offset over the same memory (or copy exactly when torch's reshape copies);
cat, pad, the factories and resize_/set_ must give torch's values, dtype,
sizes and strides; the device-generic shims (aoti_torch_aten_*, the
deprecated aoti_torch_mm_out & co.) must agree with the device-specific
ones. Refusals must match: where torch raises, the shim fails.
"""
from __future__ import annotations

import ctypes
import itertools

import pytest
import torch
import torch.nn.functional as F

from shim_harness import devices, provided
from shim_harness import Handle, ShimError, Shims, int32_ptr, library_path

pytestmark = pytest.mark.skipif(not library_path().exists(),
                                reason=f"{library_path()} not built (scripts/build.sh)")

# c10 codes, including the dtypes views can produce.
CODES = {
    torch.uint8: 0, torch.int8: 1, torch.int16: 2, torch.int32: 3, torch.int64: 4,
    torch.float16: 5, torch.float32: 6, torch.float64: 7, torch.complex32: 8, torch.complex64: 9,
    torch.complex128: 10, torch.bool: 11, torch.bfloat16: 15, torch.uint16: 27, torch.uint32: 28,
    torch.uint64: 29,
}
DTYPES = {v: k for k, v in CODES.items()}
DEVICE_CODES = {"cpu": 0, "cuda": 1}
ALL = [torch.float32, torch.float64, torch.bfloat16, torch.float16, torch.int64, torch.int32, torch.int16,
       torch.int8, torch.uint8, torch.bool, torch.complex64]
I64P = ctypes.POINTER(ctypes.c_int64)


def need(shims, name):
    if not provided(shims, name):
        pytest.skip(f"{name} is not exported by this build")
    return name


def handle(shims, t):
    """A handle over |t|'s memory (any dtype in CODES)."""
    shims._keep.append(t)
    n = t.dim()
    sizes = (ctypes.c_int64 * max(n, 1))(*t.shape)
    strides = (ctypes.c_int64 * max(n, 1))(*t.stride())
    out = Handle()
    rc = shims.fn("aoti_torch_create_tensor_from_blob")(
        ctypes.c_void_p(t.untyped_storage().data_ptr()), ctypes.c_int64(n), sizes, strides,
        ctypes.c_int64(t.storage_offset()), ctypes.c_int32(CODES[t.dtype]),
        ctypes.c_int32(DEVICE_CODES[t.device.type]), ctypes.c_int32(t.device.index or 0), ctypes.byref(out))
    assert rc == 0
    return out


def meta(shims, h):
    """(sizes, strides, storage_offset, data_ptr, dtype) of a handle."""
    n = ctypes.c_int64()
    shims.call("aoti_torch_get_dim", h, ctypes.byref(n))
    sp, tp = I64P(), I64P()
    shims.call("aoti_torch_get_sizes", h, ctypes.byref(sp))
    shims.call("aoti_torch_get_strides", h, ctypes.byref(tp))
    off = ctypes.c_int64()
    shims.call("aoti_torch_get_storage_offset", h, ctypes.byref(off))
    ptr = ctypes.c_void_p()
    shims.call("aoti_torch_get_data_ptr", h, ctypes.byref(ptr))
    code = ctypes.c_int32()
    shims.call("aoti_torch_get_dtype", h, ctypes.byref(code))
    return ([sp[i] for i in range(n.value)], [tp[i] for i in range(n.value)], off.value, ptr.value or 0,
            DTYPES[code.value])


def take(shims, h, device):
    """A torch copy of |h| with its sizes and strides; deletes |h|."""
    sizes, strides, _, ptr, dtype = meta(shims, h)
    span = 1 + sum((s - 1) * st for s, st in zip(sizes, strides)) if all(sizes) else 0
    flat = torch.empty(span, dtype=dtype, device=device)
    if span:
        if device == "cpu":
            ctypes.memmove(flat.data_ptr(), ptr, span * flat.element_size())
        else:
            torch.cuda.synchronize()
            ctypes.CDLL("libcudart.so.13").cudaMemcpy(ctypes.c_void_p(flat.data_ptr()), ctypes.c_void_p(ptr),
                                                       ctypes.c_size_t(span * flat.element_size()), 4)
    out = (torch.as_strided(flat, sizes, strides).clone() if span
           else torch.empty_strided(sizes, strides, dtype=dtype, device=device))
    shims.fn("aoti_torch_delete_tensor_object")(h)
    return out


def i64s(values):
    return (ctypes.c_int64 * max(len(values), 1))(*values)


def make(shape, dtype, device, seed=0):
    g = torch.Generator().manual_seed(seed)
    if dtype == torch.bool:
        t = torch.rand(shape, generator=g) > 0.5
    elif dtype.is_complex:
        t = torch.randn(shape, generator=g, dtype=dtype)
    elif dtype.is_floating_point:
        t = torch.randn(shape, generator=g).to(dtype)
    elif dtype == torch.uint8:
        t = torch.randint(0, 200, shape, generator=g).to(dtype)
    else:
        t = torch.randint(-100, 100, shape, generator=g).to(dtype)
    return t.to(device)


def transposed(shape, dtype, device, seed=0):
    return make(tuple(reversed(shape)), dtype, device, seed).permute(list(reversed(range(len(shape)))))


def check_view(shims, h, want):
    """|h| must be exactly torch's view |want| over the same memory."""
    sizes, strides, off, ptr, dtype = meta(shims, h)
    assert dtype == want.dtype
    assert sizes == list(want.shape) and strides == list(want.stride()), (sizes, strides, want.stride())
    assert off == want.storage_offset()
    if want.numel():
        assert ptr == want.data_ptr()
    shims.fn("aoti_torch_delete_tensor_object")(h)


def check_same(got, want, exact_strides=True):
    assert got.dtype == want.dtype and got.shape == want.shape
    if exact_strides:
        assert got.stride() == want.stride(), (got.stride(), want.stride())
    torch.testing.assert_close(got, want, rtol=0, atol=0, equal_nan=True)


def call_view(shims, name, t, *args):
    r = Handle()
    shims.call(name, handle(shims, t), *args, ctypes.byref(r))
    return r


def raises_too(fn_torch, fn_shim):
    """Runs torch, then the shim: both fail or the shim's result is returned."""
    try:
        want = fn_torch()
    except (RuntimeError, IndexError, ValueError):
        with pytest.raises(ShimError):
            fn_shim()
        return None, None
    return want, fn_shim()


# ---------------------------------------------------------------- views

@pytest.mark.parametrize("device", devices())
def test_permute(shims, device):
    name = need(shims, f"aoti_torch_{device}_permute")
    for dtype in [torch.float32, torch.int8, torch.complex64]:
        for shape in [(2, 3, 4), (0, 3, 1), (5,), ()]:
            for t in [make(shape, dtype, device), transposed(shape, dtype, device)]:
                for dims in itertools.permutations(range(len(shape))):
                    for neg in (False, True):
                        d = [x - len(shape) if neg else x for x in dims]
                        check_view(shims, call_view(shims, name, t, i64s(d), ctypes.c_int64(len(d))),
                                   t.permute(d))
    t = make((2, 3), torch.float32, device)
    for bad in ([0, 0], [0], [0, 2], [0, 1, 2]):
        with pytest.raises(ShimError):
            call_view(shims, name, t, i64s(bad), ctypes.c_int64(len(bad)))


RESHAPES = [
    ((4, 6), False, [(24,), (-1,), (2, 12), (3, -1, 2), (4, 6), (1, 24, 1), (2, 2, 2, 3)]),
    ((4, 6), True, [(24,), (6, 4), (3, 2, 4), (6, 2, 2), (-1, 4), (2, 3, 4), (1, 6, 4, 1)]),
    ((0, 3), False, [(3, 0), (-1, 3), (0,), (-1,), (0, 3, 1), (0, 3)]),
    ((0, 3), True, [(0, 3), (3, 0), (-1,)]),
    ((), False, [(1,), (1, 1), (), (-1,)]),
    ((1,), False, [()]),
    ((2, 1, 3), True, [(3, 2), (3, 1, 2), (6,)]),
]


@pytest.mark.parametrize("device", devices())
def test_reshape_views_or_copies_as_torch(shims, device):
    name = need(shims, f"aoti_torch_{device}_reshape")
    for shape, trans, targets in RESHAPES:
        for dtype in [torch.float32, torch.bfloat16, torch.int64]:
            t = transposed(shape, dtype, device) if trans else make(shape, dtype, device)
            for new in targets:
                want = t.reshape(new)
                h = call_view(shims, name, t, i64s(new), ctypes.c_int64(len(new)))
                if want._base is not None or want.data_ptr() == t.data_ptr():
                    check_view(shims, h, want)
                else:  # torch copied: a fresh contiguous tensor
                    _, _, _, ptr, _ = meta(shims, h)
                    assert ptr != t.data_ptr() or t.numel() == 0
                    check_same(take(shims, h, device), want)
    # A sliced input: a view with stride 2 while its rows stay evenly spaced,
    # else a copy.
    t = make((4, 6), torch.float32, device)[:, ::2]
    check_view(shims, call_view(shims, name, t, i64s([12]), ctypes.c_int64(1)), t.reshape(12))
    t = make((4, 6), torch.float32, device)[:, :3]
    want = t.reshape(12)
    assert want._base is None
    check_same(take(shims, call_view(shims, name, t, i64s([12]), ctypes.c_int64(1)), device), want)
    for bad in ([5, -1], [-1, -1], [-2, 12], [25], [0, -1]):
        src = make((4, 6), torch.float32, device)
        with pytest.raises(ShimError):
            call_view(shims, name, src, i64s(bad), ctypes.c_int64(len(bad)))
    with pytest.raises(ShimError):
        call_view(shims, name, make((0, 3), torch.float32, device), i64s([-1, 0]), ctypes.c_int64(2))


@pytest.mark.parametrize("device", devices())
@pytest.mark.parametrize("op", ["narrow", "aten_narrow"])
def test_narrow(shims, device, op):
    name = need(shims, f"aoti_torch_{device}_narrow" if op == "narrow" else "aoti_torch_aten_narrow")
    for t in [make((5, 6), torch.float32, device), transposed((5, 6), torch.int16, device),
              make((0, 4), torch.float64, device)]:
        for dim in (-2, -1, 0, 1):
            size = t.shape[dim]
            for start in range(-size - 1, size + 2):
                for length in range(-1, size + 2):
                    want, got = raises_too(
                        lambda: t.narrow(dim, start, length),
                        lambda: call_view(shims, name, t, ctypes.c_int64(dim), ctypes.c_int64(start),
                                          ctypes.c_int64(length)))
                    if want is not None:
                        check_view(shims, got, want)
    with pytest.raises(ShimError):
        call_view(shims, name, make((), torch.float32, device), ctypes.c_int64(0), ctypes.c_int64(0),
                  ctypes.c_int64(1))


def opt_i64(v):
    return None if v is None else ctypes.byref(ctypes.c_int64(v))


@pytest.mark.parametrize("device", devices())
def test_slice(shims, device):
    name = need(shims, f"aoti_torch_{device}_slice_Tensor")
    bounds = [None, -100, -7, -3, -1, 0, 1, 2, 5, 6, 100, 2**62]
    for t in [make((6, 7), torch.float32, device), transposed((6, 7), torch.uint8, device)]:
        for dim in (0, 1, -1):
            for start in bounds:
                for end in bounds:
                    for step in (1, 2, 3):
                        want = torch.ops.aten.slice.Tensor(t, dim, start, end, step)
                        check_view(shims, call_view(shims, name, t, ctypes.c_int64(dim), opt_i64(start),
                                                    opt_i64(end), ctypes.c_int64(step)), want)
    t = make((6, 7), torch.float32, device)
    for bad_dim, step in [(2, 1), (0, 0), (0, -1)]:
        with pytest.raises(ShimError):
            call_view(shims, name, t, ctypes.c_int64(bad_dim), None, None, ctypes.c_int64(step))


@pytest.mark.parametrize("device", devices())
def test_squeeze_dim(shims, device):
    name = need(shims, f"aoti_torch_{device}_squeeze_dim")
    for shape in [(1, 3, 1), (2, 1), (1,), (), (0, 1)]:
        for t in [make(shape, torch.float32, device), transposed(shape, torch.int32, device)]:
            ext = max(t.dim(), 1)
            for dim in range(-ext - 1, ext + 1):
                want, got = raises_too(lambda: t.squeeze(dim),
                                       lambda: call_view(shims, name, t, ctypes.c_int64(dim)))
                if want is not None:
                    check_view(shims, got, want)


@pytest.mark.parametrize("device", devices())
@pytest.mark.parametrize("op", ["view_as_real", "generic_view_as_real"])
def test_view_as_real(shims, device, op):
    name = need(shims, f"aoti_torch_{device}_view_as_real" if op == "view_as_real" else "aoti_torch_view_as_real")
    for dtype in [torch.complex64, torch.complex128]:
        base = make((4, 6), dtype, device)
        for t in [base, base.t(), base[1:, ::2], base[0, 3:], base[0, 0]]:
            check_view(shims, call_view(shims, name, t), torch.view_as_real(t))
    with pytest.raises(ShimError):
        call_view(shims, name, make((2,), torch.float32, device))


@pytest.mark.parametrize("device", devices())
def test_view_as_complex(shims, device):
    name = need(shims, f"aoti_torch_{device}_view_as_complex")
    for dtype in [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int32]:
        base = make((4, 6, 2), dtype, device)
        cases = [base, base.transpose(0, 1), base[1:], base[:, 1:], base[..., :1],
                 base.view(4, 12)[:, 1:11].view(4, 5, 2),
                 make((2,), dtype, device), make((), dtype, device), make((0, 2), dtype, device),
                 make((3, 2), dtype, device).t()]
        for t in cases:
            want, got = raises_too(lambda: torch.view_as_complex(t), lambda: call_view(shims, name, t))
            if want is not None:
                check_view(shims, got, want)


VIEW_DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64, torch.int32, torch.int16,
               torch.int8, torch.uint8, torch.bool, torch.complex64, torch.complex128, torch.uint16]


@pytest.mark.parametrize("device", devices())
@pytest.mark.parametrize("op", ["view_dtype", "generic_view_dtype"])
def test_view_dtype(shims, device, op):
    name = need(shims, f"aoti_torch_{device}_view_dtype" if op == "view_dtype" else "aoti_torch_view_dtype")
    for src in [torch.float32, torch.int16, torch.uint8, torch.float64]:
        base = make((4, 8), src, device)
        for t in [base, base[1:], base[:, 2:6], base.t(), base[0], base[0, 0], base[:, 1:], base[:, :0]]:
            for dst in VIEW_DTYPES:
                want, got = raises_too(lambda: t.view(dst),
                                       lambda: call_view(shims, name, t, ctypes.c_int32(CODES[dst])))
                if want is not None:
                    check_view(shims, got, want)
    with pytest.raises(ShimError):
        call_view(shims, name, make((2,), torch.float32, device), ctypes.c_int32(99))


# ---------------------------------------------------------------- cat

def run_cat(shims, device, tensors, dim):
    name = need(shims, f"aoti_torch_{device}_cat")
    arr = (Handle * len(tensors))(*[handle(shims, t) for t in tensors])
    r = Handle()
    shims.call(name, arr, ctypes.c_int64(len(tensors)), ctypes.c_int64(dim), ctypes.byref(r))
    return take(shims, r, device)


@pytest.mark.parametrize("device", devices())
def test_cat_dtypes_promote_as_torch(shims, device):
    dts = [torch.float32, torch.float64, torch.bfloat16, torch.float16, torch.int64, torch.int32, torch.int16,
           torch.int8, torch.uint8, torch.bool]
    for a, b in itertools.product(dts, dts):
        x, y = make((2, 3), a, device, 1), transposed((2, 4), b, device, 2)
        check_same(run_cat(shims, device, [x, y], 1), torch.cat([x, y], 1))
    for a in [torch.complex64, torch.complex128]:
        x = make((2, 3), a, device)
        check_same(run_cat(shims, device, [x, x.conj().resolve_conj()], 0), torch.cat([x, x.conj().resolve_conj()], 0))
    x, y = make((2,), torch.uint16, device), make((2,), torch.int32, device)
    with pytest.raises(ShimError):
        run_cat(shims, device, [x, y], 0)


@pytest.mark.parametrize("device", devices())
def test_cat_shapes_and_layouts(shims, device):
    f = torch.float32
    cl = make((2, 3, 4, 5), f, device).contiguous(memory_format=torch.channels_last)
    cl3 = make((2, 3, 2, 4, 5), f, device).contiguous(memory_format=torch.channels_last_3d)
    leg = torch.empty(0, device=device)
    cases = [
        ([make((2, 3), f, device), make((4, 3), f, device)], 0),
        ([make((2, 3), f, device), transposed((2, 5), f, device), make((2, 0), f, device)], -1),
        ([make((0, 3), f, device), make((0, 3), f, device)], 0),
        ([leg, make((2, 3), f, device), leg], 1),
        ([leg, leg], 0),
        ([leg.to(torch.float64), make((2, 3), torch.int32, device)], 0),
        ([cl, cl], 1), ([cl, cl], 0), ([cl, cl.contiguous()], 1), ([leg, cl], 1), ([cl3, cl3], 2),
        ([make((3,), f, device)], 0),
        # Large enough for the parallel block copy.
        ([make((256, 1024), f, device), make((256, 512), f, device), make((256, 0), f, device)], 1),
        ([make((3, 256, 700), f, device), make((3, 100, 700), f, device)], 1),
        ([make((2, 3, 4), f, device)[:, ::2], make((2, 1, 4), f, device).expand(2, 3, 4)], 1),
    ]
    for tensors, dim in cases:
        check_same(run_cat(shims, device, tensors, dim), torch.cat(tensors, dim))
    bad = [
        ([make((2, 3), f, device), make((2, 4), f, device)], 0),
        ([make((2, 3), f, device), make((2, 3, 1), f, device)], 0),
        ([make((2, 3), f, device)], 2),
        ([torch.tensor(1.0, device=device)], 0),
    ]
    for tensors, dim in bad:
        with pytest.raises((RuntimeError, IndexError)):
            torch.cat(tensors, dim)
        with pytest.raises(ShimError):
            run_cat(shims, device, tensors, dim)
    r = Handle()
    with pytest.raises(ShimError):
        shims.call(need(shims, f"aoti_torch_{device}_cat"), (Handle * 1)(), ctypes.c_int64(0), ctypes.c_int64(0),
                   ctypes.byref(r))


# ---------------------------------------------------------------- pad

def run_pad(shims, name, device, t, pads, mode, value):
    r = Handle()
    v = None if value is None else ctypes.byref(ctypes.c_double(value))
    shims.call(name, handle(shims, t), i64s(pads), ctypes.c_int64(len(pads)), mode.encode(), v, ctypes.byref(r))
    return take(shims, r, device)


PAD_CASES = [
    ((5,), [1, 2]), ((5,), [-1, 3]), ((5,), [0, 0]), ((5,), [-2, -3]), ((5,), [-3, -3]),
    ((2, 5), [2, 1]), ((2, 5), [1, 1, 1, 0]), ((2, 5), [-1, 2, 0, 1]), ((2, 3, 5), [4, 4]),
    ((2, 3, 5), [1, 2, 2, 1]), ((2, 3, 4, 5), [1, 0, 2, 1]), ((2, 3, 4, 5), [1, 1, 1, 1, 1, 1]),
    ((1, 2, 3, 4, 5), [1, 2, 2, 1, 1, 1]), ((2, 3, 4, 5), [-1, 2, 3, -1]), ((2, 3, 5), [5, 0]),
    ((2, 3, 5), [-3, 4]), ((2, 3, 5), [4, -3]), ((0, 3, 5), [1, 1]), ((2, 0, 5), [1, 1]),
    ((2, 3, 5), [1, 2, 3]), ((2, 3, 5), [1, 1, 1, 1, 1, 1, 1, 1]), ((2, 5), [-1, 0, 0, -1]),
    ((2, 3, 5), [0, 0]), ((3, 4, 5), [-1, -1, 0, 0, -1, 0]), ((0, 3), [1, 1, 1, 1]),
]


@pytest.mark.parametrize("device", devices())
@pytest.mark.parametrize("op", ["pad", "aten_pad"])
@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
def test_pad_matches_eager(shims, device, op, mode):
    name = need(shims, f"aoti_torch_{device}_pad" if op == "pad" else "aoti_torch_aten_pad")
    dtypes = [torch.float32, torch.int64, torch.bool, torch.bfloat16, torch.uint8, torch.complex64]
    for (shape, pads), dtype in itertools.product(PAD_CASES, dtypes):
        for strided in (False, True):
            t = transposed(shape, dtype, device) if strided else make(shape, dtype, device)
            values = [None, 2.5, -1.0, 1e10, float("nan")] if mode == "constant" else [None]
            for value in values:
                try:
                    want = torch._C._nn.pad(t, pads, mode, value)
                except (RuntimeError, NotImplementedError, ValueError, IndexError):
                    with pytest.raises(ShimError):
                        run_pad(shims, name, device, t, pads, mode, value)
                    continue
                try:
                    got = run_pad(shims, name, device, t, pads, mode, value)
                except ShimError:
                    # Allowed only for negative padding that reaches past
                    # what remains of the input (torch reads stale bytes).
                    assert mode != "constant" and min(pads) < 0, (shape, pads, dtype, mode)
                    continue
                check_same(got, want)
    # Channels-last inputs keep their format (circular: contiguous).
    t = make((2, 3, 4, 5), torch.float32, device).contiguous(memory_format=torch.channels_last)
    for pads in ([1, 1], [1, 2, 1, 0]):
        try:
            want = torch._C._nn.pad(t, pads, mode, None)
        except RuntimeError:
            continue
        check_same(run_pad(shims, name, device, t, pads, mode, None), want)
    with pytest.raises(ShimError):
        run_pad(shims, name, device, make((2, 5), torch.float32, device), [1, 1], "wrap", None)
    if mode != "constant":
        with pytest.raises(ShimError):
            run_pad(shims, name, device, make((2, 5), torch.float32, device), [1, 1], mode, 1.0)


# ---------------------------------------------------------------- factories

@pytest.mark.parametrize("device", devices())
def test_hann_window(shims, device):
    name = need(shims, f"aoti_torch_{device}_hann_window")
    for n in [0, 1, 2, 3, 4, 7, 64, 1001]:
        for dtype in [None, torch.float32, torch.float64, torch.float16, torch.bfloat16]:
            r = Handle()
            shims.call(name, ctypes.c_int64(n), int32_ptr(None if dtype is None else CODES[dtype]), None,
                       int32_ptr(DEVICE_CODES[device]), ctypes.c_int32(0), None, ctypes.byref(r))
            got = take(shims, r, device)
            want = torch.hann_window(n, dtype=dtype, device=device)
            assert got.dtype == want.dtype and got.shape == want.shape and got.stride() == want.stride()
            tol = {torch.float64: 1e-12, torch.float32: 1e-6}.get(want.dtype, 1e-2)
            torch.testing.assert_close(got, want, rtol=0, atol=tol)
    for n, dtype in [(-1, None), (4, torch.int64), (4, torch.complex64)]:
        r = Handle()
        with pytest.raises(ShimError):
            shims.call(name, ctypes.c_int64(n), int32_ptr(None if dtype is None else CODES[dtype]), None, None,
                       ctypes.c_int32(0), None, ctypes.byref(r))


@pytest.mark.parametrize("device", devices())
def test_efficientzerotensor(shims, device):
    name = need(shims, f"aoti_torch_{device}__efficientzerotensor")
    for shape in [(2, 3), (), (0, 4), (3, 1, 2)]:
        for dtype in [None, torch.float64, torch.int32, torch.bool, torch.bfloat16]:
            r = Handle()
            shims.call(name, i64s(shape), ctypes.c_int64(len(shape)),
                       int32_ptr(None if dtype is None else CODES[dtype]), None, int32_ptr(DEVICE_CODES[device]),
                       ctypes.c_int32(0), None, ctypes.byref(r))
            want = torch.zeros(shape, dtype=dtype, device=device)
            check_same(take(shims, r, device), want)


@pytest.mark.parametrize("device", devices())
def test_full_new_empty_new_zeros(shims, device):
    full = need(shims, "aoti_torch_aten_full")
    for shape in [(2, 3), (), (0, 5), (1, 1)]:
        for dtype in [None, torch.float16, torch.float64, torch.int64, torch.int8, torch.bool, torch.bfloat16,
                      torch.complex64]:
            for value in [0.0, 2.75, -3.5, 1e10, 1e40, float("inf"), float("nan"), -200.0]:
                r = Handle()
                want, _ = raises_too(
                    lambda: torch.full(shape, value, dtype=dtype, device=device),
                    lambda: shims.call(full, i64s(shape), ctypes.c_int64(len(shape)), ctypes.c_double(value),
                                       int32_ptr(None if dtype is None else CODES[dtype]), None,
                                       int32_ptr(DEVICE_CODES[device]), ctypes.c_int32(0), None, ctypes.byref(r)))
                if want is not None:
                    got = take(shims, r, device)
                    assert got.dtype == want.dtype and got.stride() == want.stride()
                    torch.testing.assert_close(got, want, rtol=0, atol=0, equal_nan=True)
    src = make((3, 4), torch.float16, device).t()
    for op in ["new_empty", "new_zeros"]:
        name = need(shims, f"aoti_torch_aten_{op}")
        for shape, dtype in [((2, 5), None), ((0,), torch.int64), ((), torch.float64), ((4, 1, 2), torch.bool)]:
            r = Handle()
            shims.call(name, handle(shims, src), i64s(shape), ctypes.c_int64(len(shape)),
                       int32_ptr(None if dtype is None else CODES[dtype]), None, None, ctypes.c_int32(-1), None,
                       ctypes.byref(r))
            want = getattr(src, op)(shape, dtype=dtype)
            got = take(shims, r, device)
            assert got.dtype == want.dtype and got.shape == want.shape and got.stride() == want.stride()
            assert got.device == want.device
            if op == "new_zeros":
                assert torch.equal(got, want)
    r = Handle()
    with pytest.raises(ShimError):
        shims.call(full, i64s([-1]), ctypes.c_int64(1), ctypes.c_double(0), None, None, None, ctypes.c_int32(0),
                   None, ctypes.byref(r))
    with pytest.raises(ShimError):  # sparse layout
        shims.call(full, i64s([1]), ctypes.c_int64(1), ctypes.c_double(0), None, int32_ptr(1), None,
                   ctypes.c_int32(0), None, ctypes.byref(r))


# ---------------------------------------------------------------- resize_, set_

def owned(shims, shape, dtype, device):
    """An aotirt-allocated tensor (its storage can grow) filled with arange."""
    r = Handle()
    n = len(shape)
    shims.call("aoti_torch_empty_strided", ctypes.c_int64(n), i64s(shape), None, ctypes.c_int32(CODES[dtype]),
               ctypes.c_int32(DEVICE_CODES[device]), ctypes.c_int32(0), ctypes.byref(r))
    src = torch.arange(int(torch.tensor(shape).prod()) if shape else 1, device=device).to(dtype).reshape(shape)
    shims.call("aoti_torch_copy_", r, handle(shims, src), ctypes.c_int32(0))
    return r, src


@pytest.mark.parametrize("device", devices())
def test_resize(shims, device):
    name = need(shims, f"aoti_torch_{device}_resize_")
    fmts = {None: None, torch.contiguous_format: 0, torch.preserve_format: 1, torch.channels_last: 2,
            torch.channels_last_3d: 3}
    cases = [((2, 3), (4, 5)), ((2, 3), (2, 3)), ((2, 3), (1, 2)), ((2, 3, 4, 5), (2, 3, 4, 5)),
             ((2, 3), (0, 3, 0, 2)), ((2, 3), (2, 3, 4, 6)), ((6,), (1, 2, 3, 4, 5)), ((2, 3), ())]
    for (old, new), fmt in itertools.product(cases, fmts):
        h, src = owned(shims, old, torch.float32, device)
        ref = src.clone()
        try:
            ref.resize_(new, memory_format=fmt) if fmt is not None else ref.resize_(new)
        except RuntimeError:
            with pytest.raises(ShimError):
                shims.call(name, h, i64s(new), ctypes.c_int64(len(new)), int32_ptr(fmts[fmt]))
            shims.fn("aoti_torch_delete_tensor_object")(h)
            continue
        shims.call(name, h, i64s(new), ctypes.c_int64(len(new)), int32_ptr(fmts[fmt]))
        sizes, strides, _, _, _ = meta(shims, h)
        assert sizes == list(ref.shape) and strides == list(ref.stride()), (old, new, fmt, strides, ref.stride())
        # The old elements keep their place in the storage.
        got = take(shims, h, device)
        keep = min(src.numel(), got.numel())
        if got.is_contiguous() and keep:
            assert torch.equal(got.reshape(-1)[:keep], src.reshape(-1)[:keep])
    # Borrowed memory cannot grow, but can shrink or keep its size.
    t = make((2, 3), torch.float32, device)
    h = handle(shims, t)
    shims.call(name, h, i64s([3, 2]), ctypes.c_int64(2), None)
    assert meta(shims, h)[:2] == ([3, 2], [2, 1])
    with pytest.raises(ShimError):
        shims.call(name, h, i64s([4, 4]), ctypes.c_int64(2), None)
    with pytest.raises(ShimError):
        shims.call(name, h, i64s([-1]), ctypes.c_int64(1), None)


@pytest.mark.parametrize("device", devices())
def test_resize_as(shims, device):
    name = need(shims, f"aoti_torch_{device}_resize_as_")
    cl = make((2, 3, 4, 5), torch.float32, device).contiguous(memory_format=torch.channels_last)
    templates = [cl, cl[:, :, :, :2], make((4, 5), torch.float32, device), make((2, 3), torch.float32, device).t()]
    for tmpl, fmt in itertools.product(templates, [None, 0, 1, 2]):
        mf = {None: None, 0: torch.contiguous_format, 1: torch.preserve_format, 2: torch.channels_last}[fmt]
        h, src = owned(shims, (2, 3), torch.float32, device)
        ref = src.clone()
        try:
            ref.resize_as_(tmpl, memory_format=mf) if mf is not None else ref.resize_as_(tmpl)
        except RuntimeError:
            with pytest.raises(ShimError):
                shims.call(name, h, handle(shims, tmpl), int32_ptr(fmt))
            shims.fn("aoti_torch_delete_tensor_object")(h)
            continue
        shims.call(name, h, handle(shims, tmpl), int32_ptr(fmt))
        sizes, strides, _, _, _ = meta(shims, h)
        assert sizes == list(ref.shape) and strides == list(ref.stride()), (tmpl.shape, fmt)
        shims.fn("aoti_torch_delete_tensor_object")(h)


@pytest.mark.parametrize("device", devices())
def test_set_source_tensor(shims, device):
    name = need(shims, f"aoti_torch_{device}_set__source_Tensor")
    base = make((4, 6), torch.float32, device)
    source = base[1:, ::2]
    h, _ = owned(shims, (2, 3), torch.float32, device)
    shims.call(name, h, handle(shims, source))
    check_view(shims, h, source)
    h, _ = owned(shims, (2,), torch.int32, device)
    with pytest.raises(ShimError):
        shims.call(name, h, handle(shims, source))
    shims.fn("aoti_torch_delete_tensor_object")(h)
    # A source on another device is refused, as torch refuses it.
    if device != "cpu":
        h, _ = owned(shims, (2, 3), torch.float32, device)
        with pytest.raises(ShimError):
            shims.call(name, h, handle(shims, source.cpu()))
        shims.fn("aoti_torch_delete_tensor_object")(h)


# ---------------------------------------------------------------- generic forwarders

@pytest.mark.parametrize("device", devices())
def test_generic_matmul_and_convolution_forward(shims, device):
    a, b = make((5, 7), torch.float32, device, 1), make((7, 3), torch.float32, device, 2)
    out = torch.empty(5, 3, device=device)
    shims.call(need(shims, "aoti_torch_mm_out"), handle(shims, out), handle(shims, a), handle(shims, b))
    torch.testing.assert_close(out, a @ b)
    ba, bb = make((2, 5, 7), torch.float64, device, 3), make((2, 7, 3), torch.float64, device, 4)
    bout = torch.empty(2, 5, 3, dtype=torch.float64, device=device)
    shims.call(need(shims, "aoti_torch_bmm_out"), handle(shims, bout), handle(shims, ba), handle(shims, bb))
    torch.testing.assert_close(bout, ba @ bb)
    bias = make((3,), torch.float32, device, 5)
    aout = torch.empty(5, 3, device=device)
    shims.call(need(shims, "aoti_torch_addmm_out"), handle(shims, aout), handle(shims, bias), handle(shims, a),
               handle(shims, b), ctypes.c_float(0.5), ctypes.c_float(2.0))
    torch.testing.assert_close(aout, torch.addmm(bias, a, b, beta=0.5, alpha=2.0))
    x, w = make((1, 2, 6, 6), torch.float32, device, 6), make((4, 2, 3, 3), torch.float32, device, 7)
    cb = make((4,), torch.float32, device, 8)
    for with_bias in (True, False):
        r = Handle()
        shims.call(need(shims, "aoti_torch_convolution"), handle(shims, x), handle(shims, w),
                   handle(shims, cb) if with_bias else None, i64s([1, 1]), ctypes.c_int64(2), i64s([1, 1]),
                   ctypes.c_int64(2), i64s([1, 1]), ctypes.c_int64(2), ctypes.c_int(0), i64s([0, 0]),
                   ctypes.c_int64(2), ctypes.c_int64(1), ctypes.byref(r))
        want = F.conv2d(x, w, cb if with_bias else None, padding=1)
        torch.testing.assert_close(take(shims, r, device), want, rtol=1e-4, atol=1e-4)
    with pytest.raises(ShimError):  # shape mismatch reported by the device op
        shims.call("aoti_torch_mm_out", handle(shims, out), handle(shims, a), handle(shims, a))
