// A hand-written stand-in for an AOTInductor model library, for unit tests of
// the loader's handle ownership only (real models are tested with packages
// that torch exports). It exports the container C API and imports aotirt's
// shims, like a generated library. Run returns ONE output handle in BOTH
// output slots, as generated code does when two outputs alias, and reports
// container creation and deletion through aoti_torch_warn, which the test
// captures with aotirt's log sink.
#include <cstddef>
#include <cstdint>

#include "shim/shim_abi.h"

namespace {
struct FakeContainer {
  int runs = 0;
};
}  // namespace

extern "C" {

__attribute__((visibility("default"))) int32_t AOTInductorModelContainerCreateWithDevice(
    void** handle, size_t, const char* device, const char*) {
  if (!device || device[0] != 'c') return 1;
  *handle = new FakeContainer();
  aoti_torch_warn("fake", "fake_model_library.cpp", 0, "fake container created");
  return 0;
}

__attribute__((visibility("default"))) int32_t AOTInductorModelContainerDelete(void* handle) {
  delete static_cast<FakeContainer*>(handle);
  aoti_torch_warn("fake", "fake_model_library.cpp", 0, "fake container deleted");
  return 0;
}

// out[0] = out[1] = input * 2 (float32, [n]); the input handle is stolen.
__attribute__((visibility("default"))) int32_t AOTInductorModelContainerRun(
    void* handle, AtenTensorHandle* inputs, size_t num_inputs, AtenTensorHandle* outputs, size_t num_outputs,
    void*, AOTIProxyExecutorHandle) {
  if (num_inputs != 1 || num_outputs != 2) return 1;
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
  ++static_cast<FakeContainer*>(handle)->runs;
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
