// Checks, warnings, grad mode and the entry points aotirt refuses on purpose.
#include <stdexcept>

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

}  // extern "C"
