#include "backends/cuda/launch/cuda_op_replay.h"

#include <atomic>

#include "backends/cuda/runtime/cuda_options.h"
#include "backends/cuda/runtime/cuda_status.h"
#include "backends/cuda/runtime/cuda_stream.h"
#include "base/log.h"
#include "shim/common/shim_profile.h"

namespace aotirt {
namespace {

// Recordings are made on a stream of their own, so no other thread's work on
// the caller's stream can fall into a recording; one recording at a time.
std::mutex g_record_mutex;
cudaStream_t g_record_streams[kCudaMaxDevices] = {};

Result<cudaStream_t> record_stream(int device) {
  if (!g_record_streams[device]) {
    cudaStream_t s = nullptr;
    AOTIRT_CUDA_RETURN_IF_ERROR(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    g_record_streams[device] = s;  // kept for the process, like the device's own streams
  }
  return g_record_streams[device];
}

}  // namespace

bool cuda_op_replay_enabled() { return cuda_options().op_replay; }

CudaOpReplay::~CudaOpReplay() {
  for (auto& kv : entries_)
    if (kv.second.exec) cudaGraphExecDestroy(kv.second.exec);
}

int64_t CudaOpReplay::recordings() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return recordings_;
}

int64_t CudaOpReplay::replays() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return replays_;
}

Status CudaOpReplay::run_impl(int device, const CudaReplayKey& key, cudaStream_t stream, void* fn, Thunk thunk) {
  if (!cuda_op_replay_enabled() || never_record_) return thunk(fn, stream);
  // Inside a larger recording (aotirt's CUDA graphs or the caller's own) the
  // call itself is what gets recorded.
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(stream, &capture) != cudaSuccess) {
    cudaGetLastError();
    return thunk(fn, stream);
  }
  if (capture != cudaStreamCaptureStatusNone) return thunk(fn, stream);

  std::unique_lock<std::mutex> lock(mutex_);
  ++tick_;
  auto found = entries_.find(key);
  if (found != entries_.end() && found->second.exec) {
    found->second.last_use = tick_;
    ++replays_;
    // The lock is held through the launch: an eviction must not destroy the
    // executable graph between lookup and launch.
    ShimProfileScope profile(label_);
    AOTIRT_CUDA_RETURN_IF_ERROR(cudaGraphLaunch(found->second.exec, stream));
    return Status();
  }
  if (found == entries_.end()) {
    // First sight of this key: remember it, call directly. A key that never
    // repeats (new addresses every call) costs no recording.
    if (entries_.size() >= static_cast<size_t>(kCudaReplayEntries)) {
      auto victim = entries_.begin();
      for (auto it = entries_.begin(); it != entries_.end(); ++it)
        if (it->second.last_use < victim->second.last_use) victim = it;
      if (victim->second.exec) {
        cudaGraphExecDestroy(victim->second.exec);  // freed once an in-flight launch ends
        static std::atomic<int> logged{0};
        if (logged.fetch_add(1) < 8)
          AOTIRT_LOG(kDebug, "{}: a recording was evicted by new arguments (more than {} argument sets)", label_,
                     kCudaReplayEntries);
      }
      entries_.erase(victim);
    }
    entries_[key].last_use = tick_;
    lock.unlock();
    return thunk(fn, stream);
  }
  Entry* hit = &found->second;

  // Second sight: record the call and launch the recording.
  hit->last_use = tick_;
  cudaGraph_t graph = nullptr;
  Status called = AOTIRT_STATUS(kUnavailable, "not recorded");
  cudaError_t ended = cudaErrorUnknown;
  {
    std::lock_guard<std::mutex> record_lock(g_record_mutex);
    Result<cudaStream_t> rs = record_stream(device);
    // The recording holds kernels and arguments only; the launch on |stream|
    // orders it after the caller's earlier work.
    // Thread-local mode: a library call that allocates or queries while
    // recording refuses the recording, and the site keeps calling directly.
    if (rs.ok() && cudaStreamBeginCapture(*rs, cudaStreamCaptureModeThreadLocal) == cudaSuccess) {
      called = thunk(fn, *rs);
      ended = cudaStreamEndCapture(*rs, &graph);
    }
  }
  cudaGraphExec_t exec = nullptr;
  cudaError_t instantiated = cudaErrorUnknown;
  if (called.ok() && ended == cudaSuccess && graph) {
    instantiated = cudaGraphInstantiate(&exec, graph, 0);
    if (instantiated != cudaSuccess) exec = nullptr;
  }
  if (graph) cudaGraphDestroy(graph);
  if (!exec) {
    cudaGetLastError();
    AOTIRT_LOG(kDebug, "{}: not recorded (call: {}; end of capture: {}; instantiation: {}); calling directly",
               label_, called.to_string(), cudaGetErrorName(ended), cudaGetErrorName(instantiated));
    never_record_ = true;
    lock.unlock();
    return thunk(fn, stream);
  }
  hit->exec = exec;
  ++recordings_;
  AOTIRT_CUDA_RETURN_IF_ERROR(cudaGraphLaunch(exec, stream));
  return Status();
}

}  // namespace aotirt
