// Helpers shared by every shim: handle <-> TensorImpl conversion and the
// wrapper that turns a Status (or a stray exception) into AOTI's error code
// while keeping the full message in the thread-local last-error slot.
#pragma once

#include <exception>
#include <new>

#include "base/log.h"
#include "base/status.h"
#include "core/tensor.h"
#include "shim/common/shim_profile.h"
#include "shim/shim_abi.h"

namespace aotirt {

inline TensorImpl* impl_of(AtenTensorHandle h) { return reinterpret_cast<TensorImpl*>(h); }
inline AtenTensorHandle handle_of(TensorImpl* t) { return reinterpret_cast<AtenTensorHandle>(t); }

// Returns a new handle that owns a copy of |t| (sharing its storage). The
// handle must be released with aoti_torch_delete_tensor_object.
inline AtenTensorHandle new_handle(TensorImpl t) { return handle_of(new TensorImpl(std::move(t))); }

inline Result<TensorImpl*> checked_impl(AtenTensorHandle h, const char* what) {
  if (!h) return AOTIRT_STATUS(kInvalidArgument, "{} is a null tensor handle", what);
  return impl_of(h);
}

// Runs |body| (returning Status) and maps the outcome to AOTI's 0/1 code.
template <class Body>
AOTITorchError shim_call(const char* name, Body&& body) noexcept {
  ShimProfileScope profile_scope(name);
  try {
    Status s = body();
    if (s.ok()) return 0;
    s.annotate(name);
    set_last_error(s);
    AOTIRT_LOG(kDebug, "{}", s.to_string());
    return 1;
  } catch (const std::bad_alloc&) {
    set_last_error(Status(StatusCode::kResourceExhausted, std::string(name) + ": out of host memory"));
  } catch (const std::exception& e) {
    set_last_error(Status(StatusCode::kInternal, std::string(name) + ": " + e.what()));
  } catch (...) {
    set_last_error(Status(StatusCode::kInternal, std::string(name) + ": unknown exception"));
  }
  return 1;
}

#define AOTIRT_REQUIRE_OUT(ptr) \
  AOTIRT_ENSURE((ptr) != nullptr, kInvalidArgument, "output pointer '{}' is null", #ptr)

}  // namespace aotirt
