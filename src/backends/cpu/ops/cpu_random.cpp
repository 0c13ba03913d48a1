// CPU random ops (c_shim_cpu.h): rand, randn, randint, randperm, uniform,
// normal_functional, exponential, bernoulli_ and native_dropout. They match
// torch's distributions, not its bit streams. Every value comes from one
// process-wide counter-based Philox4x32-10 generator: a call reserves its
// 128-bit counter blocks (one per one to four elements, as many words as a
// value needs) from an atomic offset, so concurrent calls never share blocks,
// and each element's words are fixed by its index, so a result does not
// depend on how OpenMP splits the elements. The seed is AOTIRT_SEED when set (for reproducible runs),
// else drawn from std::random_device once per process.
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "backends/cpu/cpu_options.h"
#include "backends/cpu/ops/cpu_op_util.h"
#include "base/status.h"
#include "core/dtype.h"
#include "core/host_copy.h"
#include "device/device.h"
#include "ops/random_args.h"
#include "shim/abi/cpu_random.h"
#include "shim/common/shim_util.h"

using namespace aotirt;
using namespace aotirt::cpu_ops;
using ops::PhiloxBlock;
using ops::RandomKind;

namespace {

// ---- the process-wide generator ----

class RandomState {
 public:
  RandomState() {
    Result<uint64_t> seed = ops::parse_random_seed(cpu_options().random_seed);
    if (seed.ok())
      seed_ = seed.value();
    else
      status_ = seed.status();
  }

  const Status& status() const { return status_; }
  uint64_t seed() const { return seed_; }
  // Reserves |n| consecutive counter blocks; returns the first.
  uint64_t reserve(uint64_t n) { return offset_.fetch_add(n, std::memory_order_relaxed); }

 private:
  Status status_;
  uint64_t seed_ = 0;
  std::atomic<uint64_t> offset_{0};
};

RandomState& random_state() {
  static RandomState state;
  return state;
}

// The blocks one call draws: element i reads block base + i.
struct Draw {
  uint64_t seed = 0, base = 0;
  PhiloxBlock at(int64_t i) const { return ops::philox_block(seed, base + static_cast<uint64_t>(i)); }
};

// Reserves the blocks for |n| elements, |per| elements sharing one block.
Result<Draw> reserve_draw(int64_t n, int per = 1) {
  RandomState& s = random_state();
  AOTIRT_RETURN_IF_ERROR(s.status());
  return Draw{s.seed(), s.reserve(static_cast<uint64_t>((n + per - 1) / per))};
}

// ---- bits to values ----

// The top |digits| bits of |w| as a multiple of 2^-digits in [0, 1).
inline double unit_bits(uint32_t w, int digits) {
  return static_cast<double>(w >> (32 - digits)) / static_cast<double>(uint64_t{1} << digits);
}
inline uint64_t join(uint32_t lo, uint32_t hi) { return (static_cast<uint64_t>(hi) << 32) | lo; }
// 53 random bits as a double in [0, 1).
inline double unit53(uint32_t lo, uint32_t hi) {
  constexpr double kTwoToMinus53 = 1.0 / 9007199254740992.0;
  return static_cast<double>(join(lo, hi) >> 11) * kTwoToMinus53;
}

// Mantissa digits of a floating dtype: uniform draws use exactly that many
// bits, as torch does, so [0, 1) never rounds up to 1.
int float_digits(DType d) {
  switch (d) {
    case DType::kFloat16: return 11;
    case DType::kBFloat16: return 8;
    case DType::kFloat64:
    case DType::kComplex128: return 53;
    default: return 24;
  }
}

// A uniform draw in [0, 1) of a real dtype with |digits| mantissa digits,
// from words |k| (and |k| + 1 when 53 digits are needed) of |b|.
inline double unit_of(const PhiloxBlock& b, int k, int digits) {
  return digits == 53 ? unit53(b[k], b[k + 1]) : unit_bits(b[k], digits);
}

// Writes real |v| into element |p| of real dtype |d|, rounding as a cast.
inline void store_real(char* p, DType d, double v) {
  switch (d) {
    case DType::kFloat32: {
      const float f = static_cast<float>(v);
      std::memcpy(p, &f, 4);
      return;
    }
    case DType::kFloat64: std::memcpy(p, &v, 8); return;
    case DType::kFloat16: {
      const uint16_t h = float_to_half(static_cast<float>(v));
      std::memcpy(p, &h, 2);
      return;
    }
    case DType::kBFloat16: {
      const uint16_t h = float_to_bf16(static_cast<float>(v));
      std::memcpy(p, &h, 2);
      return;
    }
    default: store_from_double(p, d, v); return;
  }
}

// Writes integer |v| into element |p| of |d| (integers, bool or floating).
inline void store_int(char* p, DType d, int64_t v) {
  switch (d) {
    case DType::kInt64: std::memcpy(p, &v, 8); return;
    case DType::kInt32: {
      const int32_t x = static_cast<int32_t>(v);
      std::memcpy(p, &x, 4);
      return;
    }
    case DType::kUInt8: *reinterpret_cast<uint8_t*>(p) = static_cast<uint8_t>(v); return;
    case DType::kBool: *reinterpret_cast<uint8_t*>(p) = v != 0; return;
    case DType::kFloat32:
    case DType::kFloat64:
    case DType::kFloat16:
    case DType::kBFloat16: store_real(p, d, static_cast<double>(v)); return;
    default: store_from_int64(p, d, v); return;
  }
}

// The real dtype of one component of |d| (a complex dtype's real part).
DType component_dtype(DType d) {
  if (d == DType::kComplex64) return DType::kFloat32;
  if (d == DType::kComplex128) return DType::kFloat64;
  return d;
}

// Runs fn(i) for i in [0, n), split over OpenMP threads when |n| is large.
// |fn| must not throw.
template <class Fn>
void for_each_element(int64_t n, Fn fn) {
  constexpr int64_t kParallelElements = int64_t{1} << 15;
  const bool parallel = n >= kParallelElements && omp_get_max_threads() > 1;
#pragma omp parallel for schedule(static) if (parallel)
  for (int64_t i = 0; i < n; ++i) fn(i);
}

// Calls fn(i, block, w) for every element i < n: |per| consecutive elements
// share one block (1, 2 or 4), element i reading its 4 / per words from
// word w on. One Philox evaluation serves them all.
template <class Fn>
void for_each_draw(const Draw& draw, int64_t n, int per, Fn fn) {
  const int64_t blocks = (n + per - 1) / per;
  const int words = 4 / per;
  for_each_element(blocks, [&](int64_t j) {
    const PhiloxBlock b = draw.at(j);
    const int64_t first = j * per;
    const int64_t m = std::min<int64_t>(per, n - first);
    for (int64_t k = 0; k < m; ++k) fn(first + k, b, static_cast<int>(k) * words);
  });
}

// The element offset of logical (row-major) element |i| of a view.
inline int64_t offset_of(int64_t i, const DimVector& sizes, const DimVector& strides) {
  int64_t off = 0;
  for (int64_t d = sizes.size() - 1; d >= 0; --d) {
    off += (i % sizes[d]) * strides[d];
    i /= sizes[d];
  }
  return off;
}

// ---- distributions over dense outputs ----
// |out| is non-overlapping and dense, so its elements are the numel() slots
// from data_ptr() on, in some order; distributions do not care which.

Status fill_uniform(const TensorImpl& out, double from, double to) {
  const int64_t n = out.numel();
  if (n == 0) return Status();
  const DType d = out.dtype(), c = component_dtype(d);
  const bool complex = c != d;
  const int digits = float_digits(d);
  const int part_words = digits == 53 ? 2 : 1;
  const int per = 4 / (part_words * (complex ? 2 : 1));
  AOTIRT_ASSIGN_OR_RETURN(Draw draw, reserve_draw(n, per));
  const size_t cs = dtype_size(c);
  const double range = to - from;
  char* base = static_cast<char*>(out.data_ptr());
  for_each_draw(draw, n, per, [&](int64_t i, const PhiloxBlock& b, int w) {
    char* p = base + i * static_cast<int64_t>(dtype_size(d));
    store_real(p, c, unit_of(b, w, digits) * range + from);
    if (complex) store_real(p + cs, c, unit_of(b, w + part_words, digits) * range + from);
  });
  return Status();
}

// Box-Muller over two 53-bit uniforms gives two independent N(0, 1) values.
inline void normal_pair(const PhiloxBlock& b, double* z0, double* z1) {
  const double u1 = 1.0 - unit53(b[0], b[1]);  // (0, 1]: the log stays finite
  const double u2 = unit53(b[2], b[3]);
  const double r = std::sqrt(-2.0 * std::log(u1));
  constexpr double kTwoPi = 6.283185307179586476925286766559;
  *z0 = r * std::cos(kTwoPi * u2);
  *z1 = r * std::sin(kTwoPi * u2);
}

Status fill_normal(const TensorImpl& out, double mean, double std) {
  const int64_t n = out.numel();
  if (n == 0) return Status();
  const DType d = out.dtype(), c = component_dtype(d);
  const bool complex = c != d;
  // One block gives one pair: a complex element, or two real ones.
  const int per = complex ? 1 : 2;
  AOTIRT_ASSIGN_OR_RETURN(Draw draw, reserve_draw(n, per));
  const int64_t es = static_cast<int64_t>(dtype_size(d)), cs = static_cast<int64_t>(dtype_size(c));
  // A complex normal of variance std^2 splits it over its two parts, as torch.
  const double s = complex ? std / std::sqrt(2.0) : std;
  char* base = static_cast<char*>(out.data_ptr());
  for_each_element((n + per - 1) / per, [&](int64_t j) {
    double z0, z1;
    normal_pair(draw.at(j), &z0, &z1);
    char* p = base + j * per * es;
    store_real(p, c, mean + s * z0);
    if (complex)
      store_real(p + cs, c, mean + s * z1);
    else if (j * 2 + 1 < n)
      store_real(p + es, c, mean + s * z1);
  });
  return Status();
}

Status fill_exponential(const TensorImpl& out, double lambd) {
  const int64_t n = out.numel();
  if (n == 0) return Status();
  AOTIRT_ASSIGN_OR_RETURN(Draw draw, reserve_draw(n, 2));
  const DType d = out.dtype();
  const size_t es = dtype_size(d);
  char* base = static_cast<char*>(out.data_ptr());
  for_each_draw(draw, n, 2, [&](int64_t i, const PhiloxBlock& b, int w) {
    const double u = 1.0 - unit53(b[w], b[w + 1]);  // (0, 1]
    store_real(base + i * static_cast<int64_t>(es), d, -std::log(u) / lambd);
  });
  return Status();
}

// Uniform integers in [low, high) (checked low < high). The modulo's bias is
// below range / 2^32 for ranges up to 2^32 and below range / 2^64 above.
Status fill_randint(const TensorImpl& out, int64_t low, int64_t high) {
  const int64_t n = out.numel();
  if (n == 0) return Status();
  const uint64_t range = static_cast<uint64_t>(high) - static_cast<uint64_t>(low);
  const bool wide = range > (uint64_t{1} << 32);
  const int per = wide ? 2 : 4;
  AOTIRT_ASSIGN_OR_RETURN(Draw draw, reserve_draw(n, per));
  const DType d = out.dtype();
  const int64_t es = static_cast<int64_t>(dtype_size(d));
  const DimVector& sizes = out.sizes();
  const DimVector& strides = out.strides();
  const bool dense = ops::is_non_overlapping_and_dense(out);
  char* base = static_cast<char*>(out.data_ptr());
  for_each_draw(draw, n, per, [&](int64_t i, const PhiloxBlock& b, int w) {
    const uint64_t x = wide ? join(b[w], b[w + 1]) % range : b[w] % range;
    const int64_t v = static_cast<int64_t>(static_cast<uint64_t>(low) + x);
    const int64_t off = dense ? i : offset_of(i, sizes, strides);
    store_int(base + off * es, d, v);
  });
  return Status();
}

// ---- factory plumbing ----

Status check_device(const int32_t* device) {
  AOTIRT_ENSURE(!device || *device == 0, kUnimplemented,
                "'device' is {} (device type code {}); aotirt's CPU random ops create CPU tensors only",
                *device == 1 ? "cuda" : "not the CPU", *device);
  return Status();
}

Result<TensorImpl> new_output(const ops::FactoryArgs& a) { return empty_contiguous(a.sizes, a.dtype, DeviceId{}); }

Status hand_out(TensorImpl t, AtenTensorHandle* ret) {
  *ret = new_handle(std::move(t));
  return Status();
}

Status rand_like_factory(RandomKind kind, const int64_t* size, int64_t size_len, AtenGeneratorHandle* generator,
                         int32_t* dtype, int32_t* layout, int32_t* device, int32_t* pin_memory,
                         AtenTensorHandle* ret0) {
  AOTIRT_REQUIRE_OUT(ret0);
  AOTIRT_RETURN_IF_ERROR(ops::check_no_generator(generator));
  AOTIRT_ASSIGN_OR_RETURN(ops::FactoryArgs a,
                          ops::factory_args(kind, size, size_len, dtype, DType::kFloat32, layout, pin_memory));
  AOTIRT_RETURN_IF_ERROR(check_device(device));
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl out, new_output(a));
  if (kind == RandomKind::kUniform)
    AOTIRT_RETURN_IF_ERROR(fill_uniform(out, 0.0, 1.0));
  else
    AOTIRT_RETURN_IF_ERROR(fill_normal(out, 0.0, 1.0));
  return hand_out(std::move(out), ret0);
}

Status randint_factory(int64_t low, int64_t high, const int64_t* size, int64_t size_len,
                       AtenGeneratorHandle* generator, int32_t* dtype, int32_t* layout, int32_t* device,
                       int32_t* pin_memory, AtenTensorHandle* ret0) {
  AOTIRT_REQUIRE_OUT(ret0);
  AOTIRT_RETURN_IF_ERROR(ops::check_no_generator(generator));
  AOTIRT_ASSIGN_OR_RETURN(ops::FactoryArgs a, ops::factory_args(RandomKind::kRandint, size, size_len, dtype,
                                                                DType::kInt64, layout, pin_memory));
  AOTIRT_RETURN_IF_ERROR(check_device(device));
  AOTIRT_RETURN_IF_ERROR(ops::check_randint_range(low, high, a.dtype));
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl out, new_output(a));
  AOTIRT_RETURN_IF_ERROR(fill_randint(out, low, high));
  return hand_out(std::move(out), ret0);
}

// randint.low_out: |out| keeps its layout when it already has |size|; else
// it is resized to |size| with contiguous strides, as torch's resize_ does,
// reusing its storage when that is large enough.
Status randint_out(AtenTensorHandle out, int64_t low, int64_t high, const int64_t* size, int64_t size_len) {
  AOTIRT_ASSIGN_OR_RETURN(const TensorImpl* o, require_tensor(out, "out"));
  AOTIRT_RETURN_IF_ERROR(check_cpu(*o, "out"));
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
      AOTIRT_ASSIGN_OR_RETURN(TensorImpl fresh, empty_contiguous(a.sizes, o->dtype(), DeviceId{}));
      *target = std::move(fresh);
    }
  }
  return fill_randint(*target, low, high);
}

// A Fisher-Yates shuffle of 0..n-1; step i draws from block base + i.
Status randperm(int64_t n, int32_t* dtype, int32_t* layout, int32_t* device, int32_t* pin_memory,
                AtenTensorHandle* ret0) {
  AOTIRT_REQUIRE_OUT(ret0);
  AOTIRT_RETURN_IF_ERROR(ops::check_randperm_n(n, DType::kInt64));  // n >= 0, before it is read as a size
  const int64_t size = n;
  AOTIRT_ASSIGN_OR_RETURN(ops::FactoryArgs a, ops::factory_args(RandomKind::kRandperm, &size, 1, dtype,
                                                                DType::kInt64, layout, pin_memory));
  AOTIRT_RETURN_IF_ERROR(check_device(device));
  AOTIRT_RETURN_IF_ERROR(ops::check_randperm_n(n, a.dtype));
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl out, new_output(a));
  if (n > 0) {
    AOTIRT_ASSIGN_OR_RETURN(Draw draw, reserve_draw(n));
    std::vector<int64_t> perm(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) perm[i] = i;
    for (int64_t i = n - 1; i > 0; --i) {
      const PhiloxBlock b = draw.at(i);
      const uint64_t j = join(b[0], b[1]) % static_cast<uint64_t>(i + 1);
      std::swap(perm[i], perm[j]);
    }
    char* base = static_cast<char*>(out.data_ptr());
    const int64_t es = static_cast<int64_t>(out.element_size());
    for (int64_t i = 0; i < n; ++i) store_int(base + i * es, a.dtype, perm[i]);
  }
  return hand_out(std::move(out), ret0);
}

// ---- ops on an existing tensor ----

// A fresh tensor laid out like |self| (torch's empty_like), for the
// functional uniform, normal and exponential.
Result<TensorImpl> like(const TensorImpl& self) {
  return empty_strided(self.sizes(), empty_like_strides(self), self.dtype(), DeviceId{});
}

template <class Fill>
Status functional(AtenTensorHandle self, AtenGeneratorHandle* generator, AtenTensorHandle* ret0, RandomKind kind,
                  Fill fill) {
  AOTIRT_REQUIRE_OUT(ret0);
  AOTIRT_ASSIGN_OR_RETURN(const TensorImpl* s, require_tensor(self, "self"));
  AOTIRT_RETURN_IF_ERROR(check_cpu(*s, "self"));
  AOTIRT_RETURN_IF_ERROR(ops::check_no_generator(generator));
  AOTIRT_RETURN_IF_ERROR(ops::check_random_dtype(kind, s->dtype(), "self"));
  AOTIRT_RETURN_IF_ERROR(fill(*s, true));  // the parameter checks only
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl out, like(*s));
  AOTIRT_RETURN_IF_ERROR(fill(out, false));
  return hand_out(std::move(out), ret0);
}

// bernoulli_: self[i] = (u_i < p_i), written through self's strides; |p| is
// either a scalar or a floating tensor broadcast to self.
Status bernoulli_inplace(AtenTensorHandle self, const TensorImpl* p, double p_scalar, AtenGeneratorHandle* generator) {
  AOTIRT_ASSIGN_OR_RETURN(const TensorImpl* s, require_tensor(self, "self"));
  AOTIRT_RETURN_IF_ERROR(check_cpu(*s, "self"));
  AOTIRT_RETURN_IF_ERROR(ops::check_no_generator(generator));
  AOTIRT_RETURN_IF_ERROR(ops::check_random_dtype(RandomKind::kBernoulli, s->dtype(), "self"));
  DimVector p_strides;
  if (p) {
    AOTIRT_RETURN_IF_ERROR(check_cpu(*p, "p"));
    AOTIRT_ENSURE(p->dtype() == DType::kFloat32 || p->dtype() == DType::kFloat64 || p->dtype() == DType::kFloat16 ||
                      p->dtype() == DType::kBFloat16,
                  kInvalidArgument, "'p' has dtype {}; bernoulli_ needs a floating probability tensor",
                  dtype_name(p->dtype()));
    AOTIRT_ASSIGN_OR_RETURN(p_strides, ops::expand_strides(*p, s->sizes(), "p"));
  } else {
    AOTIRT_RETURN_IF_ERROR(ops::check_bernoulli_p(p_scalar));
  }
  const int64_t n = s->numel();
  if (n == 0) return Status();
  // Probabilities first, so a bad one refuses the call before self changes.
  std::vector<double> probs;
  if (p) {
    probs.resize(static_cast<size_t>(n));
    const char* pb = static_cast<const char*>(p->data_ptr());
    const int64_t pes = static_cast<int64_t>(p->element_size());
    const DType pd = p->dtype();
    for (int64_t i = 0; i < n; ++i) {
      probs[i] = load_as_double(pb + offset_of(i, s->sizes(), p_strides) * pes, pd);
      AOTIRT_ENSURE(probs[i] >= 0.0 && probs[i] <= 1.0, kInvalidArgument,
                    "bernoulli expects every element of 'p' to be in [0, 1], but found {}", probs[i]);
    }
  }
  AOTIRT_ASSIGN_OR_RETURN(Draw draw, reserve_draw(n, 2));
  const DType d = s->dtype();
  const int64_t es = static_cast<int64_t>(s->element_size());
  char* base = static_cast<char*>(s->data_ptr());
  const DimVector& sizes = s->sizes();
  const DimVector& strides = s->strides();
  const double* pp = probs.empty() ? nullptr : probs.data();
  for_each_draw(draw, n, 2, [&](int64_t i, const PhiloxBlock& b, int w) {
    const double prob = pp ? pp[i] : p_scalar;
    store_int(base + offset_of(i, sizes, strides) * es, d, unit53(b[w], b[w + 1]) < prob ? 1 : 0);
  });
  return Status();
}

// native_dropout: in training (train null or true) mask ~ Bernoulli(1 - p)
// and output = input * mask * (1 / (1 - p)) (0 when p == 1), computed in the
// input's dtype as torch does (float for the 16-bit floats); otherwise a
// copy and an all-true mask. Outputs are laid out like the input.
template <class T>
void dropout_kernel(const TensorImpl& in, const TensorImpl& out, const TensorImpl& mask, const Draw& draw,
                    double keep, double scale) {
  const int64_t n = in.numel();
  const DType d = in.dtype();
  const char* src = static_cast<const char*>(in.data_ptr());
  char* dst = static_cast<char*>(out.data_ptr());
  uint8_t* m = static_cast<uint8_t*>(mask.data_ptr());
  const int64_t es = static_cast<int64_t>(in.element_size());
  const T sc = static_cast<T>(scale);
  for_each_draw(draw, n, 2, [&](int64_t i, const PhiloxBlock& b, int w) {
    const bool kept = unit53(b[w], b[w + 1]) < keep;
    const int64_t io = offset_of(i, in.sizes(), in.strides());
    const int64_t oo = offset_of(i, out.sizes(), out.strides());
    const T x = static_cast<T>(load_as_double(src + io * es, d));
    // x * mask is exact in every dtype (x, a signed zero, or NaN for an
    // infinite x that is dropped, as in torch); then the scale multiplies.
    const T masked = x * static_cast<T>(kept ? 1 : 0);
    store_real(dst + oo * es, d, static_cast<double>(masked * sc));
    m[oo] = kept ? 1 : 0;
  });
}

Status native_dropout(AtenTensorHandle input, double p, const int32_t* train, AtenTensorHandle* ret0,
                      AtenTensorHandle* ret1) {
  AOTIRT_REQUIRE_OUT(ret0);
  AOTIRT_REQUIRE_OUT(ret1);
  AOTIRT_ASSIGN_OR_RETURN(const TensorImpl* in, require_tensor(input, "input"));
  AOTIRT_RETURN_IF_ERROR(check_cpu(*in, "input"));
  const bool training = !train || *train != 0;
  if (in->numel() == 0) {
    // torch hands back the input itself and an empty mask of its dtype.
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl mask, like(*in));
    AtenTensorHandle m = new_handle(std::move(mask));
    try {
      *ret0 = new_handle(*in);
    } catch (...) {
      delete impl_of(m);
      throw;
    }
    *ret1 = m;
    return Status();
  }
  const DimVector strides = empty_like_strides(*in);
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl out, empty_strided(in->sizes(), strides, in->dtype(), DeviceId{}));
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl mask, empty_strided(in->sizes(), strides, DType::kBool, DeviceId{}));
  if (training) {
    const DType d = in->dtype();
    const bool int_or_bool = dtype_is_integral(d) && d != DType::kUInt16 && d != DType::kUInt32 &&
                             d != DType::kUInt64;
    AOTIRT_ENSURE(int_or_bool || d == DType::kFloat32 || d == DType::kFloat64 || d == DType::kFloat16 ||
                      d == DType::kBFloat16,
                  kUnimplemented, "'input' has dtype {}, which aotirt's dropout does not take in training",
                  dtype_name(d));
    AOTIRT_ENSURE(d == DType::kFloat32 || d == DType::kFloat64 || d == DType::kFloat16 || d == DType::kBFloat16,
                  kInvalidArgument, "'input' has dtype {}; dropout in training needs a floating input (as in torch)",
                  dtype_name(d));
    AOTIRT_ENSURE(p >= 0.0 && p <= 1.0, kInvalidArgument, "dropout probability 'p' must be in [0, 1], got p={}",
                  p);
    const double keep = 1.0 - p;
    const double scale = keep == 0.0 ? 0.0 : 1.0 / keep;
    AOTIRT_ASSIGN_OR_RETURN(Draw draw, reserve_draw(in->numel(), 2));
    if (d == DType::kFloat64)
      dropout_kernel<double>(*in, out, mask, draw, keep, scale);
    else
      dropout_kernel<float>(*in, out, mask, draw, keep, scale);
  } else {
    AOTIRT_RETURN_IF_ERROR(host_copy_strided(out, *in));
    std::memset(mask.data_ptr(), 1, static_cast<size_t>(mask.numel()));
  }
  AtenTensorHandle o = new_handle(std::move(out));
  try {
    *ret1 = new_handle(std::move(mask));
  } catch (...) {
    delete impl_of(o);
    throw;
  }
  *ret0 = o;
  return Status();
}

}  // namespace

extern "C" {

AOTITorchError aoti_torch_cpu_rand(const int64_t* size, int64_t size_len_, int32_t* dtype, int32_t* layout,
                                   int32_t* device, int32_t device_index_, int32_t* pin_memory,
                                   AtenTensorHandle* ret0) noexcept {
  (void)device_index_;
  return shim_call(__func__, [&]() -> Status {
    return rand_like_factory(RandomKind::kUniform, size, size_len_, nullptr, dtype, layout, device, pin_memory, ret0);
  });
}

AOTITorchError aoti_torch_cpu_rand_generator(const int64_t* size, int64_t size_len_, AtenGeneratorHandle* generator,
                                             int32_t* dtype, int32_t* layout, int32_t* device, int32_t device_index_,
                                             int32_t* pin_memory, AtenTensorHandle* ret0) noexcept {
  (void)device_index_;
  return shim_call(__func__, [&]() -> Status {
    return rand_like_factory(RandomKind::kUniform, size, size_len_, generator, dtype, layout, device, pin_memory,
                             ret0);
  });
}

AOTITorchError aoti_torch_cpu_randn(const int64_t* size, int64_t size_len_, int32_t* dtype, int32_t* layout,
                                    int32_t* device, int32_t device_index_, int32_t* pin_memory,
                                    AtenTensorHandle* ret0) noexcept {
  (void)device_index_;
  return shim_call(__func__, [&]() -> Status {
    return rand_like_factory(RandomKind::kNormal, size, size_len_, nullptr, dtype, layout, device, pin_memory, ret0);
  });
}

AOTITorchError aoti_torch_cpu_randn_generator(const int64_t* size, int64_t size_len_, AtenGeneratorHandle* generator,
                                              int32_t* dtype, int32_t* layout, int32_t* device, int32_t device_index_,
                                              int32_t* pin_memory, AtenTensorHandle* ret0) noexcept {
  (void)device_index_;
  return shim_call(__func__, [&]() -> Status {
    return rand_like_factory(RandomKind::kNormal, size, size_len_, generator, dtype, layout, device, pin_memory,
                             ret0);
  });
}

AOTITorchError aoti_torch_cpu_randint(int64_t high, const int64_t* size, int64_t size_len_, int32_t* dtype,
                                      int32_t* layout, int32_t* device, int32_t device_index_, int32_t* pin_memory,
                                      AtenTensorHandle* ret0) noexcept {
  (void)device_index_;
  return shim_call(__func__, [&]() -> Status {
    return randint_factory(0, high, size, size_len_, nullptr, dtype, layout, device, pin_memory, ret0);
  });
}

AOTITorchError aoti_torch_cpu_randint_generator(int64_t high, const int64_t* size, int64_t size_len_,
                                                AtenGeneratorHandle* generator, int32_t* dtype, int32_t* layout,
                                                int32_t* device, int32_t device_index_, int32_t* pin_memory,
                                                AtenTensorHandle* ret0) noexcept {
  (void)device_index_;
  return shim_call(__func__, [&]() -> Status {
    return randint_factory(0, high, size, size_len_, generator, dtype, layout, device, pin_memory, ret0);
  });
}

AOTITorchError aoti_torch_cpu_randint_low(int64_t low, int64_t high, const int64_t* size, int64_t size_len_,
                                          int32_t* dtype, int32_t* layout, int32_t* device, int32_t device_index_,
                                          int32_t* pin_memory, AtenTensorHandle* ret0) noexcept {
  (void)device_index_;
  return shim_call(__func__, [&]() -> Status {
    return randint_factory(low, high, size, size_len_, nullptr, dtype, layout, device, pin_memory, ret0);
  });
}

AOTITorchError aoti_torch_cpu_randint_low_out(AtenTensorHandle out, int64_t low, int64_t high, const int64_t* size,
                                              int64_t size_len_) noexcept {
  return shim_call(__func__, [&]() -> Status { return randint_out(out, low, high, size, size_len_); });
}

AOTITorchError aoti_torch_cpu_randperm(int64_t n, int32_t* dtype, int32_t* layout, int32_t* device,
                                       int32_t device_index_, int32_t* pin_memory, AtenTensorHandle* ret0) noexcept {
  (void)device_index_;
  return shim_call(__func__, [&]() -> Status { return randperm(n, dtype, layout, device, pin_memory, ret0); });
}

AOTITorchError aoti_torch_cpu_uniform(AtenTensorHandle self, double from, double to, AtenGeneratorHandle* generator,
                                      AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&]() -> Status {
    return functional(self, generator, ret0, RandomKind::kUniform, [&](const TensorImpl& t, bool check) -> Status {
      if (check) return ops::check_uniform_range(from, to, t.dtype());
      return fill_uniform(t, from, to);
    });
  });
}

AOTITorchError aoti_torch_cpu_normal_functional(AtenTensorHandle self, double mean, double std,
                                                AtenGeneratorHandle* generator, AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&]() -> Status {
    return functional(self, generator, ret0, RandomKind::kNormal, [&](const TensorImpl& t, bool check) -> Status {
      if (check) return ops::check_normal_std(std);
      return fill_normal(t, mean, std);
    });
  });
}

AOTITorchError aoti_torch_cpu_exponential(AtenTensorHandle self, double lambd, AtenGeneratorHandle* generator,
                                          AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&]() -> Status {
    return functional(self, generator, ret0, RandomKind::kExponential,
                      [&](const TensorImpl& t, bool check) -> Status {
                        if (check) return ops::check_exponential_lambda(lambd);
                        return fill_exponential(t, lambd);
                      });
  });
}

AOTITorchError aoti_torch_cpu_bernoulli__Tensor(AtenTensorHandle self, AtenTensorHandle p,
                                                AtenGeneratorHandle* generator) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_ASSIGN_OR_RETURN(const TensorImpl* pt, require_tensor(p, "p"));
    return bernoulli_inplace(self, pt, 0.0, generator);
  });
}

AOTITorchError aoti_torch_cpu_bernoulli__float(AtenTensorHandle self, double p,
                                               AtenGeneratorHandle* generator) noexcept {
  return shim_call(__func__, [&]() -> Status { return bernoulli_inplace(self, nullptr, p, generator); });
}

AOTITorchError aoti_torch_cpu_native_dropout(AtenTensorHandle input, double p, int32_t* train,
                                             AtenTensorHandle* ret0, AtenTensorHandle* ret1) noexcept {
  return shim_call(__func__, [&]() -> Status { return native_dropout(input, p, train, ret0, ret1); });
}

}  // extern "C"
