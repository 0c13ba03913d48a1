// A hand-written stand-in for an AOTInductor model library, for unit tests of
// the loader's handle ownership only (real models are tested with packages
// that torch exports). It exports the container C API and imports aotirt's
// shims, like a generated library. Run returns ONE output handle in BOTH
// output slots, as generated code does when two outputs alias.
//
// Like a generated container it is safe to run from several threads at once:
// it keeps a pool of num_models runners and a Run waits for a free one.
//
// One source, two libraries: aotirt_fake_model (tests/CMakeLists.txt) reports
// container creation and deletion through aoti_torch_warn, which
// model_lifetime_test captures with aotirt's log sink. aotirt_concurrent_fake_model
// (tests/sanitize) is built with AOTIRT_FAKE_MODEL_QUIET: its tests load and
// unload models on several threads through the public API, which has no log
// sink, so every report would be a line on stderr.
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>

#include "shim/shim_abi.h"

namespace {

struct Container {
  std::mutex mu;
  std::condition_variable cv;
  size_t free_runners = 1;
};

// Holds one runner of |c| for its lifetime.
class Runner {
 public:
  explicit Runner(Container* c) : c_(c) {
    std::unique_lock<std::mutex> lock(c_->mu);
    c_->cv.wait(lock, [this] { return c_->free_runners > 0; });
    --c_->free_runners;
  }
  ~Runner() {
    {
      std::lock_guard<std::mutex> lock(c_->mu);
      ++c_->free_runners;
    }
    c_->cv.notify_one();
  }

 private:
  Container* c_;
};

// A container event for model_lifetime_test; nothing in the quiet build.
void report([[maybe_unused]] const char* event) {
#ifndef AOTIRT_FAKE_MODEL_QUIET
  aoti_torch_warn("fake", "fake_model_library.cpp", 0, event);
#endif
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) int32_t AOTInductorModelContainerCreateWithDevice(
    void** handle, size_t num_models, const char* device, const char*) {
  if (!device || device[0] != 'c' || num_models == 0) return 1;
  auto* c = new Container();
  c->free_runners = num_models;
  *handle = c;
  report("fake container created");
  return 0;
}

__attribute__((visibility("default"))) int32_t AOTInductorModelContainerDelete(void* handle) {
  delete static_cast<Container*>(handle);
  report("fake container deleted");
  return 0;
}

// out[0] = out[1] = input * 2 (float32, [n]); the input handle is stolen.
__attribute__((visibility("default"))) int32_t AOTInductorModelContainerRun(
    void* handle, AtenTensorHandle* inputs, size_t num_inputs, AtenTensorHandle* outputs, size_t num_outputs,
    void*, AOTIProxyExecutorHandle) {
  if (num_inputs != 1 || num_outputs != 2) return 1;
  Runner runner(static_cast<Container*>(handle));
  int64_t* sizes = nullptr;
  void* src = nullptr;
  if (aoti_torch_get_sizes(inputs[0], &sizes) || aoti_torch_get_data_ptr(inputs[0], &src)) return 1;
  const int64_t n = sizes[0];
  AtenTensorHandle out = nullptr;
  if (aoti_torch_empty_strided(1, &n, nullptr, aoti_torch_dtype_float32(), aoti_torch_device_type_cpu(), 0, &out))
    return 1;
  void* dst = nullptr;
  aoti_torch_get_data_ptr(out, &dst);
  for (int64_t i = 0; i < n; ++i) static_cast<float*>(dst)[i] = 2.0f * static_cast<const float*>(src)[i];
  aoti_torch_delete_tensor_object(inputs[0]);
  outputs[0] = out;
  outputs[1] = out;
  return 0;
}

__attribute__((visibility("default"))) int32_t AOTInductorModelContainerGetNumInputs(void*, size_t* n) {
  *n = 1;
  return 0;
}
__attribute__((visibility("default"))) int32_t AOTInductorModelContainerGetNumOutputs(void*, size_t* n) {
  *n = 2;
  return 0;
}
__attribute__((visibility("default"))) int32_t AOTInductorModelContainerGetInputName(void*, size_t, const char** s) {
  *s = "x";
  return 0;
}
__attribute__((visibility("default"))) int32_t AOTInductorModelContainerGetOutputName(void*, size_t i,
                                                                                     const char** s) {
  *s = i == 0 ? "y" : "y_alias";
  return 0;
}
__attribute__((visibility("default"))) int32_t AOTInductorModelContainerGetCallSpec(void*, const char** in,
                                                                                    const char** out) {
  *in = "";
  *out = "";
  return 0;
}

}  // extern "C"
