"""Conformance of the fused recurrent cells with eager PyTorch on the GPU:
_thnn_fused_lstm_cell (hy, cy and the workspace of activated gates), which
torch has for CUDA only. Every floating dtype, with and without biases,
contiguous and strided operands, 0-size ones, sizes past one block and
past the grid (the kernel strides), and the argument errors torch raises.
"""
from __future__ import annotations

import ctypes

import pytest
import torch

from shim_harness import ShimError, devices, library_path, out_handles, provided

pytestmark = pytest.mark.skipif(not library_path().exists(),
                                reason=f"{library_path()} not built (scripts/build.sh)")

LSTM = "aoti_torch_cuda__thnn_fused_lstm_cell"
FLOATS = [torch.float32, torch.float64, torch.bfloat16, torch.float16]


def need_cuda(shims):
    if "cuda" not in devices():
        pytest.skip("no GPU")
    if not provided(shims, LSTM):
        pytest.skip(f"{LSTM} is not provided yet")


def rand(shape, dtype, seed, strided=False):
    """Values in [-2, 2) on the GPU; |strided| gives the same shape as a
    transposed 2-D view, or every other element of a 1-D one."""
    g = torch.Generator().manual_seed(seed)
    if strided and len(shape) == 2:
        t = torch.rand(shape[1], shape[0], generator=g).t()
    elif strided:
        t = torch.rand(2 * shape[0], generator=g)[::2]
    else:
        t = torch.rand(shape, generator=g)
    return (t * 4 - 2).to(dtype).cuda()


def lstm_cell(shims, ig, hg, cx, bi=None, bh=None):
    hy, cy, ws = out_handles(3)
    shims.call(LSTM, shims.handle(ig), shims.handle(hg), shims.handle(cx),
               ctypes.byref(shims.handle(bi)) if bi is not None else None,
               ctypes.byref(shims.handle(bh)) if bh is not None else None,
               ctypes.byref(hy), ctypes.byref(cy), ctypes.byref(ws))
    return shims.tensor(hy, "cuda"), shims.tensor(cy, "cuda"), shims.tensor(ws, "cuda")


def tol(dtype):
    return {torch.float32: dict(rtol=1e-5, atol=1e-5), torch.float64: dict(rtol=1e-10, atol=1e-10),
            torch.bfloat16: dict(rtol=2e-2, atol=2e-2), torch.float16: dict(rtol=2e-3, atol=2e-3)}[dtype]


def check(got, want):
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        if g.numel() > 1:
            assert g.stride() == w.stride(), f"strides {g.stride()}, torch gives {w.stride()}"
        torch.testing.assert_close(g, w, **tol(w.dtype))


def operands(batch, hidden, dtype, bias, strided, seed=0):
    ig = rand((batch, 4 * hidden), dtype, seed, strided)
    hg = rand((batch, 4 * hidden), dtype, seed + 1)
    cx = rand((batch, hidden), dtype, seed + 2, strided)
    bi = rand((4 * hidden,), dtype, seed + 3, strided) if bias else None
    bh = rand((4 * hidden,), dtype, seed + 4) if bias else None
    return ig, hg, cx, bi, bh


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(3, 5), (1, 1), (64, 300), (513, 256), (0, 4), (4, 0)])
@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("strided", [False, True])
def test_fused_lstm_cell(shims, dtype, shape, bias, strided):
    need_cuda(shims)
    args = operands(*shape, dtype, bias, strided)
    got = lstm_cell(shims, *args)
    if 0 in shape:  # torch's kernel launch may refuse an empty grid; the results' layout is still defined
        ig, cx = args[0], args[2]
        for t, like in zip(got, (cx, cx, ig)):
            assert t.dtype == dtype and t.shape == like.shape and t.is_contiguous()
        return
    check(got, torch.ops.aten._thnn_fused_lstm_cell(*args))


def test_fused_lstm_cell_past_the_grid(shims):
    """More elements than the kernel's grid has threads: it strides."""
    need_cuda(shims)
    args = operands(4100, 4100, torch.bfloat16, True, False)
    check(lstm_cell(shims, *args), torch.ops.aten._thnn_fused_lstm_cell(*args))


def test_fused_lstm_cell_errors(shims):
    need_cuda(shims)
    ig, hg, cx, bi, bh = operands(3, 5, torch.float32, True, False)
    for args, why in [
        ((ig[0], hg[0], cx, bi, bh), "1-D gates"),
        ((ig, hg[:, :16], cx, bi, bh), "hidden_gates of another size"),
        ((ig, hg, cx[:, :4], bi, bh), "cx of the wrong size"),
        ((ig, hg, cx, bi[:16], bh[:16]), "biases of the wrong size"),
        ((ig, hg, cx.double(), bi, bh), "cx of another dtype"),
        ((ig, hg.double(), cx, bi, bh), "hidden_gates of another dtype"),
    ]:
        with pytest.raises(ShimError):
            lstm_cell(shims, *args)
        with pytest.raises(RuntimeError):  # torch refuses it too
            torch.ops.aten._thnn_fused_lstm_cell(*args)
    with pytest.raises(ShimError):  # an input_bias needs its hidden_bias
        lstm_cell(shims, ig, hg, cx, bi, None)
    with pytest.raises(ShimError):  # torch ignores a hidden_bias alone; aotirt refuses it
        lstm_cell(shims, ig, hg, cx, None, bh)
    with pytest.raises(ShimError):  # integer gates
        lstm_cell(shims, ig.int(), hg.int(), cx.int())
    with pytest.raises(ShimError):  # a CPU operand
        lstm_cell(shims, ig, hg, cx.cpu(), bi, bh)
