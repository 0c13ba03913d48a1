// CUDA indexing ops (c_shim_cuda.h): index.Tensor, index_put, index_reduce,
// scatter src/value/reduce out=, masked_scatter, masked_select, nonzero and
// nonzero_static. The op layer (src/ops/indexing_args) checks the arguments
// and gives shapes, dtypes and layouts; here the index values are turned
// into offsets on the device and the kernels (cuda_indexing.cu) run.
//
// Index values live on the device, so bounds are checked there: a kernel
// that meets an out-of-range index skips it and raises a flag. Inside a
// model run the flag is a slot of the run's check words, read once when the
// run ends (cuda_run_checks.h), and the run fails with the error; outside
// one, the host reads the flag back at once, which waits for the stream.
// Either way a bad index is an error rather than a memory fault; inside a
// stream capture nothing can be read, and there the bad index is only
// skipped. nonzero, masked_select and masked_scatter also wait, for the
// number of selected elements that sizes their output (or is checked
// against the source).
#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>
#include <memory>
#include <utility>
#include <vector>

#include "backends/cuda/ops/cuda_op_util.h"
#include "backends/cuda/ops/indexing/cuda_indexing_kernels.h"
#include "backends/cuda/runtime/cuda_copy.h"
#include "backends/cuda/runtime/cuda_device.h"
#include "backends/cuda/runtime/cuda_op_caches.h"
#include "backends/cuda/runtime/cuda_run_checks.h"
#include "backends/cuda/runtime/cuda_status.h"
#include "base/status.h"
#include "core/dtype.h"
#include "core/host_copy.h"
#include "device/device.h"
#include "ops/indexing_args.h"
#include "ops/layout.h"
#include "ops/op_args.h"
#include "shim/abi/cuda_indexing.h"
#include "shim/common/shim_util.h"

namespace aotirt {
namespace {

int dtype_code(DType d) { return static_cast<int>(d); }

Status check_dtype(const TensorImpl& t, const char* what, const char* op) {
  AOTIRT_ENSURE(ops::indexing_dtype(t.dtype()), kUnimplemented, "'{}' has dtype {}, which aotirt's {} does not take",
                what, dtype_name(t.dtype()), op);
  return Status();
}

Status check_rank(int64_t rank, const char* what) {
  AOTIRT_ENSURE(rank <= kCudaIndexMaxDims, kUnimplemented, "{} has {} dims; aotirt's CUDA indexing takes up to {}",
                what, rank, kCudaIndexMaxDims);
  return Status();
}

// |t| as a contiguous tensor on the device (itself when it already is one).
Result<TensorImpl> contiguous_on(int device, cudaStream_t stream, const TensorImpl& t) {
  if (t.is_contiguous() && t.device().type == DeviceType::kCuda) return t;
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl c, cuda_empty_contiguous(t.sizes(), t.dtype(), device));
  AOTIRT_RETURN_IF_ERROR(cuda_copy(device, stream, c, t, false));
  return c;
}

// Device scratch of |bytes| (null for none), held by |hold|.
Result<void*> scratch(int device, size_t bytes, TensorImpl* hold) {
  if (bytes == 0) return static_cast<void*>(nullptr);
  AOTIRT_ASSIGN_OR_RETURN(*hold, cuda_empty_contiguous(DimVector{static_cast<int64_t>(bytes)}, DType::kUInt8, device));
  return hold->data_ptr();
}

bool capturing(cudaStream_t stream) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(stream, &status) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return status != cudaStreamCaptureStatusNone;
}

// Reads |n| int64 from the device into |host|: waits for the stream, since
// the host needs the value now (a result size or the bounds flag).
Status read_back(cudaStream_t stream, const int64_t* device_ptr, int64_t* host, int n) {
  AOTIRT_CUDA_RETURN_IF_ERROR(
      cudaMemcpyAsync(host, device_ptr, sizeof(int64_t) * n, cudaMemcpyDeviceToHost, stream));
  AOTIRT_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream));
  return Status();
}

// The out-of-range flags of cuda_indexing_kernels.h kept per stream: three
// device words zeroed once (the kernels write them only on a bad index, and
// the reader zeroes them again after one) and their pinned host mirror, so a
// check is one small asynchronous copy and the wait, with no allocation, no
// memset and no staged copy. Calls on one stream take its flag in turn: the
// host reads it after the wait, and a second thread on the same stream must
// not see the first one's index. Bounded by the streams the ops run on.
struct StreamFlag {
  std::mutex mu;
  TensorImpl device_words;
  int64_t* host_words = nullptr;
  ~StreamFlag() {
    if (host_words) cudaFreeHost(host_words);
  }
};

class BoundsFlagCache final : public CudaOpCache {
 public:
  const char* name() const override { return "index bounds flags"; }
  size_t size() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return flags_.size();
  }
  // Only while no op runs on the device (Device::release_caches).
  void clear() override {
    std::map<cudaStream_t, std::unique_ptr<StreamFlag>> dropped;
    std::lock_guard<std::mutex> lock(mu_);
    dropped.swap(flags_);
  }
  // |stream|'s flag, made and zeroed on first use.
  Result<StreamFlag*> get(int device, cudaStream_t stream) {
    std::lock_guard<std::mutex> lock(mu_);
    std::unique_ptr<StreamFlag>& f = flags_[stream];
    if (f) return f.get();
    auto made = std::make_unique<StreamFlag>();
    AOTIRT_ASSIGN_OR_RETURN(made->device_words,
                            cuda_empty_contiguous(DimVector{kCudaIndexFlagWords}, DType::kInt64, device));
    void* host = nullptr;
    AOTIRT_CUDA_RETURN_IF_ERROR(cudaMallocHost(&host, sizeof(int64_t) * kCudaIndexFlagWords));
    made->host_words = static_cast<int64_t*>(host);
    AOTIRT_CUDA_RETURN_IF_ERROR(
        cudaMemsetAsync(made->device_words.data_ptr(), 0, sizeof(int64_t) * kCudaIndexFlagWords, stream));
    f = std::move(made);
    return f.get();
  }

 private:
  mutable std::mutex mu_;
  std::map<cudaStream_t, std::unique_ptr<StreamFlag>> flags_;
};

// The flag one call's kernels report to: a slot of the model run's check
// words (read when the run ends), the stream's own flag (held until the call
// has read it), or, while a graph is recorded, words of the graph's own
// zeroed in the recording, since a replay may run beside other calls.
// A call that leaves without reading the stream's flag (a failed launch)
// zeroes it, so the next call does not report this one's index.
struct BoundsFlag {
  BoundsFlag() = default;
  BoundsFlag(BoundsFlag&&) = default;
  ~BoundsFlag() {
    if (shared && lock.owns_lock() && !read)
      cudaMemsetAsync(shared->device_words.data_ptr(), 0, sizeof(int64_t) * kCudaIndexFlagWords, stream);
  }
  StreamFlag* shared = nullptr;
  std::unique_lock<std::mutex> lock;
  cudaStream_t stream = nullptr;
  // Read, or known clean (indices checked on the host).
  mutable bool read = false;
  TensorImpl buffer;
  int64_t* deferred = nullptr;
  int64_t* ptr() const {
    if (deferred) return deferred;
    return static_cast<int64_t*>(shared ? shared->device_words.data_ptr() : buffer.data_ptr());
  }
};

Status bounds_error(int64_t value, int64_t dim, int64_t size) {
  return AOTIRT_STATUS(kInvalidArgument, "index {} is out of bounds for dimension {} with size {}", value, dim, size);
}

// |describe| (null: check at once) makes the error from the flag's words when
// the check is left to the end of the model run.
Result<BoundsFlag> new_flag(int device, cudaStream_t stream, CudaCheckDescribe describe = nullptr) {
  BoundsFlag f;
  if (describe && !capturing(stream)) {
    f.deferred = CudaRunScope::defer(device, stream, std::move(describe));
    if (f.deferred) return f;
  }
  if (!capturing(stream)) {
    AOTIRT_ASSIGN_OR_RETURN(CudaDevice * dev, cuda_device(device));
    BoundsFlagCache& cache =
        dev->op_caches().get<BoundsFlagCache>([] { return std::make_unique<BoundsFlagCache>(); });
    AOTIRT_ASSIGN_OR_RETURN(f.shared, cache.get(device, stream));
    f.stream = stream;
    f.lock = std::unique_lock<std::mutex>(f.shared->mu);
    return f;
  }
  AOTIRT_ASSIGN_OR_RETURN(f.buffer, cuda_empty_contiguous(DimVector{kCudaIndexFlagWords}, DType::kInt64, device));
  AOTIRT_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(f.ptr(), 0, sizeof(int64_t) * kCudaIndexFlagWords, stream));
  return f;
}

// An error naming the first bad index the kernels met, if any. |dim_of|
// maps the flag's "which" word to the dim and its size.
template <class DimOf>
Status check_flag(cudaStream_t stream, const BoundsFlag& f, DimOf&& dim_of) {
  // A capture records the kernels for later replays; there is nothing to
  // read yet, and waiting is not allowed. A deferred flag is read by the run.
  if (!f.shared) return Status();
  f.read = true;
  int64_t* host = f.shared->host_words;
  AOTIRT_CUDA_RETURN_IF_ERROR(
      cudaMemcpyAsync(host, f.ptr(), sizeof(int64_t) * kCudaIndexFlagWords, cudaMemcpyDeviceToHost, stream));
  AOTIRT_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream));
  if (host[0] == 0) return Status();
  const int64_t value = host[1], which = host[2];
  // Zeroed again for the stream's next call, which is ordered after this.
  AOTIRT_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(f.ptr(), 0, sizeof(int64_t) * kCudaIndexFlagWords, stream));
  int64_t dim = 0, size = 0;
  dim_of(which, &dim, &size);
  return bounds_error(value, dim, size);
}

// ---------------------------------------------------------------------------
// nonzero

// The coordinates of |self|'s nonzero elements as torch's CUDA nonzero and
// nonzero_static give them: [rows, ndim] int64, column-major (strides
// [1, rows]). nonzero_static (|static_size|) pads with |fill| and needs no
// wait; nonzero waits for the count, which sizes the result.
Result<TensorImpl> nonzero_cuda(int device, cudaStream_t stream, const TensorImpl& self, const int64_t* static_size,
                                int64_t fill) {
  AOTIRT_RETURN_IF_ERROR(check_dtype(self, "self", "nonzero"));
  AOTIRT_RETURN_IF_ERROR(check_rank(self.dim(), "'self'"));
  const int64_t nd = self.dim(), n = self.numel();
  CudaIndexSizes sizes;
  sizes.ndim = static_cast<int>(nd);
  for (int64_t d = 0; d < nd; ++d) sizes.sizes[d] = self.sizes()[d];
  TensorImpl in;
  if (n > 0) {
    AOTIRT_ASSIGN_OR_RETURN(in, contiguous_on(device, stream, self));
  }
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl count, cuda_empty_contiguous(DimVector{1}, DType::kInt64, device));
  int64_t* count_ptr = static_cast<int64_t*>(count.data_ptr());
  AOTIRT_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(count_ptr, 0, sizeof(int64_t), stream));
  const int dt = dtype_code(self.dtype());
  if (static_size) {
    const int64_t rows = *static_size;
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl out,
                            cuda_empty(DimVector{rows, nd}, DimVector{1, std::max<int64_t>(rows, 1)}, DType::kInt64,
                                       device));
    if (rows == 0 || nd == 0) return out;
    TensorImpl positions, hold;
    if (n > 0) {
      AOTIRT_ASSIGN_OR_RETURN(positions, cuda_empty_contiguous(DimVector{n}, DType::kInt64, device));
      int64_t* pos = static_cast<int64_t*>(positions.data_ptr());
      size_t bytes = 0;
      AOTIRT_CUDA_RETURN_IF_ERROR(cuda_select_nonzero(nullptr, bytes, dt, in.data_ptr(), n, pos, count_ptr, stream));
      AOTIRT_ASSIGN_OR_RETURN(void* temp, scratch(device, bytes, &hold));
      AOTIRT_CUDA_RETURN_IF_ERROR(cuda_select_nonzero(temp, bytes, dt, in.data_ptr(), n, pos, count_ptr, stream));
    }
    AOTIRT_CUDA_RETURN_IF_ERROR(cuda_launch_positions_to_coords(
        static_cast<int64_t*>(out.data_ptr()), n > 0 ? static_cast<const int64_t*>(positions.data_ptr()) : nullptr,
        rows, count_ptr, fill, sizes, stream));
    return out;
  }
  int64_t rows = 0;
  if (n > 0) {
    TensorImpl hold;
    size_t bytes = 0;
    AOTIRT_CUDA_RETURN_IF_ERROR(cuda_count_nonzero(nullptr, bytes, dt, in.data_ptr(), n, count_ptr, stream));
    AOTIRT_ASSIGN_OR_RETURN(void* temp, scratch(device, bytes, &hold));
    AOTIRT_CUDA_RETURN_IF_ERROR(cuda_count_nonzero(temp, bytes, dt, in.data_ptr(), n, count_ptr, stream));
    AOTIRT_RETURN_IF_ERROR(read_back(stream, count_ptr, &rows, 1));
  }
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl out, cuda_empty(DimVector{rows, nd}, DimVector{1, std::max<int64_t>(rows, 1)},
                                                     DType::kInt64, device));
  if (rows == 0 || nd == 0) return out;
  // The positions go to the last column, which the coordinates then replace.
  int64_t* o = static_cast<int64_t*>(out.data_ptr());
  TensorImpl hold;
  size_t bytes = 0;
  AOTIRT_CUDA_RETURN_IF_ERROR(
      cuda_select_nonzero(nullptr, bytes, dt, in.data_ptr(), n, o + (nd - 1) * rows, count_ptr, stream));
  AOTIRT_ASSIGN_OR_RETURN(void* temp, scratch(device, bytes, &hold));
  AOTIRT_CUDA_RETURN_IF_ERROR(
      cuda_select_nonzero(temp, bytes, dt, in.data_ptr(), n, o + (nd - 1) * rows, count_ptr, stream));
  AOTIRT_CUDA_RETURN_IF_ERROR(cuda_launch_positions_to_coords(o, nullptr, rows, nullptr, 0, sizes, stream));
  return out;
}

Status nonzero_shim(AtenTensorHandle self, const int64_t* size, int64_t fill_value, AtenTensorHandle* ret0) {
  AOTIRT_REQUIRE_OUT(ret0);
  AOTIRT_ASSIGN_OR_RETURN(const TensorImpl* t, ops::require_tensor(self, "self"));
  AOTIRT_ASSIGN_OR_RETURN(std::unique_ptr<CudaOpScope> scope, CudaOpScope::enter(*t, "self"));
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl out, nonzero_cuda(scope->device(), scope->stream(), *t, size, fill_value));
  *ret0 = new_handle(std::move(out));
  return Status();
}

// ---------------------------------------------------------------------------
// Advanced indexing.

// An advanced index on the device: every index an integer tensor (masks
// replaced by their positions), with its strides in the broadcast shape B.
struct CudaIndexPlan {
  ops::AdvancedIndexShape shape;
  std::vector<TensorImpl> index;          // on the device
  std::vector<DimVector> bstrides;        // of |index|, in B
  std::vector<DimVector> layout_bstrides;  // of the caller's index tensors, in B (they decide torch's layout)
  std::vector<DType> dtypes;
  std::vector<int64_t> dims;
  // Every index came from the host and was checked there, so the device's
  // bounds flag need not be waited for.
  bool host_checked = true;
};

// Checks the host index tensor |t| for dimension |dim| of size |size| on the
// host (an int32 or int64 tensor; false in |*checked| for other dtypes).
Status check_host_index(const TensorImpl& t, int64_t dim, int64_t size, bool* checked) {
  *checked = t.dtype() == DType::kInt64 || t.dtype() == DType::kInt32;
  if (!*checked || t.numel() == 0) return Status();
  TensorImpl dense = t;
  if (!t.is_contiguous()) {
    AOTIRT_ASSIGN_OR_RETURN(dense, empty_contiguous(t.sizes(), t.dtype(), DeviceId{}));
    AOTIRT_RETURN_IF_ERROR(host_copy_strided(dense, t));
  }
  const char* base = static_cast<const char*>(dense.data_ptr());
  const size_t width = dense.element_size();
  for (int64_t i = 0; i < dense.numel(); ++i) {
    const int64_t v = load_as_int64(base + static_cast<size_t>(i) * width, dense.dtype());
    AOTIRT_ENSURE(v >= -size && v < size, kInvalidArgument, "index {} is out of bounds for dimension {} with size {}",
                  v, dim, size);
  }
  return Status();
}

Result<CudaIndexPlan> plan_index(int device, cudaStream_t stream, const ops::IndexArgs& a) {
  CudaIndexPlan p;
  std::vector<DimVector> shapes;
  std::vector<TensorImpl> callers;
  for (const ops::IndexEntry& e : a.entries) {
    const TensorImpl& t = *e.tensor;
    AOTIRT_ENSURE(t.device().is_cpu() || (t.device().type == DeviceType::kCuda && t.device().index == device),
                  kInvalidArgument, "an index tensor is on {}, but the op runs on cuda:{}", t.device().to_string(),
                  device);
    if (!e.is_mask) {
      TensorImpl on = t;
      if (t.device().is_cpu()) {
        bool checked = false;
        if (e.first_dim < a.self->dim()) {  // past the last dim: refused below (advanced_index_shape)
          AOTIRT_RETURN_IF_ERROR(check_host_index(t, e.first_dim, a.self->sizes()[e.first_dim], &checked));
        }
        p.host_checked = p.host_checked && checked;
        AOTIRT_ASSIGN_OR_RETURN(on, contiguous_on(device, stream, t));
      } else {
        p.host_checked = false;
      }
      callers.push_back(t);
      p.index.push_back(on);
      p.dims.push_back(e.first_dim);
      shapes.push_back(t.sizes());
      continue;
    }
    // A mask's true positions: one column of its nonzero per dim it covers.
    p.host_checked = false;
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl m, contiguous_on(device, stream, t));
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl nz, nonzero_cuda(device, stream, m, nullptr, 0));
    const int64_t count = nz.sizes()[0];
    for (int64_t j = 0; j < t.dim(); ++j) {
      TensorImpl col(nz.storage(), DType::kInt64, DimVector{count}, DimVector{1}, nz.storage_offset() + j * count);
      callers.push_back(col);
      p.index.push_back(col);
      p.dims.push_back(e.first_dim + j);
      shapes.push_back(col.sizes());
    }
  }
  AOTIRT_ENSURE(static_cast<int>(p.index.size()) <= kCudaIndexMaxIndices, kUnimplemented,
                "{} index tensors; aotirt's CUDA indexing takes up to {}", p.index.size(), kCudaIndexMaxIndices);
  AOTIRT_ASSIGN_OR_RETURN(p.shape, ops::advanced_index_shape(*a.self, p.dims, shapes));
  AOTIRT_RETURN_IF_ERROR(check_rank(p.shape.index_shape.size(), "the broadcast index shape"));
  AOTIRT_RETURN_IF_ERROR(check_rank(p.shape.result_sizes.size(), "the indexing result"));
  for (size_t k = 0; k < p.index.size(); ++k) {
    AOTIRT_ASSIGN_OR_RETURN(DimVector s, broadcast_strides(p.index[k].sizes(), p.index[k].strides(),
                                                           p.shape.index_shape));
    p.bstrides.push_back(s);
    AOTIRT_ASSIGN_OR_RETURN(DimVector ls, broadcast_strides(callers[k].sizes(), callers[k].strides(),
                                                            p.shape.index_shape));
    p.layout_bstrides.push_back(ls);
    p.dtypes.push_back(p.index[k].dtype());
  }
  return p;
}

// Offsets into a tensor of self's shape with |strides| for every B position,
// checked: an error when an index is out of range.
Result<TensorImpl> index_offsets(int device, cudaStream_t stream, const TensorImpl& self, const CudaIndexPlan& p,
                                 const DimVector& strides) {
  const DimVector& b = p.shape.index_shape;
  const int64_t nb = numel_of(b);
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl offsets, cuda_empty_contiguous(DimVector{nb}, DType::kInt64, device));
  if (nb == 0) return offsets;
  CudaIndexOffsets k;
  k.bdims = static_cast<int>(b.size());
  for (int64_t d = 0; d < b.size(); ++d) k.bsizes[d] = b[d];
  k.nidx = static_cast<int>(p.index.size());
  for (int i = 0; i < k.nidx; ++i) {
    k.index[i] = p.index[i].data_ptr();
    k.index64[i] = p.index[i].dtype() == DType::kInt64;
    for (int64_t d = 0; d < b.size(); ++d) k.index_strides[i][d] = p.bstrides[i][d];
    k.limit[i] = self.sizes()[p.dims[i]];
    k.stride[i] = strides[p.dims[i]];
  }
  // Which index the kernel names -> its dim and that dim's size.
  std::vector<std::pair<int64_t, int64_t>> dims;
  for (int64_t d : p.dims) dims.emplace_back(d, self.sizes()[d]);
  auto dim_of = [dims](int64_t which, int64_t* dim, int64_t* size) {
    const size_t w = static_cast<size_t>(which) < dims.size() ? static_cast<size_t>(which) : 0;
    *dim = dims[w].first;
    *size = dims[w].second;
  };
  // Indices checked on the host need no check here at all.
  CudaCheckDescribe describe;
  if (!p.host_checked) {
    describe = [dim_of](const int64_t* words) {
      int64_t dim = 0, size = 0;
      dim_of(words[2], &dim, &size);
      return bounds_error(words[1], dim, size);
    };
  }
  AOTIRT_ASSIGN_OR_RETURN(BoundsFlag flag, new_flag(device, stream, std::move(describe)));
  AOTIRT_CUDA_RETURN_IF_ERROR(
      cuda_launch_index_offsets(k, nb, static_cast<int64_t*>(offsets.data_ptr()), flag.ptr(), stream));
  if (p.host_checked) {
    flag.read = true;
    return offsets;
  }
  // Read now (unless the run reads it), before anything is written, so a bad
  // index leaves no trace; a bad index's offset is -1, which the walks skip.
  AOTIRT_RETURN_IF_ERROR(check_flag(stream, flag, dim_of));
  return offsets;
}

// The walk over the result: |indexed_strides| are those of the indexed
// tensor (self's rank), |dense_strides| those of the result-shaped side.
CudaIndexWalk index_walk(const CudaIndexPlan& p, const DimVector& indexed_strides, const DimVector& dense_strides) {
  const DimVector& rs = p.shape.result_sizes;
  const DimVector bst = contiguous_strides(p.shape.index_shape);
  CudaIndexWalk w;
  for (int64_t d = 0; d < rs.size(); ++d) {
    if (rs[d] == 1) continue;
    const int64_t s = p.shape.result_dim_source[d];
    w.sizes[w.ndim] = rs[d];
    w.b_strides[w.ndim] = s >= 0 ? bst[s] : 0;
    w.indexed_strides[w.ndim] = s >= 0 ? 0 : indexed_strides[p.shape.rest_dims[-1 - s]];
    w.dense_strides[w.ndim] = dense_strides[d];
    ++w.ndim;
  }
  if (w.ndim == 0) {
    w.sizes[0] = 1;
    w.ndim = 1;
  }
  return w;
}

Status index_tensor(const ops::IndexArgs& a, AtenTensorHandle* ret0) {
  AOTIRT_REQUIRE_OUT(ret0);
  const TensorImpl& self = *a.self;
  AOTIRT_ASSIGN_OR_RETURN(std::unique_ptr<CudaOpScope> scope, CudaOpScope::enter(self, "self"));
  const int device = scope->device();
  cudaStream_t stream = scope->stream();
  AOTIRT_ASSIGN_OR_RETURN(CudaIndexPlan p, plan_index(device, stream, a));
  const DimVector& rs = p.shape.result_sizes;
  const DimVector strides = ops::index_result_strides(self, p.shape, p.dtypes, p.layout_bstrides);
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl out, cuda_empty(rs, strides, self.dtype(), device));
  if (out.numel() > 0) {
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl offsets, index_offsets(device, stream, self, p, self.strides()));
    const CudaIndexWalk w = index_walk(p, self.strides(), out.strides());
    AOTIRT_CUDA_RETURN_IF_ERROR(cuda_launch_index_walk(CudaIndexMode::kGather, dtype_code(self.dtype()),
                                                       static_cast<int>(self.element_size()), self.data_ptr(),
                                                       out.data_ptr(), static_cast<const int64_t*>(offsets.data_ptr()),
                                                       w, stream));
  }
  *ret0 = new_handle(std::move(out));
  return Status();
}

// torch puts one value held on the host under a lone bool mask with
// masked_fill_: the value is then a scalar of any dtype, converted (checked)
// to self's. A value on the device takes index_put's own path.
Result<TensorImpl> masked_fill_value(int device, cudaStream_t stream, const TensorImpl& self, const TensorImpl& v) {
  AOTIRT_ENSURE(ops::indexing_dtype(v.dtype()), kUnimplemented, "'values' has dtype {}, which index_put does not take",
                dtype_name(v.dtype()));
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl host_v, empty_contiguous(DimVector(), v.dtype(), DeviceId{}));
  const TensorImpl one(v.storage(), v.dtype(), DimVector(), DimVector(), v.storage_offset());
  if (v.device().is_cpu()) {
    AOTIRT_RETURN_IF_ERROR(host_copy_strided(host_v, one));
  } else {
    AOTIRT_RETURN_IF_ERROR(cuda_copy(device, stream, host_v, one, false));
  }
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl scalar, empty_contiguous(DimVector(), self.dtype(), DeviceId{}));
  if (dtype_is_floating(v.dtype())) {
    const double x = load_as_double(host_v.data_ptr(), v.dtype());
    AOTIRT_RETURN_IF_ERROR(ops::check_scalar_fits(x, false, self.dtype()));
    store_from_double(scalar.data_ptr(), self.dtype(), x);
  } else {
    const int64_t x = load_as_int64(host_v.data_ptr(), v.dtype());
    AOTIRT_RETURN_IF_ERROR(ops::check_scalar_fits(static_cast<double>(x), true, self.dtype()));
    store_from_int64(scalar.data_ptr(), self.dtype(), x);
  }
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl on, cuda_empty_contiguous(DimVector(), self.dtype(), device));
  AOTIRT_RETURN_IF_ERROR(cuda_copy(device, stream, on, scalar, false));
  return on;
}

Status index_put(const ops::IndexArgs& a, AtenTensorHandle values, bool accumulate, AtenTensorHandle* ret0) {
  AOTIRT_REQUIRE_OUT(ret0);
  const TensorImpl& self = *a.self;
  AOTIRT_ASSIGN_OR_RETURN(const TensorImpl* vp, ops::require_tensor(values, "values"));
  AOTIRT_ASSIGN_OR_RETURN(std::unique_ptr<CudaOpScope> scope, CudaOpScope::enter(self, "self"));
  const int device = scope->device();
  cudaStream_t stream = scope->stream();
  TensorImpl v = *vp;
  if (!accumulate && v.numel() == 1 && v.device().is_cpu() && a.entries.size() == 1 && a.entries[0].is_mask) {
    AOTIRT_ENSURE(a.entries[0].tensor->dtype() == DType::kBool, kInvalidArgument,
                  "masked_fill_ only supports boolean masks, but got mask with dtype {}",
                  dtype_name(a.entries[0].tensor->dtype()));
    if (v.dtype() != self.dtype()) {
      AOTIRT_ASSIGN_OR_RETURN(v, masked_fill_value(device, stream, self, v));
    }
  }
  AOTIRT_ENSURE(v.dtype() == self.dtype(), kInvalidArgument,
                "Index put requires the source and destination dtypes match, got {} for the destination and {} for "
                "the source.",
                dtype_name(self.dtype()), dtype_name(v.dtype()));
  if (v.device().is_cpu()) {
    AOTIRT_ASSIGN_OR_RETURN(v, contiguous_on(device, stream, v));
  }
  AOTIRT_RETURN_IF_ERROR(scope->check_same_device(v, "values"));
  AOTIRT_ASSIGN_OR_RETURN(CudaIndexPlan p, plan_index(device, stream, a));
  const DimVector& rs = p.shape.result_sizes;
  auto vst = broadcast_strides(v.sizes(), v.strides(), rs);
  AOTIRT_ENSURE(vst.ok(), kInvalidArgument,
                "shape mismatch: value tensor of shape {} cannot be broadcast to indexing result of shape {}",
                ops::shape_str(v), dims_to_string(rs.data(), rs.size()));
  // torch clones self (keeping its layout) and puts into the clone.
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl out, cuda_empty(self.sizes(), ops::empty_like_strides(self), self.dtype(), device));
  // The indices are checked (a wait for the device's bounds flag) before
  // self is copied, so the wait does not cover the copy of the whole tensor.
  TensorImpl offsets;
  if (numel_of(rs) > 0) {
    AOTIRT_ASSIGN_OR_RETURN(offsets, index_offsets(device, stream, out, p, out.strides()));
  }
  AOTIRT_RETURN_IF_ERROR(cuda_copy(device, stream, out, self, false));
  if (numel_of(rs) > 0) {
    const CudaIndexWalk w = index_walk(p, out.strides(), vst.value());
    // Without accumulate each element is a plain row copy; duplicates leave
    // one of the written values, as in torch.
    AOTIRT_CUDA_RETURN_IF_ERROR(cuda_launch_index_walk(
        accumulate ? CudaIndexMode::kAccumulate : CudaIndexMode::kPut, dtype_code(self.dtype()),
        static_cast<int>(self.element_size()), out.data_ptr(), v.data_ptr(),
        static_cast<const int64_t*>(offsets.data_ptr()), w, stream));
  }
  *ret0 = new_handle(std::move(out));
  return Status();
}

// ---------------------------------------------------------------------------
// masked_select, masked_scatter.

Result<const TensorImpl*> require_bool_mask(AtenTensorHandle mask, const char* message) {
  AOTIRT_ASSIGN_OR_RETURN(const TensorImpl* m, ops::require_tensor(mask, "mask"));
  AOTIRT_ENSURE(m->dtype() == DType::kBool, kInvalidArgument, "{}, but got mask with dtype {}", message,
                dtype_name(m->dtype()));
  return m;
}

// |mask| broadcast to |shape|, contiguous, and its number of true elements
// (a wait: the host needs it).
Result<std::pair<TensorImpl, int64_t>> dense_mask(int device, cudaStream_t stream, const TensorImpl& mask,
                                                  const DimVector& shape) {
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl m, cuda_empty_contiguous(shape, DType::kBool, device));
  const int64_t n = m.numel();
  int64_t count = 0;
  if (n == 0) return std::make_pair(std::move(m), count);
  AOTIRT_RETURN_IF_ERROR(cuda_copy(device, stream, m, mask, false));
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl c, cuda_empty_contiguous(DimVector{1}, DType::kInt64, device));
  int64_t* cp = static_cast<int64_t*>(c.data_ptr());
  TensorImpl hold;
  size_t bytes = 0;
  const int dt = dtype_code(DType::kBool);
  AOTIRT_CUDA_RETURN_IF_ERROR(cuda_count_nonzero(nullptr, bytes, dt, m.data_ptr(), n, cp, stream));
  AOTIRT_ASSIGN_OR_RETURN(void* temp, scratch(device, bytes, &hold));
  AOTIRT_CUDA_RETURN_IF_ERROR(cuda_count_nonzero(temp, bytes, dt, m.data_ptr(), n, cp, stream));
  AOTIRT_RETURN_IF_ERROR(read_back(stream, cp, &count, 1));
  return std::make_pair(std::move(m), count);
}

Status masked_select(AtenTensorHandle self_h, AtenTensorHandle mask_h, AtenTensorHandle* ret0) {
  AOTIRT_REQUIRE_OUT(ret0);
  AOTIRT_ASSIGN_OR_RETURN(const TensorImpl* sp, ops::require_tensor(self_h, "self"));
  AOTIRT_ASSIGN_OR_RETURN(const TensorImpl* mp,
                          require_bool_mask(mask_h, "masked_select: expected BoolTensor for mask"));
  const TensorImpl &self = *sp, &mask = *mp;
  AOTIRT_ASSIGN_OR_RETURN(std::unique_ptr<CudaOpScope> scope, CudaOpScope::enter(self, "self"));
  AOTIRT_RETURN_IF_ERROR(scope->check_same_device(mask, "mask"));
  const int device = scope->device();
  cudaStream_t stream = scope->stream();
  AOTIRT_RETURN_IF_ERROR(check_dtype(self, "self", "masked_select"));
  AOTIRT_ASSIGN_OR_RETURN(DimVector shape, ops::broadcast_shapes({self.sizes(), mask.sizes()}, "self and mask"));
  AOTIRT_ASSIGN_OR_RETURN(auto dm, dense_mask(device, stream, mask, shape));
  const int64_t count = dm.second;
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl out, cuda_empty_contiguous(DimVector{count}, self.dtype(), device));
  if (count > 0) {
    TensorImpl in = self;
    if (!(self.sizes() == shape && self.is_contiguous())) {
      AOTIRT_ASSIGN_OR_RETURN(in, cuda_empty_contiguous(shape, self.dtype(), device));
      AOTIRT_RETURN_IF_ERROR(cuda_copy(device, stream, in, self, false));
    }
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl c, cuda_empty_contiguous(DimVector{1}, DType::kInt64, device));
    const int es = static_cast<int>(self.element_size());
    const bool* flags = static_cast<const bool*>(dm.first.data_ptr());
    int64_t* cp = static_cast<int64_t*>(c.data_ptr());
    TensorImpl hold;
    size_t bytes = 0;
    const int64_t n = in.numel();
    AOTIRT_CUDA_RETURN_IF_ERROR(
        cuda_select_flagged(nullptr, bytes, es, in.data_ptr(), flags, n, out.data_ptr(), cp, stream));
    AOTIRT_ASSIGN_OR_RETURN(void* temp, scratch(device, bytes, &hold));
    AOTIRT_CUDA_RETURN_IF_ERROR(
        cuda_select_flagged(temp, bytes, es, in.data_ptr(), flags, n, out.data_ptr(), cp, stream));
  }
  *ret0 = new_handle(std::move(out));
  return Status();
}

Status masked_scatter(AtenTensorHandle self_h, AtenTensorHandle mask_h, AtenTensorHandle source_h,
                      AtenTensorHandle* ret0) {
  AOTIRT_REQUIRE_OUT(ret0);
  AOTIRT_ASSIGN_OR_RETURN(const TensorImpl* sp, ops::require_tensor(self_h, "self"));
  AOTIRT_ASSIGN_OR_RETURN(const TensorImpl* mp,
                          require_bool_mask(mask_h, "masked_scatter_ only supports boolean masks"));
  AOTIRT_ASSIGN_OR_RETURN(const TensorImpl* srcp, ops::require_tensor(source_h, "source"));
  const TensorImpl &self = *sp, &mask = *mp, &source = *srcp;
  AOTIRT_ASSIGN_OR_RETURN(std::unique_ptr<CudaOpScope> scope, CudaOpScope::enter(self, "self"));
  AOTIRT_RETURN_IF_ERROR(scope->check_same_device(mask, "mask"));
  AOTIRT_RETURN_IF_ERROR(scope->check_same_device(source, "source"));
  const int device = scope->device();
  cudaStream_t stream = scope->stream();
  AOTIRT_ENSURE(self.dtype() == source.dtype(), kInvalidArgument,
                "masked_scatter: expected self and source to have same dtypes but got {} and {}",
                dtype_name(self.dtype()), dtype_name(source.dtype()));
  AOTIRT_RETURN_IF_ERROR(check_dtype(self, "self", "masked_scatter"));
  AOTIRT_ASSIGN_OR_RETURN(DimVector shape, ops::broadcast_shapes({mask.sizes(), self.sizes()}, "mask and self"));
  AOTIRT_ASSIGN_OR_RETURN(auto dm, dense_mask(device, stream, mask, shape));
  const int64_t count = dm.second;
  AOTIRT_ENSURE(count <= source.numel(), kInvalidArgument,
                "Number of elements of source < number of ones in mask (source has {}, mask has {} ones)",
                source.numel(), count);
  // The result is self expanded to the common shape, contiguous.
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl out, cuda_empty_contiguous(shape, self.dtype(), device));
  if (out.numel() > 0) AOTIRT_RETURN_IF_ERROR(cuda_copy(device, stream, out, self, false));
  if (count > 0) {
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl src, contiguous_on(device, stream, source));
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl positions, cuda_empty_contiguous(DimVector{count}, DType::kInt64, device));
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl c, cuda_empty_contiguous(DimVector{1}, DType::kInt64, device));
    int64_t* pos = static_cast<int64_t*>(positions.data_ptr());
    int64_t* cp = static_cast<int64_t*>(c.data_ptr());
    const int dt = dtype_code(DType::kBool);
    const int64_t n = dm.first.numel();
    TensorImpl hold;
    size_t bytes = 0;
    AOTIRT_CUDA_RETURN_IF_ERROR(cuda_select_nonzero(nullptr, bytes, dt, dm.first.data_ptr(), n, pos, cp, stream));
    AOTIRT_ASSIGN_OR_RETURN(void* temp, scratch(device, bytes, &hold));
    AOTIRT_CUDA_RETURN_IF_ERROR(cuda_select_nonzero(temp, bytes, dt, dm.first.data_ptr(), n, pos, cp, stream));
    AOTIRT_CUDA_RETURN_IF_ERROR(cuda_launch_scatter_positions(static_cast<int>(self.element_size()), out.data_ptr(),
                                                              src.data_ptr(), pos, count, stream));
  }
  *ret0 = new_handle(std::move(out));
  return Status();
}

// ---------------------------------------------------------------------------
// scatter, scatter_reduce, index_reduce.

bool same_view(const TensorImpl& a, const TensorImpl& b) {
  return a.storage().get() == b.storage().get() && a.storage_offset() == b.storage_offset() &&
         a.sizes() == b.sizes() && a.strides() == b.strides() && a.dtype() == b.dtype();
}

// |t| itself, or a contiguous copy of it when it shares |out|'s storage, so
// that writing |out| cannot change what is read from |t|.
Result<TensorImpl> apart_from(int device, cudaStream_t stream, const TensorImpl& out, const TensorImpl& t) {
  if (!t.storage() || t.storage().get() != out.storage().get() || t.numel() == 0) return t;
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl copy, cuda_empty_contiguous(t.sizes(), t.dtype(), device));
  AOTIRT_RETURN_IF_ERROR(cuda_copy(device, stream, copy, t, false));
  return copy;
}

// Sizes and strides with a 0-d tensor seen as [1], as torch's scatter does.
DimVector sizes_1d(const TensorImpl& t) { return t.dim() == 0 ? DimVector{1} : t.sizes(); }
DimVector strides_1d(const TensorImpl& t) { return t.dim() == 0 ? DimVector{1} : t.strides(); }

CudaScatterOp kernel_op(ops::ScatterReduce r) {
  switch (r) {
    case ops::ScatterReduce::kSum:
    case ops::ScatterReduce::kMean: return CudaScatterOp::kSum;
    case ops::ScatterReduce::kProd: return CudaScatterOp::kProd;
    case ops::ScatterReduce::kAmax: return CudaScatterOp::kAmax;
    case ops::ScatterReduce::kAmin: return CudaScatterOp::kAmin;
    default: return CudaScatterOp::kAssign;
  }
}

// One element past the farthest one |t| reaches from its data pointer.
int64_t span_of(const TensorImpl& t) {
  int64_t span = 1;
  for (int64_t d = 0; d < t.dim(); ++d) span += (t.sizes()[d] - 1) * t.strides()[d];
  return span;
}

// out (already holding self) combined with src / the scalar at |w|'s index
// positions; the reduction's identity first when self is left out, mean's
// division last. The bounds flag is read at the end.
Status run_scatter(int device, cudaStream_t stream, TensorImpl& out, const TensorImpl* src, uint64_t value_bits,
                   const TensorImpl& index, const CudaScatterWalk& w, ops::ScatterReduce reduce, bool include_self) {
  const int dt = dtype_code(out.dtype());
  const bool is64 = index.dtype() == DType::kInt64;
  const CudaScatterOp op = kernel_op(reduce);
  const int64_t dim = w.dim, limit = w.limit;
  AOTIRT_ASSIGN_OR_RETURN(BoundsFlag flag, new_flag(device, stream, [dim, limit](const int64_t* words) {
                            return bounds_error(words[1], dim, limit);
                          }));
  if (reduce != ops::ScatterReduce::kNone && !include_self) {
    AOTIRT_CUDA_RETURN_IF_ERROR(
        cuda_launch_scatter_identity(op, dt, out.data_ptr(), index.data_ptr(), is64, w, flag.ptr(), stream));
  }
  TensorImpl counts;
  int32_t* cp = nullptr;
  const bool mean = reduce == ops::ScatterReduce::kMean;
  if (mean) {
    const int64_t span = span_of(out);
    AOTIRT_ASSIGN_OR_RETURN(counts, cuda_empty_contiguous(DimVector{span}, DType::kInt32, device));
    cp = static_cast<int32_t*>(counts.data_ptr());
    AOTIRT_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(cp, 0, sizeof(int32_t) * span, stream));
  }
  AOTIRT_CUDA_RETURN_IF_ERROR(cuda_launch_scatter(op, dt, out.data_ptr(), src ? src->data_ptr() : nullptr, value_bits,
                                                  index.data_ptr(), is64, w, cp, flag.ptr(), stream));
  if (mean) {
    CudaScatterWalk ow;
    const DimVector os = sizes_1d(out), ost = strides_1d(out);
    ow.ndim = static_cast<int>(os.size());
    for (int64_t d = 0; d < os.size(); ++d) {
      ow.sizes[d] = os[d];
      ow.out_strides[d] = ost[d];
    }
    AOTIRT_CUDA_RETURN_IF_ERROR(cuda_launch_scatter_mean(dt, out.data_ptr(), cp, include_self ? 1 : 0, ow, stream));
  }
  return check_flag(stream, flag, [&](int64_t, int64_t* d, int64_t* size) {
    *d = dim;
    *size = limit;
  });
}

Status scatter_cuda(ops::ScatterArgs& a, double value) {
  TensorImpl& out = *a.out;
  AOTIRT_ASSIGN_OR_RETURN(std::unique_ptr<CudaOpScope> scope, CudaOpScope::enter(*a.self, "self"));
  const int device = scope->device();
  cudaStream_t stream = scope->stream();
  AOTIRT_RETURN_IF_ERROR(scope->check_same_device(out, "out"));
  AOTIRT_RETURN_IF_ERROR(scope->check_same_device(*a.index, "index"));
  if (a.src) AOTIRT_RETURN_IF_ERROR(scope->check_same_device(*a.src, "src"));
  AOTIRT_RETURN_IF_ERROR(check_rank(a.self->dim(), "'self'"));
  // An in-place scatter passes one tensor as self and out; any other overlap
  // with out is read from a copy.
  const bool in_place = same_view(out, *a.self);
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl self, apart_from(device, stream, out, *a.self));
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl index, apart_from(device, stream, out, *a.index));
  TensorImpl src;
  if (a.src) {
    AOTIRT_ASSIGN_OR_RETURN(src, apart_from(device, stream, out, *a.src));
  }
  AOTIRT_RETURN_IF_ERROR(ops::resize_output(&out, a.self->sizes(), "out"));
  if (!in_place && out.numel() > 0) AOTIRT_RETURN_IF_ERROR(cuda_copy(device, stream, out, self, false));
  if (index.numel() == 0 || out.numel() == 0) return Status();
  const DimVector isz = sizes_1d(index), ist = strides_1d(index), ost = strides_1d(out);
  CudaScatterWalk w;
  w.ndim = static_cast<int>(isz.size());
  w.dim = static_cast<int>(a.dim);
  w.limit = sizes_1d(out)[a.dim];
  const DimVector sst = a.src ? strides_1d(src) : DimVector();
  for (int64_t d = 0; d < isz.size(); ++d) {
    w.sizes[d] = isz[d];
    w.index_strides[d] = ist[d];
    w.out_strides[d] = ost[d];
    w.src_strides[d] = a.src ? sst[d] : 0;
  }
  uint64_t bits = 0;
  if (!a.src) store_from_double(&bits, out.dtype(), value);
  return run_scatter(device, stream, out, a.src ? &src : nullptr, bits, index, w, a.reduce, a.include_self);
}

// index_reduce is scatter_reduce with the vector index repeated along every
// other dim of source (stride 0 there).
Status index_reduce_cuda(const ops::IndexReduceArgs& a, AtenTensorHandle* ret0) {
  AOTIRT_REQUIRE_OUT(ret0);
  const TensorImpl &self = *a.self, &source = *a.source;
  AOTIRT_ASSIGN_OR_RETURN(std::unique_ptr<CudaOpScope> scope, CudaOpScope::enter(self, "self"));
  const int device = scope->device();
  cudaStream_t stream = scope->stream();
  AOTIRT_RETURN_IF_ERROR(scope->check_same_device(source, "source"));
  AOTIRT_RETURN_IF_ERROR(check_rank(self.dim(), "'self'"));
  TensorImpl index = *a.index;
  if (index.device().is_cpu()) {
    AOTIRT_ASSIGN_OR_RETURN(index, contiguous_on(device, stream, index));
  }
  AOTIRT_RETURN_IF_ERROR(scope->check_same_device(index, "index"));
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl out, cuda_empty_contiguous(self.sizes(), self.dtype(), device));
  if (out.numel() > 0) AOTIRT_RETURN_IF_ERROR(cuda_copy(device, stream, out, self, false));
  if (out.numel() > 0 && source.numel() > 0) {
    const DimVector ssz = sizes_1d(source), sst = strides_1d(source), ost = strides_1d(out);
    CudaScatterWalk w;
    w.ndim = static_cast<int>(ssz.size());
    w.dim = static_cast<int>(a.dim);
    w.limit = sizes_1d(self)[a.dim];
    for (int64_t d = 0; d < ssz.size(); ++d) {
      w.sizes[d] = ssz[d];
      w.src_strides[d] = sst[d];
      w.out_strides[d] = ost[d];
      w.index_strides[d] = 0;
    }
    w.index_strides[a.dim] = index.dim() == 0 ? 0 : index.strides()[0];
    AOTIRT_RETURN_IF_ERROR(run_scatter(device, stream, out, &source, 0, index, w, a.reduce, a.include_self));
  }
  *ret0 = new_handle(std::move(out));
  return Status();
}

}  // namespace
}  // namespace aotirt

using namespace aotirt;

extern "C" {

AOTITorchError aoti_torch_cuda_index_Tensor(AtenTensorHandle self, const AtenTensorHandle** indices,
                                            int64_t indices_len_, AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_ASSIGN_OR_RETURN(ops::IndexArgs a, ops::index_args(self, indices, indices_len_));
    return index_tensor(a, ret0);
  });
}

AOTITorchError aoti_torch_cuda_index_put(AtenTensorHandle self, const AtenTensorHandle** indices, int64_t indices_len_,
                                         AtenTensorHandle values, int32_t accumulate, AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_ASSIGN_OR_RETURN(ops::IndexArgs a, ops::index_args(self, indices, indices_len_));
    return index_put(a, values, accumulate != 0, ret0);
  });
}

AOTITorchError aoti_torch_cuda_nonzero(AtenTensorHandle self, AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&]() -> Status { return nonzero_shim(self, nullptr, 0, ret0); });
}

AOTITorchError aoti_torch_cuda_nonzero_static(AtenTensorHandle self, int64_t size, int64_t fill_value,
                                              AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_ENSURE(size >= 0, kInvalidArgument, "nonzero_static: 'size' must be an non-negative integer, got {}", size);
    return nonzero_shim(self, &size, fill_value, ret0);
  });
}

AOTITorchError aoti_torch_cuda_masked_select(AtenTensorHandle self, AtenTensorHandle mask,
                                             AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&]() -> Status { return masked_select(self, mask, ret0); });
}

AOTITorchError aoti_torch_cuda_masked_scatter(AtenTensorHandle self, AtenTensorHandle mask, AtenTensorHandle source,
                                              AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&]() -> Status { return masked_scatter(self, mask, source, ret0); });
}

AOTITorchError aoti_torch_cuda_scatter_src_out(AtenTensorHandle out, AtenTensorHandle self, int64_t dim,
                                               AtenTensorHandle index, AtenTensorHandle src) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_ENSURE(src != nullptr, kInvalidArgument, "'src' is a null tensor handle");
    AOTIRT_ASSIGN_OR_RETURN(ops::ScatterArgs a, ops::scatter_args(out, self, dim, index, src, nullptr, true));
    return scatter_cuda(a, 0.0);
  });
}

AOTITorchError aoti_torch_cuda_scatter_value_out(AtenTensorHandle out, AtenTensorHandle self, int64_t dim,
                                                 AtenTensorHandle index, double value) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_ASSIGN_OR_RETURN(ops::ScatterArgs a, ops::scatter_args(out, self, dim, index, nullptr, nullptr, true));
    // torch converts the value (checked) only when there is something to scatter.
    if (a.index->numel() > 0) AOTIRT_RETURN_IF_ERROR(ops::check_scalar_fits(value, false, a.self->dtype()));
    return scatter_cuda(a, value);
  });
}

AOTITorchError aoti_torch_cuda_scatter_reduce_two_out(AtenTensorHandle out, AtenTensorHandle self, int64_t dim,
                                                      AtenTensorHandle index, AtenTensorHandle src,
                                                      const char* reduce, int32_t include_self) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_ENSURE(src != nullptr, kInvalidArgument, "'src' is a null tensor handle");
    AOTIRT_ENSURE(reduce != nullptr, kInvalidArgument, "'reduce' is null");
    AOTIRT_ASSIGN_OR_RETURN(ops::ScatterArgs a,
                            ops::scatter_args(out, self, dim, index, src, reduce, include_self != 0));
    // torch's CUDA kernels multiply and compare no bools (its CPU ones do).
    const bool needs_arith = a.reduce == ops::ScatterReduce::kProd || a.reduce == ops::ScatterReduce::kAmax ||
                             a.reduce == ops::ScatterReduce::kAmin;
    AOTIRT_ENSURE(!(needs_arith && a.self->dtype() == DType::kBool), kUnimplemented,
                  "scatter_reduce \"{}\" is not implemented for bool on CUDA, as in torch", reduce);
    return scatter_cuda(a, 0.0);
  });
}

AOTITorchError aoti_torch_cuda_index_reduce(AtenTensorHandle self, int64_t dim, AtenTensorHandle index,
                                            AtenTensorHandle source, const char* reduce, int32_t include_self,
                                            AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_ASSIGN_OR_RETURN(ops::IndexReduceArgs a,
                            ops::index_reduce_args(self, dim, index, source, reduce, include_self != 0));
    return index_reduce_cuda(a, ret0);
  });
}

}  // extern "C"
