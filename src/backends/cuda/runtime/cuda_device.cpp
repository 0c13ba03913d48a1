#include "backends/cuda/runtime/cuda_device.h"

#include <cuda.h>
#include <dlfcn.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "backends/cuda/runtime/cuda_copy.h"
#include "backends/cuda/runtime/cuda_modules.h"
#include "backends/cuda/runtime/cuda_options.h"
#include "backends/cuda/runtime/cuda_run_checks.h"
#include "backends/cuda/ops/cuda_op_util.h"
#include "backends/cuda/runtime/cuda_status.h"
#include "backends/cuda/runtime/cuda_stream.h"
#include "base/file_util.h"
#include "backends/cuda/runtime/cuda_upload.h"
#include "base/log.h"
#include "base/status.h"

namespace aotirt {

Result<std::unique_ptr<CudaDevice>> CudaDevice::create(int index) {
  AOTIRT_RETURN_IF_ERROR(cuda_check_device_index(index));
  CudaDeviceProperties props;
  int smem = 0;
  AOTIRT_CUDA_RETURN_IF_ERROR(cudaDeviceGetAttribute(&props.major, cudaDevAttrComputeCapabilityMajor, index));
  AOTIRT_CUDA_RETURN_IF_ERROR(cudaDeviceGetAttribute(&props.minor, cudaDevAttrComputeCapabilityMinor, index));
  AOTIRT_CUDA_RETURN_IF_ERROR(cudaDeviceGetAttribute(&props.sm_count, cudaDevAttrMultiProcessorCount, index));
  AOTIRT_CUDA_RETURN_IF_ERROR(cudaDeviceGetAttribute(&smem, cudaDevAttrMaxSharedMemoryPerBlockOptin, index));
  props.shared_memory_per_block_optin = static_cast<size_t>(smem);
  AOTIRT_ASSIGN_OR_RETURN(std::unique_ptr<CudaAllocator> alloc, CudaAllocator::create(index));
  return std::unique_ptr<CudaDevice>(new CudaDevice(index, std::move(props), std::move(alloc)));
}

const CudaDeviceIdentity& CudaDevice::identity() const {
  std::call_once(identity_once_, [this] {
    cudaDeviceProp p;
    if (cudaGetDeviceProperties(&p, index_) == cudaSuccess) {
      identity_.name = p.name;
      identity_.total_memory = p.totalGlobalMem;
    } else {
      cudaGetLastError();
      identity_.name = "unknown GPU";
    }
  });
  return identity_;
}

std::string CudaDevice::description() const {
  const CudaDeviceIdentity& id = identity();
  return fmt::format("cuda:{} ({}, sm_{}{}, {} SMs, {:.1f} GiB)", index_, id.name, props_.major, props_.minor,
                     props_.sm_count, static_cast<double>(id.total_memory) / (1024.0 * 1024.0 * 1024.0));
}

Status CudaDevice::copy(const TensorImpl& dst, const TensorImpl& src, bool non_blocking) {
  AOTIRT_ASSIGN_OR_RETURN(cudaStream_t stream, cuda_current_stream(index_));
  return cuda_copy(index_, stream, dst, src, non_blocking);
}

Status CudaDevice::zero(const TensorImpl& dst) {
  AOTIRT_ASSIGN_OR_RETURN(cudaStream_t stream, cuda_current_stream(index_));
  return cuda_zero(index_, stream, dst);
}

Result<std::unique_ptr<HostUpload>> CudaDevice::begin_host_upload(const uint8_t* data, size_t size,
                                                                  const std::string& path, uint64_t file_offset) {
  return cuda_begin_upload(index_, data, size, path, file_offset, cuda_upload_options());
}

Status CudaDevice::synchronize() {
  AOTIRT_ASSIGN_OR_RETURN(cudaStream_t stream, cuda_current_stream(index_));
  AOTIRT_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream));
  return Status();
}

Result<std::unique_ptr<DeviceReadback>> CudaDevice::read_back(const TensorImpl& src) {
  AOTIRT_ENSURE(src.defined() && src.is_contiguous(), kInvalidArgument, "read back of {}",
                src.defined() ? "a strided tensor" : "an undefined tensor");
  AOTIRT_ENSURE(src.device() == id(), kInvalidArgument, "read back of a tensor on {} from {}",
                src.device().to_string(), id().to_string());
  if (src.nbytes() > CudaReadbackPool::kSlotBytes) return Device::read_back(src);
  AOTIRT_ASSIGN_OR_RETURN(cudaStream_t stream, cuda_current_stream(index_));
  return readback_pool_.read(stream, src.data_ptr(), src.nbytes());
}

std::unique_ptr<Device::RunScope> CudaDevice::enter_run() { return std::make_unique<CudaRunScope>(this); }

void* CudaDevice::current_stream() {
  Result<cudaStream_t> s = cuda_current_stream(index_);
  return s.ok() ? static_cast<void*>(s.value()) : nullptr;
}

Status CudaDevice::prepare_model_load() {
  // Model libraries built without libtorch import cudart functions but carry
  // no NEEDED entry for libcudart: they must find them in global scope. That
  // is libaotirt.so itself once it is global (it exports the static runtime
  // it links), or an executable that links aotirt statically with its
  // symbols exported.
  dlerror();
  if (!dlsym(RTLD_DEFAULT, "cudaMalloc") || !dlsym(RTLD_DEFAULT, "cudaLaunchKernel"))
    return AOTIRT_STATUS(kInternal,
                         "the CUDA runtime's functions are not in the global symbol scope, so a CUDA model "
                         "library cannot resolve them; link aotirt as libaotirt.so, or export the symbols of "
                         "an executable that links it statically (-rdynamic)");
  // The model library uses the primary context through the runtime; make it
  // current on this thread so its first calls do not pay for creation.
  CudaDeviceScope scope(index_);
  AOTIRT_RETURN_IF_ERROR(scope.status());
  AOTIRT_CUDA_RETURN_IF_ERROR(cudaFree(nullptr));
  return Status();
}

namespace {
// cuBLASLt (and its handle) for GEMM imports that may need it. cuDNN opens
// at the first convolution that needs it: the imports cannot tell a patch
// embedding, which aotirt's own kernels run, from a CNN's convolutions, and
// cuDNN's libraries hold a lot of host memory once loaded, where loading
// them at the first convolution costs only the overlap with the rest of the
// load.
std::vector<std::thread> cuda_prewarm(int index, const std::vector<std::string>& imported) {
  bool gemm = false;
  for (const std::string& s : imported) {
    if (s.rfind("aoti_torch_cuda_", 0) != 0) continue;
    if (s.find("mm_out") != std::string::npos) gemm = true;
  }
  gemm = gemm && cuda_matmul_prewarm_useful(imported);
  std::vector<std::thread> threads;
  const int device = index;
  // Failures are not reported here: the op that needs the library reports
  // them when it runs.
  auto traced = [](const char* what, Status (*fn)(int), int device) {
    const auto start = std::chrono::steady_clock::now();
    Status s = fn(device);
    if (log_level() <= LogLevel::kDebug) {
      const MemoryUsage m = process_memory_usage();
      AOTIRT_LOG(kDebug, "prewarm {}: {:.1f} ms{} (RSS {} MiB, peak {} MiB)", what,
                 std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count(),
                 s.ok() ? "" : " failed: " + s.to_string(), m.rss >> 20, m.peak_rss >> 20);
    }
  };
  if (gemm) threads.emplace_back([device, traced] { traced("cuBLASLt", cuda_matmul_prewarm, device); });
  return threads;
}
}  // namespace

Status cuda_check_compute_capability(const std::string& package_cc, int major, int minor,
                                     const std::string& gpu_name) {
  // Digits only: "90" -> 9.0, "100" -> 10.0, "90a" -> 9.0.
  std::string digits;
  for (char c : package_cc) {
    if (c >= '0' && c <= '9')
      digits += c;
    else
      break;
  }
  if (digits.size() < 2)
    return AOTIRT_STATUS(kDataLoss, "the package's AOTI_COMPUTE_CAPABILITY '{}' is not a compute capability",
                         package_cc);
  int pkg_major = std::atoi(digits.substr(0, digits.size() - 1).c_str());
  int pkg_minor = digits.back() - '0';
  if (pkg_major == major && pkg_minor == minor) return Status();
  return AOTIRT_STATUS(kIncompatible,
                       "the package was compiled for GPUs of compute capability {}.{} (sm_{}{}), but {} is {}.{} "
                       "(sm_{}{}): its kernels cannot run here. Export the model again on a GPU of this kind",
                       pkg_major, pkg_minor, pkg_major, pkg_minor, gpu_name, major, minor, major, minor);
}

void CudaDevice::release_caches() {
  {
    CudaDeviceScope scope(index_);
    // Nothing may still use what the caches hold; the streams their buffers
    // were used on may be gone (callers destroy their own streams).
    if (cudaDeviceSynchronize() != cudaSuccess) cudaGetLastError();
    CudaAllocator::SynchronousFrees sync;
    op_caches_.clear();
  }
  allocator_->trim();
  AOTIRT_LOG(kDebug, "cuda:{}: the ops' caches emptied as the last model unloaded", index_);
}

Status CudaDevice::check_package(const std::vector<std::pair<std::string, std::string>>& metadata) {
  for (const auto& kv : metadata) {
    if (kv.first != "AOTI_COMPUTE_CAPABILITY") continue;
    // The GPU's name only goes into a refusal, so it is read only then.
    Status s = cuda_check_compute_capability(kv.second, props_.major, props_.minor, "");
    if (!s.ok()) s = cuda_check_compute_capability(kv.second, props_.major, props_.minor,
                                                   fmt::format("cuda:{} ({})", index_, identity().name));
    if (!s.ok() && s.code() == StatusCode::kIncompatible) {
      if (cuda_options().allow_arch_mismatch) {
        AOTIRT_LOG(kWarning, "{} (loading anyway: AOTIRT_CUDA_ALLOW_ARCH_MISMATCH=1)", s.message());
        return Status();
      }
    }
    return s;
  }
  return Status();
}

namespace {

class CudaGraph final : public DeviceGraph {
 public:
  CudaGraph(int device, cudaGraph_t graph, cudaGraphExec_t exec, std::shared_ptr<CudaGraphPool> pool)
      : device_(device), graph_(graph), exec_(exec), pool_(std::move(pool)) {}
  ~CudaGraph() override {
    CudaDeviceScope scope(device_);
    cudaGraphExecDestroy(exec_);
    cudaGraphDestroy(graph_);
    cudaGetLastError();
  }
  Status replay() override {
    AOTIRT_ASSIGN_OR_RETURN(cudaStream_t stream, cuda_current_stream(device_));
    CudaDeviceScope scope(device_);
    AOTIRT_RETURN_IF_ERROR(scope.status());
    AOTIRT_CUDA_RETURN_IF_ERROR(cudaGraphLaunch(exec_, stream));
    return Status();
  }
  Status retarget_copy(void* dst, const void* src, size_t bytes) override {
    if (!copies_indexed_) AOTIRT_RETURN_IF_ERROR(index_copies());
    auto it = copies_.find(dst);
    if (it == copies_.end())
      return AOTIRT_STATUS(kNotFound, "the CUDA graph holds no plain copy into {}", dst);
    CudaDeviceScope scope(device_);
    AOTIRT_RETURN_IF_ERROR(scope.status());
    AOTIRT_CUDA_RETURN_IF_ERROR(
        cudaGraphExecMemcpyNodeSetParams1D(exec_, it->second, dst, src, bytes, cudaMemcpyDeviceToDevice));
    return Status();
  }

 private:
  // Finds the graph's 1-d memcpy nodes by destination.
  Status index_copies() {
    size_t n = 0;
    AOTIRT_CUDA_RETURN_IF_ERROR(cudaGraphGetNodes(graph_, nullptr, &n));
    std::vector<cudaGraphNode_t> nodes(n);
    if (n) AOTIRT_CUDA_RETURN_IF_ERROR(cudaGraphGetNodes(graph_, nodes.data(), &n));
    for (cudaGraphNode_t node : nodes) {
      cudaGraphNodeType type;
      if (cudaGraphNodeGetType(node, &type) != cudaSuccess || type != cudaGraphNodeTypeMemcpy) continue;
      cudaMemcpy3DParms p = {};
      if (cudaGraphMemcpyNodeGetParams(node, &p) != cudaSuccess) continue;
      if (p.extent.height <= 1 && p.extent.depth <= 1) copies_.emplace(p.dstPtr.ptr, node);
    }
    cudaGetLastError();
    copies_indexed_ = true;
    return Status();
  }

  int device_;
  cudaGraph_t graph_;
  cudaGraphExec_t exec_;
  std::shared_ptr<CudaGraphPool> pool_;  // retained: the graph's memory
  bool copies_indexed_ = false;
  std::map<void*, cudaGraphNode_t> copies_;
};

}  // namespace

Result<std::unique_ptr<DeviceGraph>> CudaDevice::capture(const std::function<Status()>& body) {
  AOTIRT_ASSIGN_OR_RETURN(cudaStream_t stream, cuda_current_stream(index_));
  CudaDeviceScope scope(index_);
  AOTIRT_RETURN_IF_ERROR(scope.status());
  auto pool = std::make_shared<CudaGraphPool>(index_);
  AOTIRT_RETURN_IF_ERROR(allocator_->begin_capture(pool));
  // Relaxed: the recording thread may still make calls that queue nothing
  // (cudaMalloc for the graph's pool, event queries, library set-up).
  cudaError_t err = cudaStreamBeginCapture(stream, cudaStreamCaptureModeRelaxed);
  if (err != cudaSuccess) {
    allocator_->end_capture();
    cudaGetLastError();
    return cuda_error_status(err, "cudaStreamBeginCapture", __FILE__, __LINE__);
  }
  Status body_status = body();
  cudaGraph_t graph = nullptr;
  err = cudaStreamEndCapture(stream, &graph);
  allocator_->end_capture();
  if (!body_status.ok() || err != cudaSuccess) {
    if (graph) cudaGraphDestroy(graph);
    cudaGetLastError();
    if (!body_status.ok()) return body_status;
    Status s = cuda_error_status(err, "cudaStreamEndCapture", __FILE__, __LINE__);
    return s.annotate(
        "the recorded work did something a CUDA graph cannot hold (such as waiting for the device or using "
        "the legacy stream)");
  }
  cudaGraphExec_t exec = nullptr;
  err = cudaGraphInstantiateWithFlags(&exec, graph, 0);
  if (err != cudaSuccess) {
    cudaGraphDestroy(graph);
    cudaGetLastError();
    return cuda_error_status(err, "cudaGraphInstantiateWithFlags", __FILE__, __LINE__);
  }
  // The graph is kept: retarget_copy() names its nodes.
  return std::unique_ptr<DeviceGraph>(new CudaGraph(index_, graph, exec, std::move(pool)));
}

Result<CudaDevice*> cuda_device(int index) {
  // The ops ask on every call: a device once made is found without the
  // registry's lock (it lives until the process exits).
  static std::atomic<CudaDevice*> made[kCudaMaxDevices] = {};
  const bool cacheable = index >= 0 && index < kCudaMaxDevices;
  if (cacheable)
    if (CudaDevice* d = made[index].load(std::memory_order_acquire)) return d;
  AOTIRT_ASSIGN_OR_RETURN(Device * d, get_device(DeviceId{DeviceType::kCuda, index}));
  auto* cuda = static_cast<CudaDevice*>(d);
  if (cacheable) made[index].store(cuda, std::memory_order_release);
  return cuda;
}

namespace {

// The driver creates the first device's primary context on a thread of its
// own as soon as get_device decides to create it, so that the runtime's own
// start (its entry points, aotirt's kernel images, the probe) runs beside it;
// the runtime then finds the context made (bench/notes.md, row 46). The
// thread is leaked on purpose: a std::thread still running at exit
// would end the process with std::terminate; every path joins it first.
std::thread* g_driver_context = nullptr;
std::atomic<int> g_driver_context_index{-1};
std::once_flag g_driver_context_once;

// For the debug trace of a creation: where its time goes (the runtime's
// start in the probe, the context, the allocator) against the driver's thread.
using Clock = std::chrono::steady_clock;
std::atomic<int64_t> g_create_start_ns{0};  // 0: no creation begun
std::atomic<double> g_driver_context_ready_ms{-1.0};
int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count();
}
double ms_since(int64_t start_ns) { return static_cast<double>(now_ns() - start_ns) / 1e6; }
// Close to the process's start for a program linked to the library: what
// comes before a creation begins (the dynamic loader, the caller's own work).
const int64_t g_library_loaded_ns = now_ns();

void cuda_begin_create(int index) {
  std::call_once(g_driver_context_once, [index] {
    g_create_start_ns = now_ns();
    g_driver_context_index = index;
    g_driver_context = new std::thread([index] {
      void* h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
      if (!h) return;
      auto init = reinterpret_cast<decltype(&cuInit)>(dlsym(h, "cuInit"));
      auto get = reinterpret_cast<decltype(&cuDeviceGet)>(dlsym(h, "cuDeviceGet"));
      auto retain = reinterpret_cast<decltype(&cuDevicePrimaryCtxRetain)>(dlsym(h, "cuDevicePrimaryCtxRetain"));
      CUdevice dev = 0;
      CUcontext ctx = nullptr;
      // Kept retained for the process, like the runtime's own reference.
      if (init && get && retain && init(0) == CUDA_SUCCESS && get(&dev, index) == CUDA_SUCCESS &&
          retain(&ctx, dev) == CUDA_SUCCESS)
        g_driver_context_ready_ms = ms_since(g_create_start_ns.load());
    });
  });
}

void join_driver_context() {
  static std::once_flag joined;
  std::call_once(joined, [] {
    if (g_driver_context && g_driver_context->joinable()) g_driver_context->join();
  });
}

std::atomic<double> g_probed_ms{-1.0};

Result<int> cuda_probe() {
  Result<int> n = cuda_device_count();
  const int64_t begun = g_create_start_ns.load();
  if (begun && g_probed_ms.load() < 0) g_probed_ms = ms_since(begun);
  // No create() follows for an absent device: finish the thread here.
  if (!n.ok() || g_driver_context_index.load() >= *n) join_driver_context();
  return n;
}
Result<std::unique_ptr<Device>> cuda_create(int index) {
  const int64_t start = now_ns();
  Result<std::unique_ptr<CudaDevice>> d = CudaDevice::create(index);
  const double created = ms_since(start);
  join_driver_context();
  const int64_t begun = g_create_start_ns.load();
  if (begun)
    AOTIRT_LOG(kDebug,
               "cuda:{} creation: begun {:.1f} ms after the library loaded; runtime probed at {:.1f} ms, device made "
               "{:.1f} ms after, joined at {:.1f} ms; the driver's context {}",
               index, static_cast<double>(begun - g_library_loaded_ns) / 1e6, g_probed_ms.load(), created, ms_since(begun),
               g_driver_context_ready_ms.load() >= 0
                   ? fmt::format("ready at {:.1f} ms", g_driver_context_ready_ms.load())
                   : std::string("not made by its thread"));
  if (!d.ok()) return d.take_status();
  return std::unique_ptr<Device>(std::move(d).value());
}
}  // namespace

const BackendInfo& cuda_backend_info() {
  static const BackendInfo info{DeviceType::kCuda, "cuda", cuda_probe,        cuda_create,
                                cuda_prewarm,       cuda_begin_create, true, cuda_library_imports};
  return info;
}

}  // namespace aotirt
