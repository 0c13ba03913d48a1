#include "core/storage.h"

namespace aotirt {

Storage* Storage::new_owning(void* data, size_t nbytes, DeviceId device, DeleterFn deleter,
                             void* deleter_ctx) {
  // Ownership of |data| passes with the call: when the Storage itself cannot
  // be allocated, the memory goes back through its deleter before the error
  // travels on, or an out-of-memory would leak the (larger) buffer too.
  try {
    return new Storage(data, nbytes, device, deleter, deleter_ctx);
  } catch (...) {
    if (deleter) deleter(deleter_ctx, data, nbytes);
    throw;
  }
}

Storage* Storage::new_borrowed(void* data, size_t nbytes, DeviceId device) {
  return new Storage(data, nbytes, device, nullptr, nullptr);
}

void Storage::set_opaque(std::unique_ptr<OpaqueLayout> layout) {
  opaque_ = std::move(layout);
  mark_immutable();
}

void Storage::mark_immutable() {
  if (!derived_) derived_ = std::make_unique<DerivedForms>();
}

void Storage::release() {
  if (refcount_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    if (deleter_) deleter_(deleter_ctx_, data_, nbytes_);
    delete this;
  }
}

}  // namespace aotirt
