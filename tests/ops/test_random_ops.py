"""Conformance of the random ops (rand, randn, randint, randperm, uniform,
normal_functional, exponential, bernoulli_, native_dropout) with eager
PyTorch. aotirt matches torch's distributions, not its bit streams, so the
checks are statistical: value ranges, moments within many standard errors,
and a two-sample Kolmogorov-Smirnov test against torch's own samples at a
tiny significance level; plus output dtypes, shapes and strides exactly as
torch's. AOTIRT_SEED is fixed before the library first draws, so every run
sees the same values and the tests cannot flake.
"""
from __future__ import annotations

import ctypes
import math
import os
import subprocess
import sys

os.environ.setdefault("AOTIRT_SEED", "20261203")

import pytest  # noqa: E402
import torch  # noqa: E402

from shim_harness import devices, provided
from shim_harness import (DEVICE_CODES, DTYPE_CODES, ShimError, Shims, int32_ptr, library_path,  # noqa: E402
                          out_handles)

pytestmark = pytest.mark.skipif(not library_path().exists(),
                                reason=f"{library_path()} not built (scripts/build.sh)")

FLOATS = [torch.float32, torch.float64, torch.float16, torch.bfloat16]
COMPLEX = [torch.complex64, torch.complex128]
INTS = [torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64]
N = 1 << 14


@pytest.fixture(autouse=True)
def seeded_torch():
    # torch's reference samples are fixed too, so the comparisons are.
    torch.manual_seed(1234)


def need(shims, name):
    if not provided(shims, name):
        pytest.skip(f"{name} is not provided yet")


def sizes_arg(shape):
    return (ctypes.c_int64 * max(len(shape), 1))(*shape), ctypes.c_int64(len(shape))


def factory(shims, device, op, *lead, shape, dtype=None, generator=False):
    """Calls a factory op: lead scalars, size, [generator], dtype, layout,
    device, device_index, pin_memory, ret."""
    name = f"aoti_torch_{device}_{op}"
    need(shims, name)
    args = list(lead)
    if shape is not None:
        args += list(sizes_arg(shape))
    if generator:
        args.append(None)
    args += [int32_ptr(None if dtype is None else DTYPE_CODES[dtype]), None,
             int32_ptr(DEVICE_CODES[device]), ctypes.c_int32(0), None]
    (r,) = out_handles(1)
    shims.call(name, *args, ctypes.byref(r))
    return shims.tensor(r, device)


def functional(shims, device, op, t, *params):
    name = f"aoti_torch_{device}_{op}"
    need(shims, name)
    (r,) = out_handles(1)
    shims.call(name, shims.handle(t), *[ctypes.c_double(p) for p in params], None, ctypes.byref(r))
    return shims.tensor(r, device)


def ks_same(a: torch.Tensor, b: torch.Tensor) -> float:
    """The two-sample Kolmogorov-Smirnov statistic over flattened samples."""
    a = a.flatten().double().cpu().sort().values
    b = b.flatten().double().cpu().sort().values
    pts = torch.cat([a, b])
    fa = torch.searchsorted(a, pts, right=True).double() / a.numel()
    fb = torch.searchsorted(b, pts, right=True).double() / b.numel()
    return (fa - fb).abs().max().item()


def ks_limit(n: int, m: int) -> float:
    # Critical value at significance 1e-6: sqrt(-ln(alpha/2)/2) ~ 2.69.
    return 2.7 * math.sqrt((n + m) / (n * m))


def assert_moments(x: torch.Tensor, mean: float, std: float, sigmas: float = 6.0):
    x = x.flatten().double()
    n = x.numel()
    assert abs(x.mean().item() - mean) < sigmas * std / math.sqrt(n), (x.mean().item(), mean)
    # The sample variance's standard error, for a not-too-heavy tail.
    assert abs(x.std().item() - std) < sigmas * std * math.sqrt(2.0 / n) * 2, (x.std().item(), std)


def assert_layout(got: torch.Tensor, want: torch.Tensor):
    assert got.dtype == want.dtype, f"dtype {got.dtype}, torch gives {want.dtype}"
    assert got.shape == want.shape
    assert got.stride() == want.stride(), f"strides {got.stride()}, torch gives {want.stride()}"


def parts(x: torch.Tensor):
    return [x.real, x.imag] if x.is_complex() else [x]


# ---- rand / randn ----

@pytest.mark.parametrize("device", devices())
@pytest.mark.parametrize("dtype", FLOATS + COMPLEX + [None])
@pytest.mark.parametrize("op", ["rand", "rand_generator"])
def test_rand_is_uniform_on_0_1(shims, device, dtype, op):
    got = factory(shims, device, op, shape=(N,), dtype=dtype, generator=op.endswith("generator"))
    want = torch.rand(N, dtype=dtype, device=device)
    assert_layout(got, want)
    for g, w in zip(parts(got), parts(want)):
        assert g.min().item() >= 0.0 and g.max().item() < 1.0
        assert_moments(g, 0.5, math.sqrt(1 / 12))
        assert ks_same(g, w) < ks_limit(N, N)
    if got.is_complex():  # the parts are drawn independently
        assert abs(torch.corrcoef(torch.stack([got.real, got.imag]).double())[0, 1].item()) < 6 / math.sqrt(N)


@pytest.mark.parametrize("device", devices())
@pytest.mark.parametrize("dtype", FLOATS + COMPLEX + [None])
@pytest.mark.parametrize("op", ["randn", "randn_generator"])
def test_randn_is_standard_normal(shims, device, dtype, op):
    got = factory(shims, device, op, shape=(N,), dtype=dtype, generator=op.endswith("generator"))
    want = torch.randn(N, dtype=dtype, device=device)
    assert_layout(got, want)
    std = math.sqrt(0.5) if got.is_complex() else 1.0
    for g, w in zip(parts(got), parts(want)):
        assert torch.isfinite(g).all()
        assert_moments(g, 0.0, std)
        assert ks_same(g, w) < ks_limit(N, N)


@pytest.mark.parametrize("device", devices())
@pytest.mark.parametrize("shape", [(), (0,), (3, 0, 2), (2, 3, 4), (1,)])
@pytest.mark.parametrize("op", ["rand", "randn"])
def test_factory_shapes_and_strides(shims, device, shape, op):
    got = factory(shims, device, op, shape=shape)
    want = getattr(torch, op)(shape, device=device)
    assert_layout(got, want)


@pytest.mark.parametrize("device", devices())
def test_consecutive_draws_differ(shims, device):
    a = factory(shims, device, "rand", shape=(64,))
    b = factory(shims, device, "rand", shape=(64,))
    assert not torch.equal(a, b)
    assert a.unique().numel() == 64  # 24-bit draws: a repeat among 64 is very unlikely (p ~ 1e-4)


# ---- randint / randperm ----

@pytest.mark.parametrize("device", devices())
@pytest.mark.parametrize("dtype", INTS + FLOATS + [None])
def test_randint_low_high_covers_the_range_evenly(shims, device, dtype):
    low, high = (0, 7) if dtype == torch.uint8 else (-3, 4)
    got = factory(shims, device, "randint_low", ctypes.c_int64(low), ctypes.c_int64(high), shape=(N,), dtype=dtype)
    want = torch.randint(low, high, (N,), dtype=dtype or torch.int64, device=device)
    assert_layout(got, want)
    vals = got.double()
    assert vals.min().item() == low and vals.max().item() == high - 1  # inclusive low, exclusive high
    assert torch.equal(vals, vals.round())
    counts = torch.bincount((vals - low).long(), minlength=high - low).double()
    p = 1.0 / (high - low)
    assert ((counts - N * p).abs() < 6 * math.sqrt(N * p * (1 - p))).all(), counts


@pytest.mark.parametrize("device", devices())
@pytest.mark.parametrize("op", ["randint", "randint_generator"])
def test_randint_high_starts_at_zero(shims, device, op):
    got = factory(shims, device, op, ctypes.c_int64(5), shape=(4096,), generator=op.endswith("generator"))
    assert_layout(got, torch.randint(5, (4096,), device=device))
    assert set(got.unique().tolist()) == {0, 1, 2, 3, 4}


@pytest.mark.parametrize("device", devices())
def test_randint_bool_and_wide_ranges(shims, device):
    b = factory(shims, device, "randint_low", ctypes.c_int64(0), ctypes.c_int64(2), shape=(4096,), dtype=torch.bool)
    assert b.dtype == torch.bool and 1800 < b.sum().item() < 2300
    lo, hi = -(1 << 40), 1 << 40  # wider than 32 bits: 64-bit draws
    w = factory(shims, device, "randint_low", ctypes.c_int64(lo), ctypes.c_int64(hi), shape=(N,))
    assert w.min().item() >= lo and w.max().item() < hi
    assert_moments(w.double() / hi, 0.0, math.sqrt(1 / 3))
    full = factory(shims, device, "randint_low", ctypes.c_int64(-(1 << 63)), ctypes.c_int64((1 << 63) - 1),
                   shape=(1024,))
    assert (full < 0).sum().item() > 400 and (full > 0).sum().item() > 400
    one = factory(shims, device, "randint_low", ctypes.c_int64(9), ctypes.c_int64(10), shape=(2, 3))
    assert torch.equal(one, torch.full((2, 3), 9, device=device))


@pytest.mark.parametrize("device", devices())
def test_randint_refuses_empty_and_out_of_dtype_ranges(shims, device):
    for low, high, dtype in [(5, 5, None), (0, 300, torch.uint8), (-1, 3, torch.uint8), (0, 3, torch.bool),
                             (0, 1 << 17, torch.float16)]:
        with pytest.raises(ShimError):
            factory(shims, device, "randint_low", ctypes.c_int64(low), ctypes.c_int64(high), shape=(3,), dtype=dtype)


@pytest.mark.parametrize("device", devices())
@pytest.mark.parametrize("strided", [False, True, "sliced"])
def test_randint_low_out_fills_or_resizes(shims, device, strided):
    name = f"aoti_torch_{device}_randint_low_out"
    need(shims, name)
    out = torch.zeros(6, 5, dtype=torch.int32, device=device)
    if strided == "sliced":  # not dense: filled through a temporary on CUDA
        out = torch.zeros(6, 10, dtype=torch.int32, device=device)[:, ::2]
    elif strided:
        out = out.t()
    h = shims.handle(out)
    # Same shape: filled in place through its strides.
    shims.call(name, h, ctypes.c_int64(10), ctypes.c_int64(20), *sizes_arg(tuple(out.shape)))
    assert out.min().item() >= 10 and out.max().item() < 20
    # Another shape: resized, contiguous, as torch's resize_.
    shims.call(name, h, ctypes.c_int64(-4), ctypes.c_int64(0), *sizes_arg((3, 2)))
    got = shims.tensor(h, device)
    ref = torch.zeros(5, 6, dtype=torch.int32, device=device)
    torch.randint(-4, 0, (3, 2), out=ref)
    assert_layout(got, ref)
    assert got.min().item() >= -4 and got.max().item() < 0
    # Larger than the storage: new storage.
    h2 = shims.handle(torch.zeros(2, dtype=torch.int64, device=device))
    shims.call(name, h2, ctypes.c_int64(0), ctypes.c_int64(3), *sizes_arg((4, 50)))
    big = shims.tensor(h2, device)
    assert big.shape == (4, 50) and big.stride() == (50, 1) and set(big.unique().tolist()) == {0, 1, 2}


@pytest.mark.parametrize("device", devices())
@pytest.mark.parametrize("dtype", INTS + FLOATS + [None])
@pytest.mark.parametrize("n", [0, 1, 2, 100])
def test_randperm_is_a_permutation(shims, device, dtype, n):
    try:
        want = torch.randperm(n, dtype=dtype or torch.int64, device=device)
    except (RuntimeError, NotImplementedError):  # no kernel for the dtype on the device
        with pytest.raises(ShimError):
            factory(shims, device, "randperm", ctypes.c_int64(n), shape=None, dtype=dtype)
        return
    got = factory(shims, device, "randperm", ctypes.c_int64(n), shape=None, dtype=dtype)
    assert_layout(got, want)
    assert torch.equal(got.sort().values, torch.arange(n, dtype=got.dtype, device=device))


@pytest.mark.parametrize("device", devices())
def test_randperm_positions_are_uniform(shims, device):
    n, trials = 5, 2000
    first = torch.tensor([factory(shims, device, "randperm", ctypes.c_int64(n), shape=None)[0].item()
                          for _ in range(trials)])
    counts = torch.bincount(first, minlength=n).double()
    p = 1 / n
    assert ((counts - trials * p).abs() < 6 * math.sqrt(trials * p * (1 - p))).all(), counts
    big = factory(shims, device, "randperm", ctypes.c_int64(100000), shape=None)
    assert torch.equal(big.sort().values, torch.arange(100000, device=device))
    # Few fixed points (expected 1) and no long sorted runs.
    assert (big == torch.arange(100000, device=device)).sum().item() < 10
    # torch's CUDA randperm has no bfloat16 kernel (its CPU one has).
    small = [(torch.float16, 2049), (torch.uint8, 256), (torch.int8, 128)]
    refused = [(torch.float16, 2050), (torch.uint8, 257), (torch.bool, 2), (None, -1)]
    (small if device == "cpu" else refused).append((torch.bfloat16, 257))
    for dtype, n in small:
        got = factory(shims, device, "randperm", ctypes.c_int64(n), shape=None, dtype=dtype)
        assert torch.equal(got.sort().values, torch.arange(n, dtype=dtype, device=device))
    for dtype, n in refused:
        with pytest.raises(ShimError):
            factory(shims, device, "randperm", ctypes.c_int64(n), shape=None, dtype=dtype)


# ---- uniform / normal / exponential on an existing tensor ----

def layouts(device, dtype):
    base = torch.zeros(128, 160, dtype=dtype, device=device)
    return {"contiguous": base, "transposed": base.t(), "sliced": base[:, ::2]}


@pytest.mark.parametrize("device", devices())
@pytest.mark.parametrize("dtype", FLOATS + COMPLEX)
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced"])
def test_uniform_functional(shims, device, dtype, layout):
    t = layouts(device, dtype)[layout]
    lo, hi = -2.0, 3.0
    got = functional(shims, device, "uniform", t, lo, hi)
    want = torch.ops.aten.uniform(t, lo, hi)
    assert_layout(got, want)
    for g, w in zip(parts(got), parts(want)):
        assert g.min().item() >= lo and g.max().item() <= hi  # to can be reached by rounding, as in torch
        assert_moments(g, 0.5, 5 / math.sqrt(12))
        assert ks_same(g, w) < ks_limit(g.numel(), w.numel())
    assert torch.equal(t, torch.zeros_like(t))  # functional: self is untouched


@pytest.mark.parametrize("device", devices())
@pytest.mark.parametrize("dtype", FLOATS + COMPLEX)
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced"])
def test_normal_functional(shims, device, dtype, layout):
    t = layouts(device, dtype)[layout]
    got = functional(shims, device, "normal_functional", t, 1.5, 2.0)
    want = torch.ops.aten.normal_functional(t, 1.5, 2.0)
    assert_layout(got, want)
    std = 2.0 / math.sqrt(2) if got.is_complex() else 2.0
    for g, w in zip(parts(got), parts(want)):
        assert_moments(g, 1.5, std)
        assert ks_same(g, w) < ks_limit(g.numel(), w.numel())


@pytest.mark.parametrize("device", devices())
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced"])
def test_exponential(shims, device, dtype, layout):
    t = layouts(device, dtype)[layout]
    lambd = 2.5
    got = functional(shims, device, "exponential", t, lambd)
    want = torch.ops.aten.exponential(t, lambd)
    assert_layout(got, want)
    assert got.min().item() >= 0 and torch.isfinite(got).all()
    assert_moments(got, 1 / lambd, 1 / lambd)
    assert ks_same(got, want) < ks_limit(got.numel(), want.numel())


@pytest.mark.parametrize("device", devices())
def test_degenerate_parameters(shims, device):
    t = torch.zeros(3, 4, device=device)
    assert torch.equal(functional(shims, device, "uniform", t, 2.0, 2.0), torch.full((3, 4), 2.0, device=device))
    assert torch.equal(functional(shims, device, "normal_functional", t, -1.0, 0.0),
                       torch.full((3, 4), -1.0, device=device))
    for shape in [(), (0, 3)]:
        e = torch.zeros(shape, device=device)
        assert_layout(functional(shims, device, "uniform", e, 0.0, 1.0), torch.ops.aten.uniform(e, 0.0, 1.0))


@pytest.mark.parametrize("device", devices())
def test_distribution_parameters_are_checked(shims, device):
    t = torch.zeros(3, device=device)
    for op, params in [("uniform", (2.0, 1.0)), ("normal_functional", (0.0, -1.0)), ("exponential", (0.0,)),
                       ("exponential", (-1.0,))]:
        with pytest.raises(ShimError):
            functional(shims, device, op, t, *params)
    with pytest.raises(ShimError):
        functional(shims, device, "uniform", torch.zeros(3, dtype=torch.float16, device=device), -65504.0, 65504.0)
    for op, params in [("uniform", (0.0, 1.0)), ("normal_functional", (0.0, 1.0)), ("exponential", (1.0,))]:
        with pytest.raises(ShimError):
            functional(shims, device, op, torch.zeros(3, dtype=torch.int64, device=device), *params)


# ---- bernoulli_ ----

def bernoulli_float(shims, device, t, p):
    name = f"aoti_torch_{device}_bernoulli__float"
    need(shims, name)
    shims.call(name, shims.handle(t), ctypes.c_double(p), None)


def bernoulli_tensor(shims, device, t, p):
    name = f"aoti_torch_{device}_bernoulli__Tensor"
    need(shims, name)
    shims.call(name, shims.handle(t), shims.handle(p), None)


@pytest.mark.parametrize("device", devices())
@pytest.mark.parametrize("dtype", FLOATS + INTS + [torch.bool])
@pytest.mark.parametrize("strided", [False, True])
def test_bernoulli_float_fills_in_place(shims, device, dtype, strided):
    base = torch.full((300, 220), 7, dtype=dtype, device=device) if dtype != torch.bool else \
        torch.zeros(300, 220, dtype=dtype, device=device)
    t = base.t() if strided else base
    p = 0.3
    bernoulli_float(shims, device, t, p)
    v = base.double()
    assert torch.equal(v, (v != 0).double())  # every element was written with 0 or 1
    n = v.numel()
    assert abs(v.sum().item() - n * p) < 6 * math.sqrt(n * p * (1 - p))
    for edge in (0.0, 1.0):
        bernoulli_float(shims, device, t, edge)
        assert torch.equal(base.double(), torch.full_like(v, edge))


@pytest.mark.parametrize("device", devices())
@pytest.mark.parametrize("pdtype", [torch.float32, torch.float64, torch.float16])
def test_bernoulli_tensor_broadcasts_p(shims, device, pdtype):
    probs = torch.tensor([0.0, 0.25, 0.5, 0.9, 1.0], dtype=pdtype, device=device)
    rows = 8000
    t = torch.full((rows, 5), 3.0, device=device)
    bernoulli_tensor(shims, device, t, probs)
    rate = t.mean(0).double()
    sd = torch.sqrt(probs.double() * (1 - probs.double()) / rows)
    assert ((rate - probs.double()).abs() <= 6 * sd + 1e-12).all(), rate
    # A full-shape p read through transposed strides.
    pt = torch.tensor([[0.0, 1.0]], device=device).expand(300, 2).contiguous().t()  # [2, 300]
    t2 = torch.full((2, 300), 0.5, device=device)
    bernoulli_tensor(shims, device, t2, pt)
    assert torch.equal(t2, pt.to(t2.dtype))
    # A transposed self with a row of probabilities broadcast down it.
    t3 = torch.full((300, 2), 0.5, device=device).t()  # [2, 300], not contiguous
    row = torch.zeros(300, device=device)
    row[::2] = 1.0
    bernoulli_tensor(shims, device, t3, row)
    assert torch.equal(t3, row.expand(2, 300))
    # A p on the CPU is moved to self's device, as in torch.
    t4 = torch.full((2, 300), 0.5, device=device)
    bernoulli_tensor(shims, device, t4, row.cpu())
    assert torch.equal(t4, row.expand(2, 300))


@pytest.mark.parametrize("device", devices())
def test_bernoulli_refuses_bad_p(shims, device):
    t = torch.full((3,), 0.5, device=device)
    for p in (-0.1, 1.5, float("nan")):
        with pytest.raises(ShimError):
            bernoulli_float(shims, device, t, p)
    for p in (torch.tensor([0.5, 2.0, 0.5]), torch.tensor([1, 0, 1]), torch.full((2, 3), 0.5),
              torch.tensor([0.5, 0.5])):
        with pytest.raises(ShimError):
            bernoulli_tensor(shims, device, t, p.to(device))
    assert torch.equal(t, torch.full((3,), 0.5, device=device))  # refused before writing
    with pytest.raises(ShimError):
        bernoulli_float(shims, device, torch.zeros(3, dtype=torch.complex64, device=device), 0.5)


# ---- native_dropout ----

def dropout(shims, device, t, p, train):
    name = f"aoti_torch_{device}_native_dropout"
    need(shims, name)
    o, m = out_handles(2)
    shims.call(name, shims.handle(t), ctypes.c_double(p), int32_ptr(None if train is None else int(train)),
               ctypes.byref(o), ctypes.byref(m))
    return shims.tensor(o, device), shims.tensor(m, device)


@pytest.mark.parametrize("device", devices())
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced"])
@pytest.mark.parametrize("train", [True, None])
def test_native_dropout_train(shims, device, dtype, layout, train):
    g = torch.Generator().manual_seed(1)
    base = (torch.randn(128, 160, generator=g) + 0.5).to(dtype).to(device)
    t = {"contiguous": base, "transposed": base.t(), "sliced": base[:, ::2]}[layout]
    p = 0.3
    out, mask = dropout(shims, device, t, p, train)
    want_out, want_mask = torch.ops.aten.native_dropout(t, p, train)
    assert_layout(out, want_out)
    assert_layout(mask, want_mask)
    # The output is exactly torch's arithmetic over this mask.
    scale = 1.0 / (1.0 - p)
    assert torch.equal(out, t.mul(mask).mul_(scale))
    n = mask.numel()
    keep = mask.sum().item()
    assert abs(keep - n * (1 - p)) < 6 * math.sqrt(n * p * (1 - p))


@pytest.mark.parametrize("device", devices())
def test_native_dropout_edges(shims, device):
    t = torch.tensor([[1.0, float("inf"), -2.0, float("nan")]], device=device).expand(64, 4).contiguous()
    out, mask = dropout(shims, device, t, 1.0, True)  # everything dropped: scale 0
    assert not mask.any()
    want, _ = torch.ops.aten.native_dropout(t, 1.0, True)
    assert torch.equal(out.isnan(), want.isnan()) and torch.equal(out.nan_to_num(), want.nan_to_num())
    out, mask = dropout(shims, device, t, 0.0, True)
    assert mask.all() and torch.equal(out.nan_to_num(), t.nan_to_num())
    # Evaluation: a copy and an all-true mask, for any dtype.
    for dtype in (torch.float32, torch.int64, torch.bool):
        x = torch.ones(3, 4, dtype=dtype, device=device).t()
        out, mask = dropout(shims, device, x, 0.5, False)
        want_out, want_mask = torch.ops.aten.native_dropout(x, 0.5, False)
        assert_layout(out, want_out)
        assert_layout(mask, want_mask)
        assert torch.equal(out, x) and mask.all()
    # Empty input: the input back and an empty mask of its dtype.
    e = torch.ones(0, 4, device=device).t()
    out, mask = dropout(shims, device, e, 0.5, True)
    want_out, want_mask = torch.ops.aten.native_dropout(e, 0.5, True)
    assert_layout(out, want_out)
    assert_layout(mask, want_mask)
    with pytest.raises(ShimError):
        dropout(shims, device, torch.ones(3, dtype=torch.int64, device=device), 0.5, True)
    with pytest.raises(ShimError):
        dropout(shims, device, torch.ones(3, device=device), 1.5, True)


# ---- the generator ----

def test_seed_makes_runs_reproducible():
    """Two processes with the same AOTIRT_SEED draw the same values, whatever
    their thread counts; another seed draws others."""
    need(Shims(), "aoti_torch_cpu_rand")
    # Plain ctypes, no torch: the child processes start fast.
    script = (
        "import ctypes, os\n"
        "lib = ctypes.CDLL(%r, mode=os.RTLD_LOCAL | os.RTLD_NOW)\n"
        "h = ctypes.c_void_p()\n"
        "size = (ctypes.c_int64 * 1)(70000)\n"
        "assert lib.aoti_torch_cpu_rand(size, ctypes.c_int64(1), None, None, None, ctypes.c_int32(0), None,"
        " ctypes.byref(h)) == 0\n"
        "p = ctypes.c_void_p()\n"
        "assert lib.aoti_torch_get_data_ptr(h, ctypes.byref(p)) == 0\n"
        "print(ctypes.cast(p, ctypes.POINTER(ctypes.c_float))[:70000])\n" % str(library_path()))

    def run(seed, threads="2"):
        env = dict(os.environ, AOTIRT_SEED=seed, OMP_NUM_THREADS=threads)
        return subprocess.run([sys.executable, "-c", script], env=env, check=True, capture_output=True,
                              text=True).stdout

    # 70000 elements take the parallel path: the values do not depend on
    # how many threads share the work.
    first = run("7")
    assert first == run("7", threads="1")
    assert first != run("8")
    assert run("-3") == run(str((1 << 64) - 3))  # a negative seed wraps modulo 2^64, as torch's
