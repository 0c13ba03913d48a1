#include "core/tensor.h"

#include <cstring>

namespace aotirt {

void DimVector::assign(const int64_t* data, int64_t n) {
  if (n <= kInline) {
    // |data| may point into heap_ (self-assignment of a slice), so copy first.
    int64_t tmp[kInline];
    if (n > 0) std::memcpy(tmp, data, sizeof(int64_t) * n);
    heap_.clear();
    heap_.shrink_to_fit();
    if (n > 0) std::memcpy(inline_, tmp, sizeof(int64_t) * n);
  } else {
    std::vector<int64_t> v(data, data + n);
    heap_.swap(v);
  }
  size_ = n;
}

void DimVector::resize(int64_t n) {
  std::vector<int64_t> v(data(), data() + std::min(n, size_));
  v.resize(n, 0);
  assign(v.data(), n);
}

bool DimVector::operator==(const DimVector& o) const {
  if (size_ != o.size_) return false;
  for (int64_t i = 0; i < size_; ++i)
    if ((*this)[i] != o[i]) return false;
  return true;
}

DimVector contiguous_strides(const DimVector& sizes) {
  DimVector strides;
  strides.resize(sizes.size());
  int64_t s = 1;
  for (int64_t i = sizes.size() - 1; i >= 0; --i) {
    strides[i] = s;
    // Saturate instead of overflowing: the allocation size check then
    // refuses the shape with a clear message.
    if (__builtin_mul_overflow(s, sizes[i] > 1 ? sizes[i] : 1, &s)) s = INT64_MAX;
  }
  return strides;
}

int64_t numel_of(const DimVector& sizes) {
  int64_t n = 1;
  for (int64_t i = 0; i < sizes.size(); ++i) n *= sizes[i];
  return n;
}

std::string dims_to_string(const int64_t* dims, int64_t n) {
  std::string s = "[";
  for (int64_t i = 0; i < n; ++i) {
    if (i) s += ", ";
    s += std::to_string(dims[i]);
  }
  return s + "]";
}

bool TensorImpl::is_contiguous() const {
  // As in PyTorch, an empty tensor is contiguous whatever its strides.
  if (numel() == 0) return true;
  int64_t expected = 1;
  for (int64_t i = sizes_.size() - 1; i >= 0; --i) {
    if (sizes_[i] == 1) continue;
    if (strides_[i] != expected) return false;
    expected *= sizes_[i];
  }
  return true;
}

int64_t TensorImpl::max_byte_extent() const {
  if (numel() == 0) return offset_ * static_cast<int64_t>(element_size());
  int64_t last = offset_;
  for (int64_t i = 0; i < sizes_.size(); ++i)
    if (strides_[i] > 0) last += (sizes_[i] - 1) * strides_[i];
  return (last + 1) * static_cast<int64_t>(element_size());
}

}  // namespace aotirt
