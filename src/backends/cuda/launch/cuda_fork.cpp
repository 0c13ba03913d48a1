#include "backends/cuda/launch/cuda_fork.h"

#include "backends/cuda/runtime/cuda_stream.h"

namespace aotirt {
namespace {

// One device's side streams and events for one thread (owned; destroyed
// when the thread ends).
struct ForkSet {
  bool made = false;
  cudaStream_t side[kCudaMaxForks - 1] = {};
  cudaEvent_t forked = nullptr;
  cudaEvent_t done[kCudaMaxForks - 1] = {};

  ~ForkSet() {
    if (!made) return;
    for (cudaStream_t s : side)
      if (s) cudaStreamDestroy(s);
    for (cudaEvent_t e : done)
      if (e) cudaEventDestroy(e);
    if (forked) cudaEventDestroy(forked);
  }
};

struct ThreadForks {
  ForkSet devices[kCudaMaxDevices];
};

cudaError_t fork_set(ForkSet** out) {
  int device = 0;
  cudaError_t err = cudaGetDevice(&device);
  if (err != cudaSuccess) return err;
  if (device < 0 || device >= kCudaMaxDevices) return cudaErrorInvalidDevice;
  thread_local ThreadForks forks;
  ForkSet& f = forks.devices[device];
  if (!f.made) {
    ForkSet fresh;
    // Made whole or not at all: a partial set is destroyed with |fresh|.
    fresh.made = true;
    err = cudaEventCreateWithFlags(&fresh.forked, cudaEventDisableTiming);
    for (int i = 0; err == cudaSuccess && i < kCudaMaxForks - 1; ++i) {
      err = cudaStreamCreateWithFlags(&fresh.side[i], cudaStreamNonBlocking);
      if (err == cudaSuccess) err = cudaEventCreateWithFlags(&fresh.done[i], cudaEventDisableTiming);
    }
    if (err != cudaSuccess) return err;
    f = fresh;
    fresh.made = false;  // |f| owns them now
  }
  *out = &f;
  return cudaSuccess;
}

}  // namespace

cudaError_t cuda_fork_prepare() {
  ForkSet* f = nullptr;
  return fork_set(&f);
}

cudaError_t cuda_fork(cudaStream_t stream, int count, cudaStream_t* streams) {
  if (count < 1 || count > kCudaMaxForks || !streams) return cudaErrorInvalidValue;
  // Until forked, every branch is |stream| itself, so a join after a
  // failure here touches no stream it should not.
  for (int i = 0; i < count; ++i) streams[i] = stream;
  if (count == 1) return cudaSuccess;
  ForkSet* f = nullptr;
  cudaError_t err = fork_set(&f);
  if (err != cudaSuccess) return err;
  err = cudaEventRecord(f->forked, stream);
  for (int i = 1; err == cudaSuccess && i < count; ++i) {
    err = cudaStreamWaitEvent(f->side[i - 1], f->forked, 0);
    if (err == cudaSuccess) streams[i] = f->side[i - 1];
  }
  return err;
}

cudaError_t cuda_join(cudaStream_t stream, int count, const cudaStream_t* streams) {
  if (count < 1 || count > kCudaMaxForks || !streams) return cudaErrorInvalidValue;
  if (count == 1) return cudaSuccess;
  ForkSet* f = nullptr;
  cudaError_t err = fork_set(&f);
  if (err != cudaSuccess) return err;
  cudaError_t first = cudaSuccess;
  // Every branch is joined, whatever failed before.
  for (int i = 1; i < count; ++i) {
    err = cudaEventRecord(f->done[i - 1], streams[i]);
    if (err == cudaSuccess) err = cudaStreamWaitEvent(stream, f->done[i - 1], 0);
    if (first == cudaSuccess) first = err;
  }
  return first;
}

}  // namespace aotirt
