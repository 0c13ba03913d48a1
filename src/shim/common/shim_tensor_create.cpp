// Tensor creation, views and handle life-cycle. Allocation goes through the
// device registry, so nothing here names a backend.
#include <memory>
#include <vector>

#include "core/constant_load.h"
#include "device/device.h"
#include "shim/common/shim_util.h"

using namespace aotirt;

namespace {

Result<DType> checked_dtype(int32_t dtype) {
  if (!dtype_is_valid(dtype)) return AOTIRT_STATUS(kInvalidArgument, "invalid dtype code {}", dtype);
  return static_cast<DType>(dtype);
}

Result<DeviceId> checked_device(int32_t device_type, int32_t device_index) {
  switch (device_type) {
    case 0: return DeviceId{DeviceType::kCpu, 0};
    case 1: return DeviceId{DeviceType::kCuda, device_index < 0 ? 0 : device_index};
    case 13: return DeviceId{DeviceType::kMps, device_index < 0 ? 0 : device_index};
    default:
      return AOTIRT_STATUS(kUnimplemented, "device type {} is not supported by aotirt", device_type);
  }
}

Status read_dims(int64_t ndim, const int64_t* sizes, const int64_t* strides, DimVector* out_sizes,
                 DimVector* out_strides) {
  AOTIRT_ENSURE(ndim >= 0 && ndim <= 64, kInvalidArgument, "bad ndim {}", ndim);
  AOTIRT_ENSURE(ndim == 0 || sizes != nullptr, kInvalidArgument, "sizes is null for a {}-d tensor", ndim);
  out_sizes->assign(sizes, ndim);
  for (int64_t i = 0; i < ndim; ++i)
    AOTIRT_ENSURE(sizes[i] >= 0, kInvalidArgument, "negative size {} in dim {}", sizes[i], i);
  if (strides)
    out_strides->assign(strides, ndim);
  else
    *out_strides = contiguous_strides(*out_sizes);
  return Status();
}

Status make_view(const TensorImpl& base, DType dtype, DimVector sizes, DimVector strides, int64_t offset,
                 AtenTensorHandle* ret) {
  AOTIRT_ENSURE(offset >= 0, kInvalidArgument, "negative storage offset {}", offset);
  TensorImpl view(base.storage(), dtype, std::move(sizes), std::move(strides), offset);
  bool empty = false;
  for (int64_t i = 0; i < view.dim(); ++i) empty |= view.sizes()[i] == 0;
  if (base.storage() && base.storage()->data() && !empty) {
    // The lowest and highest elements must lie inside the storage. Negative
    // strides reach below the offset; huge sizes must not wrap around.
    int64_t lowest = offset, highest = offset, extent = 0;
    bool overflow = false;
    for (int64_t i = 0; i < view.dim(); ++i) {
      int64_t span = 0;
      overflow |= __builtin_mul_overflow(view.sizes()[i] - 1, view.strides()[i], &span);
      overflow |= __builtin_add_overflow(span < 0 ? lowest : highest, span, span < 0 ? &lowest : &highest);
    }
    overflow |= __builtin_add_overflow(highest, int64_t{1}, &extent);
    overflow |= __builtin_mul_overflow(extent, static_cast<int64_t>(view.element_size()), &extent);
    AOTIRT_ENSURE(!overflow, kOutOfRange, "view {} (strides {}) is larger than any storage",
                  dims_to_string(view.sizes().data(), view.dim()),
                  dims_to_string(view.strides().data(), view.dim()));
    AOTIRT_ENSURE(lowest >= 0, kOutOfRange,
                  "view {} (strides {}, offset {}) reaches {} elements before the start of the storage",
                  dims_to_string(view.sizes().data(), view.dim()),
                  dims_to_string(view.strides().data(), view.dim()), offset, -lowest);
    AOTIRT_ENSURE(extent <= static_cast<int64_t>(base.storage()->nbytes()), kOutOfRange,
                  "view {} (strides {}, offset {}) needs {} bytes but the storage has {}",
                  dims_to_string(view.sizes().data(), view.dim()),
                  dims_to_string(view.strides().data(), view.dim()), offset, extent,
                  base.storage()->nbytes());
  }
  *ret = new_handle(std::move(view));
  return Status();
}

Status from_blob(void* data, int64_t ndim, const int64_t* sizes_ptr, const int64_t* strides_ptr,
                 int64_t storage_offset, int32_t dtype, int32_t device_type, int32_t device_index,
                 AtenTensorHandle* ret) {
  AOTIRT_REQUIRE_OUT(ret);
  AOTIRT_ASSIGN_OR_RETURN(DType dt, checked_dtype(dtype));
  AOTIRT_ASSIGN_OR_RETURN(DeviceId dev, checked_device(device_type, device_index));
  AOTIRT_ENSURE(storage_offset >= 0, kInvalidArgument, "negative storage offset {}", storage_offset);
  DimVector sizes, strides;
  AOTIRT_RETURN_IF_ERROR(read_dims(ndim, sizes_ptr, strides_ptr, &sizes, &strides));
  AOTIRT_ASSIGN_OR_RETURN(size_t extent, storage_bytes_for(sizes, strides, dt));
  size_t nbytes = extent + static_cast<size_t>(storage_offset) * dtype_size(dt);
  AOTIRT_ENSURE(data != nullptr || extent == 0, kInvalidArgument, "data is null for a non-empty tensor");
  Storage* s = Storage::new_borrowed(data, nbytes, dev);
  *ret = new_handle(TensorImpl(StorageRef::adopt(s), dt, std::move(sizes), std::move(strides), storage_offset));
  // A model loading its weights wraps each copied constant this way.
  if (ConstantLoadObserver* o = constant_load_observer()) {
    Status seen = o->on_constant(*impl_of(*ret));
    if (!seen.ok()) {
      delete impl_of(*ret);
      *ret = nullptr;
      return seen;
    }
  }
  return Status();
}

}  // namespace

extern "C" {

AOTITorchError aoti_torch_delete_tensor_object(AtenTensorHandle tensor) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl * t, checked_impl(tensor, "tensor"));
    delete t;
    return Status();
  });
}

AOTITorchError aoti_torch_new_tensor_handle(AtenTensorHandle orig, AtenTensorHandle* new_handle_out) noexcept {
  // A library taking a user-managed constant ignores this call's result
  // (torch's MaybeOwningAtenTensorHandle): on failure it keeps a null
  // handle, which every later shim refuses, rather than stack garbage.
  if (new_handle_out) *new_handle_out = nullptr;
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl * t, checked_impl(orig, "orig_handle"));
    AOTIRT_REQUIRE_OUT(new_handle_out);
    AtenTensorHandle h = new_handle(*t);
    // A library taking its own handle on a user-managed constant.
    if (ConstantLoadObserver* o = constant_load_observer()) {
      Status seen = o->on_new_handle(impl_of(h));
      if (!seen.ok()) {
        delete impl_of(h);
        return seen;
      }
    }
    *new_handle_out = h;
    return Status();
  });
}

AOTITorchError aoti_torch_new_uninitialized_tensor(AtenTensorHandle* ret) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_REQUIRE_OUT(ret);
    *ret = new_handle(TensorImpl());
    return Status();
  });
}

AOTITorchError aoti_torch_empty_strided(int64_t ndim, const int64_t* sizes_ptr, const int64_t* strides_ptr,
                                        int32_t dtype, int32_t device_type, int32_t device_index,
                                        AtenTensorHandle* ret) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_REQUIRE_OUT(ret);
    AOTIRT_ASSIGN_OR_RETURN(DType dt, checked_dtype(dtype));
    AOTIRT_ASSIGN_OR_RETURN(DeviceId dev, checked_device(device_type, device_index));
    DimVector sizes, strides;
    AOTIRT_RETURN_IF_ERROR(read_dims(ndim, sizes_ptr, strides_ptr, &sizes, &strides));
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl t, empty_strided(sizes, strides, dt, dev));
    *ret = new_handle(std::move(t));
    return Status();
  });
}

AOTITorchError aoti_torch_empty_strided_pinned(int64_t ndim, const int64_t* sizes_ptr,
                                               const int64_t* strides_ptr, int32_t dtype,
                                               int32_t device_type, int32_t device_index,
                                               AtenTensorHandle* ret) noexcept {
  // Pinning only speeds up device copies; plain host memory is correct.
  return aoti_torch_empty_strided(ndim, sizes_ptr, strides_ptr, dtype, device_type, device_index, ret);
}

AOTITorchError aoti_torch_create_tensor_from_blob(void* data, int64_t ndim, const int64_t* sizes_ptr,
                                                  const int64_t* strides_ptr, int64_t storage_offset,
                                                  int32_t dtype, int32_t device_type, int32_t device_index,
                                                  AtenTensorHandle* ret) noexcept {
  return shim_call(__func__, [&]() -> Status {
    return from_blob(data, ndim, sizes_ptr, strides_ptr, storage_offset, dtype, device_type, device_index, ret);
  });
}

AOTITorchError aoti_torch_create_tensor_from_blob_v2(void* data, int64_t ndim, const int64_t* sizes_ptr,
                                                     const int64_t* strides_ptr, int64_t storage_offset,
                                                     int32_t dtype, int32_t device_type, int32_t device_index,
                                                     AtenTensorHandle* ret, int32_t layout,
                                                     const uint8_t* opaque_metadata,
                                                     int64_t opaque_metadata_size) noexcept {
  return shim_call(__func__, [&]() -> Status {
    // Strided (0), or _mkldnn (3): a weight that freezing prepacked for
    // oneDNN, whose bytes only its memory descriptor (the metadata) explains.
    // The ops that take such weights read the descriptor; here it is kept
    // with the storage, whose sizes and strides are nominal.
    constexpr int32_t kStrided = 0, kMkldnn = 3;
    AOTIRT_ENSURE(layout == kStrided || layout == kMkldnn, kUnimplemented,
                  "layout {} is not supported (only strided, and _mkldnn for frozen weights)", layout);
    if (layout == kStrided) {
      AOTIRT_ENSURE(opaque_metadata_size == 0, kUnimplemented,
                    "opaque metadata ({} bytes) on a strided tensor is not supported", opaque_metadata_size);
      return from_blob(data, ndim, sizes_ptr, strides_ptr, storage_offset, dtype, device_type, device_index,
                       ret);
    }
    AOTIRT_ENSURE(device_type == 0, kUnimplemented, "_mkldnn tensors exist only on the CPU, not on device type {}",
                  device_type);
    AOTIRT_ENSURE(opaque_metadata != nullptr && opaque_metadata_size > 0 && opaque_metadata_size <= (1 << 20),
                  kInvalidArgument, "a _mkldnn tensor needs its descriptor as metadata, got {} bytes",
                  opaque_metadata_size);
    AOTIRT_RETURN_IF_ERROR(
        from_blob(data, ndim, sizes_ptr, strides_ptr, storage_offset, dtype, device_type, device_index, ret));
    std::vector<uint8_t> metadata(opaque_metadata, opaque_metadata + opaque_metadata_size);
    impl_of(*ret)->storage()->set_opaque(std::make_unique<OpaqueLayout>(layout, std::move(metadata)));
    return Status();
  });
}

AOTITorchError aoti_torch__reinterpret_tensor(AtenTensorHandle self, int64_t ndim, const int64_t* sizes_ptr,
                                              const int64_t* strides_ptr, int64_t storage_offset,
                                              AtenTensorHandle* ret) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl * t, checked_impl(self, "self"));
    AOTIRT_REQUIRE_OUT(ret);
    AOTIRT_ENSURE(strides_ptr != nullptr || ndim == 0, kInvalidArgument, "strides is null");
    DimVector sizes, strides;
    AOTIRT_RETURN_IF_ERROR(read_dims(ndim, sizes_ptr, strides_ptr, &sizes, &strides));
    return make_view(*t, t->dtype(), std::move(sizes), std::move(strides), storage_offset, ret);
  });
}

AOTITorchError aoti_torch_as_strided(AtenTensorHandle self, const int64_t* sizes_ptr,
                                     const int64_t* strides_ptr, AtenTensorHandle* ret) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl * t, checked_impl(self, "self"));
    AOTIRT_REQUIRE_OUT(ret);
    // The rank is the input's: the 2.11 signature carries no ndim.
    DimVector sizes, strides;
    AOTIRT_RETURN_IF_ERROR(read_dims(t->dim(), sizes_ptr, strides_ptr, &sizes, &strides));
    return make_view(*t, t->dtype(), std::move(sizes), std::move(strides), t->storage_offset(), ret);
  });
}

AOTITorchError aoti_torch__alloc_from_pool(AtenTensorHandle self, int64_t offset_bytes, int32_t dtype,
                                           int64_t ndim, const int64_t* sizes_ptr, const int64_t* strides_ptr,
                                           AtenTensorHandle* ret) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl * t, checked_impl(self, "self"));
    AOTIRT_REQUIRE_OUT(ret);
    AOTIRT_ASSIGN_OR_RETURN(DType dt, checked_dtype(dtype));
    int64_t base_bytes = t->storage_offset() * static_cast<int64_t>(t->element_size()) + offset_bytes;
    int64_t elsize = static_cast<int64_t>(dtype_size(dt));
    AOTIRT_ENSURE(offset_bytes >= 0 && base_bytes % elsize == 0, kInvalidArgument,
                  "pool offset of {} bytes is not a multiple of the {}-byte {}", base_bytes, elsize,
                  dtype_name(dt));
    DimVector sizes, strides;
    AOTIRT_RETURN_IF_ERROR(read_dims(ndim, sizes_ptr, strides_ptr, &sizes, &strides));
    return make_view(*t, dt, std::move(sizes), std::move(strides), base_bytes / elsize, ret);
  });
}

AOTITorchError aoti_torch_assign_tensors(AtenTensorHandle src, AtenTensorHandle dst) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl * s, checked_impl(src, "src"));
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl * d, checked_impl(dst, "dst"));
    *d = *s;
    return Status();
  });
}

AOTITorchError aoti_torch_assign_tensors_out(AtenTensorHandle src, AtenTensorHandle* ret_dst) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl * s, checked_impl(src, "src"));
    AOTIRT_REQUIRE_OUT(ret_dst);
    *ret_dst = new_handle(*s);
    return Status();
  });
}

}  // extern "C"
