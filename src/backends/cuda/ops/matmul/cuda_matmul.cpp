// aoti_torch_cuda_{mm,addmm,bmm,baddbmm}_out: the argument rules
// (ops/matmul_args.h), the operands described in cuBLASLt's column-major
// terms, and the choice of implementation (cuda_matmul_impl.h).
//
// A row-major matrix is the transpose of a column-major one, so each strided
// operand is described as op(S) with S column-major whenever its strides
// allow (either dim of stride 1), and copied to a contiguous temporary
// otherwise. addmm with a [N] bias and beta 1 uses the bias epilogue; other
// `self` tensors are broadcast into the output first and scaled through
// beta. float32 GEMMs run on aotirt's own kernels where one takes them
// (cuda_matmul_f32x3.cpp) unless TF32 is allowed (then cuBLASLt's TF32
// kernels are the faster choice) or AOTIRT_CUDA_GEMM=cublaslt; bfloat16 ones
// as cuda_matmul_bf16.cpp decides; the rest on cuBLASLt
// (cuda_matmul_cublaslt.cpp).
#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "core/host_copy.h"
#include "ops/layout.h"
#include "ops/matmul_args.h"
#include "ops/op_args.h"
#include "backends/cuda/runtime/cuda_status.h"
#include "backends/cuda/runtime/cuda_device.h"
#include "backends/cuda/runtime/cuda_options.h"
#include "backends/cuda/runtime/cuda_symbols.h"
#include "backends/cuda/ops/matmul/cuda_gemm_f32x3.h"
#include "backends/cuda/ops/matmul/cuda_matmul_impl.h"
#include "backends/cuda/launch/cuda_l2_prefetch.h"
#include "backends/cuda/ops/cuda_op_util.h"
#include "base/status.h"
#include "device/device.h"
#include "shim/common/shim_profile.h"
#include "shim/common/shim_util.h"
namespace aotirt {
namespace {

using ops::shape_str;

// A logical [rows, cols] matrix as op(S) with S column-major, leading dim ld.
struct ColMajor {
  bool trans = false;
  int64_t ld = 1;
};

bool describe(int64_t rows, int64_t cols, int64_t sr, int64_t sc, ColMajor* out) {
  // Row-major (S = X^T, [cols, rows], ld = row stride).
  if ((cols <= 1 || sc == 1) && (rows <= 1 || sr >= std::max<int64_t>(cols, 1))) {
    out->trans = true;
    out->ld = rows <= 1 ? std::max<int64_t>(cols, 1) : sr;
    return true;
  }
  // Column-major (S = X, [rows, cols], ld = column stride).
  if ((rows <= 1 || sr == 1) && (cols <= 1 || sc >= std::max<int64_t>(rows, 1))) {
    out->trans = false;
    out->ld = cols <= 1 ? std::max<int64_t>(rows, 1) : sc;
    return true;
  }
  return false;
}

// aotirt's own kernels for |g|, when one takes it.
Result<bool> own_gemm(int device, cudaStream_t stream, const LtGemm& g, bool dry_run = false) {
  if (g.dtype == DType::kBFloat16) return bf16_gemm(device, stream, g, dry_run);
  return f32x3_gemm(device, stream, g, dry_run);
}

// The bytes op(A) or op(B) of a single GEMM spans in memory, from its first
// element to its last (not past it: the operand may be a view that ends
// where its allocation does, short of a whole leading dimension).
size_t operand_bytes(const LtGemm& g, bool a) {
  const int64_t ld = a ? g.lda : g.ldb;
  const int64_t rows = a ? (g.ta ? g.k : g.m) : (g.tb ? g.n : g.k);
  const int64_t cols = a ? (g.ta ? g.m : g.k) : (g.tb ? g.k : g.n);
  if (rows <= 0 || cols <= 0) return 0;
  return static_cast<size_t>((cols - 1) * ld + rows) * dtype_size(g.dtype);
}

// aotirt's kernels where one takes |g|, cuBLASLt otherwise; a long
// prompt's bfloat16 products on cuBLASLt first where it opens and has an
// algorithm for them.
Status queue_gemm(int device, cudaStream_t stream, const LtGemm& g) {
  if (bf16_prefers_cublaslt(g) && cublaslt_api().ok()) {
    Status s = cublaslt_gemm(device, stream, g);
    if (s.ok() || s.code() != StatusCode::kUnimplemented) return s;
  }
  AOTIRT_ASSIGN_OR_RETURN(bool ran, own_gemm(device, stream, g));
  if (ran) return Status();
  return cublaslt_gemm(device, stream, g);
}

Status lt_gemm(int device, cudaStream_t stream, const LtGemm& g) {
  // While a graph is recorded: the larger operand of a single GEMM (at the
  // batch sizes where this pays, the weights) read into L2 beside the
  // kernels since the previous GEMM or convolution (cuda_l2_prefetch.h).
  unsigned long long capture = 0;
  if (cuda_l2_prefetch_enabled()) AOTIRT_CUDA_RETURN_IF_ERROR(cuda_l2_prefetch_capture(stream, &capture));
  if (capture && g.batch == 1) {
    const size_t a = operand_bytes(g, true), b = operand_bytes(g, false);
    AOTIRT_CUDA_RETURN_IF_ERROR(cuda_l2_prefetch(stream, capture, a >= b ? g.a : g.b, std::max(a, b)));
  }
  AOTIRT_RETURN_IF_ERROR(queue_gemm(device, stream, g));
  AOTIRT_CUDA_RETURN_IF_ERROR(cuda_l2_prefetch_mark(stream, capture));
  return Status();
}

// A [.., rows, cols] operand as cuBLASLt can read it: itself, or a contiguous
// copy (always one when |dense|).
struct Operand {
  TensorImpl tensor;  // keeps a temporary alive
  ColMajor cm;
  int64_t batch_stride = 0;
};

Result<Operand> prepare_operand(const TensorImpl& t, bool batched, int device, bool dense) {
  const int64_t nd = t.dim();
  const int64_t rows = t.sizes()[nd - 2], cols = t.sizes()[nd - 1];
  Operand op;
  if (!dense && describe(rows, cols, t.strides()[nd - 2], t.strides()[nd - 1], &op.cm)) {
    op.tensor = t;
  } else {
    AOTIRT_ASSIGN_OR_RETURN(op.tensor, cuda_empty_contiguous(t.sizes(), t.dtype(), device));
    AOTIRT_RETURN_IF_ERROR(copy_tensor(op.tensor, t, false));
    describe(rows, cols, cols, 1, &op.cm);
  }
  if (batched && t.sizes()[0] > 1) op.batch_stride = op.tensor.strides()[0];
  return op;
}

bool is_bias_vector(const TensorImpl& self, int64_t n) {
  if (self.dim() == 1) return self.sizes()[0] == n && (n == 1 || self.strides()[0] == 1);
  if (self.dim() == 2) return self.sizes()[0] == 1 && self.sizes()[1] == n && (n == 1 || self.strides()[1] == 1);
  return false;
}

// One try at out = beta * self + alpha * (a @ b) through cuBLASLt. With
// |dense| every operand and the target are dense temporaries.
Status matmul_attempt(const CudaOpScope& scope, const TensorImpl* out, const TensorImpl* self, bool has_c,
                      const TensorImpl& a, const TensorImpl& b, double beta, double alpha, bool batched,
                      bool dense) {
  const int device = scope.device();
  const int64_t nd = batched ? 3 : 2;
  const int64_t batch = batched ? a.sizes()[0] : 1;
  const int64_t m = a.sizes()[nd - 2], k = a.sizes()[nd - 1], n = b.sizes()[nd - 1];
  // The target: out itself when cuBLASLt can write it, else a temporary.
  TensorImpl target = *out;
  ColMajor tc;
  bool out_ok = !dense && describe(m, n, out->strides()[nd - 2], out->strides()[nd - 1], &tc);
  if (out_ok && batched && batch > 1 && out->strides()[0] == 0) out_ok = false;
  if (!out_ok) {
    AOTIRT_ASSIGN_OR_RETURN(target, cuda_empty_contiguous(out->sizes(), out->dtype(), device));
    describe(m, n, n, 1, &tc);
  }
  const int64_t stride_t = batched && batch > 1 ? target.strides()[0] : 0;
  AOTIRT_ASSIGN_OR_RETURN(Operand oa, prepare_operand(a, batched, device, dense));
  AOTIRT_ASSIGN_OR_RETURN(Operand ob, prepare_operand(b, batched, device, dense));

  LtGemm g;
  g.dtype = a.dtype();
  g.batch = batch;
  g.k = k;
  g.d = target.data_ptr();
  g.ldd = tc.ld;
  g.stride_d = stride_t;
  g.alpha = alpha;
  if (tc.trans) {
    // target^T [n, m] = b^T @ a^T: cuBLASLt's A is b, its B is a, ops flipped.
    g.m = n;
    g.n = m;
    g.a = ob.tensor.data_ptr();
    g.ta = !ob.cm.trans;
    g.lda = ob.cm.ld;
    g.stride_a = ob.batch_stride;
    g.b = oa.tensor.data_ptr();
    g.tb = !oa.cm.trans;
    g.ldb = oa.cm.ld;
    g.stride_b = oa.batch_stride;
  } else {
    g.m = m;
    g.n = n;
    g.a = oa.tensor.data_ptr();
    g.ta = oa.cm.trans;
    g.lda = oa.cm.ld;
    g.stride_a = oa.batch_stride;
    g.b = ob.tensor.data_ptr();
    g.tb = ob.cm.trans;
    g.ldb = ob.cm.ld;
    g.stride_b = ob.batch_stride;
  }

  bool done = false;
  if (has_c && beta == 1.0 && !batched && tc.trans && is_bias_vector(*self, n) && self->dtype() == g.dtype) {
    // In target^T's column-major terms the bias runs along m (= n here).
    LtGemm with_bias = g;
    with_bias.bias = self->data_ptr();
    with_bias.beta = 0.0;
    Status s = lt_gemm(device, scope.stream(), with_bias);
    if (s.ok())
      done = true;
    else if (s.code() != StatusCode::kUnimplemented)
      return s;
  }
  if (!done) {
    if (has_c) {
      AOTIRT_RETURN_IF_ERROR(copy_tensor(target, *self, false));
      g.beta = beta;
    }
    AOTIRT_RETURN_IF_ERROR(lt_gemm(device, scope.stream(), g));
  }
  if (target.data_ptr() != out->data_ptr()) AOTIRT_RETURN_IF_ERROR(copy_tensor(*out, target, false));
  return Status();
}

// out = beta * self + alpha * (a @ b), self optional; [B,] M x K @ K x N.
Status run_matmul(ops::MatmulKind kind, AtenTensorHandle out_h, AtenTensorHandle self_h, AtenTensorHandle mat1_h,
                  AtenTensorHandle mat2_h, double beta, double alpha) {
  AOTIRT_ASSIGN_OR_RETURN(ops::MatmulArgs args, ops::matmul_args(kind, out_h, self_h, mat1_h, mat2_h, beta, alpha));
  const TensorImpl* out = args.out;
  const TensorImpl* self = args.self;
  const TensorImpl* a = args.a;
  const TensorImpl* b = args.b;
  const char* a_name = args.a_name;
  const char* b_name = args.b_name;
  const bool batched = args.batched;
  beta = args.beta;
  alpha = args.alpha;

  AOTIRT_ASSIGN_OR_RETURN(std::unique_ptr<CudaOpScope> scope, CudaOpScope::enter(*a, a_name));
  const int device = scope->device();
  AOTIRT_RETURN_IF_ERROR(scope->check_same_device(*b, b_name));
  AOTIRT_RETURN_IF_ERROR(scope->check_same_device(*out, "out"));
  if (self) AOTIRT_RETURN_IF_ERROR(scope->check_same_device(*self, "self"));
  AOTIRT_RETURN_IF_ERROR(cublaslt_check_dtype(a->dtype()));
  const int64_t batch = args.batch, m = args.m, k = args.k, n = args.n;
  const DimVector& out_sizes = out->sizes();
  const bool has_c = self && beta != 0.0;
  if (m == 0 || n == 0 || batch == 0) return Status();
  // With k = 0 the factors are empty and may have no memory at all.
  if (k == 0) {
    // The product is empty: out = beta * self, or zeros.
    AOTIRT_ASSIGN_OR_RETURN(Device * dev, get_device(out->device()));
    if (!has_c) return dev->zero(*out);
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl tmp, cuda_empty_contiguous(out_sizes, out->dtype(), device));
    AOTIRT_RETURN_IF_ERROR(copy_tensor(tmp, *self, false));
    if (beta != 1.0)
      AOTIRT_CUDA_RETURN_IF_ERROR(
          cuda_launch_scale(tmp.data_ptr(), static_cast<int>(tmp.dtype()), tmp.numel(), beta, scope->stream()));
    return copy_tensor(*out, tmp, false);
  }
  AOTIRT_ENSURE(out->data_ptr() && a->data_ptr() && b->data_ptr(), kInvalidArgument, "a tensor has no data");

  // First try in place (out and operands as they are); if cuBLASLt has no
  // algorithm for their strides or alignment, retry on dense, freshly
  // allocated (256-byte aligned) copies.
  Status s = matmul_attempt(*scope, out, self, has_c, *a, *b, beta, alpha, batched, false);
  if (s.code() == StatusCode::kUnimplemented && s.message().find("no algorithm") != std::string::npos)
    s = matmul_attempt(*scope, out, self, has_c, *a, *b, beta, alpha, batched, true);
  return s;
}

}  // namespace

Status cuda_gemm(int device, cudaStream_t stream, const CudaGemm& g) { return lt_gemm(device, stream, g); }

Status cuda_addmm_tensors(const TensorImpl& out, const TensorImpl* self, const TensorImpl& a, const TensorImpl& b,
                          double beta, double alpha) {
  // A handle is the TensorImpl's address; these are only read.
  auto h = [](const TensorImpl* t) { return handle_of(const_cast<TensorImpl*>(t)); };
  if (!self) return run_matmul(ops::MatmulKind::kMm, h(&out), h(&a), nullptr, h(&b), 0.0, 1.0);
  return run_matmul(ops::MatmulKind::kAddmm, h(&out), h(self), h(&a), h(&b), beta, alpha);
}

Result<bool> cuda_gemm_own(int device, cudaStream_t stream, const CudaGemm& g, bool dry_run) {
  return own_gemm(device, stream, g, dry_run);
}

bool cuda_matmul_prewarm_useful(const std::vector<std::string>& imported) {
  // Generated code names every dtype it allocates or views by its getter.
  // Any library may make float32 GEMMs; one that names bfloat16 may make
  // bfloat16 ones, and float16 and float64 GEMMs are cuBLASLt's alone.
  if (cuda_f32x3_config_count() == 0 || !f32x3_enabled() || cuda_matmul_allow_tf32()) return true;
  // A bfloat16 library whose GEMMs all have few rows (a decode step) runs
  // them on the few-row kernel; one with larger GEMMs opens cuBLASLt at its
  // first, unless AOTIRT_CUDA_GEMM=aotirt.
  const bool bf16_own = !bf16_on_cublaslt();
  for (const std::string& s : imported) {
    if (s == "aoti_torch_dtype_float16" || s == "aoti_torch_dtype_float64") return true;
    if (s == "aoti_torch_dtype_bfloat16" && !bf16_own) return true;
  }
  return false;
}

Status cuda_matmul_prewarm(int device) { return cublaslt_prewarm(device); }

}  // namespace aotirt

using namespace aotirt;

extern "C" {

AOTITorchError aoti_torch_cuda_mm_out(AtenTensorHandle out, AtenTensorHandle self, AtenTensorHandle mat2) noexcept {
  return shim_call(__func__, [&]() -> Status { return run_matmul(ops::MatmulKind::kMm, out, self, nullptr, mat2, 0.0, 1.0); });
}

AOTITorchError aoti_torch_cuda_addmm_out(AtenTensorHandle out, AtenTensorHandle self, AtenTensorHandle mat1,
                                         AtenTensorHandle mat2, double beta, double alpha) noexcept {
  return shim_call(__func__, [&]() -> Status { return run_matmul(ops::MatmulKind::kAddmm, out, self, mat1, mat2, beta, alpha); });
}

AOTITorchError aoti_torch_cuda_bmm_out(AtenTensorHandle out, AtenTensorHandle self, AtenTensorHandle mat2) noexcept {
  return shim_call(__func__, [&]() -> Status { return run_matmul(ops::MatmulKind::kBmm, out, self, nullptr, mat2, 0.0, 1.0); });
}

AOTITorchError aoti_torch_cuda_baddbmm_out(AtenTensorHandle out, AtenTensorHandle self, AtenTensorHandle batch1,
                                           AtenTensorHandle batch2, double beta, double alpha) noexcept {
  return shim_call(__func__, [&]() -> Status { return run_matmul(ops::MatmulKind::kBaddbmm, out, self, batch1, batch2, beta, alpha); });
}

}  // extern "C"
