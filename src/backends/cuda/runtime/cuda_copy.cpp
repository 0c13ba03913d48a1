#include "backends/cuda/runtime/cuda_copy.h"

#include <mutex>

#include "core/host_copy.h"
#include "backends/cuda/runtime/cuda_status.h"
#include "backends/cuda/runtime/cuda_stream.h"
#include "base/status.h"
#include "device/device.h"

namespace aotirt {
namespace {

bool same_dense_layout(const TensorImpl& dst, const TensorImpl& src) {
  return dst.dtype() == src.dtype() && dst.sizes() == src.sizes() && dst.is_contiguous() && src.is_contiguous();
}

Status check_pointers(const TensorImpl& dst, const TensorImpl& src) {
  if (!dst.data_ptr() || !src.data_ptr())
    return AOTIRT_STATUS(kInvalidArgument, "copy with a null data pointer");
  return Status();
}

// A contiguous host tensor with |src|'s sizes and dtype (|src| itself when
// already contiguous).
Result<TensorImpl> host_contiguous(const TensorImpl& src) {
  if (src.is_contiguous()) return src;
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl tmp, empty_contiguous(src.sizes(), src.dtype(), DeviceId{}));
  AOTIRT_RETURN_IF_ERROR(host_copy_strided(tmp, src));
  return tmp;
}

Status copy_device_to_device(int device, cudaStream_t stream, const TensorImpl& dst, const TensorImpl& src);

// Both tensors on the device, dtypes the kernels cannot convert: through the host.
Status convert_via_host(int device, cudaStream_t stream, const TensorImpl& dst, const TensorImpl& src) {
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl host_src, empty_contiguous(src.sizes(), src.dtype(), DeviceId{}));
  AOTIRT_RETURN_IF_ERROR(cuda_copy(device, stream, host_src, src, false));
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl host_dst, empty_contiguous(dst.sizes(), dst.dtype(), DeviceId{}));
  AOTIRT_RETURN_IF_ERROR(host_copy_strided(host_dst, host_src));
  return cuda_copy(device, stream, dst, host_dst, false);
}

Status copy_device_to_device(int device, cudaStream_t stream, const TensorImpl& dst, const TensorImpl& src) {
  AOTIRT_ASSIGN_OR_RETURN(DimVector sstr, broadcast_strides(src.sizes(), src.strides(), dst.sizes()));
  const int64_t n = dst.numel();
  if (n == 0) return Status();
  AOTIRT_RETURN_IF_ERROR(check_pointers(dst, src));
  if (same_dense_layout(dst, src)) {
    if (dst.data_ptr() == src.data_ptr()) return Status();
    AOTIRT_CUDA_RETURN_IF_ERROR(
        cudaMemcpyAsync(dst.data_ptr(), src.data_ptr(), dst.nbytes(), cudaMemcpyDeviceToDevice, stream));
    return Status();
  }
  const int dt = static_cast<int>(dst.dtype()), st = static_cast<int>(src.dtype());
  if (dt != st && (!cuda_convert_supported(dt) || !cuda_convert_supported(st)))
    return convert_via_host(device, stream, dst, src);
  AOTIRT_ASSIGN_OR_RETURN(CudaCopyLayout layout, cuda_copy_layout(dst.sizes(), dst.strides(), sstr));
  if (dt == st) {
    AOTIRT_CUDA_RETURN_IF_ERROR(cuda_launch_copy_strided(dst.data_ptr(), src.data_ptr(),
                                                         static_cast<int>(dst.element_size()), layout, n, stream));
  } else {
    AOTIRT_CUDA_RETURN_IF_ERROR(cuda_launch_convert_strided(dst.data_ptr(), dt, src.data_ptr(), st, layout, n, stream));
  }
  return Status();
}

Status copy_host_to_device(int device, cudaStream_t stream, const TensorImpl& dst, const TensorImpl& src,
                           bool non_blocking) {
  AOTIRT_RETURN_IF_ERROR(broadcast_strides(src.sizes(), src.strides(), dst.sizes()).take_status());
  if (dst.numel() == 0) return Status();
  AOTIRT_RETURN_IF_ERROR(check_pointers(dst, src));
  if (same_dense_layout(dst, src)) {
    AOTIRT_CUDA_RETURN_IF_ERROR(
        cudaMemcpyAsync(dst.data_ptr(), src.data_ptr(), dst.nbytes(), cudaMemcpyHostToDevice, stream));
    if (!non_blocking) AOTIRT_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream));
    return Status();
  }
  // Upload the source compactly as it is, then let the device spread,
  // broadcast and convert it.
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl host, host_contiguous(src));
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl staged,
                          empty_contiguous(src.sizes(), src.dtype(), DeviceId{DeviceType::kCuda, device}));
  if (src.numel() > 0)
    AOTIRT_CUDA_RETURN_IF_ERROR(
        cudaMemcpyAsync(staged.data_ptr(), host.data_ptr(), host.nbytes(), cudaMemcpyHostToDevice, stream));
  AOTIRT_RETURN_IF_ERROR(copy_device_to_device(device, stream, dst, staged));
  // The host staging buffer dies on return.
  AOTIRT_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream));
  return Status();
}

Status copy_device_to_host(int device, cudaStream_t stream, const TensorImpl& dst, const TensorImpl& src) {
  AOTIRT_RETURN_IF_ERROR(broadcast_strides(src.sizes(), src.strides(), dst.sizes()).take_status());
  if (dst.numel() == 0) return Status();
  AOTIRT_RETURN_IF_ERROR(check_pointers(dst, src));
  if (same_dense_layout(dst, src)) {
    AOTIRT_CUDA_RETURN_IF_ERROR(
        cudaMemcpyAsync(dst.data_ptr(), src.data_ptr(), dst.nbytes(), cudaMemcpyDeviceToHost, stream));
    AOTIRT_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream));
    return Status();
  }
  // Gather, broadcast and convert on the device into dst's shape and dtype,
  // then download densely.
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl gathered,
                          empty_contiguous(dst.sizes(), dst.dtype(), DeviceId{DeviceType::kCuda, device}));
  AOTIRT_RETURN_IF_ERROR(copy_device_to_device(device, stream, gathered, src));
  if (dst.is_contiguous()) {
    AOTIRT_CUDA_RETURN_IF_ERROR(
        cudaMemcpyAsync(dst.data_ptr(), gathered.data_ptr(), dst.nbytes(), cudaMemcpyDeviceToHost, stream));
    AOTIRT_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream));
    return Status();
  }
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl host, empty_contiguous(dst.sizes(), dst.dtype(), DeviceId{}));
  AOTIRT_CUDA_RETURN_IF_ERROR(
      cudaMemcpyAsync(host.data_ptr(), gathered.data_ptr(), host.nbytes(), cudaMemcpyDeviceToHost, stream));
  AOTIRT_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream));
  return host_copy_strided(dst, host);
}

// 16 zero bytes per device, the source of strided zero fills.
Result<const void*> device_zeros(int device) {
  static std::mutex mutex;
  static const void* zeros[kCudaMaxDevices] = {};
  std::lock_guard<std::mutex> lock(mutex);
  if (!zeros[device]) {
    void* p = nullptr;
    AOTIRT_CUDA_RETURN_IF_ERROR(cudaMalloc(&p, 16));
    AOTIRT_CUDA_RETURN_IF_ERROR(cudaMemset(p, 0, 16));
    zeros[device] = p;  // kept for the process lifetime
  }
  return zeros[device];
}

}  // namespace

Result<CudaCopyLayout> cuda_copy_layout(const DimVector& sizes, const DimVector& dst_strides,
                                        const DimVector& src_strides) {
  // Innermost first while merging, then reversed into the layout.
  std::vector<int64_t> sz, ds, ss;
  for (int64_t d = sizes.size() - 1; d >= 0; --d) {
    if (sizes[d] == 1) continue;
    if (!sz.empty() && ds.back() * sz.back() == dst_strides[d] && ss.back() * sz.back() == src_strides[d]) {
      sz.back() *= sizes[d];
      continue;
    }
    sz.push_back(sizes[d]);
    ds.push_back(dst_strides[d]);
    ss.push_back(src_strides[d]);
  }
  if (sz.empty()) {
    sz.push_back(1);
    ds.push_back(1);
    ss.push_back(1);
  }
  if (static_cast<int>(sz.size()) > kCudaCopyMaxDims)
    return AOTIRT_STATUS(kUnimplemented, "a CUDA copy over {} non-mergeable dims exceeds the limit of {}", sz.size(),
                         kCudaCopyMaxDims);
  CudaCopyLayout l;
  l.ndim = static_cast<int>(sz.size());
  for (int i = 0; i < l.ndim; ++i) {
    int r = l.ndim - 1 - i;
    l.sizes[r] = sz[i];
    l.dst_strides[r] = ds[i];
    l.src_strides[r] = ss[i];
  }
  return l;
}

Status cuda_copy(int device, cudaStream_t stream, const TensorImpl& dst, const TensorImpl& src, bool non_blocking) {
  CudaDeviceScope scope(device);
  AOTIRT_RETURN_IF_ERROR(scope.status());
  const bool dst_dev = !dst.device().is_cpu(), src_dev = !src.device().is_cpu();
  if (dst_dev && src_dev) return copy_device_to_device(device, stream, dst, src);
  if (dst_dev) return copy_host_to_device(device, stream, dst, src, non_blocking);
  if (src_dev) return copy_device_to_host(device, stream, dst, src);
  return host_copy_strided(dst, src);
}

Status cuda_zero(int device, cudaStream_t stream, const TensorImpl& dst) {
  if (dst.numel() == 0) return Status();
  if (!dst.data_ptr()) return AOTIRT_STATUS(kInvalidArgument, "zero_ on a tensor with no data");
  CudaDeviceScope scope(device);
  AOTIRT_RETURN_IF_ERROR(scope.status());
  if (dst.is_contiguous()) {
    AOTIRT_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(dst.data_ptr(), 0, dst.nbytes(), stream));
    return Status();
  }
  AOTIRT_ASSIGN_OR_RETURN(const void* zeros, device_zeros(device));
  DimVector zero_strides;
  zero_strides.resize(dst.dim());
  for (int64_t d = 0; d < dst.dim(); ++d) zero_strides[d] = 0;
  AOTIRT_ASSIGN_OR_RETURN(CudaCopyLayout layout, cuda_copy_layout(dst.sizes(), dst.strides(), zero_strides));
  AOTIRT_CUDA_RETURN_IF_ERROR(cuda_launch_copy_strided(dst.data_ptr(), zeros, static_cast<int>(dst.element_size()),
                                                       layout, dst.numel(), stream));
  return Status();
}

}  // namespace aotirt
