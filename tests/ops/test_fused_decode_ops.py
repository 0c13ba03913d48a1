"""aotirt's own fused decode-step shims (shim/abi/aotirt_fused.h), against
their eager definitions in python/aotirt/_fused.py (the custom ops
export_llm(fuse_decode=True) puts into decode packages): float32, bfloat16
and float16, one and several rows, a bias, strided inputs, 0-size rows,
and the refusals. Not torch ops, so not in docs/ops.md's inventory."""
from __future__ import annotations

import ctypes
import sys
from pathlib import Path

import pytest
import torch

from shim_harness import ShimError, devices, library_path, out_handles, provided

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))
from aotirt import _fused  # noqa: E402  (registers the custom ops)

pytestmark = pytest.mark.skipif(not library_path().exists(),
                                reason=f"{library_path()} not built (scripts/build.sh)")

DTYPES = [torch.float32, torch.bfloat16, torch.float16]
TOL = {torch.float32: dict(rtol=1e-5, atol=1e-5), torch.bfloat16: dict(rtol=2e-2, atol=2e-2),
       torch.float16: dict(rtol=2e-3, atol=2e-3)}


def need(shims, device, op):
    name = f"aoti_torch_{device}_aotirt_{op}"
    if not provided(shims, name):
        pytest.skip(f"{name} is not provided on {device}")
    return name


def rand(shape, dtype, device, seed):
    g = torch.Generator().manual_seed(seed)
    return (torch.rand(shape, generator=g) * 2 - 1).to(dtype).to(device)


def call(shims, name, device, *args):
    (r,) = out_handles(1)
    shims.call(name, *args, ctypes.byref(r))
    return shims.tensor(r, device).to(device)


def check(got, want):
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape, want.dtype, want.shape)
    torch.testing.assert_close(got, want, **TOL[want.dtype])


ROWS = [(1, 1), (3,), (2, 3), (0,)]


@pytest.mark.parametrize("device", devices())
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("rows", ROWS, ids=str)
@pytest.mark.parametrize("bias", [False, True])
def test_rms_norm_linear(shims, device, dtype, rows, bias):
    name = need(shims, device, "rms_norm_linear")
    k, n = 64, 48
    x = rand((*rows, k), dtype, device, 0) * 3
    g = rand((k,), dtype, device, 1)
    w = rand((n, k), dtype, device, 2) / 8
    b = rand((n,), dtype, device, 3) if bias else None
    bh = ctypes.pointer(shims.handle(b)) if bias else None
    got = call(shims, name, device, shims.handle(x), shims.handle(g), ctypes.c_double(1e-5), shims.handle(w), bh)
    check(got, _fused.rms_norm_linear(x, g, 1e-5, w, b))


@pytest.mark.parametrize("device", devices())
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("rows", ROWS, ids=str)
def test_linear_add(shims, device, dtype, rows):
    name = need(shims, device, "linear_add")
    k, n = 48, 40
    x = rand((*rows, k), dtype, device, 0)
    w = rand((n, k), dtype, device, 1) / 4
    res = rand((*rows, n), dtype, device, 2)
    got = call(shims, name, device, shims.handle(x), shims.handle(w), shims.handle(res))
    check(got, _fused.linear_add(x, w, res))


@pytest.mark.parametrize("device", devices())
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("rows", ROWS, ids=str)
def test_rms_norm_linear_silu_mul(shims, device, dtype, rows):
    name = need(shims, device, "rms_norm_linear_silu_mul")
    k, n = 64, 80
    x = rand((*rows, k), dtype, device, 0) * 3
    g = rand((k,), dtype, device, 1)
    w = rand((n, k), dtype, device, 2) / 2
    got = call(shims, name, device, shims.handle(x), shims.handle(g), ctypes.c_double(1e-5), shims.handle(w))
    check(got, _fused.rms_norm_linear_silu_mul(x, g, 1e-5, w))


@pytest.mark.parametrize("device", devices())
@pytest.mark.parametrize("op", ["rms_norm_linear", "linear_add", "rms_norm_linear_silu_mul"])
def test_decode_sized_bfloat16(shims, device, op):
    """One bfloat16 row of a Llama-sized layer (on CUDA, the one-row kernel:
    a norm over 2048 elements, SiLU-multiply of 1000 gate and up pairs, a
    residual add after a product over 4096)."""
    name = need(shims, device, op)
    bf = torch.bfloat16
    if op == "rms_norm_linear":
        x, g = rand((1, 1, 2048), bf, device, 0) * 2, rand((2048,), bf, device, 1)
        w = rand((1000, 2048), bf, device, 2) / 16
        got = call(shims, name, device, shims.handle(x), shims.handle(g), ctypes.c_double(1e-5), shims.handle(w),
                   None)
        want = _fused.rms_norm_linear(x, g, 1e-5, w, None)
    elif op == "linear_add":
        x, w, res = rand((1, 1, 4096), bf, device, 0), rand((600, 4096), bf, device, 1) / 16, \
            rand((1, 1, 600), bf, device, 2)
        got = call(shims, name, device, shims.handle(x), shims.handle(w), shims.handle(res))
        want = _fused.linear_add(x, w, res)
    else:
        x, g = rand((1, 1, 2048), bf, device, 0) * 2, rand((2048,), bf, device, 1)
        w = rand((2000, 2048), bf, device, 2) / 8
        got = call(shims, name, device, shims.handle(x), shims.handle(g), ctypes.c_double(1e-5), shims.handle(w))
        want = _fused.rms_norm_linear_silu_mul(x, g, 1e-5, w)
    check(got, want)


@pytest.mark.parametrize("device", devices())
def test_strided_inputs(shims, device):
    """A transposed weight and a strided x read as torch reads them."""
    name = need(shims, device, "rms_norm_linear")
    dtype = torch.float32
    x = rand((2, 128), dtype, device, 0)[:, ::2]
    g = rand((64,), dtype, device, 1)
    w = rand((64, 48), dtype, device, 2).t()
    got = call(shims, name, device, shims.handle(x), shims.handle(g), ctypes.c_double(1e-6), shims.handle(w), None)
    check(got, _fused.rms_norm_linear(x, g, 1e-6, w, None))


@pytest.mark.parametrize("device", devices())
def test_refusals(shims, device):
    name = need(shims, device, "rms_norm_linear")
    add = need(shims, device, "linear_add")
    silu = need(shims, device, "rms_norm_linear_silu_mul")
    f = torch.float32
    x, g, w = rand((1, 8), f, device, 0), rand((8,), f, device, 1), rand((4, 8), f, device, 2)
    eps = ctypes.c_double(1e-5)
    (r,) = out_handles(1)
    cases = [
        (name, (shims.handle(x), shims.handle(g), eps, shims.handle(rand((4, 6), f, device, 3)), None),
         "last dimension"),
        (name, (shims.handle(x), shims.handle(rand((6,), f, device, 3)), eps, shims.handle(w), None), "norm_weight"),
        (name, (shims.handle(x), shims.handle(g), ctypes.c_double(-1.0), shims.handle(w), None), "eps"),
        (name, (shims.handle(x), shims.handle(g), eps, shims.handle(w),
                ctypes.pointer(shims.handle(rand((5,), f, device, 4)))), "bias"),
        (name, (shims.handle(x.double()), shims.handle(g.double()), eps, shims.handle(w.double()), None),
         "float64"),
        (name, (shims.handle(x), shims.handle(g.to(torch.bfloat16)), eps, shims.handle(w), None), "dtype"),
        (name, (None, shims.handle(g), eps, shims.handle(w), None), "null"),
        (add, (shims.handle(x), shims.handle(w), shims.handle(rand((2, 4), f, device, 5))), "residual"),
        (silu, (shims.handle(x), shims.handle(g), eps, shims.handle(rand((5, 8), f, device, 5))), "even number"),
    ]
    for fn, args, words in cases:
        with pytest.raises(ShimError, match=words):
            shims.call(fn, *args, ctypes.byref(r))
    with pytest.raises(ShimError, match="ret0"):
        shims.call(name, shims.handle(x), shims.handle(g), eps, shims.handle(w), None, None)


# aotirt_int4pack_mm_silu_mul: the int4 weight-only product in the device's
# packing (torch's own packing ops make it), then SiLU-multiply of its
# halves, against the op's eager definition; on CUDA also against aotirt's
# plain int4 product followed by torch's SiLU-multiply, which sums each
# output in the same order, so the pairing of gate and up rows must be
# right to the last bit but SiLU's float32 exp.
INT4_CPU_CASES = [(3, 128, 48, 32), (1, 256, 16, 128), (2, 64, 32, 64), (1, 2048, 256, 128), (0, 64, 16, 32)]
# (m, k, n, group, inner k tiles): one row (the decode step's), up to 8 (the
# pair kernel's last), 9 (the product and a SiLU-multiply kernel), tiles not
# a multiple of two (the same), several batches a warp, Llama's gate/up.
INT4_CUDA_CASES = [(1, 256, 64, 32, 8), (3, 512, 48, 64, 4), (8, 512, 32, 128, 8), (9, 512, 32, 128, 8),
                   (1, 256, 24, 32, 2), (2, 4096, 32, 64, 8), (1, 2048, 16384, 128, 8), (5, 1024, 80, 256, 8),
                   (0, 128, 16, 32, 2)]


def _int4_weights(device, k, n, group, ikt, dtype, seed=0):
    g = torch.Generator().manual_seed(seed)
    w = torch.randint(0, 16, (n, k), generator=g, dtype=torch.int32)
    sz = torch.stack([torch.rand(k // group, n, generator=g) * 0.02 + 0.01,
                      torch.randn(k // group, n, generator=g) * 0.01], dim=-1).to(dtype).to(device)
    if device == "cpu":
        return torch.ops.aten._convert_weight_to_int4pack_for_cpu(w, 1), sz
    w_u8 = (w[:, ::2] << 4 | w[:, 1::2]).to(torch.uint8).to(device)
    return torch.ops.aten._convert_weight_to_int4pack(w_u8, ikt), sz


@pytest.mark.parametrize("device", ["cpu"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("case", INT4_CPU_CASES, ids=str)
def test_int4pack_mm_silu_mul_cpu(shims, device, dtype, case):
    name = need(shims, device, "int4pack_mm_silu_mul")
    m, k, n, group = case
    packed, sz = _int4_weights(device, k, n, group, 0, dtype)
    x = rand((m, k), dtype, device, 1) * 4
    got = call(shims, name, device, shims.handle(x), shims.handle(packed), ctypes.c_int64(group), shims.handle(sz))
    assert got.shape == (m, n // 2) and got.dtype == dtype
    if m:
        # float32 sums over k of up to 2048 in another order than torch's.
        want = _fused.int4pack_mm_silu_mul(x, packed, group, sz)
        torch.testing.assert_close(got, want, **(dict(rtol=1e-4, atol=1e-4) if dtype == torch.float32 else TOL[dtype]))


@pytest.mark.parametrize("device", [d for d in devices() if d == "cuda"])
@pytest.mark.parametrize("case", INT4_CUDA_CASES, ids=str)
def test_int4pack_mm_silu_mul_cuda(shims, device, case):
    name = need(shims, device, "int4pack_mm_silu_mul")
    plain = f"aoti_torch_{device}__weight_int4pack_mm"
    m, k, n, group, ikt = case
    packed, sz = _int4_weights(device, k, n, group, ikt, torch.bfloat16)
    x = rand((m, k), torch.bfloat16, device, 1) * 4
    args = (shims.handle(x), shims.handle(packed), ctypes.c_int64(group), shims.handle(sz))
    got = call(shims, name, device, *args)
    assert got.shape == (m, n // 2) and got.dtype == torch.bfloat16
    if not m:
        return
    check(got, _fused.int4pack_mm_silu_mul(x, packed, group, sz))
    gate, up = call(shims, plain, device, *args).chunk(2, dim=-1)
    torch.testing.assert_close(got, torch.nn.functional.silu(gate) * up, rtol=2 ** -7, atol=1e-6)


@pytest.mark.parametrize("device", devices())
def test_int4pack_mm_silu_mul_refusals(shims, device):
    name = need(shims, device, "int4pack_mm_silu_mul")
    k, n = 128, 32
    packed, sz = _int4_weights(device, k, n, 32, 2, torch.bfloat16)
    x = rand((2, k), torch.bfloat16, device, 1)
    cases = [((x, packed, 48, sz), "qGroupSize"),  # a group size the op does not take
             ((rand((2, 96), torch.bfloat16, device, 2), packed, 32, sz), "K"),  # x's K is not the weights'
             ((x, packed, 32, sz[:, :16]), "qScaleAndZeros"),  # scales for other rows
             ((None, packed, 32, sz), "null")]
    if device != "cpu":
        cases.append(((x.float(), packed, 32, sz), "bfloat16"))  # torch's CUDA op takes bfloat16 alone
    (r,) = out_handles(1)
    for (a, w, group, s), words in cases:
        with pytest.raises(ShimError, match=words) as e:
            shims.call(name, shims.handle(a) if a is not None else None, shims.handle(w), ctypes.c_int64(group),
                       shims.handle(s), ctypes.byref(r))
        assert "aotirt_int4pack_mm_silu_mul" in str(e.value) or words == "null", str(e.value)
    with pytest.raises(ShimError, match="ret0"):
        shims.call(name, shims.handle(x), shims.handle(packed), ctypes.c_int64(32), shims.handle(sz), None)
