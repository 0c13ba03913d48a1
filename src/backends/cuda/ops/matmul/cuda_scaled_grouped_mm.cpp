// CUDA _scaled_grouped_mm (c_shim_cuda.h): torch's grouped float8 GEMM with
// row-wise float32 scales and a bfloat16 output, the MoE layers' product.
// The op layer (ops/scaled_mm_args) checks the operands and gives the
// layout kind and torch's output strides. Each group is one product of
// views, run the way _scaled_mm runs its row-wise case: cuBLASLt multiplies
// the float8 views with unit scales into a float32 buffer, and the scaled
// epilogue applies the group's row and column scales before the single
// rounding to bfloat16. The group boundaries (offs) live on the device and
// decide the views, so they are read to the host once.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <memory>
#include <utility>
#include <vector>

#include "backends/cuda/ops/cuda_op_util.h"
#include "backends/cuda/ops/matmul/cuda_matmul_extra_kernels.h"
#include "backends/cuda/ops/matmul/cuda_matmul_impl.h"
#include "backends/cuda/runtime/cuda_copy.h"
#include "backends/cuda/runtime/cuda_status.h"
#include "base/status.h"
#include "ops/op_args.h"
#include "ops/scaled_mm_args.h"
#include "shim/abi/cuda_matmul.h"
#include "shim/common/shim_util.h"

namespace aotirt {
namespace {

using ops::GroupedMmKind;

bool stream_capturing(cudaStream_t stream) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(stream, &status) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return status != cudaStreamCaptureStatusNone;
}

// Each group's [begin, end) along the grouped dimension, from offs: the
// host needs the values to place the views, so they are copied to the host,
// and cuda_copy waits on the stream for that copy (it cannot be queued: the
// views of every later launch depend on it). Checked against the operand's
// extent, which torch leaves unchecked.
Result<std::vector<std::pair<int64_t, int64_t>>> group_ranges(const ops::ScaledGroupedMmArgs& a, int device,
                                                              cudaStream_t stream) {
  std::vector<std::pair<int64_t, int64_t>> ranges;
  ranges.reserve(static_cast<size_t>(a.groups));
  if (!a.offs || a.groups == 0) return ranges;
  AOTIRT_ENSURE(!stream_capturing(stream), kUnimplemented,
                "offs must be read on the host, which a CUDA graph capture does not allow");
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl host, empty_contiguous(DimVector{a.groups}, DType::kInt32, DeviceId{}));
  AOTIRT_RETURN_IF_ERROR(cuda_copy(device, stream, host, *a.offs, false));
  const int32_t* ends = static_cast<const int32_t*>(host.data_ptr());
  int64_t begin = 0;
  for (int64_t g = 0; g < a.groups; ++g) {
    const int64_t end = ends[g];
    AOTIRT_ENSURE(end >= begin && end <= a.offs_limit, kInvalidArgument,
                  "offs[{}] = {} must lie in [{}, {}] (offsets end each group and do not decrease)", g, end, begin,
                  a.offs_limit);
    ranges.emplace_back(begin, end);
    begin = end;
  }
  return ranges;
}

// One group's product out[m, n] (row stride |out_row|, bfloat16) =
// (A[m, k] @ B[k, n]) * sa[i] * sb[j]: A row-major (row stride |lda|), B
// column-major (column stride |ldb|), float8_e4m3fn.
struct GroupProduct {
  const uint8_t* a = nullptr;
  int64_t lda = 0;
  const uint8_t* b = nullptr;
  int64_t ldb = 0;
  int64_t m = 0, n = 0, k = 0;
  void* out = nullptr;
  int64_t out_row = 0;
  const float* sa = nullptr;
  int64_t sa_stride = 0;
  const float* sb = nullptr;
  int64_t sb_stride = 0;
};

Status run_group(int device, cudaStream_t stream, const GroupProduct& p, float* acc, bool fast_accum) {
  if (p.m == 0 || p.n == 0) return Status();
  if (p.k == 0) {
    AOTIRT_CUDA_RETURN_IF_ERROR(
        cudaMemsetAsync(acc, 0, static_cast<size_t>(p.m * p.n) * sizeof(float), stream));
  } else {
    // out[m, n] row-major is D[n, m] column-major = B^T @ A^T, with B
    // (k contiguous) read transposed and A (k contiguous) as is: cuBLASLt's
    // "TN" float8 form, as _scaled_mm takes it.
    LtTypedGemm g;
    g.a_type = CUDA_R_8F_E4M3;
    g.b_type = CUDA_R_8F_E4M3;
    g.d_type = CUDA_R_32F;
    g.compute = CUBLAS_COMPUTE_32F;
    g.scale_type = CUDA_R_32F;
    g.m = p.n;
    g.n = p.m;
    g.k = p.k;
    g.a = p.b;
    g.ta = true;
    g.lda = p.ldb;
    g.b = p.a;
    g.tb = false;
    g.ldb = p.lda;
    g.d = acc;
    g.ldd = p.n;
    g.fast_accum = fast_accum;
    AOTIRT_RETURN_IF_ERROR(cublaslt_typed_gemm(device, stream, g));
  }
  AOTIRT_CUDA_RETURN_IF_ERROR(cuda_launch_scaled_epilogue(acc, p.out, static_cast<int>(DType::kBFloat16), p.out_row,
                                                          1, p.m, p.n, p.sa, p.sa_stride, p.sb, p.sb_stride, nullptr,
                                                          0, 0, nullptr, stream));
  return Status();
}

Result<TensorImpl> grouped_mm(const ops::ScaledGroupedMmArgs& a, bool fast_accum) {
  AOTIRT_ASSIGN_OR_RETURN(std::unique_ptr<CudaOpScope> scope, CudaOpScope::enter(*a.self, "self"));
  AOTIRT_RETURN_IF_ERROR(scope->check_same_device(*a.mat2, "mat2"));
  AOTIRT_RETURN_IF_ERROR(scope->check_same_device(*a.scale_a, "scale_a"));
  AOTIRT_RETURN_IF_ERROR(scope->check_same_device(*a.scale_b, "scale_b"));
  if (a.offs) AOTIRT_RETURN_IF_ERROR(scope->check_same_device(*a.offs, "offs"));
  const int device = scope->device();
  cudaStream_t stream = scope->stream();
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl out, cuda_empty(a.out_sizes, a.out_strides, a.out_dtype, device));
  if (out.numel() == 0) return out;
  AOTIRT_ASSIGN_OR_RETURN(auto ranges, group_ranges(a, device, stream));

  const TensorImpl &x = *a.self, &w = *a.mat2, &sa = *a.scale_a, &sb = *a.scale_b;
  const auto* xp = static_cast<const uint8_t*>(x.data_ptr());  // float8: one byte per element
  const auto* wp = static_cast<const uint8_t*>(w.data_ptr());
  const auto* sap = static_cast<const float*>(sa.data_ptr());
  const auto* sbp = static_cast<const float*>(sb.data_ptr());
  auto* op = static_cast<uint16_t*>(out.data_ptr());  // bfloat16: two bytes per element
  const DimVector &xs = x.strides(), &ws = w.strides(), &os = out.strides();

  std::vector<GroupProduct> products(static_cast<size_t>(a.groups));
  for (int64_t g = 0; g < a.groups; ++g) {
    GroupProduct& p = products[static_cast<size_t>(g)];
    switch (a.kind) {
      case GroupedMmKind::k2d3d: {  // rows [b, e) of self and of out, mat2[g]
        const auto [b, e] = ranges[static_cast<size_t>(g)];
        p.a = xp + b * xs[0];
        p.lda = xs[0];
        p.b = wp + g * ws[0];
        p.ldb = ws[2];
        p.m = e - b;
        p.k = x.sizes()[1];
        p.n = w.sizes()[2];
        p.out = op + b * os[0];
        p.out_row = os[0];
        p.sa = sap + b;
        p.sa_stride = 1;
        p.sb = sbp + g * sb.strides()[0];
        p.sb_stride = 1;
        break;
      }
      case GroupedMmKind::k3d2d: {  // self[g], columns [b, e) of mat2 and of out
        const auto [b, e] = ranges[static_cast<size_t>(g)];
        p.a = xp + g * xs[0];
        p.lda = xs[1];
        p.b = wp + b * ws[1];
        p.ldb = ws[1];
        p.m = x.sizes()[1];
        p.k = x.sizes()[2];
        p.n = e - b;
        p.out = op + b;
        p.out_row = os[0];
        p.sa = sap + g * sa.strides()[0];
        p.sa_stride = 1;
        p.sb = sbp + b;
        p.sb_stride = 1;
        break;
      }
      case GroupedMmKind::k2d2d: {  // K range [b, e) of both, out[g]
        const auto [b, e] = ranges[static_cast<size_t>(g)];
        p.a = xp + b;
        p.lda = xs[0];
        p.b = wp + b;
        p.ldb = ws[1];
        p.m = x.sizes()[0];
        p.k = e - b;
        p.n = w.sizes()[1];
        p.out = op + g * os[0];
        p.out_row = os[1];
        p.sa = sap + g * p.m;
        p.sa_stride = 1;
        p.sb = sbp + g * p.n;
        p.sb_stride = 1;
        break;
      }
      case GroupedMmKind::k3d3d: {  // self[g], mat2[g], out[g]
        p.a = xp + g * xs[0];
        p.lda = xs[1];
        p.b = wp + g * ws[0];
        p.ldb = ws[2];
        p.m = x.sizes()[1];
        p.k = x.sizes()[2];
        p.n = w.sizes()[2];
        p.out = op + g * os[0];
        p.out_row = os[1];
        p.sa = sap + g * sa.strides()[0];
        p.sa_stride = 1;
        p.sb = sbp + g * sb.strides()[0];
        p.sb_stride = 1;
        break;
      }
    }
  }
  // One float32 buffer serves every group: the stream runs a group's
  // epilogue before the next group's GEMM overwrites it.
  int64_t acc_elems = 0;
  for (const GroupProduct& p : products) acc_elems = std::max(acc_elems, p.m * p.n);
  if (acc_elems == 0) return out;
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl acc, cuda_empty_contiguous(DimVector{acc_elems}, DType::kFloat32, device));
  for (const GroupProduct& p : products)
    AOTIRT_RETURN_IF_ERROR(run_group(device, stream, p, static_cast<float*>(acc.data_ptr()), fast_accum));
  return out;
}

}  // namespace
}  // namespace aotirt

using namespace aotirt;

extern "C" {

AOTITorchError aoti_torch_cuda__scaled_grouped_mm(AtenTensorHandle self, AtenTensorHandle mat2,
                                                  AtenTensorHandle scale_a, AtenTensorHandle scale_b,
                                                  AtenTensorHandle* offs, AtenTensorHandle* bias,
                                                  AtenTensorHandle* scale_result, int32_t* out_dtype,
                                                  int32_t use_fast_accum, AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_REQUIRE_OUT(ret0);
    AOTIRT_ASSIGN_OR_RETURN(ops::ScaledGroupedMmArgs a, ops::scaled_grouped_mm_args(self, mat2, scale_a, scale_b, offs,
                                                                                    bias, scale_result, out_dtype));
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl out, grouped_mm(a, use_fast_accum != 0));
    *ret0 = new_handle(std::move(out));
    return Status();
  });
}

}  // extern "C"
