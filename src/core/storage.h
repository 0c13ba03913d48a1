// Storage: a refcounted span of device or host memory.
//
// Owning storage carries a deleter that runs when the last reference drops;
// borrowed storage (caller buffers, mmap'd weights) has no deleter. The count
// is atomic because the model library may run on any thread.
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <utility>

#include "aotirt/types.h"
#include "core/derived_forms.h"
#include "core/opaque_layout.h"

namespace aotirt {

// Releases |ptr| (|nbytes| long) that was handed out with |ctx|.
using DeleterFn = void (*)(void* ctx, void* ptr, size_t nbytes);

class Storage {
 public:
  // Owned: |deleter| runs once, when the last reference is released.
  static Storage* new_owning(void* data, size_t nbytes, DeviceId device, DeleterFn deleter,
                             void* deleter_ctx);
  // Borrowed: the memory must outlive every tensor that views it.
  static Storage* new_borrowed(void* data, size_t nbytes, DeviceId device);

  void retain() { refcount_.fetch_add(1, std::memory_order_relaxed); }
  void release();

  void* data() const { return data_; }
  size_t nbytes() const { return nbytes_; }
  DeviceId device() const { return device_; }
  bool is_borrowed() const { return deleter_ == nullptr; }
  int refcount() const { return refcount_.load(std::memory_order_relaxed); }

  // Non-null when the bytes are in a library's own layout (see
  // OpaqueLayout). Set once, right after creation, before the storage is
  // shared.
  const OpaqueLayout* opaque() const { return opaque_.get(); }
  // Opaque bytes are prepacked weights, which never change: marks the
  // storage immutable too.
  void set_opaque(std::unique_ptr<OpaqueLayout> layout);

  // Promises that the bytes never change again (a model's parameters once
  // loaded). Set before the storage is shared. Only immutable storage keeps
  // derived forms; for any other, derived_forms() is null.
  void mark_immutable();
  bool is_immutable() const { return derived_ != nullptr; }
  const DerivedForms* derived_forms() const { return derived_.get(); }

 private:
  Storage(void* data, size_t nbytes, DeviceId device, DeleterFn deleter, void* ctx)
      : data_(data), nbytes_(nbytes), device_(device), deleter_(deleter), deleter_ctx_(ctx) {}
  ~Storage() = default;

  std::atomic<int> refcount_{1};
  void* data_;
  size_t nbytes_;
  DeviceId device_;
  DeleterFn deleter_;
  void* deleter_ctx_;
  std::unique_ptr<OpaqueLayout> opaque_;
  std::unique_ptr<DerivedForms> derived_;
};

// Intrusive smart pointer for Storage.
class StorageRef {
 public:
  StorageRef() = default;
  // Adopts a reference the caller already holds (new_owning/new_borrowed give one).
  static StorageRef adopt(Storage* s) {
    StorageRef r;
    r.ptr_ = s;
    return r;
  }
  StorageRef(const StorageRef& o) : ptr_(o.ptr_) {
    if (ptr_) ptr_->retain();
  }
  StorageRef(StorageRef&& o) noexcept : ptr_(o.ptr_) { o.ptr_ = nullptr; }
  StorageRef& operator=(StorageRef o) noexcept {
    std::swap(ptr_, o.ptr_);
    return *this;
  }
  ~StorageRef() {
    if (ptr_) ptr_->release();
  }
  Storage* get() const { return ptr_; }
  Storage* operator->() const { return ptr_; }
  explicit operator bool() const { return ptr_ != nullptr; }

 private:
  Storage* ptr_ = nullptr;
};

}  // namespace aotirt
