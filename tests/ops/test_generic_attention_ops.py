"""The device-generic scaled dot-product attention entry points of
shim_deprecated.h (flash, flash_v2, efficient), which packages of older torch
versions import: on a device with its own op they forward to it; on the CPU
they run the CPU's fused attention and fill the other outputs as torch's
flash attention gives them. Compared with eager
torch.nn.functional.scaled_dot_product_attention on the same device.

Then, on CUDA, torch's flash and memory-efficient attention forwards over
[batch, seq, heads, dim] tensors (aoti_torch_cuda__flash_attention_forward,
also with packed variable-length sequences, and
aoti_torch_cuda__efficient_attention_forward), compared with torch's own ops:
values, logsumexp, output layouts, causal masks from either corner, and the
arguments aotirt refuses.
"""
from __future__ import annotations

import ctypes
import itertools
import math

import pytest
import torch
import torch.nn.functional as F

from shim_harness import ShimError, Shims, library_path, out_handles, provided
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


# ---------------------------------------------------------------------------
# CUDA: torch's flash and memory-efficient attention forwards
# (aten._flash_attention_forward, aten._efficient_attention_forward), whose
# tensors are [batch, seq, heads, dim], compared with torch's own op on CUDA.

CUDA = torch.cuda.is_available()
FLASH = "aoti_torch_cuda__flash_attention_forward"
EFFICIENT = "aoti_torch_cuda__efficient_attention_forward"


def need(shims, name):
    if not CUDA:
        pytest.skip("no CUDA device")
    if not provided(shims, name):
        pytest.skip(f"{name} not provided")


def opt_handle(shims, t):
    """An AtenTensorHandle* argument: null for None."""
    return None if t is None else ctypes.byref(shims.handle(t))


def opt_int64(value):
    return None if value is None else ctypes.byref(ctypes.c_int64(value))


def opt_double(value):
    return None if value is None else ctypes.byref(ctypes.c_double(value))


def bshe(B, L, H, E, dtype, seed, transposed=False):
    """A [B, L, H, E] CUDA tensor; |transposed|: the view of a [B, H, L, E]
    one, as SDPA-shaped code produces it."""
    g = torch.Generator().manual_seed(seed)
    if transposed:
        return torch.randn(B, H, L, E, generator=g).to(dtype).cuda().transpose(1, 2)
    return torch.randn(B, L, H, E, generator=g).to(dtype).cuda()


def flash_fwd(shims, q, k, v, causal, cum_q=None, cum_k=None, max_q=None, max_k=None, dropout=0.0, debug=False,
              scale=None, window_left=None, window_right=None, seqused_k=None, alibi=None):
    outs = out_handles(5)
    max_q = q.shape[1] if max_q is None else max_q
    max_k = k.shape[1] if max_k is None else max_k
    shims.call(FLASH, shims.handle(q), shims.handle(k), shims.handle(v), opt_handle(shims, cum_q),
               opt_handle(shims, cum_k), ctypes.c_int64(max_q), ctypes.c_int64(max_k), ctypes.c_double(dropout),
               ctypes.c_int32(int(causal)), ctypes.c_int32(int(debug)), opt_double(scale), opt_int64(window_left),
               opt_int64(window_right), opt_handle(shims, seqused_k), opt_handle(shims, alibi),
               *[ctypes.byref(o) for o in outs])
    out = shims.tensor(outs[0], "cuda")
    lse = shims.tensor(outs[1], "cuda")
    debug_mask = shims.tensor(outs[4], "cuda")
    drop(shims, outs[2:4])  # rng_state, unused: uint64
    return out, lse, debug_mask


def flash_eager(q, k, v, causal, cum_q=None, cum_k=None, max_q=None, max_k=None, scale=None):
    max_q = q.shape[1] if max_q is None else max_q
    max_k = k.shape[1] if max_k is None else max_k
    r = torch.ops.aten._flash_attention_forward(q, k, v, cum_q, cum_k, max_q, max_k, 0.0, causal, False, scale=scale)
    return r[0], r[1]


LSE_TOL = dict(rtol=1e-3, atol=1e-3)


def assert_same_layout(got, want):
    """Equal strides wherever the size is not 1 (a size-1 dim's stride is
    free)."""
    assert got.shape == want.shape
    assert [st for n, st in zip(got.shape, got.stride()) if n != 1] == \
        [st for n, st in zip(want.shape, want.stride()) if n != 1]

# (B, Lq, Lk, H, Hk, E, transposed): square and not (the causal diagonal
# from the bottom-right), grouped heads, a decode step, one query, head dims
# the tensor-core kernel takes (64, 128) and others, lengths that are not
# multiples of the kernels' tiles, the view of a [B, H, L, E] tensor.
FLASH_SHAPES = [
    (2, 37, 37, 4, 4, 64, False),
    (2, 37, 100, 8, 2, 128, True),
    (1, 3, 300, 4, 4, 128, False),
    (3, 1, 77, 6, 3, 64, True),
    (2, 130, 130, 2, 2, 40, False),
    (2, 20, 50, 2, 1, 72, True),
    (1, 200, 1000, 2, 2, 64, False),
    (1, 5, 600, 2, 2, 96, False),  # the general kernel with the keys split across blocks
]


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("shape", FLASH_SHAPES, ids=lambda s: "x".join(map(str, s[:6])) + ("-T" if s[6] else ""))
def test_cuda_flash_forward_matches_torch(shims, dtype, causal, shape):
    need(shims, FLASH)
    B, Lq, Lk, H, Hk, E, transposed = shape
    q = bshe(B, Lq, H, E, dtype, 0, transposed)
    k = bshe(B, Lk, Hk, E, dtype, 1, transposed)
    v = bshe(B, Lk, Hk, E, dtype, 2, transposed)
    want, want_lse = flash_eager(q, k, v, causal)
    got, lse, debug_mask = flash_fwd(shims, q, k, v, causal)
    torch.testing.assert_close(got, want, **tol(dtype))
    assert_same_layout(got, want)
    torch.testing.assert_close(lse, want_lse, **LSE_TOL)
    assert debug_mask.shape == (0,) and debug_mask.dtype == dtype
    # An explicit scale, and windows no shorter than the keys (none).
    want, _ = flash_eager(q, k, v, causal, scale=0.3)
    got, _, _ = flash_fwd(shims, q, k, v, causal, scale=0.3, window_left=Lk, window_right=-1)
    torch.testing.assert_close(got, want, **tol(dtype))


def test_cuda_flash_forward_head_dim_not_multiple_of_8(shims):
    # torch's op refuses such heads (its SDPA entry pads them first); so does aotirt.
    need(shims, FLASH)
    q, k, v = (bshe(2, 33, 3, 20, torch.float16, s) for s in range(3))
    with pytest.raises(RuntimeError, match="multiple of 8"):
        flash_eager(q, k, v, True)
    with pytest.raises(ShimError, match="multiple of 8"):
        flash_fwd(shims, q, k, v, True)


def test_cuda_flash_forward_causal_window_right_zero(shims):
    # window_size_right=0 without a left window is the causal mask.
    need(shims, FLASH)
    q, k, v = bshe(1, 40, 2, 64, torch.bfloat16, 0), bshe(1, 90, 2, 64, torch.bfloat16, 1), \
        bshe(1, 90, 2, 64, torch.bfloat16, 2)
    want, _ = flash_eager(q, k, v, True)
    got, _, _ = flash_fwd(shims, q, k, v, False, window_left=-1, window_right=0)
    torch.testing.assert_close(got, want, **tol(torch.bfloat16))


@pytest.mark.parametrize("B,Lq,Lk", [(0, 5, 7), (2, 0, 7)])
def test_cuda_flash_forward_empty(shims, B, Lq, Lk):
    need(shims, FLASH)
    q = bshe(B, Lq, 2, 64, torch.float16, 0)
    k, v = bshe(B, Lk, 2, 64, torch.float16, 1), bshe(B, Lk, 2, 64, torch.float16, 2)
    got, lse, _ = flash_fwd(shims, q, k, v, True)
    assert got.shape == q.shape and lse.shape == (B, 2, Lq) and lse.dtype == torch.float32


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("causal", [False, True])
def test_cuda_flash_forward_packed_matches_torch(shims, dtype, causal):
    """Variable-length sequences packed as [total, heads, dim] with int32
    offsets (one sequence with no queries)."""
    need(shims, FLASH)
    lens_q, lens_k = [5, 0, 17, 33, 1], [9, 3, 17, 160, 40]
    H, Hk, E = 4, 2, 64
    cum_q = torch.tensor([0, *itertools.accumulate(lens_q)], dtype=torch.int32).cuda()
    cum_k = torch.tensor([0, *itertools.accumulate(lens_k)], dtype=torch.int32).cuda()
    g = torch.Generator().manual_seed(3)
    q = torch.randn(sum(lens_q), H, E, generator=g).to(dtype).cuda()
    k = torch.randn(sum(lens_k), Hk, E, generator=g).to(dtype).cuda()
    v = torch.randn(sum(lens_k), Hk, E, generator=g).to(dtype).cuda()
    want, want_lse = flash_eager(q, k, v, causal, cum_q, cum_k, max(lens_q), max(lens_k))
    got, lse, _ = flash_fwd(shims, q, k, v, causal, cum_q, cum_k, max(lens_q), max(lens_k))
    torch.testing.assert_close(got, want, **tol(dtype))
    assert lse.shape == want_lse.shape == (H, sum(lens_q))
    torch.testing.assert_close(lse, want_lse, **LSE_TOL)


def test_cuda_flash_forward_refuses(shims):
    need(shims, FLASH)
    f16 = torch.float16
    q, k, v = bshe(1, 8, 2, 64, f16, 0), bshe(1, 8, 2, 64, f16, 1), bshe(1, 8, 2, 64, f16, 2)
    errors = [
        dict(dropout=0.5),  # inference only
        dict(debug=True),  # torch: the softmax comes back only with dropout
        dict(window_left=3),  # sliding windows
        dict(window_right=2),
        dict(alibi=torch.ones(2, device="cuda")),
        dict(seqused_k=torch.ones(1, dtype=torch.int32, device="cuda")),
        dict(cum_q=torch.tensor([0, 8], dtype=torch.int32, device="cuda")),  # without cum_seq_k
    ]
    for kw in errors:
        with pytest.raises(ShimError):
            flash_fwd(shims, q, k, v, False, **kw)
    for bad in [
        (q.float(), k.float(), v.float()),  # torch's flash takes float16 and bfloat16
        (q, k.bfloat16(), v),  # mixed dtypes
        (q[..., ::2], k[..., ::2], v[..., ::2]),  # features not contiguous
        (q, k, bshe(1, 8, 2, 32, f16, 2)),  # value's head dim differs
        (bshe(1, 8, 3, 64, f16, 0), k, v),  # 3 query heads over 2 KV heads
        (q[0], k[0], v[0]),  # 3-d without offsets
    ]:
        with pytest.raises(ShimError):
            flash_fwd(shims, *bad, False)
    # Causal with more queries than keys: the first queries see no key.
    with pytest.raises(ShimError):
        flash_fwd(shims, bshe(1, 9, 2, 64, f16, 0), bshe(1, 4, 2, 64, f16, 1), bshe(1, 4, 2, 64, f16, 2), True)
    outs = out_handles(5)
    assert shims.fn(FLASH)(None, shims.handle(k), shims.handle(v), None, None, ctypes.c_int64(8), ctypes.c_int64(8),
                           ctypes.c_double(0), ctypes.c_int32(0), ctypes.c_int32(0), None, None, None, None, None,
                           *[ctypes.byref(o) for o in outs]) == 1  # null query


def efficient_fwd(shims, q, k, v, bias=None, mask_type=0, compute_lse=True, scale=None, dropout=0.0,
                  cu_q=None, cu_k=None, seqlen_k=None, window=None):
    outs = out_handles(4)
    max_q, max_k = ctypes.c_int64(-1), ctypes.c_int64(-1)
    shims.call(EFFICIENT, shims.handle(q), shims.handle(k), shims.handle(v), opt_handle(shims, bias),
               opt_handle(shims, cu_q), opt_handle(shims, cu_k), None, None, ctypes.c_double(dropout),
               ctypes.c_int64(mask_type), ctypes.c_int32(int(compute_lse)), opt_double(scale),
               opt_handle(shims, seqlen_k), opt_int64(window), *[ctypes.byref(o) for o in outs],
               ctypes.byref(max_q), ctypes.byref(max_k))
    out = shims.tensor(outs[0], "cuda")
    lse = shims.tensor(outs[1], "cuda")
    seed = shims.tensor(outs[2], "cpu")
    offset = shims.tensor(outs[3], "cpu")
    return out, lse, seed, offset, max_q.value, max_k.value


def efficient_eager(q, k, v, bias=None, mask_type=0, compute_lse=True, scale=None):
    return torch.ops.aten._efficient_attention_forward(q, k, v, bias, None, None, None, None, 0.0, mask_type,
                                                       compute_lse, scale=scale)


# (B, L, S, H, E, Ev, transposed)
EFFICIENT_SHAPES = [
    (2, 37, 100, 4, 64, 64, False),
    (2, 50, 20, 3, 64, 32, True),
    (1, 3, 300, 4, 128, 128, False),
    (2, 130, 130, 2, 40, 40, False),
    (3, 1, 45, 2, 16, 24, True),
    (1, 24, 70, 2, 32, 32, False),  # float32: two GEMMs around the softmax kernel
]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("mask_type", [0, 1, 2])
@pytest.mark.parametrize("shape", EFFICIENT_SHAPES, ids=lambda s: "x".join(map(str, s[:6])) + ("-T" if s[6] else ""))
def test_cuda_efficient_forward_matches_torch(shims, dtype, mask_type, shape):
    need(shims, EFFICIENT)
    B, L, S, H, E, Ev, transposed = shape
    if mask_type == 2 and L > S:
        pytest.skip("the bottom-right diagonal leaves the first queries without keys (not supported)")
    q, k = bshe(B, L, H, E, dtype, 0, transposed), bshe(B, S, H, E, dtype, 1, transposed)
    v = bshe(B, S, H, Ev, dtype, 2, transposed)
    want = efficient_eager(q, k, v, mask_type=mask_type)
    got, lse, seed, offset, max_q, max_k = efficient_fwd(shims, q, k, v, mask_type=mask_type)
    torch.testing.assert_close(got, want[0], **tol(dtype))
    assert_same_layout(got, want[0])
    assert lse.shape == want[1].shape
    torch.testing.assert_close(lse, want[1], **LSE_TOL)  # the +inf padding too
    assert seed.dtype == offset.dtype == torch.int64 and seed.dim() == offset.dim() == 0
    assert (max_q, max_k) == (want[4], want[5]) == (L, S)
    got, lse, *_ = efficient_fwd(shims, q, k, v, mask_type=mask_type, compute_lse=False, scale=0.2)
    torch.testing.assert_close(got, efficient_eager(q, k, v, mask_type=mask_type, scale=0.2)[0], **tol(dtype))
    assert lse.shape == (B, H, 0)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("kind", ["full", "heads", "rows"])
def test_cuda_efficient_forward_bias(shims, dtype, kind):
    """An additive [B, H, L, S] bias, full or expanded from [B, 1, L, S] or
    [L, S]; a query it masks out entirely gives zeros and logsumexp 0.
    (torch wants the bias's row stride a multiple of 8 elements.)"""
    need(shims, EFFICIENT)
    B, L, S, H, E = 2, 37, 72, 3, 64
    q, k, v = bshe(B, L, H, E, dtype, 0), bshe(B, S, H, E, dtype, 1), bshe(B, S, H, E, dtype, 2)
    shape = {"full": (B, H, L, S), "heads": (B, 1, L, S), "rows": (L, S)}[kind]
    bias = torch.randn(*shape, generator=torch.Generator().manual_seed(5)).to(dtype).cuda()
    bias[..., 4, :] = float("-inf")
    bias = bias.expand(B, H, L, S)
    for mask_type in (0, 1, 2):
        want = efficient_eager(q, k, v, bias, mask_type=mask_type)
        got, lse, *_ = efficient_fwd(shims, q, k, v, bias, mask_type=mask_type)
        torch.testing.assert_close(got, want[0], **tol(dtype))
        torch.testing.assert_close(lse, want[1], **LSE_TOL)


def test_cuda_efficient_forward_empty(shims):
    need(shims, EFFICIENT)
    q, k, v = bshe(2, 0, 3, 64, torch.float16, 0), bshe(2, 5, 3, 64, torch.float16, 1), \
        bshe(2, 5, 3, 64, torch.float16, 2)
    got, lse, _, _, max_q, max_k = efficient_fwd(shims, q, k, v, mask_type=1)
    assert got.shape == (2, 0, 3, 64) and lse.shape == (2, 3, 0) and (max_q, max_k) == (0, 5)


def test_cuda_efficient_forward_refuses(shims):
    need(shims, EFFICIENT)
    q, k, v = bshe(1, 8, 2, 64, torch.float16, 0), bshe(1, 8, 2, 64, torch.float16, 1), \
        bshe(1, 8, 2, 64, torch.float16, 2)
    cu = torch.tensor([0, 8], dtype=torch.int32, device="cuda")
    for kw in [dict(dropout=0.1), dict(mask_type=3), dict(window=4), dict(cu_q=cu, cu_k=cu),
               dict(seqlen_k=torch.tensor([8], dtype=torch.int32, device="cuda")),
               dict(bias=torch.zeros(1, 2, 8, 8, dtype=torch.float32, device="cuda")),  # dtype != query's
               dict(bias=torch.zeros(8, 8, dtype=torch.float16, device="cuda"))]:  # torch: 4-d only
        with pytest.raises(ShimError):
            efficient_fwd(shims, q, k, v, **kw)
    for bad in [(q, bshe(1, 8, 1, 64, torch.float16, 1), bshe(1, 8, 1, 64, torch.float16, 2)),  # heads differ
                (q[..., ::2], k[..., ::2], v[..., ::2]),  # features not contiguous
                (q.double(), k.double(), v.double())]:
        with pytest.raises(ShimError):
            efficient_fwd(shims, *bad)
    with pytest.raises(ShimError):  # bottom-right causal with more queries than keys
        efficient_fwd(shims, bshe(1, 9, 2, 64, torch.float16, 0), k[:, :4], v[:, :4], mask_type=2)
