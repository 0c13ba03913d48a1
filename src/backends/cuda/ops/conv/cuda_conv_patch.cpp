// Patch embeddings (a convolution whose kernel tiles its input) in float32
// as a copy of the patches and one GEMM on aotirt's own kernels.
#include "backends/cuda/ops/conv/cuda_conv_impl.h"
#include "backends/cuda/runtime/cuda_options.h"
#include "backends/cuda/runtime/cuda_status.h"
#include "base/status.h"
#include "shim/common/shim_profile.h"

namespace aotirt {
namespace {

// AOTIRT_CUDA_DISABLE=patch_conv, or AOTIRT_CUDA_CONV=cudnn, keeps patch
// embeddings on cuDNN too.
bool patch_conv_enabled() {
  return cuda_options().enabled(CudaFeature::kPatchConv) && cuda_options().conv != CudaLibraryChoice::kVendor;
}

}  // namespace

// A convolution whose kernel tiles its input (stride equal to the kernel, no
// padding or dilation, one group: a vision transformer's patch embedding)
// is one GEMM per image over its patches: out[b] [c_out, patches] =
// W [c_out, c * kh * kw] @ patches[b]^T. In float32 it runs on aotirt's own
// GEMM kernels when they take it, which keeps such a model off cuDNN and the
// host memory cuDNN's libraries hold once loaded (ViT-B/16's 16x16 patches:
// a copy and a 3xTF32 GEMM, where cuDNN ran a float32 SIMT kernel). Answers
// false, with nothing queued, otherwise.
Result<bool> patch_convolution(const CudaOpScope& scope, const TensorImpl& input, const TensorImpl& weight,
                               const DimVector& stride, const DimVector& padding, const DimVector& dilation,
                               int64_t groups, bool transposed, bool channels_last, const TensorImpl& out) {
  if (!patch_conv_enabled() || transposed || groups != 1 || channels_last || input.dim() != 4 ||
      input.dtype() != DType::kFloat32)
    return false;
  for (int64_t i = 0; i < 2; ++i)
    if (padding[i] != 0 || dilation[i] != 1 || stride[i] != weight.sizes()[2 + i]) return false;
  // A CNN's 1x1 convolutions stay on cuDNN: its TF32 kernels (PyTorch's
  // default for convolutions) do a third of the tensor-core work of 3xTF32,
  // and such a model loads cuDNN for its other convolutions anyway.
  if (weight.sizes()[2] * weight.sizes()[3] == 1) return false;
  const int device = scope.device();
  const int64_t n = input.sizes()[0], c = input.sizes()[1], kh = weight.sizes()[2], kw = weight.sizes()[3];
  const int64_t c_out = out.sizes()[1], oh = out.sizes()[2], ow = out.sizes()[3];
  const int64_t patches = oh * ow, k = c * kh * kw;
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl w, conv_dense_as(weight, false, device));
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl rows, cuda_empty_contiguous(DimVector{n * patches, k}, DType::kFloat32, device));
  // In the column-major terms of CudaGemm: out[b]^T [patches, c_out] =
  // patches[b] [patches, k] @ W^T [k, c_out].
  CudaGemm g;
  g.dtype = DType::kFloat32;
  g.batch = n;
  g.m = patches;
  g.n = c_out;
  g.k = k;
  g.a = rows.data_ptr();
  g.ta = true;
  g.lda = k;
  g.stride_a = n > 1 ? patches * k : 0;
  g.b = w.data_ptr();
  g.ldb = k;
  g.d = out.data_ptr();
  g.ldd = patches;
  g.stride_d = n > 1 ? c_out * patches : 0;
  AOTIRT_ASSIGN_OR_RETURN(bool takes, cuda_gemm_own(device, scope.stream(), g, /*dry_run=*/true));
  if (!takes) return false;
  {
    ShimProfileScope profile("aoti_torch_cuda_convolution / patches kernel launch");
    const int64_t xs[4] = {input.strides()[0], input.strides()[1], input.strides()[2], input.strides()[3]};
    AOTIRT_CUDA_RETURN_IF_ERROR(
        cuda_launch_patches(input.data_ptr(), xs, n, c, oh, ow, kh, kw, rows.data_ptr(), scope.stream()));
  }
  AOTIRT_ASSIGN_OR_RETURN(bool ran, cuda_gemm_own(device, scope.stream(), g, /*dry_run=*/false));
  AOTIRT_ENSURE(ran, kInternal, "the patch convolution's GEMM was refused after it was accepted");
  return true;
}

}  // namespace aotirt
