#include "backends/cuda/launch/cuda_l2_prefetch.h"

#include <cstdlib>
#include <cstring>

#include "backends/cuda/runtime/cuda_options.h"
#include "backends/cuda/runtime/cuda_stream.h"
#include "backends/cuda/ops/cuda_op_kernels.h"

namespace aotirt {
namespace {

// This thread's branch stream and events for one device (owned; destroyed
// when the thread ends). A thread's own, so that captures on two threads
// never share them.
struct PrefetchSet {
  bool made = false;
  cudaStream_t side = nullptr;
  cudaEvent_t mark = nullptr, done = nullptr;
  unsigned long long mark_capture = 0;  // the capture the mark belongs to; 0: none
  ~PrefetchSet() {
    if (!made) return;
    if (side) cudaStreamDestroy(side);
    if (mark) cudaEventDestroy(mark);
    if (done) cudaEventDestroy(done);
  }
};

cudaError_t prefetch_set(PrefetchSet** out) {
  int device = 0;
  cudaError_t err = cudaGetDevice(&device);
  if (err != cudaSuccess) return err;
  if (device < 0 || device >= kCudaMaxDevices) return cudaErrorInvalidDevice;
  thread_local PrefetchSet sets[kCudaMaxDevices];
  PrefetchSet& s = sets[device];
  if (!s.made) {
    // Made whole or not at all. Stream and event creation are allowed while
    // another stream is captured (relaxed mode, as aotirt's captures are).
    PrefetchSet fresh;
    fresh.made = true;
    err = cudaStreamCreateWithFlags(&fresh.side, cudaStreamNonBlocking);
    if (err == cudaSuccess) err = cudaEventCreateWithFlags(&fresh.mark, cudaEventDisableTiming);
    if (err == cudaSuccess) err = cudaEventCreateWithFlags(&fresh.done, cudaEventDisableTiming);
    if (err != cudaSuccess) return err;
    s = fresh;
    fresh.made = false;  // |s| owns them now
  }
  *out = &s;
  return cudaSuccess;
}

}  // namespace

bool cuda_l2_prefetch_enabled() { return cuda_options().enabled(CudaFeature::kL2Prefetch); }

cudaError_t cuda_l2_prefetch_capture(cudaStream_t stream, unsigned long long* capture) {
  *capture = 0;
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  unsigned long long id = 0;
  cudaError_t err = cudaStreamGetCaptureInfo(stream, &status, &id);
  if (err == cudaSuccess && status == cudaStreamCaptureStatusActive) *capture = id;
  return err;
}

cudaError_t cuda_l2_prefetch_mark(cudaStream_t stream, unsigned long long capture) {
  if (capture == 0 || !cuda_l2_prefetch_enabled()) return cudaSuccess;
  PrefetchSet* s = nullptr;
  cudaError_t err = prefetch_set(&s);
  if (err != cudaSuccess) return err;
  s->mark_capture = 0;
  err = cudaEventRecord(s->mark, stream);
  if (err == cudaSuccess) s->mark_capture = capture;
  return err;
}

cudaError_t cuda_l2_prefetch(cudaStream_t stream, unsigned long long capture, const void* p, size_t bytes) {
  if (capture == 0 || !cuda_l2_prefetch_enabled() || !p || bytes < kCudaL2PrefetchMinBytes ||
      bytes > kCudaL2PrefetchMaxBytes)
    return cudaSuccess;
  PrefetchSet* s = nullptr;
  cudaError_t err = prefetch_set(&s);
  if (err != cudaSuccess) return err;
  // A mark of an earlier capture (or none) names no point of this one.
  if (s->mark_capture != capture) return cudaSuccess;
  err = cudaStreamWaitEvent(s->side, s->mark, 0);
  if (err != cudaSuccess) return err;
  err = cuda_launch_l2_prefetch(p, bytes, s->side);
  // Joined whatever happened: a capture with a branch left unjoined is
  // invalid.
  cudaError_t joined = cudaEventRecord(s->done, s->side);
  if (joined == cudaSuccess) joined = cudaStreamWaitEvent(stream, s->done, 0);
  return err != cudaSuccess ? err : joined;
}

}  // namespace aotirt
