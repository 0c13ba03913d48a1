"""Conformance of the CPU oneDNN shims that take prepacked weights, against
torch eager on the CPU: mkldnn._convolution_transpose_pointwise (plain and
prepacked weights, groups, output padding, dilation, post-ops) and the PT2E
int8 ops onednn.qlinear_pointwise(.binary).tensor and
onednn.qconv_pointwise.tensor / qconv2d_pointwise.binary_tensor (weights
from torch's own prepack, every output dtype, post-ops, the binary sum and
add). A prepacked weight crosses as the package hands it over: its bytes and
oneDNN descriptor behind an _mkldnn handle (aoti_torch_create_tensor_from_blob_v2).

CPU only. Integer inputs stay small enough that no int16 intermediate
saturates: without VNNI, oneDNN's u8*s8 kernels add pairs of products in
int16, which torch's quantizer avoids by reducing the range; the tests then
compare with torch exactly (quantized outputs within one step, as the two
oneDNN builds may round a tie apart).
"""
from __future__ import annotations

import ctypes
import functools
import os
import subprocess
from pathlib import Path

import pytest
import torch

from shim_harness import DTYPE_CODES, ShimError, Shims, int32_ptr, library_path, out_handles, provided

pytestmark = pytest.mark.skipif(not library_path().exists(),
                                reason=f"{library_path()} not built (scripts/build.sh)")

I64 = ctypes.c_int64


def eager(op, *args):
    """torch's result, or a visible skip where torch's oneDNN has no kernel
    for this CPU (an ISA it lacks, e.g. AVX512-BF16 or VNNI)."""
    try:
        return op(*args)
    except RuntimeError as e:
        msg = str(e).split("\n")[0]
        if "could not create a primitive" in msg or "needs the cpu support" in msg:
            print(f"skipped: torch cannot run this case on this CPU: {msg}")
            pytest.skip(f"torch cannot run this case on this CPU: {msg}")
        raise


def _runpath(library) -> list:
    """The RUNPATH folders of |library| (readelf), $ORIGIN expanded."""
    try:
        out = subprocess.run(["readelf", "-d", str(library)], capture_output=True, text=True).stdout
    except OSError:
        return []
    dirs = []
    for line in out.splitlines():
        if "(RUNPATH)" in line or "(RPATH)" in line:
            value = line.split("[", 1)[1].rstrip("]")
            dirs += [d.replace("$ORIGIN", str(Path(library).parent)) for d in value.split(":") if d]
    return dirs


@functools.lru_cache(maxsize=None)
def onednn_unavailable() -> str:
    """Why aotirt could not open oneDNN here ("" when it can): it opens
    AOTIRT_ONEDNN_LIBRARY or libdnnl.so.3 through libaotirt.so's RUNPATH, and a
    build moved to another machine may leave that behind."""
    name = os.environ.get("AOTIRT_ONEDNN_LIBRARY") or "libdnnl.so.3"
    tries = [name] if "/" in name else [os.path.join(d, name) for d in _runpath(library_path())] + [name]
    errors = []
    for path in tries:
        try:
            ctypes.CDLL(path, mode=os.RTLD_LOCAL)
            return ""
        except OSError as e:
            errors.append(str(e))
    return errors[-1] if errors else f"{name} not found"


def need(shims, name):
    if not provided(shims, name):
        pytest.skip(f"{name} not exported (this build has no oneDNN)")
    why = onednn_unavailable()
    if why:
        print(f"skipped: this build has oneDNN, but it cannot be opened here: {why}")
        pytest.skip(f"this build has oneDNN, but it cannot be opened here: {why}")


def ints(values):
    return (I64 * max(len(values), 1))(*values), I64(len(values))


def packed_handle(shims, t: torch.Tensor):
    """An _mkldnn handle over a prepacked torch weight, as a package's
    constant: its bytes, its nominal sizes and strides, and the serialized
    oneDNN descriptor."""
    md = torch.ops.mkldnn._get_mkldnn_serialized_md(t)
    nbytes = torch.ops.mkldnn._nbytes(t)
    data = torch.empty(nbytes, dtype=torch.uint8)
    ctypes.memmove(data.data_ptr(), torch.ops.mkldnn.data_ptr(t), nbytes)
    shims._keep.append(data)
    blob = bytes(md.numpy().tobytes())
    meta = (ctypes.c_uint8 * len(blob)).from_buffer_copy(blob)
    shims._keep.append(meta)
    sizes = list(t.shape)
    strides = list(t.stride())
    out = ctypes.c_void_p()
    shims.call("aoti_torch_create_tensor_from_blob_v2", ctypes.c_void_p(data.data_ptr()), I64(len(sizes)),
               (I64 * len(sizes))(*sizes), (I64 * len(strides))(*strides), I64(0),
               ctypes.c_int32(DTYPE_CODES[t.dtype]), ctypes.c_int32(0), ctypes.c_int32(0), ctypes.byref(out),
               ctypes.c_int32(3), meta, I64(len(blob)))
    return out


def opt_handle(shims, t):
    return ctypes.byref(shims.handle(t)) if t is not None else None


def scalars_arg(values):
    """A const double** list (the generated code's Scalar?[])."""
    if not values:
        return None, I64(0)
    boxes = [ctypes.c_double(v) for v in values]
    arr = (ctypes.POINTER(ctypes.c_double) * len(boxes))(*[ctypes.pointer(b) for b in boxes])
    arr._boxes = boxes
    return arr, I64(len(values))


def cstr(s):
    return None if s is None else s.encode()


def cstr_ptr(s):
    return None if s is None else ctypes.byref(ctypes.c_char_p(s.encode()))


# ---- transposed convolution ---------------------------------------------------

CONVT = "aoti_torch_cpu_mkldnn__convolution_transpose_pointwise"


def convt(shims, x, w_handle, bias, padding, output_padding, stride, dilation, groups, attr="none", scalars=(),
          algorithm=None):
    (r,) = out_handles(1)
    sc, n = scalars_arg(list(scalars))
    shims.call(CONVT, shims.handle(x), w_handle, opt_handle(shims, bias), *ints(padding), *ints(output_padding),
               *ints(stride), *ints(dilation), I64(groups), cstr(attr), sc, n, cstr_ptr(algorithm), ctypes.byref(r))
    return shims.tensor(r)


CONVT_CASES = [
    # x shape, in_c -> weight [I, O/G, k...], padding, output_padding, stride, dilation, groups
    ((2, 4, 10, 10), (4, 8, 3, 3), [1, 1], [0, 0], [2, 2], [1, 1], 1),
    ((2, 4, 9, 7), (4, 3, 3, 2), [0, 1], [1, 0], [2, 2], [2, 1], 2),
    ((1, 6, 5, 5), (6, 2, 1, 1), [0, 0], [0, 0], [1, 1], [1, 1], 3),
    ((3, 32, 17, 15), (32, 24, 4, 4), [1, 1], [1, 1], [2, 2], [1, 1], 1),
    ((2, 4, 12), (4, 5, 3), [1], [0], [2], [1], 1),
    ((1, 4, 4, 5, 6), (4, 3, 3, 3, 3), [1, 1, 1], [0, 0, 0], [1, 2, 1], [1, 1, 1], 1),
]


@pytest.mark.parametrize("case", CONVT_CASES)
@pytest.mark.parametrize("packed", [False, True])
@pytest.mark.parametrize("channels_last", [False, True])
def test_convolution_transpose_matches_eager(shims, case, packed, channels_last):
    need(shims, CONVT)
    xs, ws, pad, opad, stride, dil, groups = case
    if channels_last and len(xs) == 3:
        pytest.skip("1-d has no channels-last layout")
    if packed and len(xs) == 3:
        pytest.skip("torch prepacks only 2-d and 3-d transposed convolution weights")
    g = torch.Generator().manual_seed(1)
    x = torch.randn(xs, generator=g)
    if channels_last:
        x = x.to(memory_format=torch.channels_last if len(xs) == 4 else torch.channels_last_3d)
    w = torch.randn(ws, generator=g)
    b = torch.randn(ws[1] * groups, generator=g)
    if packed:
        wp = torch.ops.mkldnn._reorder_convolution_transpose_weight(w, pad, opad, stride, dil, groups, list(xs))
        wh, wt = packed_handle(shims, wp), wp
    else:
        wh, wt = shims.handle(w), w
    want = eager(torch.ops.mkldnn._convolution_transpose_pointwise,
        x, wt, b, pad, opad, stride, dil, groups, "relu", [],
                                                             None)
    got = convt(shims, x, wh, b, pad, opad, stride, dil, groups, "relu")
    assert got.shape == want.shape and got.stride() == want.stride()
    torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("attr,scalars,algorithm", [
    ("none", [], None), ("leaky_relu", [0.2], None), ("hardtanh", [-0.5, 0.5], None), ("gelu", [], "tanh"),
    ("gelu", [], "none"), ("tanh", [], None), ("sigmoid", [], None), ("swish", [], None), ("hardswish", [], None)])
def test_convolution_transpose_post_ops(shims, attr, scalars, algorithm):
    need(shims, CONVT)
    g = torch.Generator().manual_seed(2)
    x = torch.randn(2, 8, 6, 6, generator=g)
    w = torch.randn(8, 4, 3, 3, generator=g)
    args = ([1, 1], [0, 0], [1, 1], [1, 1], 1)
    want = eager(torch.ops.mkldnn._convolution_transpose_pointwise, x, w, None, *args, attr, scalars, algorithm)
    got = convt(shims, x, shims.handle(w), None, *args, attr, scalars, algorithm)
    torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)


def test_convolution_transpose_non_contiguous_and_empty(shims):
    need(shims, CONVT)
    g = torch.Generator().manual_seed(3)
    x = torch.randn(2, 6, 8, 4, generator=g)[:, ::2].transpose(2, 3)  # neither layout
    w = torch.randn(3, 5, 3, 3, generator=g).transpose(2, 3)
    args = ([1, 0], [0, 1], [1, 2], [1, 1], 1)
    want = eager(torch.ops.mkldnn._convolution_transpose_pointwise, x, w, None, *args, "none", [], None)
    got = convt(shims, x, shims.handle(w), None, *args)
    assert got.stride() == want.stride()
    torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)
    x0 = torch.randn(0, 3, 4, 4)
    want = eager(torch.ops.mkldnn._convolution_transpose_pointwise, x0, w, None, *args, "none", [], None)
    got = convt(shims, x0, shims.handle(w), None, *args)
    assert got.shape == want.shape


def test_convolution_transpose_errors(shims):
    need(shims, CONVT)
    x = torch.randn(1, 4, 5, 5)
    w = torch.randn(4, 2, 3, 3)
    with pytest.raises(ShimError, match="channels"):
        convt(shims, torch.randn(1, 3, 5, 5), shims.handle(w), None, [0, 0], [0, 0], [1, 1], [1, 1], 1)
    with pytest.raises(ShimError, match="output_padding"):
        convt(shims, x, shims.handle(w), None, [0, 0], [1, 1], [1, 1], [1, 1], 1)
    with pytest.raises(ShimError, match="post-op 'bogus'"):
        convt(shims, x, shims.handle(w), None, [0, 0], [0, 0], [1, 1], [1, 1], 1, "bogus")
    with pytest.raises(ShimError, match="int8|float32, bfloat16"):
        convt(shims, x.to(torch.int8), shims.handle(w.to(torch.int8)), None, [0, 0], [0, 0], [1, 1], [1, 1], 1)


# ---- int8 linear ----------------------------------------------------------------

QLINEAR = "aoti_torch_cpu__qlinear_pointwise_tensor"
QLINEAR_BINARY = "aoti_torch_cpu__qlinear_pointwise_binary_tensor"


def dtype_arg(dtype):
    return int32_ptr(None if dtype is None else DTYPE_CODES[dtype])


def qclose(got, want):
    assert got.dtype == want.dtype and got.shape == want.shape and got.stride() == want.stride()
    if want.dtype in (torch.uint8, torch.int8):
        # One step apart at most: two oneDNN builds may round a tie apart.
        assert (got.int() - want.int()).abs().max().item() <= 1 if want.numel() else True
    else:
        torch.testing.assert_close(got.float(), want.float(), rtol=2e-2 if want.dtype != torch.float32 else 1e-5,
                                   atol=2e-2 if want.dtype != torch.float32 else 1e-4)


def qlinear_operands(k, n, x_shape, x_dtype=torch.uint8, seed=0, per_channel=True):
    g = torch.Generator().manual_seed(seed)
    w = torch.randint(-64, 64, (n, k), generator=g, dtype=torch.int8)
    lo, hi = (0, 127) if x_dtype == torch.uint8 else (-64, 64)
    x = torch.randint(lo, hi, x_shape, generator=g, dtype=x_dtype)
    ws = (torch.rand(n, generator=g) * 0.01 + 0.001) if per_channel else torch.tensor([0.004])
    return x, w, ws, torch.randn(n, generator=g)


def qlinear(shims, x, xs, xz, wh, ws, bias, oscale, ozp, odtype, post="none", args=(), alg=""):
    (r,) = out_handles(1)
    sc, n = scalars_arg(list(args))
    shims.call(QLINEAR, shims.handle(x), shims.handle(xs), shims.handle(xz), wh, shims.handle(ws),
               shims.handle(torch.zeros(ws.numel(), dtype=torch.int64)), opt_handle(shims, bias),
               ctypes.c_double(oscale), I64(ozp), dtype_arg(odtype), cstr(post), sc, n, cstr(alg), ctypes.byref(r))
    return shims.tensor(r)


QLINEAR_OUTS = [(torch.float32, 1.0, 0), (torch.bfloat16, 1.0, 0), (None, 0.05, 3), (torch.uint8, 0.07, 0),
                (torch.int8, 0.05, -2)]


@pytest.mark.parametrize("out", QLINEAR_OUTS)
@pytest.mark.parametrize("shape", [((5, 32), 32, 16), ((2, 3, 64), 64, 48), ((130, 100), 100, 72)])
@pytest.mark.parametrize("with_bias", [False, True])
def test_qlinear_matches_eager(shims, out, shape, with_bias):
    need(shims, QLINEAR)
    odtype, oscale, ozp = out
    x_shape, k, n = shape
    x, w, ws, b = qlinear_operands(k, n, x_shape)
    pw = torch.ops.onednn.qlinear_prepack(w, None)
    xs, xz = torch.tensor(0.05), torch.tensor(3)
    bias = b if with_bias else None
    want = eager(torch.ops.onednn.qlinear_pointwise.tensor, x, xs, xz, pw, ws, torch.zeros(n, dtype=torch.int64), bias,
                                                     oscale, ozp, odtype, "relu", [], "")
    got = qlinear(shims, x, xs, xz, packed_handle(shims, pw), ws, bias, oscale, ozp, odtype, "relu")
    qclose(got, want)
    if odtype == torch.float32:
        # And the arithmetic itself, in double.
        ref = torch.relu(((x.double() - 3) * 0.05) @ (w.double() * ws.double()[:, None]).t() +
                         (b.double() if with_bias else 0))
        torch.testing.assert_close(got.double(), ref, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("post,args,alg", [
    ("none", [], ""), ("leaky_relu", [0.1], ""), ("tanh", [], ""), ("gelu", [], "none"), ("gelu", [], "tanh"),
    ("hardtanh", [-1.0, 1.0], ""), ("hardswish", [], ""), ("swish", [], "")])
def test_qlinear_post_ops(shims, post, args, alg):
    need(shims, QLINEAR)
    x, w, ws, b = qlinear_operands(40, 24, (7, 40), seed=4)
    pw = torch.ops.onednn.qlinear_prepack(w, None)
    xs, xz = torch.tensor(0.02), torch.tensor(60)
    for odtype, oscale, ozp in [(torch.float32, 1.0, 0), (None, 0.01, 128)]:
        want = eager(torch.ops.onednn.qlinear_pointwise.tensor,
            x, xs, xz, pw, ws, torch.zeros(24, dtype=torch.int64), b,
                                                         oscale, ozp, odtype, post, args, alg)
        got = qlinear(shims, x, xs, xz, packed_handle(shims, pw), ws, b, oscale, ozp, odtype, post, args, alg)
        qclose(got, want)


def test_qlinear_int8_input_scalar_scale_non_contiguous_and_empty(shims):
    need(shims, QLINEAR)
    x, w, ws, b = qlinear_operands(32, 16, (6, 32), x_dtype=torch.int8, seed=5, per_channel=False)
    pw = torch.ops.onednn.qlinear_prepack(w, None)
    xs, xz = torch.tensor(0.03, dtype=torch.float64), torch.tensor(0, dtype=torch.int32)
    zeros = torch.zeros(1, dtype=torch.int64)
    for odtype, oscale, ozp in [(None, 0.1, 0), (torch.float32, 1.0, 0)]:
        want = eager(torch.ops.onednn.qlinear_pointwise.tensor,
            x, xs, xz, pw, ws, zeros, b, oscale, ozp, odtype, "none",
                                                         [], "")
        qclose(qlinear(shims, x, xs, xz, packed_handle(shims, pw), ws, b, oscale, ozp, odtype), want)
    xt = torch.randint(0, 127, (32, 6), dtype=torch.uint8).t()
    want = eager(torch.ops.onednn.qlinear_pointwise.tensor,
        xt, xs, xz, pw, ws, zeros, None, 1.0, 0, torch.float32, "none",
                                                     [], "")
    qclose(qlinear(shims, xt, xs, xz, packed_handle(shims, pw), ws, None, 1.0, 0, torch.float32), want)
    x0 = torch.empty(0, 32, dtype=torch.uint8)
    got = qlinear(shims, x0, xs, xz, packed_handle(shims, pw), ws, None, 1.0, 0, torch.float32)
    assert got.shape == (0, 16) and got.dtype == torch.float32


def qlinear_binary(shims, x, xs, xz, wh, ws, other, bias, oscale, ozp, odtype, other_scale, other_zp, binary,
                   unary="none"):
    (r,) = out_handles(1)
    shims.call(QLINEAR_BINARY, shims.handle(x), shims.handle(xs), shims.handle(xz), wh, shims.handle(ws),
               shims.handle(torch.zeros(ws.numel(), dtype=torch.int64)), opt_handle(shims, other),
               opt_handle(shims, bias), ctypes.c_double(oscale), I64(ozp), dtype_arg(odtype),
               ctypes.c_double(other_scale), I64(other_zp), cstr(binary), ctypes.c_double(1.0), cstr(unary), None,
               I64(0), cstr(""), ctypes.byref(r))
    return shims.tensor(r)


@pytest.mark.parametrize("case", [
    # binary, unary, output dtype, output scale / zp, other dtype, other scale / zp
    ("sum", "none", torch.float32, 1.0, 0, torch.float32, 1.0, 0),
    ("sum", "relu", torch.bfloat16, 1.0, 0, torch.bfloat16, 1.0, 0),
    ("sum", "relu", None, 0.2, 4, torch.uint8, 0.3, 7),
    ("add", "none", torch.float32, 1.0, 0, torch.float32, 1.0, 0),
    ("add", "relu", None, 0.2, 4, torch.float32, 1.0, 0)])
def test_qlinear_binary_matches_eager(shims, case):
    need(shims, QLINEAR_BINARY)
    binary, unary, odtype, oscale, ozp, other_dtype, other_scale, other_zp = case
    x, w, ws, b = qlinear_operands(48, 40, (2, 9, 48), seed=6)
    pw = torch.ops.onednn.qlinear_prepack(w, None)
    xs, xz = torch.tensor(0.04), torch.tensor(5)
    if other_dtype == torch.uint8:
        other = torch.randint(0, 255, (2, 9, 40), dtype=torch.uint8)
    else:
        other = torch.randn(2, 9, 40).to(other_dtype)
    mine = other.clone()
    want = eager(torch.ops.onednn.qlinear_pointwise.binary_tensor,
        x, xs, xz, pw, ws, torch.zeros(40, dtype=torch.int64), other, b, oscale, ozp, odtype, other_scale, other_zp,
        binary, 1.0, unary, [], "")
    got = qlinear_binary(shims, x, xs, xz, packed_handle(shims, pw), ws, mine, b, oscale, ozp, odtype, other_scale,
                         other_zp, binary, unary)
    qclose(got, want)
    if binary == "sum":
        qclose(mine, other)  # accumulated in place, as torch does


def test_qlinear_errors(shims):
    need(shims, QLINEAR)
    x, w, ws, b = qlinear_operands(32, 16, (4, 32))
    pw = torch.ops.onednn.qlinear_prepack(w, None)
    wh = packed_handle(shims, pw)
    xs, xz = torch.tensor(0.05), torch.tensor(3)
    with pytest.raises(ShimError, match="plain tensor"):
        qlinear(shims, x, xs, xz, shims.handle(w), ws, None, 1.0, 0, torch.float32)
    with pytest.raises(ShimError, match="features"):
        qlinear(shims, x[:, :16].contiguous(), xs, xz, wh, ws, None, 1.0, 0, torch.float32)
    with pytest.raises(ShimError, match="output_scale 1"):
        qlinear(shims, x, xs, xz, wh, ws, None, 0.5, 0, torch.float32)
    with pytest.raises(ShimError, match="sigmoid"):
        qlinear(shims, x, xs, xz, wh, ws, None, 1.0, 0, torch.float32, "sigmoid")
    with pytest.raises(ShimError, match="output_dtype int32"):
        qlinear(shims, x, xs, xz, wh, ws, None, 1.0, 0, torch.int32)
    with pytest.raises(ShimError, match="weight_scales"):
        qlinear(shims, x, xs, xz, wh, torch.rand(3), None, 1.0, 0, torch.float32)
    with pytest.raises(ShimError, match="uint8 or int8"):
        qlinear(shims, x.float(), xs, xz, wh, ws, None, 1.0, 0, torch.float32)
    need(shims, QLINEAR_BINARY)
    with pytest.raises(ShimError, match="needs 'other'"):
        qlinear_binary(shims, x, xs, xz, wh, ws, None, None, 1.0, 0, torch.float32, 1.0, 0, "add")
    with pytest.raises(ShimError, match="must be the output"):
        qlinear_binary(shims, x, xs, xz, wh, ws, torch.randn(4, 16), None, 1.0, 0, torch.bfloat16, 1.0, 0, "sum")
    with pytest.raises(ShimError, match="only none and relu"):
        qlinear_binary(shims, x, xs, xz, wh, ws, torch.randn(4, 16), None, 1.0, 0, torch.float32, 1.0, 0, "add",
                       "tanh")


# ---- int8 convolution -------------------------------------------------------------

QCONV = "aoti_torch_cpu__qconv_pointwise_tensor"
QCONV_BINARY = "aoti_torch_cpu__qconv2d_pointwise_binary_tensor"


def qconv(shims, x, xs, xz, wh, ws, bias, stride, padding, dilation, groups, oscale, ozp, odtype, attr="none",
          args=(), alg=None):
    (r,) = out_handles(1)
    sc, n = scalars_arg(list(args))
    shims.call(QCONV, shims.handle(x), shims.handle(xs), shims.handle(xz), wh, shims.handle(ws),
               shims.handle(torch.zeros(ws.numel(), dtype=torch.int64)), opt_handle(shims, bias), *ints(stride),
               *ints(padding), *ints(dilation), I64(groups), ctypes.c_double(oscale), I64(ozp), dtype_arg(odtype),
               cstr(attr), sc, n, cstr_ptr(alg), ctypes.byref(r))
    return shims.tensor(r)


QCONV_CASES = [
    # x shape, weight shape [O, I/G, k...], stride, padding, dilation, groups
    ((2, 4, 10, 10), (8, 4, 3, 3), [1, 1], [1, 1], [1, 1], 1),
    ((1, 6, 17, 13), (12, 3, 3, 2), [2, 1], [0, 1], [1, 2], 2),
    ((2, 32, 20, 20), (64, 32, 1, 1), [1, 1], [0, 0], [1, 1], 1),
    ((2, 4, 15), (8, 4, 3), [2], [1], [1], 1),
    ((1, 4, 5, 6, 6), (8, 4, 3, 3, 3), [1, 1, 1], [1, 1, 1], [1, 1, 1], 1),
]


@pytest.mark.parametrize("case", QCONV_CASES)
@pytest.mark.parametrize("out", [(torch.float32, 1.0, 0), (torch.bfloat16, 1.0, 0), (None, 0.1, 5),
                                 (torch.int8, 0.1, 0)])
@pytest.mark.parametrize("channels_last", [False, True])
def test_qconv_matches_eager(shims, case, out, channels_last):
    need(shims, QCONV)
    xs_shape, w_shape, stride, padding, dilation, groups = case
    odtype, oscale, ozp = out
    g = torch.Generator().manual_seed(7)
    x = torch.randint(0, 127, xs_shape, generator=g, dtype=torch.uint8)
    if channels_last and len(xs_shape) >= 4:
        x = x.to(memory_format=torch.channels_last if len(xs_shape) == 4 else torch.channels_last_3d)
    w = torch.randint(-64, 64, w_shape, generator=g, dtype=torch.int8)
    ws = torch.rand(w_shape[0], generator=g) * 0.01 + 0.001
    b = torch.randn(w_shape[0], generator=g)
    xs, xz = torch.tensor(0.05), torch.tensor(3)
    pw = torch.ops.onednn.qconv_prepack(w, ws, 0.05, 3, stride, padding, dilation, groups, list(xs_shape))
    attr = "relu" if len(xs_shape) < 5 else "none"  # torch fuses no post-op into a 3-d one
    want = eager(torch.ops.onednn.qconv_pointwise.tensor,
        x, xs, xz, pw, ws, torch.zeros(w_shape[0], dtype=torch.int64), b,
                                                   stride, padding, dilation, groups, oscale, ozp, odtype, attr, [],
                                                   None)
    got = qconv(shims, x, xs, xz, packed_handle(shims, pw), ws, b, stride, padding, dilation, groups, oscale, ozp,
                odtype, attr)
    qclose(got, want)


@pytest.mark.parametrize("attr,args", [("none", []), ("hardtanh", [0.0, 6.0]), ("hardswish", []), ("swish", [])])
def test_qconv_post_ops_and_scalar_scale(shims, attr, args):
    need(shims, QCONV)
    g = torch.Generator().manual_seed(8)
    x = torch.randint(0, 127, (2, 8, 9, 9), generator=g, dtype=torch.uint8)
    w = torch.randint(-64, 64, (16, 8, 3, 3), generator=g, dtype=torch.int8)
    ws = torch.tensor([0.003])
    xs, xz = torch.tensor(0.05), torch.tensor(100)
    pw = torch.ops.onednn.qconv_prepack(w, ws, 0.05, 100, [1, 1], [1, 1], [1, 1], 1, list(x.shape))
    for odtype, oscale, ozp in [(torch.float32, 1.0, 0), (None, 0.05, 128)]:
        want = eager(torch.ops.onednn.qconv_pointwise.tensor,
            x, xs, xz, pw, ws, torch.zeros(1, dtype=torch.int64), None,
                                                       [1, 1], [1, 1], [1, 1], 1, oscale, ozp, odtype, attr, args,
                                                       None)
        got = qconv(shims, x, xs, xz, packed_handle(shims, pw), ws, None, [1, 1], [1, 1], [1, 1], 1, oscale, ozp,
                    odtype, attr, args)
        qclose(got, want)


def qconv_binary(shims, x, xs, xz, wh, ws, accum, bias, oscale, ozp, odtype, accum_scale, accum_zp, binary="sum",
                 unary="none"):
    (r,) = out_handles(1)
    shims.call(QCONV_BINARY, shims.handle(x), shims.handle(xs), shims.handle(xz), wh, shims.handle(ws),
               shims.handle(torch.zeros(ws.numel(), dtype=torch.int64)), shims.handle(accum),
               opt_handle(shims, bias), *ints([1, 1]), *ints([1, 1]), *ints([1, 1]), I64(1),
               ctypes.c_double(oscale), I64(ozp), dtype_arg(odtype), ctypes.c_double(accum_scale), I64(accum_zp),
               cstr(binary), ctypes.byref(ctypes.c_double(1.0)), cstr_ptr(unary), None, I64(0), None,
               ctypes.byref(r))
    return shims.tensor(r)


@pytest.mark.parametrize("case", [
    # unary, output dtype, output scale / zp, accum dtype, accum scale / zp
    ("none", torch.float32, 1.0, 0, torch.float32, 1.0, 0),
    ("relu", torch.float32, 1.0, 0, torch.bfloat16, 1.0, 0),
    ("relu", torch.bfloat16, 1.0, 0, torch.bfloat16, 1.0, 0),
    ("relu", None, 0.1, 2, torch.uint8, 0.2, 5),
    ("none", torch.int8, 0.1, 0, torch.int8, 0.05, 0)])
def test_qconv_sum_matches_eager(shims, case):
    need(shims, QCONV_BINARY)
    unary, odtype, oscale, ozp, adtype, ascale, azp = case
    g = torch.Generator().manual_seed(9)
    x = torch.randint(0, 127, (2, 4, 10, 10), generator=g, dtype=torch.uint8)
    w = torch.randint(-64, 64, (8, 4, 3, 3), generator=g, dtype=torch.int8)
    ws = torch.rand(8, generator=g) * 0.01
    b = torch.randn(8, generator=g)
    xs, xz = torch.tensor(0.05), torch.tensor(3)
    pw = torch.ops.onednn.qconv_prepack(w, ws, 0.05, 3, [1, 1], [1, 1], [1, 1], 1, list(x.shape))
    if adtype in (torch.uint8, torch.int8):
        lo, hi = (0, 255) if adtype == torch.uint8 else (-128, 127)
        accum = torch.randint(lo, hi, (2, 8, 10, 10), generator=g, dtype=adtype)
    else:
        accum = torch.randn(2, 8, 10, 10, generator=g).to(adtype)
    accum = accum.to(memory_format=torch.channels_last)
    mine = accum.clone()
    want = eager(torch.ops.onednn.qconv2d_pointwise.binary_tensor,
        x, xs, xz, pw, ws, torch.zeros(8, dtype=torch.int64), accum, b, [1, 1], [1, 1], [1, 1], 1, oscale, ozp,
        odtype, ascale, azp, "sum", 1.0, unary, [], None)
    got = qconv_binary(shims, x, xs, xz, packed_handle(shims, pw), ws, mine, b, oscale, ozp, odtype, ascale, azp,
                       "sum", unary)
    qclose(got, want)
    qclose(mine, accum)


def test_qconv_errors(shims):
    need(shims, QCONV)
    x = torch.randint(0, 127, (1, 4, 6, 6), dtype=torch.uint8)
    w = torch.randint(-64, 64, (8, 4, 3, 3), dtype=torch.int8)
    ws = torch.rand(8)
    xs, xz = torch.tensor(0.05), torch.tensor(3)
    pw = torch.ops.onednn.qconv_prepack(w, ws, 0.05, 3, [1, 1], [0, 0], [1, 1], 1, list(x.shape))
    wh = packed_handle(shims, pw)
    a = ([1, 1], [0, 0], [1, 1], 1)
    with pytest.raises(ShimError, match="plain tensor"):
        qconv(shims, x, xs, xz, shims.handle(w), ws, None, *a, 1.0, 0, torch.float32)
    with pytest.raises(ShimError, match="channels"):
        qconv(shims, x[:, :2].contiguous(), xs, xz, wh, ws, None, *a, 1.0, 0, torch.float32)
    with pytest.raises(ShimError, match="takes uint8"):
        qconv(shims, x.to(torch.int8), xs, xz, wh, ws, None, *a, 1.0, 0, torch.float32)
    with pytest.raises(ShimError, match="'tanh'"):
        qconv(shims, x, xs, xz, wh, ws, None, *a, 1.0, 0, torch.float32, "tanh")
    with pytest.raises(ShimError, match="output_scale 1"):
        qconv(shims, x, xs, xz, wh, ws, None, *a, 0.5, 0, torch.float32)
    need(shims, QCONV_BINARY)
    acc = torch.randn(1, 8, 6, 6)  # contiguous, not channels-last
    pw1 = torch.ops.onednn.qconv_prepack(w, ws, 0.05, 3, [1, 1], [1, 1], [1, 1], 1, list(x.shape))
    with pytest.raises(ShimError, match="channels-last"):
        qconv_binary(shims, x, xs, xz, packed_handle(shims, pw1), ws, acc, None, 1.0, 0, torch.float32, 1.0, 0)
    with pytest.raises(ShimError, match="'sum'"):
        qconv_binary(shims, x, xs, xz, packed_handle(shims, pw1), ws,
                     acc.to(memory_format=torch.channels_last), None, 1.0, 0, torch.float32, 1.0, 0, "add")


# ---- LSTM layer ------------------------------------------------------------------

RNN = "aoti_torch_cpu_mkldnn_rnn_layer"


def rnn_layer(shims, x, w0, w1, b0, b1, hx, cx, reverse=False, mode=2, hidden=None, has_biases=True, train=False,
              batch_sizes=()):
    outs = out_handles(4)
    bs, nbs = ints(list(batch_sizes))
    shims.call(RNN, shims.handle(x), shims.handle(w0), shims.handle(w1), shims.handle(b0), shims.handle(b1),
               shims.handle(hx), shims.handle(cx), ctypes.c_int32(reverse), bs, nbs, I64(mode),
               I64(hidden if hidden is not None else hx.shape[-1]), I64(1), ctypes.c_int32(has_biases),
               ctypes.c_int32(0), ctypes.c_int32(0), ctypes.c_int32(train), *[ctypes.byref(o) for o in outs])
    return [shims.tensor(o) for o in outs]


def lstm_operands(t, n, i, h, seed=0):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(t, n, i, generator=g), torch.randn(4 * h, i, generator=g) * 0.3,
            torch.randn(4 * h, h, generator=g) * 0.3, torch.randn(4 * h, generator=g),
            torch.randn(4 * h, generator=g), torch.randn(n, h, generator=g), torch.randn(n, h, generator=g))


@pytest.mark.parametrize("sizes", [(5, 3, 7, 6), (1, 1, 4, 8), (33, 17, 64, 96)])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("has_biases", [True, False])
def test_lstm_layer_matches_eager(shims, sizes, reverse, has_biases):
    need(shims, RNN)
    t, n, i, h = sizes
    x, w0, w1, b0, b1, hx, cx = lstm_operands(t, n, i, h)
    want = eager(torch.ops.aten.mkldnn_rnn_layer, x, w0, w1, b0, b1, hx, cx, reverse, [], 2, h, 1, has_biases, False,
                                           False, False)
    got = rnn_layer(shims, x, w0, w1, b0, b1, hx, cx, reverse=reverse, has_biases=has_biases)
    for g_, w_ in zip(got[:3], want[:3]):
        assert g_.shape == w_.shape and g_.stride() == w_.stride() and g_.dtype == w_.dtype
        torch.testing.assert_close(g_, w_, rtol=1e-4, atol=1e-5)
    # And nn.LSTM itself, the op's meaning.
    lstm = torch.nn.LSTM(i, h, bias=has_biases)
    with torch.no_grad():
        lstm.weight_ih_l0.copy_(w0)
        lstm.weight_hh_l0.copy_(w1)
        if has_biases:
            lstm.bias_ih_l0.copy_(b0)
            lstm.bias_hh_l0.copy_(b1)
        y, (hy, cy) = lstm(x.flip(0) if reverse else x, (hx[None], cx[None]))
    torch.testing.assert_close(got[0], y.flip(0) if reverse else y, rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(got[1], hy[0], rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(got[2], cy[0], rtol=1e-4, atol=1e-5)
    assert got[3].dtype == torch.uint8  # the workspace: none in inference


def test_lstm_layer_non_contiguous_and_3d_state(shims):
    need(shims, RNN)
    x, w0, w1, b0, b1, hx, cx = lstm_operands(6, 4, 10, 5, seed=1)
    xt = x.transpose(0, 1).contiguous().transpose(0, 1)  # [T, N, I] view of [N, T, I]
    w0t = w0.t().contiguous().t()
    want = eager(torch.ops.aten.mkldnn_rnn_layer,
        x, w0, w1, b0, b1, hx, cx, False, [], 2, 5, 1, True, False, False, False)
    got = rnn_layer(shims, xt, w0t, w1, b0, b1, hx[None], cx[None])
    torch.testing.assert_close(got[0], want[0], rtol=1e-4, atol=1e-5)
    assert got[1].shape == (1, 4, 5)
    torch.testing.assert_close(got[1][0], want[1], rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(got[2][0], want[2], rtol=1e-4, atol=1e-5)


def test_lstm_layer_errors(shims):
    need(shims, RNN)
    x, w0, w1, b0, b1, hx, cx = lstm_operands(3, 2, 4, 5)
    with pytest.raises(ShimError, match="mode 3"):
        rnn_layer(shims, x, w0, w1, b0, b1, hx, cx, mode=3)
    with pytest.raises(ShimError, match="train=True"):
        rnn_layer(shims, x, w0, w1, b0, b1, hx, cx, train=True)
    with pytest.raises(ShimError, match="batch_sizes"):
        rnn_layer(shims, x, w0, w1, b0, b1, hx, cx, batch_sizes=[2, 2, 1])
    with pytest.raises(ShimError, match="weight0"):
        rnn_layer(shims, x, w0[:, :3], w1, b0, b1, hx, cx)
    with pytest.raises(ShimError, match="hx_"):
        rnn_layer(shims, x, w0, w1, b0, b1, hx[:1], cx)
    with pytest.raises(ShimError, match="float32"):
        rnn_layer(shims, x.double(), w0, w1, b0, b1, hx, cx)
