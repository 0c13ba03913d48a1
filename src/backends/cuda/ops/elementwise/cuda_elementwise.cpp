// CUDA elementwise fallback ops (c_shim_cuda.h): abs, add, mul, pow (its
// three forms), gcd, angle, polar, fill_, hann_window and set_, and the
// device ops behind the generic aoti_torch_aten_amax (aotirt's own
// aoti_torch_cuda_aotirt_amax). The op layer (ops/elementwise_args) fixes
// dtypes, shapes and output strides; here the operands become one
// iteration space (dims ordered as the output's, size-1 dims dropped,
// dims contiguous in every operand merged) for the one strided kernel in
// cuda_elementwise.cu, which converts each input to the common dtype as it
// reads it. A Scalar argument, and a 0-d CPU tensor next to CUDA ones (as
// torch allows), travel to the kernel as a value.
#include <algorithm>
#include <cstring>
#include <memory>
#include <numeric>
#include <utility>
#include <vector>

#include "backends/cuda/ops/cuda_op_util.h"
#include "backends/cuda/ops/elementwise/cuda_elementwise_kernels.h"
#include "backends/cuda/runtime/cuda_status.h"
#include "base/status.h"
#include "core/dtype.h"
#include "device/device.h"
#include "ops/elementwise_args.h"
#include "ops/op_args.h"
#include "ops/tensor_args.h"
#include "shim/abi/cuda_elementwise.h"
#include "shim/common/shim_util.h"

namespace aotirt {
namespace {

namespace ew = ops::ew;
namespace tops = ops::tensor_ops;

int dtype_code(DType d) { return static_cast<int>(d); }

// |t|'s strides seen from an iteration over |shape| (right-aligned; 0
// where it broadcasts).
DimVector aligned_strides(const TensorImpl& t, const DimVector& shape) {
  const int64_t nd = shape.size(), offset = nd - t.dim();
  DimVector s;
  s.resize(nd);
  for (int64_t d = 0; d < nd; ++d) s[d] = 0;
  for (int64_t i = 0; i < t.dim(); ++i) s[offset + i] = t.sizes()[i] == 1 ? 0 : t.strides()[i];
  return s;
}

// Fills |l|'s iteration space from the output's |shape| and the strides of
// the output and both inputs (aligned to |shape|): dims ordered outermost
// first by the output's strides, so neighbouring threads write neighbouring
// elements; size-1 dims dropped; a dim merged into the next inner one when
// every operand steps over both as one.
Status set_space(CudaEwLaunch* l, const DimVector& shape, const DimVector& out, const DimVector& a,
                 const DimVector& b) {
  const int64_t nd = shape.size();
  std::vector<int64_t> order(nd);
  std::iota(order.begin(), order.end(), 0);
  auto mag = [](int64_t v) { return v < 0 ? -v : v; };
  std::stable_sort(order.begin(), order.end(), [&](int64_t x, int64_t y) {
    if (mag(out[x]) != mag(out[y])) return mag(out[x]) > mag(out[y]);
    return mag(a[x]) > mag(a[y]);
  });
  l->numel = 1;
  for (int64_t d = 0; d < nd; ++d) l->numel *= shape[d];
  l->ndim = 0;
  if (l->numel == 0) return Status();  // nothing to walk, however many dims
  int n = 0;
  for (int64_t d : order) {
    const int64_t size = shape[d];
    if (size == 1) continue;
    if (n > 0) {
      const int p = n - 1;
      const bool merge = l->out_strides[p] == out[d] * size && l->a.strides[p] == a[d] * size &&
                         l->b.strides[p] == b[d] * size;
      if (merge) {
        l->sizes[p] *= size;
        l->out_strides[p] = out[d];
        l->a.strides[p] = a[d];
        l->b.strides[p] = b[d];
        continue;
      }
    }
    AOTIRT_ENSURE(n < kCudaEwMaxDims, kUnimplemented,
                  "the operands' layouts leave more than {} dims that cannot be merged; aotirt's CUDA elementwise "
                  "kernel takes up to that many",
                  kCudaEwMaxDims);
    l->sizes[n] = size;
    l->out_strides[n] = out[d];
    l->a.strides[n] = a[d];
    l->b.strides[n] = b[d];
    ++n;
  }
  l->ndim = n;
  return Status();
}

// A double Scalar as an operand: torch wraps it as a float64 number, which
// the kernel converts to the common dtype.
void set_scalar(CudaEwOperand* op, double v) {
  op->data = nullptr;
  op->dtype = dtype_code(DType::kFloat64);
  std::memcpy(op->scalar, &v, sizeof(v));
}

// |t| as an operand: its device memory, or its one value when it is a 0-d
// CPU tensor (which the op layer lets join CUDA tensors, as torch does).
Status set_tensor(CudaEwOperand* op, const TensorImpl& t, const CudaOpScope& scope, const char* what) {
  op->dtype = dtype_code(t.dtype());
  if (t.dim() == 0 && t.device().is_cpu()) {
    AOTIRT_ENSURE(t.data_ptr() != nullptr, kInvalidArgument, "'{}' has no storage", what);
    op->data = nullptr;
    std::memcpy(op->scalar, t.data_ptr(), t.element_size());
    return Status();
  }
  AOTIRT_RETURN_IF_ERROR(scope.check_same_device(t, what));
  op->data = t.data_ptr();
  return Status();
}

// The tensor that decides where an op runs: the first one on a CUDA device
// (a 0-d CPU tensor may join it), else the first given, which the scope
// then refuses.
const TensorImpl* placement(const TensorImpl* a, const TensorImpl* b) {
  if (a && a->device().type == DeviceType::kCuda) return a;
  if (b && b->device().type == DeviceType::kCuda) return b;
  return a ? a : b;
}

// |v| stored as |dtype| (bytes for a kFill operand).
void store_value(unsigned char* dst, DType dtype, double float_value, int64_t int_value) {
  switch (dtype) {
    case DType::kBool: dst[0] = int_value != 0 ? 1 : 0; break;
    case DType::kUInt8: dst[0] = static_cast<uint8_t>(int_value); break;
    case DType::kInt8: {
      const int8_t v = static_cast<int8_t>(int_value);
      std::memcpy(dst, &v, sizeof(v));
      break;
    }
    case DType::kInt16: {
      const int16_t v = static_cast<int16_t>(int_value);
      std::memcpy(dst, &v, sizeof(v));
      break;
    }
    case DType::kInt32: {
      const int32_t v = static_cast<int32_t>(int_value);
      std::memcpy(dst, &v, sizeof(v));
      break;
    }
    case DType::kInt64: std::memcpy(dst, &int_value, sizeof(int_value)); break;
    // Floating and complex (imaginary part zero); float16 and bfloat16
    // through float, as c10 converts.
    default: store_from_double(dst, dtype, float_value); break;
  }
}

struct Output {
  std::unique_ptr<TensorImpl> tensor;
  std::unique_ptr<CudaOpScope> scope;
};

// A new output of the plan's layout on |where|'s device, with the scope to
// run on.
Result<Output> make_output(const TensorImpl& where, const char* what, const DimVector& sizes,
                           const DimVector& strides, DType dtype) {
  Output o;
  AOTIRT_ASSIGN_OR_RETURN(o.scope, CudaOpScope::enter(where, what));
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl t, cuda_empty(sizes, strides, dtype, o.scope->device()));
  o.tensor.reset(new TensorImpl(std::move(t)));
  return o;
}

Status run(CudaEwLaunch& l, const CudaOpScope& scope) {
  if (l.numel == 0) return Status();
  AOTIRT_CUDA_RETURN_IF_ERROR(cuda_launch_elementwise(l, scope.stream()));
  return Status();
}

// Points |l| at |out|; the inputs' strides are |a| and |b|.
Status launch_into(CudaEwLaunch& l, const TensorImpl& out, const DimVector& a, const DimVector& b,
                   const CudaOpScope& scope) {
  l.out = out.data_ptr();
  l.out_dtype = dtype_code(out.dtype());
  AOTIRT_RETURN_IF_ERROR(set_space(&l, out.sizes(), out.strides(), a, b));
  return run(l, scope);
}

DimVector zeros(size_t n) {
  DimVector s;
  s.resize(n);
  for (size_t i = 0; i < n; ++i) s[i] = 0;
  return s;
}

CudaEwOp kernel_op(ew::EwOp op) {
  switch (op) {
    case ew::EwOp::kAdd:
    case ew::EwOp::kSub: return CudaEwOp::kAdd;  // sub's alpha is already negated
    case ew::EwOp::kMul: return CudaEwOp::kMul;
    case ew::EwOp::kPow: return CudaEwOp::kPow;
    case ew::EwOp::kGcd: return CudaEwOp::kGcd;
    case ew::EwOp::kPolar: return CudaEwOp::kPolar;
    case ew::EwOp::kAbs: return CudaEwOp::kAbs;
    case ew::EwOp::kAngle: return CudaEwOp::kAngle;
  }
  return CudaEwOp::kCopy;
}

Status binary_to(Result<ew::BinaryArgs> args, AtenTensorHandle* ret) {
  AOTIRT_REQUIRE_OUT(ret);
  AOTIRT_ASSIGN_OR_RETURN(ew::BinaryArgs a, std::move(args));
  const char* self_name = a.op == ew::EwOp::kPolar ? "abs" : "self";
  const char* other_name = a.op == ew::EwOp::kPolar ? "angle" : a.op == ew::EwOp::kPow ? "exponent" : "other";
  const TensorImpl* where = placement(a.self, a.other);
  AOTIRT_ASSIGN_OR_RETURN(Output o, make_output(*where, where == a.self ? self_name : other_name, a.out_sizes,
                                                a.out_strides, a.out_dtype));
  CudaEwLaunch l;
  l.op = kernel_op(a.op);
  l.common = dtype_code(a.common);
  l.alpha = a.alpha;
  DimVector sa = zeros(a.out_sizes.size()), sb = sa;
  if (a.self) {
    AOTIRT_RETURN_IF_ERROR(set_tensor(&l.a, *a.self, *o.scope, self_name));
    if (l.a.data) sa = aligned_strides(*a.self, a.out_sizes);
  } else {
    set_scalar(&l.a, a.self_scalar);
  }
  if (a.other) {
    AOTIRT_RETURN_IF_ERROR(set_tensor(&l.b, *a.other, *o.scope, other_name));
    if (l.b.data) sb = aligned_strides(*a.other, a.out_sizes);
  } else {
    set_scalar(&l.b, a.other_scalar);
  }
  AOTIRT_RETURN_IF_ERROR(launch_into(l, *o.tensor, sa, sb, *o.scope));
  *ret = handle_of(o.tensor.release());
  return Status();
}

// A unary plan's op on its input (pow.Tensor_Scalar's exponent in |l|).
Status unary_to(Result<ew::UnaryArgs> args, CudaEwOp op, AtenTensorHandle* ret) {
  AOTIRT_REQUIRE_OUT(ret);
  AOTIRT_ASSIGN_OR_RETURN(ew::UnaryArgs a, std::move(args));
  AOTIRT_ASSIGN_OR_RETURN(Output o, make_output(*a.self, "self", a.out_sizes, a.out_strides, a.out_dtype));
  CudaEwLaunch l;
  // abs of a bool is the bool itself.
  l.op = op == CudaEwOp::kAbs && a.common == DType::kBool ? CudaEwOp::kCopy : op;
  l.common = dtype_code(a.common);
  l.exponent = a.scalar;
  DimVector sa = zeros(a.out_sizes.size());
  if (op == CudaEwOp::kPowExp && (a.scalar == 0.0 || a.scalar == 1.0)) {
    // x ** 0 is 1 for every x (NaN too); x ** 1 is x, converted.
    l.op = a.scalar == 0.0 ? CudaEwOp::kFill : CudaEwOp::kCopy;
  }
  if (l.op == CudaEwOp::kFill) {
    l.a.dtype = dtype_code(a.out_dtype);
    store_value(l.a.scalar, a.out_dtype, 1.0, 1);
  } else {
    AOTIRT_RETURN_IF_ERROR(set_tensor(&l.a, *a.self, *o.scope, "self"));
    sa = aligned_strides(*a.self, a.out_sizes);
  }
  AOTIRT_RETURN_IF_ERROR(launch_into(l, *o.tensor, sa, zeros(a.out_sizes.size()), *o.scope));
  *ret = handle_of(o.tensor.release());
  return Status();
}

// pow.Scalar: a Scalar base to each exponent.
Status pow_scalar_to(double base, AtenTensorHandle exponent, AtenTensorHandle* ret) {
  AOTIRT_REQUIRE_OUT(ret);
  AOTIRT_ASSIGN_OR_RETURN(ew::UnaryArgs a, ew::pow_scalar_args(base, exponent));
  AOTIRT_ASSIGN_OR_RETURN(Output o, make_output(*a.self, "exponent", a.out_sizes, a.out_strides, a.out_dtype));
  CudaEwLaunch l;
  l.common = dtype_code(a.common);
  DimVector sb = zeros(a.out_sizes.size());
  if (base == 1.0) {
    // 1 ** x is 1 for every x, NaN included.
    l.op = CudaEwOp::kFill;
    l.a.dtype = dtype_code(a.out_dtype);
    store_value(l.a.scalar, a.out_dtype, 1.0, 1);
  } else {
    l.op = CudaEwOp::kPow;
    set_scalar(&l.a, base);
    AOTIRT_RETURN_IF_ERROR(set_tensor(&l.b, *a.self, *o.scope, "exponent"));
    sb = aligned_strides(*a.self, a.out_sizes);
  }
  AOTIRT_RETURN_IF_ERROR(launch_into(l, *o.tensor, zeros(a.out_sizes.size()), sb, *o.scope));
  *ret = handle_of(o.tensor.release());
  return Status();
}

Status fill(AtenTensorHandle self, double value) {
  AOTIRT_ASSIGN_OR_RETURN(ew::FillArgs a, ew::fill_args(self, value));
  const TensorImpl& t = *a.self;
  if (t.numel() == 0) {
    AOTIRT_ENSURE(t.device().type == DeviceType::kCuda, kInvalidArgument, "'self' is on {}, expected a CUDA tensor",
                  t.device().to_string());
    return Status();
  }
  AOTIRT_ASSIGN_OR_RETURN(std::unique_ptr<CudaOpScope> scope, CudaOpScope::enter(t, "self"));
  CudaEwLaunch l;
  l.op = CudaEwOp::kFill;
  l.common = dtype_code(t.dtype());
  l.a.dtype = l.common;
  store_value(l.a.scalar, t.dtype(), a.float_value, a.int_value);
  // Every element of |t|, expanded (overlapping) ones included: each
  // location is written with the same value.
  return launch_into(l, t, zeros(t.dim()), zeros(t.dim()), *scope);
}

// amax: the kept and reduced dims of the input for the kernel.
Status amax(AtenTensorHandle self, const int64_t* dim, int64_t dim_len, int32_t keepdim, AtenTensorHandle* ret) {
  AOTIRT_REQUIRE_OUT(ret);
  AOTIRT_ASSIGN_OR_RETURN(ew::AmaxArgs a, ew::amax_args(self, dim, dim_len, keepdim != 0));
  const TensorImpl& t = *a.self;
  AOTIRT_ASSIGN_OR_RETURN(Output o, make_output(t, "self", a.out_sizes, a.out_strides, t.dtype()));
  CudaAmaxLaunch l;
  l.in = t.data_ptr();
  l.out = o.tensor->data_ptr();
  l.dtype = dtype_code(t.dtype());
  l.outputs = o.tensor->numel();
  l.count = 1;
  std::vector<int64_t> red;
  for (int64_t d = 0; d < t.dim(); ++d) {
    const int64_t size = t.sizes()[d];
    if (a.reduced[d]) {
      l.count *= size;
      if (size != 1) red.push_back(d);
    } else if (size != 1) {
      AOTIRT_ENSURE(l.kept_ndim < kCudaEwMaxDims, kUnimplemented,
                    "'self' keeps more than {} dims of size > 1; aotirt's CUDA amax takes up to that many",
                    kCudaEwMaxDims);
      l.kept_sizes[l.kept_ndim] = size;
      l.kept_strides[l.kept_ndim] = t.strides()[d];
      ++l.kept_ndim;
    }
  }
  AOTIRT_ENSURE(static_cast<int>(red.size()) <= kCudaEwMaxDims, kUnimplemented,
                "'self' reduces more than {} dims of size > 1; aotirt's CUDA amax takes up to that many",
                kCudaEwMaxDims);
  // Innermost (smallest stride) last, so neighbouring threads of a block
  // read neighbouring elements.
  std::stable_sort(red.begin(), red.end(), [&](int64_t x, int64_t y) {
    const int64_t sx = t.strides()[x] < 0 ? -t.strides()[x] : t.strides()[x];
    const int64_t sy = t.strides()[y] < 0 ? -t.strides()[y] : t.strides()[y];
    return sx > sy;
  });
  for (int64_t d : red) {
    l.red_sizes[l.red_ndim] = t.sizes()[d];
    l.red_strides[l.red_ndim] = t.strides()[d];
    ++l.red_ndim;
  }
  if (l.outputs > 0 && l.count > 0)
    AOTIRT_CUDA_RETURN_IF_ERROR(cuda_launch_amax(l, o.scope->stream()));
  *ret = handle_of(o.tensor.release());
  return Status();
}

Status hann_window(int64_t window_length, int32_t* dtype, int32_t* layout, int32_t* device, int32_t device_index,
                   AtenTensorHandle* ret) {
  AOTIRT_REQUIRE_OUT(ret);
  AOTIRT_ENSURE(window_length >= 0, kInvalidArgument, "window_length {} must be non-negative", window_length);
  AOTIRT_ASSIGN_OR_RETURN(tops::FactoryOptions o,
                          tops::factory_options(dtype, layout, device, device_index, DType::kFloat32,
                                                DeviceId{DeviceType::kCuda, device_index < 0 ? 0 : device_index}));
  AOTIRT_ENSURE(o.device.type == DeviceType::kCuda, kInvalidArgument, "a CUDA op was asked for a tensor on {}",
                o.device.to_string());
  const bool floating = o.dtype == DType::kFloat32 || o.dtype == DType::kFloat64 || o.dtype == DType::kFloat16 ||
                        o.dtype == DType::kBFloat16;
  AOTIRT_ENSURE(floating, kInvalidArgument, "hann_window needs a floating dtype, got {}", dtype_name(o.dtype));
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl t, cuda_empty_contiguous(DimVector{window_length}, o.dtype, o.device.index));
  std::unique_ptr<TensorImpl> out(new TensorImpl(std::move(t)));
  if (window_length > 0) {
    AOTIRT_ASSIGN_OR_RETURN(std::unique_ptr<CudaOpScope> scope, CudaOpScope::enter(*out, "window"));
    AOTIRT_CUDA_RETURN_IF_ERROR(
        cuda_launch_hann_window(out->data_ptr(), dtype_code(o.dtype), window_length, scope->stream()));
  }
  *ret = handle_of(out.release());
  return Status();
}

Status set_source(AtenTensorHandle self, AtenTensorHandle source) {
  AOTIRT_ASSIGN_OR_RETURN(const TensorImpl* t, ops::require_tensor(self, "self"));
  AOTIRT_ASSIGN_OR_RETURN(const TensorImpl* src, ops::require_tensor(source, "source"));
  AOTIRT_ENSURE(t->device().type == DeviceType::kCuda, kInvalidArgument, "'self' is on {}, expected a CUDA tensor",
                t->device().to_string());
  // torch no longer lets a tensor take a storage of another device.
  AOTIRT_ENSURE(src->device() == t->device(), kInvalidArgument,
                "cannot set a tensor on {} to a source on {}; both must be on one device", t->device().to_string(),
                src->device().to_string());
  AOTIRT_ENSURE(t->dtype() == src->dtype(), kInvalidArgument,
                "cannot set a {} tensor to a {} source; their dtypes must match", dtype_name(t->dtype()),
                dtype_name(src->dtype()));
  // 'self' becomes a view of the source's storage with its layout.
  if (t != src) *impl_of(self) = *src;
  return Status();
}

}  // namespace
}  // namespace aotirt

using namespace aotirt;
namespace ew = aotirt::ops::ew;

extern "C" {

AOTITorchError aoti_torch_cuda_abs(AtenTensorHandle self, AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&] { return unary_to(ew::abs_args(self), CudaEwOp::kAbs, ret0); });
}

AOTITorchError aoti_torch_cuda_add_Scalar(AtenTensorHandle self, double other, double alpha,
                                          AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__,
                   [&] { return binary_to(ew::binary_scalar_args(ew::EwOp::kAdd, self, other, alpha), ret0); });
}

AOTITorchError aoti_torch_cuda_add_Tensor(AtenTensorHandle self, AtenTensorHandle other, double alpha,
                                          AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&] { return binary_to(ew::binary_args(ew::EwOp::kAdd, self, other, alpha), ret0); });
}

AOTITorchError aoti_torch_cuda_mul_Scalar(AtenTensorHandle self, double other, AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__,
                   [&] { return binary_to(ew::binary_scalar_args(ew::EwOp::kMul, self, other, 1.0), ret0); });
}

AOTITorchError aoti_torch_cuda_mul_Tensor(AtenTensorHandle self, AtenTensorHandle other,
                                          AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&] { return binary_to(ew::binary_args(ew::EwOp::kMul, self, other, 1.0), ret0); });
}

AOTITorchError aoti_torch_cuda_pow_Scalar(double self, AtenTensorHandle exponent, AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&] { return pow_scalar_to(self, exponent, ret0); });
}

AOTITorchError aoti_torch_cuda_pow_Tensor_Scalar(AtenTensorHandle self, double exponent,
                                                 AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__,
                   [&] { return unary_to(ew::pow_tensor_scalar_args(self, exponent), CudaEwOp::kPowExp, ret0); });
}

AOTITorchError aoti_torch_cuda_pow_Tensor_Tensor(AtenTensorHandle self, AtenTensorHandle exponent,
                                                 AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__,
                   [&] { return binary_to(ew::binary_args(ew::EwOp::kPow, self, exponent, 1.0), ret0); });
}

AOTITorchError aoti_torch_cuda_gcd(AtenTensorHandle self, AtenTensorHandle other, AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_ASSIGN_OR_RETURN(ew::BinaryArgs a, ew::binary_args(ew::EwOp::kGcd, self, other, 1.0));
    // torch's CUDA gcd takes no CPU scalar tensor, unlike add or mul.
    for (const TensorImpl* t : {a.self, a.other})
      AOTIRT_ENSURE(t == nullptr || t->device().type == DeviceType::kCuda, kInvalidArgument,
                    "gcd needs every tensor on the GPU; got one on {}", t->device().to_string());
    return binary_to(std::move(a), ret0);
  });
}

AOTITorchError aoti_torch_cuda_angle(AtenTensorHandle self, AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&] { return unary_to(ew::angle_args(self), CudaEwOp::kAngle, ret0); });
}

AOTITorchError aoti_torch_cuda_polar(AtenTensorHandle abs, AtenTensorHandle angle, AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&] { return binary_to(ew::binary_args(ew::EwOp::kPolar, abs, angle, 1.0), ret0); });
}

AOTITorchError aoti_torch_cuda_fill__Scalar(AtenTensorHandle self, double value) noexcept {
  return shim_call(__func__, [&] { return fill(self, value); });
}

AOTITorchError aoti_torch_cuda_hann_window(int64_t window_length, int32_t* dtype, int32_t* layout, int32_t* device,
                                           int32_t device_index_, int32_t* pin_memory,
                                           AtenTensorHandle* ret0) noexcept {
  (void)pin_memory;
  return shim_call(__func__, [&] { return hann_window(window_length, dtype, layout, device, device_index_, ret0); });
}

AOTITorchError aoti_torch_cuda_set__source_Tensor(AtenTensorHandle self, AtenTensorHandle source) noexcept {
  return shim_call(__func__, [&] { return set_source(self, source); });
}

AOTITorchError aoti_torch_cuda_aotirt_amax(AtenTensorHandle self, const int64_t* dim, int64_t dim_len_,
                                           int32_t keepdim, AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&] { return amax(self, dim, dim_len_, keepdim, ret0); });
}

}  // extern "C"
