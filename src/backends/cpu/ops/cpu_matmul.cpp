// CPU fallbacks for mm, addmm, bmm and baddbmm (the out= variants), on
// OpenBLAS GEMM. All four reduce to one batched routine over [B, M, K] x
// [B, K, N] views; 2-D operands get a batch of one.
#include <cstring>

#include "backends/cpu/cpu_copy.h"
#include "backends/cpu/ops/cpu_gemm_rows.h"
#include "backends/cpu/ops/cpu_op_util.h"
#include "base/status.h"
#include "device/device.h"
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
    AOTIRT_RETURN_IF_ERROR(cpu_copy_strided(op.tensor, t));
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
  if (use_self && !same_view(c, *self)) AOTIRT_RETURN_IF_ERROR(cpu_copy_strided(c, *self));

  const double eff_beta = use_self ? beta : 0.0;
  if (ct == DType::kFloat32 && use_gemm_rows(a, b)) {
    AOTIRT_RETURN_IF_ERROR(matmul_rows(c, a, b, alpha, eff_beta));
    if (!direct) AOTIRT_RETURN_IF_ERROR(cpu_copy_strided(out, c));
    return Status();
  }
  AOTIRT_RETURN_IF_ERROR(ensure_blas());
  AOTIRT_ASSIGN_OR_RETURN(Operand oa, stage_operand(a, ct));
  AOTIRT_ASSIGN_OR_RETURN(Operand ob, stage_operand(b, ct));
  if (ct == DType::kFloat64)
    run_batches<double>(c, cl, oa, ob, alpha, eff_beta);
  else
    run_batches<float>(c, cl, oa, ob, alpha, eff_beta);
  if (!direct) AOTIRT_RETURN_IF_ERROR(cpu_copy_strided(out, c));
  return Status();
}

// Checks shared by all four ops: handles, devices, dtypes, ranks and the
// inner dimension. |rank| is 2 (mm, addmm) or 3 (bmm, baddbmm).
Status check_operands(const TensorImpl& out, const TensorImpl& a, const char* a_name, const TensorImpl& b,
                      const char* b_name, int64_t rank) {
  AOTIRT_RETURN_IF_ERROR(check_cpu(out, "out"));
  AOTIRT_RETURN_IF_ERROR(check_cpu(a, a_name));
  AOTIRT_RETURN_IF_ERROR(check_cpu(b, b_name));
  AOTIRT_RETURN_IF_ERROR(check_dim(a, rank, a_name));
  AOTIRT_RETURN_IF_ERROR(check_dim(b, rank, b_name));
  AOTIRT_RETURN_IF_ERROR(check_dim(out, rank, "out"));
  AOTIRT_RETURN_IF_ERROR(check_float_dtype(a.dtype(), a_name));
  AOTIRT_RETURN_IF_ERROR(check_same_dtype(a, a_name, b, b_name));
  AOTIRT_RETURN_IF_ERROR(check_same_dtype(out, "out", a, a_name));
  const int64_t r = rank - 2;
  if (rank == 3) {
    AOTIRT_ENSURE(a.sizes()[0] == b.sizes()[0], kInvalidArgument,
                  "batch sizes differ: '{}' is {} and '{}' is {}", a_name, shape_str(a), b_name,
                  shape_str(b));
  }
  AOTIRT_ENSURE(a.sizes()[r + 1] == b.sizes()[r], kInvalidArgument,
                "'{}' {} and '{}' {} cannot be multiplied ({} != {})", a_name, shape_str(a), b_name,
                shape_str(b), a.sizes()[r + 1], b.sizes()[r]);
  DimVector expected =
      rank == 3 ? DimVector{a.sizes()[0], a.sizes()[1], b.sizes()[2]} : DimVector{a.sizes()[0], b.sizes()[1]};
  AOTIRT_ENSURE(out.sizes() == expected, kInvalidArgument, "'out' has shape {}, expected {}", shape_str(out),
                dims_to_string(expected.data(), expected.size()));
  return Status();
}

Status check_bias(const TensorImpl& self, const TensorImpl& out) {
  AOTIRT_RETURN_IF_ERROR(check_cpu(self, "self"));
  AOTIRT_RETURN_IF_ERROR(check_same_dtype(self, "self", out, "out"));
  AOTIRT_ENSURE(self.dim() <= out.dim(), kInvalidArgument, "'self' {} does not broadcast to {}",
                shape_str(self), shape_str(out));
  auto st = broadcast_strides(self.sizes(), self.strides(), out.sizes());
  AOTIRT_ENSURE(st.ok(), kInvalidArgument, "'self' {} does not broadcast to {}", shape_str(self),
                shape_str(out));
  return Status();
}

}  // namespace

extern "C" {

AOTITorchError aoti_torch_cpu_mm_out(AtenTensorHandle out, AtenTensorHandle self,
                                     AtenTensorHandle mat2) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_ASSIGN_OR_RETURN(const TensorImpl* o, require_tensor(out, "out"));
    AOTIRT_ASSIGN_OR_RETURN(const TensorImpl* a, require_tensor(self, "self"));
    AOTIRT_ASSIGN_OR_RETURN(const TensorImpl* b, require_tensor(mat2, "mat2"));
    AOTIRT_RETURN_IF_ERROR(check_operands(*o, *a, "self", *b, "mat2", 2));
    return matmul_into(as_batched(*o), nullptr, as_batched(*a), as_batched(*b), 0.0, 1.0);
  });
}

AOTITorchError aoti_torch_cpu_addmm_out(AtenTensorHandle out, AtenTensorHandle self, AtenTensorHandle mat1,
                                        AtenTensorHandle mat2, double beta, double alpha) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_ASSIGN_OR_RETURN(const TensorImpl* o, require_tensor(out, "out"));
    AOTIRT_ASSIGN_OR_RETURN(const TensorImpl* s, require_tensor(self, "self"));
    AOTIRT_ASSIGN_OR_RETURN(const TensorImpl* a, require_tensor(mat1, "mat1"));
    AOTIRT_ASSIGN_OR_RETURN(const TensorImpl* b, require_tensor(mat2, "mat2"));
    AOTIRT_RETURN_IF_ERROR(check_operands(*o, *a, "mat1", *b, "mat2", 2));
    AOTIRT_RETURN_IF_ERROR(check_bias(*s, *o));
    TensorImpl ob = as_batched(*o);
    return matmul_into(ob, s, as_batched(*a), as_batched(*b), beta, alpha);
  });
}

AOTITorchError aoti_torch_cpu_bmm_out(AtenTensorHandle out, AtenTensorHandle self,
                                      AtenTensorHandle mat2) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_ASSIGN_OR_RETURN(const TensorImpl* o, require_tensor(out, "out"));
    AOTIRT_ASSIGN_OR_RETURN(const TensorImpl* a, require_tensor(self, "self"));
    AOTIRT_ASSIGN_OR_RETURN(const TensorImpl* b, require_tensor(mat2, "mat2"));
    AOTIRT_RETURN_IF_ERROR(check_operands(*o, *a, "self", *b, "mat2", 3));
    return matmul_into(*o, nullptr, *a, *b, 0.0, 1.0);
  });
}

AOTITorchError aoti_torch_cpu_baddbmm_out(AtenTensorHandle out, AtenTensorHandle self,
                                          AtenTensorHandle batch1, AtenTensorHandle batch2, double beta,
                                          double alpha) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_ASSIGN_OR_RETURN(const TensorImpl* o, require_tensor(out, "out"));
    AOTIRT_ASSIGN_OR_RETURN(const TensorImpl* s, require_tensor(self, "self"));
    AOTIRT_ASSIGN_OR_RETURN(const TensorImpl* a, require_tensor(batch1, "batch1"));
    AOTIRT_ASSIGN_OR_RETURN(const TensorImpl* b, require_tensor(batch2, "batch2"));
    AOTIRT_RETURN_IF_ERROR(check_operands(*o, *a, "batch1", *b, "batch2", 3));
    AOTIRT_RETURN_IF_ERROR(check_bias(*s, *o));
    return matmul_into(*o, s, *a, *b, beta, alpha);
  });
}

}  // extern "C"
