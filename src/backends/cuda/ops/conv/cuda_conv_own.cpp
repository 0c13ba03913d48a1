// float32 channels-last 2-d convolutions on aotirt's TF32 and 3xTF32
// kernels (cuda_conv_tf32.h) and its stem kernel (cuda_conv_stem.h): each
// problem's kernel and channel split chosen once per device, launches
// replayed (cuda_op_replay.h) or, for large ones on Hopper, started with
// programmatic dependent launch.
#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>

#include "backends/cuda/ops/conv/cuda_conv_impl.h"
#include "backends/cuda/ops/conv/cuda_conv_stem.h"
#include "backends/cuda/ops/conv/cuda_conv_tf32.h"
#include "backends/cuda/runtime/cuda_device.h"
#include "backends/cuda/runtime/cuda_options.h"
#include "backends/cuda/runtime/cuda_status.h"
#include "backends/cuda/runtime/cuda_symbols.h"
#include "backends/cuda/launch/cuda_kernel_table.h"
#include "backends/cuda/launch/cuda_l2_prefetch.h"
#include "backends/cuda/launch/cuda_op_replay.h"
#include "base/log.h"
#include "base/status.h"
#include "shim/common/shim_profile.h"

namespace aotirt {
namespace {

// Where float32 channels-last convolutions run (AOTIRT_CUDA_CONV):
// - auto (the default): on aotirt's kernels until something else in the
//   process has loaded cuDNN (a grouped or a contiguous convolution, say);
//   from then on on cuDNN, whose Hopper kernels are faster on most of
//   ResNet-50's convolutions, since its memory is spent anyway;
// - aotirt: always on aotirt's kernels;
// - cudnn: always on cuDNN.
bool own_conv_enabled() {
  switch (cuda_options().conv) {
    case CudaLibraryChoice::kVendor: return false;
    case CudaLibraryChoice::kAotirt: return true;
    case CudaLibraryChoice::kAuto: break;
  }
  return cudnn_api_if_loaded() == nullptr;
}

// AOTIRT_CUDA_DISABLE=conv_sm90 leaves the Hopper kernels out of the choice
// (to compare with the Ampere ones, or to step around one).
bool conv_sm90_enabled() { return cuda_options().enabled(CudaFeature::kConvSm90); }

// The Hopper GEMM kernels take plain 1x1 convolutions
// (cuda_conv_tf32_gemm_sm90.cu) unless AOTIRT_CUDA_DISABLE=conv_gemm, which
// leaves them to the implicit-GEMM kernels (slower on ResNet-50 by several
// percent at every batch).
bool conv_gemm_enabled() { return cuda_options().enabled(CudaFeature::kConvGemm); }

// Stems of 1-4 channels run on the stem kernel (cuda_conv_stem.h) where it
// takes them (TF32, output channels a multiple of 32), which reads the input
// as it is; elsewhere, or with AOTIRT_CUDA_DISABLE=conv_stem, 1-3 channels
// are padded to 4 (copies of the input and the filters) for CUTLASS's
// fixed-channels kernels.
bool conv_stem_enabled() { return cuda_options().enabled(CudaFeature::kConvStem); }

// AOTIRT_CUDA_DISABLE=conv_parallel_split keeps channel splits serial (no
// workspace, no second kernel), so the Hopper kernels, whose splits are
// parallel only, take none.
bool conv_parallel_split_enabled() { return cuda_options().enabled(CudaFeature::kConvParallelSplit); }

const KernelTable<CudaConvConfig>& conv_tf32_device(int device) {
  return kernel_table<CudaConvConfig, cuda_conv_tf32_config_count, cuda_conv_tf32_config,
                      cuda_conv_tf32_blocks_per_sm>(device, "no TF32 convolution kernels (convolutions on cuDNN)");
}

// Large unsplit convolutions on the Hopper kernels launch directly with
// programmatic dependent launch (CudaConvProblem::pdl), not replayed: the
// GPU then starts each of them without the gap it leaves between kernels
// of a stream (without a graph; with one the gaps are small already).
// AOTIRT_CUDA_DISABLE=pdl turns it off.
bool conv_pdl_enabled() { return cuda_options().enabled(CudaFeature::kPdl); }
// Convolutions of at least this many GFLOP take the dependent launch: their
// kernels hide a direct launch's host time (several times a replayed one's),
// where smaller ones, host-bound without a graph, keep the replays.
constexpr double kPdlMinGflop = 2.0;

// A problem's kernel and channel split, chosen once, and its call site for
// replays (a replayed launch costs a fraction of a direct one's host time:
// cuda_op_replay.h).
struct OwnConvPlan {
  int index = -1;  // among the build's kernels; -1: none takes the problem
  int split = 1;
  bool parallel = false;  // the slices meet in a workspace (cuda_conv_tf32_launch)
  bool pdl = false;       // launched directly with the dependent launch (conv_pdl_enabled)
  size_t tiles = 0;
  CudaOpReplay replay{"aoti_torch_cuda_convolution / TF32 kernel replay"};  // 3xTF32 ones too
};

// The plan for |p| on TF32 kernels, or on 3xTF32 ones with |three_pass|.
using OwnConvPlanCache = CudaPlanCache<std::array<int64_t, 19>, OwnConvPlan>;

Result<std::shared_ptr<OwnConvPlan>> own_conv_plan(int device, const CudaConvProblem& p, bool three_pass) {
  // Alignment decides which kernels take a problem, so it is part of the key.
  const int64_t align = std::min({cuda_pointer_alignment(p.x), cuda_pointer_alignment(p.filter),
                                  cuda_pointer_alignment(p.y), p.bias ? cuda_pointer_alignment(p.bias) : 256});
  const std::array<int64_t, 19> key = {device,     p.n,        p.h,     p.w,     p.c,   p.k,   p.r,
                                       p.s,        p.p,        p.q,     p.pad_h, p.pad_w, p.stride_h,
                                       p.stride_w, p.dil_h,    p.dil_w, p.bias != nullptr, align, three_pass};
  AOTIRT_ASSIGN_OR_RETURN(CudaDevice * dev, cuda_device(device));
  OwnConvPlanCache& cache = dev->op_caches().get<OwnConvPlanCache>(
      [] { return std::make_unique<OwnConvPlanCache>("convolution kernel plans", kConvMaxPlans); });
  return cache.get(key, [&]() -> Result<std::shared_ptr<OwnConvPlan>> {
    auto plan = std::make_shared<OwnConvPlan>();
    const KernelTable<CudaConvConfig>& t = conv_tf32_device(device);
    const int count = static_cast<int>(t.configs.size());
    if (count > 0) {
      std::unique_ptr<bool[]> takes(new bool[count]);
      for (int i = 0; i < count; ++i)
        takes[i] = t.configs[i].three_pass == three_pass && (!t.configs[i].sm90 || conv_sm90_enabled()) &&
                   (!t.configs[i].gemm_1x1 || conv_gemm_enabled()) &&
                   cuda_conv_tf32_check(t.index[i], p, 1) == cudaSuccess;
      const CudaConvChoice choice =
          cuda_conv_tf32_choose(p, t.sm_count, t.configs.data(), t.blocks.data(), takes.get(), count,
                                conv_parallel_split_enabled() ? kCudaConvMaxPartialFloats : 0);
      if (choice.config >= 0 && cuda_conv_tf32_check(t.index[choice.config], p, choice.split) == cudaSuccess) {
        plan->index = t.index[choice.config];
        plan->split = choice.split;
        plan->parallel = choice.parallel;
        plan->tiles = static_cast<size_t>(cuda_conv_tf32_tiles(p, t.configs[choice.config]));
        const CudaConvConfig& chosen = t.configs[choice.config];
        const double gflop = 2e-9 * p.n * p.p * p.q * p.k * p.r * p.s * p.c;
        plan->pdl = conv_pdl_enabled() && chosen.sm90 && choice.split == 1 && gflop >= kPdlMinGflop;
        AOTIRT_LOG(kDebug, "convolution {}x{}x{}x{} * {}x{}x{}x{}: {} kernel {}x{}{} split {}{}{}", p.n, p.h, p.w,
                   p.c, p.k, p.r, p.s, p.c, three_pass ? "3xTF32" : "TF32", chosen.tile_m, chosen.tile_n,
                   chosen.gemm_1x1 ? " (sm_90a GEMM)" : chosen.sm90 ? " (sm_90a)" : "", choice.split,
                   choice.parallel ? " (parallel)" : "", plan->pdl ? ", dependent launch" : "");
      }
    }
    return plan;
  });
}

// |p| (its pointers not yet set) on the stem kernel, if it takes it: the
// operands made dense channels-last (views of them as they are where they
// already are), no other copy. Answers false, with nothing queued, where
// the kernel does not take it.
Result<bool> stem_convolution(const CudaOpScope& scope, CudaConvProblem p, const TensorImpl& input,
                              const TensorImpl& weight, const TensorImpl* bias, const TensorImpl& out) {
  // Decide on the shape first (with aligned stand-in pointers), so a
  // refused problem copies nothing.
  CudaConvProblem t = p;
  t.x = t.filter = reinterpret_cast<const float*>(uintptr_t{256});
  t.y = reinterpret_cast<float*>(uintptr_t{256});
  t.bias = bias ? t.x : nullptr;
  if (cuda_conv_stem_check(t) != cudaSuccess) return false;
  const int device = scope.device();
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl x, conv_dense_as(input, true, device));
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl w, conv_dense_as(weight, true, device));
  TensorImpl b;
  if (bias) {
    AOTIRT_ASSIGN_OR_RETURN(b, conv_dense_as(*bias, false, device));
  }
  p.x = static_cast<const float*>(x.data_ptr());
  p.filter = static_cast<const float*>(w.data_ptr());
  p.bias = bias ? static_cast<const float*>(b.data_ptr()) : nullptr;
  p.y = static_cast<float*>(out.data_ptr());
  // Views at an offset may be less aligned than the stand-ins.
  if (cuda_conv_stem_check(p) != cudaSuccess) return false;
  ShimProfileScope profile("aoti_torch_cuda_convolution / TF32 kernel launch (stem)");
  AOTIRT_CUDA_RETURN_IF_ERROR(cuda_conv_stem_launch(p, scope.stream()));
  return true;
}

}  // namespace

// A float32 2-d channels-last convolution (one group, not transposed) on
// aotirt's TF32 kernels when TF32 is allowed (PyTorch's default for
// convolutions), on its 3xTF32 ones when it is not, if one takes it: a CNN
// exported channels-last (ResNet-50, say) then never loads cuDNN. The bias, if any, is added in the kernel's
// epilogue (|bias_done|); a stem of 1-3 channels runs on the stem kernel or
// is padded to 4.
// Answers false, with nothing queued, otherwise.
Result<bool> own_convolution(const CudaOpScope& scope, const TensorImpl& input, const TensorImpl& weight,
                             const TensorImpl* bias, const DimVector& stride, const DimVector& padding,
                             const DimVector& dilation, int64_t groups, bool transposed, bool channels_last,
                             const TensorImpl& out, bool* bias_done) {
  if (!own_conv_enabled() || transposed || groups != 1 || !channels_last || input.dim() != 4 ||
      input.dtype() != DType::kFloat32)
    return false;
  // Strict float32 (AOTIRT_CUDA_ALLOW_TF32=0) takes the 3xTF32 kernels.
  const bool three_pass = !cuda_conv_allow_tf32();
  const int device = scope.device();
  const DimVector& xs = input.sizes();
  const DimVector& ws = weight.sizes();
  const DimVector& ys = out.sizes();
  for (const DimVector* v : {&xs, &ws, &ys})
    for (int64_t d = 0; d < 4; ++d)
      if ((*v)[d] > INT32_MAX) return false;
  CudaConvProblem p;
  p.n = static_cast<int>(xs[0]);
  p.c = static_cast<int>(xs[1]);
  p.h = static_cast<int>(xs[2]);
  p.w = static_cast<int>(xs[3]);
  p.k = static_cast<int>(ws[0]);
  p.r = static_cast<int>(ws[2]);
  p.s = static_cast<int>(ws[3]);
  p.p = static_cast<int>(ys[2]);
  p.q = static_cast<int>(ys[3]);
  for (const int64_t v : {padding[0], padding[1], stride[0], stride[1], dilation[0], dilation[1]})
    if (v > INT32_MAX) return false;
  p.pad_h = static_cast<int>(padding[0]);
  p.pad_w = static_cast<int>(padding[1]);
  p.stride_h = static_cast<int>(stride[0]);
  p.stride_w = static_cast<int>(stride[1]);
  p.dil_h = static_cast<int>(dilation[0]);
  p.dil_w = static_cast<int>(dilation[1]);
  if (!three_pass && conv_stem_enabled()) {
    AOTIRT_ASSIGN_OR_RETURN(const bool done, stem_convolution(scope, p, input, weight, bias, out));
    if (done) {
      *bias_done = bias != nullptr;
      return true;
    }
  }
  if (cuda_conv_tf32_config_count() == 0) return false;
  // Stems of 1-3 channels run on the fixed-channels kernels, input and
  // filters padded with zeros to kCudaConvStemChannels. Decide on the shapes
  // first, so a refused problem copies nothing.
  auto shape_plan_for = [&](const CudaConvProblem& shape) -> Result<std::shared_ptr<OwnConvPlan>> {
    CudaConvProblem t = shape;
    t.x = t.filter = reinterpret_cast<const float*>(uintptr_t{256});
    t.y = reinterpret_cast<float*>(uintptr_t{256});
    t.bias = bias ? t.x : nullptr;
    return own_conv_plan(device, t, three_pass);
  };
  CudaConvProblem q = p;
  const bool pad = p.c < kCudaConvStemChannels;
  if (pad) q.c = kCudaConvStemChannels;
  AOTIRT_ASSIGN_OR_RETURN(std::shared_ptr<OwnConvPlan> shape_plan, shape_plan_for(q));
  if (shape_plan->index < 0) return false;
  const bool copied = pad;  // the kernel reads copies of the input and filters
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl x, conv_dense_as(input, true, device));
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl w, conv_dense_as(weight, true, device));
  TensorImpl b, padded;
  if (bias) {
    AOTIRT_ASSIGN_OR_RETURN(b, conv_dense_as(*bias, false, device));
  }
  const int64_t x_rows = static_cast<int64_t>(p.n) * p.h * p.w, w_rows = static_cast<int64_t>(p.k) * p.r * p.s;
  // The copied input, then the copied filters 256 bytes further on, both
  // in q's shape.
  const int64_t x_floats = (static_cast<int64_t>(q.n) * q.h * q.w * q.c + 63) / 64 * 64;
  const int64_t w_floats = static_cast<int64_t>(q.k) * q.r * q.s * q.c;
  if (copied) {
    AOTIRT_ASSIGN_OR_RETURN(padded, cuda_empty_contiguous(DimVector{x_floats + w_floats}, DType::kFloat32, device));
  }
  q.x = static_cast<const float*>(copied ? padded.data_ptr() : x.data_ptr());
  q.filter =
      copied ? static_cast<const float*>(padded.data_ptr()) + x_floats : static_cast<const float*>(w.data_ptr());
  q.y = static_cast<float*>(out.data_ptr());
  q.bias = bias ? static_cast<const float*>(b.data_ptr()) : nullptr;
  // The shape plan was made for 256-byte-aligned operands; only less aligned
  // ones (views at an offset) need a plan, and a map lookup, of their own.
  std::shared_ptr<OwnConvPlan> plan = shape_plan;
  const bool aligned = std::min({cuda_pointer_alignment(q.x), cuda_pointer_alignment(q.filter),
                                 cuda_pointer_alignment(q.y), q.bias ? cuda_pointer_alignment(q.bias) : 256}) >= 256;
  if (!aligned) {
    AOTIRT_ASSIGN_OR_RETURN(plan, own_conv_plan(device, q, three_pass));
    if (plan->index < 0) return false;  // the operands' alignment rules it out
  }
  if (copied && plan->split > 1) return false;  // see the replay key below
  int* semaphores = nullptr;
  float* partials = nullptr;
  TensorImpl graph_ws;  // a parallel split's workspace while a graph is recorded
  if (plan->split > 1 && plan->parallel) {
    AOTIRT_ASSIGN_OR_RETURN(void* ws, cuda_op_workspace(device, scope.stream(),
                                                        cuda_conv_tf32_partial_floats(q, plan->split) * sizeof(float),
                                                        &graph_ws));
    partials = static_cast<float*>(ws);
  } else if (plan->split > 1) {
    AOTIRT_ASSIGN_OR_RETURN(semaphores, cuda_op_semaphores(device, scope.stream(), plan->tiles));
  }
  // Copied stems never split (at most 16 channels: one k step a tap), so
  // their two extra pointers take the slot of the semaphores or the
  // workspace, and the spare one.
  const uintptr_t split_ptr =
      partials ? reinterpret_cast<uintptr_t>(partials) : reinterpret_cast<uintptr_t>(semaphores);
  const CudaReplayKey replay_key = {reinterpret_cast<uintptr_t>(x.data_ptr()), reinterpret_cast<uintptr_t>(w.data_ptr()),
                                    reinterpret_cast<uintptr_t>(q.y), reinterpret_cast<uintptr_t>(q.bias),
                                    copied ? reinterpret_cast<uintptr_t>(q.filter) : split_ptr,
                                    reinterpret_cast<uintptr_t>(copied ? q.x : nullptr)};
  auto call = [&](cudaStream_t s) -> Status {
    ShimProfileScope profile(three_pass ? "aoti_torch_cuda_convolution / 3xTF32 kernel launch"
                                        : "aoti_torch_cuda_convolution / TF32 kernel launch");
    if (pad) {
      AOTIRT_CUDA_RETURN_IF_ERROR(
          cuda_launch_pad_channels(x.data_ptr(), x_rows, p.c, q.c, const_cast<float*>(q.x), s));
      AOTIRT_CUDA_RETURN_IF_ERROR(
          cuda_launch_pad_channels(w.data_ptr(), w_rows, p.c, q.c, const_cast<float*>(q.filter), s));
    }
    AOTIRT_CUDA_RETURN_IF_ERROR(cuda_conv_tf32_launch(plan->index, q, plan->split, semaphores, partials, s));
    return Status();
  };
  // While a graph is recorded, the point after the convolution is where the
  // next GEMM's weights may start into L2 (cuda_l2_prefetch.h).
  unsigned long long capture = 0;
  AOTIRT_CUDA_RETURN_IF_ERROR(cuda_l2_prefetch_capture(scope.stream(), &capture));
  if (plan->pdl) {
    // Not while the stream is recorded into a graph (there the kernels are
    // one graph's nodes already): a plain launch.
    q.pdl = capture == 0;
    AOTIRT_RETURN_IF_ERROR(call(scope.stream()));
  } else {
    AOTIRT_RETURN_IF_ERROR(plan->replay.run(device, replay_key, scope.stream(), call));
  }
  AOTIRT_CUDA_RETURN_IF_ERROR(cuda_l2_prefetch_mark(scope.stream(), capture));
  *bias_done = bias != nullptr;
  return true;
}

}  // namespace aotirt
