// The model's shared library, opened from memory, and the container C API it
// exports (AOTInductorModelContainer*, torch 2.9+ with UpdateConstantsFromBlob).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "aotirt/status.h"
#include "base/file_util.h"
#include "shim/shim_abi.h"

namespace aotirt {

struct AOTInductorModelContainerOpaque;
using ContainerHandle = AOTInductorModelContainerOpaque*;
using RuntimeError = int32_t;  // AOTIRuntimeError: 0 success, 1 failure

// Function pointers resolved from the library. Required ones are never null.
struct ContainerApi {
  RuntimeError (*create_with_device)(ContainerHandle*, size_t num_models, const char* device,
                                     const char* cubin_dir) = nullptr;
  RuntimeError (*destroy)(ContainerHandle) = nullptr;
  RuntimeError (*run)(ContainerHandle, AtenTensorHandle* inputs, size_t num_inputs, AtenTensorHandle* outputs,
                      size_t num_outputs, void* stream, AOTIProxyExecutorHandle proxy) = nullptr;
  RuntimeError (*run_single_threaded)(ContainerHandle, AtenTensorHandle*, size_t, AtenTensorHandle*, size_t,
                                      void*, AOTIProxyExecutorHandle) = nullptr;  // optional
  RuntimeError (*get_num_inputs)(ContainerHandle, size_t*) = nullptr;
  RuntimeError (*get_num_outputs)(ContainerHandle, size_t*) = nullptr;
  RuntimeError (*get_input_name)(ContainerHandle, size_t, const char**) = nullptr;
  RuntimeError (*get_output_name)(ContainerHandle, size_t, const char**) = nullptr;
  RuntimeError (*get_call_spec)(ContainerHandle, const char**, const char**) = nullptr;
  RuntimeError (*get_num_constants)(ContainerHandle, size_t*) = nullptr;  // optional
  RuntimeError (*update_constants_from_blob)(ContainerHandle, const uint8_t*) = nullptr;  // optional
  RuntimeError (*get_constant_from_folded)(ContainerHandle, size_t, bool*) = nullptr;     // optional
  RuntimeError (*get_constant_type)(ContainerHandle, size_t, int32_t*) = nullptr;         // optional
  RuntimeError (*get_constant_data_size)(ContainerHandle, size_t, size_t*) = nullptr;     // optional
};

class ModelLibrary {
 public:
  // Writes |bytes| to an anonymous memfd and dlopen()s it RTLD_NOW|RTLD_LOCAL,
  // so an unresolved symbol fails here, naming the symbol.
  static Result<std::unique_ptr<ModelLibrary>> open(const std::string& bytes, const std::string& name);
  ~ModelLibrary();

  const ContainerApi& api() const { return api_; }

 private:
  ModelLibrary() = default;
  UniqueFd fd_;
  std::string path_;  // "/proc/self/fd/N": what dlopen knows the library by
  void* handle_ = nullptr;
  ContainerApi api_;
};

}  // namespace aotirt
