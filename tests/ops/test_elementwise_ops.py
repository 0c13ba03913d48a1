"""Conformance of the elementwise ops (abs, add, sub, mul, pow, gcd, angle,
polar, fill_) and amax with eager PyTorch on the same device: the result
dtype under torch's promotion (a shim Scalar is a Python float, so it is
what eager torch gets from a float argument), broadcasting, 0-d and 0-size
tensors, contiguous, transposed, non-dense and channels-last inputs, the
output strides, alpha, pow's special exponents, fill's range checks, and
amax's dims, keepdim and NaN. Where eager torch refuses the arguments, the
shim must fail too. Integer results are exact; floating ones within torch's
default tolerances (the CPU kernels use vector math libraries).
"""
from __future__ import annotations

import ctypes
import math

import pytest
import torch

from shim_harness import devices, provided
from shim_harness import ShimError, Shims, library_path, out_handles

pytestmark = pytest.mark.skipif(not library_path().exists(),
                                reason=f"{library_path()} not built (scripts/build.sh)")

INTS = [torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64]
FLOATS = [torch.float16, torch.bfloat16, torch.float32, torch.float64]
COMPLEX = [torch.complex64, torch.complex128]
ALL = [torch.bool] + INTS + FLOATS + COMPLEX


def need(shims, name):
    if not provided(shims, name):
        pytest.skip(f"{name} is not provided yet")


def make(shape, dtype, device="cpu", layout="c", seed=0, special=False):
    """A tensor of |shape|: layout 'c' contiguous, 'T' a transpose, 'nd' a
    non-dense slice, 'cl' channels-last (4-d)."""
    g = torch.Generator().manual_seed(seed + 17 * len(shape))
    full = list(shape)
    if layout == "T":
        full = list(reversed(full))
    if layout == "nd" and full:
        full[-1] *= 2
    if dtype == torch.bool:
        t = torch.rand(full, generator=g) > 0.5
    elif dtype == torch.uint8:
        t = torch.randint(0, 13, full, generator=g).to(dtype)
    elif dtype in INTS:
        t = torch.randint(-6, 7, full, generator=g).to(dtype)
    elif dtype in COMPLEX:
        t = torch.complex(torch.randn(full, generator=g), torch.randn(full, generator=g)).to(dtype)
    else:
        t = (torch.randn(full, generator=g) * 2).to(dtype)
        if special and t.numel() >= 4:
            flat = t.view(-1)
            flat[0], flat[1], flat[2], flat[3] = float("nan"), float("inf"), -0.0, float("-inf")
    if layout == "T":
        t = t.permute(*reversed(range(t.dim())))
    elif layout == "nd" and full:
        t = t[..., ::2]
    elif layout == "cl":
        t = t.contiguous(memory_format=torch.channels_last)
    return t.to(device)


def check(got, want, exact=False, loose=False):
    assert got.dtype == want.dtype, f"dtype {got.dtype}, torch gives {want.dtype}"
    assert got.shape == want.shape, f"shape {tuple(got.shape)}, torch gives {tuple(want.shape)}"
    assert got.stride() == want.stride(), f"strides {got.stride()}, torch gives {want.stride()}"
    if exact or not (want.is_floating_point() or want.is_complex()):
        torch.testing.assert_close(got, want, rtol=0, atol=0, equal_nan=True)
    elif loose and want.dtype in (torch.float16, torch.bfloat16):
        # torch rounds float16/bfloat16 once in its vector loop and twice
        # (after alpha * other) in its scalar tail; aotirt always once.
        ulp = 2.0**-10 if want.dtype == torch.float16 else 2.0**-7
        # The intermediate's rounding error is relative to the operands, not
        # to the (possibly cancelled) result.
        scale = float(want.float().nan_to_num(0, 0, 0).abs().max()) if want.numel() else 0.0
        torch.testing.assert_close(got, want, rtol=2 * ulp, atol=2 * ulp * scale + 1e-5, equal_nan=True)
    else:
        torch.testing.assert_close(got, want, equal_nan=True)


def same_outcome(ours, theirs, exact=False, loose=False):
    """Runs eager torch; when it refuses, the shim must fail too."""
    try:
        want = theirs()
    except RuntimeError:
        with pytest.raises(ShimError):
            ours()
        return
    check(ours(), want, exact, loose)


def call(shims, name, device, *args):
    (r,) = out_handles(1)
    shims.call(name, *args, ctypes.byref(r))
    return shims.tensor(r, device).to(device)


D = ctypes.c_double

# ---------------------------------------------------------------- binary ops

# Same-dtype pairs run every shape and layout pair; mixed pairs (promotion)
# a few, which keeps the file fast.
BINARY_SHAPES = [((3, 4), (3, 4)), ((3, 1), (1, 4)), ((), (3, 4)), ((3, 4), ()), ((0, 3), (3,)),
                 ((2, 1, 3), (4, 1))]
LAYOUT_PAIRS = [("c", "c"), ("T", "c"), ("nd", "T")]
MIXED_SHAPES = [((3, 4), (4,)), ((), (3, 4)), ((3, 4), ())]
MIXED_LAYOUTS = [("c", "c"), ("T", "T")]
MIXED = [(torch.int32, torch.float32), (torch.uint8, torch.int8), (torch.bool, torch.int64),
         (torch.float16, torch.bfloat16), (torch.int64, torch.int16), (torch.float64, torch.float16),
         (torch.complex64, torch.float64), (torch.bool, torch.float16), (torch.uint8, torch.bool),
         (torch.float16, torch.float64), (torch.bfloat16, torch.float32)]


def binary_eager(op, a, b, alpha):
    if op == "add":
        return torch.add(a, b, alpha=alpha)
    if op == "sub":
        return torch.sub(a, b, alpha=alpha)
    if op == "mul":
        return torch.mul(a, b)
    if op == "pow":
        return torch.pow(a, b)
    if op == "gcd":
        return torch.gcd(a, b)
    raise AssertionError(op)


def binary_shim(shims, op, device, a, b, alpha):
    ha, hb = shims.handle(a), shims.handle(b)
    if op == "add":
        return call(shims, f"aoti_torch_{device}_add_Tensor", device, ha, hb, D(alpha))
    if op == "sub":
        return call(shims, "aoti_torch_aten_subtract_Tensor", device, ha, hb, D(alpha))
    name = {"mul": "mul_Tensor", "pow": "pow_Tensor_Tensor", "gcd": "gcd"}[op]
    return call(shims, f"aoti_torch_{device}_{name}", device, ha, hb)


def shim_name(op, device):
    return {"add": f"aoti_torch_{device}_add_Tensor", "sub": "aoti_torch_aten_subtract_Tensor",
            "mul": f"aoti_torch_{device}_mul_Tensor", "pow": f"aoti_torch_{device}_pow_Tensor_Tensor",
            "gcd": f"aoti_torch_{device}_gcd"}[op]


BINARY_OPS = ["add", "sub", "mul", "pow", "gcd"]


def binary_cases():
    for device in devices():
        groups = [([(d, d) for d in ALL], BINARY_SHAPES, LAYOUT_PAIRS), (MIXED, MIXED_SHAPES, MIXED_LAYOUTS)]
        for dtypes, shapes, layouts in groups:
            for da, db in dtypes:
                for sa, sb in shapes:
                    for la, lb in layouts:
                        if (la != "c" and not sa) or (lb != "c" and not sb):
                            continue
                        yield pytest.param(device, da, db, sa, sb, la, lb,
                                           id=f"{device}-{str(da)[6:]}-{str(db)[6:]}-{sa}{la}-{sb}{lb}")


@pytest.mark.parametrize("device,da,db,sa,sb,la,lb", list(binary_cases()))
def test_binary_matches_eager(shims, device, da, db, sa, sb, la, lb):
    # Each of add, sub, mul, pow and gcd on the same operands.
    for op in BINARY_OPS:
        name = shim_name(op, device)
        if not provided(shims, name):
            continue
        a = make(sa, da, device, la, seed=1, special=True)
        b = make(sb, db, device, lb, seed=2)
        if op == "pow" and (da in INTS or db in INTS):
            b = b.clamp(-2, 5) if db != torch.bool else b
        # A float alpha: an integral result is refused, as torch refuses it.
        alpha = 1.0 if op in ("add", "sub") else None
        ours = lambda: binary_shim(shims, op, device, a, b, alpha)  # noqa: E731
        theirs = lambda: binary_eager(op, a, b, alpha)  # noqa: E731
        same_outcome(ours, theirs)


@pytest.mark.parametrize("device", devices())
@pytest.mark.parametrize("op", ["add", "sub"])
@pytest.mark.parametrize("dtype", FLOATS + COMPLEX)
@pytest.mark.parametrize("alpha", [2.5, -1.0, 0.0, 1e-3])
def test_alpha(shims, device, op, dtype, alpha):
    need(shims, shim_name(op, device))
    a, b = make((5, 7), dtype, device, seed=3), make((7,), dtype, device, seed=4)
    ours = lambda: binary_shim(shims, op, device, a, b, alpha)  # noqa: E731
    same_outcome(ours, lambda: binary_eager(op, a, b, alpha), loose=True)


@pytest.mark.parametrize("device", devices())
def test_layouts_follow_tensor_iterator(shims, device):
    # Output strides for same-layout, mixed-layout, broadcast and empty inputs.
    need(shims, f"aoti_torch_{device}_mul_Tensor")
    cl = make((2, 3, 4, 5), torch.float32, device, "cl")
    cases = [
        (cl, make((2, 3, 4, 5), torch.float32, device, "cl", seed=5)),
        (cl, make((2, 3, 4, 5), torch.float32, device)),
        (cl, make((3, 1, 1), torch.float32, device)),
        (make((4, 1), torch.float32, device, "T"), make((4, 3), torch.float32, device, "T")),
        (torch.empty_strided((3, 1, 4), (4, 100, 1), device=device).fill_(1.5), torch.ones(1, device=device)),
        (make((1, 3), torch.float32, device).t(), torch.ones((), device=device)),
        (make((4, 0), torch.float32, device, "T"), torch.ones(4, 1, 1, device=device)),
        (make((4, 3), torch.int32, device, "nd"), make((4, 3), torch.float32, device)),
        (make((2, 3, 4, 5, 6), torch.float32, device).permute(0, 2, 3, 4, 1),
         make((2, 3, 4, 5, 6), torch.float32, device).permute(0, 2, 3, 4, 1)),
    ]
    for a, b in cases:
        check(call(shims, f"aoti_torch_{device}_mul_Tensor", device, shims.handle(a), shims.handle(b)),
              torch.mul(a, b))


@pytest.mark.parametrize("device", devices())
def test_integer_pow_and_gcd_edges(shims, device):
    need(shims, f"aoti_torch_{device}_pow_Tensor_Tensor")
    base = torch.tensor([1, -1, -1, 2, 0, 3, -3, 7, 2], device=device)
    exp = torch.tensor([-3, -3, -2, -1, -1, 0, 3, 25, 63], device=device)
    check(call(shims, f"aoti_torch_{device}_pow_Tensor_Tensor", device, shims.handle(base), shims.handle(exp)),
          torch.pow(base, exp))
    b8 = torch.tensor([3, -2, 5], dtype=torch.int8, device=device)
    e8 = torch.tensor([7, 9, 3], dtype=torch.int8, device=device)
    check(call(shims, f"aoti_torch_{device}_pow_Tensor_Tensor", device, shims.handle(b8), shims.handle(e8)),
          torch.pow(b8, e8))
    need(shims, f"aoti_torch_{device}_gcd")
    for dtype, lo in [(torch.int64, -2**63), (torch.int8, -128), (torch.int32, -2**31)]:
        a = torch.tensor([lo, lo, 0, 12, -18, 0, 7], dtype=dtype, device=device)
        b = torch.tensor([0, 6, 0, -8, 12, -5, 7], dtype=dtype, device=device)
        check(call(shims, f"aoti_torch_{device}_gcd", device, shims.handle(a), shims.handle(b)), torch.gcd(a, b))


@pytest.mark.parametrize("device", devices())
def test_large_binary_takes_every_element(shims, device):
    # The parallel paths: many rows, one long row, and a broadcast operand.
    need(shims, f"aoti_torch_{device}_add_Tensor")
    for sa, sb in [((300, 257), (257,)), ((1, 300000), (1,)), ((257, 300), (257, 1))]:
        a, b = make(sa, torch.float32, device, seed=7), make(sb, torch.float32, device, seed=8)
        check(call(shims, f"aoti_torch_{device}_add_Tensor", device, shims.handle(a), shims.handle(b), D(0.5)),
              torch.add(a, b, alpha=0.5))
        at = make(sa, torch.float32, device, "T", seed=9)
        check(call(shims, f"aoti_torch_{device}_mul_Tensor", device, shims.handle(at), shims.handle(b)),
              torch.mul(at, b))


@pytest.mark.parametrize("device", devices())
def test_zero_dim_cpu_operand(shims, device):
    # A 0-d CPU tensor joins a tensor on any device, as in torch; its value
    # takes part in promotion as a 0-d tensor, and the result lives on the
    # other operand's device.
    need(shims, f"aoti_torch_{device}_add_Tensor")
    x16 = make((5, 7), torch.float16, device, "T", seed=21)
    xi = make((4, 6), torch.int32, device, seed=22)
    for a, b in [(x16, torch.tensor(2.5, dtype=torch.float64)), (torch.tensor(3, dtype=torch.int64), x16),
                 (xi, torch.tensor(2.5)), (torch.tensor(-3), xi), (xi, torch.tensor(True)),
                 (make((3, 4), torch.complex64, device, seed=23), torch.tensor(1.5 - 2j, dtype=torch.complex128))]:
        for op in BINARY_OPS:
            if not provided(shims, shim_name(op, device)):
                continue
            alpha = 1.0 if op in ("add", "sub") else None
            if device != "cpu":
                # Some of torch's CUDA kernels (gcd's) assert on a CPU
                # scalar instead of reading it; aotirt computes those.
                try:
                    want = binary_eager(op, a, b, alpha)
                except RuntimeError as e:
                    if "expected a CUDA device" in str(e):
                        continue
                    with pytest.raises(ShimError):
                        binary_shim(shims, op, device, a, b, alpha)
                    continue
                check(binary_shim(shims, op, device, a, b, alpha), want)
                continue
            same_outcome(lambda: binary_shim(shims, op, device, a, b, alpha),
                         lambda: binary_eager(op, a, b, alpha))


@pytest.mark.parametrize("device", devices())
def test_mixed_devices_refused(shims, device):
    # A dimensioned CPU tensor cannot join a tensor on another device.
    if device == "cpu":
        pytest.skip("needs a second device")
    need(shims, f"aoti_torch_{device}_mul_Tensor")
    a, b = make((3, 4), torch.float32, device), make((3, 4), torch.float32)
    for x, y in [(a, b), (b, a)]:
        for op in BINARY_OPS:
            if provided(shims, shim_name(op, device)):
                with pytest.raises(ShimError):
                    binary_shim(shims, op, device, x, y, 1.0 if op in ("add", "sub") else None)
    with pytest.raises(ShimError):
        call(shims, f"aoti_torch_{device}_abs", device, shims.handle(b))


@pytest.mark.parametrize("device", devices())
def test_many_dims_and_odd_layouts(shims, device):
    # Dims that cannot be merged (two different permutations, a broadcast
    # between them), and a storage offset.
    need(shims, f"aoti_torch_{device}_mul_Tensor")
    base = make((2, 3, 2, 3, 2, 3, 2), torch.float32, device, seed=31)
    a = base.permute(6, 3, 1, 4, 2, 0, 5)  # (2, 3, 3, 2, 2, 2, 3)
    b = make((3, 2, 2, 2, 3, 3, 2), torch.float32, device, seed=32).permute(1, 0, 4, 2, 3, 6, 5)[:, :, :1]
    for x, y in [(a, b), (b, a), (a[1:, 1:], b[1:, 1:])]:
        check(call(shims, f"aoti_torch_{device}_mul_Tensor", device, shims.handle(x), shims.handle(y)),
              torch.mul(x, y))
        if provided(shims, f"aoti_torch_{device}_pow_Tensor_Scalar"):
            check(call(shims, f"aoti_torch_{device}_pow_Tensor_Scalar", device, shims.handle(x), D(2.5)),
                  torch.pow(x, 2.5))


@pytest.mark.parametrize("device", devices())
def test_large_unary_and_scalar(shims, device):
    # Several blocks' worth of elements through the unary and Scalar paths,
    # strided.
    need(shims, f"aoti_torch_{device}_abs")
    x = make((700, 513), torch.float32, device, "T", seed=41, special=True)
    xi = make((300, 1001), torch.int64, device, "nd", seed=42)
    check(call(shims, f"aoti_torch_{device}_abs", device, shims.handle(x)), torch.abs(x))
    check(call(shims, f"aoti_torch_{device}_abs", device, shims.handle(xi)), torch.abs(xi))
    for name, args, want in [
            ("angle", (shims.handle(x),), torch.angle(x)),
            ("angle", (shims.handle(xi),), torch.angle(xi)),
            ("pow_Tensor_Scalar", (shims.handle(x), D(3.0)), torch.pow(x, 3.0)),
            ("pow_Tensor_Scalar", (shims.handle(xi), D(-0.5)), torch.pow(xi, -0.5)),
            ("pow_Scalar", (D(1.5), shims.handle(xi)), torch.pow(1.5, xi)),
            ("add_Scalar", (shims.handle(xi), D(0.25), D(2.0)), torch.add(xi, 0.25, alpha=2.0)),
            ("mul_Scalar", (shims.handle(x), D(-3.0)), torch.mul(x, -3.0))]:
        if provided(shims, f"aoti_torch_{device}_{name}"):
            check(call(shims, f"aoti_torch_{device}_{name}", device, *args), want)


# ---------------------------------------------------------------- scalar ops

SCALAR_CASES = [((), "c"), ((0,), "c"), ((3, 4), "c"), ((3, 4), "T"), ((3, 4), "nd"), ((2, 3, 4, 5), "T"),
                ((2, 3, 4, 5), "cl")]


def scalar_cases(dtypes):
    for device in devices():
        for dtype in dtypes:
            for shape, layout in SCALAR_CASES:
                yield pytest.param(device, dtype, shape, layout, id=f"{device}-{str(dtype)[6:]}-{shape}-{layout}")


@pytest.mark.parametrize("device,dtype,shape,layout", list(scalar_cases(ALL)))
def test_add_and_mul_scalar(shims, device, dtype, shape, layout):
    need(shims, f"aoti_torch_{device}_add_Scalar")
    need(shims, f"aoti_torch_{device}_mul_Scalar")
    t = make(shape, dtype, device, layout, special=True)
    for other, alpha in [(2.0, 1.0), (-1.7, 0.5), (0.1, -3.0)]:
        same_outcome(lambda: call(shims, f"aoti_torch_{device}_add_Scalar", device, shims.handle(t), D(other),
                                  D(alpha)),
                     lambda: torch.add(t, other, alpha=alpha), loose=alpha != 1.0)
        same_outcome(lambda: call(shims, f"aoti_torch_{device}_mul_Scalar", device, shims.handle(t), D(other)),
                     lambda: torch.mul(t, other))


EXPONENTS = [0.0, 1.0, 2.0, 3.0, -2.0, 0.5, -0.5, -1.0, 2.5, -1.5, 1.75]


@pytest.mark.parametrize("device,dtype,shape,layout", list(scalar_cases(ALL)))
def test_pow_tensor_scalar(shims, device, dtype, shape, layout):
    need(shims, f"aoti_torch_{device}_pow_Tensor_Scalar")
    t = make(shape, dtype, device, layout, special=True)
    for e in EXPONENTS:
        same_outcome(lambda: call(shims, f"aoti_torch_{device}_pow_Tensor_Scalar", device, shims.handle(t), D(e)),
                     lambda: torch.pow(t, e))


@pytest.mark.parametrize("device,dtype,shape,layout", list(scalar_cases(ALL)))
def test_pow_scalar(shims, device, dtype, shape, layout):
    need(shims, f"aoti_torch_{device}_pow_Scalar")
    t = make(shape, dtype, device, layout, special=True)
    if dtype in INTS:
        t = t.clamp(-3, 6)
    for base in [1.0, 2.0, 0.5, -2.0, 0.0, 2.5]:
        same_outcome(lambda: call(shims, f"aoti_torch_{device}_pow_Scalar", device, D(base), shims.handle(t)),
                     lambda: torch.pow(base, t))


# ---------------------------------------------------------------- unary ops

@pytest.mark.parametrize("device,dtype,shape,layout", list(scalar_cases(ALL)))
def test_abs_and_angle(shims, device, dtype, shape, layout):
    t = make(shape, dtype, device, layout, special=True)
    if dtype in INTS and dtype != torch.uint8 and t.numel() and t.is_contiguous():
        t.view(-1)[0] = torch.iinfo(dtype).min  # abs wraps it to itself
    for op in ("abs", "angle"):
        need(shims, f"aoti_torch_{device}_{op}")
        same_outcome(lambda: call(shims, f"aoti_torch_{device}_{op}", device, shims.handle(t)),
                     lambda: getattr(torch, op)(t))


@pytest.mark.parametrize("device", devices())
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_polar(shims, device, dtype):
    need(shims, f"aoti_torch_{device}_polar")
    name = f"aoti_torch_{device}_polar"
    for (sa, la), (sb, lb) in [(((3, 4), "c"), ((3, 4), "c")), (((3, 4), "T"), ((3, 4), "T")),
                               (((2, 1), "c"), ((3,), "c")), (((), "c"), ((3,), "c")), (((0, 2), "c"), ((2,), "c")),
                               (((3, 4), "nd"), ((4,), "c"))]:
        r = make(sa, dtype, device, la, seed=1).abs()
        th = make(sb, dtype, device, lb, seed=2)
        check(call(shims, name, device, shims.handle(r), shims.handle(th)), torch.polar(r, th))
    # torch refuses mixed and non-float dtypes.
    for da, db in [(torch.float32, torch.float64), (torch.int32, torch.int32), (torch.float16, torch.float16)]:
        r, th = make((3,), da, device), make((3,), db, device)
        same_outcome(lambda: call(shims, name, device, shims.handle(r), shims.handle(th)),
                     lambda: torch.polar(r, th))


# ---------------------------------------------------------------- fill_

FILL_VALUES = [0.0, 1.0, -2.7, 2.5, 127.0, 128.0, -129.0, 255.0, 256.0, -1.0, 65504.0, 65520.0, 1e10, 1e39,
               float("inf"), float("-inf"), float("nan"), 2.0**31, 2.0**63, -2.0**63, 1e300]


@pytest.mark.parametrize("device", devices())
@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("generic", [False, True])
def test_fill(shims, device, dtype, generic):
    name = "aoti_torch_aten_fill__Scalar" if generic else f"aoti_torch_{device}_fill__Scalar"
    need(shims, name)
    for layout, shape in [("c", (3, 4)), ("T", (3, 4)), ("nd", (3, 4)), ("c", ()), ("c", (0, 2))]:
        for v in FILL_VALUES:
            base = make(shape, dtype, device, layout)
            ours, theirs = base.clone(memory_format=torch.preserve_format), base.clone(memory_format=torch.preserve_format)
            if layout == "nd":
                ours, theirs = make(shape, dtype, device, layout), make(shape, dtype, device, layout)
            try:
                theirs.fill_(v)
            except RuntimeError:
                with pytest.raises(ShimError):
                    shims.call(name, shims.handle(ours), D(v))
                continue
            rc = shims.fn(name)(shims.handle(ours), D(v))
            assert rc == 0, f"fill_({v}) on {dtype} failed"
            torch.testing.assert_close(ours, theirs, rtol=0, atol=0, equal_nan=True)


@pytest.mark.parametrize("device", devices())
def test_fill_large_and_expanded(shims, device):
    name = f"aoti_torch_{device}_fill__Scalar"
    need(shims, name)
    big = torch.zeros(300, 400, device=device).t()
    shims.call(name, shims.handle(big), D(3.25))
    assert bool((big == 3.25).all())
    ex = torch.zeros(1, device=device).expand(5)
    shims.call(name, shims.handle(ex), D(-1.5))
    assert bool((ex == -1.5).all())


# ---------------------------------------------------------------- amax

AMAX_CASES = [((), []), ((), [0]), ((), [-1]), ((7,), [0]), ((7,), []), ((3, 4, 5), [1]), ((3, 4, 5), [0, 2]),
              ((3, 4, 5), [-1, 0]), ((3, 4, 5), []), ((0, 3), [1]), ((2, 3, 4, 5), [1]), ((2, 3, 4, 5), [2, 3])]


def amax_cases():
    for device in devices():
        for dtype in [torch.bool] + INTS + FLOATS:
            for shape, dims in AMAX_CASES:
                yield pytest.param(device, dtype, shape, dims, id=f"{device}-{str(dtype)[6:]}-{shape}-{dims}")


def run_amax(shims, device, t, dims, keepdim):
    arr = (ctypes.c_int64 * max(len(dims), 1))(*dims)
    return call(shims, "aoti_torch_aten_amax", device, shims.handle(t), arr, ctypes.c_int64(len(dims)),
                ctypes.c_int32(int(keepdim)))


@pytest.mark.parametrize("device,dtype,shape,dims", list(amax_cases()))
def test_amax(shims, device, dtype, shape, dims):
    need(shims, "aoti_torch_aten_amax")
    for layout in (["c", "T", "nd"] + (["cl"] if len(shape) == 4 else []) if shape else ["c"]):
        t = make(shape, dtype, device, layout, special=True)
        for keepdim in (False, True):
            ours = lambda: run_amax(shims, device, t, dims, keepdim)  # noqa: E731
            same_outcome(ours, lambda: torch.amax(t, dims, keepdim), exact=True)


@pytest.mark.parametrize("device", devices())
def test_amax_refusals_and_large(shims, device):
    need(shims, "aoti_torch_aten_amax")
    t = make((3, 4), torch.float32, device)
    for dims in ([2], [-3], [1, -1]):
        with pytest.raises(ShimError):
            run_amax(shims, device, t, dims, False)
    for bad in (torch.ones(0, 3, device=device), torch.ones(3, dtype=torch.complex64, device=device)):
        with pytest.raises(ShimError):
            run_amax(shims, device, bad, [0] if bad.is_complex() else [], False)
    for shape, dims in [((500, 300), [1]), ((500, 300), [0]), ((1, 400000), [1]), ((400000,), [])]:
        x = make(shape, torch.float32, device, seed=11)
        check(run_amax(shims, device, x, dims, False), torch.amax(x, dims), exact=True)
    x = make((400000,), torch.float32, device, seed=12)
    x[123457] = float("nan")
    check(run_amax(shims, device, x, [0], True), torch.amax(x, [0], True), exact=True)
    # Outer dims reduced, inner kept (slices folded into the output), every
    # dtype, with a NaN among the floats.
    for dtype in [torch.bool] + INTS + FLOATS:
        for layout in ("c", "nd"):
            x = make((30, 7, 40), dtype, device, layout, seed=13)
            if dtype.is_floating_point:
                x[17, 3, 5] = float("nan")
            for dims, keepdim in [([0], False), ([0, 1], True), ([1], False)]:
                check(run_amax(shims, device, x, dims, keepdim), torch.amax(x, dims, keepdim), exact=True)
