// Device-generic fallback ops (c_shim_aten.h and the deprecated generic
// shims of shim_deprecated.h): they serve a tensor on any device. Views are
// metadata; new tensors come from the device registry and are filled with
// the device's own zero and copy (ops/tensor_args.h), so nothing here names
// a backend. mm/bmm/addmm/convolution, nonzero, _fft_c2c, fill_, subtract
// and amax forward to the device's own op (amax to aotirt's
// aoti_torch_<device>_aotirt_amax, torch having no device amax).
#include <dlfcn.h>

#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "device/device.h"
#include "ops/elementwise_args.h"
#include "ops/op_args.h"
#include "ops/tensor_args.h"
#include "shim/abi/cpu_elementwise.h"
#include "shim/abi/cpu_indexing.h"
#include "shim/abi/cpu_random.h"
#include "shim/abi/cpu_tensor.h"
#include "shim/abi/cpu_pooling.h"
#include "shim/abi/cpu_scaled_mm.h"
#include "shim/abi/cpu_selection.h"
#include "shim/abi/generic_attention.h"
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

using RepeatInterleaveFn = AOTITorchError (*)(AtenTensorHandle, int64_t*, AtenTensorHandle*);
// The device's _embedding_bag: per_sample_weights by pointer, mode and
// padding_idx as int64 (the generic entry point has them as int32).
using EmbeddingBagFn = AOTITorchError (*)(AtenTensorHandle, AtenTensorHandle, AtenTensorHandle, int32_t, int64_t,
                                          int32_t, AtenTensorHandle*, int32_t, int64_t, AtenTensorHandle*,
                                          AtenTensorHandle*, AtenTensorHandle*, AtenTensorHandle*);
using MmFn = AOTITorchError (*)(AtenTensorHandle, AtenTensorHandle, AtenTensorHandle);
using AddmmFn = AOTITorchError (*)(AtenTensorHandle, AtenTensorHandle, AtenTensorHandle, AtenTensorHandle, double,
                                   double);
using NonzeroFn = AOTITorchError (*)(AtenTensorHandle, AtenTensorHandle*);
using FftC2cFn = AOTITorchError (*)(AtenTensorHandle, const int64_t*, int64_t, int64_t, int32_t, AtenTensorHandle*);
using ConvFn = AOTITorchError (*)(AtenTensorHandle, AtenTensorHandle, AtenTensorHandle*, const int64_t*, int64_t,
                                  const int64_t*, int64_t, const int64_t*, int64_t, int32_t, const int64_t*,
                                  int64_t, int64_t, AtenTensorHandle*);

using FillFn = AOTITorchError (*)(AtenTensorHandle, double);
using AddFn = AOTITorchError (*)(AtenTensorHandle, AtenTensorHandle, double, AtenTensorHandle*);
using AmaxFn = AOTITorchError (*)(AtenTensorHandle, const int64_t*, int64_t, int32_t, AtenTensorHandle*);

// The operand whose device a binary op runs on: |self|, unless it is a 0-d
// CPU tensor joining a tensor on another device (torch runs the op there).
AtenTensorHandle binary_device_of(AtenTensorHandle self, AtenTensorHandle other) {
  if (!self || !other) return self;
  const TensorImpl* s = impl_of(self);
  const TensorImpl* o = impl_of(other);
  if (s->dim() == 0 && s->device().is_cpu() && !o->device().is_cpu()) return other;
  return self;
}

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

// ---- device-generic attention (shim_deprecated.h) ----------------------------

using FlashFn = AOTITorchError (*)(AtenTensorHandle, AtenTensorHandle, AtenTensorHandle, double, int32_t, int32_t,
                                   double*, AtenTensorHandle*, AtenTensorHandle*, AtenTensorHandle*,
                                   AtenTensorHandle*, int64_t*, int64_t*, AtenTensorHandle*, AtenTensorHandle*,
                                   AtenTensorHandle*);
using EfficientFn = AOTITorchError (*)(AtenTensorHandle, AtenTensorHandle, AtenTensorHandle, AtenTensorHandle*,
                                       int32_t, double, int32_t, double*, AtenTensorHandle*, AtenTensorHandle*,
                                       AtenTensorHandle*, AtenTensorHandle*);
// The single-output flavour a device may have instead (the CPU's
// _scaled_dot_product_flash_attention_for_cpu): the output and logsumexp.
using FusedFn = AOTITorchError (*)(AtenTensorHandle, AtenTensorHandle, AtenTensorHandle, double, int32_t,
                                   AtenTensorHandle*, double*, AtenTensorHandle*, AtenTensorHandle*);

// The device's own |op| for |t|, or null when it has none.
void* device_export(const TensorImpl& t, const char* op) {
  const BackendInfo* backend = backend_for(t.device().type);
  return backend ? own_export(std::string("aoti_torch_") + backend->name + "_" + op) : nullptr;
}

// Which implementation serves |query|'s device: its own |op|, else the
// fused flavour, else UNIMPLEMENTED.
Status pick_attention(AtenTensorHandle query, const char* op, void** own, FusedFn* fused) {
  AOTIRT_ASSIGN_OR_RETURN(const TensorImpl* q, ops::require_tensor(query, "query"));
  *own = device_export(*q, op);
  if (!*own) *fused = reinterpret_cast<FusedFn>(device_export(*q, "_scaled_dot_product_flash_attention_for_cpu"));
  AOTIRT_ENSURE(*own || *fused, kUnimplemented, "{} is not available for tensors on {}", op, q->device().to_string());
  return Status();
}

// Owns handles made on the way, until they are handed out.
struct HandleGuard {
  std::vector<AtenTensorHandle*> slots;
  ~HandleGuard() {
    for (AtenTensorHandle* s : slots)
      if (*s) {
        delete impl_of(*s);
        *s = nullptr;
      }
  }
};

Result<AtenTensorHandle> zeros_handle(const DimVector& sizes, DType dtype, DeviceId device) {
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl t, empty_contiguous(sizes, dtype, device));
  if (t.numel() > 0) AOTIRT_RETURN_IF_ERROR(tops::zero(t));
  return new_handle(std::move(t));
}

// Runs the fused flavour and checks what it cannot honour: dropout (aotirt
// runs inference) and an attention-weights debug mask.
Status run_fused(FusedFn fused, AtenTensorHandle query, AtenTensorHandle key, AtenTensorHandle value,
                 AtenTensorHandle* attn_mask, double dropout_p, bool is_causal, double* scale, AtenTensorHandle* out,
                 AtenTensorHandle* lse) {
  AOTIRT_ENSURE(dropout_p == 0.0, kUnimplemented, "dropout_p {}: only 0 is implemented (inference)", dropout_p);
  if (fused(query, key, value, 0.0, is_causal ? 1 : 0, attn_mask, scale, out, lse) != 0) return get_last_error();
  return Status();
}

// Flash attention's nine outputs from the fused flavour: the output and
// logsumexp, then what torch's flash attention gives without nested inputs
// or dropout (undefined sequence offsets, the sequence lengths, zero RNG
// state on the host, an empty debug mask).
Status flash_from_fused(FusedFn fused, AtenTensorHandle query, AtenTensorHandle key, AtenTensorHandle value,
                        double dropout_p, bool is_causal, bool return_debug_mask, double* scale,
                        AtenTensorHandle* ret0, AtenTensorHandle* ret1, AtenTensorHandle* ret2,
                        AtenTensorHandle* ret3, int64_t* ret4, int64_t* ret5, AtenTensorHandle* ret6,
                        AtenTensorHandle* ret7, AtenTensorHandle* ret8) {
  AOTIRT_REQUIRE_OUT(ret0);
  AOTIRT_REQUIRE_OUT(ret1);
  AOTIRT_ENSURE(!return_debug_mask, kUnimplemented, "return_debug_mask: the attention weights are not kept");
  AOTIRT_ASSIGN_OR_RETURN(const TensorImpl* q, ops::require_tensor(query, "query"));
  AOTIRT_ASSIGN_OR_RETURN(const TensorImpl* k, ops::require_tensor(key, "key"));
  AOTIRT_ENSURE(q->dim() == 4 && k->dim() == 4, kInvalidArgument,
                "query and key must be 4-d [batch, heads, length, dim], got {} and {}", ops::shape_str(*q),
                ops::shape_str(*k));
  AtenTensorHandle out = nullptr, lse = nullptr, cum_q = nullptr, cum_k = nullptr, seed = nullptr,
                   offset = nullptr, debug = nullptr;
  HandleGuard guard{{&out, &lse, &cum_q, &cum_k, &seed, &offset, &debug}};
  AOTIRT_RETURN_IF_ERROR(run_fused(fused, query, key, value, nullptr, dropout_p, is_causal, scale, &out, &lse));
  cum_q = new_handle(TensorImpl());
  cum_k = new_handle(TensorImpl());
  AOTIRT_ASSIGN_OR_RETURN(seed, zeros_handle(DimVector{2}, DType::kUInt64, DeviceId{}));
  AOTIRT_ASSIGN_OR_RETURN(offset, zeros_handle(DimVector{}, DType::kUInt64, DeviceId{}));
  AOTIRT_ASSIGN_OR_RETURN(debug, zeros_handle(DimVector{0}, q->dtype(), q->device()));
  const std::pair<AtenTensorHandle*, AtenTensorHandle*> outs[] = {{ret0, &out}, {ret1, &lse},   {ret2, &cum_q},
                                                                  {ret3, &cum_k}, {ret6, &seed}, {ret7, &offset},
                                                                  {ret8, &debug}};
  for (const auto& o : outs) {
    if (o.first) {
      *o.first = *o.second;
      *o.second = nullptr;  // handed out
    }
  }
  if (ret4) *ret4 = q->sizes()[2];
  if (ret5) *ret5 = k->sizes()[2];
  return Status();
}

// ---- device-generic _scaled_mm (shim_deprecated.h) ---------------------------

using ScaledMmFn = AOTITorchError (*)(AtenTensorHandle, AtenTensorHandle, AtenTensorHandle, AtenTensorHandle,
                                      AtenTensorHandle*, AtenTensorHandle*, int32_t*, int32_t, AtenTensorHandle*);

// The largest absolute value of |t| (any device) as a 0-d float32 tensor on
// its device: the second output of the first _scaled_mm.
Result<TensorImpl> abs_max(const TensorImpl& t) {
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl host, empty_contiguous(t.sizes(), DType::kFloat32, DeviceId{}));
  if (host.numel() > 0) AOTIRT_RETURN_IF_ERROR(copy_tensor(host, t, false));
  float m = 0.0f;
  const float* p = static_cast<const float*>(host.data_ptr());
  for (int64_t i = 0; i < host.numel(); ++i) {
    const float a = p[i] < 0 ? -p[i] : p[i];
    if (a > m || a != a) m = a;  // NaN wins, as torch's amax
  }
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl one, empty_contiguous(DimVector{}, DType::kFloat32, DeviceId{}));
  *static_cast<float*>(one.data_ptr()) = m;
  if (t.device().type == DeviceType::kCpu) return one;
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl dev, empty_contiguous(DimVector{}, DType::kFloat32, t.device()));
  AOTIRT_RETURN_IF_ERROR(copy_tensor(dev, one, false));
  return dev;
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

AOTITorchError aoti_torch_repeat_interleave_Tensor(AtenTensorHandle repeats, int64_t* output_size,
                                                   AtenTensorHandle* out) noexcept {
  return forward<RepeatInterleaveFn>(__func__, repeats, "repeats", "repeat_interleave_Tensor", repeats, output_size,
                                     out);
}

AOTITorchError aoti_torch__embedding_bag(AtenTensorHandle weight, AtenTensorHandle indices, AtenTensorHandle offsets,
                                         int32_t scale_grad_by_freq, int32_t mode, int32_t sparse,
                                         AtenTensorHandle per_sample_weights, int32_t include_last_offset,
                                         int32_t padding_idx, AtenTensorHandle* ret0, AtenTensorHandle* ret1,
                                         AtenTensorHandle* ret2, AtenTensorHandle* ret3) noexcept {
  AtenTensorHandle* psw = per_sample_weights ? &per_sample_weights : nullptr;
  return forward<EmbeddingBagFn>(__func__, weight, "weight", "_embedding_bag", weight, indices, offsets,
                                 scale_grad_by_freq, static_cast<int64_t>(mode), sparse, psw, include_last_offset,
                                 static_cast<int64_t>(padding_idx), ret0, ret1, ret2, ret3);
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

AOTITorchError aoti_torch_nonzero(AtenTensorHandle self, AtenTensorHandle* out) noexcept {
  return forward<NonzeroFn>(__func__, self, "self", "nonzero", self, out);
}

AOTITorchError aoti_torch__fft_c2c(AtenTensorHandle self, const int64_t* dim_ptr, int64_t dim_size,
                                   int64_t normalization, int32_t forward_dir, AtenTensorHandle* ret) noexcept {
  return forward<FftC2cFn>(__func__, self, "self", "_fft_c2c", self, dim_ptr, dim_size, normalization, forward_dir,
                           ret);
}

AOTITorchError aoti_torch_aten_fill__Scalar(AtenTensorHandle self, double value) noexcept {
  return forward<FillFn>(__func__, self, "self", "fill__Scalar", self, value);
}

AOTITorchError aoti_torch_aten_subtract_Tensor(AtenTensorHandle self, AtenTensorHandle other, double alpha,
                                               AtenTensorHandle* ret0) noexcept {
  const AOTITorchError rc = shim_call(__func__, [&] { return ops::ew::check_subtract(self, other); });
  if (rc != 0) return rc;
  // Past sub's own refusals (bool operands), self - alpha * other is
  // add.Tensor with alpha negated: the same dtypes, layout and values.
  return forward<AddFn>(__func__, binary_device_of(self, other), "self", "add_Tensor", self, other, -alpha, ret0);
}

AOTITorchError aoti_torch_aten_amax(AtenTensorHandle self, const int64_t* dim, int64_t dim_len_, int32_t keepdim,
                                    AtenTensorHandle* ret0) noexcept {
  return forward<AmaxFn>(__func__, self, "self", "aotirt_amax", self, dim, dim_len_, keepdim, ret0);
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

AOTITorchError aoti_torch__scaled_dot_product_flash_attention(
    AtenTensorHandle query, AtenTensorHandle key, AtenTensorHandle value, double dropout_p, bool is_causal,
    bool return_debug_mask, double scale, AtenTensorHandle* ret0, AtenTensorHandle* ret1, AtenTensorHandle* ret2,
    AtenTensorHandle* ret3, int64_t* ret4, int64_t* ret5, AtenTensorHandle* ret6, AtenTensorHandle* ret7,
    AtenTensorHandle* ret8) noexcept {
  return aoti_torch__scaled_dot_product_flash_attention_v2(query, key, value, dropout_p, is_causal ? 1 : 0,
                                                           return_debug_mask ? 1 : 0, &scale, ret0, ret1, ret2,
                                                           ret3, ret4, ret5, ret6, ret7, ret8);
}

AOTITorchError aoti_torch__scaled_dot_product_flash_attention_v2(
    AtenTensorHandle query, AtenTensorHandle key, AtenTensorHandle value, double dropout_p, int is_causal,
    int return_debug_mask, double* scale, AtenTensorHandle* ret0, AtenTensorHandle* ret1, AtenTensorHandle* ret2,
    AtenTensorHandle* ret3, int64_t* ret4, int64_t* ret5, AtenTensorHandle* ret6, AtenTensorHandle* ret7,
    AtenTensorHandle* ret8) noexcept {
  void* own = nullptr;
  FusedFn fused = nullptr;
  const AOTITorchError rc = shim_call(__func__, [&] {
    return pick_attention(query, "_scaled_dot_product_flash_attention", &own, &fused);
  });
  if (rc != 0) return rc;
  if (own)
    return reinterpret_cast<FlashFn>(own)(query, key, value, dropout_p, is_causal, return_debug_mask, scale, ret0,
                                          ret1, ret2, ret3, ret4, ret5, ret6, ret7, ret8);
  return shim_call(__func__, [&] {
    return flash_from_fused(fused, query, key, value, dropout_p, is_causal != 0, return_debug_mask != 0, scale,
                            ret0, ret1, ret2, ret3, ret4, ret5, ret6, ret7, ret8);
  });
}

AOTITorchError aoti_torch__scaled_dot_product_efficient_attention(
    AtenTensorHandle query, AtenTensorHandle key, AtenTensorHandle value, AtenTensorHandle attn_bias,
    int compute_log_sumexp, double dropout_p, int is_causal, double* scale, AtenTensorHandle* ret0,
    AtenTensorHandle* ret1, AtenTensorHandle* ret2, AtenTensorHandle* ret3) noexcept {
  void* own = nullptr;
  FusedFn fused = nullptr;
  const AOTITorchError rc = shim_call(__func__, [&] {
    return pick_attention(query, "_scaled_dot_product_efficient_attention", &own, &fused);
  });
  if (rc != 0) return rc;
  // The device ops take the optional bias by pointer; null means none.
  AtenTensorHandle* bias = attn_bias ? &attn_bias : nullptr;
  if (own)
    return reinterpret_cast<EfficientFn>(own)(query, key, value, bias, compute_log_sumexp, dropout_p, is_causal,
                                              scale, ret0, ret1, ret2, ret3);
  // From the fused flavour: the output, the logsumexp ([batch, heads,
  // length], or [batch, heads, 0] when not asked for) and zero RNG state.
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_REQUIRE_OUT(ret0);
    AOTIRT_REQUIRE_OUT(ret1);
    AOTIRT_ASSIGN_OR_RETURN(const TensorImpl* q, ops::require_tensor(query, "query"));
    AOTIRT_ENSURE(q->dim() == 4, kInvalidArgument, "query must be 4-d [batch, heads, length, dim], got {}",
                  ops::shape_str(*q));
    AtenTensorHandle out = nullptr, lse = nullptr, seed = nullptr, offset = nullptr;
    HandleGuard guard{{&out, &lse, &seed, &offset}};
    AOTIRT_RETURN_IF_ERROR(run_fused(fused, query, key, value, bias, dropout_p, is_causal != 0, scale, &out, &lse));
    if (!compute_log_sumexp) {
      delete impl_of(lse);
      lse = nullptr;
      AOTIRT_ASSIGN_OR_RETURN(lse, zeros_handle(DimVector{q->sizes()[0], q->sizes()[1], 0}, DType::kFloat32,
                                                q->device()));
    }
    AOTIRT_ASSIGN_OR_RETURN(seed, zeros_handle(DimVector{}, DType::kInt64, DeviceId{}));
    AOTIRT_ASSIGN_OR_RETURN(offset, zeros_handle(DimVector{}, DType::kInt64, DeviceId{}));
    *ret0 = out;
    out = nullptr;
    *ret1 = lse;
    lse = nullptr;
    if (ret2) {
      *ret2 = seed;
      seed = nullptr;
    }
    if (ret3) {
      *ret3 = offset;
      offset = nullptr;
    }
    return Status();
  });
}

AOTITorchError aoti_torch__scaled_mm_v2(AtenTensorHandle self, AtenTensorHandle mat2, AtenTensorHandle scale_a,
                                        AtenTensorHandle scale_b, AtenTensorHandle bias,
                                        AtenTensorHandle scale_result, int32_t* out_dtype, int8_t use_fast_accum,
                                        AtenTensorHandle* ret0) noexcept {
  // The device ops take the optional tensors by pointer; null means none.
  AtenTensorHandle* bias_arg = bias ? &bias : nullptr;
  AtenTensorHandle* result_arg = scale_result ? &scale_result : nullptr;
  return forward<ScaledMmFn>(__func__, self, "self", "_scaled_mm", self, mat2, scale_a, scale_b, bias_arg,
                             result_arg, out_dtype, static_cast<int32_t>(use_fast_accum), ret0);
}

AOTITorchError aoti_torch__scaled_mm(AtenTensorHandle self, AtenTensorHandle mat2, AtenTensorHandle bias,
                                     int32_t* out_dtype, AtenTensorHandle scale_a, AtenTensorHandle scale_b,
                                     AtenTensorHandle scale_result, int8_t use_fast_accum, AtenTensorHandle* ret0,
                                     AtenTensorHandle* ret1) noexcept {
  AtenTensorHandle out = nullptr;
  const AOTITorchError rc = aoti_torch__scaled_mm_v2(self, mat2, scale_a, scale_b, bias, scale_result, out_dtype,
                                                     use_fast_accum, &out);
  if (rc != 0) return rc;
  // The first _scaled_mm also returned the output's absolute maximum.
  return shim_call(__func__, [&]() -> Status {
    HandleGuard guard{{&out}};
    AOTIRT_REQUIRE_OUT(ret0);
    if (ret1) {
      AOTIRT_ASSIGN_OR_RETURN(TensorImpl amax, abs_max(*impl_of(out)));
      *ret1 = new_handle(std::move(amax));
    }
    *ret0 = out;
    out = nullptr;
    return Status();
  });
}

}  // extern "C"
