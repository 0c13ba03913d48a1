// CPU fallbacks for the BLAS-backed linear-algebra ops of c_shim_cpu.h:
// addmv, addbmm, _addmm_activation, _cdist_forward, _pdist_forward,
// _trilinear, _int_mm.out and _fused_rms_norm. Floating operands are staged
// in float32 (float64 stays float64); bfloat16 and float16 results are
// rounded where torch's own kernels round (after each addmm step, before
// the activation). Every output is a fresh contiguous tensor except
// _int_mm's, whose |out| torch requires contiguous and of the exact shape.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "backends/cpu/ops/cpu_op_util.h"
#include "base/status.h"
#include "core/dtype.h"
#include "core/host_copy.h"
#include "device/device.h"
#include "ops/linalg_args.h"
#include "shim/abi/cpu_linalg.h"
#include "shim/common/shim_util.h"

using namespace aotirt;
using namespace aotirt::cpu_ops;

namespace {

constexpr int64_t kParallelWork = int64_t{1} << 15;

bool is_half(DType d) { return d == DType::kBFloat16 || d == DType::kFloat16; }

// A [rows, cols] matrix (or a batch of them, the batch dim first) as BLAS
// reads it, in the compute dtype; |keep| holds a staged copy alive.
template <class T>
struct Matrix {
  TensorImpl keep;
  const T* data = nullptr;
  BlasMatrix layout;
  int64_t batch_stride = 0;
};

template <class T>
Result<Matrix<T>> stage_matrix(const TensorImpl& t, DType ct) {
  Matrix<T> mat;
  const int64_t r = t.dim() - 2;
  const bool in_place = t.dtype() == ct && blas_matrix(t.sizes()[r], t.sizes()[r + 1], t.strides()[r],
                                                       t.strides()[r + 1], &mat.layout);
  if (in_place) {
    mat.keep = t;
  } else {
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl c, empty_contiguous(t.sizes(), ct, DeviceId{}));
    if (t.numel() > 0) AOTIRT_RETURN_IF_ERROR(host_copy_strided(c, t));
    blas_matrix(t.sizes()[r], t.sizes()[r + 1], c.strides()[r], c.strides()[r + 1], &mat.layout);
    mat.keep = c;
  }
  mat.data = static_cast<const T*>(mat.keep.data_ptr());
  mat.batch_stride = r == 1 && t.sizes()[0] > 1 ? mat.keep.strides()[0] : 0;
  return mat;
}

// A contiguous compute-dtype buffer of |sizes| holding beta * self broadcast
// (zeros when beta is 0: self, NaN included, is then ignored, as in torch).
template <class T>
Result<TensorImpl> beta_self(const TensorImpl& self, const DimVector& sizes, double beta, DType ct) {
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl c, empty_contiguous(sizes, ct, DeviceId{}));
  T* p = static_cast<T*>(c.data_ptr());
  const int64_t n = c.numel();
  if (n == 0) return c;
  if (beta == 0.0) {
    std::fill(p, p + n, T(0));
    return c;
  }
  AOTIRT_RETURN_IF_ERROR(host_copy_strided(c, self));
  if (beta != 1.0)
    for (int64_t i = 0; i < n; ++i) p[i] = static_cast<T>(beta) * p[i];
  return c;
}

// Rounds a float32 buffer through |dtype| in place (a bfloat16 or float16
// intermediate of torch's).
void round_through(float* p, int64_t n, DType dtype) {
  if (dtype == DType::kBFloat16)
    for (int64_t i = 0; i < n; ++i) p[i] = bf16_to_float(float_to_bf16(p[i]));
  else if (dtype == DType::kFloat16)
    for (int64_t i = 0; i < n; ++i) p[i] = half_to_float(float_to_half(p[i]));
}
// float64 results are never rounded.
void round_through(double*, int64_t, DType) {}

// |c| (contiguous, compute dtype) as a tensor of |dtype|.
Result<TensorImpl> as_dtype(TensorImpl c, DType dtype) {
  if (c.dtype() == dtype) return c;
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl out, empty_contiguous(c.sizes(), dtype, DeviceId{}));
  if (c.numel() > 0) AOTIRT_RETURN_IF_ERROR(host_copy_strided(out, c));
  return out;
}

Status give(Result<TensorImpl> r, AtenTensorHandle* ret) {
  AOTIRT_RETURN_IF_ERROR(r.status());
  *ret = new_handle(std::move(r).value());
  return Status();
}

// beta * self + alpha * sum over the batch of a[b] @ b[b], rounded through
// the output dtype after each step as torch's addmm_ loop does.
template <class T>
Result<TensorImpl> add_product(const ops::AddProductArgs& a, DType ct, bool round_steps) {
  const DType dtype = a.self->dtype();
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl c, beta_self<T>(*a.self, a.out_sizes, a.beta, ct));
  if (c.numel() == 0) return c;
  T* pc = static_cast<T*>(c.data_ptr());
  if (a.batch == 0 || a.k == 0 || a.alpha == 0.0) {
    if (round_steps) round_through(pc, c.numel(), dtype);
    return c;
  }
  AOTIRT_RETURN_IF_ERROR(ensure_blas());
  AOTIRT_RETURN_IF_ERROR(check_blas_int(std::max({a.m, a.n, a.k}), "a matrix dim"));
  AOTIRT_ASSIGN_OR_RETURN(Matrix<T> ma, stage_matrix<T>(*a.a, ct));
  Matrix<T> mb;
  if (a.b->dim() == 1) {
    // addmv's vector as a [k, 1] matrix.
    const TensorImpl& v = *a.b;
    TensorImpl col(v.storage(), v.dtype(), DimVector{a.k, 1}, DimVector{v.strides()[0], 1}, v.storage_offset());
    AOTIRT_ASSIGN_OR_RETURN(mb, stage_matrix<T>(col, ct));
  } else {
    AOTIRT_ASSIGN_OR_RETURN(mb, stage_matrix<T>(*a.b, ct));
  }
  for (int64_t i = 0; i < a.batch; ++i) {
    gemm<T>(ma.layout.transposed, mb.layout.transposed, a.m, a.n, a.k, static_cast<T>(a.alpha),
            ma.data + i * ma.batch_stride, ma.layout.ld, mb.data + i * mb.batch_stride, mb.layout.ld, T(1), pc,
            a.n, false);
    if (round_steps) round_through(pc, c.numel(), dtype);
  }
  return c;
}

Result<TensorImpl> add_product_any(const ops::AddProductArgs& a) {
  AOTIRT_RETURN_IF_ERROR(check_cpu(*a.self, "self"));
  AOTIRT_RETURN_IF_ERROR(check_cpu(*a.a, "a"));
  AOTIRT_RETURN_IF_ERROR(check_cpu(*a.b, "b"));
  const DType dtype = a.self->dtype(), ct = compute_dtype(dtype);
  if (ct == DType::kFloat64) return add_product<double>(a, ct, false);
  return add_product<float>(a, ct, is_half(dtype));
}

// ---- distances ----

// One distance over |m| coordinates, as torch's p-norm of the difference:
// p = 0 counts the differing coordinates, infinity takes the largest.
template <class T>
T distance(const T* x, const T* y, int64_t m, double p) {
  using A = double;
  A acc = 0;
  if (p == 0.0) {
    for (int64_t i = 0; i < m; ++i) acc += x[i] != y[i] ? 1 : 0;
    return static_cast<T>(acc);
  }
  if (p == 1.0) {
    for (int64_t i = 0; i < m; ++i) acc += std::abs(A(x[i]) - A(y[i]));
    return static_cast<T>(acc);
  }
  if (p == 2.0) {
    for (int64_t i = 0; i < m; ++i) {
      const A d = A(x[i]) - A(y[i]);
      acc += d * d;
    }
    return static_cast<T>(std::sqrt(acc));
  }
  if (std::isinf(p)) {
    for (int64_t i = 0; i < m; ++i) acc = std::max(acc, std::abs(A(x[i]) - A(y[i])));
    return static_cast<T>(acc);
  }
  for (int64_t i = 0; i < m; ++i) acc += std::pow(std::abs(A(x[i]) - A(y[i])), p);
  return static_cast<T>(std::pow(acc, 1.0 / p));
}

template <class T>
Status cdist_compute(const ops::DistArgs& a, const TensorImpl& out) {
  const int64_t b = a.batch, p1 = a.rows1, p2 = a.rows2, m = a.cols;
  if (out.numel() == 0) return Status();
  DimVector s1 = a.batch_sizes, s2 = a.batch_sizes;
  const int64_t nb = s1.size();
  s1.resize(nb + 2);
  s2.resize(nb + 2);
  s1[nb] = p1;
  s1[nb + 1] = m;
  s2[nb] = p2;
  s2[nb + 1] = m;
  // Both sides expanded to the common batch, contiguous.
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl x1, empty_contiguous(s1, out.dtype(), DeviceId{}));
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl x2, empty_contiguous(s2, out.dtype(), DeviceId{}));
  if (m > 0) {
    AOTIRT_RETURN_IF_ERROR(host_copy_strided(x1, *a.x1));
    AOTIRT_RETURN_IF_ERROR(host_copy_strided(x2, *a.x2));
  }
  const T* d1 = static_cast<const T*>(x1.data_ptr());
  const T* d2 = static_cast<const T*>(x2.data_ptr());
  T* o = static_cast<T*>(out.data_ptr());
  if (a.use_mm && m > 0) {
    // torch's _euclidean_dist: |x|^2 + |y|^2 - 2 x.y from one matrix
    // product, clamped at 1e-30 before the square root.
    AOTIRT_RETURN_IF_ERROR(ensure_blas());
    AOTIRT_RETURN_IF_ERROR(check_blas_int(std::max({p1, p2, m}), "a matrix dim"));
    std::vector<T> n1(static_cast<size_t>(p1)), n2(static_cast<size_t>(p2));
    for (int64_t i = 0; i < b; ++i) {
      const T* a1 = d1 + i * p1 * m;
      const T* a2 = d2 + i * p2 * m;
      T* oi = o + i * p1 * p2;
      for (int64_t r = 0; r < p1; ++r) {
        T s = 0;
        for (int64_t c = 0; c < m; ++c) s += a1[r * m + c] * a1[r * m + c];
        n1[r] = s;
      }
      for (int64_t r = 0; r < p2; ++r) {
        T s = 0;
        for (int64_t c = 0; c < m; ++c) s += a2[r * m + c] * a2[r * m + c];
        n2[r] = s;
      }
      gemm<T>(false, true, p1, p2, m, T(-2), a1, m, a2, m, T(0), oi, p2, false);
      for (int64_t r = 0; r < p1; ++r)
        for (int64_t c = 0; c < p2; ++c) {
          const T v = oi[r * p2 + c] + n1[r] + n2[c];
          oi[r * p2 + c] = std::sqrt(std::max(v, static_cast<T>(1e-30)));
        }
    }
    return Status();
  }
  const int64_t rows = b * p1;
  const bool parallel = rows > 1 && rows * p2 * std::max<int64_t>(m, 1) >= kParallelWork;
#pragma omp parallel for schedule(static) if (parallel)
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t i = r / p1;
    const T* x = d1 + r * m;
    for (int64_t c = 0; c < p2; ++c) o[r * p2 + c] = distance<T>(x, d2 + (i * p2 + c) * m, m, a.p);
  }
  return Status();
}

template <class T>
void pdist_compute(const ops::DistArgs& a, const TensorImpl& in, const TensorImpl& out) {
  const int64_t n = a.rows1, m = a.cols;
  const T* x = static_cast<const T*>(in.data_ptr());
  T* o = static_cast<T*>(out.data_ptr());
  const bool parallel = n > 1 && out.numel() * std::max<int64_t>(m, 1) >= kParallelWork;
#pragma omp parallel for schedule(dynamic, 4) if (parallel)
  for (int64_t i = 0; i < n; ++i) {
    // Pairs (i, j > i) come in row-major order of the upper triangle.
    const int64_t base = i * n - i * (i + 1) / 2;
    for (int64_t j = i + 1; j < n; ++j) o[base + (j - i - 1)] = distance<T>(x + i * m, x + j * m, m, a.p);
  }
}

// ---- _trilinear ----

template <class T>
Status trilinear_compute(const ops::TrilinearArgs& a, DType ct, TensorImpl* result) {
  const int64_t total = a.sizes.size();
  TensorImpl staged[3];
  const T* data[3];
  std::vector<int64_t> strides[3];
  for (int i = 0; i < 3; ++i) {
    AOTIRT_ASSIGN_OR_RETURN(staged[i], contiguous_as(*a.in[i], ct));
    data[i] = static_cast<const T*>(staged[i].data_ptr());
    strides[i].assign(total, 0);
    for (int64_t d = 0; d < total; ++d)
      if (a.own_dim[i][d] >= 0) strides[i][d] = staged[i].strides()[a.own_dim[i][d]];
  }
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl out, empty_contiguous(a.out_sizes, ct, DeviceId{}));
  *result = out;
  // The kept dims (outer loop) and the summed dims (inner loop).
  std::vector<int64_t> keep, sum;
  for (int64_t d = 0; d < total; ++d) (a.summed[d] ? sum : keep).push_back(d);
  int64_t n_out = 1, n_sum = 1;
  for (int64_t d : keep) n_out *= a.sizes[d];
  for (int64_t d : sum) n_sum *= a.sizes[d];
  T* o = static_cast<T*>(out.data_ptr());
  if (n_out == 0) return Status();
  // Offsets of every summed position in each input, computed once.
  std::vector<int64_t> sum_off(static_cast<size_t>(3 * n_sum));
  for (int64_t s = 0; s < n_sum; ++s) {
    int64_t rem = s;
    int64_t off[3] = {0, 0, 0};
    for (int64_t q = static_cast<int64_t>(sum.size()) - 1; q >= 0; --q) {
      const int64_t d = sum[q], idx = rem % a.sizes[d];
      rem /= a.sizes[d];
      for (int i = 0; i < 3; ++i) off[i] += idx * strides[i][d];
    }
    for (int i = 0; i < 3; ++i) sum_off[3 * s + i] = off[i];
  }
  const bool parallel = n_out > 1 && n_out * std::max<int64_t>(n_sum, 1) >= kParallelWork;
#pragma omp parallel for schedule(static) if (parallel)
  for (int64_t e = 0; e < n_out; ++e) {
    int64_t rem = e;
    int64_t off[3] = {0, 0, 0};
    for (int64_t q = static_cast<int64_t>(keep.size()) - 1; q >= 0; --q) {
      const int64_t d = keep[q], idx = rem % a.sizes[d];
      rem /= a.sizes[d];
      for (int i = 0; i < 3; ++i) off[i] += idx * strides[i][d];
    }
    double acc = 0;
    for (int64_t s = 0; s < n_sum; ++s) {
      const int64_t* so = &sum_off[3 * s];
      acc += double(data[0][off[0] + so[0]]) * double(data[1][off[1] + so[1]]) * double(data[2][off[2] + so[2]]);
    }
    o[e] = static_cast<T>(acc);
  }
  return Status();
}

// ---- _fused_rms_norm ----

template <class T>
Status rms_norm_compute(const ops::RmsNormArgs& a, DType ct, TensorImpl* out, TensorImpl* rstd) {
  const DType dtype = a.input->dtype();
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl x, contiguous_as(*a.input, ct));
  TensorImpl w;
  if (a.weight) {
    AOTIRT_ASSIGN_OR_RETURN(w, contiguous_as(*a.weight, ct));
  }
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl y, empty_contiguous(a.input->sizes(), ct, DeviceId{}));
  AOTIRT_ASSIGN_OR_RETURN(*rstd, empty_contiguous(a.rstd_sizes, a.rstd_dtype, DeviceId{}));
  const T* px = static_cast<const T*>(x.data_ptr());
  const T* pw = a.weight ? static_cast<const T*>(w.data_ptr()) : nullptr;
  T* py = static_cast<T*>(y.data_ptr());
  T* pr = static_cast<T*>(rstd->data_ptr());
  const int64_t rows = a.rows, n = a.inner;
  const bool parallel = rows > 1 && rows * n >= kParallelWork;
#pragma omp parallel for schedule(static) if (parallel)
  for (int64_t r = 0; r < rows; ++r) {
    const T* xr = px + r * n;
    double ss = 0;
    for (int64_t i = 0; i < n; ++i) ss += double(xr[i]) * double(xr[i]);
    // An empty row gives NaN (0 / 0), as torch's mean does.
    const T mean = static_cast<T>(ss / static_cast<double>(n));
    const T inv = T(1) / std::sqrt(mean + static_cast<T>(a.eps));
    pr[r] = inv;
    T* yr = py + r * n;
    for (int64_t i = 0; i < n; ++i) yr[i] = pw ? xr[i] * inv * pw[i] : xr[i] * inv;
  }
  AOTIRT_ASSIGN_OR_RETURN(*out, as_dtype(y, dtype));
  return Status();
}

}  // namespace

extern "C" {

AOTITorchError aoti_torch_cpu_addmv(AtenTensorHandle self, AtenTensorHandle mat, AtenTensorHandle vec, double beta,
                                    double alpha, AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_REQUIRE_OUT(ret0);
    AOTIRT_ASSIGN_OR_RETURN(ops::AddProductArgs a, ops::addmv_args(self, mat, vec, beta, alpha));
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl c, add_product_any(a));
    return give(as_dtype(c, a.self->dtype()), ret0);
  });
}

AOTITorchError aoti_torch_cpu_addbmm(AtenTensorHandle self, AtenTensorHandle batch1, AtenTensorHandle batch2,
                                     double beta, double alpha, AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_REQUIRE_OUT(ret0);
    AOTIRT_ASSIGN_OR_RETURN(ops::AddProductArgs a, ops::addbmm_args(self, batch1, batch2, beta, alpha));
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl c, add_product_any(a));
    return give(as_dtype(c, a.self->dtype()), ret0);
  });
}

AOTITorchError aoti_torch_cpu__addmm_activation(AtenTensorHandle self, AtenTensorHandle mat1, AtenTensorHandle mat2,
                                                double beta, double alpha, int32_t use_gelu,
                                                AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_REQUIRE_OUT(ret0);
    AOTIRT_ASSIGN_OR_RETURN(ops::AddProductArgs a, ops::addmm_activation_args(self, mat1, mat2, beta, alpha));
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl c, add_product_any(a));
    // torch applies relu_ or (exact, erf-based) gelu_ to the addmm result.
    auto activate = [&](auto* p) {
      using T = std::remove_pointer_t<decltype(p)>;
      const int64_t n = c.numel();
      for (int64_t i = 0; i < n; ++i) {
        const T x = p[i];
        if (use_gelu)
          p[i] = static_cast<T>(0.5) * x * (T(1) + std::erf(x * static_cast<T>(M_SQRT1_2)));
        else
          p[i] = std::isnan(x) ? x : std::max(x, T(0));
      }
    };
    if (c.dtype() == DType::kFloat64)
      activate(static_cast<double*>(c.data_ptr()));
    else
      activate(static_cast<float*>(c.data_ptr()));
    return give(as_dtype(c, a.self->dtype()), ret0);
  });
}

AOTITorchError aoti_torch_cpu__cdist_forward(AtenTensorHandle x1, AtenTensorHandle x2, double p,
                                             int64_t* compute_mode, AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_REQUIRE_OUT(ret0);
    AOTIRT_ASSIGN_OR_RETURN(ops::DistArgs a, ops::cdist_args(x1, x2, p, compute_mode));
    AOTIRT_RETURN_IF_ERROR(check_cpu(*a.x1, "x1"));
    AOTIRT_RETURN_IF_ERROR(check_cpu(*a.x2, "x2"));
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl out, empty_contiguous(a.out_sizes, a.x1->dtype(), DeviceId{}));
    if (out.dtype() == DType::kFloat64)
      AOTIRT_RETURN_IF_ERROR(cdist_compute<double>(a, out));
    else
      AOTIRT_RETURN_IF_ERROR(cdist_compute<float>(a, out));
    *ret0 = new_handle(std::move(out));
    return Status();
  });
}

AOTITorchError aoti_torch_cpu__pdist_forward(AtenTensorHandle self, double p, AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_REQUIRE_OUT(ret0);
    AOTIRT_ASSIGN_OR_RETURN(ops::DistArgs a, ops::pdist_args(self, p));
    AOTIRT_RETURN_IF_ERROR(check_cpu(*a.x1, "self"));
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl out, empty_contiguous(a.out_sizes, a.x1->dtype(), DeviceId{}));
    if (out.numel() > 0) {
      if (out.dtype() == DType::kFloat64)
        pdist_compute<double>(a, *a.x1, out);
      else
        pdist_compute<float>(a, *a.x1, out);
    }
    *ret0 = new_handle(std::move(out));
    return Status();
  });
}

AOTITorchError aoti_torch_cpu__trilinear(AtenTensorHandle i1, AtenTensorHandle i2, AtenTensorHandle i3,
                                         const int64_t* expand1, int64_t expand1_len_, const int64_t* expand2,
                                         int64_t expand2_len_, const int64_t* expand3, int64_t expand3_len_,
                                         const int64_t* sumdim, int64_t sumdim_len_, int64_t unroll_dim,
                                         AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_REQUIRE_OUT(ret0);
    // (A macro argument spanning lines breaks AOTIRT_ASSIGN_OR_RETURN's __LINE__.)
    Result<ops::TrilinearArgs> args = ops::trilinear_args(i1, i2, i3, expand1, expand1_len_, expand2, expand2_len_,
                                                          expand3, expand3_len_, sumdim, sumdim_len_, unroll_dim);
    AOTIRT_ASSIGN_OR_RETURN(ops::TrilinearArgs a, std::move(args));
    for (int i = 0; i < 3; ++i) AOTIRT_RETURN_IF_ERROR(check_cpu(*a.in[i], "input"));
    const DType dtype = a.in[0]->dtype(), ct = compute_dtype(dtype);
    TensorImpl c;
    if (ct == DType::kFloat64)
      AOTIRT_RETURN_IF_ERROR(trilinear_compute<double>(a, ct, &c));
    else
      AOTIRT_RETURN_IF_ERROR(trilinear_compute<float>(a, ct, &c));
    return give(as_dtype(c, dtype), ret0);
  });
}

AOTITorchError aoti_torch_cpu__int_mm_out(AtenTensorHandle out, AtenTensorHandle self,
                                          AtenTensorHandle mat2) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_ASSIGN_OR_RETURN(ops::IntMmArgs a, ops::int_mm_out_args(out, self, mat2));
    AOTIRT_RETURN_IF_ERROR(check_cpu(*a.out, "out"));
    AOTIRT_RETURN_IF_ERROR(check_cpu(*a.a, "self"));
    AOTIRT_RETURN_IF_ERROR(check_cpu(*a.b, "mat2"));
    if (a.out->numel() == 0) return Status();
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl b, contiguous_as(*a.b, DType::kInt8));
    const int8_t* pa = static_cast<const int8_t*>(a.a->data_ptr());
    const int8_t* pb = static_cast<const int8_t*>(b.data_ptr());
    int32_t* po = static_cast<int32_t*>(a.out->data_ptr());
    const int64_t sa0 = a.a->strides()[0], sa1 = a.a->strides()[1], n = a.n, k = a.k;
    const bool parallel = a.m > 1 && a.m * n * k >= kParallelWork;
    // int32 accumulation wraps; an int64 sum truncated to 32 bits gives the
    // same bits.
    std::vector<int64_t> scratch(static_cast<size_t>(n) * (parallel ? omp_get_max_threads() : 1));
#pragma omp parallel if (parallel)
    {
      int64_t* acc = scratch.data() + static_cast<size_t>(omp_get_thread_num()) * n;
#pragma omp for schedule(static)
      for (int64_t i = 0; i < a.m; ++i) {
        std::fill(acc, acc + n, int64_t{0});
        for (int64_t q = 0; q < k; ++q) {
          const int64_t x = pa[i * sa0 + q * sa1];
          if (x == 0) continue;
          const int8_t* row = pb + q * n;
          for (int64_t j = 0; j < n; ++j) acc[j] += x * row[j];
        }
        for (int64_t j = 0; j < n; ++j) po[i * n + j] = static_cast<int32_t>(static_cast<uint32_t>(acc[j]));
      }
    }
    return Status();
  });
}

AOTITorchError aoti_torch_cpu__fused_rms_norm(AtenTensorHandle input, const int64_t* normalized_shape,
                                              int64_t normalized_shape_len_, AtenTensorHandle* weight, double* eps,
                                              AtenTensorHandle* ret0, AtenTensorHandle* ret1) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_REQUIRE_OUT(ret0);
    AOTIRT_REQUIRE_OUT(ret1);
    Result<ops::RmsNormArgs> args =
        ops::fused_rms_norm_args(input, normalized_shape, normalized_shape_len_, weight, eps);
    AOTIRT_ASSIGN_OR_RETURN(ops::RmsNormArgs a, std::move(args));
    AOTIRT_RETURN_IF_ERROR(check_cpu(*a.input, "input"));
    if (a.weight) AOTIRT_RETURN_IF_ERROR(check_cpu(*a.weight, "weight"));
    const DType ct = a.rstd_dtype;
    TensorImpl out, rstd;
    if (ct == DType::kFloat64)
      AOTIRT_RETURN_IF_ERROR(rms_norm_compute<double>(a, ct, &out, &rstd));
    else
      AOTIRT_RETURN_IF_ERROR(rms_norm_compute<float>(a, ct, &out, &rstd));
    AtenTensorHandle o = new_handle(std::move(out));
    AtenTensorHandle r = nullptr;
    try {
      r = new_handle(std::move(rstd));
    } catch (...) {
      delete impl_of(o);
      throw;
    }
    *ret0 = o;
    *ret1 = r;
    return Status();
  });
}

}  // extern "C"
