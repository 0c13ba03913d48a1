#include "backends/cuda/ops/cuda_op_util.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <mutex>
#include <numeric>
#include <vector>

#include "backends/cpu/ops/cpu_op_util.h"
#include "backends/cuda/cuda_device.h"
#include "backends/cuda/cuda_status.h"
#include "base/status.h"
#include "device/device.h"

namespace aotirt {

Result<std::unique_ptr<CudaOpScope>> CudaOpScope::enter(const TensorImpl& first, const char* what) {
  AOTIRT_ENSURE(first.defined(), kInvalidArgument, "'{}' has no storage", what);
  AOTIRT_ENSURE(first.device().type == DeviceType::kCuda, kInvalidArgument, "'{}' is on {}, expected a CUDA tensor",
                what, first.device().to_string());
  int device = first.device().index;
  AOTIRT_ASSIGN_OR_RETURN(cudaStream_t stream, cuda_current_stream(device));
  std::unique_ptr<CudaOpScope> s(new CudaOpScope(device, stream));
  AOTIRT_RETURN_IF_ERROR(s->scope_.status());
  return s;
}

Status CudaOpScope::check_same_device(const TensorImpl& t, const char* what) const {
  AOTIRT_ENSURE(t.defined(), kInvalidArgument, "'{}' has no storage", what);
  AOTIRT_ENSURE(t.device().type == DeviceType::kCuda && t.device().index == device_, kInvalidArgument,
                "'{}' is on {}, but the op runs on cuda:{}", what, t.device().to_string(), device_);
  return Status();
}

Result<TensorImpl> cuda_empty(const DimVector& sizes, const DimVector& strides, DType dtype, int device) {
  return empty_strided(sizes, strides, dtype, DeviceId{DeviceType::kCuda, device});
}

Result<TensorImpl> cuda_empty_contiguous(const DimVector& sizes, DType dtype, int device) {
  return empty_contiguous(sizes, dtype, DeviceId{DeviceType::kCuda, device});
}

bool cuda_is_channels_last(const DimVector& sizes, const DimVector& strides) {
  // Walks the dims from fastest (C) to slowest (N) as channels-last orders
  // them, requiring non-decreasing strides; ambiguous cases (size-1 dims with
  // equal strides) count as contiguous, as in c10.
  static const int kOrder4[] = {1, 3, 2, 0};
  static const int kOrder5[] = {1, 4, 3, 2, 0};
  const int nd = static_cast<int>(sizes.size());
  if (nd != 4 && nd != 5) return false;
  const int* order = nd == 4 ? kOrder4 : kOrder5;
  if (strides[1] == 0) return false;
  int64_t min = 0;
  for (int i = 0; i < nd; ++i) {
    int d = order[i];
    if (sizes[d] == 0) return false;
    if (strides[d] < min) return false;
    if (d == 0 && min == strides[1]) return false;
    min = strides[d];
    if (sizes[d] > 1) min *= sizes[d];
  }
  return true;
}

DimVector cuda_channels_last_strides(const DimVector& sizes) {
  const int nd = static_cast<int>(sizes.size());
  DimVector s;
  s.resize(nd);
  // C fastest, then the spatial dims from last to first, then N.
  int64_t acc = 1;
  s[1] = acc;
  acc *= std::max<int64_t>(sizes[1], 1);
  for (int d = nd - 1; d >= 2; --d) {
    s[d] = acc;
    acc *= std::max<int64_t>(sizes[d], 1);
  }
  s[0] = acc;
  return s;
}

DimVector cuda_dense_strides_like(const DimVector& sizes, const DimVector& strides) {
  const int64_t nd = sizes.size();
  // Dims ordered fastest first: start from "last dim fastest" and insertion-
  // sort by stride, so ties and zero strides keep that order (as c10 does).
  std::vector<int64_t> perm(nd);
  for (int64_t i = 0; i < nd; ++i) perm[i] = nd - 1 - i;
  auto compare = [&](int64_t d0, int64_t d1) -> int {
    if (strides[d0] == 0 || strides[d1] == 0) return 0;
    if (strides[d0] != strides[d1]) return strides[d0] < strides[d1] ? -1 : 1;
    return sizes[d0] > sizes[d1] ? 1 : 0;
  };
  for (int64_t i = 1; i < nd; ++i) {
    int64_t cur = i;
    for (int64_t j = i - 1; j >= 0; --j) {
      int c = compare(perm[j], perm[cur]);
      if (c > 0) {
        std::swap(perm[j], perm[cur]);
        cur = j;
      } else if (c < 0) {
        break;
      }
    }
  }
  DimVector out;
  out.resize(nd);
  int64_t acc = 1;
  for (int64_t i = 0; i < nd; ++i) {
    out[perm[i]] = acc;
    if (sizes[perm[i]] > 1) acc *= sizes[perm[i]];
  }
  return out;
}

DimVector cuda_empty_like_strides(const TensorImpl& t) {
  if (cpu_ops::is_non_overlapping_and_dense(t)) return t.strides();
  return cuda_dense_strides_like(t.sizes(), t.strides());
}

namespace {
// -1 unset, 0 or 1 as set.
int tf32_override() {
  static const int v = [] {
    const char* s = std::getenv("AOTIRT_CUDA_ALLOW_TF32");
    if (!s || !*s) return -1;
    return std::string(s) == "0" ? 0 : 1;
  }();
  return v;
}
}  // namespace

Result<void*> cuda_op_workspace(int device, cudaStream_t stream, size_t bytes, TensorImpl* hold) {
  if (bytes == 0) return nullptr;
  AOTIRT_ASSIGN_OR_RETURN(CudaDevice * dev, cuda_device(device));
  if (dev->cuda_allocator().capturing_on_this_thread()) {
    AOTIRT_ASSIGN_OR_RETURN(*hold, cuda_empty_contiguous(DimVector{static_cast<int64_t>(bytes)}, DType::kUInt8,
                                                         device));
    return hold->data_ptr();
  }
  static std::mutex mutex;
  static auto* spaces = new std::map<std::pair<int, cudaStream_t>, TensorImpl>();  // leaked, like the streams
  std::lock_guard<std::mutex> lock(mutex);
  TensorImpl& ws = (*spaces)[{device, stream}];
  if (!ws.defined() || ws.nbytes() < bytes) {
    ws = TensorImpl();  // freed on |stream|: the next user is ordered after earlier ones
    AOTIRT_ASSIGN_OR_RETURN(ws, cuda_empty_contiguous(DimVector{static_cast<int64_t>(bytes)}, DType::kUInt8, device));
  }
  return ws.data_ptr();
}

// |ints| zeroed ints for the serial k slices of aotirt's GEMM and
// convolution kernels on |stream|. The kernels leave them zero, so a buffer per device and stream is zeroed once.
// While a graph is recorded, each call gets zeroed memory of the graph's own
// (a replay may run beside work outside the graph), zeroed outside the
// recording: a memset node per GEMM cost more than the split saved.
Result<int*> cuda_op_semaphores(int device, cudaStream_t stream, size_t ints) {
  AOTIRT_ASSIGN_OR_RETURN(CudaDevice * dev, cuda_device(device));
  const size_t bytes = ints * sizeof(int);
  if (dev->cuda_allocator().capturing_on_this_thread()) {
    AOTIRT_ASSIGN_OR_RETURN(void* p, dev->cuda_allocator().zeroed_for_capture(bytes));
    return static_cast<int*>(p);
  }
  static std::mutex mutex;
  static auto* buffers = new std::map<std::pair<int, cudaStream_t>, TensorImpl>();  // leaked, like the streams
  std::lock_guard<std::mutex> lock(mutex);
  TensorImpl& buf = (*buffers)[{device, stream}];
  if (!buf.defined() || buf.nbytes() < bytes) {
    buf = TensorImpl();  // freed on |stream|, after the kernels that used it
    const int64_t n = static_cast<int64_t>(std::max<size_t>(ints, 1024));
    AOTIRT_ASSIGN_OR_RETURN(buf, cuda_empty_contiguous(DimVector{n}, DType::kInt32, device));
    AOTIRT_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(buf.data_ptr(), 0, buf.nbytes(), stream));
  }
  return static_cast<int*>(buf.data_ptr());
}

bool cuda_conv_allow_tf32() { return tf32_override() != 0; }
bool cuda_matmul_allow_tf32() { return tf32_override() == 1; }

int cuda_pointer_alignment(const void* p) {
  uintptr_t a = reinterpret_cast<uintptr_t>(p);
  int align = 1;
  while (align < 256 && (a % (align * 2)) == 0) align *= 2;
  return align;
}

}  // namespace aotirt
