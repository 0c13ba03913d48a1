// CUDA addmv, addbmm, _addmm_activation, mm.dtype_out, _cdist_forward,
// _pdist_forward and _trilinear (c_shim_cuda.h). The op layer
// (ops/linalg_args) checks the arguments and gives the output shapes; each
// product is one GEMM through the addmm path of cuda_matmul.cpp (cuBLASLt
// or aotirt's own kernels), with the operands viewed or staged so that it
// is one: addmv's vector as a [k, 1] matrix, addbmm's batches laid side by
// side along k. The distances, the activation and _trilinear's sum over
// three strided inputs run on the kernels of cuda_matmul_extra.cu.
#include <memory>
#include <utility>
#include <vector>

#include "backends/cuda/ops/cuda_op_util.h"
#include "backends/cuda/ops/matmul/cuda_matmul_extra_kernels.h"
#include "backends/cuda/ops/matmul/cuda_matmul_impl.h"
#include "backends/cuda/runtime/cuda_copy.h"
#include "backends/cuda/runtime/cuda_status.h"
#include "base/status.h"
#include "ops/indexing_args.h"
#include "ops/linalg_args.h"
#include "ops/op_args.h"
#include "shim/abi/cuda_matmul.h"
#include "shim/common/shim_util.h"

namespace aotirt {
namespace {

TensorImpl view(const TensorImpl& t, DimVector sizes, DimVector strides) {
  return TensorImpl(t.storage(), t.dtype(), std::move(sizes), std::move(strides), t.storage_offset());
}

// Where the op runs, every operand checked to be on that device.
Result<std::unique_ptr<CudaOpScope>> enter(std::initializer_list<std::pair<const TensorImpl*, const char*>> ts) {
  auto first = ts.begin();
  AOTIRT_ASSIGN_OR_RETURN(std::unique_ptr<CudaOpScope> scope, CudaOpScope::enter(*first->first, first->second));
  for (const auto& t : ts)
    if (t.first) AOTIRT_RETURN_IF_ERROR(scope->check_same_device(*t.first, t.second));
  return scope;
}

// addmv: out [m] = beta * self + alpha * mat @ vec, as the [m, 1] GEMM
// mat @ vec[:, None].
Result<TensorImpl> run_addmv(const ops::AddProductArgs& a) {
  AOTIRT_ASSIGN_OR_RETURN(std::unique_ptr<CudaOpScope> scope, enter({{a.a, "mat"}, {a.b, "vec"}, {a.self, "self"}}));
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl out, cuda_empty_contiguous(a.out_sizes, a.self->dtype(), scope->device()));
  if (a.m == 0) return out;
  const TensorImpl out2 = view(out, DimVector{a.m, 1}, DimVector{1, 1});
  const TensorImpl& v = *a.b;
  const TensorImpl vec2 = view(v, DimVector{a.k, 1}, DimVector{v.strides()[0], 1});
  // self ([m], [1] or 0-d) as a [m, 1] or [1, 1] matrix broadcasting to out.
  const TensorImpl& s = *a.self;
  const TensorImpl self2 = s.dim() == 1 ? view(s, DimVector{s.sizes()[0], 1}, DimVector{s.strides()[0], 1})
                                        : view(s, DimVector{1, 1}, DimVector{1, 1});
  AOTIRT_RETURN_IF_ERROR(cuda_addmm_tensors(out2, &self2, *a.a, vec2, a.beta, a.alpha));
  return out;
}

// addbmm: out [m, n] = beta * self + alpha * sum over b of b1[b] @ b2[b],
// one GEMM of [m, B * k] @ [B * k, n] (torch sums the batches with one
// addmm each; one GEMM rounds the half types once instead of B times).
Result<TensorImpl> run_addbmm(const ops::AddProductArgs& a) {
  AOTIRT_ASSIGN_OR_RETURN(std::unique_ptr<CudaOpScope> scope,
                          enter({{a.a, "batch1"}, {a.b, "batch2"}, {a.self, "self"}}));
  const int device = scope->device();
  cudaStream_t stream = scope->stream();
  const DType dtype = a.self->dtype();
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl out, cuda_empty_contiguous(a.out_sizes, dtype, device));
  if (out.numel() == 0) return out;
  const int64_t bk = a.batch * a.k;
  // batch1 [B, m, k] read as [m, B, k], made dense: row i is then
  // b1[0, i, :], b1[1, i, :], ... , matching batch2's rows b2[0], b2[1], ...
  const TensorImpl& b1 = *a.a;
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl a_cat, cuda_empty_contiguous(DimVector{a.m, a.batch, a.k}, dtype, device));
  if (bk > 0)
    AOTIRT_RETURN_IF_ERROR(cuda_copy(device, stream, a_cat,
                                     view(b1, DimVector{a.m, a.batch, a.k},
                                          DimVector{b1.strides()[1], b1.strides()[0], b1.strides()[2]}),
                                     false));
  TensorImpl b_cat = *a.b;
  if (!b_cat.is_contiguous()) {
    AOTIRT_ASSIGN_OR_RETURN(b_cat, cuda_empty_contiguous(a.b->sizes(), dtype, device));
    if (bk > 0) AOTIRT_RETURN_IF_ERROR(cuda_copy(device, stream, b_cat, *a.b, false));
  }
  const TensorImpl a2 = view(a_cat, DimVector{a.m, bk}, DimVector{bk, 1});
  const TensorImpl b2 = view(b_cat, DimVector{bk, a.n}, DimVector{a.n, 1});
  AOTIRT_RETURN_IF_ERROR(cuda_addmm_tensors(out, a.self, a2, b2, a.beta, a.alpha));
  return out;
}

Result<TensorImpl> run_addmm_activation(const ops::AddProductArgs& a, bool gelu) {
  AOTIRT_ASSIGN_OR_RETURN(std::unique_ptr<CudaOpScope> scope,
                          enter({{a.a, "mat1"}, {a.b, "mat2"}, {a.self, "self"}}));
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl out, cuda_empty_contiguous(a.out_sizes, a.self->dtype(), scope->device()));
  if (out.numel() == 0) return out;
  AOTIRT_RETURN_IF_ERROR(cuda_addmm_tensors(out, a.self, *a.a, *a.b, a.beta, a.alpha));
  // torch's CUDA addmm returns beta * self (or zeros) when k is 0 before
  // it reaches the activation, so no activation applies then.
  if (a.k == 0) return out;
  AOTIRT_CUDA_RETURN_IF_ERROR(
      cuda_launch_activation(out.data_ptr(), static_cast<int>(out.dtype()), out.numel(), gelu, scope->stream()));
  return out;
}

// mm.dtype_out: a float16 or bfloat16 product into a float32 out, or a
// product in the inputs' own dtype. The half inputs are widened to float32
// (exactly) and multiplied there, which is the float32 accumulation torch's
// cuBLAS call does.
Status run_mm_dtype_out(AtenTensorHandle out_h, AtenTensorHandle self_h, AtenTensorHandle mat2_h, int32_t out_dtype) {
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl * out, checked_impl(out_h, "out"));
  AOTIRT_ASSIGN_OR_RETURN(const TensorImpl* a, ops::require_tensor(self_h, "self"));
  AOTIRT_ASSIGN_OR_RETURN(const TensorImpl* b, ops::require_tensor(mat2_h, "mat2"));
  AOTIRT_RETURN_IF_ERROR(ops::check_dim(*a, 2, "self"));
  AOTIRT_RETURN_IF_ERROR(ops::check_dim(*b, 2, "mat2"));
  AOTIRT_ENSURE(a->sizes()[1] == b->sizes()[0], kInvalidArgument, "mat1 and mat2 shapes cannot be multiplied ({} and {})",
                ops::shape_str(*a), ops::shape_str(*b));
  AOTIRT_RETURN_IF_ERROR(ops::check_same_dtype(*a, "self", *b, "mat2"));
  AOTIRT_ENSURE(dtype_is_valid(out_dtype), kInvalidArgument, "invalid out_dtype code {}", out_dtype);
  const DType od = static_cast<DType>(out_dtype), in = a->dtype();
  const bool widen = od != in;
  AOTIRT_ENSURE(!widen || (od == DType::kFloat32 && (in == DType::kFloat16 || in == DType::kBFloat16)),
                kInvalidArgument, "out_dtype must be the same as input dtype or fp32 for fp16/bf16 inputs (got {} for {})",
                dtype_name(od), dtype_name(in));
  AOTIRT_ENSURE(out->dtype() == od, kInvalidArgument,
                "out_dtype must be the same as the dtype of the provided out tensor ({} vs {})", dtype_name(od),
                dtype_name(out->dtype()));
  AOTIRT_ASSIGN_OR_RETURN(std::unique_ptr<CudaOpScope> scope, enter({{a, "self"}, {b, "mat2"}, {out, "out"}}));
  AOTIRT_RETURN_IF_ERROR(ops::resize_output(out, DimVector{a->sizes()[0], b->sizes()[1]}, "out"));
  if (!widen) return cuda_addmm_tensors(*out, nullptr, *a, *b, 0.0, 1.0);
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl a32, cuda_empty_contiguous(a->sizes(), DType::kFloat32, scope->device()));
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl b32, cuda_empty_contiguous(b->sizes(), DType::kFloat32, scope->device()));
  if (a32.numel() > 0) AOTIRT_RETURN_IF_ERROR(cuda_copy(scope->device(), scope->stream(), a32, *a, false));
  if (b32.numel() > 0) AOTIRT_RETURN_IF_ERROR(cuda_copy(scope->device(), scope->stream(), b32, *b, false));
  return cuda_addmm_tensors(*out, nullptr, a32, b32, 0.0, 1.0);
}

// ---- distances ----

Result<TensorImpl> run_cdist(const ops::DistArgs& a) {
  AOTIRT_ASSIGN_OR_RETURN(std::unique_ptr<CudaOpScope> scope, enter({{a.x1, "x1"}, {a.x2, "x2"}}));
  const int device = scope->device();
  cudaStream_t stream = scope->stream();
  const DType dtype = a.x1->dtype();
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl out, cuda_empty_contiguous(a.out_sizes, dtype, device));
  if (out.numel() == 0) return out;
  if (a.cols == 0) {
    // No coordinates: every distance is 0.
    AOTIRT_RETURN_IF_ERROR(cuda_zero(device, stream, out));
    return out;
  }
  // Both sides expanded to the common batch dims, dense.
  const int64_t nb = a.batch_sizes.size();
  DimVector s1 = a.batch_sizes, s2 = a.batch_sizes;
  s1.resize(nb + 2);
  s2.resize(nb + 2);
  s1[nb] = a.rows1;
  s1[nb + 1] = a.cols;
  s2[nb] = a.rows2;
  s2[nb + 1] = a.cols;
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl x1, cuda_empty_contiguous(s1, dtype, device));
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl x2, cuda_empty_contiguous(s2, dtype, device));
  AOTIRT_RETURN_IF_ERROR(cuda_copy(device, stream, x1, *a.x1, false));
  AOTIRT_RETURN_IF_ERROR(cuda_copy(device, stream, x2, *a.x2, false));
  const int dt = static_cast<int>(dtype);
  if (!a.use_mm) {
    AOTIRT_CUDA_RETURN_IF_ERROR(cuda_launch_cdist(x1.data_ptr(), x2.data_ptr(), out.data_ptr(), dt, a.batch, a.rows1,
                                                  a.rows2, a.cols, a.p, stream));
    return out;
  }
  // torch's matrix-product path for p = 2: |x|^2 + |y|^2 - 2 x.y, clamped
  // at 1e-30 before the square root. out[b] = x1[b] @ x2[b]^T is, column-
  // major, out^T [rows2, rows1] = x2[b] (read transposed) @ x1[b]^T.
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl n1, cuda_empty_contiguous(DimVector{a.batch * a.rows1}, dtype, device));
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl n2, cuda_empty_contiguous(DimVector{a.batch * a.rows2}, dtype, device));
  AOTIRT_CUDA_RETURN_IF_ERROR(
      cuda_launch_row_sq_norms(x1.data_ptr(), n1.data_ptr(), dt, a.batch * a.rows1, a.cols, stream));
  AOTIRT_CUDA_RETURN_IF_ERROR(
      cuda_launch_row_sq_norms(x2.data_ptr(), n2.data_ptr(), dt, a.batch * a.rows2, a.cols, stream));
  CudaGemm g;
  g.dtype = dtype;
  g.batch = a.batch;
  g.m = a.rows2;
  g.n = a.rows1;
  g.k = a.cols;
  g.a = x2.data_ptr();
  g.ta = true;
  g.lda = a.cols;
  g.stride_a = a.batch > 1 ? a.rows2 * a.cols : 0;
  g.b = x1.data_ptr();
  g.tb = false;
  g.ldb = a.cols;
  g.stride_b = a.batch > 1 ? a.rows1 * a.cols : 0;
  g.d = out.data_ptr();
  g.ldd = a.rows2;
  g.stride_d = a.batch > 1 ? a.rows1 * a.rows2 : 0;
  g.alpha = -2.0;
  g.beta = 0.0;
  AOTIRT_RETURN_IF_ERROR(cuda_gemm(device, stream, g));
  AOTIRT_CUDA_RETURN_IF_ERROR(cuda_launch_euclid_finish(out.data_ptr(), n1.data_ptr(), n2.data_ptr(), dt, a.batch,
                                                        a.rows1, a.rows2, stream));
  return out;
}

Result<TensorImpl> run_pdist(const ops::DistArgs& a) {
  AOTIRT_ASSIGN_OR_RETURN(std::unique_ptr<CudaOpScope> scope, enter({{a.x1, "self"}}));
  const DType dtype = a.x1->dtype();
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl out, cuda_empty_contiguous(a.out_sizes, dtype, scope->device()));
  if (out.numel() == 0) return out;
  AOTIRT_CUDA_RETURN_IF_ERROR(cuda_launch_pdist(a.x1->data_ptr(), out.data_ptr(), static_cast<int>(dtype), a.rows1,
                                                a.cols, a.p, scope->stream()));
  return out;
}

// ---- _trilinear ----

Result<TensorImpl> run_trilinear(const ops::TrilinearArgs& a) {
  AOTIRT_ASSIGN_OR_RETURN(std::unique_ptr<CudaOpScope> scope,
                          enter({{a.in[0], "i1"}, {a.in[1], "i2"}, {a.in[2], "i3"}}));
  const DType dtype = a.in[0]->dtype();
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl out, cuda_empty_contiguous(a.out_sizes, dtype, scope->device()));
  if (out.numel() == 0) return out;
  CudaTrilinearShape s;
  s.n_out = 1;
  s.n_sum = 1;
  const int64_t total = a.sizes.size();
  for (int64_t d = 0; d < total; ++d) {
    const bool summed = a.summed[d];
    int& count = summed ? s.sum_dims : s.keep_dims;
    AOTIRT_ENSURE(count < kCudaTrilinearMaxDims, kUnimplemented, "_trilinear over more than {} dims is not supported",
                  kCudaTrilinearMaxDims);
    (summed ? s.sum_size : s.keep_size)[count] = a.sizes[d];
    for (int t = 0; t < 3; ++t) {
      const int64_t own = a.own_dim[t][d];
      (summed ? s.sum_stride[t] : s.keep_stride[t])[count] = own >= 0 ? a.in[t]->strides()[own] : 0;
    }
    (summed ? s.n_sum : s.n_out) *= a.sizes[d];
    ++count;
  }
  AOTIRT_CUDA_RETURN_IF_ERROR(cuda_launch_trilinear(a.in[0]->data_ptr(), a.in[1]->data_ptr(), a.in[2]->data_ptr(),
                                                    out.data_ptr(), static_cast<int>(dtype), s, scope->stream()));
  return out;
}

Status give(Result<TensorImpl> r, AtenTensorHandle* ret) {
  AOTIRT_RETURN_IF_ERROR(r.status());
  *ret = new_handle(std::move(r).value());
  return Status();
}

}  // namespace
}  // namespace aotirt

using namespace aotirt;

extern "C" {

AOTITorchError aoti_torch_cuda_addmv(AtenTensorHandle self, AtenTensorHandle mat, AtenTensorHandle vec, double beta,
                                     double alpha, AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_REQUIRE_OUT(ret0);
    AOTIRT_ASSIGN_OR_RETURN(ops::AddProductArgs a, ops::addmv_args(self, mat, vec, beta, alpha));
    return give(run_addmv(a), ret0);
  });
}

AOTITorchError aoti_torch_cuda_addbmm(AtenTensorHandle self, AtenTensorHandle batch1, AtenTensorHandle batch2,
                                      double beta, double alpha, AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_REQUIRE_OUT(ret0);
    AOTIRT_ASSIGN_OR_RETURN(ops::AddProductArgs a, ops::addbmm_args(self, batch1, batch2, beta, alpha));
    return give(run_addbmm(a), ret0);
  });
}

AOTITorchError aoti_torch_cuda__addmm_activation(AtenTensorHandle self, AtenTensorHandle mat1, AtenTensorHandle mat2,
                                                 double beta, double alpha, int32_t use_gelu,
                                                 AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_REQUIRE_OUT(ret0);
    AOTIRT_ASSIGN_OR_RETURN(ops::AddProductArgs a, ops::addmm_activation_args(self, mat1, mat2, beta, alpha));
    return give(run_addmm_activation(a, use_gelu != 0), ret0);
  });
}

AOTITorchError aoti_torch_cuda_mm_dtype_out(AtenTensorHandle out, AtenTensorHandle self, AtenTensorHandle mat2,
                                            int32_t out_dtype) noexcept {
  return shim_call(__func__, [&]() -> Status { return run_mm_dtype_out(out, self, mat2, out_dtype); });
}

AOTITorchError aoti_torch_cuda__cdist_forward(AtenTensorHandle x1, AtenTensorHandle x2, double p,
                                              int64_t* compute_mode, AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_REQUIRE_OUT(ret0);
    AOTIRT_ASSIGN_OR_RETURN(ops::DistArgs a, ops::cdist_args(x1, x2, p, compute_mode));
    return give(run_cdist(a), ret0);
  });
}

AOTITorchError aoti_torch_cuda__pdist_forward(AtenTensorHandle self, double p, AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_REQUIRE_OUT(ret0);
    AOTIRT_ASSIGN_OR_RETURN(ops::DistArgs a, ops::pdist_args(self, p));
    return give(run_pdist(a), ret0);
  });
}

AOTITorchError aoti_torch_cuda__trilinear(AtenTensorHandle i1, AtenTensorHandle i2, AtenTensorHandle i3,
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
    return give(run_trilinear(a), ret0);
  });
}

}  // extern "C"
