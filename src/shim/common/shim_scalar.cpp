// item_* (read one element, syncing a device if needed) and scalar_to_tensor_*
// (a 0-d CPU tensor holding one value).
#include <cstring>

#include "core/dtype.h"
#include "device/device.h"
#include "shim/common/shim_util.h"

using namespace aotirt;

namespace {

// Copies the single element of |h| to host memory as |want| and writes it to |out|.
Status read_item(AtenTensorHandle h, DType want, void* out) {
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl * t, checked_impl(h, "tensor"));
  AOTIRT_ENSURE(out != nullptr, kInvalidArgument, "ret_value is null");
  AOTIRT_ENSURE(t->numel() == 1, kInvalidArgument,
                "item() needs a tensor with one element, got shape {}",
                dims_to_string(t->sizes().data(), t->dim()));
  uint64_t buf[2] = {0, 0};
  Storage* s = Storage::new_borrowed(buf, sizeof(buf), DeviceId{});
  TensorImpl host(StorageRef::adopt(s), want, t->sizes(), contiguous_strides(t->sizes()), 0);
  AOTIRT_RETURN_IF_ERROR(copy_tensor(host, *t, false));
  std::memcpy(out, buf, dtype_size(want));
  return Status();
}

Status make_scalar(const void* value, DType dtype, AtenTensorHandle* ret) {
  AOTIRT_REQUIRE_OUT(ret);
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl t, empty_contiguous(DimVector(), dtype, DeviceId{}));
  std::memcpy(t.data_ptr(), value, dtype_size(dtype));
  *ret = new_handle(std::move(t));
  return Status();
}

}  // namespace

#define AOTIRT_ITEM(suffix, ctype, dtype)                                                  \
  AOTITorchError aoti_torch_item_##suffix(AtenTensorHandle tensor, ctype* ret) noexcept {  \
    return shim_call(__func__, [&]() -> Status { return read_item(tensor, dtype, ret); }); \
  }

#define AOTIRT_SCALAR(suffix, ctype, dtype)                                                          \
  AOTITorchError aoti_torch_scalar_to_tensor_##suffix(ctype value, AtenTensorHandle* ret) noexcept { \
    return shim_call(__func__, [&]() -> Status { return make_scalar(&value, dtype, ret); });         \
  }

extern "C" {
AOTIRT_ITEM(float16, AotirtHalf, DType::kFloat16)
AOTIRT_ITEM(bfloat16, AotirtBFloat16, DType::kBFloat16)
AOTIRT_ITEM(complex64, AotirtComplex64, DType::kComplex64)
AOTIRT_ITEM(float32, float, DType::kFloat32)
AOTIRT_ITEM(float64, double, DType::kFloat64)
AOTIRT_ITEM(uint8, uint8_t, DType::kUInt8)
AOTIRT_ITEM(uint16, uint16_t, DType::kUInt16)
AOTIRT_ITEM(uint32, uint32_t, DType::kUInt32)
AOTIRT_ITEM(uint64, uint64_t, DType::kUInt64)
AOTIRT_ITEM(int8, int8_t, DType::kInt8)
AOTIRT_ITEM(int16, int16_t, DType::kInt16)
AOTIRT_ITEM(int32, int32_t, DType::kInt32)
AOTIRT_ITEM(int64, int64_t, DType::kInt64)
AOTIRT_ITEM(bool, bool, DType::kBool)

AOTIRT_SCALAR(float32, float, DType::kFloat32)
AOTIRT_SCALAR(float64, double, DType::kFloat64)
AOTIRT_SCALAR(uint8, uint8_t, DType::kUInt8)
AOTIRT_SCALAR(uint16, uint16_t, DType::kUInt16)
AOTIRT_SCALAR(uint32, uint32_t, DType::kUInt32)
AOTIRT_SCALAR(uint64, uint64_t, DType::kUInt64)
AOTIRT_SCALAR(int8, int8_t, DType::kInt8)
AOTIRT_SCALAR(int16, int16_t, DType::kInt16)
AOTIRT_SCALAR(int32, int32_t, DType::kInt32)
AOTIRT_SCALAR(int64, int64_t, DType::kInt64)
AOTIRT_SCALAR(bool, bool, DType::kBool)
AOTIRT_SCALAR(complex64, AotirtComplex64, DType::kComplex64)
AOTIRT_SCALAR(complex128, AotirtComplex128, DType::kComplex128)
}
