"""The device-generic scaled dot-product attention entry points of
shim_deprecated.h (flash, flash_v2, efficient), which packages of older torch
versions import: on a device with its own op they forward to it; on the CPU
they run the CPU's fused attention and fill the other outputs as torch's
flash attention gives them. Compared with eager
torch.nn.functional.scaled_dot_product_attention on the same device.
"""
from __future__ import annotations

import ctypes
import math

import pytest
import torch
import torch.nn.functional as F

from shim_harness import ShimError, Shims, library_path, out_handles
from test_scan_ops import devices

pytestmark = pytest.mark.skipif(not library_path().exists(),
                                reason=f"{library_path()} not built (scripts/build.sh)")


def qkv(device, dtype=torch.float32, B=2, H=3, L=5, S=7, E=8, seed=0):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(B, H, n, E, generator=g).to(dtype).to(device) for n in (L, S, S)]


def tol(dtype):
    return dict(rtol=2e-2, atol=2e-2) if dtype in (torch.float16, torch.bfloat16) else dict(rtol=1e-4, atol=1e-5)


def drop(shims, handles):
    for h in handles:
        if h:
            shims.fn("aoti_torch_delete_tensor_object")(h)


def flash(shims, device, q, k, v, causal, v2=True, dropout=0.0, debug=False, scale=None):
    outs = out_handles(9)
    max_q, max_k = ctypes.c_int64(-1), ctypes.c_int64(-1)
    refs = [ctypes.byref(o) for o in outs]
    args = [shims.handle(q), shims.handle(k), shims.handle(v), ctypes.c_double(dropout)]
    if v2:
        args += [ctypes.c_int(int(causal)), ctypes.c_int(int(debug)),
                 None if scale is None else ctypes.byref(ctypes.c_double(scale))]
        name = "aoti_torch__scaled_dot_product_flash_attention_v2"
    else:
        args += [ctypes.c_bool(causal), ctypes.c_bool(debug), ctypes.c_double(scale)]
        name = "aoti_torch__scaled_dot_product_flash_attention"
    shims.call(name, *args, refs[0], refs[1], refs[2], refs[3], ctypes.byref(max_q), ctypes.byref(max_k),
               refs[6], refs[7], refs[8])
    out = shims.tensor(outs[0], device).to(device)
    drop(shims, outs[1:])
    return out, max_q.value, max_k.value


@pytest.mark.parametrize("device", devices())
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("causal", [False, True])
def test_flash_matches_eager(shims, device, dtype, causal):
    q, k, v = qkv(device, dtype, S=5 if causal else 7)
    want = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    got, max_q, max_k = flash(shims, device, q, k, v, causal)
    torch.testing.assert_close(got, want, **tol(dtype))
    assert (max_q, max_k) == (q.shape[2], k.shape[2])
    # The first entry point takes the scale by value.
    got, _, _ = flash(shims, device, q, k, v, causal, v2=False, scale=1 / math.sqrt(q.shape[-1]))
    torch.testing.assert_close(got, want, **tol(dtype))


@pytest.mark.parametrize("device", devices())
@pytest.mark.parametrize("with_bias", [False, True])
def test_efficient_matches_eager(shims, device, with_bias):
    q, k, v = qkv(device)
    bias = torch.randn(2, 3, 5, 7, generator=torch.Generator().manual_seed(1)).to(device) if with_bias else None
    want = F.scaled_dot_product_attention(q, k, v, attn_mask=bias, scale=0.3)
    outs = out_handles(4)
    shims.call("aoti_torch__scaled_dot_product_efficient_attention", shims.handle(q), shims.handle(k),
               shims.handle(v), shims.handle(bias) if with_bias else None, ctypes.c_int(1), ctypes.c_double(0.0),
               ctypes.c_int(0), ctypes.byref(ctypes.c_double(0.3)), *[ctypes.byref(o) for o in outs])
    got = shims.tensor(outs[0], device).to(device)
    drop(shims, outs[1:])
    torch.testing.assert_close(got, want, **tol(torch.float32))


def test_cpu_refuses_what_inference_does_not_do(shims):
    q, k, v = qkv("cpu")
    with pytest.raises(ShimError):
        flash(shims, "cpu", q, k, v, False, dropout=0.5)
    with pytest.raises(ShimError):
        flash(shims, "cpu", q, k, v, False, debug=True)
    with pytest.raises(ShimError):  # not [batch, heads, length, dim]
        flash(shims, "cpu", q[0], k[0], v[0], False)
    outs = out_handles(9)
    rc = shims.fn("aoti_torch__scaled_dot_product_flash_attention_v2")(
        None, None, None, ctypes.c_double(0), ctypes.c_int(0), ctypes.c_int(0), None,
        *[ctypes.byref(o) for o in outs[:4]], None, None, *[ctypes.byref(o) for o in outs[6:]])
    assert rc == 1  # null query
