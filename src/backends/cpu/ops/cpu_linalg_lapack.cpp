// CPU fallbacks for the LAPACK-backed ops of c_shim_cpu.h: cholesky_solve,
// cholesky_inverse, triangular_solve, geqrf, ormqr, and lu_unpack (which
// needs no LAPACK: it only rearranges LU's entries and the pivots). The
// LAPACK routines (and BLAS's trsm, which torch uses for triangular_solve, so
// a zero on the diagonal gives inf/NaN rather than an error) come from the
// OpenBLAS library the GEMMs load, resolved with dlsym on first use. Each
// batch's matrices are staged column-major in one buffer with torch's
// batched-Fortran strides, which is also the layout of the results.
#include <dlfcn.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "backends/cpu/cpu_options.h"
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

// Fortran calling convention: every argument by pointer, and a hidden
// length for each character argument after the others (passed, as
// gfortran-built LAPACK may read them).
using FLen = size_t;
template <class T>
struct LapackFns {
  void (*potrs)(const char*, const int*, const int*, const T*, const int*, T*, const int*, int*, FLen);
  void (*potri)(const char*, const int*, T*, const int*, int*, FLen);
  void (*trsm)(const char*, const char*, const char*, const char*, const int*, const int*, const T*, const T*,
               const int*, T*, const int*, FLen, FLen, FLen, FLen);
  void (*geqrf)(const int*, const int*, T*, const int*, T*, T*, const int*, int*);
  void (*ormqr)(const char*, const char*, const int*, const int*, const int*, const T*, const int*, const T*, T*,
                const int*, T*, const int*, int*, FLen, FLen);
};

struct LapackTable {
  LapackFns<float> s{};
  LapackFns<double> d{};
  Status status;
};

const LapackTable& lapack_table() {
  static const LapackTable table = [] {
    LapackTable t;
    const std::string& name = cpu_options().blas_library;
    void* lib = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      const char* why = dlerror();
      t.status = Status(StatusCode::kUnavailable,
                        fmt::format("CPU linear algebra needs OpenBLAS (with LAPACK), which could not be loaded ({}): "
                                    "{}; install libopenblas0-openmp or point AOTIRT_BLAS_LIBRARY at it",
                                    name, why ? why : "unknown error"));
      return t;
    }
    std::string missing;
    auto get = [&](auto& fn, const char* sym) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib, sym));
      if (!fn) missing += std::string(missing.empty() ? "" : ", ") + sym;
    };
    get(t.s.potrs, "spotrs_");
    get(t.d.potrs, "dpotrs_");
    get(t.s.potri, "spotri_");
    get(t.d.potri, "dpotri_");
    get(t.s.trsm, "strsm_");
    get(t.d.trsm, "dtrsm_");
    get(t.s.geqrf, "sgeqrf_");
    get(t.d.geqrf, "dgeqrf_");
    get(t.s.ormqr, "sormqr_");
    get(t.d.ormqr, "dormqr_");
    if (!missing.empty())
      t.status = Status(StatusCode::kUnavailable,
                        fmt::format("{} lacks the LAPACK routines {}: aotirt's CPU linear algebra needs an OpenBLAS "
                                    "built with LAPACK (AOTIRT_BLAS_LIBRARY)",
                                    name, missing));
    return t;
  }();
  return table;
}

template <class T>
const LapackFns<T>& fns() {
  if constexpr (std::is_same_v<T, float>)
    return lapack_table().s;
  else
    return lapack_table().d;
}

Status ensure_lapack() { return lapack_table().status; }

// |src| broadcast to |sizes| in a fresh buffer of |dtype| with torch's
// batched-Fortran strides.
Result<TensorImpl> stage_fortran(const TensorImpl& src, const DimVector& sizes, DType dtype) {
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl t, empty_strided(sizes, ops::batched_fortran_strides(sizes), dtype, DeviceId{}));
  if (t.numel() > 0) AOTIRT_RETURN_IF_ERROR(host_copy_strided(t, src));
  return t;
}

int64_t batch_count(const DimVector& batch) { return numel_of(batch); }

Status check_lapack_ints(std::initializer_list<int64_t> dims) {
  for (int64_t d : dims) AOTIRT_RETURN_IF_ERROR(check_blas_int(d, "a matrix dim"));
  return Status();
}

template <class T>
void potrs_batches(const ops::SolveArgs& s, const TensorImpl& a, const TensorImpl& b) {
  const int n = static_cast<int>(s.m), nrhs = static_cast<int>(s.k), ld = std::max(n, 1);
  const char uplo = s.upper ? 'U' : 'L';
  const T* pa = static_cast<const T*>(a.data_ptr());
  T* pb = static_cast<T*>(b.data_ptr());
  const int64_t batches = batch_count(s.batch);
  for (int64_t i = 0; i < batches; ++i) {
    int info = 0;
    fns<T>().potrs(&uplo, &n, &nrhs, pa + i * s.m * s.m, &ld, pb + i * s.m * s.k, &ld, &info, 1);
  }
}

template <class T>
void trsm_batches(const ops::SolveArgs& s, const TensorImpl& a, const TensorImpl& b) {
  const int m = static_cast<int>(s.m), n = static_cast<int>(s.k), ld = std::max(m, 1);
  const char side = 'L', uplo = s.upper ? 'U' : 'L', trans = s.transpose ? 'T' : 'N',
             diag = s.unitriangular ? 'U' : 'N';
  const T one = 1;
  const T* pa = static_cast<const T*>(a.data_ptr());
  T* pb = static_cast<T*>(b.data_ptr());
  const int64_t batches = batch_count(s.batch);
  for (int64_t i = 0; i < batches; ++i)
    fns<T>().trsm(&side, &uplo, &trans, &diag, &m, &n, &one, pa + i * s.m * s.m, &ld, pb + i * s.m * s.k, &ld, 1, 1,
                  1, 1);
}

// potri inverts in place from the factor's triangle; the other triangle is
// then mirrored, so the result is the full symmetric inverse as torch's.
template <class T>
Status potri_batches(const ops::SolveArgs& s, const TensorImpl& a) {
  const int n = static_cast<int>(s.m), ld = std::max(n, 1);
  const char uplo = s.upper ? 'U' : 'L';
  T* pa = static_cast<T*>(a.data_ptr());
  const int64_t batches = batch_count(s.batch);
  for (int64_t i = 0; i < batches; ++i) {
    T* mat = pa + i * s.m * s.m;
    int info = 0;
    fns<T>().potri(&uplo, &n, mat, &ld, &info, 1);
    AOTIRT_ENSURE(info >= 0, kInternal, "cholesky_inverse: LAPACK potri rejected argument {}", -info);
    AOTIRT_ENSURE(info == 0, kInvalidArgument,
                  "cholesky_inverse: {}The diagonal element {} is zero, the inversion could not be completed because "
                  "the input matrix is singular.",
                  batches > 1 ? fmt::format("(Batch element {}): ", i) : std::string(), info);
    // Column-major: element (r, c) at c * n + r.
    for (int64_t c = 0; c < s.m; ++c)
      for (int64_t r = c + 1; r < s.m; ++r) {
        if (s.upper)
          mat[c * s.m + r] = mat[r * s.m + c];  // lower (r, c) from upper (c, r)
        else
          mat[r * s.m + c] = mat[c * s.m + r];  // upper (c, r) from lower (r, c)
      }
  }
  return Status();
}

template <class T>
Status geqrf_batches(const ops::QrArgs& q, const TensorImpl& a, const TensorImpl& tau) {
  const int m = static_cast<int>(q.m), n = static_cast<int>(q.n), ld = std::max(m, 1);
  T* pa = static_cast<T*>(a.data_ptr());
  T* pt = static_cast<T*>(tau.data_ptr());
  int info = 0, lwork = -1;
  T query = 0;
  fns<T>().geqrf(&m, &n, pa, &ld, pt, &query, &lwork, &info);
  lwork = std::max(1, static_cast<int>(query));
  std::vector<T> work(static_cast<size_t>(lwork));
  const int64_t batches = batch_count(q.batch);
  for (int64_t i = 0; i < batches; ++i) {
    fns<T>().geqrf(&m, &n, pa + i * q.m * q.n, &ld, pt + i * q.k, work.data(), &lwork, &info);
    AOTIRT_ENSURE(info == 0, kInternal, "geqrf: LAPACK geqrf rejected argument {}", -info);
  }
  return Status();
}

template <class T>
Status ormqr_batches(const ops::QrArgs& q, const TensorImpl& a, const TensorImpl& tau, const TensorImpl& c) {
  const int m = static_cast<int>(q.m), n = static_cast<int>(q.n), k = static_cast<int>(q.k);
  const int64_t nq = q.left ? q.m : q.n, acols = a.sizes()[a.dim() - 1];
  const int lda = static_cast<int>(std::max<int64_t>(nq, 1)), ldc = std::max(m, 1);
  const char side = q.left ? 'L' : 'R', trans = q.transpose ? 'T' : 'N';
  const T* pa = static_cast<const T*>(a.data_ptr());
  const T* pt = static_cast<const T*>(tau.data_ptr());
  T* pc = static_cast<T*>(c.data_ptr());
  int info = 0, lwork = -1;
  T query = 0;
  fns<T>().ormqr(&side, &trans, &m, &n, &k, pa, &lda, pt, pc, &ldc, &query, &lwork, &info, 1, 1);
  lwork = std::max(1, static_cast<int>(query));
  std::vector<T> work(static_cast<size_t>(lwork));
  const int64_t batches = batch_count(q.batch);
  for (int64_t i = 0; i < batches; ++i) {
    fns<T>().ormqr(&side, &trans, &m, &n, &k, pa + i * nq * acols, &lda, pt + i * q.k, pc + i * q.m * q.n, &ldc,
                   work.data(), &lwork, &info, 1, 1);
    AOTIRT_ENSURE(info == 0, kInternal, "ormqr: LAPACK ormqr rejected argument {}", -info);
  }
  return Status();
}

Status give2(TensorImpl a, TensorImpl b, AtenTensorHandle* ret0, AtenTensorHandle* ret1) {
  AtenTensorHandle h0 = new_handle(std::move(a));
  AtenTensorHandle h1 = nullptr;
  try {
    h1 = new_handle(std::move(b));
  } catch (...) {
    delete impl_of(h0);
    throw;
  }
  *ret0 = h0;
  *ret1 = h1;
  return Status();
}

// ---- lu_unpack ----

// L and U copied bytewise from LU (any real dtype), P built from the pivots.
Status lu_unpack_compute(const ops::LuUnpackArgs& u, TensorImpl* p, TensorImpl* l, TensorImpl* r) {
  const TensorImpl& lu_in = *u.lu;
  const DType dtype = lu_in.dtype();
  const size_t es = dtype_size(dtype);
  const int64_t m = u.m, n = u.n, k = u.k, batches = batch_count(u.batch);
  // One as |dtype|'s bytes, for L's unit diagonal and P's entries.
  char one[8] = {0};
  store_from_double(one, dtype, 1.0);
  auto sized = [&](int64_t rows, int64_t cols) {
    DimVector s = u.batch;
    const int64_t nb = s.size();
    s.resize(nb + 2);
    s[nb] = rows;
    s[nb + 1] = cols;
    return s;
  };
  if (u.unpack_data) {
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl lu, contiguous_as(lu_in, dtype));
    AOTIRT_ASSIGN_OR_RETURN(*l, empty_contiguous(sized(m, k), dtype, DeviceId{}));
    AOTIRT_ASSIGN_OR_RETURN(*r, empty_contiguous(sized(k, n), dtype, DeviceId{}));
    const char* src = static_cast<const char*>(lu.data_ptr());
    char* pl = static_cast<char*>(l->data_ptr());
    char* pu = static_cast<char*>(r->data_ptr());
    if (l->numel() > 0) std::memset(pl, 0, l->nbytes());
    if (r->numel() > 0) std::memset(pu, 0, r->nbytes());
    for (int64_t b = 0; b < batches; ++b) {
      const char* mat = src + b * m * n * es;
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          const char* e = mat + (i * n + j) * es;
          if (j < i && j < k) std::memcpy(pl + ((b * m + i) * k + j) * es, e, es);
          if (j >= i && i < k) std::memcpy(pu + ((b * k + i) * n + j) * es, e, es);
        }
      for (int64_t i = 0; i < k; ++i) std::memcpy(pl + ((b * m + i) * k + i) * es, one, es);
    }
  } else {
    AOTIRT_ASSIGN_OR_RETURN(*l, empty_contiguous(DimVector{0}, dtype, DeviceId{}));
    AOTIRT_ASSIGN_OR_RETURN(*r, empty_contiguous(DimVector{0}, dtype, DeviceId{}));
  }
  if (u.unpack_pivots) {
    AOTIRT_ASSIGN_OR_RETURN(*p, empty_contiguous(sized(m, m), dtype, DeviceId{}));
    char* pp = static_cast<char*>(p->data_ptr());
    if (p->numel() > 0) std::memset(pp, 0, p->nbytes());
    // The pivots broadcast over LU's batch.
    DimVector piv_sizes = u.batch;
    piv_sizes.resize(piv_sizes.size() + 1);
    piv_sizes[piv_sizes.size() - 1] = k;
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl piv, empty_contiguous(piv_sizes, DType::kInt32, DeviceId{}));
    if (piv.numel() > 0) AOTIRT_RETURN_IF_ERROR(host_copy_strided(piv, *u.pivots));
    const int32_t* pv = static_cast<const int32_t*>(piv.data_ptr());
    std::vector<int64_t> perm(static_cast<size_t>(m));
    for (int64_t b = 0; b < batches; ++b) {
      for (int64_t i = 0; i < m; ++i) perm[i] = i;
      // Row i was swapped with row pivots[i] - 1, in order; then row i of
      // L @ U is row perm[i] of A, so P[perm[i], i] = 1.
      for (int64_t i = 0; i < k; ++i) {
        const int64_t t = pv[b * k + i];
        AOTIRT_ENSURE(t >= 1 && t <= m, kInvalidArgument,
                      "pivots passed to lu_unpack must be between 1 and LU.size(-2) inclusive, got {}. Did you "
                      "properly pass the result of lu_factor?",
                      t);
        std::swap(perm[i], perm[t - 1]);
      }
      for (int64_t i = 0; i < m; ++i) std::memcpy(pp + ((b * m + perm[i]) * m + i) * es, one, es);
    }
  } else {
    AOTIRT_ASSIGN_OR_RETURN(*p, empty_contiguous(DimVector{0}, dtype, DeviceId{}));
  }
  return Status();
}

}  // namespace

extern "C" {

AOTITorchError aoti_torch_cpu_cholesky_solve(AtenTensorHandle self, AtenTensorHandle input2, int32_t upper,
                                             AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_REQUIRE_OUT(ret0);
    AOTIRT_ASSIGN_OR_RETURN(ops::SolveArgs s, ops::cholesky_solve_args(self, input2, upper != 0));
    AOTIRT_RETURN_IF_ERROR(check_cpu(*s.b, "self"));
    AOTIRT_RETURN_IF_ERROR(check_cpu(*s.a, "input2"));
    const DType dtype = s.b->dtype();
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl x, stage_fortran(*s.b, s.b_sizes, dtype));
    if (x.numel() > 0 && s.m > 0) {
      AOTIRT_RETURN_IF_ERROR(ensure_lapack());
      AOTIRT_RETURN_IF_ERROR(check_lapack_ints({s.m, s.k}));
      AOTIRT_ASSIGN_OR_RETURN(TensorImpl a, stage_fortran(*s.a, s.a_sizes, dtype));
      if (dtype == DType::kFloat64)
        potrs_batches<double>(s, a, x);
      else
        potrs_batches<float>(s, a, x);
    }
    *ret0 = new_handle(std::move(x));
    return Status();
  });
}

AOTITorchError aoti_torch_cpu_cholesky_inverse(AtenTensorHandle self, int32_t upper, AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_REQUIRE_OUT(ret0);
    AOTIRT_ASSIGN_OR_RETURN(ops::SolveArgs s, ops::cholesky_inverse_args(self, upper != 0));
    AOTIRT_RETURN_IF_ERROR(check_cpu(*s.a, "self"));
    const DType dtype = s.a->dtype();
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl a, stage_fortran(*s.a, s.a_sizes, dtype));
    if (a.numel() > 0) {
      AOTIRT_RETURN_IF_ERROR(ensure_lapack());
      AOTIRT_RETURN_IF_ERROR(check_lapack_ints({s.m}));
      if (dtype == DType::kFloat64)
        AOTIRT_RETURN_IF_ERROR(potri_batches<double>(s, a));
      else
        AOTIRT_RETURN_IF_ERROR(potri_batches<float>(s, a));
    }
    *ret0 = new_handle(std::move(a));
    return Status();
  });
}

AOTITorchError aoti_torch_cpu_triangular_solve(AtenTensorHandle self, AtenTensorHandle A, int32_t upper,
                                               int32_t transpose, int32_t unitriangular, AtenTensorHandle* ret0,
                                               AtenTensorHandle* ret1) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_REQUIRE_OUT(ret0);
    AOTIRT_REQUIRE_OUT(ret1);
    Result<ops::SolveArgs> args =
        ops::triangular_solve_args(self, A, upper != 0, transpose != 0, unitriangular != 0);
    AOTIRT_ASSIGN_OR_RETURN(ops::SolveArgs s, std::move(args));
    AOTIRT_RETURN_IF_ERROR(check_cpu(*s.b, "self"));
    AOTIRT_RETURN_IF_ERROR(check_cpu(*s.a, "A"));
    const DType dtype = s.b->dtype();
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl x, stage_fortran(*s.b, s.b_sizes, dtype));
    // The second output is A's copy, broadcast to the batch.
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl a, stage_fortran(*s.a, s.a_sizes, dtype));
    if (x.numel() > 0 && s.m > 0) {
      AOTIRT_RETURN_IF_ERROR(ensure_lapack());
      AOTIRT_RETURN_IF_ERROR(check_lapack_ints({s.m, s.k}));
      if (dtype == DType::kFloat64)
        trsm_batches<double>(s, a, x);
      else
        trsm_batches<float>(s, a, x);
    }
    return give2(std::move(x), std::move(a), ret0, ret1);
  });
}

AOTITorchError aoti_torch_cpu_geqrf(AtenTensorHandle self, AtenTensorHandle* ret0, AtenTensorHandle* ret1) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_REQUIRE_OUT(ret0);
    AOTIRT_REQUIRE_OUT(ret1);
    AOTIRT_ASSIGN_OR_RETURN(ops::QrArgs q, ops::geqrf_args(self));
    AOTIRT_RETURN_IF_ERROR(check_cpu(*q.a, "self"));
    const DType dtype = q.a->dtype();
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl a, stage_fortran(*q.a, q.a->sizes(), dtype));
    DimVector tau_sizes = q.batch;
    tau_sizes.resize(tau_sizes.size() + 1);
    tau_sizes[tau_sizes.size() - 1] = q.k;
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl tau, empty_contiguous(tau_sizes, dtype, DeviceId{}));
    if (a.numel() > 0) {
      AOTIRT_RETURN_IF_ERROR(ensure_lapack());
      AOTIRT_RETURN_IF_ERROR(check_lapack_ints({q.m, q.n}));
      if (dtype == DType::kFloat64)
        AOTIRT_RETURN_IF_ERROR(geqrf_batches<double>(q, a, tau));
      else
        AOTIRT_RETURN_IF_ERROR(geqrf_batches<float>(q, a, tau));
    }
    return give2(std::move(a), std::move(tau), ret0, ret1);
  });
}

AOTITorchError aoti_torch_cpu_ormqr(AtenTensorHandle self, AtenTensorHandle input2, AtenTensorHandle input3,
                                    int32_t left, int32_t transpose, AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_REQUIRE_OUT(ret0);
    AOTIRT_ASSIGN_OR_RETURN(ops::QrArgs q, ops::ormqr_args(self, input2, input3, left != 0, transpose != 0));
    AOTIRT_RETURN_IF_ERROR(check_cpu(*q.a, "self"));
    AOTIRT_RETURN_IF_ERROR(check_cpu(*q.tau, "input2"));
    AOTIRT_RETURN_IF_ERROR(check_cpu(*q.other, "input3"));
    const DType dtype = q.a->dtype();
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl c, stage_fortran(*q.other, q.other->sizes(), dtype));
    if (c.numel() > 0 && q.k > 0) {
      AOTIRT_RETURN_IF_ERROR(ensure_lapack());
      AOTIRT_RETURN_IF_ERROR(check_lapack_ints({q.m, q.n, q.k, q.a->sizes()[q.a->dim() - 1]}));
      AOTIRT_ASSIGN_OR_RETURN(TensorImpl a, stage_fortran(*q.a, q.a->sizes(), dtype));
      AOTIRT_ASSIGN_OR_RETURN(TensorImpl tau, contiguous_as(*q.tau, dtype));
      if (dtype == DType::kFloat64)
        AOTIRT_RETURN_IF_ERROR(ormqr_batches<double>(q, a, tau, c));
      else
        AOTIRT_RETURN_IF_ERROR(ormqr_batches<float>(q, a, tau, c));
    }
    *ret0 = new_handle(std::move(c));
    return Status();
  });
}

AOTITorchError aoti_torch_cpu_lu_unpack(AtenTensorHandle LU_data, AtenTensorHandle LU_pivots, int32_t unpack_data,
                                        int32_t unpack_pivots, AtenTensorHandle* ret0, AtenTensorHandle* ret1,
                                        AtenTensorHandle* ret2) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_REQUIRE_OUT(ret0);
    AOTIRT_REQUIRE_OUT(ret1);
    AOTIRT_REQUIRE_OUT(ret2);
    Result<ops::LuUnpackArgs> args = ops::lu_unpack_args(LU_data, LU_pivots, unpack_data != 0, unpack_pivots != 0);
    AOTIRT_ASSIGN_OR_RETURN(ops::LuUnpackArgs u, std::move(args));
    AOTIRT_RETURN_IF_ERROR(check_cpu(*u.lu, "LU_data"));
    AOTIRT_RETURN_IF_ERROR(check_cpu(*u.pivots, "LU_pivots"));
    TensorImpl p, l, r;
    AOTIRT_RETURN_IF_ERROR(lu_unpack_compute(u, &p, &l, &r));
    AtenTensorHandle hp = new_handle(std::move(p));
    AtenTensorHandle hl = nullptr, hr = nullptr;
    try {
      hl = new_handle(std::move(l));
      hr = new_handle(std::move(r));
    } catch (...) {
      delete impl_of(hp);
      delete impl_of(hl);
      throw;
    }
    *ret0 = hp;
    *ret1 = hl;
    *ret2 = hr;
    return Status();
  });
}

}  // extern "C"
