// Device-generic fallback ops (c_shim_aten.h and the deprecated generic
// shims of shim_deprecated.h): they serve a tensor on any device. Views are
// metadata; new tensors come from the device registry and are filled with
// the device's own zero and copy (ops/tensor_args.h), so nothing here names
// a backend. mm/bmm/addmm/convolution forward to the device's own op.
#include <dlfcn.h>

#include <map>
#include <mutex>
#include <string>

#include "device/device.h"
#include "ops/op_args.h"
#include "ops/tensor_args.h"
#include "shim/abi/cpu_tensor.h"
#include "shim/common/shim_util.h"

using namespace aotirt;
namespace tops = aotirt::ops::tensor_ops;

namespace {

// Finds aoti_torch_<device>_<op> among libaotirt's own exports, or null.
//
// Forwarding through the library's own dynamic symbol table keeps common
// code free of backend headers and #ifdefs: a CUDA build exports
// aoti_torch_cuda_mm_out and friends, a CPU-only build does not, and the
// lookup tells the two apart at run time. The lookup goes through a handle
// to this library (dladdr on one of its functions, then dlopen with
// RTLD_NOLOAD), never RTLD_DEFAULT: a process that also loaded libtorch
// (Python tests, a host embedding both) has torch's own aoti_torch_* in
// global scope, and those must not be called with aotirt's handles. When
// the shims are linked statically into an executable, the program's own
// handle (dlopen(nullptr)) holds them; its lookup order puts the program's
// definitions first. Lookups are cached: one dlsym per op and device.
void* own_export(const std::string& name) {
  static void* self = [] {
    Dl_info info;
    void* h = nullptr;
    if (dladdr(reinterpret_cast<void*>(&aoti_torch_empty_strided), &info) && info.dli_fname)
      h = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD);
    if (!h) h = dlopen(nullptr, RTLD_NOW);
    return h;  // kept open for the process's life
  }();
  static std::mutex mutex;
  static std::map<std::string, void*>* cache = new std::map<std::string, void*>();  // leaked: used at exit
  std::lock_guard<std::mutex> lock(mutex);
  auto it = cache->find(name);
  if (it != cache->end()) return it->second;
  void* p = self ? dlsym(self, name.c_str()) : nullptr;
  (*cache)[name] = p;
  return p;
}

// The device op |op| for |t|'s device, as a function pointer of type Fn;
// UNIMPLEMENTED naming the op and the device when that device has none.
template <class Fn>
Result<Fn> device_op(const TensorImpl& t, const char* op) {
  const BackendInfo* backend = backend_for(t.device().type);
  AOTIRT_ENSURE(backend != nullptr, kUnimplemented, "{} is not available for tensors on {}", op,
                t.device().to_string());
  const std::string name = std::string("aoti_torch_") + backend->name + "_" + op;
  void* p = own_export(name);
  AOTIRT_ENSURE(p != nullptr, kUnimplemented, "{} is not available for tensors on {}: this aotirt has no {}", op,
                t.device().to_string(), name);
  return reinterpret_cast<Fn>(p);
}

// Calls the device op |op| for |device_of|'s device. That op follows the
// shim protocol itself, so its failure stays in the last-error slot as it
// set it.
template <class Fn, class... Args>
AOTITorchError forward(const char* name, AtenTensorHandle device_of, const char* what, const char* op,
                       Args... args) noexcept {
  Fn fn = nullptr;
  AOTITorchError rc = shim_call(name, [&]() -> Status {
    AOTIRT_ASSIGN_OR_RETURN(const TensorImpl* t, ops::require_tensor(device_of, what));
    AOTIRT_ASSIGN_OR_RETURN(fn, device_op<Fn>(*t, op));
    return Status();
  });
  if (rc != 0) return rc;
  return fn(args...);
}

using MmFn = AOTITorchError (*)(AtenTensorHandle, AtenTensorHandle, AtenTensorHandle);
using AddmmFn = AOTITorchError (*)(AtenTensorHandle, AtenTensorHandle, AtenTensorHandle, AtenTensorHandle, double,
                                   double);
using ConvFn = AOTITorchError (*)(AtenTensorHandle, AtenTensorHandle, AtenTensorHandle*, const int64_t*, int64_t,
                                  const int64_t*, int64_t, const int64_t*, int64_t, int32_t, const int64_t*,
                                  int64_t, int64_t, AtenTensorHandle*);

template <class Fn>
Status view_of(AtenTensorHandle self, AtenTensorHandle* ret, Fn&& fn) {
  AOTIRT_ASSIGN_OR_RETURN(const TensorImpl* t, ops::require_tensor(self, "self"));
  AOTIRT_REQUIRE_OUT(ret);
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl v, fn(*t));
  *ret = new_handle(std::move(v));
  return Status();
}

// new_empty / new_zeros: |self|'s dtype and device unless given.
Status new_like(AtenTensorHandle self, const int64_t* size, int64_t size_len, const int32_t* dtype,
                const int32_t* layout, const int32_t* device, int32_t device_index, bool zeros,
                AtenTensorHandle* ret) {
  AOTIRT_ASSIGN_OR_RETURN(const TensorImpl* t, ops::require_tensor(self, "self"));
  AOTIRT_REQUIRE_OUT(ret);
  AOTIRT_ASSIGN_OR_RETURN(DimVector sizes, tops::read_sizes(size, size_len, "size"));
  AOTIRT_ASSIGN_OR_RETURN(tops::FactoryOptions o,
                          tops::factory_options(dtype, layout, device, device_index, t->dtype(), t->device()));
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl out, empty_contiguous(sizes, o.dtype, o.device));
  if (zeros) AOTIRT_RETURN_IF_ERROR(tops::zero(out));
  *ret = new_handle(std::move(out));
  return Status();
}

}  // namespace

extern "C" {

AOTITorchError aoti_torch_aten_narrow(AtenTensorHandle self, int64_t dim, int64_t start, int64_t length,
                                      AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&]() -> Status {
    return view_of(self, ret0, [&](const TensorImpl& t) { return tops::narrow_view(t, dim, start, length); });
  });
}

AOTITorchError aoti_torch_aten_pad(AtenTensorHandle self, const int64_t* pad, int64_t pad_len_, const char* mode,
                                   double* value, AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&]() -> Status {
    return view_of(self, ret0, [&](const TensorImpl& t) { return tops::pad(t, pad, pad_len_, mode, value); });
  });
}

AOTITorchError aoti_torch_aten_new_empty(AtenTensorHandle self, const int64_t* size, int64_t size_len_,
                                         int32_t* dtype, int32_t* layout, int32_t* device, int32_t device_index_,
                                         int32_t* pin_memory, AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&]() -> Status {
    return new_like(self, size, size_len_, dtype, layout, device, device_index_, false, ret0);
  });
}

AOTITorchError aoti_torch_aten_new_zeros(AtenTensorHandle self, const int64_t* size, int64_t size_len_,
                                         int32_t* dtype, int32_t* layout, int32_t* device, int32_t device_index_,
                                         int32_t* pin_memory, AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&]() -> Status {
    return new_like(self, size, size_len_, dtype, layout, device, device_index_, true, ret0);
  });
}

AOTITorchError aoti_torch_aten_full(const int64_t* size, int64_t size_len_, double fill_value, int32_t* dtype,
                                    int32_t* layout, int32_t* device, int32_t device_index_, int32_t* pin_memory,
                                    AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_REQUIRE_OUT(ret0);
    AOTIRT_ASSIGN_OR_RETURN(DimVector sizes, tops::read_sizes(size, size_len_, "size"));
    // A double fill value without a dtype gives the default dtype, float32.
    AOTIRT_ASSIGN_OR_RETURN(tops::FactoryOptions o, tops::factory_options(dtype, layout, device, device_index_,
                                                                         DType::kFloat32, DeviceId{}));
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl out, tops::full(sizes, fill_value, o.dtype, o.device));
    *ret0 = new_handle(std::move(out));
    return Status();
  });
}

AOTITorchError aoti_torch_view_as_real(AtenTensorHandle self, AtenTensorHandle* ret) noexcept {
  return shim_call(__func__, [&]() -> Status {
    return view_of(self, ret, [&](const TensorImpl& t) { return tops::view_as_real(t); });
  });
}

AOTITorchError aoti_torch_view_dtype(AtenTensorHandle self, int32_t dtype, AtenTensorHandle* ret) noexcept {
  return shim_call(__func__, [&]() -> Status {
    return view_of(self, ret, [&](const TensorImpl& t) { return tops::view_dtype(t, dtype); });
  });
}

AOTITorchError aoti_torch_mm_out(AtenTensorHandle out, AtenTensorHandle self, AtenTensorHandle mat2) noexcept {
  return forward<MmFn>(__func__, self, "self", "mm_out", out, self, mat2);
}

AOTITorchError aoti_torch_bmm_out(AtenTensorHandle out, AtenTensorHandle self, AtenTensorHandle mat2) noexcept {
  return forward<MmFn>(__func__, self, "self", "bmm_out", out, self, mat2);
}

AOTITorchError aoti_torch_addmm_out(AtenTensorHandle out, AtenTensorHandle self, AtenTensorHandle mat1,
                                    AtenTensorHandle mat2, float beta, float alpha) noexcept {
  return forward<AddmmFn>(__func__, mat1, "mat1", "addmm_out", out, self, mat1, mat2, static_cast<double>(beta),
                          static_cast<double>(alpha));
}

AOTITorchError aoti_torch_convolution(AtenTensorHandle input, AtenTensorHandle weight, AtenTensorHandle bias,
                                      const int64_t* stride_ptr, int64_t stride_size, const int64_t* padding_ptr,
                                      int64_t padding_size, const int64_t* dilation_ptr, int64_t dilation_size,
                                      int transposed, const int64_t* output_padding_ptr,
                                      int64_t output_padding_size, int64_t groups, AtenTensorHandle* ret) noexcept {
  // The device op takes the optional bias by pointer; null means none.
  AtenTensorHandle* bias_arg = bias ? &bias : nullptr;
  return forward<ConvFn>(__func__, input, "input", "convolution", input, weight, bias_arg, stride_ptr, stride_size,
                         padding_ptr, padding_size, dilation_ptr, dilation_size, static_cast<int32_t>(transposed),
                         output_padding_ptr, output_padding_size, groups, ret);
}

}  // extern "C"
