// TensorImpl: sizes, strides, dtype and an element offset over a Storage.
//
// This is the object behind an AtenTensorHandle. It is a value type: copying
// it shares the storage (a view). Sizes and strides live inline for up to
// kInlineDims dims, so the pointers that aoti_torch_get_sizes hands out stay
// valid for the handle's life and creating a handle does not allocate twice.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "aotirt/types.h"
#include "core/storage.h"

namespace aotirt {

// A small vector of int64 with inline room for common ranks.
class DimVector {
 public:
  static constexpr int kInline = 6;
  DimVector() = default;
  DimVector(const int64_t* data, int64_t n) { assign(data, n); }
  DimVector(std::initializer_list<int64_t> init) { assign(init.begin(), static_cast<int64_t>(init.size())); }
  DimVector(const std::vector<int64_t>& v) { assign(v.data(), static_cast<int64_t>(v.size())); }  // NOLINT
  DimVector(const DimVector& o) { assign(o.data(), o.size()); }
  DimVector& operator=(const DimVector& o) {
    if (this != &o) assign(o.data(), o.size());
    return *this;
  }
  void assign(const int64_t* data, int64_t n);
  void resize(int64_t n);
  int64_t size() const { return size_; }
  int64_t* data() { return heap_.empty() ? inline_ : heap_.data(); }
  const int64_t* data() const { return heap_.empty() ? inline_ : heap_.data(); }
  int64_t& operator[](int64_t i) { return data()[i]; }
  int64_t operator[](int64_t i) const { return data()[i]; }
  std::vector<int64_t> to_vector() const { return std::vector<int64_t>(data(), data() + size_); }
  bool operator==(const DimVector& o) const;

 private:
  int64_t inline_[kInline] = {0, 0, 0, 0, 0, 0};
  std::vector<int64_t> heap_;
  int64_t size_ = 0;
};

// Row-major strides for |sizes|.
DimVector contiguous_strides(const DimVector& sizes);
int64_t numel_of(const DimVector& sizes);
std::string dims_to_string(const int64_t* dims, int64_t n);

class TensorImpl {
 public:
  TensorImpl() = default;
  // |storage| is retained; |offset| counts elements, as in PyTorch.
  TensorImpl(StorageRef storage, DType dtype, DimVector sizes, DimVector strides, int64_t offset)
      : storage_(std::move(storage)), sizes_(std::move(sizes)), strides_(std::move(strides)),
        offset_(offset), dtype_(dtype) {}

  const StorageRef& storage() const { return storage_; }
  DType dtype() const { return dtype_; }
  DeviceId device() const { return storage_ ? storage_->device() : DeviceId{}; }
  int64_t dim() const { return sizes_.size(); }
  const DimVector& sizes() const { return sizes_; }
  const DimVector& strides() const { return strides_; }
  DimVector& mutable_sizes() { return sizes_; }
  DimVector& mutable_strides() { return strides_; }
  int64_t storage_offset() const { return offset_; }
  size_t element_size() const { return dtype_size(dtype_); }
  int64_t numel() const { return numel_of(sizes_); }
  size_t nbytes() const { return static_cast<size_t>(numel()) * element_size(); }
  bool defined() const { return static_cast<bool>(storage_); }

  // Address of element 0: storage base plus the element offset.
  void* data_ptr() const {
    if (!storage_ || !storage_->data()) return nullptr;
    return static_cast<char*>(storage_->data()) + offset_ * static_cast<int64_t>(element_size());
  }
  bool is_contiguous() const;
  // Highest byte (exclusive) that this view can touch, relative to the storage base.
  int64_t max_byte_extent() const;

 private:
  StorageRef storage_;
  DimVector sizes_;
  DimVector strides_;
  int64_t offset_ = 0;
  DType dtype_ = DType::kFloat32;
};

}  // namespace aotirt
