// CPU shims of the tensor-structure ops: views (permute, reshape, narrow,
// slice, squeeze, view_as_real/complex, view.dtype), cat, pad, resize_,
// resize_as_, set_, _efficientzerotensor and hann_window. Their rules and
// data movement are the op layer's (ops/tensor_args.h), shared with the
// device-generic shims; what is CPU-specific here is only the check that
// the tensors live in host memory.
#include <omp.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "base/status.h"
#include "core/dtype.h"
#include "device/device.h"
#include "backends/cpu/ops/cpu_op_util.h"
#include "ops/tensor_args.h"
#include "shim/abi/cpu_tensor.h"
#include "shim/common/shim_util.h"

using namespace aotirt;
namespace tops = aotirt::ops::tensor_ops;
using namespace aotirt::cpu_ops;

namespace {

// Resolves |h| as a host tensor.
Result<const TensorImpl*> cpu_tensor(AtenTensorHandle h, const char* what) {
  AOTIRT_ASSIGN_OR_RETURN(const TensorImpl* t, require_tensor(h, what));
  AOTIRT_RETURN_IF_ERROR(check_cpu(*t, what));
  return t;
}

// Runs |fn| (a view, or an op making a new tensor) on a host tensor and
// hands back a new handle for its result.
template <class Fn>
Status on_host(AtenTensorHandle self, AtenTensorHandle* ret, Fn&& fn) {
  AOTIRT_ASSIGN_OR_RETURN(const TensorImpl* t, cpu_tensor(self, "self"));
  AOTIRT_REQUIRE_OUT(ret);
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl v, fn(*t));
  *ret = new_handle(std::move(v));
  return Status();
}

// cat's common case: a contiguous output and contiguous inputs of its
// dtype. Each input is then one block of bytes per index of the dims before
// |dim|, and the blocks are copied in parallel. Returns false (nothing
// copied) when the case does not apply.
bool cat_blocks(const tops::CatPlan& plan, const TensorImpl& out) {
  if (!out.is_contiguous() || out.numel() == 0) return false;
  for (const TensorImpl* t : plan.inputs)
    if (t->dtype() != out.dtype() || !t->is_contiguous()) return false;
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < plan.dim; ++i) outer *= out.sizes()[i];
  for (int64_t i = plan.dim + 1; i < out.dim(); ++i) inner *= out.sizes()[i];
  const int64_t elsize = static_cast<int64_t>(out.element_size());
  const int64_t row = out.sizes()[plan.dim] * inner * elsize;  // output bytes per outer index
  const int64_t inputs = static_cast<int64_t>(plan.inputs.size());
  std::vector<int64_t> offset(static_cast<size_t>(inputs)), block(static_cast<size_t>(inputs));
  int64_t at = 0;
  for (int64_t i = 0; i < inputs; ++i) {
    offset[i] = at;
    block[i] = plan.inputs[i]->sizes()[plan.dim] * inner * elsize;
    at += block[i];
  }
  char* dst = static_cast<char*>(out.data_ptr());
  constexpr int64_t kParallelBytes = int64_t{1} << 20;
  const int64_t tasks = outer * inputs;
  const bool parallel = tasks > 1 && outer * row >= kParallelBytes && omp_get_max_threads() > 1;
#pragma omp parallel for schedule(static) if (parallel)
  for (int64_t k = 0; k < tasks; ++k) {
    const int64_t o = k / inputs, i = k % inputs;
    if (block[i] == 0) continue;
    const char* src = static_cast<const char*>(plan.inputs[i]->data_ptr()) + o * block[i];
    std::memcpy(dst + o * row + offset[i], src, static_cast<size_t>(block[i]));
  }
  return true;
}

Status check_cpu_device(const tops::FactoryOptions& o) {
  AOTIRT_ENSURE(o.device.is_cpu(), kInvalidArgument, "a CPU op was asked for a tensor on {}",
                o.device.to_string());
  return Status();
}

}  // namespace

extern "C" {

AOTITorchError aoti_torch_cpu_permute(AtenTensorHandle self, const int64_t* dims, int64_t dims_len_,
                                      AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&]() -> Status {
    return on_host(self, ret0, [&](const TensorImpl& t) { return tops::permute_view(t, dims, dims_len_); });
  });
}

AOTITorchError aoti_torch_cpu_reshape(AtenTensorHandle self, const int64_t* shape, int64_t shape_len_,
                                      AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&]() -> Status {
    return on_host(self, ret0, [&](const TensorImpl& t) { return tops::reshape(t, shape, shape_len_); });
  });
}

AOTITorchError aoti_torch_cpu_narrow(AtenTensorHandle self, int64_t dim, int64_t start, int64_t length,
                                     AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&]() -> Status {
    return on_host(self, ret0, [&](const TensorImpl& t) { return tops::narrow_view(t, dim, start, length); });
  });
}

AOTITorchError aoti_torch_cpu_slice_Tensor(AtenTensorHandle self, int64_t dim, int64_t* start, int64_t* end,
                                           int64_t step, AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&]() -> Status {
    return on_host(self, ret0, [&](const TensorImpl& t) { return tops::slice_view(t, dim, start, end, step); });
  });
}

AOTITorchError aoti_torch_cpu_squeeze_dim(AtenTensorHandle self, int64_t dim, AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&]() -> Status {
    return on_host(self, ret0, [&](const TensorImpl& t) { return tops::squeeze_dim_view(t, dim); });
  });
}

AOTITorchError aoti_torch_cpu_view_as_complex(AtenTensorHandle self, AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&]() -> Status {
    return on_host(self, ret0, [&](const TensorImpl& t) { return tops::view_as_complex(t); });
  });
}

AOTITorchError aoti_torch_cpu_view_as_real(AtenTensorHandle self, AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&]() -> Status {
    return on_host(self, ret0, [&](const TensorImpl& t) { return tops::view_as_real(t); });
  });
}

AOTITorchError aoti_torch_cpu_view_dtype(AtenTensorHandle self, int32_t dtype, AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&]() -> Status {
    return on_host(self, ret0, [&](const TensorImpl& t) { return tops::view_dtype(t, dtype); });
  });
}

AOTITorchError aoti_torch_cpu_cat(const AtenTensorHandle* tensors, int64_t tensors_len_, int64_t dim,
                                  AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_REQUIRE_OUT(ret0);
    for (int64_t i = 0; tensors && i < tensors_len_; ++i)
      if (tensors[i]) AOTIRT_RETURN_IF_ERROR(check_cpu(*impl_of(tensors[i]), "tensors"));
    AOTIRT_ASSIGN_OR_RETURN(tops::CatPlan plan, tops::cat_plan(tensors, tensors_len_, dim));
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl out, empty_strided(plan.sizes, plan.strides, plan.dtype, plan.device));
    if (!cat_blocks(plan, out)) AOTIRT_RETURN_IF_ERROR(tops::cat_copy(plan, out));
    *ret0 = new_handle(std::move(out));
    return Status();
  });
}

AOTITorchError aoti_torch_cpu_pad(AtenTensorHandle self, const int64_t* pad, int64_t pad_len_, const char* mode,
                                  double* value, AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&]() -> Status {
    return on_host(self, ret0, [&](const TensorImpl& t) { return tops::pad(t, pad, pad_len_, mode, value); });
  });
}

AOTITorchError aoti_torch_cpu_resize_(AtenTensorHandle self, const int64_t* size, int64_t size_len_,
                                      int32_t* memory_format) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_RETURN_IF_ERROR(cpu_tensor(self, "self").status());
    AOTIRT_ASSIGN_OR_RETURN(DimVector sizes, tops::read_sizes(size, size_len_, "size"));
    return tops::resize_(*impl_of(self), sizes, memory_format);
  });
}

AOTITorchError aoti_torch_cpu_resize_as_(AtenTensorHandle self, AtenTensorHandle the_template,
                                         int32_t* memory_format) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_RETURN_IF_ERROR(cpu_tensor(self, "self").status());
    AOTIRT_ASSIGN_OR_RETURN(const TensorImpl* tmpl, require_tensor(the_template, "the_template"));
    return tops::resize_as_(*impl_of(self), *tmpl, memory_format);
  });
}

AOTITorchError aoti_torch_cpu_set__source_Tensor(AtenTensorHandle self, AtenTensorHandle source) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_ASSIGN_OR_RETURN(const TensorImpl* t, cpu_tensor(self, "self"));
    AOTIRT_ASSIGN_OR_RETURN(const TensorImpl* src, cpu_tensor(source, "source"));
    AOTIRT_ENSURE(t->dtype() == src->dtype(), kInvalidArgument,
                  "cannot set a {} tensor to a {} source; their dtypes must match", dtype_name(t->dtype()),
                  dtype_name(src->dtype()));
    // 'self' becomes a view of the source's storage with its layout.
    if (t != src) *impl_of(self) = *src;
    return Status();
  });
}

AOTITorchError aoti_torch_cpu__efficientzerotensor(const int64_t* size, int64_t size_len_, int32_t* dtype,
                                                   int32_t* layout, int32_t* device, int32_t device_index_,
                                                   int32_t* pin_memory, AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_REQUIRE_OUT(ret0);
    AOTIRT_ASSIGN_OR_RETURN(DimVector sizes, tops::read_sizes(size, size_len_, "size"));
    AOTIRT_ASSIGN_OR_RETURN(tops::FactoryOptions o, tops::factory_options(dtype, layout, device, device_index_,
                                                                         DType::kFloat32, DeviceId{}));
    AOTIRT_RETURN_IF_ERROR(check_cpu_device(o));
    // torch's zero tensor is a storage-less marker that only its own kernels
    // understand; a real tensor of zeros has the same values for every
    // consumer.
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl out, empty_contiguous(sizes, o.dtype, o.device));
    AOTIRT_RETURN_IF_ERROR(tops::zero(out));
    *ret0 = new_handle(std::move(out));
    return Status();
  });
}

AOTITorchError aoti_torch_cpu_hann_window(int64_t window_length, int32_t* dtype, int32_t* layout, int32_t* device,
                                          int32_t device_index_, int32_t* pin_memory,
                                          AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_REQUIRE_OUT(ret0);
    AOTIRT_ENSURE(window_length >= 0, kInvalidArgument, "window_length {} must be non-negative", window_length);
    AOTIRT_ASSIGN_OR_RETURN(tops::FactoryOptions o, tops::factory_options(dtype, layout, device, device_index_,
                                                                         DType::kFloat32, DeviceId{}));
    AOTIRT_RETURN_IF_ERROR(check_cpu_device(o));
    const bool floating = o.dtype == DType::kFloat32 || o.dtype == DType::kFloat64 ||
                          o.dtype == DType::kFloat16 || o.dtype == DType::kBFloat16;
    AOTIRT_ENSURE(floating, kInvalidArgument,
                  "hann_window needs a floating dtype, got {}", dtype_name(o.dtype));
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl out, empty_contiguous(DimVector{window_length}, o.dtype, o.device));
    char* data = static_cast<char*>(out.data_ptr());
    const size_t elsize = out.element_size();
    if (window_length == 1) {
      store_from_double(data, o.dtype, 1.0);
    } else if (o.dtype == DType::kFloat64) {
      // Periodic (torch's default): the symmetric window of length N + 1
      // without its last point, 0.5 - 0.5 cos(2 pi n / N).
      const double step = 2.0 * M_PI / static_cast<double>(window_length);
      for (int64_t i = 0; i < window_length; ++i)
        store_from_double(data + i * elsize, o.dtype, 0.5 - 0.5 * std::cos(step * static_cast<double>(i)));
    } else {
      // torch computes the window in the dtype itself, one op at a time
      // (arange, *step, cos, *-0.5, +0.5), each rounded to the dtype; the
      // same rounding reproduces its float16/bfloat16 values, whose arange
      // is already inexact past 256 or 2048. The step, a scalar operand,
      // is rounded to the dtype too.
      auto round = [&](double v) {
        alignas(8) unsigned char scratch[8];
        store_from_double(scratch, o.dtype, v);
        return static_cast<float>(load_as_double(scratch, o.dtype));
      };
      const float step = round(2.0 * M_PI / static_cast<double>(window_length));
      for (int64_t i = 0; i < window_length; ++i) {
        float v = round(static_cast<float>(i));
        v = round(v * step);
        v = round(std::cos(v));
        v = round(v * -0.5f);
        v = round(v + 0.5f);
        store_from_double(data + i * elsize, o.dtype, v);
      }
    }
    *ret0 = new_handle(std::move(out));
    return Status();
  });
}

}  // extern "C"
