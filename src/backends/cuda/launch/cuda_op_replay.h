// Replays of cuBLASLt and cuDNN calls. Their host work per call (most of it
// in cublasLtMatmul and cudnnBackendExecute) is larger than the GPU time of
// the small GEMMs and convolutions a model runs at batch 1, so without CUDA
// graphs a model's steady state is bound by it. A call site
// (one cached plan) whose call repeats with the same arguments -- a steady
// state does, since the caching allocator hands the same addresses to the same
// tensors run after run -- is recorded as a CUDA graph on its second call and
// replayed with one cudaGraphLaunch from the third on. The replay runs the
// kernels the library launched, with the same arguments, so results are the
// same. AOTIRT_CUDA_OP_REPLAY=0 turns it off.
#pragma once

#include <cuda_runtime_api.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <type_traits>
#include <unordered_map>

#include "base/status.h"

namespace aotirt {

// A call's arguments: every pointer and host scalar the library reads. The
// plan the site belongs to fixes the rest (shapes, strides, algorithm).
using CudaReplayKey = std::array<uint64_t, 6>;

// Whether replays are on (AOTIRT_CUDA_OP_REPLAY, default on).
bool cuda_op_replay_enabled();

// Argument sets one site keeps recordings for. A site is one plan (one
// shape), which every layer of a model with repeated layers shares, each
// layer with its own weights: a site sees one argument set a layer, two
// while the caller holds the previous run's outputs. Past this many, the
// set unused for longest is dropped. (Eight, the first size, was fewer than
// GPT-2's 12 layers: the 12 sets of a call site came round in turn, each
// evicted before its second call, so none was ever replayed.)
constexpr int kCudaReplayEntries = 256;

// One call site. Thread-safe; never destroyed while a plan uses it.
class CudaOpReplay {
 public:
  // |label| (static storage) names the replay in the shim profile.
  explicit CudaOpReplay(const char* label) : label_(label) {}
  ~CudaOpReplay();
  CudaOpReplay(const CudaOpReplay&) = delete;
  CudaOpReplay& operator=(const CudaOpReplay&) = delete;

  // Runs |call| for |key| on |stream| of CUDA device |device|: calls it, or
  // records it (on a private stream, which |call| must use instead of
  // |stream|) and launches the recording, or launches an earlier recording.
  // Calls it directly while |stream| is being captured into a larger graph.
  template <class F>
  Status run(int device, const CudaReplayKey& key, cudaStream_t stream, F&& call) {
    using Fn = std::remove_reference_t<F>;  // |call| may be an lvalue
    return run_impl(device, key, stream, &call, [](void* f, cudaStream_t s) { return (*static_cast<Fn*>(f))(s); });
  }

  // Recordings made and calls replayed so far (for tests).
  int64_t recordings() const;
  int64_t replays() const;

 private:
  using Thunk = Status (*)(void*, cudaStream_t);
  Status run_impl(int device, const CudaReplayKey& key, cudaStream_t stream, void* fn, Thunk thunk);

  struct Entry {
    uint64_t last_use = 0;
    cudaGraphExec_t exec = nullptr;  // null until the second call
  };
  struct KeyHash {
    size_t operator()(const CudaReplayKey& k) const {
      uint64_t h = 0x9e3779b97f4a7c15ull;
      for (uint64_t v : k) h = (h ^ v) * 0x100000001b3ull + (h >> 29);
      return static_cast<size_t>(h);
    }
  };
  const char* label_;
  mutable std::mutex mutex_;
  std::unordered_map<CudaReplayKey, Entry, KeyHash> entries_;
  uint64_t tick_ = 0;
  // A recording was refused (the library synchronised or allocated):
  // the site calls directly from then on.
  std::atomic<bool> never_record_{false};
  int64_t recordings_ = 0, replays_ = 0;
};

}  // namespace aotirt
