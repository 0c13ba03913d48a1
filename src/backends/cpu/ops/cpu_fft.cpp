// CPU _fft_c2c and _fft_r2c (c_shim_cpu.h; the device-generic
// aoti_torch__fft_c2c forwards here for CPU tensors), through FFTW3's guru64
// interface: one plan covers every transformed dim and every batch dim with
// the tensors' own strides, so strided inputs need no copy. FFTW is loaded
// with dlopen on first use (libfftw3 for double, libfftw3f for float), as
// OpenBLAS is, so deployments without FFT models need not ship it.
#include <dlfcn.h>
#include <omp.h>

#include <complex>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

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

namespace {

// FFTW's ABI, declared here so no FFTW header is needed: fftw_iodim64, the
// sign convention and the planner flag (fftw3.h).
struct FftwIodim64 {
  ptrdiff_t n, is, os;
};
constexpr int kFftwForward = -1;
constexpr int kFftwBackward = 1;
constexpr unsigned kFftwEstimate = 1u << 6;

using PlanDftFn = void* (*)(int, const FftwIodim64*, int, const FftwIodim64*, void*, void*, int, unsigned);
using PlanR2cFn = void* (*)(int, const FftwIodim64*, int, const FftwIodim64*, void*, void*, unsigned);
using PlanFn = void (*)(void*);

struct FftwTable {
  PlanDftFn plan_dft = nullptr;
  PlanR2cFn plan_r2c = nullptr;
  PlanFn execute = nullptr;
  PlanFn destroy = nullptr;
  Status status;
};

// |prefix| is "fftw_" (double) or "fftwf_" (float).
FftwTable load_fftw(const char* library, const std::string& prefix) {
  FftwTable t;
  void* lib = dlopen(library, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char* why = dlerror();
    t.status = Status(StatusCode::kUnavailable,
                      fmt::format("CPU FFTs need FFTW3, which could not be loaded ({}): {}; install FFTW3 "
                                  "(Debian: libfftw3-dev, or libfftw3-single3 and libfftw3-double3)",
                                  library, why ? why : "unknown error"));
    return t;
  }
  t.plan_dft = reinterpret_cast<PlanDftFn>(dlsym(lib, (prefix + "plan_guru64_dft").c_str()));
  t.plan_r2c = reinterpret_cast<PlanR2cFn>(dlsym(lib, (prefix + "plan_guru64_dft_r2c").c_str()));
  t.execute = reinterpret_cast<PlanFn>(dlsym(lib, (prefix + "execute").c_str()));
  t.destroy = reinterpret_cast<PlanFn>(dlsym(lib, (prefix + "destroy_plan").c_str()));
  if (!t.plan_dft || !t.plan_r2c || !t.execute || !t.destroy)
    t.status = Status(StatusCode::kUnavailable,
                      fmt::format("{} lacks {}plan_guru64_dft and friends: it is not an FFTW3 library", library,
                                  prefix));
  return t;
}

const FftwTable& fftw(bool double_precision) {
  static const FftwTable d = load_fftw("libfftw3.so.3", "fftw_");
  static const FftwTable f = load_fftw("libfftw3f.so.3", "fftwf_");
  return double_precision ? d : f;
}

// FFTW's planner is not thread-safe (execution is).
std::mutex& planner_mutex() {
  static std::mutex m;
  return m;
}

// Multiplies every element of the dense complex |out| by |scale|.
template <class R>
void scale_all(const TensorImpl& out, double scale) {
  auto* p = static_cast<std::complex<R>*>(out.data_ptr());
  const int64_t n = out.numel();
  const R s = static_cast<R>(scale);
  constexpr int64_t kParallelElements = int64_t{1} << 16;
#pragma omp parallel for schedule(static) if (n >= kParallelElements && omp_get_max_threads() > 1)
  for (int64_t i = 0; i < n; ++i) p[i] *= s;
}

// Fills the half r2c left out along |last| from Hermitian symmetry:
// X[k] = conj(X[(n - k) mod n]) over every transformed dim.
template <class R>
void fill_conjugate_half(const TensorImpl& out, const std::vector<int64_t>& dims, int64_t last) {
  auto* p = static_cast<std::complex<R>*>(out.data_ptr());
  const DimVector& sizes = out.sizes();
  const DimVector& strides = out.strides();
  const int64_t nd = out.dim(), n = out.numel();
  const int64_t half = sizes[last] / 2 + 1;
  std::vector<bool> transformed(static_cast<size_t>(nd), false);
  for (int64_t d : dims) transformed[d] = true;
  constexpr int64_t kParallelElements = int64_t{1} << 15;
#pragma omp parallel for schedule(static) if (n >= kParallelElements && omp_get_max_threads() > 1)
  for (int64_t i = 0; i < n; ++i) {
    int64_t rest = i, dst = 0, src = 0;
    bool needed = true;
    for (int64_t d = nd - 1; d >= 0; --d) {
      const int64_t k = rest % sizes[d];
      rest /= sizes[d];
      if (d == last && k < half) needed = false;
      dst += k * strides[d];
      src += (transformed[d] ? (sizes[d] - k) % sizes[d] : k) * strides[d];
    }
    if (needed) p[dst] = std::conj(p[src]);
  }
}

// Runs the planned transform of |a| from |in| into |out| (both allocated).
Status execute(const ops::FftArgs& a, const TensorImpl& in, const TensorImpl& out, bool r2c, int sign) {
  const bool dbl = out.dtype() == DType::kComplex128;
  const FftwTable& f = fftw(dbl);
  AOTIRT_RETURN_IF_ERROR(f.status);
  const int64_t nd = in.dim();
  std::vector<bool> transformed(static_cast<size_t>(nd), false);
  std::vector<FftwIodim64> signal, batch;
  for (int64_t d : a.dims) {
    transformed[d] = true;
    signal.push_back({static_cast<ptrdiff_t>(in.sizes()[d]), static_cast<ptrdiff_t>(in.strides()[d]),
                      static_cast<ptrdiff_t>(out.strides()[d])});
  }
  for (int64_t d = 0; d < nd; ++d)
    if (!transformed[d])
      batch.push_back({static_cast<ptrdiff_t>(in.sizes()[d]), static_cast<ptrdiff_t>(in.strides()[d]),
                       static_cast<ptrdiff_t>(out.strides()[d])});
  void* src = in.data_ptr();
  void* dst = out.data_ptr();
  void* plan = nullptr;
  {
    // FFTW_ESTIMATE plans without touching the arrays; out-of-place
    // c2c and r2c transforms leave the input as it was.
    std::lock_guard<std::mutex> lock(planner_mutex());
    if (r2c)
      plan = f.plan_r2c(static_cast<int>(signal.size()), signal.data(), static_cast<int>(batch.size()), batch.data(),
                        src, dst, kFftwEstimate);
    else
      plan = f.plan_dft(static_cast<int>(signal.size()), signal.data(), static_cast<int>(batch.size()), batch.data(),
                        src, dst, sign, kFftwEstimate);
  }
  AOTIRT_ENSURE(plan != nullptr, kInternal, "FFTW could not plan the transform over dims of sizes {}",
                shape_str(in));
  f.execute(plan);
  {
    std::lock_guard<std::mutex> lock(planner_mutex());
    f.destroy(plan);
  }
  if (r2c && !a.onesided) {
    if (dbl)
      fill_conjugate_half<double>(out, a.dims, a.dims.back());
    else
      fill_conjugate_half<float>(out, a.dims, a.dims.back());
  }
  if (a.scale != 1.0) {
    if (dbl)
      scale_all<double>(out, a.scale);
    else
      scale_all<float>(out, a.scale);
  }
  return Status();
}

Status run_fft(const ops::FftArgs& a, bool r2c, int sign, AtenTensorHandle* ret) {
  AOTIRT_REQUIRE_OUT(ret);
  AOTIRT_RETURN_IF_ERROR(check_cpu(*a.self, "self"));
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl out, empty_strided(a.out_sizes, a.out_strides, a.out_dtype, DeviceId{}));
  if (out.numel() > 0) {
    if (a.dims.empty()) {
      // No dims: torch returns a copy.
      AOTIRT_RETURN_IF_ERROR(host_copy_strided(out, *a.self));
    } else {
      // FFTW reads any positive strides; overlapping ones (a broadcast
      // input) are copied out first.
      TensorImpl in = *a.self;
      if (!is_non_overlapping_and_dense(in)) {
        bool overlap = false;
        for (int64_t d = 0; d < in.dim(); ++d) overlap |= in.sizes()[d] > 1 && in.strides()[d] <= 0;
        if (overlap) {
          AOTIRT_ASSIGN_OR_RETURN(in, contiguous_as(in, in.dtype()));
        }
      }
      AOTIRT_RETURN_IF_ERROR(execute(a, in, out, r2c, sign));
    }
  }
  *ret = new_handle(std::move(out));
  return Status();
}

}  // namespace

extern "C" {

AOTITorchError aoti_torch_cpu__fft_c2c(AtenTensorHandle self, const int64_t* dim, int64_t dim_len_,
                                       int64_t normalization, int32_t forward, AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_ASSIGN_OR_RETURN(ops::FftArgs a, ops::fft_c2c_args(self, dim, dim_len_, normalization));
    return run_fft(a, false, forward ? kFftwForward : kFftwBackward, ret0);
  });
}

AOTITorchError aoti_torch_cpu__fft_r2c(AtenTensorHandle self, const int64_t* dim, int64_t dim_len_,
                                       int64_t normalization, int32_t onesided, AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_ASSIGN_OR_RETURN(ops::FftArgs a, ops::fft_r2c_args(self, dim, dim_len_, normalization, onesided != 0));
    return run_fft(a, true, kFftwForward, ret0);
  });
}

}  // extern "C"
