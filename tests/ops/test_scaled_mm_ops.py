"""Conformance of _scaled_mm (the float8 matrix product with per-tensor
scales): the CPU op, its out= variant and the device-generic _scaled_mm and
_scaled_mm_v2 entry points, against eager torch._scaled_mm on the CPU. Every
output dtype torch's CPU op gives, float8_e4m3fn and float8_e5m2 operands,
a bias, and mat2 in either memory order. On a GPU the CUDA op likewise
against eager CUDA torch._scaled_mm, with tensor-wise and row-wise scales,
in the layout torch's CUDA op takes (mat2 column-major), and its refusals;
and the CUDA _scaled_grouped_mm (row-wise scales, bfloat16 output) in its
four layouts against eager CUDA torch._scaled_grouped_mm, with its refusals.
"""
from __future__ import annotations

import ctypes

import pytest
import torch

from shim_harness import DTYPE_CODES, ShimError, Shims, devices, int32_ptr, library_path, out_handles, provided

pytestmark = pytest.mark.skipif(not library_path().exists(),
                                reason=f"{library_path()} not built (scripts/build.sh)")

F8 = torch.float8_e4m3fn


def operands(dtype_a=F8, dtype_b=F8, m=5, k=16, n=8, transposed=True, seed=0):
    g = torch.Generator().manual_seed(seed)
    a = torch.randn(m, k, generator=g).to(dtype_a)
    b = torch.randn(n, k, generator=g).to(dtype_b).t() if transposed else torch.randn(k, n, generator=g).to(dtype_b)
    return a, b, torch.tensor(0.5), torch.tensor(2.0)


def cpu_scaled_mm(shims, a, b, sa, sb, bias=None, out_dtype=None):
    (r,) = out_handles(1)
    shims.call("aoti_torch_cpu__scaled_mm", shims.handle(a), shims.handle(b), shims.handle(sa), shims.handle(sb),
               ctypes.byref(shims.handle(bias)) if bias is not None else None, None,
               int32_ptr(None if out_dtype is None else DTYPE_CODES[out_dtype]),
               ctypes.c_int32(0), ctypes.byref(r))
    return shims.tensor(r)



def close(got, want):
    assert got.dtype == want.dtype and got.shape == want.shape and got.stride() == want.stride()
    torch.testing.assert_close(got.float(), want.float(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("out_dtype", [None, torch.float32, torch.bfloat16, torch.float16, torch.float8_e5m2])
@pytest.mark.parametrize("dtypes", [(F8, F8), (torch.float8_e5m2, F8)])
@pytest.mark.parametrize("transposed", [True, False])
def test_scaled_mm_matches_eager(shims, out_dtype, dtypes, transposed):
    a, b, sa, sb = operands(*dtypes, transposed=transposed)
    want = torch._scaled_mm(a, b, scale_a=sa, scale_b=sb, out_dtype=out_dtype)
    close(cpu_scaled_mm(shims, a, b, sa, sb, out_dtype=out_dtype), want)


def test_scaled_mm_with_bias(shims):
    a, b, sa, sb = operands()
    bias = torch.randn(8)
    want = torch._scaled_mm(a, b, scale_a=sa, scale_b=sb, bias=bias, out_dtype=torch.float32)
    close(cpu_scaled_mm(shims, a, b, sa, sb, bias=bias, out_dtype=torch.float32), want)


def test_scaled_mm_out_and_generic_entry_points(shims):
    a, b, sa, sb = operands()
    want = torch._scaled_mm(a, b, scale_a=sa, scale_b=sb, out_dtype=torch.float32)
    out = torch.empty(5, 8)
    shims.call("aoti_torch_cpu__scaled_mm_out", shims.handle(out), shims.handle(a), shims.handle(b),
               shims.handle(sa), shims.handle(sb), None, None, int32_ptr(DTYPE_CODES[torch.float32]),
               ctypes.c_int32(0))
    close(out, want)
    (r,) = out_handles(1)
    shims.call("aoti_torch__scaled_mm_v2", shims.handle(a), shims.handle(b), shims.handle(sa), shims.handle(sb),
               None, None, int32_ptr(DTYPE_CODES[torch.float32]), ctypes.c_int8(0), ctypes.byref(r))
    close(shims.tensor(r), want)
    r, amax = out_handles(2)
    shims.call("aoti_torch__scaled_mm", shims.handle(a), shims.handle(b), None,
               int32_ptr(DTYPE_CODES[torch.float32]), shims.handle(sa), shims.handle(sb), None, ctypes.c_int8(0),
               ctypes.byref(r), ctypes.byref(amax))
    close(shims.tensor(r), want)
    assert shims.tensor(amax).item() == want.abs().max().item()


def test_bad_arguments_fail_cleanly(shims):
    a, b, sa, sb = operands()
    with pytest.raises(ShimError):  # row-wise scales: torch's CPU op has per-tensor ones only
        cpu_scaled_mm(shims, a, b, torch.full((5, 1), 0.5), sb)
    with pytest.raises(ShimError):  # not float8
        cpu_scaled_mm(shims, a.float(), b, sa, sb)
    with pytest.raises(ShimError):  # K mismatch
        cpu_scaled_mm(shims, a, b[:8], sa, sb)
    with pytest.raises(ShimError):  # an output dtype torch does not give
        cpu_scaled_mm(shims, a, b, sa, sb, out_dtype=torch.int32)
    with pytest.raises(ShimError):  # float64 scales
        cpu_scaled_mm(shims, a, b, sa.double(), sb)
    out = torch.empty(4, 8)
    with pytest.raises(ShimError):  # out of the wrong shape
        shims.call("aoti_torch_cpu__scaled_mm_out", shims.handle(out), shims.handle(a), shims.handle(b),
                   shims.handle(sa), shims.handle(sb), None, None, int32_ptr(DTYPE_CODES[torch.float32]),
                   ctypes.c_int32(0))


# ---- CUDA ----

E5 = torch.float8_e5m2


def need_cuda(shims, name):
    if "cuda" not in devices():
        pytest.skip("no GPU")
    if not provided(shims, name):
        pytest.skip(f"{name} is not provided yet")
    return name


def cuda_operands(dtype_a=F8, dtype_b=F8, m=40, k=64, n=48, rowwise=False, seed=0):
    """self row-major and mat2 column-major (a transposed weight), as torch's
    CUDA op requires."""
    g = torch.Generator().manual_seed(seed)
    a = torch.randn(m, k, generator=g).to(dtype_a).cuda()
    b = torch.randn(n, k, generator=g).to(dtype_b).cuda().t()
    if rowwise:
        sa = (torch.rand(m, 1, generator=g) + 0.5).cuda()
        sb = (torch.rand(1, n, generator=g) + 0.5).cuda()
    else:
        sa, sb = torch.tensor(0.5).cuda(), torch.tensor(2.0).cuda()
    return a, b, sa, sb


def cuda_scaled_mm(shims, a, b, sa, sb, bias=None, out_dtype=None, fast=0, scale_result=None):
    (r,) = out_handles(1)
    shims.call(need_cuda(shims, "aoti_torch_cuda__scaled_mm"), shims.handle(a), shims.handle(b), shims.handle(sa),
               shims.handle(sb), ctypes.byref(shims.handle(bias)) if bias is not None else None,
               ctypes.byref(shims.handle(scale_result)) if scale_result is not None else None,
               int32_ptr(None if out_dtype is None else DTYPE_CODES[out_dtype]), ctypes.c_int32(fast),
               ctypes.byref(r))
    return shims.tensor(r, "cuda")


def cuda_close(got, want):
    """Within one rounding step of the output dtype: cuBLASLt may sum in
    another order for another output type."""
    assert got.dtype == want.dtype and got.shape == want.shape and got.stride() == want.stride()
    tol = {torch.float32: (1e-4, 1e-4), torch.bfloat16: (1.6e-2, 1e-2), torch.float16: (2e-3, 2e-3)}
    rtol, atol = tol.get(want.dtype, (0.13, 0.02))
    torch.testing.assert_close(got.float(), want.float(), rtol=rtol, atol=atol)


@pytest.mark.parametrize("out_dtype", [None, torch.float32, torch.bfloat16, torch.float16, F8])
@pytest.mark.parametrize("dtypes", [(F8, F8), (E5, F8), (F8, E5)])
@pytest.mark.parametrize("fast", [0, 1])
def test_cuda_scaled_mm_tensorwise(shims, out_dtype, dtypes, fast):
    need_cuda(shims, "aoti_torch_cuda__scaled_mm")
    a, b, sa, sb = cuda_operands(*dtypes)
    want = torch._scaled_mm(a, b, scale_a=sa, scale_b=sb, out_dtype=out_dtype, use_fast_accum=bool(fast))
    cuda_close(cuda_scaled_mm(shims, a, b, sa, sb, out_dtype=out_dtype, fast=fast), want)


@pytest.mark.parametrize("shape", [(40, 64, 48), (1, 32, 16), (257, 128, 96)])
@pytest.mark.parametrize("with_bias", [False, True])
def test_cuda_scaled_mm_rowwise(shims, shape, with_bias):
    need_cuda(shims, "aoti_torch_cuda__scaled_mm")
    m, k, n = shape
    a, b, sa, sb = cuda_operands(m=m, k=k, n=n, rowwise=True)
    if m == 1:  # a [1, 1] scale_a would read as tensor-wise; keep the row-wise pair
        sa = sa.reshape(1, 1)
    bias = torch.randn(n).to(torch.bfloat16).cuda() if with_bias else None
    want = torch._scaled_mm(a, b, scale_a=sa, scale_b=sb, bias=bias, out_dtype=torch.bfloat16)
    cuda_close(cuda_scaled_mm(shims, a, b, sa, sb, bias=bias, out_dtype=torch.bfloat16), want)


@pytest.mark.parametrize("out_dtype", [torch.bfloat16, torch.float16])
def test_cuda_scaled_mm_bias(shims, out_dtype):
    need_cuda(shims, "aoti_torch_cuda__scaled_mm")
    a, b, sa, sb = cuda_operands()
    bias = torch.randn(48).to(out_dtype).cuda()
    want = torch._scaled_mm(a, b, scale_a=sa, scale_b=sb, bias=bias, out_dtype=out_dtype)
    cuda_close(cuda_scaled_mm(shims, a, b, sa, sb, bias=bias, out_dtype=out_dtype), want)


def test_cuda_scaled_mm_out_and_generic_entry_points(shims):
    need_cuda(shims, "aoti_torch_cuda__scaled_mm_out")
    a, b, sa, sb = cuda_operands()
    want = torch._scaled_mm(a, b, scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16)
    out = torch.empty(40, 48, dtype=torch.bfloat16, device="cuda")
    shims.call("aoti_torch_cuda__scaled_mm_out", shims.handle(out), shims.handle(a), shims.handle(b),
               shims.handle(sa), shims.handle(sb), None, None, int32_ptr(DTYPE_CODES[torch.bfloat16]),
               ctypes.c_int32(0))
    cuda_close(out, want)
    (r,) = out_handles(1)
    shims.call("aoti_torch__scaled_mm_v2", shims.handle(a), shims.handle(b), shims.handle(sa), shims.handle(sb),
               None, None, int32_ptr(DTYPE_CODES[torch.bfloat16]), ctypes.c_int8(0), ctypes.byref(r))
    cuda_close(shims.tensor(r, "cuda"), want)
    r, amax = out_handles(2)
    shims.call("aoti_torch__scaled_mm", shims.handle(a), shims.handle(b), None,
               int32_ptr(DTYPE_CODES[torch.bfloat16]), shims.handle(sa), shims.handle(sb), None, ctypes.c_int8(0),
               ctypes.byref(r), ctypes.byref(amax))
    got = shims.tensor(r, "cuda")
    cuda_close(got, want)
    assert shims.tensor(amax, "cuda").item() == got.float().abs().max().item()


def test_cuda_scaled_mm_refusals(shims):
    need_cuda(shims, "aoti_torch_cuda__scaled_mm")
    a, b, sa, sb = cuda_operands()
    for args, why in [
        ((a, b.contiguous(), sa, sb), "mat2 row-major"),
        ((a[:, :40], b[:40], sa, sb), "K not a multiple of 16"),
        ((a, b[:, :40], sa, sb), "N not a multiple of 16"),
        ((a.to(E5), b.to(E5), sa, sb), "two float8_e5m2 operands"),
        ((a.float(), b, sa, sb), "not float8"),
        ((a, b, sa.double(), sb), "float64 scale"),
    ]:
        with pytest.raises(ShimError):
            cuda_scaled_mm(shims, *args, out_dtype=torch.bfloat16)
        with pytest.raises((RuntimeError, ValueError)):  # torch refuses it too
            torch._scaled_mm(*args, out_dtype=torch.bfloat16)
    a, b, sa, sb = cuda_operands(rowwise=True)
    with pytest.raises(ShimError):  # row-wise scales give bfloat16 only
        cuda_scaled_mm(shims, a, b, sa, sb, out_dtype=torch.float32)


# ---- CUDA _scaled_grouped_mm ----

GROUPED = "aoti_torch_cuda__scaled_grouped_mm"


def need_grouped(shims):
    need_cuda(shims, GROUPED)
    if torch.cuda.get_device_capability() not in ((9, 0), (10, 0)):
        pytest.skip("torch's _scaled_grouped_mm runs on sm_90 and sm_100 only")


def f8_rows(shape, g):
    """A row-major float8 operand on the GPU."""
    return torch.randn(shape, generator=g).to(F8).cuda()


def f8_cols(shape, g):
    """A float8 operand column-major in its last two dims (a transposed weight)."""
    s = list(shape)
    s[-1], s[-2] = s[-2], s[-1]
    return torch.randn(s, generator=g).to(F8).cuda().transpose(-2, -1)


def scales(shape, g):
    return (torch.rand(shape, generator=g) + 0.5).cuda()


def grouped_operands(kind, ends=(5, 5, 40), m=24, k=64, n=48, seed=0):
    """Operands of one of torch's four layouts; |ends| are the offs (the
    groups' ends along the grouped dimension)."""
    g = torch.Generator().manual_seed(seed)
    groups = len(ends)
    offs = torch.tensor(ends, dtype=torch.int32).cuda()
    if kind == "2d3d":
        total = ends[-1]
        return f8_rows((total, k), g), f8_cols((groups, k, n), g), scales(total, g), scales((groups, n), g), offs
    if kind == "3d2d":
        total = ends[-1]
        return f8_rows((groups, m, k), g), f8_cols((k, total), g), scales((groups, m), g), scales(total, g), offs
    if kind == "2d2d":
        total = ends[-1]
        return f8_rows((m, total), g), f8_cols((total, n), g), scales(groups * m, g), scales(groups * n, g), offs
    return (f8_rows((groups, m, k), g), f8_cols((groups, k, n), g), scales((groups, m), g),
            scales((groups, n), g), None)


def cuda_grouped_mm(shims, a, b, sa, sb, offs=None, bias=None, scale_result=None, out_dtype=None, fast=0):
    (r,) = out_handles(1)
    shims.call(GROUPED, shims.handle(a), shims.handle(b), shims.handle(sa), shims.handle(sb),
               ctypes.byref(shims.handle(offs)) if offs is not None else None,
               ctypes.byref(shims.handle(bias)) if bias is not None else None,
               ctypes.byref(shims.handle(scale_result)) if scale_result is not None else None,
               int32_ptr(None if out_dtype is None else DTYPE_CODES[out_dtype]), ctypes.c_int32(fast),
               ctypes.byref(r))
    return shims.tensor(r, "cuda")


# Group boundaries: an empty group where torch's layout allows one, and
# multiples of 16 along N and K (cuBLASLt's float8 alignment). 3d x 3d
# takes only the number of groups from |ends|.
GROUPED_CASES = [
    ("2d2d", dict(ends=(32, 64, 128))),
    ("2d3d", dict(ends=(5, 5, 40))),
    ("2d3d", dict(ends=(100, 130, 131, 300), k=128, n=256)),
    ("3d2d", dict(ends=(16, 16, 64))),
    ("3d2d", dict(ends=(128, 256), m=70, k=96)),
    ("2d2d", dict(ends=(16, 48), m=33, n=80)),
    ("3d3d", dict(ends=(0, 0, 0))),
    ("3d3d", dict(ends=(0,), m=130, k=160, n=112)),
]


@pytest.mark.parametrize("kind,opts", GROUPED_CASES, ids=[f"{k}-{i}" for i, (k, _) in enumerate(GROUPED_CASES)])
@pytest.mark.parametrize("fast", [0, 1])
def test_cuda_scaled_grouped_mm(shims, kind, opts, fast):
    need_grouped(shims)
    a, b, sa, sb, offs = grouped_operands(kind, **opts)
    want = torch._scaled_grouped_mm(a, b, sa, sb, offs=offs, out_dtype=torch.bfloat16, use_fast_accum=bool(fast))
    cuda_close(cuda_grouped_mm(shims, a, b, sa, sb, offs, out_dtype=torch.bfloat16, fast=fast), want)
    if fast == 0:  # out_dtype absent means bfloat16
        cuda_close(cuda_grouped_mm(shims, a, b, sa, sb, offs), want)


def test_cuda_scaled_grouped_mm_empty(shims):
    need_grouped(shims)
    a, b, sa, sb, offs = grouped_operands("2d3d", ends=(0, 0))
    got = cuda_grouped_mm(shims, a, b, sa, sb, offs)
    assert got.shape == (0, 48) and got.dtype == torch.bfloat16


def test_cuda_scaled_grouped_mm_refusals(shims):
    need_grouped(shims)
    a, b, sa, sb, offs = grouped_operands("2d3d")
    for args, kw, why in [
        ((a, b.contiguous(), sa, sb), dict(offs=offs), "mat2 row-major"),
        ((a[:, :40], b[:, :40], sa, sb), dict(offs=offs), "K not a multiple of 16"),
        ((a, b, sa, sb), dict(), "no offs for a 2d operand"),
        ((a, b, sa, sb), dict(offs=offs.long()), "int64 offs"),
        ((a, b, sa, sb), dict(offs=offs, out_dtype=torch.float32), "a float32 output"),
        ((a.float(), b, sa, sb), dict(offs=offs), "not float8"),
        ((a, b, sa.double(), sb), dict(offs=offs), "float64 scale"),
        ((a, b, sa[:10], sb), dict(offs=offs), "scale_a of the wrong length"),
        ((a, b, sa, sb), dict(offs=offs[:2]), "offs not one per group"),
    ]:
        with pytest.raises(ShimError):
            cuda_grouped_mm(shims, *args, **kw)
        with pytest.raises((RuntimeError, ValueError)):  # torch refuses it too
            torch._scaled_grouped_mm(*args, **kw)
    bias = torch.zeros(48, dtype=torch.bfloat16, device="cuda")
    with pytest.raises(ShimError):  # torch's op does not support a bias yet
        cuda_grouped_mm(shims, a, b, sa, sb, offs, bias=bias)
    with pytest.raises(ShimError):  # nor scale_result
        cuda_grouped_mm(shims, a, b, sa, sb, offs, scale_result=torch.tensor(1.0, device="cuda"))
    with pytest.raises(ShimError):  # an offset past self's rows
        cuda_grouped_mm(shims, a, b, sa, sb, torch.tensor([5, 5, 41], dtype=torch.int32, device="cuda"))
    with pytest.raises(ShimError):  # decreasing offsets
        cuda_grouped_mm(shims, a, b, sa, sb, torch.tensor([9, 5, 40], dtype=torch.int32, device="cuda"))
    with pytest.raises(ShimError):  # tensor-wise scales: aotirt has the row-wise kind only
        cuda_grouped_mm(shims, a, b, torch.tensor(0.5, device="cuda"), torch.tensor(2.0, device="cuda"), offs)
