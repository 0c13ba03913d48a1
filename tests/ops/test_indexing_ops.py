"""Conformance of the indexing ops (index.Tensor, index_put, index_reduce,
scatter src/value/reduce out=, masked_select, masked_scatter, nonzero,
nonzero_static, aoti_torch_nonzero) with eager PyTorch on the same device:
dtypes, contiguous and transposed inputs, optional (null) indices, bool
masks, broadcast index tensors, negative indices, duplicates (accumulated),
0-d and 0-size tensors, out= tensors that are resized or aliased with self.
Values must be equal (float16/bfloat16 reductions within a rounding step);
sizes and the strides of every dim longer than 1 must match torch's.
"""
from __future__ import annotations

import ctypes

import pytest
import torch

from shim_harness import devices, provided
from shim_harness import Handle, ShimError, Shims, library_path, out_handles

pytestmark = pytest.mark.skipif(not library_path().exists(),
                                reason=f"{library_path()} not built (scripts/build.sh)")

ALL_DTYPES = [torch.float32, torch.float64, torch.bfloat16, torch.float16, torch.int64, torch.int32,
              torch.int16, torch.int8, torch.uint8, torch.bool]
HALF = (torch.float16, torch.bfloat16)


def need(shims, name):
    if not provided(shims, name):
        pytest.skip(f"{name} is not exported")


def make(shape, dtype, device="cpu", strided=False, seed=0):
    g = torch.Generator().manual_seed(seed)
    if strided:  # the transpose of a contiguous tensor: same shape, other strides
        shape = tuple(reversed(shape))
    if dtype == torch.bool:
        t = torch.rand(shape, generator=g) > 0.5
    elif dtype.is_floating_point:
        t = (torch.randn(shape, generator=g) * 2).to(dtype)
    elif dtype == torch.uint8:
        t = torch.randint(0, 9, shape, generator=g).to(dtype)
    else:
        t = torch.randint(-6, 7, shape, generator=g).to(dtype)
    if strided:
        t = t.permute(*reversed(range(t.dim())))
    return t.to(device)


def check(got, want, tol=False):
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.dtype == want.dtype
    if want.numel():
        for size, a, b in zip(want.shape, got.stride(), want.stride()):
            if size > 1:
                assert a == b, (got.stride(), want.stride())
    if tol and want.dtype in HALF:
        torch.testing.assert_close(got.float(), want.float(), rtol=1e-2, atol=1e-2, equal_nan=True)
    elif tol and want.dtype.is_floating_point:
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5, equal_nan=True)
    else:
        torch.testing.assert_close(got, want, rtol=0, atol=0, equal_nan=True)


def index_list(shims, indices):
    """A const AtenTensorHandle** list: null for None, else a pointer to a handle."""
    arr = (ctypes.POINTER(Handle) * max(len(indices), 1))()
    boxes = []
    for i, t in enumerate(indices):
        if t is not None:
            box = shims.handle(t)
            boxes.append(box)
            arr[i] = ctypes.pointer(box)
    return arr, boxes


def run_index(shims, device, x, indices):
    arr, boxes = index_list(shims, indices)
    (r,) = out_handles(1)
    shims.call(f"aoti_torch_{device}_index_Tensor", shims.handle(x), arr, ctypes.c_int64(len(indices)),
               ctypes.byref(r))
    return shims.tensor(r, device)


def run_index_put(shims, device, x, indices, values, accumulate):
    arr, boxes = index_list(shims, indices)
    (r,) = out_handles(1)
    shims.call(f"aoti_torch_{device}_index_put", shims.handle(x), arr, ctypes.c_int64(len(indices)),
               shims.handle(values), ctypes.c_int32(int(accumulate)), ctypes.byref(r))
    return shims.tensor(r, device)


def L(*v, dtype=torch.int64):
    return torch.tensor(v, dtype=dtype)


# (self shape, strided, indices) for index.Tensor / index_put.
INDEX_CASES = [
    ((5, 4), False, [L(0, 4, -1, 2)]),
    ((5, 4), True, [L(0, 4, -1, 2)]),
    ((5, 4), True, [None, L(3, -4)]),
    ((2, 3, 4), False, [None, L(2, 0), L(1, -1)]),                # adjacent, in the middle
    ((2, 3, 4), True, [L(1, 0), None, L(3, 2)]),                  # apart: B goes first
    ((2, 3, 4), False, [L(1, 0).view(2, 1), None, L(3, 2, 0)]),  # apart and broadcast
    ((2, 3, 4), False, [None, L(0, 2).view(2, 1), L(1, 3, 0)]),  # adjacent, broadcast
    ((2, 3, 4), True, [None, None, L(1, 3, 0, 1, dtype=torch.int32)]),
    ((2, 3, 4), False, [torch.tensor([True, False])]),
    ((2, 3, 4), True, [None, torch.tensor([[True, False, True, True]] * 3)]),
    ((2, 3, 4), False, [torch.tensor([[True, False, True], [False, False, True]]), L(0, -1, 2)]),
    ((2, 3, 4), False, [L(1), None, L(2, 3)]),                      # a 0-d index
    ((4, 3), False, [torch.zeros(0, dtype=torch.int64)]),           # no positions
    ((0, 3), False, [None, L(1, 2)]),                               # 0-size self
    ((6,), True, [torch.zeros(6, dtype=torch.bool)]),               # empty mask
]


@pytest.mark.parametrize("device", devices())
@pytest.mark.parametrize("case", range(len(INDEX_CASES)))
def test_index_tensor(shims, device, case):
    need(shims, f"aoti_torch_{device}_index_Tensor")
    shape, strided, idx = INDEX_CASES[case]
    x = make(shape, torch.float32, device, strided, seed=case)
    idx = [None if i is None else i.to(device) for i in idx]
    check(run_index(shims, device, x, idx), torch.ops.aten.index.Tensor(x, idx))


@pytest.mark.parametrize("device", devices())
@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_index_tensor_dtypes(shims, device, dtype):
    need(shims, f"aoti_torch_{device}_index_Tensor")
    x = make((3, 4, 5), dtype, device, strided=True)
    idx = [None, L(3, -1, 0).to(device), L(4, 0, 2).to(device)]
    check(run_index(shims, device, x, idx), torch.ops.aten.index.Tensor(x, idx))


def values_for(x, idx, dtype, device, seed=1, broadcast=False):
    shape = torch.ops.aten.index.Tensor(x, idx).shape
    if broadcast and len(shape):
        shape = shape[-1:]
    return make(tuple(shape), dtype, device, seed=seed)


@pytest.mark.parametrize("device", devices())
@pytest.mark.parametrize("accumulate", [False, True])
@pytest.mark.parametrize("case", range(len(INDEX_CASES)))
def test_index_put(shims, device, accumulate, case):
    need(shims, f"aoti_torch_{device}_index_put")
    shape, strided, idx = INDEX_CASES[case]
    x = make(shape, torch.float32, device, strided, seed=case)
    idx = [None if i is None else i.to(device) for i in idx]
    v = values_for(x, idx, torch.float32, device, broadcast=case % 2 == 1)
    got = run_index_put(shims, device, x, idx, v, accumulate)
    check(got, torch.ops.aten.index_put(x, idx, v, accumulate), tol=accumulate)


@pytest.mark.parametrize("device", devices())
@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("accumulate", [False, True])
def test_index_put_duplicates(shims, device, dtype, accumulate):
    need(shims, f"aoti_torch_{device}_index_put")
    x = make((6, 3), dtype, device, strided=True)
    idx = [L(1, -5, 4, 1, 1, 0).to(device)]  # 1 three times, -5 == 1 too
    v = make((6, 3), dtype, device, seed=3)
    if not accumulate:  # duplicates without accumulate are unordered in torch
        idx = [L(1, 5, 4, 2, 0, 3).to(device)]
    got = run_index_put(shims, device, x, idx, v, accumulate)
    check(got, torch.ops.aten.index_put(x, idx, v, accumulate), tol=accumulate)


@pytest.mark.parametrize("device", devices())
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_index_put_kv_cache(shims, device, dtype):
    """The KV-cache update: cache[:, :, pos] = new, over many elements."""
    need(shims, f"aoti_torch_{device}_index_put")
    cache = make((2, 8, 128, 64), dtype, device)
    pos = torch.arange(40, 80).to(device)  # enough elements for the threads
    new = make((2, 8, 40, 64), dtype, device, seed=2)
    for acc in (False, True):
        got = run_index_put(shims, device, cache, [None, None, pos], new, acc)
        check(got, torch.ops.aten.index_put(cache, [None, None, pos], new, acc), tol=acc)


@pytest.mark.parametrize("device", devices())
def test_index_put_lone_mask_scalar(shims, device):
    """One value held on the host under a lone bool mask is torch's
    masked_fill: any dtype. On the device it is index_put's own path, which
    wants the dtypes equal."""
    need(shims, f"aoti_torch_{device}_index_put")
    mask = torch.tensor([[True, False, True], [False, True, True]], device=device)
    for dtype, vdtype in ((torch.int32, torch.float64), (torch.float32, torch.int64), (torch.bool, torch.float32),
                          (torch.float16, torch.float32)):
        x = make((2, 3), dtype, device, strided=True)
        for vdev in dict.fromkeys(["cpu", device]):
            v = torch.tensor([-2.75], dtype=vdtype, device=vdev)
            try:
                want = torch.ops.aten.index_put(x, [mask], v, False)
            except RuntimeError:
                with pytest.raises(ShimError):
                    run_index_put(shims, device, x, [mask], v, False)
                continue
            check(run_index_put(shims, device, x, [mask], v, False), want)
    v = v.cpu()  # the masked_fill path again, for the mask refusal below
    with pytest.raises(ShimError):  # a uint8 mask there is refused, as torch refuses it
        run_index_put(shims, device, x, [mask.to(torch.uint8)], v.to(x.dtype), False)
    # Elsewhere a uint8 mask is a mask.
    x = make((2, 3), torch.float32, device)
    v = torch.arange(4.0, device=device)
    check(run_index_put(shims, device, x, [mask.to(torch.uint8)], v, False),
          torch.ops.aten.index_put(x, [mask.to(torch.uint8)], v, False))


@pytest.mark.parametrize("device", devices())
def test_index_gather_large(shims, device):
    """An embedding-style gather past the parallel threshold."""
    need(shims, f"aoti_torch_{device}_index_Tensor")
    table = make((1000, 48), torch.float32, device)
    ids = torch.randint(-1000, 1000, (30, 40), generator=torch.Generator().manual_seed(0)).to(device)
    check(run_index(shims, device, table, [ids]), torch.ops.aten.index.Tensor(table, [ids]))
    check(run_index(shims, device, table.t(), [None, ids]), torch.ops.aten.index.Tensor(table.t(), [None, ids]))


@pytest.mark.parametrize("device", devices())
def test_index_errors(shims, device):
    need(shims, f"aoti_torch_{device}_index_Tensor")
    x = make((3, 4), torch.float32, device)
    for idx in ([L(3).to(device)], [None, L(-5).to(device)], [L(0, 1).to(device), L(0, 1, 2).to(device)],
                [torch.tensor([0.0], device=device)], [None, None, L(0).to(device)],
                [torch.ones(2, dtype=torch.bool, device=device)]):
        with pytest.raises(ShimError):
            run_index(shims, device, x, idx)
        with pytest.raises(ShimError):
            run_index_put(shims, device, x, idx, torch.ones((), device=device), True)
    with pytest.raises(ShimError):  # values must have self's dtype
        run_index_put(shims, device, x, [L(0).to(device)], torch.ones(4, dtype=torch.float64, device=device), False)
    with pytest.raises(ShimError):  # values must broadcast to the result
        run_index_put(shims, device, x, [L(0, 1).to(device)], torch.ones(3, 4, device=device), False)
    # A bad index held on the device is named, and leaves nothing behind:
    # the next calls on the same stream are clean.
    for _ in range(2):
        with pytest.raises(ShimError, match="index 7 is out of bounds for dimension 1 with size 4"):
            run_index(shims, device, x, [None, L(1, 7).to(device)])
        check(run_index(shims, device, x, [None, L(1, 3).to(device)]), x[:, [1, 3]])
        with pytest.raises(ShimError, match="index -9 is out of bounds for dimension 0 with size 3"):
            run_index_put(shims, device, x, [L(-9).to(device)], torch.ones((), device=device), False)
        check(run_index_put(shims, device, x, [L(2).to(device)], torch.ones((), device=device), True),
              torch.ops.aten.index_put(x, [L(2).to(device)], torch.ones((), device=device), True))


@pytest.mark.parametrize("device", devices())
def test_bad_device_index_inside_a_run(shims, device):
    # Inside a run (as a model run brackets its library's calls) CUDA reads
    # its bounds flags once, at the run's end: the call with a bad index
    # returns, skips the bad positions (a gather gives zero there), and the
    # run fails naming the first bad index. CPU checks at the call.
    need(shims, f"aoti_torch_{device}_index_put")
    x = make((3, 4), torch.float32, device)
    five = torch.full((), 5.0, device=device)
    if device == "cpu":
        with pytest.raises(ShimError, match="index_put failed: .*index -9 is out of bounds for dimension 0"):
            with shims.run(device):
                run_index_put(shims, device, x, [L(0, -9).to(device)], five, False)
        return
    with pytest.raises(ShimError, match="aotirt_run_end failed: .*index -9 is out of bounds for dimension 0 with "
                                        "size 3"):
        with shims.run(device):
            want = x.clone()
            want[0] = 5.0
            check(run_index_put(shims, device, x, [L(0, -9).to(device)], five, False), want)
            got = run_index(shims, device, x, [None, L(1, 7).to(device)])
            assert torch.equal(got[:, 0], x[:, 1])
            assert torch.all(got[:, 1] == 0)
    # Scatter's flag is deferred as well.
    src = make((3, 4), torch.float32, device)
    with pytest.raises(ShimError, match="aotirt_run_end failed: .*index 3 is out of bounds for dimension 0 with "
                                        "size 3"):
        with shims.run(device):
            out = torch.empty(3, 4, device=device)
            run_scatter(shims, device, "src", out, x, 0, L(3, 0, 0, 0).view(1, 4).to(device), src)
    # The next runs are clean.
    with shims.run(device):
        check(run_index_put(shims, device, x, [L(2).to(device)], five, True),
              torch.ops.aten.index_put(x, [L(2).to(device)], five, True))
    # Past the 128 slots a run holds, calls check at once.
    with pytest.raises(ShimError, match="aoti_torch_cuda_index_put failed: .*index -9 is out of bounds"):
        with shims.run(device):
            for _ in range(128):
                run_index_put(shims, device, x, [L(1).to(device)], five, False)
            run_index_put(shims, device, x, [L(-9).to(device)], five, False)
    # An error inside the run's body ends the run too.
    with pytest.raises(ZeroDivisionError):
        with shims.run(device):
            run_index_put(shims, device, x, [L(-9).to(device)], five, False)
            1 / 0
    with shims.run(device):
        check(run_index(shims, device, x, [L(2, 0).to(device)]), x[[2, 0]])


def test_run_bracket_refuses_bad_arguments(shims):
    begin, end = shims.fn("aotirt_run_begin"), shims.fn("aotirt_run_end")
    begin.argtypes = [ctypes.c_int32, ctypes.c_int32, ctypes.POINTER(ctypes.c_void_p)]
    end.argtypes = [ctypes.c_void_p]
    r = ctypes.c_void_p()
    assert begin(42, 0, ctypes.byref(r)) == 1
    assert "42" in shims.last_error() or "device" in shims.last_error()
    assert begin(0, 0, None) == 1
    assert "'run' is null" in shims.last_error()
    assert end(None) == 1
    assert "'run' is null" in shims.last_error()
    assert begin(0, 0, ctypes.byref(r)) == 0 and r.value
    assert end(r) == 0


# ---------------------------------------------------------------------------
# scatter

def run_scatter(shims, device, kind, out, x, dim, index, src, reduce=None, include_self=True):
    oh = shims.handle(out)
    if kind == "src":
        shims.call(f"aoti_torch_{device}_scatter_src_out", oh, shims.handle(x), ctypes.c_int64(dim),
                   shims.handle(index), shims.handle(src))
    elif kind == "value":
        shims.call(f"aoti_torch_{device}_scatter_value_out", oh, shims.handle(x), ctypes.c_int64(dim),
                   shims.handle(index), ctypes.c_double(src))
    else:
        shims.call(f"aoti_torch_{device}_scatter_reduce_two_out", oh, shims.handle(x), ctypes.c_int64(dim),
                   shims.handle(index), shims.handle(src), reduce.encode(), ctypes.c_int32(int(include_self)))
    return shims.tensor(oh, device)


def scatter_index(shape, dim, limit, device, unique, strided=False, seed=0, dtype=torch.int64):
    """An index of |shape| with values in [0, limit) (distinct along dim when |unique|)."""
    g = torch.Generator().manual_seed(seed)
    if len(shape) == 0 or 0 in shape:
        t = torch.zeros(shape, dtype=torch.int64)
    elif unique:
        n = shape[dim]
        lines = torch.Size(shape).numel() // n
        perm = torch.stack([torch.randperm(limit, generator=g)[:n] for _ in range(lines)])
        moved = list(shape)
        moved.pop(dim)
        t = perm.reshape(*moved, n).movedim(-1, dim).contiguous()
    else:
        t = torch.randint(0, limit, shape, generator=g)
    t = t.to(dtype)
    if strided:
        t = t.t().contiguous().t()
    return t.to(device)


SCATTER_SHAPES = [  # self, index, src, dim
    ((5, 4), (3, 4), (4, 5), 0),
    ((5, 4), (5, 2), (5, 4), 1),
    ((5, 4), (2, 3), (3, 3), -1),
    ((3, 4, 5), (2, 4, 3), (2, 4, 5), 2),
    ((3, 4, 5), (3, 2, 5), (3, 4, 5), 1),
    ((4,), (0,), (2,), 0),
    ((2, 3), (0,), (2, 3), 1),  # an empty index of another rank
    ((), (), (), 0),
]


@pytest.mark.parametrize("device", devices())
@pytest.mark.parametrize("case", range(len(SCATTER_SHAPES)))
@pytest.mark.parametrize("strided", [False, True])
def test_scatter_src_and_value(shims, device, case, strided):
    need(shims, f"aoti_torch_{device}_scatter_src_out")
    sshape, ishape, rshape, dim = SCATTER_SHAPES[case]
    x = make(sshape, torch.float32, device, strided and len(sshape) == 2, seed=case)
    d = dim % max(len(sshape), 1)
    limit = sshape[d] if sshape else 1
    index = scatter_index(ishape, d, limit, device, unique=True, strided=strided and len(ishape) == 2)
    src = make(rshape, torch.float32, device, strided and len(rshape) == 2, seed=7)
    out = torch.empty(sshape, device=device)
    check(run_scatter(shims, device, "src", out, x, dim, index, src), torch.scatter(x, dim, index, src))
    out = torch.empty(sshape, device=device)
    check(run_scatter(shims, device, "value", out, x, dim, index, -2.5), torch.scatter(x, dim, index, -2.5))


@pytest.mark.parametrize("device", devices())
@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_scatter_dtypes(shims, device, dtype):
    need(shims, f"aoti_torch_{device}_scatter_src_out")
    x = make((5, 6), dtype, device, strided=True)
    index = scatter_index((3, 6), 0, 5, device, unique=True, dtype=torch.int32)
    src = make((4, 6), dtype, device, seed=5)
    out = torch.empty(5, 6, dtype=dtype, device=device)
    check(run_scatter(shims, device, "src", out, x, 0, index, src), torch.scatter(x, 0, index, src))
    out = torch.empty(5, 6, dtype=dtype, device=device)
    check(run_scatter(shims, device, "value", out, x, 0, index, 3.75), torch.scatter(x, 0, index, 3.75))


REDUCES = ["sum", "prod", "mean", "amax", "amin"]


@pytest.mark.parametrize("device", devices())
@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("reduce", REDUCES)
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce(shims, device, dtype, reduce, include_self):
    need(shims, f"aoti_torch_{device}_scatter_reduce_two_out")
    if dtype == torch.bool and reduce == "mean":
        pytest.skip("torch does not implement mean for bool")
    x = make((4, 7), dtype, device, strided=True)
    index = scatter_index((9, 5), 0, 4, device, unique=False, seed=2)  # duplicates along dim
    src = make((10, 6), dtype, device, seed=4)
    if dtype.is_floating_point and reduce == "prod":
        src = src.abs() * 0.5 + 0.75
    out = torch.empty(4, 7, dtype=dtype, device=device).t().contiguous().t()  # a transposed out is kept
    try:
        want = torch.scatter_reduce(x, 0, index, src, reduce, include_self=include_self)
    except (RuntimeError, NotImplementedError):  # e.g. CUDA's prod, amax and amin take no bool
        with pytest.raises(ShimError):
            run_scatter(shims, device, "reduce", out, x, 0, index, src, reduce, include_self)
        return
    got = run_scatter(shims, device, "reduce", out, x, 0, index, src, reduce, include_self)
    check(got.contiguous(), want.contiguous(), tol=True)
    assert got.stride() == out.stride()


@pytest.mark.parametrize("device", devices())
def test_scatter_reduce_nan(shims, device):
    need(shims, f"aoti_torch_{device}_scatter_reduce_two_out")
    x = torch.tensor([1.0, float("nan"), 3.0, 0.0], device=device)
    index = L(0, 0, 2, 3, 3).to(device)
    src = torch.tensor([float("nan"), 2.0, 5.0, -1.0, 4.0], device=device)
    for reduce in ("amax", "amin", "sum"):
        for inc in (True, False):
            got = run_scatter(shims, device, "reduce", torch.empty(4, device=device), x, 0, index, src, reduce, inc)
            check(got, torch.scatter_reduce(x, 0, index, src, reduce, include_self=inc))


@pytest.mark.parametrize("device", devices())
def test_scatter_out_resize_and_in_place(shims, device):
    need(shims, f"aoti_torch_{device}_scatter_src_out")
    x = make((4, 5), torch.float32, device)
    index = scatter_index((2, 5), 0, 4, device, unique=True)
    src = make((2, 5), torch.float32, device, seed=1)
    want = torch.scatter(x, 0, index, src)
    # A wrong-shaped out whose memory is large enough is resized in it.
    buf = torch.full((40,), 7.0, device=device)
    got = run_scatter(shims, device, "src", buf[:30], x, 0, index, src)
    check(got, want)
    check(buf[:20].view(4, 5), want)
    # One too small: an owned one gets new memory, a caller's buffer is refused.
    (small,) = out_handles(1)
    sizes = (ctypes.c_int64 * 1)(3)
    strides = (ctypes.c_int64 * 1)(1)
    shims.call("aoti_torch_empty_strided", ctypes.c_int64(1), sizes, strides, ctypes.c_int32(6),
               ctypes.c_int32(0 if device == "cpu" else 1), ctypes.c_int32(0), ctypes.byref(small))
    shims.call(f"aoti_torch_{device}_scatter_src_out", small, shims.handle(x), ctypes.c_int64(0),
               shims.handle(index), shims.handle(src))
    check(shims.tensor(small, device), want)
    with pytest.raises(ShimError):
        run_scatter(shims, device, "src", buf[:3], x, 0, index, src)
    # In place: one tensor as self and out.
    y = x.clone()
    h = shims.handle(y)
    shims.call(f"aoti_torch_{device}_scatter_src_out", h, h, ctypes.c_int64(0), shims.handle(index),
               shims.handle(src))
    check(y, want)
    # out a different view of self's storage: self is read before out is written.
    z = torch.zeros(2, 4, 5, device=device)
    z[0] = x
    got = run_scatter(shims, device, "src", z[1], z[0], 0, index, src)
    check(got, want)


@pytest.mark.parametrize("device", devices())
def test_scatter_errors(shims, device):
    need(shims, f"aoti_torch_{device}_scatter_src_out")
    x = make((3, 4), torch.float32, device)
    out = torch.empty(3, 4, device=device)
    src = make((3, 4), torch.float32, device)
    bad = [
        (0, L(3, 0, 0, 0).view(1, 4), src),           # out of range
        (0, L(-1, 0, 0, 0).view(1, 4), src),          # negative (no wrap in scatter)
        (2, L(0).view(1, 1), src),                     # dim out of range
        (0, L(0, 0, 0, 0, 0).view(1, 5), src),        # index wider than self
        (0, L(0, 0).view(2), src),                     # rank mismatch
        (0, L(0).view(1, 1).to(torch.int16), src),     # index dtype
        (0, L(0).view(1, 1), src.double()),            # src dtype
    ]
    for dim, index, s in bad:
        with pytest.raises(ShimError):
            run_scatter(shims, device, "src", out, x, dim, index.to(device), s)
        # Whatever was refused, the next call on the stream is clean.
        check(run_scatter(shims, device, "src", out, x, 0, L(2, 0, 1, 0).view(1, 4).to(device), src),
              torch.scatter(x, 0, L(2, 0, 1, 0).view(1, 4).to(device), src))
    with pytest.raises(ShimError):
        run_scatter(shims, device, "reduce", out, x, 0, L(0).view(1, 1).to(device), src, "max")
    with pytest.raises(ShimError):  # out's dtype
        run_scatter(shims, device, "value", out.double(), x, 0, L(0).view(1, 1).to(device), 1.0)
    # A value that does not fit self's dtype (torch's checked conversion).
    xi = torch.zeros(3, 4, dtype=torch.uint8, device=device)
    for dtype, value in ((torch.uint8, -2.0), (torch.int8, 300.0), (torch.int32, float("nan")),
                         (torch.float16, 1e6)):
        xi = torch.zeros(3, 4, dtype=dtype, device=device)
        with pytest.raises(ShimError):
            run_scatter(shims, device, "value", torch.empty_like(xi), xi, 0, L(0).view(1, 1).to(device), value)
        with pytest.raises(RuntimeError):
            torch.scatter(xi, 0, L(0).view(1, 1).to(device), value)
    xi = torch.zeros(3, 4, dtype=torch.float16, device=device)  # inf fits a float type
    check(run_scatter(shims, device, "value", torch.empty_like(xi), xi, 0, L(0).view(1, 1).to(device),
                      float("inf")), torch.scatter(xi, 0, L(0).view(1, 1).to(device), float("inf")))


@pytest.mark.parametrize("device", devices())
def test_large_scatter_and_index_reduce(shims, device):
    """Sizes past the parallel threshold: results still equal torch's."""
    need(shims, f"aoti_torch_{device}_scatter_reduce_two_out")
    x = make((64, 600), torch.float32, device)
    index = scatter_index((200, 600), 0, 64, device, unique=False, seed=3)
    src = make((200, 600), torch.float32, device, seed=4)
    for reduce in ("sum", "mean", "amax"):
        got = run_scatter(shims, device, "reduce", torch.empty(64, 600, device=device), x, 0, index, src, reduce)
        check(got, torch.scatter_reduce(x, 0, index, src, reduce), tol=True)
    got = run_scatter(shims, device, "value", torch.empty(64, 600, device=device), x, 0, index, 1.5)
    check(got, torch.scatter(x, 0, index, 1.5))
    if provided(shims, f"aoti_torch_{device}_index_reduce"):
        x = make((50, 40, 30), torch.float32, device)
        src = make((50, 60, 30), torch.float32, device, seed=6)
        index = torch.randint(0, 40, (60,), generator=torch.Generator().manual_seed(1)).to(device)
        (r,) = out_handles(1)
        shims.call(f"aoti_torch_{device}_index_reduce", shims.handle(x), ctypes.c_int64(1), shims.handle(index),
                   shims.handle(src), b"mean", ctypes.c_int32(1), ctypes.byref(r))
        check(shims.tensor(r, device), torch.index_reduce(x, 1, index, src, "mean"), tol=True)


# ---------------------------------------------------------------------------
# index_reduce

@pytest.mark.parametrize("device", devices())
@pytest.mark.parametrize("dtype", [d for d in ALL_DTYPES if d != torch.bool])
@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_index_reduce(shims, device, dtype, reduce, include_self):
    need(shims, f"aoti_torch_{device}_index_reduce")
    for dim, (sshape, rshape) in ((1, ((3, 5, 2), (3, 6, 2))), (0, ((4, 3), (6, 3))), (-1, ((2, 4), (2, 6)))):
        x = make(sshape, dtype, device, strided=len(sshape) == 2)
        src = make(rshape, dtype, device, strided=len(rshape) == 2, seed=3)
        if dtype.is_floating_point and reduce == "prod":
            src = src.abs() * 0.5 + 0.75
        n = rshape[dim]
        index = L(*[(3 * i + 1) % sshape[dim] for i in range(n)]).to(device)
        if dtype == torch.int64:
            index = index.to(torch.int32)
        (r,) = out_handles(1)
        shims.call(f"aoti_torch_{device}_index_reduce", shims.handle(x), ctypes.c_int64(dim), shims.handle(index),
                   shims.handle(src), reduce.encode(), ctypes.c_int32(int(include_self)), ctypes.byref(r))
        got = shims.tensor(r, device)
        check(got, torch.index_reduce(x, dim, index, src, reduce, include_self=include_self), tol=True)


@pytest.mark.parametrize("device", devices())
def test_index_reduce_errors(shims, device):
    need(shims, f"aoti_torch_{device}_index_reduce")
    x = make((2, 3), torch.float32, device)
    src = make((2, 3), torch.float32, device)
    (r,) = out_handles(1)
    for dim, index, s, red in ((0, L(0, 2), src, "prod"), (0, L(0, -1), src, "prod"), (0, L(0, 1), src, "sum"),
                               (0, L(0, 1, 1), src, "amax"), (0, L(0, 1).view(1, 2), src, "amax"),
                               (0, L(0, 1), src.double(), "mean"), (1, L(0, 1), src, "mean")):
        with pytest.raises(ShimError):
            shims.call(f"aoti_torch_{device}_index_reduce", shims.handle(x), ctypes.c_int64(dim),
                       shims.handle(index.to(device)), shims.handle(s), red.encode(), ctypes.c_int32(1),
                       ctypes.byref(r))


# ---------------------------------------------------------------------------
# nonzero, masked_select, masked_scatter

NONZERO_SHAPES = [(5, 7), (3, 4, 5), (9,), (), (0, 3)]


@pytest.mark.parametrize("device", devices())
@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_nonzero(shims, device, dtype):
    need(shims, f"aoti_torch_{device}_nonzero")
    for i, shape in enumerate(NONZERO_SHAPES):
        for strided in (False, True):
            x = make(shape, dtype, device, strided and len(shape) >= 2, seed=i)
            if dtype.is_floating_point and x.numel() > 2:
                x[(0,) * x.dim()] = float("nan")
                x[(1,) + (0,) * (x.dim() - 1)] = -0.0
            want = torch.nonzero(x)
            for name in (f"aoti_torch_{device}_nonzero", "aoti_torch_nonzero"):
                if not provided(shims, name):
                    continue
                (r,) = out_handles(1)
                shims.call(name, shims.handle(x), ctypes.byref(r))
                got = shims.tensor(r, device)
                check(got, want)
                if want.numel() and want.dim() == 2 and want.shape[1] > 1:
                    assert got.stride() == want.stride()
            if provided(shims, f"aoti_torch_{device}_nonzero_static"):
                for size, fill in ((0, -1), (3, -1), (x.numel() + 2, 7)):
                    (r,) = out_handles(1)
                    shims.call(f"aoti_torch_{device}_nonzero_static", shims.handle(x), ctypes.c_int64(size),
                               ctypes.c_int64(fill), ctypes.byref(r))
                    check(shims.tensor(r, device), torch.nonzero_static(x, size=size, fill_value=fill))


def test_nonzero_errors(shims):
    need(shims, "aoti_torch_cpu_nonzero_static")
    (r,) = out_handles(1)
    with pytest.raises(ShimError):
        shims.call("aoti_torch_cpu_nonzero_static", shims.handle(torch.ones(3)), ctypes.c_int64(-1),
                   ctypes.c_int64(0), ctypes.byref(r))


MASK_CASES = [  # self shape, mask shape, self strided
    ((4, 5), (4, 5), False),
    ((4, 5), (4, 5), True),
    ((4, 5), (5,), True),
    ((4, 1), (3, 4, 5), False),
    ((), (6,), False),
    ((0, 5), (5,), False),
]


@pytest.mark.parametrize("device", devices())
@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_masked_select_and_scatter(shims, device, dtype):
    for i, (sshape, mshape, strided) in enumerate(MASK_CASES):
        x = make(sshape, dtype, device, strided, seed=i)
        mask = make(mshape, torch.bool, device, seed=10 + i)
        if provided(shims, f"aoti_torch_{device}_masked_select"):
            (r,) = out_handles(1)
            shims.call(f"aoti_torch_{device}_masked_select", shims.handle(x), shims.handle(mask), ctypes.byref(r))
            check(shims.tensor(r, device), torch.masked_select(x, mask))
        if provided(shims, f"aoti_torch_{device}_masked_scatter"):
            want_shape = torch.broadcast_shapes(x.shape, mask.shape)
            src = make((max(1, torch.Size(want_shape).numel()) + 3, 2), dtype, device, strided=True, seed=5)
            (r,) = out_handles(1)
            shims.call(f"aoti_torch_{device}_masked_scatter", shims.handle(x), shims.handle(mask),
                       shims.handle(src), ctypes.byref(r))
            check(shims.tensor(r, device), torch.masked_scatter(x, mask, src))


@pytest.mark.parametrize("device", devices())
def test_masked_errors(shims, device):
    need(shims, f"aoti_torch_{device}_masked_scatter")
    x = make((2, 3), torch.float32, device)
    (r,) = out_handles(1)
    with pytest.raises(ShimError):  # too few source elements
        shims.call(f"aoti_torch_{device}_masked_scatter", shims.handle(x),
                   shims.handle(torch.ones(2, 3, dtype=torch.bool, device=device)),
                   shims.handle(torch.ones(5, device=device)), ctypes.byref(r))
    with pytest.raises(ShimError):  # a uint8 mask
        shims.call(f"aoti_torch_{device}_masked_select", shims.handle(x),
                   shims.handle(torch.ones(3, dtype=torch.uint8, device=device)), ctypes.byref(r))
    with pytest.raises(ShimError):  # shapes that do not broadcast
        shims.call(f"aoti_torch_{device}_masked_select", shims.handle(x),
                   shims.handle(torch.ones(4, dtype=torch.bool, device=device)), ctypes.byref(r))


# ---------------------------------------------------------------------------
# Larger sizes (several blocks and CUB tiles), non-contiguous inputs, indices
# held on the host, and bad indices met deep inside a large index.

@pytest.mark.parametrize("device", devices())
def test_nonzero_and_masked_large(shims, device):
    need(shims, f"aoti_torch_{device}_nonzero")
    g = torch.Generator().manual_seed(3)
    x = (torch.rand(70, 300, 9, generator=g) > 0.7).to(torch.float32).to(device).permute(2, 0, 1)
    for name in (f"aoti_torch_{device}_nonzero", "aoti_torch_nonzero"):
        if provided(shims, name):
            (r,) = out_handles(1)
            shims.call(name, shims.handle(x), ctypes.byref(r))
            check(shims.tensor(r, device), torch.nonzero(x))
    if provided(shims, f"aoti_torch_{device}_nonzero_static"):
        n = int(torch.count_nonzero(x))
        for size in (n // 2, n + 100):
            (r,) = out_handles(1)
            shims.call(f"aoti_torch_{device}_nonzero_static", shims.handle(x), ctypes.c_int64(size),
                       ctypes.c_int64(-3), ctypes.byref(r))
            check(shims.tensor(r, device), torch.nonzero_static(x, size=size, fill_value=-3))
    for dtype in (torch.float16, torch.int64, torch.int8):
        x = make((400, 700), dtype, device, strided=True, seed=4)
        mask = make((700,), torch.bool, device, seed=5)
        if provided(shims, f"aoti_torch_{device}_masked_select"):
            (r,) = out_handles(1)
            shims.call(f"aoti_torch_{device}_masked_select", shims.handle(x), shims.handle(mask), ctypes.byref(r))
            check(shims.tensor(r, device), torch.masked_select(x, mask))
        if provided(shims, f"aoti_torch_{device}_masked_scatter"):
            src = make((700 * 400,), dtype, device, seed=6)
            (r,) = out_handles(1)
            shims.call(f"aoti_torch_{device}_masked_scatter", shims.handle(x), shims.handle(mask),
                       shims.handle(src), ctypes.byref(r))
            check(shims.tensor(r, device), torch.masked_scatter(x, mask, src))


@pytest.mark.parametrize("device", devices())
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.float64, torch.int32,
                                   torch.int64, torch.int16, torch.uint8])
def test_index_put_accumulate_large(shims, device, dtype):
    """Many duplicates over a few rows: the accumulation's atomics contend."""
    need(shims, f"aoti_torch_{device}_index_put")
    x = make((16, 130), dtype, device, seed=1)
    idx = torch.randint(-16, 16, (600,), generator=torch.Generator().manual_seed(2)).to(device)
    v = make((600, 130), dtype, device, seed=3)
    if dtype in HALF:
        v = v * 0.01
    got = run_index_put(shims, device, x, [idx], v, True)
    want = torch.ops.aten.index_put(x, [idx], v, True)
    if dtype in HALF:
        torch.testing.assert_close(got.float(), want.float(), rtol=2e-2, atol=0.1)
    else:
        check(got, want, tol=True)
    # Without accumulate, distinct positions over strided values.
    perm = torch.randperm(16, generator=torch.Generator().manual_seed(4)).to(device)
    v = make((16, 130), dtype, device, strided=True, seed=5)
    check(run_index_put(shims, device, x, [perm], v, False), torch.ops.aten.index_put(x, [perm], v, False))


@pytest.mark.parametrize("device", devices())
def test_index_bad_index_deep_inside(shims, device):
    """An out-of-range index far into a large index tensor is an error."""
    need(shims, f"aoti_torch_{device}_index_Tensor")
    x = make((50, 8), torch.float32, device)
    for bad in (50, -51):
        idx = torch.randint(0, 50, (5000,), generator=torch.Generator().manual_seed(0))
        idx[4321] = bad
        idx = idx.to(device)
        with pytest.raises(ShimError):
            run_index(shims, device, x, [idx])
        for acc in (False, True):
            with pytest.raises(ShimError):
                run_index_put(shims, device, x, [idx], torch.ones(8, device=device), acc)
    if provided(shims, f"aoti_torch_{device}_scatter_src_out"):
        index = scatter_index((300, 8), 0, 50, device, unique=False)
        index[250, 3] = 50
        src = make((300, 8), torch.float32, device, seed=2)
        for reduce in (None, "sum", "amax"):
            with pytest.raises(ShimError):
                if reduce is None:
                    run_scatter(shims, device, "src", torch.empty(50, 8, device=device), x, 0, index, src)
                else:
                    run_scatter(shims, device, "reduce", torch.empty(50, 8, device=device), x, 0, index, src,
                                reduce)


@pytest.mark.parametrize("device", devices())
def test_index_host_indices(shims, device):
    """Index tensors held on the host index a device tensor, as in torch."""
    need(shims, f"aoti_torch_{device}_index_Tensor")
    x = make((6, 5, 4), torch.float32, device, strided=True)
    idx = [L(5, -1, 0), None, L(3, 2, -4)]
    check(run_index(shims, device, x, idx), torch.ops.aten.index.Tensor(x, idx))
    mask = torch.tensor([True, False, True, True, False, True])
    check(run_index(shims, device, x, [mask]), torch.ops.aten.index.Tensor(x, [mask]))
    # index_put with host indices (checked on the host): a strided int32
    # index, a KV-cache style row write, and bad indices refused.
    need(shims, f"aoti_torch_{device}_index_put")
    cols = torch.tensor([[3, 0], [-1, 2]], dtype=torch.int32).t()
    v = make((6, 2, 2, 4), torch.float32, device, seed=3)
    idx = [None, cols]
    for acc in (False, True):
        check(run_index_put(shims, device, x, idx, v, acc), torch.ops.aten.index_put(x, idx, v, acc), tol=acc)
    cache = make((1, 2, 16, 8), torch.bfloat16, device)
    row = make((1, 2, 1, 8), torch.bfloat16, device, seed=4)
    idx = [None, None, L(7)]
    check(run_index_put(shims, device, cache, idx, row, False), torch.ops.aten.index_put(cache, idx, row, False))
    for bad in ([L(6)], [None, L(0, -6)], [None, None, torch.tensor([4], dtype=torch.int32)]):
        with pytest.raises(ShimError):
            run_index_put(shims, device, x, bad, torch.ones((), device=device), False)


@pytest.mark.parametrize("device", devices())
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int32, torch.int8])
def test_scatter_reduce_large(shims, device, dtype):
    need(shims, f"aoti_torch_{device}_scatter_reduce_two_out")
    x = make((40, 300), dtype, device, strided=True)
    index = scatter_index((500, 300), 0, 40, device, unique=False, seed=8)
    src = make((500, 300), dtype, device, seed=9)
    if dtype.is_floating_point:
        src = src.abs() * 0.01 + 0.995  # products stay finite
    for reduce in REDUCES:
        for inc in (True, False):
            out = torch.empty(40, 300, dtype=dtype, device=device)
            got = run_scatter(shims, device, "reduce", out, x, 0, index, src, reduce, inc)
            want = torch.scatter_reduce(x, 0, index, src, reduce, include_self=inc)
            if dtype in HALF:
                torch.testing.assert_close(got.float(), want.float(), rtol=3e-2, atol=3e-2)
            else:
                check(got, want, tol=True)
    if provided(shims, f"aoti_torch_{device}_index_reduce"):
        idx = torch.randint(0, 40, (500,), generator=torch.Generator().manual_seed(1)).to(device)
        srcr = make((500, 300), dtype, device, strided=True, seed=10)
        if dtype.is_floating_point:
            srcr = srcr.abs() * 0.01 + 0.995
        for reduce in ("prod", "mean", "amax", "amin"):
            (r,) = out_handles(1)
            shims.call(f"aoti_torch_{device}_index_reduce", shims.handle(x), ctypes.c_int64(0), shims.handle(idx),
                       shims.handle(srcr), reduce.encode(), ctypes.c_int32(0), ctypes.byref(r))
            got = shims.tensor(r, device)
            want = torch.index_reduce(x, 0, idx, srcr, reduce, include_self=False)
            if dtype in HALF:
                torch.testing.assert_close(got.float(), want.float(), rtol=3e-2, atol=3e-2)
            else:
                check(got, want, tol=True)
