// Checks, warnings, grad mode and the entry points aotirt refuses on purpose.
#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>

#include "shim/common/shim_util.h"

using namespace aotirt;

namespace {

// What aoti_torch_check throws. The model library catches std::exception at
// its C entry point and returns an error code; we keep the message too.
class CheckFailure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Inference never records gradients, but the wrapper saves and restores the
// flag around Run, so it must round-trip per thread.
thread_local bool t_grad_enabled = true;

}  // namespace

extern "C" {

void aoti_torch_check(bool cond, const char* func, const char* file, uint32_t line, const char* msg) {
  if (cond) return;
  std::string text = fmt::format("model check failed: {} (in {} at {}:{})", msg ? msg : "",
                                 func ? func : "?", file ? file : "?", line);
  set_last_error(Status(StatusCode::kInvalidArgument, text));
  throw CheckFailure(text);
}

void aoti_torch_warn(const char* func, const char* file, uint32_t line, const char* msg) noexcept {
  try {
    AOTIRT_LOG(kWarning, "model warning: {} (in {} at {}:{})", msg ? msg : "", func ? func : "?",
               file ? file : "?", line);
  } catch (...) {
  }
}

bool aoti_torch_grad_mode_is_enabled(void) noexcept { return t_grad_enabled; }
void aoti_torch_grad_mode_set_enabled(bool enabled) noexcept { t_grad_enabled = enabled; }

AOTITorchError aoti_torch_proxy_executor_call_function(AOTIProxyExecutorHandle, int extern_node_index, int,
                                                       int64_t*, int, AtenTensorHandle*) noexcept {
  return shim_call(__func__, [&]() -> Status {
    return AOTIRT_STATUS(kUnimplemented,
                         "extern node {} needs PyTorch's proxy executor (a custom op without a C "
                         "shim); aotirt cannot run it",
                         extern_node_index);
  });
}

AOTITorchError aoti_torch_check_inf_and_nan(const char* tensor_name, AtenTensorHandle tensor) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl * t, checked_impl(tensor, "tensor"));
    (void)t;
    AOTIRT_LOG(kDebug, "check_inf_and_nan({}) skipped", tensor_name ? tensor_name : "?");
    return Status();
  });
}

void aoti_torch_print_tensor_handle(AtenTensorHandle self, const char* msg) noexcept {
  try {
    if (!self) return;
    TensorImpl* t = impl_of(self);
    AOTIRT_LOG(kInfo, "{} tensor {} {} on {}", msg ? msg : "", dtype_name(t->dtype()),
               dims_to_string(t->sizes().data(), t->dim()), t->device().to_string());
  } catch (...) {
  }
}

void aoti_torch_save_tensor_handle(AtenTensorHandle self, const char* tensor_name, const char* launch_prefix,
                                   const char* kernel_name) noexcept {
  // libtorch pickles the tensor with torch::save, a format only PyTorch
  // reads; the debug printer's purpose is served by logging what it is.
  try {
    if (!self) return;
    TensorImpl* t = impl_of(self);
    AOTIRT_LOG(kInfo, "tensor {} ({} {}) at {} {} on {}", tensor_name ? tensor_name : "?", dtype_name(t->dtype()),
               dims_to_string(t->sizes().data(), t->dim()), launch_prefix ? launch_prefix : "",
               kernel_name ? kernel_name : "", t->device().to_string());
  } catch (...) {
  }
}

namespace {
// What a record-function guard holds: the region's name and start time.
struct RecordFunction {
  std::string name;
  std::chrono::steady_clock::time_point start;
};
}  // namespace

AOTITorchError aoti_record_function_start(const char* name, IValueMapHandle, const C10IValueHandle*,
                                          const uint64_t, AtenRecordFunctionHandle* guard) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_REQUIRE_OUT(guard);
    *guard = reinterpret_cast<AtenRecordFunctionHandle>(
        new RecordFunction{name ? name : "", std::chrono::steady_clock::now()});
    return Status();
  });
}

AOTITorchError aoti_record_function_end(AtenRecordFunctionHandle guard) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_ENSURE(guard != nullptr, kInvalidArgument, "guard is null");
    std::unique_ptr<RecordFunction> rf(reinterpret_cast<RecordFunction*>(guard));
    // Kernel profiling output goes to the debug log: aotirt has no profiler.
    AOTIRT_LOG(kDebug, "profile: {} took {:.1f} us", rf->name,
               std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - rf->start).count());
    return Status();
  });
}

}  // extern "C"
