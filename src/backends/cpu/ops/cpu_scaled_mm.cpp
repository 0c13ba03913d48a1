// CPU _scaled_mm and _scaled_mm.out (c_shim_cpu.h): the float8 matrix
// product with per-tensor scales. Both operands are widened to float32
// (float8 values are exact there), multiplied with OpenBLAS with the two
// scales folded into alpha, the bias added in float32 and the result
// rounded once to out_dtype, which is what torch's CPU op computes.
#include <omp.h>

#include <cstdint>
#include <vector>

#include "backends/cpu/ops/cpu_op_util.h"
#include "base/status.h"
#include "core/dtype.h"
#include "device/device.h"
#include "ops/scaled_mm_args.h"
#include "shim/abi/cpu_scaled_mm.h"
#include "shim/common/shim_util.h"

using namespace aotirt;
using namespace aotirt::cpu_ops;

namespace {

// |t| ([rows, cols], any strides) as a dense row-major float32 matrix.
std::vector<float> widen(const TensorImpl& t) {
  const int64_t rows = t.sizes()[0], cols = t.sizes()[1];
  const int64_t rs = t.strides()[0], cs = t.strides()[1];
  const char* base = static_cast<const char*>(t.data_ptr());
  const size_t es = t.element_size();
  std::vector<float> out(static_cast<size_t>(rows * cols));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      out[static_cast<size_t>(r * cols + c)] =
          static_cast<float>(load_as_double(base + (r * rs + c * cs) * static_cast<int64_t>(es), t.dtype()));
  return out;
}

Status compute(const ops::ScaledMmArgs& a, const TensorImpl& out) {
  AOTIRT_RETURN_IF_ERROR(check_cpu(*a.self, "self"));
  AOTIRT_RETURN_IF_ERROR(check_cpu(*a.mat2, "mat2"));
  AOTIRT_RETURN_IF_ERROR(check_cpu(*a.scale_a, "scale_a"));
  AOTIRT_RETURN_IF_ERROR(check_cpu(*a.scale_b, "scale_b"));
  if (a.bias) AOTIRT_RETURN_IF_ERROR(check_cpu(*a.bias, "bias"));
  if (out.numel() == 0) return Status();
  AOTIRT_RETURN_IF_ERROR(check_blas_int(a.m, "M"));
  AOTIRT_RETURN_IF_ERROR(check_blas_int(a.n, "N"));
  AOTIRT_RETURN_IF_ERROR(check_blas_int(a.k, "K"));
  AOTIRT_RETURN_IF_ERROR(ensure_blas());
  const float alpha = static_cast<float>(load_as_double(a.scale_a->data_ptr(), DType::kFloat32)) *
                      static_cast<float>(load_as_double(a.scale_b->data_ptr(), DType::kFloat32));
  const std::vector<float> x = widen(*a.self), w = widen(*a.mat2);
  std::vector<float> c(static_cast<size_t>(a.m * a.n));
  gemm<float>(false, false, a.m, a.n, a.k, alpha, x.data(), a.k, w.data(), a.n, 0.0f, c.data(), a.n);
  std::vector<float> bias;
  if (a.bias) {
    bias.resize(static_cast<size_t>(a.n));
    const char* b = static_cast<const char*>(a.bias->data_ptr());
    const int64_t bs = a.bias->strides()[0] * static_cast<int64_t>(a.bias->element_size());
    for (int64_t j = 0; j < a.n; ++j) bias[static_cast<size_t>(j)] = static_cast<float>(load_as_double(b + j * bs, a.bias->dtype()));
  }
  char* dst = static_cast<char*>(out.data_ptr());
  const size_t es = out.element_size();
  const int64_t rs = out.strides()[0], cs = out.strides()[1];
#pragma omp parallel for schedule(static) if (a.m * a.n >= (int64_t{1} << 16))
  for (int64_t i = 0; i < a.m; ++i)
    for (int64_t j = 0; j < a.n; ++j) {
      float v = c[static_cast<size_t>(i * a.n + j)];
      if (!bias.empty()) v += bias[static_cast<size_t>(j)];
      store_from_double(dst + (i * rs + j * cs) * static_cast<int64_t>(es), out.dtype(), v);
    }
  return Status();
}

}  // namespace

extern "C" {

AOTITorchError aoti_torch_cpu__scaled_mm(AtenTensorHandle self, AtenTensorHandle mat2, AtenTensorHandle scale_a,
                                         AtenTensorHandle scale_b, AtenTensorHandle* bias,
                                         AtenTensorHandle* scale_result, int32_t* out_dtype,
                                         int32_t use_fast_accum, AtenTensorHandle* ret0) noexcept {
  (void)scale_result;    // torch's CPU op does not apply it
  (void)use_fast_accum;  // float32 accumulation either way
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_REQUIRE_OUT(ret0);
    AOTIRT_ASSIGN_OR_RETURN(ops::ScaledMmArgs a, ops::scaled_mm_args(self, mat2, scale_a, scale_b, bias, out_dtype));
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl out, empty_contiguous(DimVector{a.m, a.n}, a.out_dtype, DeviceId{}));
    AOTIRT_RETURN_IF_ERROR(compute(a, out));
    *ret0 = new_handle(std::move(out));
    return Status();
  });
}

AOTITorchError aoti_torch_cpu__scaled_mm_out(AtenTensorHandle out, AtenTensorHandle self, AtenTensorHandle mat2,
                                             AtenTensorHandle scale_a, AtenTensorHandle scale_b,
                                             AtenTensorHandle* bias, AtenTensorHandle* scale_result,
                                             int32_t* out_dtype, int32_t use_fast_accum) noexcept {
  (void)scale_result;
  (void)use_fast_accum;
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_ASSIGN_OR_RETURN(const TensorImpl* o, ops::require_tensor(out, "out"));
    AOTIRT_ASSIGN_OR_RETURN(ops::ScaledMmArgs a, ops::scaled_mm_args(self, mat2, scale_a, scale_b, bias, out_dtype));
    AOTIRT_RETURN_IF_ERROR(check_cpu(*o, "out"));
    AOTIRT_ENSURE(o->dtype() == a.out_dtype, kInvalidArgument, "'out' is {}, expected {}", dtype_name(o->dtype()),
                  dtype_name(a.out_dtype));
    AOTIRT_ENSURE(o->dim() == 2 && o->sizes()[0] == a.m && o->sizes()[1] == a.n, kInvalidArgument,
                  "'out' has shape {}, expected [{}, {}]", shape_str(*o), a.m, a.n);
    return compute(a, *o);
  });
}

}  // extern "C"
