"""Conformance of aten::_cudnn_rnn's inference forward (aoti_torch_cuda__cudnn_rnn)
with eager PyTorch's on the same GPU: torch nn.LSTM / nn.GRU / nn.RNN modules
in eval mode give the parameters, and torch._cudnn_rnn runs them as the
modules do. Covered: every mode, 1 and 2 layers, bidirectional, batch_first,
LSTM projections, with and without biases, hx/cx given or not, the flat
weight_buf torch makes or only the parameter list, non-contiguous inputs,
packed sequences, sizes past one thread block, 0-size batches, float32,
float64, float16 (bfloat16 wherever cuDNN takes it), and the errors.
CUDA only: torch has no CPU kernel for _cudnn_rnn.
"""
from __future__ import annotations

import ctypes
import warnings

import pytest
import torch

from shim_harness import ShimError, Handle, library_path, out_handles, provided

pytestmark = [
    pytest.mark.skipif(not library_path().exists(), reason=f"{library_path()} not built (scripts/build.sh)"),
    pytest.mark.skipif(not torch.cuda.is_available(), reason="_cudnn_rnn runs on CUDA only"),
]

NAME = "aoti_torch_cuda__cudnn_rnn"
MODES = {"RNN_RELU": 0, "RNN_TANH": 1, "LSTM": 2, "GRU": 3}
TOL = {torch.float32: (5e-3, 5e-3), torch.float64: (1e-9, 1e-9), torch.float16: (2e-2, 2e-2),
       torch.bfloat16: (5e-2, 5e-2)}


def need(shims):
    if not provided(shims, NAME):
        pytest.skip(f"{NAME} is not provided yet")


def module(kind, inp, hidden, layers=1, bidirectional=False, batch_first=False, proj=0, bias=True,
           dtype=torch.float32, seed=0):
    torch.manual_seed(seed)
    kw = dict(num_layers=layers, bidirectional=bidirectional, batch_first=batch_first, bias=bias)
    if kind == "LSTM":
        m = torch.nn.LSTM(inp, hidden, proj_size=proj, **kw)
    elif kind == "GRU":
        m = torch.nn.GRU(inp, hidden, **kw)
    else:
        m = torch.nn.RNN(inp, hidden, nonlinearity="relu" if kind == "RNN_RELU" else "tanh", **kw)
    # .to flattens the parameters into one cuDNN buffer where cuDNN takes the dtype.
    return m.to(device="cuda", dtype=dtype).eval()


def flat_buffer(m):
    """The flat weight buffer torch's module passes as weight_buf, or None
    when its parameters were not flattened."""
    ws = m._flat_weights
    storage = ws[0].untyped_storage()
    if any(w.untyped_storage().data_ptr() != storage.data_ptr() for w in ws):
        return None
    n = storage.nbytes() // ws[0].element_size()
    return torch.empty(0, dtype=ws[0].dtype, device=ws[0].device).set_(storage, 0, (n,))


def stride0(m):
    return len(m._flat_weights) // (m.num_layers * (2 if m.bidirectional else 1))


def eager(m, kind, x, hx, cx, weights, weight_buf, batch_sizes=()):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch warns when there is no weight_buf
        return torch._cudnn_rnn(x, weights, len(weights) // (m.num_layers * (2 if m.bidirectional else 1)),
                                weight_buf, hx, cx, MODES[kind], m.hidden_size, m.proj_size if kind == "LSTM" else 0,
                                m.num_layers, m.batch_first, 0.0, False, m.bidirectional, list(batch_sizes), None)


def run(shims, m, kind, x, hx, cx, weights, weight_buf, batch_sizes=(), train=False, mode=None, s0=None,
        proj=None, dropout_state=None):
    arr = (Handle * max(len(weights), 1))(*[shims.handle(w) for w in weights])
    wb = Handle() if weight_buf is None else shims.handle(weight_buf)
    cxh = None if cx is None else shims.handle(cx)
    ds = None if dropout_state is None else shims.handle(dropout_state)
    bs = (ctypes.c_int64 * max(len(batch_sizes), 1))(*batch_sizes)
    outs = out_handles(5)
    dirs = 2 if m.bidirectional else 1
    shims.call(NAME, shims.handle(x), arr, ctypes.c_int64(len(weights)),
               ctypes.c_int64(s0 if s0 is not None else len(weights) // (m.num_layers * dirs)),
               None if weight_buf is None else ctypes.byref(wb), shims.handle(hx),
               None if cx is None else ctypes.byref(cxh),
               ctypes.c_int64(MODES[kind] if mode is None else mode), ctypes.c_int64(m.hidden_size),
               ctypes.c_int64((m.proj_size if kind == "LSTM" else 0) if proj is None else proj),
               ctypes.c_int64(m.num_layers), ctypes.c_int32(int(m.batch_first)), ctypes.c_double(0.0),
               ctypes.c_int32(int(train)), ctypes.c_int32(int(m.bidirectional)), bs,
               ctypes.c_int64(len(batch_sizes)), None if ds is None else ctypes.byref(ds),
               *[ctypes.byref(o) for o in outs])
    return [shims.tensor(o, "cuda") for o in outs]


def states(m, kind, batch, dtype, seed=1):
    g = torch.Generator().manual_seed(seed)
    dirs = 2 if m.bidirectional else 1
    out = m.proj_size if kind == "LSTM" and m.proj_size else m.hidden_size
    hx = torch.randn(m.num_layers * dirs, batch, out, generator=g).to(device="cuda", dtype=dtype)
    cx = torch.randn(m.num_layers * dirs, batch, m.hidden_size, generator=g).to(device="cuda", dtype=dtype)
    return hx, (cx if kind == "LSTM" else None)


def check(got, want, dtype):
    names = ["output", "hy", "cy", "reserve", "weight_buf"]
    rtol, atol = TOL[dtype]
    for name, g, w in zip(names, got, want):
        assert g.dtype == w.dtype, f"{name}: dtype {g.dtype}, torch gives {w.dtype}"
        assert g.shape == w.shape, f"{name}: shape {tuple(g.shape)}, torch gives {tuple(w.shape)}"
        if name == "reserve":
            continue
        if g.numel():
            assert g.stride() == w.stride(), f"{name}: strides {g.stride()}, torch gives {w.stride()}"
        if name == "weight_buf":
            torch.testing.assert_close(g, w, rtol=0, atol=0)
        else:
            torch.testing.assert_close(g, w, rtol=rtol, atol=atol, msg=lambda s: f"{name}: {s}")


def compare(shims, kind, inp=12, hidden=16, seq=5, batch=3, layers=1, bidirectional=False, batch_first=False,
            proj=0, bias=True, dtype=torch.float32, with_hx=True, with_cx=True, flat=True, layout="contig"):
    need(shims)
    m = module(kind, inp, hidden, layers, bidirectional, batch_first, proj, bias, dtype)
    g = torch.Generator().manual_seed(7)
    shape = (batch, seq, inp) if batch_first else (seq, batch, inp)
    x = torch.randn(shape, generator=g).to(device="cuda", dtype=dtype)
    if layout == "T":  # same shape, the first two dims swapped in memory
        x = x.transpose(0, 1).contiguous().transpose(0, 1)
    elif layout == "step":  # every other element of the feature dim
        x = torch.randn(shape[0], shape[1], 2 * inp, generator=g).to(device="cuda", dtype=dtype)[..., ::2]
    hx, cx = states(m, kind, batch, dtype)
    if not with_hx:
        hx = torch.zeros_like(hx)
    if not with_cx:
        cx = None
    weights = list(m._flat_weights)
    weight_buf = flat_buffer(m) if flat else None
    try:
        want = eager(m, kind, x, hx, cx, weights, weight_buf)
    except RuntimeError as e:  # cuDNN refuses the problem: aotirt must fail too
        with pytest.raises(ShimError):
            run(shims, m, kind, x, hx, cx, weights, weight_buf)
        return str(e)
    got = run(shims, m, kind, x, hx, cx, weights, weight_buf)
    check(got, want, dtype)
    return None


@pytest.mark.parametrize("kind", list(MODES))
@pytest.mark.parametrize("layers,bidirectional", [(1, False), (2, False), (1, True), (2, True)])
@pytest.mark.parametrize("flat", [True, False])
def test_modes_layers_directions(shims, kind, layers, bidirectional, flat):
    compare(shims, kind, layers=layers, bidirectional=bidirectional, flat=flat)


@pytest.mark.parametrize("kind", list(MODES))
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("layout", ["contig", "T", "step"])
def test_batch_first_and_layouts(shims, kind, batch_first, layout):
    compare(shims, kind, layers=2, bidirectional=True, batch_first=batch_first, layout=layout)


@pytest.mark.parametrize("kind", list(MODES))
@pytest.mark.parametrize("flat", [True, False])
def test_without_bias(shims, kind, flat):
    compare(shims, kind, layers=2, bidirectional=True, bias=False, flat=flat)


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("flat", [True, False])
@pytest.mark.parametrize("bidirectional", [False, True])
def test_lstm_projection(shims, bias, flat, bidirectional):
    compare(shims, "LSTM", hidden=20, proj=7, layers=2, bidirectional=bidirectional, bias=bias, flat=flat)


@pytest.mark.parametrize("with_cx", [True, False])
@pytest.mark.parametrize("with_hx", [True, False])
def test_lstm_states(shims, with_hx, with_cx):
    compare(shims, "LSTM", layers=2, with_hx=with_hx, with_cx=with_cx)


@pytest.mark.parametrize("kind", ["LSTM", "GRU", "RNN_TANH"])
@pytest.mark.parametrize("flat", [True, False])
def test_large(shims, kind, flat):
    # Hidden sizes past one block, a batch that is no multiple of 8, long sequences.
    compare(shims, kind, inp=70, hidden=300, seq=41, batch=37, layers=2, bidirectional=True, flat=flat)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("kind", list(MODES))
def test_dtypes(shims, dtype, kind):
    compare(shims, kind, layers=2, bidirectional=True, dtype=dtype, flat=dtype != torch.bfloat16)


def test_float16_projection(shims):
    compare(shims, "LSTM", hidden=24, proj=8, layers=2, bidirectional=True, dtype=torch.float16)


@pytest.mark.parametrize("kind", ["LSTM", "GRU"])
@pytest.mark.parametrize("batch_first", [False, True])
def test_zero_batch(shims, kind, batch_first):
    need(shims)
    m = module(kind, 6, 8, layers=2, bidirectional=True, batch_first=batch_first)
    x = torch.empty((0, 4, 6) if batch_first else (4, 0, 6), device="cuda")
    hx, cx = states(m, kind, 0, torch.float32)
    weights, weight_buf = list(m._flat_weights), flat_buffer(m)
    for wb in (weight_buf, None):
        got = run(shims, m, kind, x, hx, cx, weights, wb)
        try:
            want = eager(m, kind, x, hx, cx, weights, wb)
        except RuntimeError:
            # cuDNN refuses an empty batch in torch; aotirt answers with the
            # empty outputs it implies.
            dirs = 2
            assert got[0].shape == ((0, 4, 16) if batch_first else (4, 0, 16))
            assert got[1].shape == (2 * dirs, 0, 8)
            assert got[2].shape == ((2 * dirs, 0, 8) if kind == "LSTM" else (0,))
            assert got[3].shape == (0,) and got[3].dtype == torch.uint8
            if wb is not None:
                torch.testing.assert_close(got[4], wb, rtol=0, atol=0)
            continue
        check(got, want, torch.float32)


@pytest.mark.parametrize("kind", ["LSTM", "GRU", "RNN_RELU"])
@pytest.mark.parametrize("bidirectional", [False, True])
def test_packed_sequences(shims, kind, bidirectional):
    need(shims)
    m = module(kind, 10, 12, layers=2, bidirectional=bidirectional)
    lengths = [7, 5, 5, 2, 1]
    g = torch.Generator().manual_seed(3)
    padded = torch.randn(max(lengths), len(lengths), 10, generator=g).cuda()
    packed = torch.nn.utils.rnn.pack_padded_sequence(padded, lengths)
    x, batch_sizes = packed.data, packed.batch_sizes.tolist()
    hx, cx = states(m, kind, len(lengths), torch.float32)
    weights = list(m._flat_weights)
    for wb in (flat_buffer(m), None):
        want = eager(m, kind, x, hx, cx, weights, wb, batch_sizes)
        got = run(shims, m, kind, x, hx, cx, weights, wb, batch_sizes)
        check(got, want, torch.float32)


def test_errors(shims):
    need(shims)
    m = module("LSTM", 6, 8, layers=2)
    x = torch.randn(4, 3, 6, device="cuda")
    hx, cx = states(m, "LSTM", 3, torch.float32)
    weights, wb = list(m._flat_weights), flat_buffer(m)

    def fails(match, **kw):
        a = dict(x=x, hx=hx, cx=cx, weights=weights, weight_buf=wb)
        extra = {k: kw.pop(k) for k in list(kw) if k not in a}
        a.update(kw)
        with pytest.raises(ShimError, match=match):
            run(shims, m, "LSTM", a["x"], a["hx"], a["cx"], a["weights"], a["weight_buf"], **extra)

    fails("UNIMPLEMENTED.*train", train=True)
    fails("mode 7", mode=7)
    fails("hx is not contiguous", hx=hx.transpose(0, 1).contiguous().transpose(0, 1))
    fails("Expected hidden size", hx=hx[:, :2].contiguous())
    fails("Expected cell size", cx=cx[:, :2].contiguous())
    fails("cx is not contiguous", cx=cx.transpose(1, 2).contiguous().transpose(1, 2))
    fails("not the same dtype", hx=hx.double())
    fails("not the same dtype", weights=[weights[0].double()] + weights[1:], weight_buf=None)
    fails("weight has 7 tensors", weights=weights[:-1], weight_buf=None, s0=4)
    fails("weight_stride0=3", weights=weights[:6], weight_buf=None, s0=3)
    fails("weight\\[1\\]", weights=[weights[0], weights[0]] + weights[2:], weight_buf=None)
    fails("weight_buf has", weight_buf=wb[: wb.numel() - 1])
    fails("3-D", x=x[0])
    fails("UNIMPLEMENTED.*sequence length 0", x=torch.empty(0, 3, 6, device="cuda"))
    fails("proj_size", proj=8)
    fails("batch_sizes", x=x[0], batch_sizes=(2, 3))          # increasing
    fails("batch_sizes", x=x[0], batch_sizes=(2, 2))          # sum is 4, input has 3 rows
    cpu = torch.randn(4, 3, 6)
    fails("expected a CUDA tensor", x=cpu)
    fails("dropout_state", dropout_state=torch.empty(4, dtype=torch.uint8))
    # cx with a GRU, projections with a GRU.
    gru = module("GRU", 6, 8)
    ghx, _ = states(gru, "GRU", 3, torch.float32)
    with pytest.raises(ShimError, match="illegal defined cx"):
        run(shims, gru, "GRU", x, ghx, torch.zeros(1, 3, 8, device="cuda"), list(gru._flat_weights), None)
    with pytest.raises(ShimError, match="proj_size"):
        run(shims, gru, "GRU", x, ghx, None, list(gru._flat_weights), None, proj=4)
    # Null outputs.
    arr = (Handle * len(weights))(*[shims.handle(w) for w in weights])
    assert shims.fn(NAME)(shims.handle(x), arr, ctypes.c_int64(len(weights)), ctypes.c_int64(4), None,
                          shims.handle(hx), None, ctypes.c_int64(2), ctypes.c_int64(8), ctypes.c_int64(0),
                          ctypes.c_int64(2), ctypes.c_int32(0), ctypes.c_double(0.0), ctypes.c_int32(0),
                          ctypes.c_int32(0), None, ctypes.c_int64(0), None, None, None, None, None, None) == 1
