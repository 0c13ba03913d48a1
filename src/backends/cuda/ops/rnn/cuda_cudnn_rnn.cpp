// aten::_cudnn_rnn's inference forward (RNN_RELU, RNN_TANH, LSTM with
// optional projections, GRU; layers, directions, batch_first, packed
// sequences) on cuDNN's v8 RNN API. The op layer (src/ops/rnn_args) checks
// the arguments and gives the output shapes. cuDNN reads its parameters from
// one weight space: torch's flat weight_buf is one already (torch made it
// with cuDNN's layout when the module flattened its parameters) and is used
// as is; without it, a weight space is made and each listed parameter is
// copied to where cudnnGetRNNWeightParams puts it, as torch does. Nothing is
// cached across calls but the per-thread cuDNN handle.
#include <array>
#include <climits>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "backends/cuda/ops/cuda_op_util.h"
#include "backends/cuda/runtime/cuda_copy.h"
#include "backends/cuda/runtime/cuda_device.h"
#include "backends/cuda/runtime/cuda_status.h"
#include "backends/cuda/runtime/cuda_symbols.h"
#include "base/status.h"
#include "ops/op_args.h"
#include "ops/cudnn_rnn_args.h"
#include "shim/abi/cuda_cudnn_rnn.h"
#include "shim/common/shim_util.h"

namespace aotirt {
namespace {

using ops::RnnArgs;
using ops::RnnMode;
using ops::RnnParam;

Result<cudnnDataType_t> rnn_data_type(DType dtype) {
  switch (dtype) {
    case DType::kFloat32: return CUDNN_DATA_FLOAT;
    case DType::kFloat64: return CUDNN_DATA_DOUBLE;
    case DType::kFloat16: return CUDNN_DATA_HALF;
    // cuDNN decides whether its RNNs take bfloat16; torch passes it through
    // too, so both then answer alike.
    case DType::kBFloat16: return CUDNN_DATA_BFLOAT16;
    default:
      return AOTIRT_STATUS(kUnimplemented, "input has dtype {}; cuDNN RNNs take float32, float64, float16, bfloat16",
                           dtype_name(dtype));
  }
}

// A cuDNN handle per thread and device (a handle must not serve two threads
// at once), kept for the thread's life.
Result<cudnnHandle_t> rnn_handle(const CudnnApi& api, int device, cudaStream_t stream) {
  thread_local std::array<cudnnHandle_t, kCudaMaxDevices> handles{};
  if (!handles[device]) {
    cudnnHandle_t h = nullptr;
    AOTIRT_CUDNN_RETURN_IF_ERROR(api.cudnnCreate(&h));
    handles[device] = h;
  }
  AOTIRT_CUDNN_RETURN_IF_ERROR(api.cudnnSetStream(handles[device], stream));
  return handles[device];
}

// The descriptors of one call, destroyed with it.
struct RnnDescs {
  const CudnnApi& api;
  cudnnDropoutDescriptor_t dropout = nullptr;
  cudnnRNNDescriptor_t rnn = nullptr;
  cudnnRNNDataDescriptor_t x = nullptr, y = nullptr;
  cudnnTensorDescriptor_t h = nullptr, c = nullptr;
  cudnnTensorDescriptor_t mat = nullptr, bias = nullptr;  // filled by cudnnGetRNNWeightParams
  explicit RnnDescs(const CudnnApi& a) : api(a) {}
  RnnDescs(const RnnDescs&) = delete;
  RnnDescs& operator=(const RnnDescs&) = delete;
  ~RnnDescs() {
    if (bias) api.cudnnDestroyTensorDescriptor(bias);
    if (mat) api.cudnnDestroyTensorDescriptor(mat);
    if (c) api.cudnnDestroyTensorDescriptor(c);
    if (h) api.cudnnDestroyTensorDescriptor(h);
    if (y) api.cudnnDestroyRNNDataDescriptor(y);
    if (x) api.cudnnDestroyRNNDataDescriptor(x);
    if (rnn) api.cudnnDestroyRNNDescriptor(rnn);
    if (dropout) api.cudnnDestroyDropoutDescriptor(dropout);
  }
};

Status fits_int(int64_t v, const char* what) {
  AOTIRT_ENSURE(v <= INT_MAX, kUnimplemented, "{}={} exceeds cuDNN's 32-bit sizes", what, v);
  return Status();
}

// cuDNN answers BAD_PARAM where its RNNs lack a dtype; bfloat16 is the one
// that depends on the cuDNN release, so its refusal is reported as such.
Status dtype_refusal(Status s, cudnnDataType_t type) {
  if (s.ok() || type != CUDNN_DATA_BFLOAT16 || s.code() != StatusCode::kInvalidArgument) return s;
  return AOTIRT_STATUS(kUnimplemented, "bfloat16 RNNs are not supported by this cuDNN ({})", s.message());
}

// A dense, fully packed 3-d state descriptor [layers * directions, batch, n].
Status set_state_desc(const CudnnApi& api, cudnnTensorDescriptor_t* d, cudnnDataType_t type, int64_t l, int64_t b,
                      int64_t n) {
  AOTIRT_CUDNN_RETURN_IF_ERROR(api.cudnnCreateTensorDescriptor(d));
  const int dims[3] = {static_cast<int>(l), static_cast<int>(b), static_cast<int>(n)};
  const int strides[3] = {static_cast<int>(b * n), static_cast<int>(n), 1};
  AOTIRT_CUDNN_RETURN_IF_ERROR(api.cudnnSetTensorNdDescriptor(*d, type, 3, dims, strides));
  return Status();
}

// A 1-d view of |n| elements of |t|'s storage from element |offset| of it.
TensorImpl flat_view(const TensorImpl& t, int64_t offset, int64_t n) {
  return TensorImpl(t.storage(), t.dtype(), DimVector{n}, DimVector{1}, offset);
}

// cuDNN's linear-layer ids of one torch parameter: torch stacks the gates
// of w_ih (and b_ih) in cuDNN's order of ids 0..G-1, those of w_hh (b_hh)
// in that of ids G..2G-1; an LSTM's projection is id 2G = 8.
struct ParamPlace {
  int first_id;
  int count;
  bool matrix;
};

ParamPlace param_place(const RnnArgs& a, RnnParam p) {
  const int g = static_cast<int>(a.gates);
  switch (p) {
    case RnnParam::kWeightIh: return {0, g, true};
    case RnnParam::kWeightHh: return {g, g, true};
    case RnnParam::kBiasIh: return {0, g, false};
    case RnnParam::kBiasHh: return {g, g, false};
    case RnnParam::kWeightHr: return {2 * g, 1, true};
  }
  return {0, 0, true};
}

// Copies the listed parameters into |space| (zeroed, |space_bytes| long)
// where cuDNN keeps them, on the scope's stream.
Status fill_weight_space(const CudaOpScope& scope, const CudnnApi& api, cudnnHandle_t handle, RnnDescs& d,
                         const RnnArgs& a, const TensorImpl& space, size_t space_bytes) {
  const int device = scope.device();
  cudaStream_t stream = scope.stream();
  const int64_t esize = static_cast<int64_t>(space.element_size());
  const char* base = static_cast<const char*>(space.data_ptr());
  AOTIRT_CUDNN_RETURN_IF_ERROR(api.cudnnCreateTensorDescriptor(&d.mat));
  AOTIRT_CUDNN_RETURN_IF_ERROR(api.cudnnCreateTensorDescriptor(&d.bias));
  const int64_t groups = a.num_layers * a.directions;
  for (int64_t g = 0; g < groups; ++g) {
    for (int64_t k = 0; k < a.weight_stride0; ++k) {
      const int64_t index = g * a.weight_stride0 + k;
      const ParamPlace place = param_place(a, ops::rnn_param_at(a, k));
      TensorImpl src = *a.weights[index];
      const std::string what = "weight[" + std::to_string(index) + "]";
      AOTIRT_RETURN_IF_ERROR(scope.check_same_device(src, what.c_str()));
      if (src.numel() == 0) continue;
      if (!src.is_contiguous()) {
        AOTIRT_ASSIGN_OR_RETURN(TensorImpl dense, cuda_empty_contiguous(src.sizes(), src.dtype(), device));
        AOTIRT_RETURN_IF_ERROR(cuda_copy(device, stream, dense, src, false));
        src = std::move(dense);
      }
      const int64_t chunk = src.numel() / place.count;
      // Element offsets (in |space|) of each gate's block.
      std::vector<int64_t> offsets(place.count);
      for (int j = 0; j < place.count; ++j) {
        void* addr = nullptr;
        cudnnTensorDescriptor_t desc = place.matrix ? d.mat : d.bias;
        AOTIRT_CUDNN_RETURN_IF_ERROR(api.cudnnGetRNNWeightParams(
            handle, d.rnn, static_cast<int32_t>(g), space_bytes, space.data_ptr(), place.first_id + j,
            place.matrix ? d.mat : nullptr, place.matrix ? &addr : nullptr, place.matrix ? nullptr : d.bias,
            place.matrix ? nullptr : &addr));
        AOTIRT_ENSURE(addr != nullptr, kInternal, "cuDNN has no place for {} (pseudo-layer {}, linear id {})", what, g,
                      place.first_id + j);
        cudnnDataType_t type;
        int nb = 0;
        int dims[3] = {0, 0, 0}, strides[3] = {0, 0, 0};
        AOTIRT_CUDNN_RETURN_IF_ERROR(api.cudnnGetTensorNdDescriptor(desc, 3, &type, &nb, dims, strides));
        int64_t n = 1;
        for (int i = 0; i < nb && i < 3; ++i) n *= dims[i];
        const int64_t byte_offset = static_cast<const char*>(addr) - base;
        // Never write outside the space or a block of another size: such a
        // layout would be a cuDNN this code does not understand.
        AOTIRT_ENSURE(nb <= 3 && n == chunk && byte_offset >= 0 && byte_offset % esize == 0 &&
                          static_cast<size_t>(byte_offset + chunk * esize) <= space_bytes,
                      kInternal,
                      "cuDNN's block for {} (pseudo-layer {}, linear id {}) has {} elements at byte {}; expected {}",
                      what, g, place.first_id + j, n, byte_offset, chunk);
        offsets[j] = space.storage_offset() + byte_offset / esize;
      }
      bool adjacent = true;
      for (int j = 1; j < place.count; ++j) adjacent = adjacent && offsets[j] == offsets[0] + j * chunk;
      if (adjacent) {
        AOTIRT_RETURN_IF_ERROR(cuda_copy(device, stream, flat_view(space, offsets[0], chunk * place.count),
                                         flat_view(src, src.storage_offset(), chunk * place.count), false));
      } else {
        for (int j = 0; j < place.count; ++j)
          AOTIRT_RETURN_IF_ERROR(cuda_copy(device, stream, flat_view(space, offsets[j], chunk),
                                           flat_view(src, src.storage_offset() + j * chunk, chunk), false));
      }
    }
  }
  return Status();
}

// The RNN descriptor (and the no-dropout descriptor it holds) of |a|.
Status set_rnn_desc(const CudnnApi& api, cudnnHandle_t handle, const RnnArgs& a, cudnnDataType_t type,
                    RnnDescs& d) {
  const cudnnDataType_t math_prec = type == CUDNN_DATA_DOUBLE ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
  // torch's choice: tensor cores for half, TF32 for float32 only where
  // cuDNN convolutions may use it, cuDNN's default otherwise.
  cudnnMathType_t math = CUDNN_DEFAULT_MATH;
  if (type == CUDNN_DATA_HALF) math = CUDNN_TENSOR_OP_MATH;
  if (type == CUDNN_DATA_FLOAT && !cuda_conv_allow_tf32()) math = CUDNN_FMA_MATH;
  static_assert(CUDNN_RNN_RELU == 0 && CUDNN_RNN_TANH == 1 && CUDNN_LSTM == 2 && CUDNN_GRU == 3,
                "torch passes cuDNN's RNN mode numbers");
  // No dropout (inference), said as torch says it: probability 0, no states.
  AOTIRT_CUDNN_RETURN_IF_ERROR(api.cudnnCreateDropoutDescriptor(&d.dropout));
  AOTIRT_CUDNN_RETURN_IF_ERROR(api.cudnnSetDropoutDescriptor(d.dropout, handle, 0.0f, nullptr, 0, 0));
  AOTIRT_CUDNN_RETURN_IF_ERROR(api.cudnnCreateRNNDescriptor(&d.rnn));
  // The standard algorithm: the persistent ones are a speed choice with
  // limits of their own (no projections, no packed batches, some sizes).
  AOTIRT_CUDNN_RETURN_IF_ERROR(api.cudnnSetRNNDescriptor_v8(
      d.rnn, CUDNN_RNN_ALGO_STANDARD, static_cast<cudnnRNNMode_t>(a.mode), CUDNN_RNN_DOUBLE_BIAS,
      a.directions == 2 ? CUDNN_BIDIRECTIONAL : CUDNN_UNIDIRECTIONAL, CUDNN_LINEAR_INPUT, type, math_prec, math,
      static_cast<int32_t>(a.input_size), static_cast<int32_t>(a.hidden_size),
      static_cast<int32_t>(a.proj_size > 0 ? a.proj_size : a.hidden_size), static_cast<int32_t>(a.num_layers),
      d.dropout, a.packed ? CUDNN_RNN_PADDED_IO_DISABLED : CUDNN_RNN_PADDED_IO_ENABLED));
  return Status();
}

struct RnnOutputs {
  std::unique_ptr<TensorImpl> output, hy, cy, reserve, weight_buf;
};

// Queues cudnnRNNForward of |a| on the scope's stream: dense time-major |x|
// into |r|'s output, hy and cy, with the parameters in |space|.
Status queue_forward(const CudnnApi& api, cudnnHandle_t handle, const CudaOpScope& scope, const RnnArgs& a,
                     cudnnDataType_t type, RnnDescs& d, const TensorImpl& x, const TensorImpl& space,
                     size_t weight_bytes, const RnnOutputs& r) {
  const int device = scope.device();
  cudaStream_t stream = scope.stream();
  std::vector<int> seq_lengths(static_cast<size_t>(a.mini_batch), a.packed ? 0 : static_cast<int>(a.seq_length));
  if (a.packed) {
    // A step of n entries advances sequences 0..n-1 (batch_sizes never grow).
    for (int64_t bs : a.batch_sizes)
      for (int64_t b = 0; b < bs; ++b) ++seq_lengths[static_cast<size_t>(b)];
  }
  const cudnnRNNDataLayout_t layout =
      a.packed ? CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED : CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED;
  AOTIRT_CUDNN_RETURN_IF_ERROR(api.cudnnCreateRNNDataDescriptor(&d.x));
  AOTIRT_CUDNN_RETURN_IF_ERROR(api.cudnnSetRNNDataDescriptor(d.x, type, layout, static_cast<int>(a.seq_length),
                                                             static_cast<int>(a.mini_batch),
                                                             static_cast<int>(a.input_size), seq_lengths.data(),
                                                             nullptr));
  AOTIRT_CUDNN_RETURN_IF_ERROR(api.cudnnCreateRNNDataDescriptor(&d.y));
  AOTIRT_CUDNN_RETURN_IF_ERROR(api.cudnnSetRNNDataDescriptor(
      d.y, type, layout, static_cast<int>(a.seq_length), static_cast<int>(a.mini_batch),
      static_cast<int>(a.directions * a.out_size), seq_lengths.data(), nullptr));
  const int64_t states = a.num_layers * a.directions;
  AOTIRT_RETURN_IF_ERROR(set_state_desc(api, &d.h, type, states, a.mini_batch, a.out_size));
  AOTIRT_RETURN_IF_ERROR(set_state_desc(api, &d.c, type, states, a.mini_batch, a.hidden_size));

  size_t work_bytes = 0, reserve_bytes = 0;
  AOTIRT_CUDNN_RETURN_IF_ERROR(
      api.cudnnGetRNNTempSpaceSizes(handle, d.rnn, CUDNN_FWD_MODE_INFERENCE, d.x, &work_bytes, &reserve_bytes));
  TensorImpl hold;
  void* work = nullptr;
  if (work_bytes > 0) {
    AOTIRT_ASSIGN_OR_RETURN(work, cuda_op_workspace(device, stream, work_bytes, &hold));
  }
  AOTIRT_CUDNN_RETURN_IF_ERROR(api.cudnnRNNForward(
      handle, d.rnn, CUDNN_FWD_MODE_INFERENCE, /*devSeqLengths=*/nullptr, d.x, x.data_ptr(), d.y,
      r.output->data_ptr(), d.h, a.hx->data_ptr(), r.hy->data_ptr(), d.c, a.cx ? a.cx->data_ptr() : nullptr,
      a.cx ? r.cy->data_ptr() : nullptr, weight_bytes, space.data_ptr(), work_bytes, work, 0, nullptr));
  return Status();
}

Result<RnnOutputs> run_rnn(const RnnArgs& a, const TensorImpl* dropout_state) {
  AOTIRT_ASSIGN_OR_RETURN(std::unique_ptr<CudaOpScope> scope, CudaOpScope::enter(*a.input, "input"));
  const int device = scope->device();
  cudaStream_t stream = scope->stream();
  AOTIRT_RETURN_IF_ERROR(scope->check_same_device(*a.hx, "hx"));
  if (a.cx) AOTIRT_RETURN_IF_ERROR(scope->check_same_device(*a.cx, "cx"));
  if (a.weight_buf) AOTIRT_RETURN_IF_ERROR(scope->check_same_device(*a.weight_buf, "weight_buf"));
  if (dropout_state) AOTIRT_RETURN_IF_ERROR(scope->check_same_device(*dropout_state, "dropout_state"));
  for (size_t i = 0; i < a.weights.size(); ++i) {
    const std::string what = "weight[" + std::to_string(i) + "]";
    AOTIRT_RETURN_IF_ERROR(scope->check_same_device(*a.weights[i], what.c_str()));
  }
  AOTIRT_ASSIGN_OR_RETURN(cudnnDataType_t type, rnn_data_type(a.input->dtype()));
  AOTIRT_ENSURE(a.seq_length > 0 || a.mini_batch == 0, kUnimplemented,
                "an input of sequence length 0 (batch {}) is not implemented: cuDNN runs no empty sequences",
                a.mini_batch);
  AOTIRT_RETURN_IF_ERROR(fits_int(a.seq_length, "sequence length"));
  AOTIRT_RETURN_IF_ERROR(fits_int(a.mini_batch, "batch"));
  AOTIRT_RETURN_IF_ERROR(fits_int(a.input_size, "input_size"));
  AOTIRT_RETURN_IF_ERROR(fits_int(a.hidden_size, "hidden_size"));
  AOTIRT_RETURN_IF_ERROR(fits_int(a.num_layers * a.directions, "num_layers * directions"));
  AOTIRT_RETURN_IF_ERROR(fits_int(a.directions * a.out_size, "output features"));
  AOTIRT_RETURN_IF_ERROR(fits_int(a.mini_batch * a.hidden_size, "batch * hidden_size"));  // state strides

  const DType dtype = a.input->dtype();
  RnnOutputs r;
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl output, cuda_empty(a.output_sizes, a.output_strides, dtype, device));
  r.output.reset(new TensorImpl(std::move(output)));
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl hy, cuda_empty_contiguous(a.hidden_sizes, a.hx->dtype(), device));
  r.hy.reset(new TensorImpl(std::move(hy)));
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl cy, cuda_empty_contiguous(a.cx ? a.cell_sizes : DimVector{0}, a.hx->dtype(),
                                                               device));
  r.cy.reset(new TensorImpl(std::move(cy)));
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl reserve, cuda_empty_contiguous(DimVector{0}, DType::kUInt8, device));
  r.reserve.reset(new TensorImpl(std::move(reserve)));

  AOTIRT_ASSIGN_OR_RETURN(const CudnnApi* api_ptr, cudnn_api());
  const CudnnApi& api = *api_ptr;
  AOTIRT_ASSIGN_OR_RETURN(cudnnHandle_t handle, rnn_handle(api, device, stream));
  RnnDescs d(api);
  AOTIRT_RETURN_IF_ERROR(dtype_refusal(set_rnn_desc(api, handle, a, type, d), type));
  size_t weight_bytes = 0;
  AOTIRT_CUDNN_RETURN_IF_ERROR(api.cudnnGetRNNWeightSpaceSize(handle, d.rnn, &weight_bytes));
  const size_t esize = dtype_size(dtype);
  AOTIRT_ENSURE(weight_bytes % esize == 0, kInternal, "cuDNN's weight space of {} bytes is not whole {} elements",
                weight_bytes, dtype_name(dtype));

  TensorImpl space;
  if (a.weight_buf) {
    // torch hands cuDNN the buffer as is, trusting its layout.
    AOTIRT_ENSURE(a.weight_buf->nbytes() >= weight_bytes, kInvalidArgument,
                  "weight_buf has {} elements; cuDNN's weights for this RNN need {}", a.weight_buf->numel(),
                  weight_bytes / esize);
    space = *a.weight_buf;
  } else {
    AOTIRT_ASSIGN_OR_RETURN(space, cuda_empty_contiguous(DimVector{static_cast<int64_t>(weight_bytes / esize)},
                                                         dtype, device));
    // Zero first: biases torch's modules lack stay zero, as in torch.
    AOTIRT_RETURN_IF_ERROR(cuda_zero(device, stream, space));
    AOTIRT_RETURN_IF_ERROR(fill_weight_space(*scope, api, handle, d, a, space, weight_bytes));
  }
  r.weight_buf.reset(new TensorImpl(space));
  if (a.mini_batch == 0) return r;  // every output but weight_buf is empty

  // cuDNN reads x and writes y time-major and dense: batch_first input is
  // read through its transposed view, and the output is allocated as the
  // transpose of a time-major tensor.
  const TensorImpl& in = *a.input;
  TensorImpl x = in;
  if (a.batch_first && !a.packed)
    x = TensorImpl(in.storage(), dtype, DimVector{in.sizes()[1], in.sizes()[0], in.sizes()[2]},
                   DimVector{in.strides()[1], in.strides()[0], in.strides()[2]}, in.storage_offset());
  if (!x.is_contiguous()) {
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl dense, cuda_empty_contiguous(x.sizes(), dtype, device));
    AOTIRT_RETURN_IF_ERROR(cuda_copy(device, stream, dense, x, false));
    x = std::move(dense);
  }

  AOTIRT_RETURN_IF_ERROR(dtype_refusal(
      queue_forward(api, handle, *scope, a, type, d, x, space, weight_bytes, r), type));
  return r;
}

Status cudnn_rnn(AtenTensorHandle input, const AtenTensorHandle* weight, int64_t weight_len, int64_t weight_stride0,
                 AtenTensorHandle* weight_buf, AtenTensorHandle hx, AtenTensorHandle* cx, int64_t mode,
                 int64_t hidden_size, int64_t proj_size, int64_t num_layers, int32_t batch_first, double dropout,
                 int32_t train, int32_t bidirectional, const int64_t* batch_sizes, int64_t batch_sizes_len,
                 AtenTensorHandle* dropout_state, AtenTensorHandle* ret0, AtenTensorHandle* ret1,
                 AtenTensorHandle* ret2, AtenTensorHandle* ret3, AtenTensorHandle* ret4) {
  AOTIRT_REQUIRE_OUT(ret0);
  AOTIRT_REQUIRE_OUT(ret1);
  AOTIRT_REQUIRE_OUT(ret2);
  AOTIRT_REQUIRE_OUT(ret3);
  AOTIRT_REQUIRE_OUT(ret4);
  AOTIRT_ASSIGN_OR_RETURN(
      RnnArgs a, ops::rnn_args(input, weight, weight_len, weight_stride0, weight_buf, hx, cx, mode, hidden_size,
                               proj_size, num_layers, batch_first, dropout, train, bidirectional, batch_sizes,
                               batch_sizes_len));
  AOTIRT_ASSIGN_OR_RETURN(RnnOutputs r, run_rnn(a, ops::optional_tensor(dropout_state)));
  *ret0 = handle_of(r.output.release());
  *ret1 = handle_of(r.hy.release());
  *ret2 = handle_of(r.cy.release());
  *ret3 = handle_of(r.reserve.release());
  *ret4 = handle_of(r.weight_buf.release());
  return Status();
}

}  // namespace
}  // namespace aotirt

using namespace aotirt;

extern "C" {

AOTITorchError aoti_torch_cuda__cudnn_rnn(AtenTensorHandle input, const AtenTensorHandle* weight, int64_t weight_len_,
                                          int64_t weight_stride0, AtenTensorHandle* weight_buf, AtenTensorHandle hx,
                                          AtenTensorHandle* cx, int64_t mode, int64_t hidden_size, int64_t proj_size,
                                          int64_t num_layers, int32_t batch_first, double dropout, int32_t train,
                                          int32_t bidirectional, const int64_t* batch_sizes, int64_t batch_sizes_len_,
                                          AtenTensorHandle* dropout_state, AtenTensorHandle* ret0,
                                          AtenTensorHandle* ret1, AtenTensorHandle* ret2, AtenTensorHandle* ret3,
                                          AtenTensorHandle* ret4) noexcept {
  return shim_call(__func__, [&] {
    return cudnn_rnn(input, weight, weight_len_, weight_stride0, weight_buf, hx, cx, mode, hidden_size, proj_size,
                     num_layers, batch_first, dropout, train, bidirectional, batch_sizes, batch_sizes_len_,
                     dropout_state, ret0, ret1, ret2, ret3, ret4);
  });
}

}  // extern "C"
