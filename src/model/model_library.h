// The model's shared library, opened from memory, and the container C API it
// exports (AOTInductorModelContainer*, torch 2.9+ with UpdateConstantsFromBlob).
//
// Opening a library runs its code (its constructors run in dlopen): only
// trusted packages may get here. See SECURITY.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "aotirt/status.h"
#include "base/file_util.h"
#include "base/library_resources.h"
#include "device/device.h"
#include "shim/shim_abi.h"

namespace aotirt {

struct AOTInductorModelContainerOpaque;
using ContainerHandle = AOTInductorModelContainerOpaque*;
using RuntimeError = int32_t;  // AOTIRuntimeError: 0 success, 1 failure

// AOTInductorConstantMapEntry: a constant's name and the tensor to use for it.
struct ConstantMapEntry {
  const char* name;
  AtenTensorHandle handle;
};

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
  RuntimeError (*get_constants_blob_size)(ContainerHandle, uint64_t*) = nullptr;          // optional
  // For sharing weights between the packages of a ModelGroup (all optional).
  RuntimeError (*get_constant_name)(ContainerHandle, size_t, const char**) = nullptr;
  RuntimeError (*get_constant_original_fqn)(ContainerHandle, size_t, const char**) = nullptr;
  RuntimeError (*get_constant_dtype)(ContainerHandle, size_t, int32_t*) = nullptr;
  RuntimeError (*update_user_managed_constants)(ContainerHandle, const ConstantMapEntry* pairs, size_t num_pairs,
                                                bool use_inactive, bool validate_full_update) = nullptr;
};

class ModelLibrary {
 public:
  // Writes |bytes| to an anonymous memfd and dlopen()s it RTLD_NOW|RTLD_LOCAL,
  // so an unresolved symbol fails here, naming the symbol.
  //
  // The generated code runs its input checks (dtype, sizes, strides and
  // device of each input) only when the environment reports
  // kCheckInputsEnv set (base/env.h; it asks once, at the first run of each
  // library, and caches the answer in a static). Setting the variable
  // would change the whole process (other libraries, child processes) and
  // race with lookups on other threads, so instead the library's own
  // import of the C library's lookup is pointed at env_with_input_checks,
  // which reports the variable as "1" and every other name as the process
  // has it. The checks are thus on for every model aotirt opens, and for
  // nothing else.
  //
  // |imports|: the device backend's redirects (BackendInfo::library_imports),
  // applied the same way; what they acquire is kept in resources().
  static Result<std::unique_ptr<ModelLibrary>> open(const std::string& bytes, const std::string& name,
                                                    const std::vector<ImportOverride>& imports = {});
  ~ModelLibrary();

  const ContainerApi& api() const { return api_; }
  // Whether the library's environment lookup was redirected (false when it has
  // none, and then no generated input checks either).
  bool input_checks_forced() const { return input_checks_forced_; }
  // What the library acquired through redirected imports (its kernel
  // modules), released before it closes. Calls into the library hold a
  // ScopedLibraryResources on it.
  LibraryResources& resources() { return resources_; }

 private:
  ModelLibrary() = default;
  UniqueFd fd_;
  std::string path_;  // "/proc/self/fd/N": what dlopen knows the library by
  void* handle_ = nullptr;
  ContainerApi api_;
  bool input_checks_forced_ = false;
  LibraryResources resources_;
};

}  // namespace aotirt
