"""Conformance of the pooling ops (avg_pool2d/3d, _adaptive_avg_pool2d/3d,
adaptive_max_pool2d/3d, max_pool2d/3d_with_indices, fractional_max_pool2d/3d,
max_unpool2d/3d) on every device (the CPU, and CUDA when torch sees a GPU)
and of embedding_bag (_embedding_bag, its forward_only variant, and the
device-generic aoti_torch__embedding_bag) on the CPU, with eager PyTorch on
the same device: batched and unbatched inputs, contiguous, channels-last
and transposed layouts, every dtype torch computes them in (and errors for
the ones it refuses), ceil_mode, padding, dilation, count_include_pad,
divisor_override, NaNs, 0-size batches. Values and indices must equal
torch's bit for bit (weighted embedding_bag sums within a tight tolerance),
and output sizes, strides and dtypes too.
"""
from __future__ import annotations

import ctypes

import pytest
import torch

from shim_harness import devices, provided
from shim_harness import Shims, library_path, out_handles

pytestmark = pytest.mark.skipif(not library_path().exists(),
                                reason=f"{library_path()} not built (scripts/build.sh)")

A = torch.ops.aten
FLOATS = [torch.float32, torch.float64, torch.bfloat16, torch.float16]
INTS = [torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8]


def need(shims, name):
    if not provided(shims, name):
        pytest.skip(f"{name} is not provided yet")


def ints(vals):
    arr = (ctypes.c_int64 * max(len(vals), 1))(*vals)
    return arr, ctypes.c_int64(len(vals))


def make(shape, dtype, layout="contig", seed=0, nan=False, device="cpu"):
    """A tensor of |shape| in |layout| on |device|: contig, cl (channels-last
    for a batched 4-d/5-d shape) or T (the last two dims transposed in
    memory)."""
    g = torch.Generator().manual_seed(seed)
    if dtype.is_floating_point:
        t = torch.randn(shape, generator=g, dtype=torch.float64).to(dtype)
        if nan and t.numel():
            flat = t.view(-1)
            flat[torch.randint(0, flat.numel(), (max(1, flat.numel() // 7),), generator=g)] = float("nan")
    else:
        lo, hi = (0, 9) if dtype == torch.uint8 else (-5, 6)
        t = torch.randint(lo, hi, shape, generator=g).to(dtype)
    if layout == "cl":
        fmt = torch.channels_last if t.dim() == 4 else torch.channels_last_3d
        t = t.contiguous(memory_format=fmt)
    elif layout == "T":
        t = t.transpose(-1, -2).contiguous().transpose(-1, -2)
    # .to keeps the layout of a dense tensor.
    return t.to(device)


def same(got, want, exact=True):
    assert got.dtype == want.dtype, f"dtype {got.dtype}, torch gives {want.dtype}"
    assert got.shape == want.shape, f"shape {tuple(got.shape)}, torch gives {tuple(want.shape)}"
    if got.numel():
        assert got.stride() == want.stride(), f"strides {got.stride()}, torch gives {want.stride()}"
    if exact:
        torch.testing.assert_close(got, want, rtol=0, atol=0, equal_nan=True)
    else:
        torch.testing.assert_close(got, want, equal_nan=True)


# ---- avg_pool ----

AVG_PARAMS = [  # kernel, stride, padding, ceil_mode, count_include_pad, divisor
    ([3], [], [1], False, True, None),
    ([3, 2], [2, 1], [1, 1], True, True, None),
    ([3, 2], [2, 1], [1, 1], True, False, None),
    ([2, 3], [2, 2], [0, 1], False, False, 5),
    ([2, 2], [3, 3], [1, 0], True, True, -3),
]


def run_avg(shims, spatial, x, k, s, p, ceil, cip, div):
    device = x.device.type
    (r,) = out_handles(1)
    ka, kn = ints(k)
    sa, sn = ints(s)
    pa, pn = ints(p)
    d = ctypes.byref(ctypes.c_int64(div)) if div is not None else None
    shims.call(f"aoti_torch_{device}_avg_pool{spatial}d", shims.handle(x), ka, kn, sa, sn, pa, pn,
               ctypes.c_int32(ceil), ctypes.c_int32(cip), d, ctypes.byref(r))
    return shims.tensor(r, device)


def expand3(v, spatial):
    return v if len(v) != spatial - 1 else v + v[-1:]


@pytest.mark.parametrize("device", devices())
@pytest.mark.parametrize("spatial", [2, 3])
@pytest.mark.parametrize("dtype", FLOATS + [torch.int64])
@pytest.mark.parametrize("layout,shape", [("contig", "batched"), ("cl", "batched"), ("T", "unbatched"),
                                          ("contig", "empty")])
def test_avg_pool(shims, device, spatial, dtype, layout, shape):
    need(shims, f"aoti_torch_{device}_avg_pool{spatial}d")
    for params in AVG_PARAMS:
        check_avg(shims, spatial, dtype, layout, shape, params, device)


def check_avg(shims, spatial, dtype, layout, shape, params, device="cpu"):
    k, s, p, ceil, cip, div = params
    if spatial == 3:
        k, s, p = [expand3(v, 3) if v else v for v in (k, s, p)]
    sizes = {"batched": (2, 3, 7, 6), "unbatched": (3, 7, 6), "empty": (0, 3, 7, 6)}[shape]
    if spatial == 3:
        sizes = sizes[:-2] + (5,) + sizes[-2:]
    x = make(sizes, dtype, layout, device=device)
    try:
        want = A.avg_pool2d(x, k, s, p, ceil, cip, div) if spatial == 2 else \
            A.avg_pool3d(x, k, s, p, ceil, cip, div)
    except (RuntimeError, NotImplementedError) as e:
        with pytest.raises(Exception):
            run_avg(shims, spatial, x, k, s, p, ceil, cip, div)
        return
    same(run_avg(shims, spatial, x, k, s, p, ceil, cip, div), want)


# ---- max_pool_with_indices ----

MAX_PARAMS = [  # kernel, stride, padding, dilation, ceil_mode
    ([3], [], [1], [1], False),
    ([3, 2], [2, 1], [1, 1], [1, 2], True),
    ([2, 3], [1, 2], [0, 1], [2, 1], False),
    ([3, 3], [2, 2], [1, 1], [1, 1], True),
]


def run_max(shims, spatial, x, k, s, p, d, ceil):
    device = x.device.type
    v, i = out_handles(2)
    args = [*ints(k), *ints(s), *ints(p), *ints(d)]
    shims.call(f"aoti_torch_{device}_max_pool{spatial}d_with_indices", shims.handle(x), *args, ctypes.c_int32(ceil),
               ctypes.byref(v), ctypes.byref(i))
    return shims.tensor(v, device), shims.tensor(i, device)


@pytest.mark.parametrize("device", devices())
@pytest.mark.parametrize("spatial", [2, 3])
@pytest.mark.parametrize("dtype", FLOATS + INTS)
@pytest.mark.parametrize("layout,shape", [("contig", "batched"), ("cl", "batched"), ("T", "unbatched"),
                                          ("contig", "empty"), ("cl", "unbatched")])
def test_max_pool(shims, device, spatial, dtype, layout, shape):
    need(shims, f"aoti_torch_{device}_max_pool{spatial}d_with_indices")
    if device == "cpu" and layout == "cl" and shape == "unbatched":
        # torch's CPU max_pool3d keeps this layout too; aotirt's CPU backend
        # does not yet.
        pytest.skip("unbatched channels-last inputs are only checked on CUDA")
    for params in MAX_PARAMS:
        check_max(shims, spatial, dtype, layout, shape, params, device)


def check_max(shims, spatial, dtype, layout, shape, params, device="cpu"):
    k, s, p, d, ceil = params
    if spatial == 3:
        k, s, p, d = [expand3(v, 3) if v else v for v in (k, s, p, d)]
    sizes = {"batched": (2, 3, 7, 6), "unbatched": (3, 7, 6), "empty": (0, 3, 7, 6)}[shape]
    if spatial == 3:
        sizes = sizes[:-2] + (5,) + sizes[-2:]
    if shape == "unbatched" and layout == "cl":
        # An unbatched input laid out as a channels-last batch of one, which
        # torch's CUDA max_pool3d keeps in its outputs.
        x = make((1,) + sizes, dtype, "cl", nan=True, device=device)[0]
    else:
        x = make(sizes, dtype, layout, nan=True, device=device)
    fn = A.max_pool2d_with_indices if spatial == 2 else A.max_pool3d_with_indices
    try:
        wv, wi = fn(x, k, s, p, d, ceil)
    except (RuntimeError, NotImplementedError) as e:
        if device == "cpu":
            # torch's channels-last 3-d kernel keeps integer indices in the
            # input's own dtype and refuses planes larger than it holds.
            assert "numeric_limits<integer_t>" in str(e)
        else:
            # torch's CUDA kernels take floating dtypes only.
            with pytest.raises(Exception):
                run_max(shims, spatial, x, k, s, p, d, ceil)
        return
    gv, gi = run_max(shims, spatial, x, k, s, p, d, ceil)
    same(gv, wv)
    same(gi, wi)


@pytest.mark.parametrize("device", devices())
def test_max_pool_nan_and_all_lowest(shims, device):
    need(shims, f"aoti_torch_{device}_max_pool2d_with_indices")
    x = torch.tensor([[[[1., float("nan"), 3., float("nan"), 2.]]]], device=device)
    for got, want in zip(run_max(shims, 2, x, [1, 5], [1, 1], [0, 0], [1, 1], False),
                         A.max_pool2d_with_indices(x, [1, 5], [1, 1], [0, 0], [1, 1], False)):
        same(got, want)
    x = torch.full((1, 1, 4, 4), float("-inf"), device=device)
    for got, want in zip(run_max(shims, 2, x, [2, 2], [2, 2], [1, 1], [1, 1], False),
                         A.max_pool2d_with_indices(x, [2, 2], [2, 2], [1, 1], [1, 1], False)):
        same(got, want)
    if device != "cpu":
        return  # torch's CUDA max pooling takes floating dtypes only
    x = torch.full((1, 1, 4, 4, 4), -128, dtype=torch.int8)
    for got, want in zip(run_max(shims, 3, x, [2, 2, 2], [2, 2, 2], [1, 1, 1], [1, 1, 1], False),
                         A.max_pool3d_with_indices(x, [2, 2, 2], [2, 2, 2], [1, 1, 1], [1, 1, 1], False)):
        same(got, want)


# ---- adaptive pooling ----

def run_adaptive(shims, name, x, osize):
    device = x.device.type
    oa, on = ints(osize)
    if "max" in name:
        v, i = out_handles(2)
        shims.call(f"aoti_torch_{device}_{name}", shims.handle(x), oa, on, ctypes.byref(v), ctypes.byref(i))
        return shims.tensor(v, device), shims.tensor(i, device)
    (r,) = out_handles(1)
    shims.call(f"aoti_torch_{device}_{name}", shims.handle(x), oa, on, ctypes.byref(r))
    return shims.tensor(r, device)


ADAPTIVE = {"_adaptive_avg_pool2d": 2, "_adaptive_avg_pool3d": 3, "adaptive_max_pool2d": 2,
            "adaptive_max_pool3d": 3}


@pytest.mark.parametrize("device", devices())
@pytest.mark.parametrize("name", list(ADAPTIVE))
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("layout,shape", [("contig", "batched"), ("cl", "batched"), ("T", "unbatched"),
                                          ("contig", "empty")])
def test_adaptive_pool(shims, device, name, dtype, layout, shape):
    need(shims, f"aoti_torch_{device}_{name}")
    for osize in ([3, 4], [7, 2], [1, 1], [0, 2], [9, 8]):
        check_adaptive(shims, name, dtype, layout, shape, osize, device)


def check_adaptive(shims, name, dtype, layout, shape, osize, device="cpu"):
    spatial = ADAPTIVE[name]
    sizes = {"batched": (2, 3, 7, 6), "unbatched": (3, 7, 6), "empty": (0, 3, 7, 6)}[shape]
    if spatial == 3:
        sizes = sizes[:-2] + (5,) + sizes[-2:]
        osize = [2] + osize
    x = make(sizes, dtype, layout, nan="max" in name, device=device)
    want = getattr(A, name)(x, osize)
    got = run_adaptive(shims, name, x, osize)
    if isinstance(want, tuple):
        same(got[0], want[0])
        same(got[1], want[1])
    else:
        same(got, want)


@pytest.mark.parametrize("device", devices())
def test_adaptive_avg_pool_long_windows(shims, device):
    # Long windows show the accumulation type: float for the 2-d kernel, the
    # storage type for torch's 3-d CPU one (float for its CUDA one).
    need(shims, f"aoti_torch_{device}__adaptive_avg_pool3d")
    need(shims, f"aoti_torch_{device}__adaptive_avg_pool2d")
    for dtype in (torch.bfloat16, torch.float16):
        x = make((1, 2, 3, 4, 300), dtype, device=device)
        same(run_adaptive(shims, "_adaptive_avg_pool3d", x, [1, 2, 1]), A._adaptive_avg_pool3d(x, [1, 2, 1]))
        x = make((2, 3, 5, 300), dtype, device=device)
        same(run_adaptive(shims, "_adaptive_avg_pool2d", x, [2, 1]), A._adaptive_avg_pool2d(x, [2, 1]))
        x = x.contiguous(memory_format=torch.channels_last)
        same(run_adaptive(shims, "_adaptive_avg_pool2d", x, [2, 1]), A._adaptive_avg_pool2d(x, [2, 1]))


# ---- fractional_max_pool ----

def run_frac(shims, spatial, x, k, osize, samples):
    device = x.device.type
    v, i = out_handles(2)
    shims.call(f"aoti_torch_{device}_fractional_max_pool{spatial}d", shims.handle(x), *ints(k), *ints(osize),
               shims.handle(samples), ctypes.byref(v), ctypes.byref(i))
    return shims.tensor(v, device), shims.tensor(i, device)


@pytest.mark.parametrize("device", devices())
@pytest.mark.parametrize("spatial", [2, 3])
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("layout,shape", [("contig", "batched"), ("cl", "batched"), ("T", "unbatched"),
                                          ("contig", "empty")])
def test_fractional_max_pool(shims, device, spatial, dtype, layout, shape):
    need(shims, f"aoti_torch_{device}_fractional_max_pool{spatial}d")
    for k, osize in (([2, 3], [4, 3]), ([3, 2], [5, 5]), ([1, 1], [7, 6]), ([0, 2], [3, 2]), ([2, 2], [3, 3])):
        check_fractional(shims, spatial, dtype, layout, shape, k, osize, device)


def check_fractional(shims, spatial, dtype, layout, shape, k, osize, device="cpu"):
    sizes = {"batched": (2, 3, 7, 6), "unbatched": (3, 7, 6), "empty": (0, 3, 7, 6)}[shape]
    if spatial == 3:
        sizes = sizes[:-2] + (5,) + sizes[-2:]
        k, osize = [2] + k, [3] + osize
    x = make(sizes, dtype, layout, nan=True, device=device)
    batch = sizes[0] if len(sizes) == spatial + 2 else 1
    g = torch.Generator().manual_seed(5)
    samples = torch.rand(batch + 1, sizes[-spatial - 1], spatial, generator=g).to(dtype).to(device)
    fn = A.fractional_max_pool2d if spatial == 2 else A.fractional_max_pool3d
    try:
        wv, wi = fn(x, k, osize, samples)
    except RuntimeError as e:
        # torch's 3-d size check is strict: the last window may not end at
        # the input's edge. aotirt refuses the same inputs.
        assert "too large relative to input" in str(e)
        with pytest.raises(Exception):
            run_frac(shims, spatial, x, k, osize, samples)
        return
    gv, gi = run_frac(shims, spatial, x, k, osize, samples)
    same(gv, wv)
    same(gi, wi)


# ---- max_unpool ----

def run_unpool(shims, spatial, x, ind, osize, stride=None, pad=None):
    device = x.device.type
    (r,) = out_handles(1)
    if spatial == 2:
        shims.call(f"aoti_torch_{device}_max_unpool2d", shims.handle(x), shims.handle(ind), *ints(osize),
                   ctypes.byref(r))
    else:
        shims.call(f"aoti_torch_{device}_max_unpool3d", shims.handle(x), shims.handle(ind), *ints(osize),
                   *ints(stride), *ints(pad), ctypes.byref(r))
    return shims.tensor(r, device)


@pytest.mark.parametrize("device", devices())
@pytest.mark.parametrize("spatial", [2, 3])
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("layout,shape", [("contig", "batched"), ("cl", "batched"), ("T", "unbatched"),
                                          ("contig", "empty")])
def test_max_unpool(shims, device, spatial, dtype, layout, shape):
    need(shims, f"aoti_torch_{device}_max_unpool{spatial}d")
    sizes = {"batched": (2, 3, 4, 3), "unbatched": (3, 4, 3), "empty": (0, 3, 4, 3)}[shape]
    osize = [9, 7]
    if spatial == 3:
        sizes = sizes[:-2] + (2,) + sizes[-2:]
        osize = [4] + osize
    x = make(sizes, dtype, layout)
    g = torch.Generator().manual_seed(3)
    plane = 1
    for o in osize:
        plane *= o
    per_plane = 1
    for d in sizes[-spatial:]:
        per_plane *= d
    planes = x.numel() // per_plane if per_plane else 0
    # Distinct indices within a plane: torch leaves the winner of a shared
    # index unspecified (its threads may split a plane).
    ind = torch.stack([torch.randperm(plane, generator=g)[:per_plane] for _ in range(planes)]) if planes else \
        torch.zeros(0, dtype=torch.long)
    ind = ind.reshape(sizes)
    if layout == "cl":
        ind = ind.contiguous(memory_format=torch.channels_last if spatial == 2 else torch.channels_last_3d)
    x, ind = x.to(device), ind.to(device)
    if spatial == 2:
        want = A.max_unpool2d(x, ind, osize)
        got = run_unpool(shims, 2, x, ind, osize)
    else:
        want = A.max_unpool3d(x, ind, osize, [1, 2, 2], [0, 1, 1])
        got = run_unpool(shims, 3, x, ind, osize, [1, 2, 2], [0, 1, 1])
    same(got, want)


@pytest.mark.parametrize("device", devices())
def test_max_unpool_roundtrip_and_empty_output(shims, device):
    need(shims, f"aoti_torch_{device}_max_unpool2d")
    x = make((2, 3, 8, 6), torch.float32, "cl", device=device)
    v, i = A.max_pool2d_with_indices(x, [2, 2], [2, 2], [0, 0], [1, 1], False)
    same(run_unpool(shims, 2, v, i, [8, 6]), A.max_unpool2d(v, i, [8, 6]))
    # An empty output reads no index, as in torch.
    same(run_unpool(shims, 2, v, i, [0, 6]), A.max_unpool2d(v, i, [0, 6]))


# ---- embedding_bag ----

def run_bag(shims, name, w, idx, off, mode, psw, ilo, pad):
    outs = out_handles(4)
    if name == "aoti_torch__embedding_bag":
        p = shims.handle(psw) if psw is not None else None
        shims.call(name, shims.handle(w), shims.handle(idx), shims.handle(off), ctypes.c_int32(0),
                   ctypes.c_int32(mode), ctypes.c_int32(0), p, ctypes.c_int32(ilo), ctypes.c_int32(pad),
                   *[ctypes.byref(o) for o in outs])
    else:
        p = ctypes.byref(shims.handle(psw)) if psw is not None else None
        shims.call(name, shims.handle(w), shims.handle(idx), shims.handle(off), ctypes.c_int32(0),
                   ctypes.c_int64(mode), ctypes.c_int32(0), p, ctypes.c_int32(ilo), ctypes.c_int64(pad),
                   *[ctypes.byref(o) for o in outs])
    return [shims.tensor(o) for o in outs]


BAG_OPS = ["aoti_torch_cpu__embedding_bag", "aoti_torch_cpu__embedding_bag_forward_only",
           "aoti_torch__embedding_bag"]


def eager_bag(name, *args):
    fn = A._embedding_bag_forward_only if "forward_only" in name else A._embedding_bag
    return fn(*args)


def bag_cases():
    for name in BAG_OPS:
        for variant in ["plain", "weights_T", "int32", "mixed", "psw"]:
            # The variants need only one of the three entry points.
            if variant != "plain" and name != BAG_OPS[0]:
                continue
            for mode in ([0] if variant == "psw" else [0, 1, 2]):
                yield pytest.param(name, variant, mode, id=f"{name[11:]}-{variant}-m{mode}")


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name,variant,mode", list(bag_cases()))
def test_embedding_bag(shims, name, variant, mode, dtype):
    need(shims, name)
    for ilo in (False, True):
        for pad in (-1, 2):
            check_bag(shims, name, dtype, mode, ilo, pad, variant)


def check_bag(shims, name, dtype, mode, ilo, pad, variant):
    g = torch.Generator().manual_seed(11)
    w = torch.randn(10, 5, generator=g, dtype=torch.float64).to(dtype)
    if variant == "weights_T":
        w = w.t().contiguous().t()
    idx = torch.randint(0, 10, (23,), generator=g)
    idx[3] = 2  # at least one padding entry
    # An empty bag, and with include_last_offset a last offset short of the end.
    off = torch.tensor([0, 4, 4, 9, 15] + ([20] if ilo else []))
    if variant == "int32":
        idx, off = idx.int(), off.int()
    elif variant == "mixed":
        idx = idx.int()
    psw = torch.randn(23, generator=g, dtype=torch.float64).to(dtype) if variant == "psw" else None
    want = eager_bag(name, w, idx, off, False, mode, False, psw, ilo, pad)
    got = run_bag(shims, name, w, idx, off, mode, psw, ilo, pad)
    # Weighted sums may round differently (torch's kernels may fuse the
    # multiply-add); everything else is exact.
    same(got[0], want[0], exact=psw is None)
    for k in (1, 2, 3):
        same(got[k], want[k])


@pytest.mark.parametrize("name", BAG_OPS)
def test_embedding_bag_edges(shims, name):
    need(shims, name)
    w = make((6, 3), torch.float32)
    # No indices; max mode's NaNs never win (torch compares with >).
    for mode in (0, 1, 2):
        idx = torch.tensor([], dtype=torch.long)
        off = torch.tensor([0, 0])
        want = eager_bag(name, w, idx, off, False, mode, False, None, False, -1)
        for got, ref in zip(run_bag(shims, name, w, idx, off, mode, None, False, -1), want):
            same(got, ref)
    wn = torch.tensor([[1., float("nan")], [float("nan"), 2.]])
    idx, off = torch.tensor([0, 1, 1, 0]), torch.tensor([0, 2])
    want = eager_bag(name, wn, idx, off, False, 2, False, None, False, -1)
    for got, ref in zip(run_bag(shims, name, wn, idx, off, 2, None, False, -1), want):
        same(got, ref)
    # Mean and sum with no bags at all.
    for mode in (0, 1):
        off = torch.tensor([], dtype=torch.long)
        idx = torch.tensor([1, 2, 3])
        want = eager_bag(name, w, idx, off, False, mode, False, None, False, -1)
        for got, ref in zip(run_bag(shims, name, w, idx, off, mode, None, False, -1), want):
            same(got, ref)


def test_embedding_bag_parallel_sizes(shims):
    need(shims, "aoti_torch_cpu__embedding_bag")
    g = torch.Generator().manual_seed(2)
    w = torch.randn(1000, 64, generator=g)
    idx = torch.randint(0, 1000, (4000,), generator=g)
    off = torch.arange(0, 4000, 7)
    for mode in (0, 1, 2):
        want = A._embedding_bag(w, idx, off, False, mode, False, None, False, -1)
        for got, ref in zip(run_bag(shims, "aoti_torch_cpu__embedding_bag", w, idx, off, mode, None, False, -1),
                            want):
            same(got, ref)


# torch's CUDA embedding_bag has no fast path and its own auxiliary outputs:
# offset2bag one per index, bag_size one per offset (include_last_offset's
# last entry is never written, nor offset2bag when there are no bags, so
# those are left out of the comparison), max_indices empty unless max.
CUDA_BAG_OPS = ["aoti_torch_cuda__embedding_bag", "aoti_torch_cuda__embedding_bag_forward_only",
                "aoti_torch__embedding_bag"]
ON_GPU = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")


def run_bag_cuda(shims, name, w, idx, off, mode, psw, ilo, pad):
    outs = out_handles(4)
    if name == "aoti_torch__embedding_bag":
        p = shims.handle(psw) if psw is not None else None
        shims.call(name, shims.handle(w), shims.handle(idx), shims.handle(off), ctypes.c_int32(0),
                   ctypes.c_int32(mode), ctypes.c_int32(0), p, ctypes.c_int32(ilo), ctypes.c_int32(pad),
                   *[ctypes.byref(o) for o in outs])
    else:
        p = ctypes.byref(shims.handle(psw)) if psw is not None else None
        shims.call(name, shims.handle(w), shims.handle(idx), shims.handle(off), ctypes.c_int32(0),
                   ctypes.c_int64(mode), ctypes.c_int32(0), p, ctypes.c_int32(ilo), ctypes.c_int64(pad),
                   *[ctypes.byref(o) for o in outs])
    return [shims.tensor(o, "cuda") for o in outs]


def same_bag_cuda(got, want, ilo, psw=None, bags=True):
    same(got[0], want[0], exact=psw is None)
    if bags:
        same(got[1], want[1])
    else:
        assert got[1].dtype == want[1].dtype and got[1].shape == want[1].shape
    if ilo:
        assert got[2].dtype == want[2].dtype and got[2].shape == want[2].shape
        same(got[2][:-1], want[2][:-1])
    else:
        same(got[2], want[2])
    same(got[3], want[3])


def cuda_bag_cases():
    for name in CUDA_BAG_OPS:
        for variant in ["plain", "weights_T", "int32", "mixed", "psw"]:
            if variant != "plain" and name != CUDA_BAG_OPS[0]:
                continue
            for mode in ([0] if variant == "psw" else [0, 1, 2]):
                yield pytest.param(name, variant, mode, id=f"{name[11:]}-{variant}-m{mode}")


@ON_GPU
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name,variant,mode", list(cuda_bag_cases()))
def test_embedding_bag_cuda(shims, name, variant, mode, dtype):
    need(shims, name)
    need(shims, "aoti_torch_cuda__embedding_bag")
    for ilo in (False, True):
        for pad in (-1, 2):
            g = torch.Generator().manual_seed(11)
            w = torch.randn(10, 5, generator=g, dtype=torch.float64).to(dtype)
            if variant == "weights_T":
                w = w.t().contiguous().t()
            idx = torch.randint(0, 10, (23,), generator=g)
            idx[3] = 2
            off = torch.tensor([0, 4, 4, 9, 15] + ([20] if ilo else []))
            if variant == "int32":
                idx, off = idx.int(), off.int()
            elif variant == "mixed":
                idx = idx.int()
            psw = torch.randn(23, generator=g, dtype=torch.float64).to(dtype) if variant == "psw" else None
            w, idx, off = w.cuda(), idx.cuda(), off.cuda()
            psw = psw.cuda() if psw is not None else None
            want = eager_bag(name, w, idx, off, False, mode, False, psw, ilo, pad)
            got = run_bag_cuda(shims, name, w, idx, off, mode, psw, ilo, pad)
            same_bag_cuda(got, want, ilo, psw)


@ON_GPU
@pytest.mark.parametrize("name", CUDA_BAG_OPS)
def test_embedding_bag_cuda_edges(shims, name):
    need(shims, name)
    need(shims, "aoti_torch_cuda__embedding_bag")
    w = make((6, 3), torch.float32).cuda()
    for mode in (0, 1, 2):  # no indices: every bag empty
        idx = torch.tensor([], dtype=torch.long, device="cuda")
        off = torch.tensor([0, 0], device="cuda")
        want = eager_bag(name, w, idx, off, False, mode, False, None, False, -1)
        same_bag_cuda(run_bag_cuda(shims, name, w, idx, off, mode, None, False, -1), want, False)
    wn = torch.tensor([[1., float("nan")], [float("nan"), 2.]], device="cuda")
    idx, off = torch.tensor([0, 1, 1, 0], device="cuda"), torch.tensor([0, 2], device="cuda")
    want = eager_bag(name, wn, idx, off, False, 2, False, None, False, -1)
    same_bag_cuda(run_bag_cuda(shims, name, wn, idx, off, 2, None, False, -1), want, False)
    for mode in (0, 1):  # no bags at all
        off = torch.tensor([], dtype=torch.long, device="cuda")
        idx = torch.tensor([1, 2, 3], device="cuda")
        want = eager_bag(name, w, idx, off, False, mode, False, None, False, -1)
        same_bag_cuda(run_bag_cuda(shims, name, w, idx, off, mode, None, False, -1), want, False, bags=False)
    # Many bags and features: the multi-block path.
    g = torch.Generator().manual_seed(2)
    wl = torch.randn(1000, 64, generator=g).cuda()
    idx = torch.randint(0, 1000, (4000,), generator=g).cuda()
    off = torch.arange(0, 4000, 7).cuda()
    for mode in (0, 1, 2):
        want = eager_bag(name, wl, idx, off, False, mode, False, None, False, -1)
        same_bag_cuda(run_bag_cuda(shims, name, wl, idx, off, mode, None, False, -1), want, False)


@pytest.mark.parametrize("device", devices())
def test_pooling_parallel_sizes(shims, device):
    need(shims, f"aoti_torch_{device}_max_pool2d_with_indices")
    need(shims, f"aoti_torch_{device}_avg_pool2d")
    need(shims, f"aoti_torch_{device}__adaptive_avg_pool2d")
    for layout in ("contig", "cl"):
        x = make((4, 16, 40, 40), torch.float32, layout, nan=True, device=device)
        for got, ref in zip(run_max(shims, 2, x, [3, 3], [2, 2], [1, 1], [1, 1], True),
                            A.max_pool2d_with_indices(x, [3, 3], [2, 2], [1, 1], [1, 1], True)):
            same(got, ref)
    x = make((4, 16, 40, 40), torch.float32, "contig", device=device)
    same(run_avg(shims, 2, x, [3, 3], [2, 2], [1, 1], True, False, None),
         A.avg_pool2d(x, [3, 3], [2, 2], [1, 1], True, False, None))
    # torch's channels-last adaptive average divides whole vectors of
    # channels by the window's area and the rest by height, then width;
    # aotirt follows its AVX2 kernel, so other capabilities may differ by an
    # ulp.
    exact = device != "cpu" or torch.backends.cpu.get_cpu_capability() == "AVX2"
    for dtype in FLOATS:
        for c in (3, 12, 16, 20, 40):
            x = make((2, c, 13, 11), dtype, "cl", device=device)
            same(run_adaptive(shims, "_adaptive_avg_pool2d", x, [3, 2]), A._adaptive_avg_pool2d(x, [3, 2]),
                 exact=exact)
            same(run_adaptive(shims, "_adaptive_avg_pool2d", x, [1, 1]), A._adaptive_avg_pool2d(x, [1, 1]),
                 exact=exact)


@pytest.mark.parametrize("device", devices())
def test_pooling_strided_views(shims, device):
    # Inputs that are views with an offset and gaps (as sliced activations
    # are), large enough for many thread blocks, through every op.
    need(shims, f"aoti_torch_{device}_max_pool3d_with_indices")
    base2 = make((3, 10, 41, 37), torch.float32, nan=True, device=device)
    x2 = base2[:, 1::2, 2:, 1:]
    base3 = make((2, 6, 9, 12, 13), torch.float32, "cl", nan=True, device=device)
    x3 = base3[:, 1:, :, ::2]
    for got, want in zip(run_max(shims, 2, x2, [3, 2], [2, 1], [1, 1], [2, 1], True),
                         A.max_pool2d_with_indices(x2, [3, 2], [2, 1], [1, 1], [2, 1], True)):
        same(got, want)
    for got, want in zip(run_max(shims, 3, x3, [2, 3, 2], [1, 2, 2], [1, 1, 0], [1, 1, 2], False),
                         A.max_pool3d_with_indices(x3, [2, 3, 2], [1, 2, 2], [1, 1, 0], [1, 1, 2], False)):
        same(got, want)
    same(run_avg(shims, 2, x2, [3, 3], [2, 2], [1, 1], True, False, None),
         A.avg_pool2d(x2, [3, 3], [2, 2], [1, 1], True, False, None))
    same(run_avg(shims, 3, x3, [2, 3, 3], [2, 2, 1], [1, 1, 1], True, True, None),
         A.avg_pool3d(x3, [2, 3, 3], [2, 2, 1], [1, 1, 1], True, True, None))
    same(run_adaptive(shims, "_adaptive_avg_pool2d", x2, [7, 5]), A._adaptive_avg_pool2d(x2, [7, 5]))
    same(run_adaptive(shims, "_adaptive_avg_pool3d", x3, [4, 5, 3]), A._adaptive_avg_pool3d(x3, [4, 5, 3]))
    for got, want in zip(run_adaptive(shims, "adaptive_max_pool2d", x2, [7, 5]), A.adaptive_max_pool2d(x2, [7, 5])):
        same(got, want)
    for got, want in zip(run_adaptive(shims, "adaptive_max_pool3d", x3, [4, 5, 3]),
                         A.adaptive_max_pool3d(x3, [4, 5, 3])):
        same(got, want)
    g = torch.Generator().manual_seed(9)
    samples = torch.rand(3, 5, 2, generator=g).to(device)
    for got, want in zip(run_frac(shims, 2, x2, [3, 2], [20, 17], samples),
                         A.fractional_max_pool2d(x2, [3, 2], [20, 17], samples)):
        same(got, want)
    samples3 = torch.rand(2, 5, 3, generator=g).to(device)
    for got, want in zip(run_frac(shims, 3, x3, [2, 2, 3], [6, 4, 8], samples3),
                         A.fractional_max_pool3d(x3, [2, 2, 3], [6, 4, 8], samples3)):
        same(got, want)
    v, i = A.max_pool2d_with_indices(x2, [2, 2], [2, 2], [0, 0], [1, 1], False)
    v, i = v[:, :, ::2], i[:, :, ::2]  # strided values and indices
    same(run_unpool(shims, 2, v, i, [39, 36]), A.max_unpool2d(v, i, [39, 36]))
    v, i = A.max_pool3d_with_indices(x3, [1, 2, 2], [1, 2, 2], [0, 0, 0], [1, 1, 1], False)
    same(run_unpool(shims, 3, v, i, [9, 6, 13], [1, 2, 2], [0, 0, 0]),
         A.max_unpool3d(v, i, [9, 6, 13], [1, 2, 2], [0, 0, 0]))


@pytest.mark.parametrize("device", devices())
def test_pooling_errors(shims, device):
    # Bad arguments fail the shim, with nothing returned.
    need(shims, f"aoti_torch_{device}_avg_pool2d")
    x = make((2, 3, 7, 6), torch.float32, device=device)
    for k, s, p in (([0, 2], [], [0]), ([3, 3], [0], [0]), ([2, 2], [], [2]), ([9, 9], [], [0])):
        with pytest.raises(Exception):
            A.avg_pool2d(x, k, s, p)
        with pytest.raises(Exception):
            run_avg(shims, 2, x, k, s, p, False, True, None)
    with pytest.raises(Exception):
        run_avg(shims, 2, x.reshape(42, 6), [2], [], [0], False, True, None)
    with pytest.raises(Exception):
        run_max(shims, 2, x, [2, 2], [1, 1], [0, 0], [0, 1], False)
    with pytest.raises(Exception):
        run_adaptive(shims, "adaptive_max_pool2d", x, [3])
    with pytest.raises(Exception):
        run_frac(shims, 2, x, [2, 2], [7, 6], torch.rand(2, 3, 2, device=device))
    with pytest.raises(Exception):
        run_frac(shims, 2, x, [2, 2], [3, 3], torch.rand(2, 3, 2, device=device, dtype=torch.float64))
    with pytest.raises(Exception):
        run_unpool(shims, 2, x, torch.zeros(2, 3, 7, 6, dtype=torch.int32, device=device), [9, 9])
    if device != "cpu":
        # Tensors on different devices.
        with pytest.raises(Exception):
            run_frac(shims, 2, x, [2, 2], [3, 3], torch.rand(2, 3, 2))
        with pytest.raises(Exception):
            run_unpool(shims, 2, x, torch.zeros(2, 3, 7, 6, dtype=torch.long), [14, 12])
