"""Conformance of _scaled_mm (the float8 matrix product with per-tensor
scales): the CPU op, its out= variant and the device-generic _scaled_mm and
_scaled_mm_v2 entry points, against eager torch._scaled_mm on the CPU. Every
output dtype torch's CPU op gives, float8_e4m3fn and float8_e5m2 operands,
a bias, and mat2 in either memory order.
"""
from __future__ import annotations

import ctypes

import pytest
import torch

from shim_harness import DTYPE_CODES, ShimError, Shims, int32_ptr, library_path, out_handles

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
