// aotirt::Tensor: the public tensor handle used to pass inputs to a model and
// receive its outputs.
//
// A Tensor shares ownership of its memory. Tensors made with from_blob borrow
// the caller's memory (nothing is copied; keep it alive while the tensor or
// any output aliasing it lives). Tensors returned by Model::run own theirs.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "aotirt/status.h"
#include "aotirt/types.h"

namespace aotirt {

class TensorImpl;

class AOTIRT_API Tensor {
 public:
  Tensor() = default;  // undefined

  // Borrowed view of |data|. Empty |strides| means row-major contiguous.
  static Tensor from_blob(void* data, std::vector<int64_t> sizes, DType dtype, DeviceId device = {},
                          std::vector<int64_t> strides = {});
  // Owned, uninitialised, contiguous.
  static Result<Tensor> empty(std::vector<int64_t> sizes, DType dtype, DeviceId device = {});

  bool defined() const { return impl_ != nullptr; }
  DType dtype() const;
  DeviceId device() const;
  int64_t dim() const;
  std::vector<int64_t> sizes() const;
  std::vector<int64_t> strides() const;
  int64_t numel() const;
  size_t nbytes() const;  // numel * element size
  bool is_contiguous() const;
  // Address of element 0 (storage offset applied). Device memory for device tensors.
  void* data() const;

  // A contiguous copy on |device| converted to |dtype|.
  Result<Tensor> to(DeviceId device, DType dtype) const;
  Result<Tensor> to(DeviceId device) const { return to(device, dtype()); }

  // Internal: the core tensor this wraps (borrowed).
  const TensorImpl* impl() const { return impl_.get(); }
  explicit Tensor(std::shared_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}

 private:
  std::shared_ptr<TensorImpl> impl_;
};

}  // namespace aotirt
