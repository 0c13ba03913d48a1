"""Conformance of the linear-algebra fallback ops with eager PyTorch on the
same device: addmv, addbmm, _addmm_activation, mm.dtype_out, _cdist_forward,
_pdist_forward, _trilinear, _int_mm.out, _fused_rms_norm, the weight-only
quantized GEMMs (_weight_int8pack_mm, _weight_int4pack_mm_cpu_tensor,
_weight_int4pack_mm on CUDA, and the reference path of
_dyn_quant_pack_4bit_weight / _dyn_quant_matmul_4bit) and the LAPACK-backed
cholesky_solve, cholesky_inverse, triangular_solve, geqrf, ormqr and
lu_unpack. Each op over its dtypes, contiguous and
transposed operands, broadcast where it broadcasts, 0-size operands; output
dtype, sizes and strides must equal torch's, values within a tolerance fit
for the dtype (exact for _int_mm). CUDA runs on a GPU machine where a CUDA
shim exists.
"""
from __future__ import annotations

import ctypes
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from shim_harness import devices, provided
from shim_harness import DTYPE_CODES, ShimError, Shims, library_path, out_handles

pytestmark = pytest.mark.skipif(not library_path().exists(),
                                reason=f"{library_path()} not built (scripts/build.sh)")

FLOATS = [torch.float32, torch.float64, torch.bfloat16, torch.float16]
A = torch.ops.aten


def need(shims, device, op):
    name = f"aoti_torch_{device}_{op}"
    if not provided(shims, name):
        pytest.skip(f"{name} is not provided yet")
    return name


def rand(shape, dtype, device, transposed=False, seed=0):
    """Values in [-1, 1); |transposed| gives the same shape with the last two
    dims' strides swapped."""
    g = torch.Generator().manual_seed(seed)
    if transposed and len(shape) >= 2:
        s = list(shape)
        s[-1], s[-2] = s[-2], s[-1]
        return (torch.rand(s, generator=g) * 2 - 1).to(dtype).to(device).transpose(-1, -2)
    return (torch.rand(shape, generator=g) * 2 - 1).to(dtype).to(device)


def tol(dtype):
    return {torch.float32: dict(rtol=1e-5, atol=1e-5), torch.float64: dict(rtol=1e-10, atol=1e-10),
            torch.bfloat16: dict(rtol=2e-2, atol=2e-2), torch.float16: dict(rtol=2e-3, atol=2e-3)}[dtype]


def check(got, want, **kw):
    assert got.dtype == want.dtype, f"dtype {got.dtype}, torch gives {want.dtype}"
    assert got.shape == want.shape, f"shape {tuple(got.shape)}, torch gives {tuple(want.shape)}"
    if got.numel() > 1:
        assert got.stride() == want.stride(), f"strides {got.stride()}, torch gives {want.stride()}"
    opts = tol(want.dtype) if want.dtype.is_floating_point else dict(rtol=0, atol=0)
    opts.update(kw)
    torch.testing.assert_close(got, want, equal_nan=True, **opts)


def call1(shims, name, device, *args):
    (r,) = out_handles(1)
    shims.call(name, *args, ctypes.byref(r))
    return shims.tensor(r, device).to(device)


def i64s(values):
    return (ctypes.c_int64 * max(len(values), 1))(*values), ctypes.c_int64(len(values))


# ---- addmv, addbmm, _addmm_activation ----

@pytest.mark.parametrize("device", devices())
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("case", ["plain", "T", "bcast", "scalar_self", "beta0_nan", "k0", "m0"])
def test_addmv(shims, device, dtype, case):
    name = need(shims, device, "addmv")
    m, k = (5, 7) if case not in ("k0", "m0") else ((5, 0) if case == "k0" else (0, 4))
    mat = rand((m, k), dtype, device, transposed=case == "T")
    vec = rand((k,), dtype, device, seed=1)
    self_shape = {"bcast": (1,), "scalar_self": ()}.get(case, (m,))
    self = rand(self_shape, dtype, device, seed=2)
    beta, alpha = (0.0, 1.5) if case == "beta0_nan" else (0.5, -2.0)
    if case == "beta0_nan":
        self = torch.full_like(self, float("nan"))
    got = call1(shims, name, device, shims.handle(self), shims.handle(mat), shims.handle(vec), ctypes.c_double(beta),
                ctypes.c_double(alpha))
    check(got, torch.addmv(self, mat, vec, beta=beta, alpha=alpha))
    if case == "T":  # a strided vector too
        v2 = rand((2 * k,), dtype, device, seed=4)[::2]
        got = call1(shims, name, device, shims.handle(self), shims.handle(mat), shims.handle(v2),
                    ctypes.c_double(1.0), ctypes.c_double(1.0))
        check(got, torch.addmv(self, mat, v2))


@pytest.mark.parametrize("device", devices())
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("case", ["plain", "T", "bcast", "beta0_nan", "b0", "k0"])
def test_addbmm(shims, device, dtype, case):
    name = need(shims, device, "addbmm")
    b = 0 if case == "b0" else 3
    k = 0 if case == "k0" else 6
    b1 = rand((b, 4, k), dtype, device, transposed=case == "T")
    b2 = rand((b, k, 5), dtype, device, transposed=case == "T", seed=1)
    self = rand((5,) if case == "bcast" else (4, 5), dtype, device, seed=2)
    beta, alpha = (0.0, 1.0) if case == "beta0_nan" else (1.5, 0.5)
    if case == "beta0_nan":
        self = torch.full_like(self, float("nan"))
    got = call1(shims, name, device, shims.handle(self), shims.handle(b1), shims.handle(b2), ctypes.c_double(beta),
                ctypes.c_double(alpha))
    check(got, torch.addbmm(self, b1, b2, beta=beta, alpha=alpha))


@pytest.mark.parametrize("device", devices())
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("use_gelu", [0, 1])
@pytest.mark.parametrize("case", ["bias", "T", "full_self", "beta0_nan", "k0"])
def test_addmm_activation(shims, device, dtype, use_gelu, case):
    name = need(shims, device, "_addmm_activation")
    k = 0 if case == "k0" else 9
    m1 = rand((6, k), dtype, device, transposed=case == "T")
    m2 = rand((k, 5), dtype, device, transposed=case == "T", seed=1)
    self = rand((6, 5) if case in ("full_self", "beta0_nan") else (5,), dtype, device, seed=2)
    beta, alpha = (0.0, 1.0) if case == "beta0_nan" else (0.75, 1.25)
    if case == "beta0_nan":
        self = torch.full_like(self, float("nan"))
    (r,) = out_handles(1)
    shims.call(name, shims.handle(self), shims.handle(m1), shims.handle(m2), ctypes.c_double(beta),
               ctypes.c_double(alpha), ctypes.c_int32(use_gelu), ctypes.byref(r))
    got = shims.tensor(r, device).to(device)
    check(got, A._addmm_activation(self, m1, m2, beta=beta, alpha=alpha, use_gelu=bool(use_gelu)))


@pytest.mark.parametrize("device", devices())
@pytest.mark.parametrize("dtypes", [(torch.bfloat16, torch.float32), (torch.float16, torch.float32),
                                    (torch.float32, torch.float32), (torch.bfloat16, torch.bfloat16)])
@pytest.mark.parametrize("case", ["plain", "T", "out_T", "k0"])
def test_mm_dtype_out(shims, device, dtypes, case):
    name = need(shims, device, "mm_dtype_out")
    in_dtype, out_dtype = dtypes
    m, k, n = (37, 0 if case == "k0" else 70, 45)
    a = rand((m, k), in_dtype, device, transposed=case == "T")
    b = rand((k, n), in_dtype, device, transposed=case == "T", seed=1)
    # out= is written in place, at its own strides.
    out = (torch.empty((n, m), dtype=out_dtype, device=device).t() if case == "out_T"
           else torch.empty((m, n), dtype=out_dtype, device=device))
    shims.call(name, shims.handle(out), shims.handle(a), shims.handle(b), ctypes.c_int32(DTYPE_CODES[out_dtype]))
    want = A.mm.dtype(a, b, out_dtype)
    opts = dict(rtol=1e-4, atol=1e-4) if out_dtype == torch.float32 else tol(out_dtype)
    torch.testing.assert_close(out, want, **opts)


@pytest.mark.parametrize("device", devices())
def test_mm_dtype_out_refusals(shims, device):
    name = need(shims, device, "mm_dtype_out")
    a = rand((4, 8), torch.float32, device)
    b = rand((8, 3), torch.float32, device)
    out = torch.empty((4, 3), dtype=torch.bfloat16, device=device)
    with pytest.raises(ShimError):  # float32 inputs give float32 only
        shims.call(name, shims.handle(out), shims.handle(a), shims.handle(b),
                   ctypes.c_int32(DTYPE_CODES[torch.bfloat16]))
    out = torch.empty((4, 3), dtype=torch.float32, device=device)
    with pytest.raises(ShimError):  # out's dtype differs from out_dtype
        shims.call(name, shims.handle(out), shims.handle(a.bfloat16()), shims.handle(b.bfloat16()),
                   ctypes.c_int32(DTYPE_CODES[torch.bfloat16]))
    with pytest.raises(ShimError):  # inner sizes differ
        shims.call(name, shims.handle(out), shims.handle(a), shims.handle(b[:5]),
                   ctypes.c_int32(DTYPE_CODES[torch.float32]))


# ---- _cdist_forward, _pdist_forward ----

CDIST_CASES = [((5, 3), (4, 3)), ((2, 5, 3), (1, 4, 3)), ((3, 1, 6, 2), (4, 7, 2)), ((30, 4), (20, 4)),
               ((0, 3), (4, 3)), ((2, 0), (4, 0)), ((2, 3, 0, 3), (1, 4, 3))]


@pytest.mark.parametrize("device", devices())
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("p", [0.0, 1.0, 2.0, 3.0, 0.5, float("inf")])
@pytest.mark.parametrize("shapes", CDIST_CASES, ids=[f"{a}x{b}" for a, b in CDIST_CASES])
def test_cdist(shims, device, dtype, p, shapes):
    name = need(shims, device, "_cdist_forward")
    s1, s2 = shapes
    x1 = rand(s1, dtype, device, transposed=len(s1) == 3)
    x2 = rand(s2, dtype, device, seed=1)
    modes = [None, 1, 2] if p == 2.0 else [None]
    for mode in modes:
        mode_p = None if mode is None else ctypes.byref(ctypes.c_int64(mode))
        got = call1(shims, name, device, shims.handle(x1), shims.handle(x2), ctypes.c_double(p), mode_p)
        # The matrix-product path rounds differently (and clamps at 1e-15).
        extra = dict(rtol=1e-4, atol=1e-4) if dtype == torch.float32 else dict(rtol=1e-7, atol=1e-7)
        check(got, A._cdist_forward(x1, x2, p, mode), **extra)


@pytest.mark.parametrize("device", devices())
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("p", [0.0, 1.0, 2.0, 1.5, float("inf")])
@pytest.mark.parametrize("shape", [(6, 4), (1, 3), (0, 3), (3, 0), (40, 7)])
def test_pdist(shims, device, dtype, p, shape):
    name = need(shims, device, "_pdist_forward")
    x = rand(shape, dtype, device)
    got = call1(shims, name, device, shims.handle(x), ctypes.c_double(p))
    check(got, A._pdist_forward(x, p))


# ---- _trilinear ----

TRILINEAR_CASES = [
    # bilinear: input1 [B, in1], weight [out, in1, in2], input2 [B, in2]
    ((4, 3), (5, 3, 2), (4, 2), [1, 3], [0], [1, 2], [2, 3], 1),
    ((4, 3), (5, 3, 2), (4, 2), [1, 3], [0], [1, 2], [3], 0),
    ((4, 3), (5, 3, 2), (4, 2), [1, 3], [0], [1, 2], [], 2),
    ((3, 4), (3, 4), (3, 4), [], [], [], [0], 1),
    ((3, 4), (3, 4), (3, 4), [], [], [], [-1], 0),
    ((0, 3), (5, 3, 2), (0, 2), [1, 3], [0], [1, 2], [2, 3], 1),
    ((4, 0), (5, 0, 2), (4, 2), [1, 3], [0], [1, 2], [2, 3], 1),
]


@pytest.mark.parametrize("device", devices())
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("case", TRILINEAR_CASES, ids=[str(i) for i in range(len(TRILINEAR_CASES))])
def test_trilinear(shims, device, dtype, transposed, case):
    name = need(shims, device, "_trilinear")
    s1, s2, s3, e1, e2, e3, sd, unroll = case
    ts = [rand(s, dtype, device, transposed=transposed, seed=i) for i, s in enumerate((s1, s2, s3))]
    lists = [i64s(v) for v in (e1, e2, e3, sd)]
    flat = [x for pair in lists for x in pair]
    got = call1(shims, name, device, *[shims.handle(t) for t in ts], *flat, ctypes.c_int64(unroll))
    want = A._trilinear(*ts, e1, e2, e3, sd, unroll)
    check(got, want, **({} if dtype in (torch.float32, torch.float64) else dict(rtol=3e-2, atol=3e-2)))


# ---- _int_mm.out ----

@pytest.mark.parametrize("device", devices())
@pytest.mark.parametrize("shape", [(5, 7, 3), (1, 5, 1), (0, 4, 3), (4, 0, 3), (33, 64, 17), (17, 8, 8),
                                   (33, 64, 24), (300, 256, 520)])
@pytest.mark.parametrize("layout", ["rows", "cols", "weight_t"])
def test_int_mm_out(shims, device, shape, layout):
    """CUDA takes torch's CUDA shapes only (more than 16 rows, K and N
    multiples of 8) and refuses the rest as torch does; "weight_t" (self
    row-major, mat2 a transposed weight) is the form cuBLASLt's int8 GEMM
    takes, the others run on aotirt's own kernel."""
    name = need(shims, device, "_int_mm_out")
    m, k, n = shape
    g = torch.Generator().manual_seed(0)
    a = torch.randint(-128, 128, (m, k), generator=g, dtype=torch.int8)
    b = torch.randint(-128, 128, (k, n), generator=g, dtype=torch.int8)
    if layout == "cols":
        a, b = a.t().contiguous().t(), b.t().contiguous().t()
    elif layout == "weight_t":
        b = b.t().contiguous().t()
    a, b = a.to(device), b.to(device)
    out = torch.full((m, n), 7, dtype=torch.int32, device=device)
    try:
        want = A._int_mm(a, b)
    except RuntimeError as e:
        if "CUBLAS_STATUS_NOT_SUPPORTED" in str(e):
            # A cuBLAS limit on this layout, not a rule of the op: aotirt's
            # own kernel takes it, and the product is exact.
            shims.call(name, shims.handle(out), shims.handle(a), shims.handle(b))
            assert torch.equal(out.cpu(), (a.cpu().long() @ b.cpu().long()).int())
            return
        with pytest.raises(ShimError):
            shims.call(name, shims.handle(out), shims.handle(a), shims.handle(b))
        return
    shims.call(name, shims.handle(out), shims.handle(a), shims.handle(b))
    assert torch.equal(out, want)


# ---- _fused_rms_norm ----

# The longer rows take CUDA's block-per-row kernel (rows past 1024
# elements), the others its warp-per-row one.
RMS_CASES = [((2, 3, 8), [8], True, None), ((2, 3, 8), [3, 8], True, 1e-5), ((4, 16), [16], False, None),
             ((5, 0), [0], False, None), ((0, 4), [4], True, 1e-6), ((7,), [7], True, 0.1),
             ((3, 4100), [4100], True, None), ((6, 2, 33), [2, 33], False, 1e-3), ((1000, 40), [40], True, None),
             ((2, 1025), [1025], False, None)]


@pytest.mark.parametrize("device", devices())
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("case", RMS_CASES, ids=[str(i) for i in range(len(RMS_CASES))])
def test_fused_rms_norm(shims, device, dtype, transposed, case):
    name = need(shims, device, "_fused_rms_norm")
    shape, ns, has_w, eps = case
    x = rand(shape, dtype, device, transposed=transposed and len(shape) >= 2 and shape[-1] == shape[-2])
    if transposed and len(shape) >= 2:
        x = rand(shape, dtype, device, transposed=True)
        ns = list(x.shape[len(x.shape) - len(ns):])
    w = rand(ns, dtype, device, seed=3) if has_w else None
    ns_arr, ns_len = i64s(ns)
    wh = ctypes.byref(shims.handle(w)) if w is not None else None
    eps_p = None if eps is None else ctypes.byref(ctypes.c_double(eps))
    o, r = out_handles(2)
    shims.call(name, shims.handle(x), ns_arr, ns_len, wh, eps_p, ctypes.byref(o), ctypes.byref(r))
    got_o, got_r = shims.tensor(o, device).to(device), shims.tensor(r, device).to(device)
    want_o, want_r = A._fused_rms_norm(x, ns, w, eps)
    check(got_o, want_o)
    check(got_r, want_r, **tol(want_r.dtype))


def rms_call(shims, name, device, x, ns, w=None, eps=None):
    ns_arr, ns_len = i64s(ns)
    wh = ctypes.byref(shims.handle(w)) if w is not None else None
    eps_p = None if eps is None else ctypes.byref(ctypes.c_double(eps))
    o, r = out_handles(2)
    shims.call(name, shims.handle(x), ns_arr, ns_len, wh, eps_p, ctypes.byref(o), ctypes.byref(r))
    return shims.tensor(o, device).to(device), shims.tensor(r, device).to(device)


@pytest.mark.parametrize("rows_n", [(600000, 4), (66000, 1040)])
def test_fused_rms_norm_cuda_many_rows(shims, rows_n):
    """More rows than either CUDA kernel's grid holds at once, so the
    kernels stride over rows."""
    if "cuda" not in devices():
        pytest.skip("no GPU")
    name = need(shims, "cuda", "_fused_rms_norm")
    rows, n = rows_n
    x = rand((rows, n), torch.bfloat16, "cuda")
    w = rand((n,), torch.bfloat16, "cuda", seed=3)
    got_o, got_r = rms_call(shims, name, "cuda", x, [n], w)
    want_o, want_r = A._fused_rms_norm(x, [n], w, None)
    check(got_o, want_o)
    check(got_r, want_r, **tol(want_r.dtype))


@pytest.mark.parametrize("device", devices())
def test_fused_rms_norm_errors(shims, device):
    name = need(shims, device, "_fused_rms_norm")
    x = rand((3, 8), torch.float32, device)
    # A normalized_shape the input does not end in (torch's CPU composite
    # lets some through, its CUDA kernel checks), then a weight of the wrong shape.
    for ns, w in [([4], None), ([3, 8, 1], None), ([8], rand((4,), torch.float32, device))]:
        with pytest.raises(ShimError):
            rms_call(shims, name, device, x, ns, w)
    with pytest.raises(RuntimeError):  # torch refuses it too
        A._fused_rms_norm(x, [8], rand((4,), torch.float32, device), None)
    with pytest.raises(ShimError):  # an integer input
        rms_call(shims, name, device, x.to(torch.int32), [8])
    if device == "cuda":  # torch's CUDA kernel reads the weight in the input's dtype
        with pytest.raises(ShimError):
            rms_call(shims, name, device, x, [8], rand((8,), torch.float16, device))


# ---- weight-only quantized GEMMs ----

@pytest.mark.parametrize("device", devices())
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16])
@pytest.mark.parametrize("shape", [(4, 64, 48), (1, 32, 300), (2, 37, 9), (1, 200, 24), (7, 72, 40), (30, 136, 20),
                                   (6, 13, 5), (33, 64, 16), (0, 16, 8), (3, 0, 5), (7, 8, 0)])
def test_weight_int8pack_mm(shims, device, dtype, shape):
    name = need(shims, device, "_weight_int8pack_mm")
    m, k, n = shape
    g = torch.Generator().manual_seed(0)
    x = rand((m, k), dtype, device)
    w = torch.randint(-128, 128, (n, k), generator=g, dtype=torch.int8).to(device)
    s = (torch.rand(n, generator=g) * 0.05).to(dtype).to(device)
    got = call1(shims, name, device, shims.handle(x), shims.handle(w), shims.handle(s))
    if device == "cuda" and got.numel() == 0:
        # torch's CUDA kernel launches an empty grid for an empty result and
        # fails; its CPU op gives the empty result.
        want = A._weight_int8pack_mm(x.cpu(), w.cpu(), s.cpu()).to(device)
    else:
        # The float64 product is the reference: torch's CPU kernel reads k in
        # eights (and crashes on others), and gave wrong values or crashed on
        # some shapes here (one bfloat16 row of K = 200, seven of K = 72).
        want = ((x.double() @ w.double().T) * s.double()).to(dtype)
    check(got, want, **({} if dtype != torch.float32 else dict(rtol=1e-4, atol=1e-4)))


@pytest.mark.parametrize("device", ["cpu"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16])
@pytest.mark.parametrize("shape", [(3, 128, 48, 32), (2, 64, 32, 64), (1, 256, 16, 128), (5, 256, 80, 256),
                                   (6, 64, 272, 32), (13, 128, 576, 64), (70, 64, 80, 32), (0, 64, 16, 32)])
def test_weight_int4pack_mm_cpu_tensor(shims, device, dtype, shape):
    name = need(shims, device, "_weight_int4pack_mm_cpu_tensor")
    m, k, n, group = shape
    g = torch.Generator().manual_seed(0)
    w = torch.randint(0, 16, (n, k), generator=g, dtype=torch.int32)
    packed = A._convert_weight_to_int4pack_for_cpu(w, 1)
    sz = torch.stack([torch.rand(k // group, n, generator=g) * 0.02 + 0.01,
                      torch.randn(k // group, n, generator=g) * 0.01], dim=-1).to(dtype)
    x = rand((m, k), dtype, device)
    gs = torch.tensor(group, dtype=torch.int64)
    got = call1(shims, name, device, shims.handle(x), shims.handle(packed), shims.handle(gs), shims.handle(sz))
    want = torch.ops.quantized.int4mm_packed_weight_cpu(x, packed, gs, sz)
    check(got, want, **({} if dtype != torch.float32 else dict(rtol=1e-4, atol=1e-4)))


# torch packs int4 CPU weights for the vector width of the kernels it runs
# (its CPU capability: 64-row blocks with split halves under AVX512, 32-row
# ones under AVX2, neighbour pairs under DEFAULT), and aotirt must read them
# by the same rule. ATEN_CPU_CAPABILITY picks the capability for torch and
# aotirt alike, once per process, so each runs in a fresh interpreter. The
# packing itself is plain scalar code, so even AVX512's runs on a CPU
# without AVX512; the reference is the dequantized weight, not torch's kernel
# (which under AVX512 would need the instructions). The same setting caps
# the ISA of aotirt's own CPU kernels (few-row GEMMs, in-place weight-only
# products), so the three runs also cover their portable, AVX2 and AVX-512
# variants where the CPU has them.
CAPABILITY_SCRIPT = r"""
import ctypes, sys
import torch
sys.path.insert(0, sys.argv[2])
from shim_harness import Shims, out_handles
cap = torch.backends.cpu.get_cpu_capability()
if cap != sys.argv[1]:
    print("CAPABILITY", cap)
    sys.exit(0)
shims = Shims()
# Up to 64 rows (2 on the portable kernels) read the packed weight in
# place, in tiles of rows; 70 dequantize it slab by slab.
k, group = 128, 32
for m, n in [(m, n) for m in (1, 2, 3, 11, 70) for n in (16, 32, 48, 64, 80, 96, 112, 128, 144, 192, 272)]:
    g = torch.Generator().manual_seed(n)
    w = torch.randint(0, 16, (n, k), generator=g, dtype=torch.int32)
    packed = torch.ops.aten._convert_weight_to_int4pack_for_cpu(w, 1)
    sz = torch.stack([torch.rand(k // group, n, generator=g) * 0.02 + 0.01,
                      torch.randn(k // group, n, generator=g) * 0.01], dim=-1)
    x = torch.rand(m, k, generator=g) * 2 - 1
    deq = (w.double() - 8) * sz[..., 0].double().T.repeat_interleave(group, 1) \
        + sz[..., 1].double().T.repeat_interleave(group, 1)
    want = (x.double() @ deq.T).float()
    (r,) = out_handles(1)
    shims.call("aoti_torch_cpu__weight_int4pack_mm_cpu_tensor", shims.handle(x), shims.handle(packed),
               shims.handle(torch.tensor(group)), shims.handle(sz), ctypes.byref(r))
    torch.testing.assert_close(shims.tensor(r, "cpu"), want, rtol=1e-4, atol=1e-4, msg=lambda s: f"M={m} N={n}: {s}")
# aotirt's own kernels (few-row GEMMs, the in-place weight-only products)
# run the variant this capability allows: portable under DEFAULT, AVX2 and
# AVX-512 where the CPU has them. Each against the float64 product.
g = torch.Generator().manual_seed(1)
for m, k, n in [(1, 200, 24), (3, 72, 40), (7, 13, 5), (30, 136, 20)]:
    x = torch.rand(m, k, generator=g) * 2 - 1
    w = torch.randint(-128, 128, (n, k), generator=g, dtype=torch.int8)
    s = torch.rand(n, generator=g) * 0.05
    (r,) = out_handles(1)
    shims.call("aoti_torch_cpu__weight_int8pack_mm", shims.handle(x), shims.handle(w), shims.handle(s),
               ctypes.byref(r))
    want = ((x.double() @ w.double().T) * s.double()).float()
    torch.testing.assert_close(shims.tensor(r, "cpu"), want, rtol=1e-4, atol=1e-4, msg=lambda e: f"int8 {m}x{k}x{n}: {e}")
for dtype, rows in ((torch.float32, (1, 3)), (torch.bfloat16, (1, 5, 8))):
    for m in rows:
        for k, n in ((96, 80), (37, 133)):
            a = (torch.rand(m, k, generator=g) * 2 - 1).to(dtype)
            for name, b in (("k-contiguous", (torch.rand(n, k, generator=g) * 2 - 1).to(dtype).t()),
                            ("n-contiguous", (torch.rand(k, n, generator=g) * 2 - 1).to(dtype))):
                out = torch.empty(m, n, dtype=dtype)
                shims.call("aoti_torch_cpu_mm_out", shims.handle(out), shims.handle(a), shims.handle(b))
                want = (a.double() @ b.double()).to(dtype)
                tol = dict(rtol=1e-4, atol=1e-4) if dtype == torch.float32 else dict(rtol=1.6e-2, atol=1e-2)
                torch.testing.assert_close(out, want, **tol, msg=lambda e: f"mm {dtype} {m}x{k}x{n} {name}: {e}")
print("OK")
"""


@pytest.mark.parametrize("device", ["cpu"])
@pytest.mark.parametrize("capability", ["default", "avx2", "avx512"])
def test_cpu_kernels_follow_aten_capability(shims, device, capability):
    need(shims, device, "_weight_int4pack_mm_cpu_tensor")
    env = dict(os.environ, ATEN_CPU_CAPABILITY=capability, AOTIRT_BUILD_DIR=str(library_path().parents[1]))
    p = subprocess.run([sys.executable, "-c", CAPABILITY_SCRIPT, capability.upper(), str(Path(__file__).parent)],
                       env=env, capture_output=True, text=True, timeout=300)
    if "CAPABILITY" in p.stdout:
        pytest.skip(f"torch here does not take ATEN_CPU_CAPABILITY={capability} ({p.stdout.strip()})")
    assert p.returncode == 0 and "OK" in p.stdout, f"rc {p.returncode}\n{p.stdout}\n{p.stderr[-4000:]}"


INT4_CUDA_CASES = [(1, 256, 64, 32, 8), (3, 512, 48, 64, 4), (16, 256, 80, 128, 2), (17, 256, 80, 128, 2),
                   (64, 1024, 256, 256, 8), (5, 128, 16, 32, 8), (0, 128, 16, 32, 2),
                   # k past what the warps of a block load in one round (a
                   # last round with some warps idle), rows 9-16 of an mma.
                   (12, 5120, 24, 128, 8), (1, 8192, 16, 128, 8), (9, 2560, 8, 64, 4),
                   # several batches a warp with a scale a tile pair (groups
                   # smaller than a super-tile) and with the smaller tiles.
                   (2, 4096, 16, 64, 8), (4, 4096, 24, 32, 4), (1, 4096, 8, 32, 2),
                   # many tiles over a short k, an odd number of tiles, and
                   # Llama's MLP gate/up product.
                   (1, 512, 8200, 128, 8), (3, 256, 8192, 32, 4), (1, 2048, 16384, 128, 8),
                   # the last row count of the pair kernel (rows of x as the mma's
                   # B), and the first of the tile kernel (rows of x as A).
                   (8, 512, 32, 128, 8), (9, 512, 32, 128, 8),
                   # a group over two super-tiles, an odd number of tiles, few rows.
                   (6, 1024, 40, 256, 8)]


@pytest.mark.parametrize("device", [d for d in devices() if d == "cuda"])
@pytest.mark.parametrize("case", INT4_CUDA_CASES, ids=[str(c) for c in INT4_CUDA_CASES])
def test_weight_int4pack_mm_cuda(shims, device, case):
    """torch's CUDA int4 packing, made by torch itself
    (_convert_weight_to_int4pack on the CUDA tensor); (m, k, n, group,
    inner_k_tiles). Up to 16 rows read the packing in place, more dequantize
    it for cuBLASLt."""
    name = need(shims, device, "_weight_int4pack_mm")
    m, k, n, group, ikt = case
    g = torch.Generator().manual_seed(0)
    w = torch.randint(0, 16, (n, k), generator=g, dtype=torch.int32)
    w_u8 = (w[:, ::2] << 4 | w[:, 1::2]).to(torch.uint8).to(device)
    packed = A._convert_weight_to_int4pack(w_u8, ikt)
    sz = torch.stack([torch.rand(k // group, n, generator=g) * 0.02 + 0.01,
                      torch.randn(k // group, n, generator=g) * 0.01], dim=-1).to(torch.bfloat16).to(device)
    x = rand((m, k), torch.bfloat16, device)
    got = call1(shims, name, device, shims.handle(x), shims.handle(packed), ctypes.c_int64(group), shims.handle(sz))
    if m == 0:
        assert got.shape == (0, n) and got.dtype == torch.bfloat16
        return
    check(got, A._weight_int4pack_mm(x, packed, group, sz))


@pytest.mark.parametrize("device", [d for d in devices() if d == "cuda"])
def test_weight_int4pack_mm_cuda_refusals(shims, device):
    name = need(shims, device, "_weight_int4pack_mm")
    g = torch.Generator().manual_seed(0)
    w_u8 = torch.randint(0, 256, (32, 64), generator=g, dtype=torch.int32).to(torch.uint8).to(device)
    packed = A._convert_weight_to_int4pack(w_u8, 2)
    sz = torch.rand(4, 32, 2, generator=g).to(torch.bfloat16).to(device)
    x = rand((2, 128), torch.bfloat16, device)
    for args in [(x.float(), packed, 32, sz),  # A must be bfloat16
                 (x, packed, 48, sz),  # group size
                 (rand((2, 96), torch.bfloat16, device), packed, 32, sz[:3]),  # K does not match the packing
                 (x, packed, 32, sz.float())]:  # scales and zeros must be bfloat16
        (r,) = out_handles(1)
        with pytest.raises(ShimError):
            shims.call(name, shims.handle(args[0]), shims.handle(args[1]), ctypes.c_int64(args[2]),
                       shims.handle(args[3]), ctypes.byref(r))


DYN_CASES = [(3, 64, 4, 64, False), (3, 64, 4, 64, True), (5, 128, 7, 32, False), (2, 128, 9, 64, True),
             (1, 256, 33, 128, True), (0, 64, 4, 32, False), (4, 64, 0, 64, False)]


@pytest.mark.parametrize("device", ["cpu"])
@pytest.mark.parametrize("case", DYN_CASES, ids=[str(c) for c in DYN_CASES])
@pytest.mark.parametrize("scale_dtype", [torch.float32, torch.bfloat16])
def test_dyn_quant_4bit(shims, device, case, scale_dtype):
    pack = need(shims, device, "_dyn_quant_pack_4bit_weight")
    mm = need(shims, device, "_dyn_quant_matmul_4bit")
    m, k, n, block, has_bias = case
    g = torch.Generator().manual_seed(1)
    w = torch.randint(0, 256, (n, k // 2), generator=g, dtype=torch.uint8)
    sz = (torch.rand(n, k // block, generator=g) * 0.05).to(scale_dtype)
    bias = torch.randn(n, generator=g) if has_bias else None
    bh = ctypes.byref(shims.handle(bias)) if bias is not None else None
    dims = [ctypes.c_int64(block), ctypes.c_int64(k), ctypes.c_int64(n)]
    got_p = call1(shims, pack, device, shims.handle(w), shims.handle(sz), bh, *dims)
    want_p = A._dyn_quant_pack_4bit_weight(w, sz, bias, block, k, n)
    check(got_p, want_p, rtol=0, atol=0)
    x = torch.randn(m, k, generator=g)
    x[:, :2] = torch.tensor([0.5, -1.5])  # halves on the quantization grid's edges
    for xin in ([x, x.bfloat16()] if block == k else [x]):  # bfloat16: per-channel only, as torch
        got = call1(shims, mm, device, shims.handle(xin), shims.handle(want_p), *dims)
        check(got, A._dyn_quant_matmul_4bit(xin, want_p, block, k, n), rtol=0, atol=0)


# ---- LAPACK-backed ops ----

LAPACK_DTYPES = [torch.float32, torch.float64]


def lapack_tol(dtype):
    return dict(rtol=1e-4, atol=1e-4) if dtype == torch.float32 else dict(rtol=1e-9, atol=1e-9)


def spd_factor(batch, n, dtype, device, upper, seed=0):
    g = torch.Generator().manual_seed(seed)
    a = torch.randn(*batch, n, n, generator=g, dtype=torch.float64)
    a = a @ a.mT + n * torch.eye(n, dtype=torch.float64)
    return torch.linalg.cholesky(a, upper=upper).to(dtype).to(device)


SOLVE_CASES = [((), (), 4, 3), ((2,), (2,), 4, 3), ((3, 1), (2,), 4, 2), ((), (2,), 3, 1), ((0,), (1,), 4, 3),
               ((2,), (2,), 0, 3), ((2,), (2,), 4, 0)]


@pytest.mark.parametrize("device", devices())
@pytest.mark.parametrize("dtype", LAPACK_DTYPES)
@pytest.mark.parametrize("upper", [0, 1])
@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("case", SOLVE_CASES, ids=[str(c) for c in SOLVE_CASES])
def test_cholesky_solve(shims, device, dtype, upper, transposed, case):
    name = need(shims, device, "cholesky_solve")
    bb, ab, m, k = case
    factor = spd_factor(ab, m, dtype, device, bool(upper))
    if transposed:
        factor = factor.mT.contiguous().mT
    b = rand((*bb, m, k), dtype, device, transposed=transposed, seed=5)
    got = call1(shims, name, device, shims.handle(b), shims.handle(factor), ctypes.c_int32(upper))
    check(got, torch.cholesky_solve(b, factor, upper=bool(upper)), **lapack_tol(dtype))


@pytest.mark.parametrize("device", devices())
@pytest.mark.parametrize("dtype", LAPACK_DTYPES)
@pytest.mark.parametrize("upper", [0, 1])
@pytest.mark.parametrize("shape", [((), 4), ((2, 3), 5), ((0,), 3), ((2,), 0), ((), 1)])
def test_cholesky_inverse(shims, device, dtype, upper, shape):
    name = need(shims, device, "cholesky_inverse")
    batch, n = shape
    factor = spd_factor(batch, n, dtype, device, bool(upper), seed=2)
    got = call1(shims, name, device, shims.handle(factor), ctypes.c_int32(upper))
    check(got, torch.cholesky_inverse(factor, upper=bool(upper)), **lapack_tol(dtype))


@pytest.mark.parametrize("device", devices())
def test_cholesky_inverse_singular_is_refused(shims, device):
    name = need(shims, device, "cholesky_inverse")
    factor = torch.eye(3, device=device)
    factor[1, 1] = 0
    if device == "cuda":
        # torch's CUDA kernel (cuSOLVER potrs against the identity) reports
        # no singular factor: the inverse comes out inf/NaN, as aotirt's.
        got = call1(shims, name, device, shims.handle(factor), ctypes.c_int32(0))
        assert not torch.isfinite(torch.cholesky_inverse(factor)).all()
        assert not torch.isfinite(got).all()
        return
    with pytest.raises(ShimError):
        call1(shims, name, device, shims.handle(factor), ctypes.c_int32(0))


@pytest.mark.parametrize("device", devices())
@pytest.mark.parametrize("dtype", LAPACK_DTYPES)
@pytest.mark.parametrize("flags", [(1, 0, 0), (0, 0, 0), (1, 1, 0), (0, 1, 1), (1, 0, 1)])
@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("case", SOLVE_CASES, ids=[str(c) for c in SOLVE_CASES])
def test_triangular_solve(shims, device, dtype, flags, transposed, case):
    name = need(shims, device, "triangular_solve")
    upper, trans, unit = flags
    bb, ab, m, k = case
    a = rand((*ab, m, m), dtype, device, transposed=transposed, seed=3) + 3 * torch.eye(m, dtype=dtype, device=device)
    b = rand((*bb, m, k), dtype, device, transposed=transposed, seed=4)
    x, c = out_handles(2)
    shims.call(name, shims.handle(b), shims.handle(a), ctypes.c_int32(upper), ctypes.c_int32(trans),
               ctypes.c_int32(unit), ctypes.byref(x), ctypes.byref(c))
    got_x, got_c = shims.tensor(x, device).to(device), shims.tensor(c, device).to(device)
    want_x, want_c = torch.triangular_solve(b, a, upper=bool(upper), transpose=bool(trans),
                                            unitriangular=bool(unit))
    check(got_x, want_x, **lapack_tol(dtype))
    check(got_c, want_c, rtol=0, atol=0)


@pytest.mark.parametrize("device", devices())
@pytest.mark.parametrize("dtype", LAPACK_DTYPES)
@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 4, 4), (2, 1, 3, 2), (0, 3), (2, 0, 4), (1, 1)])
@pytest.mark.parametrize("transposed", [False, True])
def test_geqrf(shims, device, dtype, shape, transposed):
    name = need(shims, device, "geqrf")
    a = rand(shape, dtype, device, transposed=transposed)
    r0, r1 = out_handles(2)
    shims.call(name, shims.handle(a), ctypes.byref(r0), ctypes.byref(r1))
    got_a, got_tau = shims.tensor(r0, device).to(device), shims.tensor(r1, device).to(device)
    want_a, want_tau = torch.geqrf(a)
    check(got_a, want_a, **lapack_tol(dtype))
    check(got_tau, want_tau, **lapack_tol(dtype))


ORMQR_CASES = [((5, 3), (5, 4), True), ((5, 3), (4, 5), False), ((2, 4, 4), (2, 4, 3), True),
               ((2, 5, 7), (2, 5, 2), True), ((3, 5, 2), (3, 6, 5), False), ((0, 4, 3), (0, 4, 2), True),
               ((4, 3), (4, 0), True)]


@pytest.mark.parametrize("device", devices())
@pytest.mark.parametrize("dtype", LAPACK_DTYPES)
@pytest.mark.parametrize("transpose", [0, 1])
@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("case", ORMQR_CASES, ids=[str(i) for i in range(len(ORMQR_CASES))])
def test_ormqr(shims, device, dtype, transpose, transposed, case):
    name = need(shims, device, "ormqr")
    ashape, oshape, left = case
    a, tau = torch.geqrf(rand(ashape, dtype, device, seed=1))
    if a.shape[-2] < a.shape[-1]:
        pass
    if transposed:
        a = a.contiguous()
    other = rand(oshape, dtype, device, transposed=transposed, seed=2)
    got = call1(shims, name, device, shims.handle(a), shims.handle(tau), shims.handle(other), ctypes.c_int32(left),
                ctypes.c_int32(transpose))
    check(got, torch.ormqr(a, tau, other, left=left, transpose=bool(transpose)), **lapack_tol(dtype))


@pytest.mark.parametrize("device", devices())
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16, torch.int32])
@pytest.mark.parametrize("shape", [(4, 4), (2, 4, 3), (3, 5), (2, 1, 3, 3), (0, 3, 3), (4, 0), (1, 1)])
@pytest.mark.parametrize("flags", [(1, 1), (0, 1), (1, 0)])
def test_lu_unpack(shims, device, dtype, shape, flags):
    name = need(shims, device, "lu_unpack")
    unpack_data, unpack_pivots = flags
    lu, piv = torch.linalg.lu_factor(rand(shape, torch.float64, device, seed=7)) if 0 not in shape[-2:] else (
        torch.zeros(shape, dtype=torch.float64, device=device),
        torch.zeros(*shape[:-2], min(shape[-2:]), dtype=torch.int32, device=device))
    lu = (lu * 10).to(dtype) if dtype == torch.int32 else lu.to(dtype)
    r = out_handles(3)
    shims.call(name, shims.handle(lu), shims.handle(piv), ctypes.c_int32(unpack_data), ctypes.c_int32(unpack_pivots),
               *[ctypes.byref(h) for h in r])
    got = [shims.tensor(h, device).to(device) for h in r]
    want = torch.lu_unpack(lu, piv, unpack_data=bool(unpack_data), unpack_pivots=bool(unpack_pivots))
    for g, w in zip(got, want):
        check(g, w, rtol=0, atol=0)


@pytest.mark.parametrize("device", devices())
def test_lu_unpack_refuses_bad_pivots(shims, device):
    # torch 2.11 takes pivots whose batch broadcasts but unpacks only the
    # first batch's P; aotirt refuses them, and pivots out of range.
    name = need(shims, device, "lu_unpack")
    lu, piv = torch.linalg.lu_factor(rand((2, 4, 4), torch.float32, device))
    bad = torch.tensor([5, 1, 1, 4], dtype=torch.int32, device=device).expand(2, 4).contiguous()
    for p in (piv[0], bad, piv.long(), piv[:, :3].contiguous()):
        with pytest.raises(ShimError):
            shims.call(name, shims.handle(lu), shims.handle(p), ctypes.c_int32(1), ctypes.c_int32(1),
                       *[ctypes.byref(h) for h in out_handles(3)])


@pytest.mark.parametrize("device", devices())
def test_lapack_ops_on_larger_batches(shims, device):
    # Many matrices and sizes past one thread block, with strided operands.
    dtype = torch.float64
    factor = spd_factor((3, 5), 70, dtype, device, False, seed=11)
    b = rand((3, 5, 90, 70), dtype, device, transposed=True, seed=12)[..., :70, :].transpose(-1, -2)
    name = need(shims, device, "cholesky_solve")
    got = call1(shims, name, device, shims.handle(b), shims.handle(factor), ctypes.c_int32(0))
    check(got, torch.cholesky_solve(b, factor), **lapack_tol(dtype))
    name = need(shims, device, "cholesky_inverse")
    got = call1(shims, name, device, shims.handle(factor), ctypes.c_int32(0))
    check(got, torch.cholesky_inverse(factor), rtol=1e-7, atol=1e-7)
    name = need(shims, device, "triangular_solve")
    a = rand((5, 70, 70), dtype, device, seed=13) + 4 * torch.eye(70, dtype=dtype, device=device)
    x, c = out_handles(2)
    shims.call(name, shims.handle(b), shims.handle(a), ctypes.c_int32(1), ctypes.c_int32(1), ctypes.c_int32(0),
               ctypes.byref(x), ctypes.byref(c))
    want_x, want_c = torch.triangular_solve(b, a, upper=True, transpose=True)
    check(shims.tensor(x, device).to(device), want_x, **lapack_tol(dtype))
    check(shims.tensor(c, device).to(device), want_c, rtol=0, atol=0)
    name = need(shims, device, "geqrf")
    m = rand((4, 300, 130), dtype, device, transposed=True, seed=14)
    r0, r1 = out_handles(2)
    shims.call(name, shims.handle(m), ctypes.byref(r0), ctypes.byref(r1))
    want_a, want_tau = torch.geqrf(m)
    check(shims.tensor(r0, device).to(device), want_a, **lapack_tol(dtype))
    check(shims.tensor(r1, device).to(device), want_tau, **lapack_tol(dtype))
    name = need(shims, device, "ormqr")
    other = rand((4, 300, 50), dtype, device, seed=15)
    got = call1(shims, name, device, shims.handle(want_a), shims.handle(want_tau), shims.handle(other),
                ctypes.c_int32(1), ctypes.c_int32(1))
    check(got, torch.ormqr(want_a, want_tau, other, left=True, transpose=True), **lapack_tol(dtype))
    name = need(shims, device, "lu_unpack")
    lu, piv = torch.linalg.lu_factor(rand((6, 150, 90), dtype, device, seed=16))
    lu = lu.transpose(-1, -2).contiguous().transpose(-1, -2)
    r = out_handles(3)
    shims.call(name, shims.handle(lu), shims.handle(piv), ctypes.c_int32(1), ctypes.c_int32(1),
               *[ctypes.byref(h) for h in r])
    for g, w in zip([shims.tensor(h, device).to(device) for h in r], torch.lu_unpack(lu, piv)):
        check(g, w, rtol=0, atol=0)


@pytest.mark.parametrize("device", devices())
def test_lapack_ops_refuse_mixed_devices_and_dtypes(shims, device):
    name = need(shims, device, "cholesky_solve")
    factor = spd_factor((), 3, torch.float32, device, False)
    b = rand((3, 2), torch.float32, device)
    for bb, ff in ((b.double(), factor), (b, factor.half()), (b.cpu(), factor) if device != "cpu" else (b, factor[:2])):
        with pytest.raises(ShimError):
            call1(shims, name, device, shims.handle(bb), shims.handle(ff), ctypes.c_int32(0))
    name = need(shims, device, "geqrf")
    with pytest.raises(ShimError):
        shims.call(name, shims.handle(rand((3,), torch.float32, device)), *[ctypes.byref(h) for h in out_handles(2)])


# ---- sizes that take the OpenMP paths ----

@pytest.mark.parametrize("device", devices())
def test_large_inputs_take_the_parallel_paths(shims, device):
    x1 = rand((200, 16), torch.float32, device, seed=1)
    x2 = rand((150, 16), torch.float32, device, seed=2)
    name = need(shims, device, "_cdist_forward")
    got = call1(shims, name, device, shims.handle(x1), shims.handle(x2), ctypes.c_double(1.0), None)
    check(got, A._cdist_forward(x1, x2, 1.0, None), rtol=1e-4, atol=1e-4)
    name = need(shims, device, "_pdist_forward")
    x = rand((300, 8), torch.float64, device, seed=3)
    check(call1(shims, name, device, shims.handle(x), ctypes.c_double(2.0)), A._pdist_forward(x, 2.0))
    name = need(shims, device, "_trilinear")
    ts = [rand((64, 16), torch.float32, device, seed=4), rand((32, 16, 16), torch.float32, device, seed=5),
          rand((64, 16), torch.float32, device, seed=6)]
    lists = [i64s(v) for v in ([1, 3], [0], [1, 2], [2, 3])]
    got = call1(shims, name, device, *[shims.handle(t) for t in ts], *[x for p in lists for x in p],
                ctypes.c_int64(1))
    check(got, A._trilinear(*ts, [1, 3], [0], [1, 2], [2, 3], 1), rtol=1e-4, atol=1e-4)
    name = need(shims, device, "_fused_rms_norm")
    x = rand((512, 128), torch.bfloat16, device, seed=7)
    ns_arr, ns_len = i64s([128])
    o, r = out_handles(2)
    shims.call(name, shims.handle(x), ns_arr, ns_len, None, None, ctypes.byref(o), ctypes.byref(r))
    want_o, want_r = A._fused_rms_norm(x, [128], None, None)
    check(shims.tensor(o, device).to(device), want_o)
    check(shims.tensor(r, device).to(device), want_r, **tol(torch.float32))
    if device == "cpu":
        pack = need(shims, device, "_dyn_quant_pack_4bit_weight")
        mm = need(shims, device, "_dyn_quant_matmul_4bit")
        g = torch.Generator().manual_seed(8)
        w = torch.randint(0, 256, (256, 32), generator=g, dtype=torch.uint8)
        packed = A._dyn_quant_pack_4bit_weight(w, torch.rand(256, 2, generator=g) * 0.05, None, 32, 64, 256)
        x = torch.randn(8, 64, generator=g)
        dims = [ctypes.c_int64(32), ctypes.c_int64(64), ctypes.c_int64(256)]
        got = call1(shims, mm, device, shims.handle(x), shims.handle(packed), *dims)
        check(got, A._dyn_quant_matmul_4bit(x, packed, 32, 64, 256), rtol=0, atol=0)


@pytest.mark.parametrize("device", devices())
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_larger_products(shims, device, dtype):
    """Sizes that span many thread blocks and GEMM tiles on a GPU."""
    t = tol(dtype) if dtype != torch.float32 else dict(rtol=1e-4, atol=1e-4)
    if dtype == torch.bfloat16:
        t = dict(rtol=3e-2, atol=1e-1)
    mat = rand((300, 200), dtype, device, transposed=True)
    vec = rand((400,), dtype, device, seed=1)[::2]
    self = rand((300,), dtype, device, seed=2)
    got = call1(shims, need(shims, device, "addmv"), device, shims.handle(self), shims.handle(mat), shims.handle(vec),
                ctypes.c_double(0.5), ctypes.c_double(2.0))
    check(got, torch.addmv(self, mat, vec, beta=0.5, alpha=2.0), **t)
    b1 = rand((4, 70, 50), dtype, device, seed=3)
    b2 = rand((4, 50, 90), dtype, device, transposed=True, seed=4)
    self = rand((70, 90), dtype, device, seed=5)
    got = call1(shims, need(shims, device, "addbmm"), device, shims.handle(self), shims.handle(b1), shims.handle(b2),
                ctypes.c_double(1.0), ctypes.c_double(1.0))
    check(got, torch.addbmm(self, b1, b2), **t)
    m1 = rand((130, 70), dtype, device, seed=6)
    m2 = rand((70, 90), dtype, device, seed=7)
    bias = rand((90,), dtype, device, seed=8)
    for use_gelu in (0, 1):
        (r,) = out_handles(1)
        shims.call(need(shims, device, "_addmm_activation"), shims.handle(bias), shims.handle(m1), shims.handle(m2),
                   ctypes.c_double(1.0), ctypes.c_double(1.0), ctypes.c_int32(use_gelu), ctypes.byref(r))
        check(shims.tensor(r, device).to(device),
              A._addmm_activation(bias, m1, m2, use_gelu=bool(use_gelu)), **t)
    x = rand((17, 256), dtype, device, seed=9)
    g = torch.Generator().manual_seed(10)
    w = torch.randint(-128, 128, (300, 256), generator=g, dtype=torch.int8).to(device)
    s = (torch.rand(300, generator=g) * 0.05).to(dtype).to(device)
    got = call1(shims, need(shims, device, "_weight_int8pack_mm"), device, shims.handle(x), shims.handle(w),
                shims.handle(s))
    check(got, A._weight_int8pack_mm(x, w, s), **t)


# ---- refusals ----

@pytest.mark.parametrize("device", devices())
def test_bad_arguments_fail_cleanly(shims, device):
    name = need(shims, device, "addmv")
    mat = rand((3, 4), torch.float32, device)
    vec = rand((5,), torch.float32, device)
    self = rand((3,), torch.float32, device)
    (r,) = out_handles(1)
    with pytest.raises(ShimError):  # inner sizes differ
        shims.call(name, shims.handle(self), shims.handle(mat), shims.handle(vec), ctypes.c_double(1),
                   ctypes.c_double(1), ctypes.byref(r))
    with pytest.raises(ShimError):  # mixed dtypes
        shims.call(name, shims.handle(self), shims.handle(mat), shims.handle(vec[:4].double()), ctypes.c_double(1),
                   ctypes.c_double(1), ctypes.byref(r))
    assert r.value is None
    assert shims.fn(name)(shims.handle(self), shims.handle(mat), shims.handle(vec[:4]), ctypes.c_double(1),
                          ctypes.c_double(1), None) == 1
