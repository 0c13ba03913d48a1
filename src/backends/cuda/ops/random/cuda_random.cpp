// CUDA random ops (c_shim_cuda.h): rand, randn, randint, randperm, uniform,
// normal_functional, exponential, bernoulli_ and native_dropout. As on the
// CPU they match torch's distributions, not its bit streams, and the op
// layer (src/ops/random_args) checks every argument. The generator design is
// the CPU backend's: one seed per process (AOTIRT_SEED when set, else
// random), from which each device takes a key of its own, and per device an
// atomic counter offset that each call advances, so successive and
// concurrent calls never share counter blocks. Within a call a value depends
// on its element's index only (cuda_random_kernels.h).
//
// Kernels fill flat runs of elements; outputs laid out densely are filled in
// their memory order (a distribution does not care which element gets which
// draw), others through a contiguous temporary and a strided copy.
#include <array>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "backends/cuda/ops/cuda_op_util.h"
#include "backends/cuda/ops/random/cuda_random_kernels.h"
#include "backends/cuda/runtime/cuda_copy.h"
#include "backends/cuda/runtime/cuda_options.h"
#include "backends/cuda/runtime/cuda_status.h"
#include "backends/cuda/runtime/cuda_stream.h"
#include "base/status.h"
#include "core/dtype.h"
#include "ops/layout.h"
#include "ops/op_args.h"
#include "ops/random_args.h"
#include "shim/abi/cuda_random.h"
#include "shim/common/shim_util.h"

namespace aotirt {
namespace {

using ops::RandomKind;

// ---- the generator ----

// SplitMix64's finaliser: spreads a device's key away from the others'.
uint64_t mix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

class CudaRandomState {
 public:
  CudaRandomState() {
    for (auto& o : offsets_) o.store(0, std::memory_order_relaxed);
    Result<uint64_t> seed = ops::parse_random_seed(cuda_options().random_seed);
    if (seed.ok())
      seed_ = seed.value();
    else
      status_ = seed.status();
  }

  // The counter range of one call on |device|.
  Result<CudaPhilox> reserve(int device) {
    AOTIRT_RETURN_IF_ERROR(status_);
    AOTIRT_ENSURE(device >= 0 && device < kCudaMaxDevices, kInvalidArgument, "CUDA device {} is out of range",
                  device);
    CudaPhilox ph;
    ph.seed = mix64(seed_ ^ mix64(static_cast<uint64_t>(device) + 1));
    ph.offset = offsets_[device].fetch_add(kCudaRandomWordsPerCall, std::memory_order_relaxed);
    return ph;
  }

 private:
  Status status_;
  uint64_t seed_ = 0;
  std::array<std::atomic<uint64_t>, kCudaMaxDevices> offsets_;
};

CudaRandomState& random_state() {
  static CudaRandomState state;
  return state;
}

// ---- helpers ----

DType component_dtype(DType d) {
  if (d == DType::kComplex64) return DType::kFloat32;
  if (d == DType::kComplex128) return DType::kFloat64;
  return d;
}

bool is_floating(DType d) {
  return d == DType::kFloat16 || d == DType::kBFloat16 || d == DType::kFloat32 || d == DType::kFloat64;
}

// The CUDA device a factory op creates its tensor on.
Result<int> factory_device(const int32_t* device, int32_t device_index) {
  AOTIRT_ENSURE(!device || *device == 1, kInvalidArgument,
                "'device' has device type code {}; aotirt's CUDA random ops create CUDA tensors only", *device);
  if (device_index < 0) return cuda_current_device();
  AOTIRT_RETURN_IF_ERROR(cuda_check_device_index(device_index));
  return static_cast<int>(device_index);
}

Status hand_out(TensorImpl t, AtenTensorHandle* ret) {
  std::unique_ptr<TensorImpl> h(new TensorImpl(std::move(t)));
  *ret = handle_of(h.release());
  return Status();
}

// Fills dense |out| (any memory order) with a real distribution; complex
// dtypes draw their two parts independently, a complex normal splitting its
// variance over them, as torch does.
Status fill_real(const CudaOpScope& scope, const TensorImpl& out, CudaRealDist dist, double a, double b) {
  const int64_t n = out.numel();
  if (n == 0) return Status();
  const DType c = component_dtype(out.dtype());
  const bool complex = c != out.dtype();
  if (complex && dist == CudaRealDist::kNormal) b /= std::sqrt(2.0);
  AOTIRT_ASSIGN_OR_RETURN(CudaPhilox ph, random_state().reserve(scope.device()));
  AOTIRT_CUDA_RETURN_IF_ERROR(cuda_random_real(dist, static_cast<int>(c), out.data_ptr(), complex ? 2 * n : n, a, b,
                                               ph, scope.stream()));
  return Status();
}

// Uniform integers in [low, high) (checked low < high) into dense |out|.
Status fill_int(const CudaOpScope& scope, const TensorImpl& out, int64_t low, int64_t high) {
  const int64_t n = out.numel();
  if (n == 0) return Status();
  const uint64_t range = static_cast<uint64_t>(high) - static_cast<uint64_t>(low);
  AOTIRT_ASSIGN_OR_RETURN(CudaPhilox ph, random_state().reserve(scope.device()));
  AOTIRT_CUDA_RETURN_IF_ERROR(
      cuda_random_int(static_cast<int>(out.dtype()), out.data_ptr(), n, low, range, ph, scope.stream()));
  return Status();
}

// Runs |fill| on |target| when it is dense, else on a contiguous temporary
// copied into |target|'s layout afterwards.
template <class Fill>
Status fill_through(const CudaOpScope& scope, const TensorImpl& target, Fill fill) {
  if (ops::is_non_overlapping_and_dense(target)) return fill(target);
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl tmp, cuda_empty_contiguous(target.sizes(), target.dtype(), scope.device()));
  AOTIRT_RETURN_IF_ERROR(fill(tmp));
  return cuda_copy(scope.device(), scope.stream(), target, tmp, false);
}

// ---- factories ----

Status rand_like_factory(RandomKind kind, const int64_t* size, int64_t size_len, AtenGeneratorHandle* generator,
                         int32_t* dtype, int32_t* layout, int32_t* device, int32_t device_index, int32_t* pin_memory,
                         AtenTensorHandle* ret0) {
  AOTIRT_REQUIRE_OUT(ret0);
  AOTIRT_RETURN_IF_ERROR(ops::check_no_generator(generator));
  AOTIRT_ASSIGN_OR_RETURN(ops::FactoryArgs a,
                          ops::factory_args(kind, size, size_len, dtype, DType::kFloat32, layout, pin_memory));
  AOTIRT_ASSIGN_OR_RETURN(int dev, factory_device(device, device_index));
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl out, cuda_empty_contiguous(a.sizes, a.dtype, dev));
  AOTIRT_ASSIGN_OR_RETURN(std::unique_ptr<CudaOpScope> scope, CudaOpScope::enter(out, "out"));
  if (kind == RandomKind::kUniform)
    AOTIRT_RETURN_IF_ERROR(fill_real(*scope, out, CudaRealDist::kUniform, 0.0, 1.0));
  else
    AOTIRT_RETURN_IF_ERROR(fill_real(*scope, out, CudaRealDist::kNormal, 0.0, 1.0));
  return hand_out(std::move(out), ret0);
}

Status randint_factory(int64_t low, int64_t high, const int64_t* size, int64_t size_len,
                       AtenGeneratorHandle* generator, int32_t* dtype, int32_t* layout, int32_t* device,
                       int32_t device_index, int32_t* pin_memory, AtenTensorHandle* ret0) {
  AOTIRT_REQUIRE_OUT(ret0);
  AOTIRT_RETURN_IF_ERROR(ops::check_no_generator(generator));
  AOTIRT_ASSIGN_OR_RETURN(ops::FactoryArgs a, ops::factory_args(RandomKind::kRandint, size, size_len, dtype,
                                                                DType::kInt64, layout, pin_memory));
  AOTIRT_RETURN_IF_ERROR(ops::check_randint_range(low, high, a.dtype));
  AOTIRT_ASSIGN_OR_RETURN(int dev, factory_device(device, device_index));
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl out, cuda_empty_contiguous(a.sizes, a.dtype, dev));
  AOTIRT_ASSIGN_OR_RETURN(std::unique_ptr<CudaOpScope> scope, CudaOpScope::enter(out, "out"));
  AOTIRT_RETURN_IF_ERROR(fill_int(*scope, out, low, high));
  return hand_out(std::move(out), ret0);
}

// randint.low_out: |out| keeps its layout when it already has |size|; else
// it is resized to |size| with contiguous strides, as torch's resize_ does,
// reusing its storage when that is large enough.
Status randint_out(AtenTensorHandle out, int64_t low, int64_t high, const int64_t* size, int64_t size_len) {
  AOTIRT_ASSIGN_OR_RETURN(const TensorImpl* o, ops::require_tensor(out, "out"));
  AOTIRT_ASSIGN_OR_RETURN(std::unique_ptr<CudaOpScope> scope, CudaOpScope::enter(*o, "out"));
  AOTIRT_RETURN_IF_ERROR(ops::check_random_dtype(RandomKind::kRandint, o->dtype(), "out"));
  AOTIRT_ASSIGN_OR_RETURN(ops::FactoryArgs a, ops::factory_args(RandomKind::kRandint, size, size_len, nullptr,
                                                                o->dtype(), nullptr, nullptr));
  AOTIRT_RETURN_IF_ERROR(ops::check_randint_range(low, high, o->dtype()));
  TensorImpl* target = impl_of(out);
  if (!(target->sizes() == a.sizes)) {
    const DimVector strides = contiguous_strides(a.sizes);
    const int64_t need = (target->storage_offset() + numel_of(a.sizes)) * static_cast<int64_t>(target->element_size());
    if (target->defined() && static_cast<int64_t>(target->storage()->nbytes()) >= need) {
      target->mutable_sizes() = a.sizes;
      target->mutable_strides() = strides;
    } else {
      AOTIRT_ASSIGN_OR_RETURN(TensorImpl fresh, cuda_empty_contiguous(a.sizes, o->dtype(), scope->device()));
      *target = std::move(fresh);
    }
  }
  return fill_through(*scope, *target, [&](const TensorImpl& t) { return fill_int(*scope, t, low, high); });
}

// 0..n-1 ordered by random 64-bit keys (a CUB radix sort of pairs).
Status randperm(int64_t n, int32_t* dtype, int32_t* layout, int32_t* device, int32_t device_index,
                int32_t* pin_memory, AtenTensorHandle* ret0) {
  AOTIRT_REQUIRE_OUT(ret0);
  AOTIRT_RETURN_IF_ERROR(ops::check_randperm_n(n, DType::kInt64));  // n >= 0, before it is read as a size
  const int64_t size = n;
  AOTIRT_ASSIGN_OR_RETURN(ops::FactoryArgs a, ops::factory_args(RandomKind::kRandperm, &size, 1, dtype,
                                                                DType::kInt64, layout, pin_memory));
  AOTIRT_RETURN_IF_ERROR(ops::check_randperm_n(n, a.dtype));
  // torch's CUDA randperm has no bfloat16 kernel (an empty one needs none).
  AOTIRT_ENSURE(a.dtype != DType::kBFloat16 || n == 0, kUnimplemented,
                "randperm is not implemented for bfloat16 on CUDA, as in torch");
  AOTIRT_ASSIGN_OR_RETURN(int dev, factory_device(device, device_index));
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl out, cuda_empty_contiguous(a.sizes, a.dtype, dev));
  AOTIRT_ASSIGN_OR_RETURN(std::unique_ptr<CudaOpScope> scope, CudaOpScope::enter(out, "out"));
  if (n > 0) {
    cudaStream_t stream = scope->stream();
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl keys, cuda_empty_contiguous(DimVector{2 * n}, DType::kInt64, dev));
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl order, cuda_empty_contiguous(DimVector{n}, DType::kInt64, dev));
    TensorImpl perm = out;
    if (a.dtype != DType::kInt64) {
      AOTIRT_ASSIGN_OR_RETURN(perm, cuda_empty_contiguous(DimVector{n}, DType::kInt64, dev));
    }
    size_t bytes = 0;
    AOTIRT_CUDA_RETURN_IF_ERROR(cuda_randperm_temp_bytes(n, &bytes));
    TensorImpl hold;
    void* temp = nullptr;
    if (bytes > 0) {
      AOTIRT_ASSIGN_OR_RETURN(temp, cuda_op_workspace(dev, stream, bytes, &hold));
    }
    AOTIRT_ASSIGN_OR_RETURN(CudaPhilox ph, random_state().reserve(dev));
    AOTIRT_CUDA_RETURN_IF_ERROR(cuda_randperm(n, static_cast<uint64_t*>(keys.data_ptr()),
                                              static_cast<int64_t*>(order.data_ptr()),
                                              static_cast<int64_t*>(perm.data_ptr()), temp, bytes, ph, stream));
    // check_randperm_n made every value exact in the dtype.
    if (a.dtype != DType::kInt64) AOTIRT_RETURN_IF_ERROR(cuda_copy(dev, stream, out, perm, false));
  }
  return hand_out(std::move(out), ret0);
}

// ---- ops on an existing tensor ----

// uniform, normal_functional and exponential: a fresh tensor laid out like
// |self| (torch's empty_like). |check| runs the parameter checks.
template <class Check>
Status functional(AtenTensorHandle self, AtenGeneratorHandle* generator, AtenTensorHandle* ret0, RandomKind kind,
                  CudaRealDist dist, double a, double b, Check check) {
  AOTIRT_REQUIRE_OUT(ret0);
  AOTIRT_ASSIGN_OR_RETURN(const TensorImpl* s, ops::require_tensor(self, "self"));
  AOTIRT_ASSIGN_OR_RETURN(std::unique_ptr<CudaOpScope> scope, CudaOpScope::enter(*s, "self"));
  AOTIRT_RETURN_IF_ERROR(ops::check_no_generator(generator));
  AOTIRT_RETURN_IF_ERROR(ops::check_random_dtype(kind, s->dtype(), "self"));
  AOTIRT_RETURN_IF_ERROR(check(s->dtype()));
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl out, cuda_empty(s->sizes(), ops::empty_like_strides(*s), s->dtype(),
                                                     scope->device()));
  AOTIRT_RETURN_IF_ERROR(fill_real(*scope, out, dist, a, b));
  return hand_out(std::move(out), ret0);
}

// bernoulli_: self[i] = (u_i < p_i); |p| is a floating tensor broadcast to
// self, or null for the scalar |p_scalar|.
Status bernoulli_inplace(AtenTensorHandle self, const TensorImpl* p, double p_scalar, AtenGeneratorHandle* generator) {
  AOTIRT_ASSIGN_OR_RETURN(const TensorImpl* s, ops::require_tensor(self, "self"));
  AOTIRT_ASSIGN_OR_RETURN(std::unique_ptr<CudaOpScope> scope, CudaOpScope::enter(*s, "self"));
  AOTIRT_RETURN_IF_ERROR(ops::check_no_generator(generator));
  AOTIRT_RETURN_IF_ERROR(ops::check_random_dtype(RandomKind::kBernoulli, s->dtype(), "self"));
  const int dev = scope->device();
  cudaStream_t stream = scope->stream();
  DimVector p_strides;
  if (p) {
    // torch moves a CPU p to the device; one on another GPU is refused.
    if (!(p->defined() && p->device().type == DeviceType::kCpu))
      AOTIRT_RETURN_IF_ERROR(scope->check_same_device(*p, "p"));
    AOTIRT_ENSURE(is_floating(p->dtype()), kInvalidArgument,
                  "'p' has dtype {}; bernoulli_ needs a floating probability tensor", dtype_name(p->dtype()));
    AOTIRT_ASSIGN_OR_RETURN(p_strides, ops::expand_strides(*p, s->sizes(), "p"));
  } else {
    AOTIRT_RETURN_IF_ERROR(ops::check_bernoulli_p(p_scalar));
  }
  const int64_t n = s->numel();
  if (n == 0) return Status();
  if (!p) {
    return fill_through(*scope, *s, [&](const TensorImpl& t) -> Status {
      AOTIRT_ASSIGN_OR_RETURN(CudaPhilox ph, random_state().reserve(dev));
      AOTIRT_CUDA_RETURN_IF_ERROR(
          cuda_random_bernoulli(static_cast<int>(t.dtype()), t.data_ptr(), n, nullptr, p_scalar, ph, stream));
      return Status();
    });
  }
  // The probabilities as contiguous float64 in self's logical order.
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl probs, cuda_empty_contiguous(s->sizes(), DType::kFloat64, dev));
  const TensorImpl p_view(p->storage(), p->dtype(), s->sizes(), p_strides, p->storage_offset());
  AOTIRT_RETURN_IF_ERROR(cuda_copy(dev, stream, probs, p_view, false));
  // torch checks the range on the device (an assert there); aotirt refuses
  // the call instead, before self changes, so the host must see the check's
  // outcome: the one stream synchronisation here. A graph being recorded
  // cannot synchronise, so it skips the check.
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  AOTIRT_CUDA_RETURN_IF_ERROR(cudaStreamIsCapturing(stream, &capture));
  if (capture == cudaStreamCaptureStatusNone) {
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl flag, cuda_empty_contiguous(DimVector{1}, DType::kInt32, dev));
    AOTIRT_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(flag.data_ptr(), 0, sizeof(int), stream));
    AOTIRT_CUDA_RETURN_IF_ERROR(cuda_random_check_probs(static_cast<const double*>(probs.data_ptr()), n,
                                                        static_cast<int*>(flag.data_ptr()), stream));
    int bad = 0;
    AOTIRT_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(&bad, flag.data_ptr(), sizeof(int), cudaMemcpyDeviceToHost, stream));
    AOTIRT_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream));
    AOTIRT_ENSURE(bad == 0, kInvalidArgument, "bernoulli expects every element of 'p' to be in [0, 1]");
  }
  // Element i of the kernel's output pairs with probs[i]: self's logical
  // order, so a self that is not contiguous goes through a temporary.
  TensorImpl target = *s;
  if (!s->is_contiguous()) {
    AOTIRT_ASSIGN_OR_RETURN(target, cuda_empty_contiguous(s->sizes(), s->dtype(), dev));
  }
  AOTIRT_ASSIGN_OR_RETURN(CudaPhilox ph, random_state().reserve(dev));
  AOTIRT_CUDA_RETURN_IF_ERROR(cuda_random_bernoulli(static_cast<int>(s->dtype()), target.data_ptr(), n,
                                                    static_cast<const double*>(probs.data_ptr()), 0.0, ph, stream));
  if (!s->is_contiguous()) AOTIRT_RETURN_IF_ERROR(cuda_copy(dev, stream, *s, target, false));
  return Status();
}

// native_dropout, as torch's CUDA kernel: in evaluation (train false) a
// copy and an all-true mask; in training with p == 1 zeros and an all-false
// mask (no arithmetic, so infinities give no NaN); otherwise mask ~
// Bernoulli(1 - p) and output = input * mask * (1 / (1 - p)). Outputs are
// laid out like the input (empty_like); the mask is bool.
Status native_dropout(AtenTensorHandle input, double p, const int32_t* train, AtenTensorHandle* ret0,
                      AtenTensorHandle* ret1) {
  AOTIRT_REQUIRE_OUT(ret0);
  AOTIRT_REQUIRE_OUT(ret1);
  AOTIRT_ASSIGN_OR_RETURN(const TensorImpl* in, ops::require_tensor(input, "input"));
  AOTIRT_ASSIGN_OR_RETURN(std::unique_ptr<CudaOpScope> scope, CudaOpScope::enter(*in, "input"));
  const int dev = scope->device();
  cudaStream_t stream = scope->stream();
  const bool training = !train || *train != 0;
  if (training)
    AOTIRT_ENSURE(p >= 0.0 && p <= 1.0, kInvalidArgument, "dropout probability 'p' must be in [0, 1], got p={}", p);
  const DimVector strides = ops::empty_like_strides(*in);
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl out, cuda_empty(in->sizes(), strides, in->dtype(), dev));
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl mask, cuda_empty(in->sizes(), strides, DType::kBool, dev));
  const int64_t n = in->numel();
  if (n > 0) {
    if (!training) {
      AOTIRT_RETURN_IF_ERROR(cuda_copy(dev, stream, out, *in, false));
      AOTIRT_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(mask.data_ptr(), 1, static_cast<size_t>(n), stream));
    } else if (p == 1.0) {
      AOTIRT_RETURN_IF_ERROR(cuda_zero(dev, stream, out));
      AOTIRT_RETURN_IF_ERROR(cuda_zero(dev, stream, mask));
    } else {
      const DType d = in->dtype();
      const bool narrow_int = dtype_is_integral(d) && d != DType::kUInt16 && d != DType::kUInt32 &&
                              d != DType::kUInt64;
      AOTIRT_ENSURE(narrow_int || is_floating(d), kUnimplemented,
                    "'input' has dtype {}, which aotirt's dropout does not take in training", dtype_name(d));
      AOTIRT_ENSURE(is_floating(d), kInvalidArgument,
                    "'input' has dtype {}; dropout in training needs a floating input (as in torch)", dtype_name(d));
      // The kernel walks memory order, so the input must share out's layout.
      TensorImpl src = *in;
      if (!(in->strides() == strides)) {
        AOTIRT_ASSIGN_OR_RETURN(src, cuda_empty(in->sizes(), strides, d, dev));
        AOTIRT_RETURN_IF_ERROR(cuda_copy(dev, stream, src, *in, false));
      }
      const double keep = 1.0 - p;
      AOTIRT_ASSIGN_OR_RETURN(CudaPhilox ph, random_state().reserve(dev));
      AOTIRT_CUDA_RETURN_IF_ERROR(cuda_random_dropout(static_cast<int>(d), src.data_ptr(), out.data_ptr(),
                                                      static_cast<uint8_t*>(mask.data_ptr()), n, keep, 1.0 / keep,
                                                      ph, stream));
    }
  }
  std::unique_ptr<TensorImpl> o(new TensorImpl(std::move(out)));
  std::unique_ptr<TensorImpl> m(new TensorImpl(std::move(mask)));
  *ret0 = handle_of(o.release());
  *ret1 = handle_of(m.release());
  return Status();
}

}  // namespace
}  // namespace aotirt

using namespace aotirt;

extern "C" {

AOTITorchError aoti_torch_cuda_rand(const int64_t* size, int64_t size_len_, int32_t* dtype, int32_t* layout,
                                    int32_t* device, int32_t device_index_, int32_t* pin_memory,
                                    AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&]() -> Status {
    return rand_like_factory(RandomKind::kUniform, size, size_len_, nullptr, dtype, layout, device, device_index_,
                             pin_memory, ret0);
  });
}

AOTITorchError aoti_torch_cuda_rand_generator(const int64_t* size, int64_t size_len_, AtenGeneratorHandle* generator,
                                              int32_t* dtype, int32_t* layout, int32_t* device, int32_t device_index_,
                                              int32_t* pin_memory, AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&]() -> Status {
    return rand_like_factory(RandomKind::kUniform, size, size_len_, generator, dtype, layout, device, device_index_,
                             pin_memory, ret0);
  });
}

AOTITorchError aoti_torch_cuda_randn(const int64_t* size, int64_t size_len_, int32_t* dtype, int32_t* layout,
                                     int32_t* device, int32_t device_index_, int32_t* pin_memory,
                                     AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&]() -> Status {
    return rand_like_factory(RandomKind::kNormal, size, size_len_, nullptr, dtype, layout, device, device_index_,
                             pin_memory, ret0);
  });
}

AOTITorchError aoti_torch_cuda_randn_generator(const int64_t* size, int64_t size_len_, AtenGeneratorHandle* generator,
                                               int32_t* dtype, int32_t* layout, int32_t* device,
                                               int32_t device_index_, int32_t* pin_memory,
                                               AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&]() -> Status {
    return rand_like_factory(RandomKind::kNormal, size, size_len_, generator, dtype, layout, device, device_index_,
                             pin_memory, ret0);
  });
}

AOTITorchError aoti_torch_cuda_randint(int64_t high, const int64_t* size, int64_t size_len_, int32_t* dtype,
                                       int32_t* layout, int32_t* device, int32_t device_index_, int32_t* pin_memory,
                                       AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&]() -> Status {
    return randint_factory(0, high, size, size_len_, nullptr, dtype, layout, device, device_index_, pin_memory,
                           ret0);
  });
}

AOTITorchError aoti_torch_cuda_randint_generator(int64_t high, const int64_t* size, int64_t size_len_,
                                                 AtenGeneratorHandle* generator, int32_t* dtype, int32_t* layout,
                                                 int32_t* device, int32_t device_index_, int32_t* pin_memory,
                                                 AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&]() -> Status {
    return randint_factory(0, high, size, size_len_, generator, dtype, layout, device, device_index_, pin_memory,
                           ret0);
  });
}

AOTITorchError aoti_torch_cuda_randint_low(int64_t low, int64_t high, const int64_t* size, int64_t size_len_,
                                           int32_t* dtype, int32_t* layout, int32_t* device, int32_t device_index_,
                                           int32_t* pin_memory, AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&]() -> Status {
    return randint_factory(low, high, size, size_len_, nullptr, dtype, layout, device, device_index_, pin_memory,
                           ret0);
  });
}

AOTITorchError aoti_torch_cuda_randint_low_out(AtenTensorHandle out, int64_t low, int64_t high, const int64_t* size,
                                               int64_t size_len_) noexcept {
  return shim_call(__func__, [&]() -> Status { return randint_out(out, low, high, size, size_len_); });
}

AOTITorchError aoti_torch_cuda_randperm(int64_t n, int32_t* dtype, int32_t* layout, int32_t* device,
                                        int32_t device_index_, int32_t* pin_memory, AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__,
                   [&]() -> Status { return randperm(n, dtype, layout, device, device_index_, pin_memory, ret0); });
}

AOTITorchError aoti_torch_cuda_uniform(AtenTensorHandle self, double from, double to, AtenGeneratorHandle* generator,
                                       AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&]() -> Status {
    return functional(self, generator, ret0, RandomKind::kUniform, CudaRealDist::kUniform, from, to,
                      [&](DType d) { return ops::check_uniform_range(from, to, d); });
  });
}

AOTITorchError aoti_torch_cuda_normal_functional(AtenTensorHandle self, double mean, double std,
                                                 AtenGeneratorHandle* generator, AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&]() -> Status {
    return functional(self, generator, ret0, RandomKind::kNormal, CudaRealDist::kNormal, mean, std,
                      [&](DType) { return ops::check_normal_std(std); });
  });
}

AOTITorchError aoti_torch_cuda_exponential(AtenTensorHandle self, double lambd, AtenGeneratorHandle* generator,
                                           AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&]() -> Status {
    return functional(self, generator, ret0, RandomKind::kExponential, CudaRealDist::kExponential, lambd, 0.0,
                      [&](DType) { return ops::check_exponential_lambda(lambd); });
  });
}

AOTITorchError aoti_torch_cuda_bernoulli__Tensor(AtenTensorHandle self, AtenTensorHandle p,
                                                 AtenGeneratorHandle* generator) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_ASSIGN_OR_RETURN(const TensorImpl* pt, ops::require_tensor(p, "p"));
    return bernoulli_inplace(self, pt, 0.0, generator);
  });
}

AOTITorchError aoti_torch_cuda_bernoulli__float(AtenTensorHandle self, double p,
                                                AtenGeneratorHandle* generator) noexcept {
  return shim_call(__func__, [&]() -> Status { return bernoulli_inplace(self, nullptr, p, generator); });
}

AOTITorchError aoti_torch_cuda_native_dropout(AtenTensorHandle input, double p, int32_t* train,
                                              AtenTensorHandle* ret0, AtenTensorHandle* ret1) noexcept {
  return shim_call(__func__, [&]() -> Status { return native_dropout(input, p, train, ret0, ret1); });
}

}  // extern "C"
