// aoti_torch_cuda_convolution through cuDNN's convolution API: 1-d (run as
// 2-d with a unit height), 2-d and 3-d, grouped, strided, padded, dilated and
// transposed (as cuDNN's backward-data pass); float32 patch embeddings
// (stride equal to the kernel) as a copy and a GEMM on aotirt's own kernels;
// float32 channels-last 2-d convolutions on aotirt's TF32 or 3xTF32 kernels
// (cuda_conv_tf32.h).
//
// The output is laid out as PyTorch's CUDA convolution lays it out, because
// the generated code assumes those strides: channels-last when the input or
// the weight is channels-last (2-d and 3-d, not float64), contiguous
// otherwise. float32 may use TF32, as PyTorch's cuDNN default allows
// (AOTIRT_CUDA_ALLOW_TF32=0 keeps CUDNN_FMA_MATH only); float16 and bfloat16
// accumulate in float32.
#include <array>
#include <atomic>
#include <cstdlib>
#include <map>
#include <mutex>
#include <vector>

#include "ops/conv_args.h"
#include "ops/layout.h"
#include "ops/op_args.h"
#include "backends/cuda/runtime/cuda_options.h"
#include "backends/cuda/runtime/cuda_status.h"
#include "backends/cuda/runtime/cuda_symbols.h"
#include "backends/cuda/ops/conv/cuda_conv_stem.h"
#include "backends/cuda/ops/conv/cuda_conv_tf32.h"
#include "backends/cuda/launch/cuda_kernel_table.h"
#include "backends/cuda/launch/cuda_l2_prefetch.h"
#include "backends/cuda/launch/cuda_op_replay.h"
#include "backends/cuda/ops/cuda_op_util.h"
#include "base/log.h"
#include "base/status.h"
#include "device/device.h"
#include "shim/common/shim_profile.h"
#include "shim/common/shim_util.h"

namespace aotirt {
namespace {

using ops::shape_str;

Result<cudnnDataType_t> cudnn_type(DType dtype) {
  switch (dtype) {
    case DType::kFloat32: return CUDNN_DATA_FLOAT;
    case DType::kFloat16: return CUDNN_DATA_HALF;
    case DType::kBFloat16: return CUDNN_DATA_BFLOAT16;
    case DType::kFloat64: return CUDNN_DATA_DOUBLE;
    default:
      return AOTIRT_STATUS(kUnimplemented,
                           "convolution on CUDA supports float32, float16, bfloat16 and float64, not {}",
                           dtype_name(dtype));
  }
}

// A cuDNN handle per thread and device: handles must not be shared by
// threads running at the same time.
Result<cudnnHandle_t> cudnn_handle(const CudnnApi& api, int device, cudaStream_t stream) {
  thread_local std::array<cudnnHandle_t, kCudaMaxDevices> handles{};
  if (!handles[device]) {
    cudnnHandle_t h = nullptr;
    AOTIRT_CUDNN_RETURN_IF_ERROR(api.cudnnCreate(&h));
    handles[device] = h;  // kept for the thread's life: destroying at exit races the runtime's teardown
  }
  AOTIRT_CUDNN_RETURN_IF_ERROR(api.cudnnSetStream(handles[device], stream));
  return handles[device];
}

std::vector<int> to_int(const DimVector& v) {
  std::vector<int> r(v.size());
  for (int64_t i = 0; i < v.size(); ++i) r[i] = static_cast<int>(v[i]);
  return r;
}

Status set_tensor(const CudnnApi& api, cudnnTensorDescriptor_t* d, cudnnDataType_t type, const TensorImpl& t) {
  AOTIRT_CUDNN_RETURN_IF_ERROR(api.cudnnCreateTensorDescriptor(d));
  std::vector<int> dims = to_int(t.sizes()), strides = to_int(t.strides());
  AOTIRT_CUDNN_RETURN_IF_ERROR(
      api.cudnnSetTensorNdDescriptor(*d, type, static_cast<int>(dims.size()), dims.data(), strides.data()));
  return Status();
}

struct ChosenAlgo {
  int algo;
  cudnnMathType_t math;
  size_t workspace;
};

// A problem's descriptors and algorithms, made once: the descriptors and the
// heuristic query cost more per call than a small convolution. For the
// transposed case cuDNN sees the forward convolution that maps the output
// (its "dx") to the input (its "dy").
struct ConvPlan {
  const CudnnApi& api;
  cudnnTensorDescriptor_t x = nullptr, y = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  std::vector<ChosenAlgo> candidates;  // the heuristic's order
  std::atomic<size_t> chosen{0};       // first candidate that ran
  explicit ConvPlan(const CudnnApi& a) : api(a) {}
  ~ConvPlan() {
    if (conv) api.cudnnDestroyConvolutionDescriptor(conv);
    if (w) api.cudnnDestroyFilterDescriptor(w);
    if (y) api.cudnnDestroyTensorDescriptor(y);
    if (x) api.cudnnDestroyTensorDescriptor(x);
  }
};

// Plans kept per device and cache; the least recently used go first.
constexpr size_t kMaxPlans = 4096;
using ConvPlanCache = CudaPlanCache<std::vector<int64_t>, ConvPlan>;

Status make_conv_plan(const CudnnApi& api, cudnnHandle_t handle, cudnnDataType_t dtype, bool tf32, bool transposed,
                      bool channels_last, int64_t groups, const TensorImpl& x, const TensorImpl& w,
                      const TensorImpl& y, const DimVector& padding, const DimVector& stride,
                      const DimVector& dilation, ConvPlan* plan) {
  AOTIRT_RETURN_IF_ERROR(set_tensor(api, &plan->x, dtype, transposed ? y : x));
  AOTIRT_RETURN_IF_ERROR(set_tensor(api, &plan->y, dtype, transposed ? x : y));
  AOTIRT_CUDNN_RETURN_IF_ERROR(api.cudnnCreateFilterDescriptor(&plan->w));
  std::vector<int> wdims = to_int(w.sizes());
  AOTIRT_CUDNN_RETURN_IF_ERROR(api.cudnnSetFilterNdDescriptor(plan->w, dtype,
                                                              channels_last ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW,
                                                              static_cast<int>(wdims.size()), wdims.data()));
  AOTIRT_CUDNN_RETURN_IF_ERROR(api.cudnnCreateConvolutionDescriptor(&plan->conv));
  std::vector<int> pad = to_int(padding), str = to_int(stride), dil = to_int(dilation);
  const cudnnDataType_t compute = dtype == CUDNN_DATA_DOUBLE ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
  AOTIRT_CUDNN_RETURN_IF_ERROR(api.cudnnSetConvolutionNdDescriptor(plan->conv, static_cast<int>(pad.size()),
                                                                   pad.data(), str.data(), dil.data(),
                                                                   CUDNN_CROSS_CORRELATION, compute));
  AOTIRT_CUDNN_RETURN_IF_ERROR(api.cudnnSetConvolutionGroupCount(plan->conv, static_cast<int>(groups)));
  cudnnMathType_t math = CUDNN_DEFAULT_MATH;
  if (dtype == CUDNN_DATA_FLOAT) math = tf32 ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH;
  if (dtype == CUDNN_DATA_HALF || dtype == CUDNN_DATA_BFLOAT16) math = CUDNN_TENSOR_OP_MATH;
  AOTIRT_CUDNN_RETURN_IF_ERROR(api.cudnnSetConvolutionMathType(plan->conv, math));

  int max_count = 0, returned = 0;
  if (!transposed) {
    AOTIRT_CUDNN_RETURN_IF_ERROR(api.cudnnGetConvolutionForwardAlgorithmMaxCount(handle, &max_count));
    std::vector<cudnnConvolutionFwdAlgoPerf_t> perf(std::max(max_count, 1));
    AOTIRT_CUDNN_RETURN_IF_ERROR(api.cudnnGetConvolutionForwardAlgorithm_v7(
        handle, plan->x, plan->w, plan->conv, plan->y, static_cast<int>(perf.size()), &returned, perf.data()));
    for (int i = 0; i < returned; ++i) {
      if (perf[i].status != CUDNN_STATUS_SUCCESS) continue;
      // No TF32 unless allowed: keep only algorithms of the requested math.
      if (dtype == CUDNN_DATA_FLOAT && !tf32 && perf[i].mathType != CUDNN_FMA_MATH) continue;
      size_t ws = 0;
      api.cudnnSetConvolutionMathType(plan->conv, perf[i].mathType);
      if (api.cudnnGetConvolutionForwardWorkspaceSize(handle, plan->x, plan->w, plan->conv, plan->y, perf[i].algo,
                                                      &ws) != CUDNN_STATUS_SUCCESS)
        continue;
      plan->candidates.push_back(ChosenAlgo{static_cast<int>(perf[i].algo), perf[i].mathType, ws});
    }
  } else {
    AOTIRT_CUDNN_RETURN_IF_ERROR(api.cudnnGetConvolutionBackwardDataAlgorithmMaxCount(handle, &max_count));
    std::vector<cudnnConvolutionBwdDataAlgoPerf_t> perf(std::max(max_count, 1));
    AOTIRT_CUDNN_RETURN_IF_ERROR(api.cudnnGetConvolutionBackwardDataAlgorithm_v7(
        handle, plan->w, plan->y, plan->conv, plan->x, static_cast<int>(perf.size()), &returned, perf.data()));
    for (int i = 0; i < returned; ++i) {
      if (perf[i].status != CUDNN_STATUS_SUCCESS) continue;
      if (dtype == CUDNN_DATA_FLOAT && !tf32 && perf[i].mathType != CUDNN_FMA_MATH) continue;
      size_t ws = 0;
      api.cudnnSetConvolutionMathType(plan->conv, perf[i].mathType);
      if (api.cudnnGetConvolutionBackwardDataWorkspaceSize(handle, plan->w, plan->y, plan->conv, plan->x,
                                                           perf[i].algo, &ws) != CUDNN_STATUS_SUCCESS)
        continue;
      plan->candidates.push_back(ChosenAlgo{static_cast<int>(perf[i].algo), perf[i].mathType, ws});
    }
  }
  return Status();
}

// AOTIRT_CUDA_DISABLE=patch_conv, or AOTIRT_CUDA_CONV=cudnn, keeps patch
// embeddings on cuDNN too.
bool patch_conv_enabled() {
  return cuda_options().enabled(CudaFeature::kPatchConv) && cuda_options().conv != CudaLibraryChoice::kVendor;
}

// ---- cuDNN's graph (backend) API, for forward convolutions ----
//
// cuDNN 9 implements the legacy cudnnConvolutionForward on top of its graph
// API and builds an execution plan on every call: on ResNet-50 that cost
// about 60 us of host time per convolution. Here the plan is built once per
// problem and each call only fills a variant pack and executes it.

// Owns one backend descriptor.
struct BackendDesc {
  const CudnnApi* api = nullptr;
  cudnnBackendDescriptor_t d = nullptr;
  BackendDesc() = default;
  BackendDesc(const BackendDesc&) = delete;
  BackendDesc& operator=(const BackendDesc&) = delete;
  BackendDesc(BackendDesc&& o) noexcept : api(o.api), d(o.d) { o.d = nullptr; }
  BackendDesc& operator=(BackendDesc&& o) noexcept {
    std::swap(api, o.api);
    std::swap(d, o.d);
    return *this;
  }
  ~BackendDesc() {
    if (d) api->cudnnBackendDestroyDescriptor(d);
  }
};

Result<BackendDesc> backend_create(const CudnnApi& api, cudnnBackendDescriptorType_t type) {
  BackendDesc b;
  b.api = &api;
  AOTIRT_CUDNN_RETURN_IF_ERROR(api.cudnnBackendCreateDescriptor(type, &b.d));
  return b;
}

#define AOTIRT_BACKEND_SET(desc, name, type, count, ptr) \
  AOTIRT_CUDNN_RETURN_IF_ERROR(api.cudnnBackendSetAttribute((desc).d, name, type, count, ptr))

Result<BackendDesc> backend_tensor(const CudnnApi& api, cudnnDataType_t dtype, const TensorImpl& t, int64_t uid,
                                   int64_t alignment) {
  AOTIRT_ASSIGN_OR_RETURN(BackendDesc b, backend_create(api, CUDNN_BACKEND_TENSOR_DESCRIPTOR));
  const std::vector<int64_t> dims = t.sizes().to_vector(), strides = t.strides().to_vector();
  AOTIRT_BACKEND_SET(b, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &dtype);
  AOTIRT_BACKEND_SET(b, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, static_cast<int64_t>(dims.size()),
                     dims.data());
  AOTIRT_BACKEND_SET(b, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, static_cast<int64_t>(strides.size()),
                     strides.data());
  AOTIRT_BACKEND_SET(b, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid);
  AOTIRT_BACKEND_SET(b, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &alignment);
  AOTIRT_CUDNN_RETURN_IF_ERROR(api.cudnnBackendFinalize(b.d));
  return b;
}

struct BackendConvPlan {
  BackendDesc plan;
  int64_t workspace = 0;
  CudaOpReplay replay{"aoti_torch_cuda_convolution / replay"};
};

constexpr int64_t kUidX = 1, kUidW = 2, kUidY = 3;

// Builds the execution plan of the first engine configuration the instant
// heuristic offers that finalizes (and obeys the TF32 policy for float32).
Status make_backend_plan(const CudnnApi& api, cudnnHandle_t handle, cudnnDataType_t dtype, bool tf32,
                         const TensorImpl& x, const TensorImpl& w, const TensorImpl& y, const DimVector& padding,
                         const DimVector& stride, const DimVector& dilation, int64_t alignment,
                         BackendConvPlan* out) {
  AOTIRT_ASSIGN_OR_RETURN(BackendDesc xd, backend_tensor(api, dtype, x, kUidX, alignment));
  AOTIRT_ASSIGN_OR_RETURN(BackendDesc wd, backend_tensor(api, dtype, w, kUidW, alignment));
  AOTIRT_ASSIGN_OR_RETURN(BackendDesc yd, backend_tensor(api, dtype, y, kUidY, alignment));

  AOTIRT_ASSIGN_OR_RETURN(BackendDesc conv, backend_create(api, CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR));
  const int64_t spatial = static_cast<int64_t>(padding.size());
  const cudnnDataType_t compute = dtype == CUDNN_DATA_DOUBLE ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
  const cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
  std::vector<int64_t> pad = padding.to_vector(), str = stride.to_vector(), dil = dilation.to_vector();
  AOTIRT_BACKEND_SET(conv, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1, &spatial);
  AOTIRT_BACKEND_SET(conv, CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &compute);
  AOTIRT_BACKEND_SET(conv, CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode);
  AOTIRT_BACKEND_SET(conv, CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, spatial, dil.data());
  AOTIRT_BACKEND_SET(conv, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, spatial, str.data());
  AOTIRT_BACKEND_SET(conv, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, spatial, pad.data());
  AOTIRT_BACKEND_SET(conv, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, spatial, pad.data());
  AOTIRT_CUDNN_RETURN_IF_ERROR(api.cudnnBackendFinalize(conv.d));

  AOTIRT_ASSIGN_OR_RETURN(BackendDesc op, backend_create(api, CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR));
  AOTIRT_BACKEND_SET(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &xd.d);
  AOTIRT_BACKEND_SET(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &wd.d);
  AOTIRT_BACKEND_SET(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &yd.d);
  AOTIRT_BACKEND_SET(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                     &conv.d);
  if (dtype == CUDNN_DATA_DOUBLE) {
    const double one = 1.0, zero = 0.0;
    AOTIRT_BACKEND_SET(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, CUDNN_TYPE_DOUBLE, 1, &one);
    AOTIRT_BACKEND_SET(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, CUDNN_TYPE_DOUBLE, 1, &zero);
  } else {
    const float one = 1.f, zero = 0.f;
    AOTIRT_BACKEND_SET(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, CUDNN_TYPE_FLOAT, 1, &one);
    AOTIRT_BACKEND_SET(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, CUDNN_TYPE_FLOAT, 1, &zero);
  }
  AOTIRT_CUDNN_RETURN_IF_ERROR(api.cudnnBackendFinalize(op.d));

  AOTIRT_ASSIGN_OR_RETURN(BackendDesc graph, backend_create(api, CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR));
  AOTIRT_BACKEND_SET(graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &op.d);
  // The handle attribute is marked deprecated in cuDNN 9 but still tells the
  // heuristics which GPU to plan for.
  AOTIRT_BACKEND_SET(graph, static_cast<cudnnBackendAttributeName_t>(800), CUDNN_TYPE_HANDLE, 1, &handle);
  AOTIRT_CUDNN_RETURN_IF_ERROR(api.cudnnBackendFinalize(graph.d));

  AOTIRT_ASSIGN_OR_RETURN(BackendDesc heur, backend_create(api, CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR));
  const cudnnBackendHeurMode_t heur_mode = CUDNN_HEUR_MODE_INSTANT;
  AOTIRT_BACKEND_SET(heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &graph.d);
  AOTIRT_BACKEND_SET(heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &heur_mode);
  AOTIRT_CUDNN_RETURN_IF_ERROR(api.cudnnBackendFinalize(heur.d));
  int64_t count = 0;
  AOTIRT_CUDNN_RETURN_IF_ERROR(api.cudnnBackendGetAttribute(heur.d, CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                                            CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count, nullptr));
  count = std::min<int64_t>(count, 32);
  std::vector<BackendDesc> cfgs;
  std::vector<cudnnBackendDescriptor_t> raw;
  for (int64_t i = 0; i < count; ++i) {
    AOTIRT_ASSIGN_OR_RETURN(BackendDesc c, backend_create(api, CUDNN_BACKEND_ENGINECFG_DESCRIPTOR));
    raw.push_back(c.d);
    cfgs.push_back(std::move(c));
  }
  int64_t returned = 0;
  if (count > 0)
    AOTIRT_CUDNN_RETURN_IF_ERROR(api.cudnnBackendGetAttribute(heur.d, CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                                              CUDNN_TYPE_BACKEND_DESCRIPTOR, count, &returned,
                                                              raw.data()));
  for (int64_t i = 0; i < returned; ++i) {
    if (dtype == CUDNN_DATA_FLOAT && !tf32) {
      // float32 without TF32: skip engines that use tensor cores.
      Result<BackendDesc> engine = backend_create(api, CUDNN_BACKEND_ENGINE_DESCRIPTOR);
      if (!engine.ok()) continue;
      int64_t n = 0;
      if (api.cudnnBackendGetAttribute(raw[i], CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &n,
                                       &engine->d) != CUDNN_STATUS_SUCCESS)
        continue;
      cudnnBackendNumericalNote_t notes[CUDNN_NUMERICAL_NOTE_TYPE_COUNT];
      int64_t nn = 0;
      if (api.cudnnBackendGetAttribute(engine->d, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, CUDNN_TYPE_NUMERICAL_NOTE,
                                       CUDNN_NUMERICAL_NOTE_TYPE_COUNT, &nn, notes) != CUDNN_STATUS_SUCCESS)
        continue;
      bool tensor_core = false;
      for (int64_t k = 0; k < nn; ++k) tensor_core = tensor_core || notes[k] == CUDNN_NUMERICAL_NOTE_TENSOR_CORE;
      if (tensor_core) continue;
    }
    Result<BackendDesc> plan = backend_create(api, CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
    if (!plan.ok()) continue;
    if (api.cudnnBackendSetAttribute(plan->d, static_cast<cudnnBackendAttributeName_t>(400), CUDNN_TYPE_HANDLE, 1,
                                     &handle) != CUDNN_STATUS_SUCCESS ||
        api.cudnnBackendSetAttribute(plan->d, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                                     1, &raw[i]) != CUDNN_STATUS_SUCCESS ||
        api.cudnnBackendFinalize(plan->d) != CUDNN_STATUS_SUCCESS)
      continue;
    int64_t ws = 0, n = 0;
    if (api.cudnnBackendGetAttribute(plan->d, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1, &n,
                                     &ws) != CUDNN_STATUS_SUCCESS)
      continue;
    out->plan = std::move(plan).value();
    out->workspace = ws;
    return Status();
  }
  return AOTIRT_STATUS(kUnimplemented, "cuDNN's graph API has no engine for this convolution");
}

Status run_backend_plan(const CudnnApi& api, cudnnHandle_t handle, const BackendDesc& plan, void* x, void* w,
                        void* y, void* workspace) {
  BackendDesc pack;
  {
    ShimProfileScope profile("aoti_torch_cuda_convolution / cuDNN variant pack");
    AOTIRT_ASSIGN_OR_RETURN(pack, backend_create(api, CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR));
    const int64_t uids[3] = {kUidX, kUidW, kUidY};
    void* ptrs[3] = {x, w, y};
    AOTIRT_BACKEND_SET(pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, 3, uids);
    AOTIRT_BACKEND_SET(pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, 3, ptrs);
    AOTIRT_BACKEND_SET(pack, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &workspace);
    AOTIRT_CUDNN_RETURN_IF_ERROR(api.cudnnBackendFinalize(pack.d));
  }
  ShimProfileScope profile("aoti_torch_cuda_convolution / cudnnBackendExecute");
  AOTIRT_CUDNN_RETURN_IF_ERROR(api.cudnnBackendExecute(handle, plan.d, pack.d));
  return Status();
}

#undef AOTIRT_BACKEND_SET

// Backend plans per problem and handle; a null entry means "use the legacy
// API" (no engine, or the plan failed once).
using BackendPlanCache = CudaPlanCache<std::vector<int64_t>, BackendConvPlan>;

// AOTIRT_CUDA_DISABLE=cudnn_graph keeps every convolution on the legacy API.
bool cudnn_backend_enabled() { return cuda_options().enabled(CudaFeature::kCudnnGraph); }



// A dense copy of |t| in the given memory format, or |t| itself if it is one.
Result<TensorImpl> dense_as(const TensorImpl& t, bool channels_last, int device) {
  DimVector want = channels_last ? ops::channels_last_strides(t.sizes()) : contiguous_strides(t.sizes());
  bool same = true;
  for (int64_t d = 0; d < t.dim(); ++d)
    if (t.sizes()[d] != 1 && t.strides()[d] != want[d]) same = false;
  if (same) {
    // Size-1 dims may carry any stride; give cuDNN the canonical ones.
    return TensorImpl(t.storage(), t.dtype(), t.sizes(), want, t.storage_offset());
  }
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl out, cuda_empty(t.sizes(), want, t.dtype(), device));
  AOTIRT_RETURN_IF_ERROR(copy_tensor(out, t, false));
  return out;
}

// A convolution whose kernel tiles its input (stride equal to the kernel, no
// padding or dilation, one group: a vision transformer's patch embedding)
// is one GEMM per image over its patches: out[b] [c_out, patches] =
// W [c_out, c * kh * kw] @ patches[b]^T. In float32 it runs on aotirt's own
// GEMM kernels when they take it, which keeps such a model off cuDNN and the
// ~200 MiB of host memory cuDNN's libraries hold once loaded (ViT-B/16's
// 16x16 patches: a copy and a 3xTF32 GEMM, where cuDNN ran a float32 SIMT
// kernel of 41 us). Answers false, with nothing queued, otherwise.
Result<bool> patch_convolution(const CudaOpScope& scope, const TensorImpl& input, const TensorImpl& weight,
                               const DimVector& stride, const DimVector& padding, const DimVector& dilation,
                               int64_t groups, bool transposed, bool channels_last, const TensorImpl& out) {
  if (!patch_conv_enabled() || transposed || groups != 1 || channels_last || input.dim() != 4 ||
      input.dtype() != DType::kFloat32)
    return false;
  for (int64_t i = 0; i < 2; ++i)
    if (padding[i] != 0 || dilation[i] != 1 || stride[i] != weight.sizes()[2 + i]) return false;
  // A CNN's 1x1 convolutions stay on cuDNN: its TF32 kernels (PyTorch's
  // default for convolutions) do a third of the tensor-core work of 3xTF32,
  // and such a model loads cuDNN for its other convolutions anyway.
  if (weight.sizes()[2] * weight.sizes()[3] == 1) return false;
  const int device = scope.device();
  const int64_t n = input.sizes()[0], c = input.sizes()[1], kh = weight.sizes()[2], kw = weight.sizes()[3];
  const int64_t c_out = out.sizes()[1], oh = out.sizes()[2], ow = out.sizes()[3];
  const int64_t patches = oh * ow, k = c * kh * kw;
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl w, dense_as(weight, false, device));
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl rows, cuda_empty_contiguous(DimVector{n * patches, k}, DType::kFloat32, device));
  // In the column-major terms of CudaGemm: out[b]^T [patches, c_out] =
  // patches[b] [patches, k] @ W^T [k, c_out].
  CudaGemm g;
  g.dtype = DType::kFloat32;
  g.batch = n;
  g.m = patches;
  g.n = c_out;
  g.k = k;
  g.a = rows.data_ptr();
  g.ta = true;
  g.lda = k;
  g.stride_a = n > 1 ? patches * k : 0;
  g.b = w.data_ptr();
  g.ldb = k;
  g.d = out.data_ptr();
  g.ldd = patches;
  g.stride_d = n > 1 ? c_out * patches : 0;
  AOTIRT_ASSIGN_OR_RETURN(bool takes, cuda_gemm_own(device, scope.stream(), g, /*dry_run=*/true));
  if (!takes) return false;
  {
    ShimProfileScope profile("aoti_torch_cuda_convolution / patches kernel launch");
    const int64_t xs[4] = {input.strides()[0], input.strides()[1], input.strides()[2], input.strides()[3]};
    AOTIRT_CUDA_RETURN_IF_ERROR(
        cuda_launch_patches(input.data_ptr(), xs, n, c, oh, ow, kh, kw, rows.data_ptr(), scope.stream()));
  }
  AOTIRT_ASSIGN_OR_RETURN(bool ran, cuda_gemm_own(device, scope.stream(), g, /*dry_run=*/false));
  AOTIRT_ENSURE(ran, kInternal, "the patch convolution's GEMM was refused after it was accepted");
  return true;
}

// ---- float32 on aotirt's TF32 kernels (cuda_conv_tf32.h) ----

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
      [] { return std::make_unique<OwnConvPlanCache>("convolution kernel plans", kMaxPlans); });
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
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl x, dense_as(input, true, device));
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl w, dense_as(weight, true, device));
  TensorImpl b;
  if (bias) {
    AOTIRT_ASSIGN_OR_RETURN(b, dense_as(*bias, false, device));
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
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl x, dense_as(input, true, device));
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl w, dense_as(weight, true, device));
  TensorImpl b, padded;
  if (bias) {
    AOTIRT_ASSIGN_OR_RETURN(b, dense_as(*bias, false, device));
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

Status run_convolution(AtenTensorHandle input_h, AtenTensorHandle weight_h, AtenTensorHandle* bias_h,
                       const int64_t* stride_p, int64_t stride_len, const int64_t* padding_p, int64_t padding_len,
                       const int64_t* dilation_p, int64_t dilation_len, bool transposed,
                       const int64_t* output_padding_p, int64_t output_padding_len, int64_t groups,
                       AtenTensorHandle* ret0) {
  AOTIRT_REQUIRE_OUT(ret0);
  AOTIRT_ASSIGN_OR_RETURN(ops::ConvArgs args,
                          ops::conv_args(input_h, weight_h, bias_h, stride_p, stride_len, padding_p, padding_len,
                                         dilation_p, dilation_len, transposed, output_padding_p, output_padding_len,
                                         groups));
  const TensorImpl* input = args.input;
  const TensorImpl* weight = args.weight;
  const TensorImpl* bias = args.bias;
  AOTIRT_ASSIGN_OR_RETURN(std::unique_ptr<CudaOpScope> scope, CudaOpScope::enter(*input, "input"));
  const int device = scope->device();
  AOTIRT_RETURN_IF_ERROR(scope->check_same_device(*weight, "weight"));
  if (bias) AOTIRT_RETURN_IF_ERROR(scope->check_same_device(*bias, "bias"));
  AOTIRT_ASSIGN_OR_RETURN(cudnnDataType_t dtype, cudnn_type(input->dtype()));
  const int64_t nd = input->dim();
  DimVector stride = args.stride, padding = args.padding, dilation = args.dilation;
  const DimVector& out_sizes = args.out_sizes;

  // PyTorch's layout choice for cuDNN convolutions.
  const bool channels_last = nd >= 4 && input->dtype() != DType::kFloat64 &&
                             (ops::is_channels_last(input->sizes(), input->strides()) ||
                              ops::is_channels_last(weight->sizes(), weight->strides()));
  DimVector out_strides = channels_last ? ops::channels_last_strides(out_sizes) : contiguous_strides(out_sizes);
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl out, cuda_empty(out_sizes, out_strides, input->dtype(), device));
  if (out.numel() == 0) {
    *ret0 = new_handle(std::move(out));
    return Status();
  }
  bool bias_done = false;
  if (input->numel() == 0 || weight->numel() == 0) {
    AOTIRT_ASSIGN_OR_RETURN(Device * dev, get_device(out.device()));
    AOTIRT_RETURN_IF_ERROR(dev->zero(out));
  } else {
    AOTIRT_ASSIGN_OR_RETURN(bool patched, patch_convolution(*scope, *input, *weight, stride, padding, dilation, groups,
                                                            transposed, channels_last, out));
    bool done = patched;
    if (!done) {
      AOTIRT_ASSIGN_OR_RETURN(done, own_convolution(*scope, *input, *weight, bias, stride, padding, dilation, groups,
                                                    transposed, channels_last, out, &bias_done));
    }
    if (done) goto convolved;
    {
    // cuDNN gets dense operands in the chosen format; 1-d runs as 2-d.
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl x, dense_as(*input, channels_last, device));
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl w, dense_as(*weight, channels_last, device));
    TensorImpl y = out;
    auto lift_1d = [](TensorImpl& t) {
      DimVector s{t.sizes()[0], t.sizes()[1], 1, t.sizes()[2]};
      t = TensorImpl(t.storage(), t.dtype(), s, contiguous_strides(s), t.storage_offset());
    };
    if (nd == 3) {
      lift_1d(x);
      lift_1d(w);
      lift_1d(y);
      stride = DimVector{1, stride[0]};
      padding = DimVector{0, padding[0]};
      dilation = DimVector{1, dilation[0]};
    }
    AOTIRT_ASSIGN_OR_RETURN(const CudnnApi* api, cudnn_api());
    AOTIRT_ASSIGN_OR_RETURN(cudnnHandle_t handle, cudnn_handle(*api, device, scope->stream()));
    AOTIRT_ASSIGN_OR_RETURN(CudaDevice * dev, cuda_device(device));
    const bool tf32 = cuda_conv_allow_tf32();
    std::vector<int64_t> key = {transposed, static_cast<int64_t>(dtype), groups, channels_last, device, tf32};
    for (const TensorImpl* t : {&x, &w, &y})
      for (int64_t d = 0; d < t->dim(); ++d) key.push_back(t->sizes()[d]);
    for (const DimVector* v : {&padding, &stride, &dilation})
      for (int64_t i = 0; i < v->size(); ++i) key.push_back((*v)[i]);

    if (!transposed && cudnn_backend_enabled()) {
      const int64_t alignment = std::min({cuda_pointer_alignment(x.data_ptr()), cuda_pointer_alignment(w.data_ptr()),
                                          cuda_pointer_alignment(y.data_ptr())});
      std::vector<int64_t> bkey = key;
      bkey.push_back(alignment);
      bkey.push_back(static_cast<int64_t>(reinterpret_cast<uintptr_t>(handle)));
      BackendPlanCache& backend_plans = dev->op_caches().get<BackendPlanCache>(
          [] { return std::make_unique<BackendPlanCache>("cuDNN graph plans", kMaxPlans); });
      AOTIRT_ASSIGN_OR_RETURN(
          std::shared_ptr<BackendConvPlan> bplan,
          backend_plans.get(bkey, [&]() -> Result<std::shared_ptr<BackendConvPlan>> {
            auto made = std::make_shared<BackendConvPlan>();
            Status st = make_backend_plan(*api, handle, dtype, tf32, x, w, y, padding, stride, dilation, alignment,
                                          made.get());
            if (!st.ok()) {
              AOTIRT_LOG(kDebug, "cuDNN graph API unavailable for this convolution, using the legacy API: {}",
                         st.to_string());
              made.reset();
            }
            return made;
          }));
      if (bplan) {
        TensorImpl graph_ws;
        AOTIRT_ASSIGN_OR_RETURN(void* ws, cuda_op_workspace(device, scope->stream(),
                                                         static_cast<size_t>(bplan->workspace), &graph_ws));
        const CudaReplayKey replay_key = {reinterpret_cast<uintptr_t>(x.data_ptr()),
                                          reinterpret_cast<uintptr_t>(w.data_ptr()),
                                          reinterpret_cast<uintptr_t>(y.data_ptr()), reinterpret_cast<uintptr_t>(ws),
                                          0, 0};
        const cudaStream_t stream = scope->stream();
        Status st = bplan->replay.run(device, replay_key, stream, [&](cudaStream_t s) -> Status {
          if (s != stream) AOTIRT_CUDNN_RETURN_IF_ERROR(api->cudnnSetStream(handle, s));
          Status r = run_backend_plan(*api, handle, bplan->plan, x.data_ptr(), w.data_ptr(), y.data_ptr(), ws);
          if (s != stream) AOTIRT_CUDNN_RETURN_IF_ERROR(api->cudnnSetStream(handle, stream));
          return r;
        });
        if (st.ok()) goto convolved;
        AOTIRT_LOG(kDebug, "cuDNN graph API execution failed, using the legacy API: {}", st.to_string());
      }
    }
    {
    ConvPlanCache& plans = dev->op_caches().get<ConvPlanCache>(
        [] { return std::make_unique<ConvPlanCache>("cuDNN plans (legacy API)", kMaxPlans); });
    AOTIRT_ASSIGN_OR_RETURN(std::shared_ptr<ConvPlan> plan,
                            plans.get(key, [&]() -> Result<std::shared_ptr<ConvPlan>> {
                              auto made = std::make_shared<ConvPlan>(*api);
                              AOTIRT_RETURN_IF_ERROR(make_conv_plan(*api, handle, dtype, tf32, transposed,
                                                                    channels_last, groups, x, w, y, padding, stride,
                                                                    dilation, made.get()));
                              if (made->candidates.empty())
                                return AOTIRT_STATUS(kUnimplemented,
                                                     "cuDNN has no {}convolution algorithm for input {} weight {} "
                                                     "({})",
                                                     transposed ? "transposed " : "", shape_str(*input),
                                                     shape_str(*weight), dtype_name(input->dtype()));
                              return made;
                            }));

    // Run the first candidate that gets its workspace and succeeds; remember it.
    Status last;
    bool ran = false;
    const size_t first = plan->chosen.load();
    for (size_t i = first; i < plan->candidates.size(); ++i) {
      const ChosenAlgo& c = plan->candidates[i];
      TensorImpl graph_ws;
      Result<void*> ws = cuda_op_workspace(device, scope->stream(), c.workspace, &graph_ws);
      if (!ws.ok()) {
        last = ws.take_status();
        continue;
      }
      AOTIRT_CUDNN_RETURN_IF_ERROR(api->cudnnSetConvolutionMathType(plan->conv, c.math));
      float one_f = 1.f, zero_f = 0.f;
      double one_d = 1.0, zero_d = 0.0;
      const void* one = dtype == CUDNN_DATA_DOUBLE ? static_cast<const void*>(&one_d) : &one_f;
      const void* zero = dtype == CUDNN_DATA_DOUBLE ? static_cast<const void*>(&zero_d) : &zero_f;
      cudnnStatus_t st;
      if (!transposed)
        st = api->cudnnConvolutionForward(handle, one, plan->x, x.data_ptr(), plan->w, w.data_ptr(), plan->conv,
                                          static_cast<cudnnConvolutionFwdAlgo_t>(c.algo), ws.value(), c.workspace,
                                          zero, plan->y, y.data_ptr());
      else
        st = api->cudnnConvolutionBackwardData(handle, one, plan->w, w.data_ptr(), plan->y, x.data_ptr(),
                                               plan->conv, static_cast<cudnnConvolutionBwdDataAlgo_t>(c.algo),
                                               ws.value(), c.workspace, zero, plan->x, y.data_ptr());
      if (st == CUDNN_STATUS_SUCCESS) {
        ran = true;
        if (i != first) plan->chosen.store(i);
        break;
      }
      last = cudnn_status(st, transposed ? "cudnnConvolutionBackwardData" : "cudnnConvolutionForward", __FILE__,
                          __LINE__);
    }
    if (!ran) return last.ok() ? AOTIRT_STATUS(kInternal, "no cuDNN algorithm ran") : last;
    }
    }
  convolved:;
  }

  if (bias && !bias_done) {
    // The bias may be strided; the kernel wants it dense.
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl b, dense_as(*bias, false, device));
    int64_t inner = 1;
    for (int64_t d = 2; d < nd; ++d) inner *= out_sizes[d];
    AOTIRT_CUDA_RETURN_IF_ERROR(cuda_launch_add_channel_bias(out.data_ptr(), b.data_ptr(),
                                                             static_cast<int>(out.dtype()), args.batch,
                                                             args.out_channels, inner, channels_last,
                                                             scope->stream()));
  }
  *ret0 = new_handle(std::move(out));
  return Status();
}

}  // namespace

}  // namespace aotirt

using namespace aotirt;

extern "C" {

AOTITorchError aoti_torch_cuda_convolution(AtenTensorHandle input, AtenTensorHandle weight, AtenTensorHandle* bias,
                                           const int64_t* stride, int64_t stride_len_, const int64_t* padding,
                                           int64_t padding_len_, const int64_t* dilation, int64_t dilation_len_,
                                           int32_t transposed, const int64_t* output_padding,
                                           int64_t output_padding_len_, int64_t groups,
                                           AtenTensorHandle* ret0) noexcept {
  return shim_call(__func__, [&]() -> Status {
    return run_convolution(input, weight, bias, stride, stride_len_, padding, padding_len_, dilation, dilation_len_,
                           transposed != 0, output_padding, output_padding_len_, groups, ret0);
  });
}

}  // extern "C"
