#include "backends/cuda/ops/cuda_op_util.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <mutex>
#include <numeric>
#include <vector>

#include "backends/cuda/runtime/cuda_device.h"
#include "backends/cuda/runtime/cuda_options.h"
#include "backends/cuda/runtime/cuda_status.h"
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

bool cuda_dependent_launches(const CudaDevice& dev) {
  return dev.properties().major >= 9 && cuda_options().enabled(CudaFeature::kPdl);
}

Result<TensorImpl> cuda_empty_contiguous(const DimVector& sizes, DType dtype, int device) {
  return empty_contiguous(sizes, dtype, DeviceId{DeviceType::kCuda, device});
}

namespace {
// -1 unset, 0 or 1 as set.
int tf32_override() { return cuda_options().allow_tf32; }
}  // namespace

namespace {

// Per stream of a device: the ops' scratch buffer, and the zeroed ints of
// serial k splits. Bounded by the streams the ops run on.
class ScratchCache final : public CudaOpCache {
 public:
  const char* name() const override { return "scratch buffers"; }
  size_t size() const override {
    std::lock_guard<std::mutex> lock(mu);
    return spaces.size() + semaphores.size();
  }
  void clear() override {
    std::map<cudaStream_t, TensorImpl> a, b;
    {
      std::lock_guard<std::mutex> lock(mu);
      a.swap(spaces);
      b.swap(semaphores);
    }
  }
  mutable std::mutex mu;
  std::map<cudaStream_t, TensorImpl> spaces, semaphores;
};

ScratchCache& scratch(CudaDevice& dev) {
  return dev.op_caches().get<ScratchCache>([] { return std::make_unique<ScratchCache>(); });
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
  ScratchCache& c = scratch(*dev);
  std::lock_guard<std::mutex> lock(c.mu);
  TensorImpl& ws = c.spaces[stream];
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
  ScratchCache& c = scratch(*dev);
  std::lock_guard<std::mutex> lock(c.mu);
  TensorImpl& buf = c.semaphores[stream];
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
