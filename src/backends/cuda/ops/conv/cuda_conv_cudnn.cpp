// Convolutions on cuDNN: its graph (backend) API for forward convolutions,
// with one execution plan per problem, and the legacy API for the rest
// (transposed convolutions as cuDNN's backward-data pass, and problems the
// graph API's heuristics offer no engine for). float32 may use TF32, as
// PyTorch's cuDNN default allows (AOTIRT_CUDA_ALLOW_TF32=0 keeps
// CUDNN_FMA_MATH only); float16 and bfloat16 accumulate in float32.
#include <algorithm>
#include <array>
#include <atomic>
#include <vector>

#include "backends/cuda/ops/conv/cuda_conv_impl.h"
#include "backends/cuda/runtime/cuda_device.h"
#include "backends/cuda/runtime/cuda_options.h"
#include "backends/cuda/runtime/cuda_status.h"
#include "backends/cuda/runtime/cuda_symbols.h"
#include "backends/cuda/launch/cuda_op_replay.h"
#include "base/log.h"
#include "base/status.h"
#include "ops/op_args.h"
#include "shim/common/shim_profile.h"

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

// ---- cuDNN's graph (backend) API, for forward convolutions ----
//
// cuDNN 9 implements the legacy cudnnConvolutionForward on top of its graph
// API and builds an execution plan on every call: on ResNet-50 that host
// work, not the GPU, was most of each convolution's time. Here the plan is
// built once per problem and each call only fills a variant pack and
// executes it.

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

}  // namespace

Status cudnn_convolution(const CudaOpScope& scope, const TensorImpl& input, const TensorImpl& weight,
                         DimVector stride, DimVector padding, DimVector dilation, int64_t groups, bool transposed,
                         bool channels_last, const TensorImpl& out) {
  const int device = scope.device();
  const int64_t nd = input.dim();
  AOTIRT_ASSIGN_OR_RETURN(cudnnDataType_t dtype, cudnn_type(input.dtype()));
  // cuDNN gets dense operands in the chosen format; 1-d runs as 2-d.
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl x, conv_dense_as(input, channels_last, device));
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl w, conv_dense_as(weight, channels_last, device));
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
  AOTIRT_ASSIGN_OR_RETURN(cudnnHandle_t handle, cudnn_handle(*api, device, scope.stream()));
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
        [] { return std::make_unique<BackendPlanCache>("cuDNN graph plans", kConvMaxPlans); });
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
      AOTIRT_ASSIGN_OR_RETURN(void* ws, cuda_op_workspace(device, scope.stream(),
                                                       static_cast<size_t>(bplan->workspace), &graph_ws));
      const CudaReplayKey replay_key = {reinterpret_cast<uintptr_t>(x.data_ptr()),
                                        reinterpret_cast<uintptr_t>(w.data_ptr()),
                                        reinterpret_cast<uintptr_t>(y.data_ptr()), reinterpret_cast<uintptr_t>(ws),
                                        0, 0};
      const cudaStream_t stream = scope.stream();
      Status st = bplan->replay.run(device, replay_key, stream, [&](cudaStream_t s) -> Status {
        if (s != stream) AOTIRT_CUDNN_RETURN_IF_ERROR(api->cudnnSetStream(handle, s));
        Status r = run_backend_plan(*api, handle, bplan->plan, x.data_ptr(), w.data_ptr(), y.data_ptr(), ws);
        if (s != stream) AOTIRT_CUDNN_RETURN_IF_ERROR(api->cudnnSetStream(handle, stream));
        return r;
      });
      if (st.ok()) return Status();
      AOTIRT_LOG(kDebug, "cuDNN graph API execution failed, using the legacy API: {}", st.to_string());
    }
  }
  // The legacy API: the heuristic's algorithms in order, the first that runs
  // kept for the next call.
  ConvPlanCache& plans = dev->op_caches().get<ConvPlanCache>(
      [] { return std::make_unique<ConvPlanCache>("cuDNN plans (legacy API)", kConvMaxPlans); });
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
                                                   transposed ? "transposed " : "", shape_str(input),
                                                   shape_str(weight), dtype_name(input.dtype()));
                            return made;
                          }));

  // Run the first candidate that gets its workspace and succeeds; remember it.
  Status last;
  bool ran = false;
  const size_t first = plan->chosen.load();
  for (size_t i = first; i < plan->candidates.size(); ++i) {
    const ChosenAlgo& c = plan->candidates[i];
    TensorImpl graph_ws;
    Result<void*> ws = cuda_op_workspace(device, scope.stream(), c.workspace, &graph_ws);
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
  return Status();
}

}  // namespace aotirt
