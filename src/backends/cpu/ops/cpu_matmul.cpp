// CPU fallbacks for mm, addmm, bmm and baddbmm (the out= variants), on
// OpenBLAS GEMM. All four reduce to one batched routine over [B, M, K] x
// [B, K, N] views; 2-D operands get a batch of one.
#include <cstring>

#include "backends/cpu/ops/cpu_gemm_rows.h"
#include "backends/cpu/ops/cpu_matmul.h"
#include "backends/cpu/ops/cpu_onednn.h"
#include "backends/cpu/ops/cpu_op_util.h"
#include "base/status.h"
#include "core/host_copy.h"
#include "device/device.h"
#include "ops/matmul_args.h"
#include "shim/common/shim_util.h"

using namespace aotirt;
using namespace aotirt::cpu_ops;

namespace {

// [1, R, C] view of a 2-D tensor; 3-D tensors pass through.
TensorImpl as_batched(const TensorImpl& t) {
  if (t.dim() == 3) return t;
  DimVector sizes{1, t.sizes()[0], t.sizes()[1]};
  DimVector strides{t.sizes()[0] * t.strides()[0], t.strides()[0], t.strides()[1]};
  return TensorImpl(t.storage(), t.dtype(), sizes, strides, t.storage_offset());
}

bool same_view(const TensorImpl& a, const TensorImpl& b) {
  return a.data_ptr() == b.data_ptr() && a.dtype() == b.dtype() && a.sizes() == b.sizes() &&
         a.strides() == b.strides();
}

// A matrix operand staged for BLAS: data in the compute dtype, laid out so
// that every batch is a BLAS-readable matrix.
struct Operand {
  TensorImpl tensor;  // keeps a staged copy alive
  BlasMatrix layout;
};

Result<Operand> stage_operand(const TensorImpl& t, DType ct) {
  Operand op;
  AOTIRT_ASSIGN_OR_RETURN(op.tensor, t.dtype() == ct ? Result<TensorImpl>(t) : contiguous_as(t, ct));
  const TensorImpl& s = op.tensor;
  if (!blas_matrix(s.sizes()[1], s.sizes()[2], s.strides()[1], s.strides()[2], &op.layout)) {
    DimVector sizes = s.sizes();
    AOTIRT_ASSIGN_OR_RETURN(op.tensor, empty_contiguous(sizes, ct, DeviceId{}));
    AOTIRT_RETURN_IF_ERROR(host_copy_strided(op.tensor, t));
    blas_matrix(sizes[1], sizes[2], op.tensor.strides()[1], op.tensor.strides()[2], &op.layout);
  }
  return op;
}

template <class T>
void run_batches(const TensorImpl& c, const BlasMatrix& cl, const Operand& a, const Operand& b, double alpha,
                 double beta) {
  const int64_t batch = c.sizes()[0], m = c.sizes()[1], n = c.sizes()[2];
  const int64_t k = a.tensor.sizes()[2];
  const T* pa = static_cast<const T*>(a.tensor.data_ptr());
  const T* pb = static_cast<const T*>(b.tensor.data_ptr());
  T* pc = static_cast<T*>(c.data_ptr());
  // A size-1 batch may carry any stride; never step by it.
  const int64_t sa = batch > 1 ? a.tensor.strides()[0] : 0;
  const int64_t sb = batch > 1 ? b.tensor.strides()[0] : 0;
  const int64_t sc = batch > 1 ? c.strides()[0] : 0;
  for (int64_t i = 0; i < batch; ++i) {
    gemm<T>(a.layout.transposed, b.layout.transposed, m, n, k, static_cast<T>(alpha), pa + i * sa,
            a.layout.ld, pb + i * sb, b.layout.ld, static_cast<T>(beta), pc + i * sc, cl.ld, cl.transposed);
  }
}

// How the few-row kernels can read |b| [B, K, N] in place, if they can: one
// of its matrix strides must be 1. A float32 product goes to them only up to
// kGemmRowsF32 rows, where sgemm's packing of all of B costs more than it
// saves; a bfloat16 one up to kGemmRowsMax (OpenBLAS would need both operands
// widened to float32 first).
constexpr int64_t kGemmRowsF32 = 4;

bool rows_layout(const TensorImpl& b, RowsLayout* layout, int64_t* ldb) {
  const int64_t sk = b.strides()[1], sn = b.strides()[2];
  if (sk == 1 || b.sizes()[1] == 1) {
    *layout = RowsLayout::kKContiguous;
    *ldb = b.sizes()[2] == 1 ? b.sizes()[1] : sn;
    return *ldb >= 0;
  }
  if (sn == 1 || b.sizes()[2] == 1) {
    *layout = RowsLayout::kNContiguous;
    *ldb = sk;
    return sk >= 0;
  }
  return false;
}

bool use_gemm_rows(const TensorImpl& a, const TensorImpl& b) {
  const int64_t m = a.sizes()[1];
  if (m < 1 || m > kGemmRowsMax || a.dtype() != b.dtype()) return false;
  if (a.dtype() != DType::kBFloat16 && !(a.dtype() == DType::kFloat32 && m <= kGemmRowsF32)) return false;
  RowsLayout layout;
  int64_t ldb;
  return rows_layout(b, &layout, &ldb);
}

// The few-row path of matmul_into: A widened to float32, B read in place.
Status matmul_rows(const TensorImpl& c, const TensorImpl& a, const TensorImpl& b, double alpha, double beta) {
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl a32, contiguous_as(a, DType::kFloat32));
  RowsProblem p;
  p.m = c.sizes()[1];
  p.n = c.sizes()[2];
  p.k = a.sizes()[2];
  p.b_bf16 = b.dtype() == DType::kBFloat16;
  rows_layout(b, &p.layout, &p.ldb);
  p.c_rs = c.strides()[1];
  p.c_cs = c.strides()[2];
  p.alpha = static_cast<float>(alpha);
  p.beta = static_cast<float>(beta);
  const int64_t batch = c.sizes()[0];
  const size_t elem = dtype_size(b.dtype());
  for (int64_t i = 0; i < batch; ++i) {
    p.a = static_cast<const float*>(a32.data_ptr()) + i * p.m * p.k;
    p.b = static_cast<const char*>(b.data_ptr()) + (batch > 1 ? i * b.strides()[0] : 0) * elem;
    p.c = static_cast<float*>(c.data_ptr()) + (batch > 1 ? i * c.strides()[0] : 0);
    gemm_rows(p);
  }
  return Status();
}

// out = beta * self + alpha * (a @ b) over [B, M, K] x [B, K, N] -> [B, M, N];
// |self| (null for mm/bmm) broadcasts to out and is ignored when beta is 0.
// Shapes and dtypes are already checked.
Status matmul_into(const TensorImpl& out, const TensorImpl* self, const TensorImpl& a, const TensorImpl& b,
                   double beta, double alpha) {
  const int64_t batch = out.sizes()[0], m = out.sizes()[1], n = out.sizes()[2];
  const int64_t k = a.sizes()[2];
  AOTIRT_RETURN_IF_ERROR(check_blas_int(m, "M"));
  AOTIRT_RETURN_IF_ERROR(check_blas_int(n, "N"));
  AOTIRT_RETURN_IF_ERROR(check_blas_int(k, "K"));
  if (out.numel() == 0) return Status();
  const DType ct = compute_dtype(out.dtype());

  // bfloat16 and float16 products past the few-row kernels: oneDNN's matmul
  // reads both operands in their own precision, where OpenBLAS would need
  // both widened to float32 on every call (several times slower; figures in
  // bench/notes.md). Without oneDNN, or for what it does not take, the
  // float32 path below.
  const bool half = out.dtype() == DType::kBFloat16 || out.dtype() == DType::kFloat16;
  if (half && a.dtype() == out.dtype() && b.dtype() == out.dtype() && alpha == 1.0 &&
      (self == nullptr || beta == 0.0) && !use_gemm_rows(a, b)) {
    Status st = onednn_matmul_into(a, b, out);
    if (st.ok() || (st.code() != StatusCode::kUnavailable && st.code() != StatusCode::kUnimplemented)) return st;
  }

  // Write straight into |out| when BLAS can; else into a temporary.
  TensorImpl c = out;
  BlasMatrix cl;
  bool direct = out.dtype() == ct && blas_matrix(m, n, out.strides()[1], out.strides()[2], &cl) &&
                (batch == 1 || out.strides()[0] != 0);
  if (!direct) {
    AOTIRT_ASSIGN_OR_RETURN(c, empty_contiguous(out.sizes(), ct, DeviceId{}));
    blas_matrix(m, n, c.strides()[1], c.strides()[2], &cl);
  }
  const bool use_self = self != nullptr && beta != 0.0;
  if (use_self && !same_view(c, *self)) AOTIRT_RETURN_IF_ERROR(host_copy_strided(c, *self));

  const double eff_beta = use_self ? beta : 0.0;
  if (ct == DType::kFloat32 && use_gemm_rows(a, b)) {
    AOTIRT_RETURN_IF_ERROR(matmul_rows(c, a, b, alpha, eff_beta));
    if (!direct) AOTIRT_RETURN_IF_ERROR(host_copy_strided(out, c));
    return Status();
  }
  AOTIRT_RETURN_IF_ERROR(ensure_blas());
  AOTIRT_ASSIGN_OR_RETURN(Operand oa, stage_operand(a, ct));
  AOTIRT_ASSIGN_OR_RETURN(Operand ob, stage_operand(b, ct));
  if (ct == DType::kFloat64)
    run_batches<double>(c, cl, oa, ob, alpha, eff_beta);
  else
    run_batches<float>(c, cl, oa, ob, alpha, eff_beta);
  if (!direct) AOTIRT_RETURN_IF_ERROR(host_copy_strided(out, c));
  return Status();
}

// The op layer's checks, then the CPU's own: host memory and a float dtype.
Result<ops::MatmulArgs> cpu_matmul_args(ops::MatmulKind kind, AtenTensorHandle out, AtenTensorHandle self,
                                        AtenTensorHandle mat1, AtenTensorHandle mat2, double beta, double alpha) {
  AOTIRT_ASSIGN_OR_RETURN(ops::MatmulArgs m, ops::matmul_args(kind, out, self, mat1, mat2, beta, alpha));
  AOTIRT_RETURN_IF_ERROR(check_cpu(*m.out, "out"));
  AOTIRT_RETURN_IF_ERROR(check_cpu(*m.a, m.a_name));
  AOTIRT_RETURN_IF_ERROR(check_cpu(*m.b, m.b_name));
  if (m.self) AOTIRT_RETURN_IF_ERROR(check_cpu(*m.self, "self"));
  AOTIRT_RETURN_IF_ERROR(check_float_dtype(m.a->dtype(), m.a_name));
  return m;
}

Status run(const ops::MatmulArgs& m) {
  if (m.batched) return matmul_into(*m.out, m.self, *m.a, *m.b, m.beta, m.alpha);
  TensorImpl ob = as_batched(*m.out);
  return matmul_into(ob, m.self, as_batched(*m.a), as_batched(*m.b), m.beta, m.alpha);
}

}  // namespace

namespace aotirt {
namespace cpu_ops {

Status cpu_matmul_into(const TensorImpl& out, const TensorImpl* self, const TensorImpl& a, const TensorImpl& b,
                       double beta, double alpha) {
  return matmul_into(out, self, a, b, beta, alpha);
}

}  // namespace cpu_ops
}  // namespace aotirt

extern "C" {

AOTITorchError aoti_torch_cpu_mm_out(AtenTensorHandle out, AtenTensorHandle self,
                                     AtenTensorHandle mat2) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_ASSIGN_OR_RETURN(ops::MatmulArgs m,
                            cpu_matmul_args(ops::MatmulKind::kMm, out, self, nullptr, mat2, 0.0, 1.0));
    return run(m);
  });
}

AOTITorchError aoti_torch_cpu_addmm_out(AtenTensorHandle out, AtenTensorHandle self, AtenTensorHandle mat1,
                                        AtenTensorHandle mat2, double beta, double alpha) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_ASSIGN_OR_RETURN(ops::MatmulArgs m,
                            cpu_matmul_args(ops::MatmulKind::kAddmm, out, self, mat1, mat2, beta, alpha));
    return run(m);
  });
}

AOTITorchError aoti_torch_cpu_bmm_out(AtenTensorHandle out, AtenTensorHandle self,
                                      AtenTensorHandle mat2) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_ASSIGN_OR_RETURN(ops::MatmulArgs m,
                            cpu_matmul_args(ops::MatmulKind::kBmm, out, self, nullptr, mat2, 0.0, 1.0));
    return run(m);
  });
}

AOTITorchError aoti_torch_cpu_baddbmm_out(AtenTensorHandle out, AtenTensorHandle self,
                                          AtenTensorHandle batch1, AtenTensorHandle batch2, double beta,
                                          double alpha) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_ASSIGN_OR_RETURN(ops::MatmulArgs m,
                            cpu_matmul_args(ops::MatmulKind::kBaddbmm, out, self, batch1, batch2, beta, alpha));
    return run(m);
  });
}

}  // extern "C"
