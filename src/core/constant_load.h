// Hears of the constants a model library creates while it loads its weights.
// The library copies each weight out of the package's blob, in blob order,
// and wraps the copy in a tensor through the shims; the loader installs an
// observer on its own thread for the duration of that call, so it learns
// which storages are the model's constants (to mark the immutable ones) and
// how far through the blob the copy has come (to release what it has read).
//
// When the loader hands a library weights it does not own (a ModelGroup's
// shared weights, as user-managed constants), the library takes a handle of
// its own on each and never deletes it; the observer hears of those handles
// too, so the loader can delete them once the library's container is gone.
#pragma once

#include "base/status.h"
#include "core/tensor.h"

namespace aotirt {

class ConstantLoadObserver {
 public:
  virtual ~ConstantLoadObserver() = default;
  // |t| is the constant just created, in the library's constant order.
  // An error fails the shim call that created it, and with it the load.
  virtual Status on_constant(const TensorImpl& t) = 0;
  // |handle| was just made by aoti_torch_new_tensor_handle. An error fails
  // that call (and the handle is deleted). By default: nothing to do.
  virtual Status on_new_handle(TensorImpl* handle) {
    (void)handle;
    return Status();
  }
};

// The calling thread's observer, or null.
ConstantLoadObserver* constant_load_observer();

// Installs |o| on the calling thread for this object's lifetime.
class ScopedConstantLoadObserver {
 public:
  explicit ScopedConstantLoadObserver(ConstantLoadObserver* o);
  ~ScopedConstantLoadObserver();
  ScopedConstantLoadObserver(const ScopedConstantLoadObserver&) = delete;
  ScopedConstantLoadObserver& operator=(const ScopedConstantLoadObserver&) = delete;

 private:
  ConstantLoadObserver* previous_;
};

}  // namespace aotirt
