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

import pytest
import torch

from shim_harness import DTYPE_CODES, ShimError, Shims, int32_ptr, library_path, out_handles, provided

pytestmark = pytest.mark.skipif(not library_path().exists(),
                                reason=f"{library_path()} not built (scripts/build.sh)")

I64 = ctypes.c_int64


def need(shims, name):
    if not provided(shims, name):
        pytest.skip(f"{name} not exported (this build has no oneDNN)")


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
    want = torch.ops.mkldnn._convolution_transpose_pointwise(x, wt, b, pad, opad, stride, dil, groups, "relu", [],
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
    want = torch.ops.mkldnn._convolution_transpose_pointwise(x, w, None, *args, attr, scalars, algorithm)
    got = convt(shims, x, shims.handle(w), None, *args, attr, scalars, algorithm)
    torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)


def test_convolution_transpose_non_contiguous_and_empty(shims):
    need(shims, CONVT)
    g = torch.Generator().manual_seed(3)
    x = torch.randn(2, 6, 8, 4, generator=g)[:, ::2].transpose(2, 3)  # neither layout
    w = torch.randn(3, 5, 3, 3, generator=g).transpose(2, 3)
    args = ([1, 0], [0, 1], [1, 2], [1, 1], 1)
    want = torch.ops.mkldnn._convolution_transpose_pointwise(x, w, None, *args, "none", [], None)
    got = convt(shims, x, shims.handle(w), None, *args)
    assert got.stride() == want.stride()
    torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)
    x0 = torch.randn(0, 3, 4, 4)
    want = torch.ops.mkldnn._convolution_transpose_pointwise(x0, w, None, *args, "none", [], None)
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
