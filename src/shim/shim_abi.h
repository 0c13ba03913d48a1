// The aoti_torch_* C ABI that AOTInductor model libraries import, declared by
// aotirt itself so the runtime builds without torch. tests/shim/abi_match_test
// compiles this header together with torch's own shim headers: any signature
// that drifts from torch's becomes a compile error there.
//
// Every function here is implemented by aotirt and exported from libaotirt.so
// with default visibility; nothing else in the library is exported.
#pragma once

#include <stddef.h>
#include <stdint.h>

#define AOTIRT_SHIM_EXPORT __attribute__((visibility("default")))

// Definitions are noexcept: no exception may cross into the model library.
// The ABI check compiles without it because torch's declarations carry none.
#if defined(__cplusplus) && !defined(AOTIRT_ABI_CHECK)
#define AOTIRT_NOEXCEPT noexcept
#else
#define AOTIRT_NOEXCEPT
#endif

#ifdef __cplusplus
extern "C" {
#endif

struct AtenTensorOpaque;
typedef struct AtenTensorOpaque* AtenTensorHandle;
struct AtenGeneratorOpaque;
typedef struct AtenGeneratorOpaque* AtenGeneratorHandle;
struct AOTIProxyExecutorOpaque;
typedef struct AOTIProxyExecutorOpaque* AOTIProxyExecutorHandle;
struct C10IValueOpaque;
typedef struct C10IValueOpaque* C10IValueHandle;
typedef int32_t AOTITorchError;

struct CUDAGuardOpaque;
typedef struct CUDAGuardOpaque* CUDAGuardHandle;
struct CUDAStreamGuardOpaque;
typedef struct CUDAStreamGuardOpaque* CUDAStreamGuardHandle;
struct DeviceGuardOpaque;
typedef struct DeviceGuardOpaque* DeviceGuardHandle;
struct StreamOpaque;
typedef struct StreamOpaque* StreamHandle;

// Layout-compatible with c10::Half, c10::BFloat16 and c10::complex<float/double>
// (same size, alignment and calling convention on x86-64 and AArch64).
typedef struct { uint16_t bits; } AotirtHalf;
typedef struct { uint16_t bits; } AotirtBFloat16;
// c10::complex<T> is aligned to 2 * sizeof(T), which matters once it is
// passed on the stack or sits in an array.
typedef struct __attribute__((aligned(8))) { float real, imag; } AotirtComplex64;
typedef struct __attribute__((aligned(16))) { double real, imag; } AotirtComplex128;

#define AOTIRT_DECLARE_CONSTANT(type, name) AOTIRT_SHIM_EXPORT type name(void) AOTIRT_NOEXCEPT;

// ---- constants (c10 numbering) ----
AOTIRT_DECLARE_CONSTANT(int32_t, aoti_torch_device_type_cpu)
AOTIRT_DECLARE_CONSTANT(int32_t, aoti_torch_device_type_cuda)
AOTIRT_DECLARE_CONSTANT(int32_t, aoti_torch_device_type_meta)
AOTIRT_DECLARE_CONSTANT(int32_t, aoti_torch_device_type_xpu)
AOTIRT_DECLARE_CONSTANT(int32_t, aoti_torch_device_type_mps)
AOTIRT_DECLARE_CONSTANT(int32_t, aoti_torch_device_type_privateuse1)
AOTIRT_DECLARE_CONSTANT(int32_t, aoti_torch_dtype_float8_e5m2)
AOTIRT_DECLARE_CONSTANT(int32_t, aoti_torch_dtype_float8_e4m3fn)
AOTIRT_DECLARE_CONSTANT(int32_t, aoti_torch_dtype_float8_e5m2fnuz)
AOTIRT_DECLARE_CONSTANT(int32_t, aoti_torch_dtype_float8_e4m3fnuz)
AOTIRT_DECLARE_CONSTANT(int32_t, aoti_torch_dtype_bfloat16)
AOTIRT_DECLARE_CONSTANT(int32_t, aoti_torch_dtype_float16)
AOTIRT_DECLARE_CONSTANT(int32_t, aoti_torch_dtype_float32)
AOTIRT_DECLARE_CONSTANT(int32_t, aoti_torch_dtype_float64)
AOTIRT_DECLARE_CONSTANT(int32_t, aoti_torch_dtype_uint8)
AOTIRT_DECLARE_CONSTANT(int32_t, aoti_torch_dtype_uint16)
AOTIRT_DECLARE_CONSTANT(int32_t, aoti_torch_dtype_uint32)
AOTIRT_DECLARE_CONSTANT(int32_t, aoti_torch_dtype_uint64)
AOTIRT_DECLARE_CONSTANT(int32_t, aoti_torch_dtype_int8)
AOTIRT_DECLARE_CONSTANT(int32_t, aoti_torch_dtype_int16)
AOTIRT_DECLARE_CONSTANT(int32_t, aoti_torch_dtype_int32)
AOTIRT_DECLARE_CONSTANT(int32_t, aoti_torch_dtype_int64)
AOTIRT_DECLARE_CONSTANT(int32_t, aoti_torch_dtype_bool)
AOTIRT_DECLARE_CONSTANT(int32_t, aoti_torch_dtype_complex32)
AOTIRT_DECLARE_CONSTANT(int32_t, aoti_torch_dtype_complex64)
AOTIRT_DECLARE_CONSTANT(int32_t, aoti_torch_dtype_complex128)
AOTIRT_SHIM_EXPORT size_t aoti_torch_dtype_element_size(int32_t dtype) AOTIRT_NOEXCEPT;
AOTIRT_DECLARE_CONSTANT(int32_t, aoti_torch_layout_strided)
AOTIRT_DECLARE_CONSTANT(int32_t, aoti_torch_layout_sparse_coo)
AOTIRT_DECLARE_CONSTANT(int32_t, aoti_torch_layout_sparse_csr)
AOTIRT_DECLARE_CONSTANT(int32_t, aoti_torch_layout_sparse_csc)
AOTIRT_DECLARE_CONSTANT(int32_t, aoti_torch_layout_sparse_bsr)
AOTIRT_DECLARE_CONSTANT(int32_t, aoti_torch_layout_sparse_bsc)
AOTIRT_DECLARE_CONSTANT(int32_t, aoti_torch_layout__mkldnn)
AOTIRT_DECLARE_CONSTANT(int32_t, aoti_torch_layout_jagged)
AOTIRT_DECLARE_CONSTANT(int32_t, aoti_torch_memory_format_contiguous_format)
AOTIRT_DECLARE_CONSTANT(int32_t, aoti_torch_memory_format_channels_last)
AOTIRT_DECLARE_CONSTANT(int32_t, aoti_torch_memory_format_channels_last_3d)
AOTIRT_DECLARE_CONSTANT(int32_t, aoti_torch_memory_format_preserve_format)
AOTIRT_DECLARE_CONSTANT(uint64_t, aoti_torch_abi_version)

// ---- item / scalar_to_tensor ----
#ifndef AOTIRT_ABI_CHECK_SKIP_C10_TYPES
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_item_float16(AtenTensorHandle tensor, AotirtHalf* ret_value) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_item_bfloat16(AtenTensorHandle tensor, AotirtBFloat16* ret_value) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_item_complex64(AtenTensorHandle tensor, AotirtComplex64* ret_value) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_scalar_to_tensor_complex64(AotirtComplex64 value, AtenTensorHandle* ret_new_tensor) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_scalar_to_tensor_complex128(AotirtComplex128 value, AtenTensorHandle* ret_new_tensor) AOTIRT_NOEXCEPT;
#endif
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_item_float32(AtenTensorHandle tensor, float* ret_value) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_item_float64(AtenTensorHandle tensor, double* ret_value) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_item_uint8(AtenTensorHandle tensor, uint8_t* ret_value) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_item_uint16(AtenTensorHandle tensor, uint16_t* ret_value) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_item_uint32(AtenTensorHandle tensor, uint32_t* ret_value) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_item_uint64(AtenTensorHandle tensor, uint64_t* ret_value) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_item_int8(AtenTensorHandle tensor, int8_t* ret_value) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_item_int16(AtenTensorHandle tensor, int16_t* ret_value) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_item_int32(AtenTensorHandle tensor, int32_t* ret_value) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_item_int64(AtenTensorHandle tensor, int64_t* ret_value) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_item_bool(AtenTensorHandle tensor, bool* ret_value) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_scalar_to_tensor_float32(float value, AtenTensorHandle* ret_new_tensor) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_scalar_to_tensor_float64(double value, AtenTensorHandle* ret_new_tensor) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_scalar_to_tensor_uint8(uint8_t value, AtenTensorHandle* ret_new_tensor) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_scalar_to_tensor_uint16(uint16_t value, AtenTensorHandle* ret_new_tensor) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_scalar_to_tensor_uint32(uint32_t value, AtenTensorHandle* ret_new_tensor) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_scalar_to_tensor_uint64(uint64_t value, AtenTensorHandle* ret_new_tensor) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_scalar_to_tensor_int8(int8_t value, AtenTensorHandle* ret_new_tensor) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_scalar_to_tensor_int16(int16_t value, AtenTensorHandle* ret_new_tensor) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_scalar_to_tensor_int32(int32_t value, AtenTensorHandle* ret_new_tensor) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_scalar_to_tensor_int64(int64_t value, AtenTensorHandle* ret_new_tensor) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_scalar_to_tensor_bool(bool value, AtenTensorHandle* ret_new_tensor) AOTIRT_NOEXCEPT;

// ---- grad mode ----
AOTIRT_SHIM_EXPORT bool aoti_torch_grad_mode_is_enabled(void) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT void aoti_torch_grad_mode_set_enabled(bool enabled) AOTIRT_NOEXCEPT;

// ---- lifetime, getters ----
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_delete_tensor_object(AtenTensorHandle tensor) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_get_data_ptr(AtenTensorHandle tensor, void** ret_data_ptr) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_get_storage_size(AtenTensorHandle tensor, int64_t* ret_size) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_get_dim(AtenTensorHandle tensor, int64_t* ret_dim) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_get_numel(AtenTensorHandle tensor, int64_t* ret_numel) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_get_storage_numel(AtenTensorHandle tensor, int64_t* ret_numel) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_get_sizes(AtenTensorHandle tensor, int64_t** ret_sizes) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_get_size(AtenTensorHandle tensor, int64_t d, int64_t* ret_size) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_get_strides(AtenTensorHandle tensor, int64_t** ret_strides) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_get_stride(AtenTensorHandle tensor, int64_t d, int64_t* ret_stride) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_get_dtype(AtenTensorHandle tensor, int32_t* ret_dtype) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_get_device_type(AtenTensorHandle tensor, int32_t* ret_device_type) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_get_device_index(AtenTensorHandle tensor, int32_t* ret_device_index) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_get_layout(AtenTensorHandle tensor, int32_t* ret_layout) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_get_storage_offset(AtenTensorHandle tensor, int64_t* ret_storage_offset) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_is_contiguous(AtenTensorHandle tensor, bool* ret_is_contiguous) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_is_defined(AtenTensorHandle tensor, bool* ret_is_defined) AOTIRT_NOEXCEPT;

// ---- creation and views ----
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_new_tensor_handle(AtenTensorHandle orig_handle, AtenTensorHandle* new_handle) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch__alloc_from_pool(AtenTensorHandle self, int64_t offset_bytes, int32_t dtype,
    int64_t ndim, const int64_t* sizes_ptr, const int64_t* strides_ptr, AtenTensorHandle* ret_new_tensor) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch__reinterpret_tensor(AtenTensorHandle self, int64_t ndim,
    const int64_t* sizes_ptr, const int64_t* strides_ptr, int64_t storage_offset, AtenTensorHandle* ret_new_tensor) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_empty_strided(int64_t ndim, const int64_t* sizes_ptr,
    const int64_t* strides_ptr, int32_t dtype, int32_t device_type, int32_t device_index,
    AtenTensorHandle* ret_new_tensor) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_empty_strided_pinned(int64_t ndim, const int64_t* sizes_ptr,
    const int64_t* strides_ptr, int32_t dtype, int32_t device_type, int32_t device_index,
    AtenTensorHandle* ret_new_tensor) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_as_strided(AtenTensorHandle self, const int64_t* sizes_ptr,
    const int64_t* strides_ptr, AtenTensorHandle* ret) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_create_tensor_from_blob(void* data, int64_t ndim,
    const int64_t* sizes_ptr, const int64_t* strides_ptr, int64_t storage_offset, int32_t dtype,
    int32_t device_type, int32_t device_index, AtenTensorHandle* ret) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_create_tensor_from_blob_v2(void* data, int64_t ndim,
    const int64_t* sizes_ptr, const int64_t* strides_ptr, int64_t storage_offset, int32_t dtype,
    int32_t device_type, int32_t device_index, AtenTensorHandle* ret, int32_t layout,
    const uint8_t* opaque_metadata, int64_t opaque_metadata_size) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_new_uninitialized_tensor(AtenTensorHandle* ret) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_tensor_copy_(AtenTensorHandle src, AtenTensorHandle dst) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_assign_tensors(AtenTensorHandle src, AtenTensorHandle dst) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_assign_tensors_out(AtenTensorHandle src, AtenTensorHandle* ret_dst) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_clone(AtenTensorHandle self, AtenTensorHandle* ret) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_clone_preserve_strides(AtenTensorHandle self, AtenTensorHandle* ret) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_copy_(AtenTensorHandle self, AtenTensorHandle src, int32_t non_blocking) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_zero_(AtenTensorHandle self) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_check_inf_and_nan(const char* tensor_name, AtenTensorHandle tensor) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT void aoti_torch_print_tensor_handle(AtenTensorHandle self, const char* msg) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT void aoti_torch_save_tensor_handle(AtenTensorHandle self, const char* tensor_name,
    const char* launch_prefix, const char* kernel_name) AOTIRT_NOEXCEPT;

// ---- profiling hooks (cpp.enable_kernel_profile) ----
struct AtenRecordFunctionOpaque;
typedef struct AtenRecordFunctionOpaque* AtenRecordFunctionHandle;
struct IValueMapOpaque;
typedef struct IValueMapOpaque* IValueMapHandle;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_record_function_start(const char* name, IValueMapHandle kwargs,
    const C10IValueHandle* inputs, const uint64_t n_inputs, AtenRecordFunctionHandle* guard) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_record_function_end(AtenRecordFunctionHandle guard) AOTIRT_NOEXCEPT;

// ---- device-generic guards and streams ----
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_create_device_guard(int32_t device_index, DeviceGuardHandle* ret_guard) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_delete_device_guard(DeviceGuardHandle guard) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_device_guard_set_index(DeviceGuardHandle guard, int32_t device_index) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_get_current_device_index(int32_t* ret_device_index) AOTIRT_NOEXCEPT;

// ---- errors ----
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_proxy_executor_call_function(AOTIProxyExecutorHandle proxy_executor,
    int extern_node_index, int num_ints, int64_t* flatten_int_args, int num_tensors,
    AtenTensorHandle* flatten_tensor_args) AOTIRT_NOEXCEPT;
// Throws (never returns) when |cond| is false, as libtorch does: generated
// kernels rely on it to stop. So it is the one shim that is not noexcept.
AOTIRT_SHIM_EXPORT void aoti_torch_check(bool cond, const char* func, const char* file, uint32_t line, const char* msg);
AOTIRT_SHIM_EXPORT void aoti_torch_warn(const char* func, const char* file, uint32_t line, const char* msg) AOTIRT_NOEXCEPT;

// ---- CPU fallback ops (c_shim_cpu.h) ----
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cpu_mm_out(AtenTensorHandle out, AtenTensorHandle self, AtenTensorHandle mat2) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cpu_addmm_out(AtenTensorHandle out, AtenTensorHandle self,
    AtenTensorHandle mat1, AtenTensorHandle mat2, double beta, double alpha) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cpu_bmm_out(AtenTensorHandle out, AtenTensorHandle self, AtenTensorHandle mat2) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cpu_baddbmm_out(AtenTensorHandle out, AtenTensorHandle self,
    AtenTensorHandle batch1, AtenTensorHandle batch2, double beta, double alpha) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cpu_convolution(AtenTensorHandle input, AtenTensorHandle weight,
    AtenTensorHandle* bias, const int64_t* stride, int64_t stride_len_, const int64_t* padding,
    int64_t padding_len_, const int64_t* dilation, int64_t dilation_len_, int32_t transposed,
    const int64_t* output_padding, int64_t output_padding_len_, int64_t groups, AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cpu_cumsum(AtenTensorHandle self, int64_t dim, int32_t* dtype,
    AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cpu_cumprod(AtenTensorHandle self, int64_t dim, int32_t* dtype,
    AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cpu_logcumsumexp(AtenTensorHandle self, int64_t dim,
    AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cpu_cummax(AtenTensorHandle self, int64_t dim, AtenTensorHandle* ret0,
    AtenTensorHandle* ret1) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cpu_cummin(AtenTensorHandle self, int64_t dim, AtenTensorHandle* ret0,
    AtenTensorHandle* ret1) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cpu_sort(AtenTensorHandle self, int64_t dim, int32_t descending,
    AtenTensorHandle* ret0, AtenTensorHandle* ret1) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cpu_sort_stable(AtenTensorHandle self, int32_t* stable, int64_t dim,
    int32_t descending, AtenTensorHandle* ret0, AtenTensorHandle* ret1) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cpu_topk(AtenTensorHandle self, int64_t k, int64_t dim, int32_t largest,
    int32_t sorted, AtenTensorHandle* ret0, AtenTensorHandle* ret1) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cpu__scaled_dot_product_flash_attention_for_cpu(
    AtenTensorHandle query, AtenTensorHandle key, AtenTensorHandle value, double dropout_p, int32_t is_causal,
    AtenTensorHandle* attn_mask, double* scale, AtenTensorHandle* ret0, AtenTensorHandle* ret1) AOTIRT_NOEXCEPT;

// ---- CPU oneDNN ops of frozen packages (shim_cpu.h) ----
// Defined only in builds that found oneDNN's headers
// (src/backends/cpu/ops/cpu_mkldnn_ops.cpp); without them a frozen package
// is refused at load, naming these.
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cpu_mkldnn__convolution_pointwise(AtenTensorHandle X,
    AtenTensorHandle W, AtenTensorHandle* B, const int64_t* padding, int64_t padding_len_, const int64_t* stride,
    int64_t stride_len_, const int64_t* dilation, int64_t dilation_len_, int64_t groups, const char* attr,
    const double** scalars, int64_t scalars_len_, const char** algorithm, AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cpu_mkldnn__convolution_pointwise_binary(AtenTensorHandle X,
    AtenTensorHandle other, AtenTensorHandle W, AtenTensorHandle* B, const int64_t* padding, int64_t padding_len_,
    const int64_t* stride, int64_t stride_len_, const int64_t* dilation, int64_t dilation_len_, int64_t groups,
    const char* binary_attr, double* alpha, const char** unary_attr, const double** unary_scalars,
    int64_t unary_scalars_len_, const char** unary_algorithm, AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cpu_mkldnn__convolution_pointwise_binary_(AtenTensorHandle other,
    AtenTensorHandle X, AtenTensorHandle W, AtenTensorHandle* B, const int64_t* padding, int64_t padding_len_,
    const int64_t* stride, int64_t stride_len_, const int64_t* dilation, int64_t dilation_len_, int64_t groups,
    const char* binary_attr, double* alpha, const char** unary_attr, const double** unary_scalars,
    int64_t unary_scalars_len_, const char** unary_algorithm, AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cpu_mkldnn__convolution_transpose_pointwise(AtenTensorHandle X,
    AtenTensorHandle W, AtenTensorHandle* B, const int64_t* padding, int64_t padding_len_,
    const int64_t* output_padding, int64_t output_padding_len_, const int64_t* stride, int64_t stride_len_,
    const int64_t* dilation, int64_t dilation_len_, int64_t groups, const char* attr, const double** scalars,
    int64_t scalars_len_, const char** algorithm, AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cpu__linear_pointwise(AtenTensorHandle X, AtenTensorHandle W,
    AtenTensorHandle* B, const char* attr, const double** scalars, int64_t scalars_len_, const char** algorithm,
    AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cpu__linear_pointwise_binary(AtenTensorHandle X,
    AtenTensorHandle other, AtenTensorHandle W, AtenTensorHandle* B, const char* attr,
    AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cpu_mkldnn_rnn_layer(AtenTensorHandle input,
    AtenTensorHandle weight0, AtenTensorHandle weight1, AtenTensorHandle weight2, AtenTensorHandle weight3,
    AtenTensorHandle hx_, AtenTensorHandle cx_, int32_t reverse, const int64_t* batch_sizes, int64_t batch_sizes_len_,
    int64_t mode, int64_t hidden_size, int64_t num_layers, int32_t has_biases, int32_t bidirectional,
    int32_t batch_first, int32_t train, AtenTensorHandle* ret0, AtenTensorHandle* ret1, AtenTensorHandle* ret2,
    AtenTensorHandle* ret3) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cpu__qlinear_pointwise_tensor(AtenTensorHandle X,
    AtenTensorHandle act_scale, AtenTensorHandle act_zero_point, AtenTensorHandle onednn_weight,
    AtenTensorHandle weight_scales, AtenTensorHandle weight_zero_points, AtenTensorHandle* B, double output_scale,
    int64_t output_zero_point, const int32_t* output_dtype, const char* post_op_name, const double** post_op_args,
    int64_t post_op_args_len_, const char* post_op_algorithm, AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cpu__qlinear_pointwise_binary_tensor(AtenTensorHandle X,
    AtenTensorHandle act_scale, AtenTensorHandle act_zero_point, AtenTensorHandle onednn_weight,
    AtenTensorHandle weight_scales, AtenTensorHandle weight_zero_points, AtenTensorHandle* other, AtenTensorHandle* B,
    double output_scale, int64_t output_zero_point, const int32_t* output_dtype, double other_scale,
    int64_t other_zero_point, const char* binary_post_op, double binary_alpha, const char* unary_post_op,
    const double** unary_post_op_args, int64_t unary_post_op_args_len_, const char* unary_post_op_algorithm,
    AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cpu__qconv_pointwise_tensor(AtenTensorHandle X,
    AtenTensorHandle act_scale, AtenTensorHandle act_zero_point, AtenTensorHandle onednn_weight,
    AtenTensorHandle weight_scales, AtenTensorHandle weight_zero_points, AtenTensorHandle* B, const int64_t* stride,
    int64_t stride_len_, const int64_t* padding, int64_t padding_len_, const int64_t* dilation,
    int64_t dilation_len_, int64_t groups, double output_scale, int64_t output_zero_point,
    const int32_t* output_dtype, const char* attr, const double** post_op_args, int64_t post_op_args_len_,
    const char** algorithm, AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cpu__qconv2d_pointwise_binary_tensor(AtenTensorHandle X,
    AtenTensorHandle act_scale, AtenTensorHandle act_zero_point, AtenTensorHandle onednn_weight,
    AtenTensorHandle weight_scales, AtenTensorHandle weight_zero_points, AtenTensorHandle accum, AtenTensorHandle* B,
    const int64_t* stride_args, int64_t stride_len_, const int64_t* padding_args, int64_t padding_len_,
    const int64_t* dilation_args, int64_t dilation_len_, int64_t groups, double output_scale,
    int64_t output_zero_point, const int32_t* output_dtype, double accum_scale, int64_t accum_zero_point,
    const char* binary_attr, double* alpha, const char** unary_attr, const double** unary_scalars,
    int64_t unary_scalars_len_, const char** unary_algorithm, AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;

// ---- CUDA (shim.h under USE_CUDA, and c_shim_cuda.h) ----
// Defined only in CUDA builds (src/backends/cuda/); a CPU-only libaotirt.so
// has none of them, and a model that imports one is refused at load.
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_create_cuda_guard(int32_t device_index, CUDAGuardHandle* ret_guard) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_delete_cuda_guard(CUDAGuardHandle guard) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cuda_guard_set_index(CUDAGuardHandle guard, int32_t device_index) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_create_cuda_stream_guard(void* stream, int32_t device_index,
    CUDAStreamGuardHandle* ret_guard) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_delete_cuda_stream_guard(CUDAStreamGuardHandle guard) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_get_current_cuda_stream(int32_t device_index, void** ret_stream) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cuda_caching_allocator_raw_alloc(uint64_t nbytes, void** ret_ptr) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cuda_caching_allocator_raw_delete(void* ptr) AOTIRT_NOEXCEPT;

AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cuda_mm_out(AtenTensorHandle out, AtenTensorHandle self, AtenTensorHandle mat2) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cuda_addmm_out(AtenTensorHandle out, AtenTensorHandle self,
    AtenTensorHandle mat1, AtenTensorHandle mat2, double beta, double alpha) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cuda_bmm_out(AtenTensorHandle out, AtenTensorHandle self, AtenTensorHandle mat2) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cuda_baddbmm_out(AtenTensorHandle out, AtenTensorHandle self,
    AtenTensorHandle batch1, AtenTensorHandle batch2, double beta, double alpha) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cuda_convolution(AtenTensorHandle input, AtenTensorHandle weight,
    AtenTensorHandle* bias, const int64_t* stride, int64_t stride_len_, const int64_t* padding,
    int64_t padding_len_, const int64_t* dilation, int64_t dilation_len_, int32_t transposed,
    const int64_t* output_padding, int64_t output_padding_len_, int64_t groups, AtenTensorHandle* ret0) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cuda__scaled_dot_product_flash_attention(AtenTensorHandle query,
    AtenTensorHandle key, AtenTensorHandle value, double dropout_p, int32_t is_causal, int32_t return_debug_mask,
    double* scale, AtenTensorHandle* ret0, AtenTensorHandle* ret1, AtenTensorHandle* ret2, AtenTensorHandle* ret3,
    int64_t* ret4, int64_t* ret5, AtenTensorHandle* ret6, AtenTensorHandle* ret7, AtenTensorHandle* ret8) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cuda__scaled_dot_product_efficient_attention(AtenTensorHandle query,
    AtenTensorHandle key, AtenTensorHandle value, AtenTensorHandle* attn_bias, int32_t compute_log_sumexp,
    double dropout_p, int32_t is_causal, double* scale, AtenTensorHandle* ret0, AtenTensorHandle* ret1,
    AtenTensorHandle* ret2, AtenTensorHandle* ret3) AOTIRT_NOEXCEPT;
AOTIRT_SHIM_EXPORT AOTITorchError aoti_torch_cuda__scaled_dot_product_cudnn_attention(AtenTensorHandle query,
    AtenTensorHandle key, AtenTensorHandle value, AtenTensorHandle* attn_bias, int32_t compute_log_sumexp,
    double dropout_p, int32_t is_causal, int32_t return_debug_mask, double* scale, AtenTensorHandle* ret0,
    AtenTensorHandle* ret1, AtenTensorHandle* ret2, AtenTensorHandle* ret3, int64_t* ret4, int64_t* ret5,
    AtenTensorHandle* ret6, AtenTensorHandle* ret7, AtenTensorHandle* ret8) AOTIRT_NOEXCEPT;

#ifdef __cplusplus
}  // extern "C"
#endif
