// The three CUDA SDPA fallbacks AOTInductor emits (flash, efficient, cuDNN)
// and torch's flash and memory-efficient attention forwards, all on aotirt's
// own attention kernel (cuda_attention.cu).
//
// Each returns its tensors with exactly the sizes, strides and dtypes of
// torch's meta function for the op, because the generated code reinterprets
// them with those layouts: flash's output is empty_like(query) and its
// logsumexp [B, H, L]; efficient's output is [B, L, H, Ev] transposed to
// [B, H, L, Ev] and its logsumexp [B, H, ceil(L / 32) * 32] (or [B, H, 0]);
// cuDNN's output follows query's stride order and its logsumexp is
// [B, H, L, 1]. The philox seed/offset outputs are zero host tensors of the
// meta dtypes (no dropout: only dropout_p == 0 is supported); unused
// optional outputs are undefined tensors.
//
// _flash_attention_forward and _efficient_attention_forward take
// [B, L, H, E] tensors, which the kernel reads through a stride swap. Their
// causal masks may start at the bottom-right corner (a causal offset of
// S - L). Flash's rng_state and unused outputs are zeroed device tensors, as
// torch allocates them on the device.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <numeric>
#include <utility>
#include <vector>

#include "core/host_copy.h"
#include "ops/layout.h"
#include "ops/op_args.h"
#include "backends/cuda/runtime/cuda_copy.h"
#include "backends/cuda/runtime/cuda_device.h"
#include "backends/cuda/runtime/cuda_options.h"
#include "backends/cuda/runtime/cuda_status.h"
#include "backends/cuda/ops/attention/cuda_attention_kernel.h"
#include "backends/cuda/ops/cuda_op_util.h"
#include "base/log.h"
#include "base/status.h"
#include "device/device.h"
#include "shim/common/shim_profile.h"
#include "shim/abi/cuda_attention.h"
#include "shim/common/shim_util.h"

namespace aotirt {
namespace {

// AOTIRT_CUDA_DISABLE=attention_tc sends every attention to the general
// kernel; attention_gemm keeps float32 attention on the fused kernel.
bool cuda_attention_tc_enabled() { return cuda_options().enabled(CudaFeature::kAttentionTc); }
bool cuda_attention_gemm_enabled() { return cuda_options().enabled(CudaFeature::kAttentionGemm); }

using ops::shape_str;

// float32 attention as scores = q . k^T (cuBLASLt), softmax in place, then
// out = probabilities . v (cuBLASLt); see cuda_attention_gemm_eligible. Heads
// are the GEMMs' batch (with the batch too when its stride spans the heads;
// otherwise one call per batch entry). In column-major terms, scores^T
// [S, L] = K [S, E] . Q^T [E, L] and out^T [Ev, L] = V^T [Ev, S] . P^T [S, L].
Status run_attention_gemm(const CudaAttentionParams& p, const CudaOpScope& scope) {
  const int64_t B = p.batch, H = p.heads_q, L = p.len_q, S = p.len_kv;
  const int64_t ld = cuda_attention_scores_ld(S);
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl scores,
                          cuda_empty_contiguous(DimVector{B * H * L * ld}, DType::kFloat32, scope.device()));
  float* sp = static_cast<float*>(scores.data_ptr());
  auto spans_heads = [&](const int64_t* st) { return B == 1 || st[0] == H * st[1]; };
  const bool one_call =
      spans_heads(p.q_strides) && spans_heads(p.k_strides) && spans_heads(p.v_strides) && spans_heads(p.out_strides);
  const int64_t calls = one_call ? 1 : B;
  const float* q = static_cast<const float*>(p.q);
  const float* k = static_cast<const float*>(p.k);
  const float* v = static_cast<const float*>(p.v);
  float* out = static_cast<float*>(p.out);
  for (int64_t c = 0; c < calls; ++c) {
    CudaGemm g;
    g.dtype = DType::kFloat32;
    g.batch = one_call ? B * H : H;
    g.m = S;
    g.n = L;
    g.k = p.head_dim;
    g.a = k + c * p.k_strides[0];
    g.ta = true;
    g.lda = p.k_strides[2];
    g.stride_a = p.k_strides[1];
    g.b = q + c * p.q_strides[0];
    g.ldb = p.q_strides[2];
    g.stride_b = p.q_strides[1];
    g.d = sp + c * H * L * ld;
    g.ldd = ld;
    g.stride_d = L * ld;
    AOTIRT_RETURN_IF_ERROR(cuda_gemm(scope.device(), scope.stream(), g));
  }
  {
    ShimProfileScope profile("aoti_torch_cuda__scaled_dot_product_*_attention / softmax launch");
    AOTIRT_CUDA_RETURN_IF_ERROR(cuda_launch_attention_softmax(p, sp, ld, scope.stream()));
  }
  for (int64_t c = 0; c < calls; ++c) {
    CudaGemm g;
    g.dtype = DType::kFloat32;
    g.batch = one_call ? B * H : H;
    g.m = p.head_dim_v;
    g.n = L;
    g.k = S;
    g.a = v + c * p.v_strides[0];
    g.lda = p.v_strides[2];
    g.stride_a = p.v_strides[1];
    g.b = sp + c * H * L * ld;
    g.ldb = ld;
    g.stride_b = L * ld;
    g.d = out + c * p.out_strides[0];
    g.ldd = p.out_strides[2];
    g.stride_d = p.out_strides[1];
    AOTIRT_RETURN_IF_ERROR(cuda_gemm(scope.device(), scope.stream(), g));
  }
  return Status();
}

struct AttentionArgs {
  const TensorImpl* q = nullptr;
  const TensorImpl* k = nullptr;
  const TensorImpl* v = nullptr;
  const TensorImpl* mask = nullptr;  // bool (keep) or additive
  double dropout_p = 0.0;
  bool causal = false;
  int64_t causal_offset = 0;  // see CudaAttentionParams::causal_offset
  const double* scale = nullptr;
};

Status check_args(const AttentionArgs& a, const CudaOpScope& scope) {
  AOTIRT_RETURN_IF_ERROR(scope.check_same_device(*a.k, "key"));
  AOTIRT_RETURN_IF_ERROR(scope.check_same_device(*a.v, "value"));
  if (a.mask) AOTIRT_RETURN_IF_ERROR(scope.check_same_device(*a.mask, "attn_mask"));
  AOTIRT_RETURN_IF_ERROR(ops::check_dim(*a.q, 4, "query"));
  AOTIRT_RETURN_IF_ERROR(ops::check_dim(*a.k, 4, "key"));
  AOTIRT_RETURN_IF_ERROR(ops::check_dim(*a.v, 4, "value"));
  AOTIRT_RETURN_IF_ERROR(ops::check_same_dtype(*a.q, "query", *a.k, "key"));
  AOTIRT_RETURN_IF_ERROR(ops::check_same_dtype(*a.q, "query", *a.v, "value"));
  const DType dt = a.q->dtype();
  AOTIRT_ENSURE(dt == DType::kFloat32 || dt == DType::kFloat16 || dt == DType::kBFloat16, kUnimplemented,
                "attention on CUDA supports float32, float16 and bfloat16, not {}", dtype_name(dt));
  AOTIRT_ENSURE(a.dropout_p == 0.0, kUnimplemented,
                "attention with dropout_p={} is not supported: aotirt runs inference graphs (dropout_p must be 0)",
                a.dropout_p);
  const auto& qs = a.q->sizes();
  const auto& ks = a.k->sizes();
  const auto& vs = a.v->sizes();
  AOTIRT_ENSURE(ks[0] == qs[0] && vs[0] == qs[0] && ks[1] == vs[1] && ks[2] == vs[2] && ks[3] == qs[3],
                kInvalidArgument, "query {}, key {} and value {} do not fit [B, H, L, E], [B, Hkv, S, E], "
                "[B, Hkv, S, Ev]", shape_str(*a.q), shape_str(*a.k), shape_str(*a.v));
  AOTIRT_ENSURE(ks[1] > 0 && qs[1] % ks[1] == 0, kInvalidArgument,
                "query has {} heads, which is not a multiple of key/value's {}", qs[1], ks[1]);
  AOTIRT_ENSURE(qs[3] <= kCudaAttentionMaxHeadDim && vs[3] <= kCudaAttentionMaxHeadDim, kUnimplemented,
                "head dims {} (query/key) and {} (value) exceed the supported {}", qs[3], vs[3],
                kCudaAttentionMaxHeadDim);
  if (a.mask) {
    const DType mt = a.mask->dtype();
    AOTIRT_ENSURE(mt == DType::kBool || mt == DType::kFloat32 || mt == DType::kFloat16 || mt == DType::kBFloat16,
                  kUnimplemented, "attention masks of dtype {} are not supported", dtype_name(mt));
  }
  return Status();
}

void copy4(const DimVector& from, int64_t* to) {
  for (int i = 0; i < 4; ++i) to[i] = from[i];
}

// Runs the kernel: |out| [B, H, L, Ev] and |lse| (null, or float32 with
// [B, H, >= L] strides in lse_strides) must be allocated.
Status run_attention(const AttentionArgs& a, const CudaOpScope& scope, const TensorImpl& out, float* lse,
                     const int64_t* lse_strides) {
  CudaAttentionParams p;
  p.dtype = static_cast<int>(a.q->dtype());
  p.q = a.q->data_ptr();
  p.k = a.k->data_ptr();
  p.v = a.v->data_ptr();
  p.out = out.data_ptr();
  p.batch = a.q->sizes()[0];
  p.heads_q = a.q->sizes()[1];
  p.heads_kv = a.k->sizes()[1];
  p.len_q = a.q->sizes()[2];
  p.len_kv = a.k->sizes()[2];
  p.head_dim = a.q->sizes()[3];
  p.head_dim_v = a.v->sizes()[3];
  copy4(a.q->strides(), p.q_strides);
  copy4(a.k->strides(), p.k_strides);
  copy4(a.v->strides(), p.v_strides);
  copy4(out.strides(), p.out_strides);
  p.scale = static_cast<float>(a.scale ? *a.scale : 1.0 / std::sqrt(static_cast<double>(p.head_dim)));
  p.causal = a.causal;
  p.causal_offset = a.causal_offset;
  if (a.mask) {
    DimVector full{p.batch, p.heads_q, p.len_q, p.len_kv};
    AOTIRT_ASSIGN_OR_RETURN(DimVector ms, broadcast_strides(a.mask->sizes(), a.mask->strides(), full));
    copy4(ms, p.mask_strides);
    p.mask = a.mask->data_ptr();
    p.mask_kind = a.mask->dtype() == DType::kBool ? kCudaMaskBool : kCudaMaskAdditive;
    p.mask_dtype = static_cast<int>(a.mask->dtype());
  }
  if (lse) {
    p.lse = lse;
    for (int i = 0; i < 3; ++i) p.lse_strides[i] = lse_strides[i];
  }
  if (p.batch * p.heads_q * p.len_q == 0) return Status();
  AOTIRT_ENSURE(p.q && p.k && p.v && p.out, kInvalidArgument, "query, key, value or the output has no data");

  AOTIRT_ASSIGN_OR_RETURN(CudaDevice * dev, cuda_device(scope.device()));
  const size_t max_smem = dev->properties().shared_memory_per_block_optin;
  const int sms = std::max(dev->properties().sm_count, 1);
  if (cuda_attention_tc_enabled() && cuda_attention_tc_eligible(p, dev->properties().major)) {
    ShimProfileScope profile("aoti_torch_cuda__scaled_dot_product_*_attention / tensor-core kernel launch");
    // A mask over several key tiles is summed up per tile first, so that
    // the kernel skips what it hides (cuda_attention_tc.cu).
    TensorImpl hold;
    if (const size_t bytes = cuda_attention_mask_tiles_bytes(p)) {
      AOTIRT_ASSIGN_OR_RETURN(void* map, cuda_op_workspace(scope.device(), scope.stream(), bytes, &hold));
      AOTIRT_CUDA_RETURN_IF_ERROR(cuda_launch_attention_mask_tiles(p, map, scope.stream()));
    }
    AOTIRT_CUDA_RETURN_IF_ERROR(cuda_launch_attention_tc(p, sms, max_smem, scope.stream()));
    return Status();
  }
  if (cuda_attention_tc_enabled() && cuda_attention_f32_tc_eligible(p, dev->properties().major)) {
    ShimProfileScope profile("aoti_torch_cuda__scaled_dot_product_*_attention / float32 tensor-core kernel launch");
    AOTIRT_CUDA_RETURN_IF_ERROR(cuda_launch_attention_f32_tc(p, max_smem, scope.stream()));
    return Status();
  }
  if (cuda_attention_gemm_enabled() && cuda_attention_gemm_eligible(p)) {
    Status s = run_attention_gemm(p, scope);
    if (s.ok()) return s;
    // cuBLASLt had no plan for these strides. Whatever was queued only wrote
    // the score buffer; the fused kernel below writes every output itself.
    AOTIRT_LOG(kDebug, "attention: GEMM path unavailable, using the fused kernel: {}", s.to_string());
  }
  TensorImpl workspace;
  p.dependent_launch = cuda_dependent_launches(*dev);
  const int splits = cuda_attention_key_splits(p, sms);
  if (splits > 1) {
    const int64_t floats = splits * p.batch * p.heads_q * p.len_q * (p.head_dim_v + 1);
    AOTIRT_ASSIGN_OR_RETURN(workspace, cuda_empty_contiguous(DimVector{floats}, DType::kFloat32, scope.device()));
    p.num_splits = splits;
    p.workspace = static_cast<float*>(workspace.data_ptr());
  }
  ShimProfileScope profile("aoti_torch_cuda__scaled_dot_product_*_attention / kernel launch");
  AOTIRT_CUDA_RETURN_IF_ERROR(cuda_launch_attention(p, max_smem, scope.stream()));
  return Status();
}

// Strides of torch.empty(B, L, H, Ev).transpose(1, 2).
DimVector bhle_transposed_strides(const DimVector& sizes) {
  const int64_t h = sizes[1], l = sizes[2], e = sizes[3];
  return DimVector{l * h * e, e, h * e, 1};
}

// The meta function's alloc_with_matching_layout: the result follows
// query's stride order (stable, largest stride first).
DimVector matching_layout_strides(const TensorImpl& q, const DimVector& sizes) {
  if (q.sizes() == sizes) return ops::empty_like_strides(q);
  std::vector<int> order(4);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int x, int y) { return q.strides()[x] > q.strides()[y]; });
  DimVector strides;
  strides.resize(4);
  int64_t acc = 1;
  for (int pos = 3; pos >= 0; --pos) {
    strides[order[pos]] = acc;
    acc *= sizes[order[pos]];
  }
  return strides;
}

// Zero-filled host tensor standing in for an unused philox seed/offset.
Result<TensorImpl> host_zeros(const DimVector& sizes, DType dtype) {
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl t, empty_contiguous(sizes, dtype, DeviceId{}));
  if (t.nbytes()) std::memset(t.data_ptr(), 0, t.nbytes());
  return t;
}

// The outputs of one call, held until every one of them exists and then
// handed out together: a failure part-way (a host allocation, say) frees
// what was made instead of leaving handles the caller never sees.
class Outputs {
 public:
  Outputs() { held_.reserve(9); }
  // Keeps |t| for |ret| when the caller asked for it.
  void add(AtenTensorHandle* ret, TensorImpl t) {
    if (ret) held_.emplace_back(ret, std::make_unique<TensorImpl>(std::move(t)));
  }
  void commit() {
    for (auto& [ret, t] : held_) *ret = handle_of(t.release());
    held_.clear();
  }

 private:
  std::vector<std::pair<AtenTensorHandle*, std::unique_ptr<TensorImpl>>> held_;
};

Result<AttentionArgs> read_args(AtenTensorHandle q, AtenTensorHandle k, AtenTensorHandle v, AtenTensorHandle* mask,
                                double dropout_p, int32_t is_causal, double* scale) {
  AttentionArgs a;
  AOTIRT_ASSIGN_OR_RETURN(a.q, ops::require_tensor(q, "query"));
  AOTIRT_ASSIGN_OR_RETURN(a.k, ops::require_tensor(k, "key"));
  AOTIRT_ASSIGN_OR_RETURN(a.v, ops::require_tensor(v, "value"));
  a.mask = ops::optional_tensor(mask);
  a.dropout_p = dropout_p;
  a.causal = is_causal != 0;
  a.scale = scale;
  return a;
}

Status flash(AtenTensorHandle query, AtenTensorHandle key, AtenTensorHandle value, double dropout_p,
             int32_t is_causal, int32_t return_debug_mask, double* scale, AtenTensorHandle* ret0,
             AtenTensorHandle* ret1, AtenTensorHandle* ret2, AtenTensorHandle* ret3, int64_t* ret4, int64_t* ret5,
             AtenTensorHandle* ret6, AtenTensorHandle* ret7, AtenTensorHandle* ret8) {
  AOTIRT_ASSIGN_OR_RETURN(AttentionArgs a, read_args(query, key, value, nullptr, dropout_p, is_causal, scale));
  AOTIRT_ASSIGN_OR_RETURN(std::unique_ptr<CudaOpScope> scope, CudaOpScope::enter(*a.q, "query"));
  AOTIRT_RETURN_IF_ERROR(check_args(a, *scope));
  const int64_t B = a.q->sizes()[0], H = a.q->sizes()[1], L = a.q->sizes()[2], E = a.q->sizes()[3];
  const int64_t S = a.k->sizes()[2];
  AOTIRT_ENSURE(a.v->sizes()[3] == E, kInvalidArgument,
                "flash attention needs value's head dim ({}) to equal query's ({})", a.v->sizes()[3], E);
  const int dev = scope->device();
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl out, cuda_empty(a.q->sizes(), ops::empty_like_strides(*a.q), a.q->dtype(), dev));
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl lse, cuda_empty_contiguous(DimVector{B, H, L}, DType::kFloat32, dev));
  const int64_t lse_strides[3] = {H * L, L, 1};
  AOTIRT_RETURN_IF_ERROR(run_attention(a, *scope, out, static_cast<float*>(lse.data_ptr()), lse_strides));

  TensorImpl debug;
  if (return_debug_mask) {
    const int64_t block_c = E > 64 ? 128 : 256;
    int64_t max_k = (L + block_c - 1) / block_c;
    if (S <= 128)
      max_k = 128;
    else if (S <= 256)
      max_k = 256;
    AOTIRT_ASSIGN_OR_RETURN(debug, cuda_empty_contiguous(DimVector{B, H, L, max_k}, a.q->dtype(), dev));
  } else {
    AOTIRT_ASSIGN_OR_RETURN(debug, cuda_empty_contiguous(DimVector{0}, a.q->dtype(), dev));
  }
  if (debug.numel()) {
    AOTIRT_ASSIGN_OR_RETURN(Device * d, get_device(debug.device()));
    AOTIRT_RETURN_IF_ERROR(d->zero(debug));
  }
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl seed, host_zeros(DimVector{2}, DType::kUInt64));
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl offset, host_zeros(DimVector{}, DType::kUInt64));
  Outputs outs;
  outs.add(ret0, std::move(out));
  outs.add(ret1, std::move(lse));
  outs.add(ret2, TensorImpl());
  outs.add(ret3, TensorImpl());
  outs.add(ret6, std::move(seed));
  outs.add(ret7, std::move(offset));
  outs.add(ret8, std::move(debug));
  outs.commit();
  if (ret4) *ret4 = L;
  if (ret5) *ret5 = S;
  return Status();
}

Status efficient(AtenTensorHandle query, AtenTensorHandle key, AtenTensorHandle value, AtenTensorHandle* attn_bias,
                 int32_t compute_log_sumexp, double dropout_p, int32_t is_causal, double* scale,
                 AtenTensorHandle* ret0, AtenTensorHandle* ret1, AtenTensorHandle* ret2, AtenTensorHandle* ret3) {
  AOTIRT_ASSIGN_OR_RETURN(AttentionArgs a, read_args(query, key, value, attn_bias, dropout_p, is_causal, scale));
  AOTIRT_ASSIGN_OR_RETURN(std::unique_ptr<CudaOpScope> scope, CudaOpScope::enter(*a.q, "query"));
  AOTIRT_RETURN_IF_ERROR(check_args(a, *scope));
  const int64_t B = a.q->sizes()[0], H = a.q->sizes()[1], L = a.q->sizes()[2], Ev = a.v->sizes()[3];
  const int dev = scope->device();
  DimVector out_sizes{B, H, L, Ev};
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl out, cuda_empty(out_sizes, bhle_transposed_strides(out_sizes), a.q->dtype(), dev));
  const int64_t lse_len = compute_log_sumexp ? (L + 31) / 32 * 32 : 0;
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl lse, cuda_empty_contiguous(DimVector{B, H, lse_len}, DType::kFloat32, dev));
  const int64_t lse_strides[3] = {H * lse_len, lse_len, 1};
  AOTIRT_RETURN_IF_ERROR(run_attention(a, *scope, out, compute_log_sumexp ? static_cast<float*>(lse.data_ptr()) : nullptr,
                                       lse_strides));
  if (lse_len > L) {
    // The padding past L is never read by torch; keep it deterministic.
    TensorImpl pad(lse.storage(), DType::kFloat32, DimVector{B, H, lse_len - L}, DimVector{H * lse_len, lse_len, 1}, L);
    AOTIRT_ASSIGN_OR_RETURN(Device * d, get_device(lse.device()));
    AOTIRT_RETURN_IF_ERROR(d->zero(pad));
  }
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl seed, host_zeros(DimVector{}, DType::kInt64));
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl offset, host_zeros(DimVector{}, DType::kInt64));
  Outputs outs;
  outs.add(ret0, std::move(out));
  outs.add(ret1, std::move(lse));
  outs.add(ret2, std::move(seed));
  outs.add(ret3, std::move(offset));
  outs.commit();
  return Status();
}

Status cudnn_attention(AtenTensorHandle query, AtenTensorHandle key, AtenTensorHandle value,
                       AtenTensorHandle* attn_bias, int32_t compute_log_sumexp, double dropout_p, int32_t is_causal,
                       int32_t return_debug_mask, double* scale, AtenTensorHandle* ret0, AtenTensorHandle* ret1,
                       AtenTensorHandle* ret2, AtenTensorHandle* ret3, int64_t* ret4, int64_t* ret5,
                       AtenTensorHandle* ret6, AtenTensorHandle* ret7, AtenTensorHandle* ret8) {
  AOTIRT_ASSIGN_OR_RETURN(AttentionArgs a, read_args(query, key, value, attn_bias, dropout_p, is_causal, scale));
  AOTIRT_ASSIGN_OR_RETURN(std::unique_ptr<CudaOpScope> scope, CudaOpScope::enter(*a.q, "query"));
  AOTIRT_RETURN_IF_ERROR(check_args(a, *scope));
  const int64_t B = a.q->sizes()[0], H = a.q->sizes()[1], L = a.q->sizes()[2], Ev = a.v->sizes()[3];
  const int64_t S = a.k->sizes()[2];
  const int dev = scope->device();
  DimVector out_sizes{B, H, L, Ev};
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl out,
                          cuda_empty(out_sizes, matching_layout_strides(*a.q, out_sizes), a.q->dtype(), dev));
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl lse, cuda_empty_contiguous(DimVector{B, H, L, 1}, DType::kFloat32, dev));
  const int64_t lse_strides[3] = {H * L, L, 1};
  AOTIRT_RETURN_IF_ERROR(run_attention(a, *scope, out, static_cast<float*>(lse.data_ptr()), lse_strides));
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl seed, host_zeros(DimVector{}, DType::kInt64));
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl offset, host_zeros(DimVector{}, DType::kInt64));
  Outputs outs;
  outs.add(ret0, std::move(out));
  outs.add(ret1, std::move(lse));
  outs.add(ret2, TensorImpl());
  outs.add(ret3, TensorImpl());
  outs.add(ret6, std::move(seed));
  outs.add(ret7, std::move(offset));
  outs.add(ret8, TensorImpl());
  outs.commit();
  if (ret4) *ret4 = L;
  if (ret5) *ret5 = S;
  return Status();
}

// [B, L, H, E] (the layout of torch's flash and memory-efficient forwards)
// viewed as the kernel's [B, H, L, E]: dims 1 and 2 swap, nothing moves.
TensorImpl swap_seq_heads(const TensorImpl& t) {
  const DimVector& s = t.sizes();
  const DimVector& st = t.strides();
  return TensorImpl(t.storage(), t.dtype(), DimVector{s[0], s[2], s[1], s[3]}, DimVector{st[0], st[2], st[1], st[3]},
                    t.storage_offset());
}

// torch's fused kernels read features with unit stride and refuse anything
// else; aotirt's would not mind, but the errors stay torch's.
Status check_last_dim_contiguous(const TensorImpl& t, const char* what) {
  AOTIRT_ENSURE(t.dim() > 0 && t.strides()[t.dim() - 1] == 1, kInvalidArgument,
                "{} ({}) must have a contiguous last dimension", what, ops::layout_str(t));
  return Status();
}

// Flash attention's causal mask is aligned to the bottom-right corner: query
// i of |len_q| sees keys up to i + len_kv - len_q. aotirt's kernels take that
// offset when it is not negative; with more queries than keys the first ones
// would see no key at all, which aotirt does not implement.
Result<int64_t> bottom_right_offset(int64_t len_q, int64_t len_kv, const char* what) {
  AOTIRT_ENSURE(len_kv >= len_q, kUnimplemented,
                "{} with more queries ({}) than keys ({}) is not supported (the first queries would see no key)",
                what, len_q, len_kv);
  return len_kv - len_q;
}

// Zeroed device tensors standing in for flash attention's rng_state (uint64
// [2]) and unused (uint64 []) outputs: no dropout, so no generator state.
Status flash_rng_outputs(const CudaOpScope& scope, TensorImpl* rng_state, TensorImpl* unused) {
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl buf, cuda_empty_contiguous(DimVector{3}, DType::kUInt64, scope.device()));
  AOTIRT_RETURN_IF_ERROR(cuda_zero(scope.device(), scope.stream(), buf));
  *rng_state = TensorImpl(buf.storage(), DType::kUInt64, DimVector{2}, DimVector{1}, buf.storage_offset());
  *unused = TensorImpl(buf.storage(), DType::kUInt64, DimVector{}, DimVector{}, buf.storage_offset() + 2);
  return Status();
}

// Reads a [B + 1] int32 offsets tensor of the packed layout into host memory.
Result<std::vector<int32_t>> read_offsets(const TensorImpl& t, const char* what, const CudaOpScope& scope) {
  AOTIRT_RETURN_IF_ERROR(scope.check_same_device(t, what));
  AOTIRT_ENSURE(t.dtype() == DType::kInt32, kInvalidArgument, "{} must have dtype int32, not {}", what,
                dtype_name(t.dtype()));
  AOTIRT_ENSURE(t.dim() == 1 && t.numel() >= 1 && t.strides()[0] == 1, kInvalidArgument,
                "{} must be a contiguous 1-d tensor of batch + 1 offsets, not {}", what, ops::layout_str(t));
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl host, empty_contiguous(t.sizes(), DType::kInt32, DeviceId{}));
  // Synchronises the stream: the host needs the offsets to cut the packed
  // tensors into sequences.
  AOTIRT_RETURN_IF_ERROR(cuda_copy(scope.device(), scope.stream(), host, t, false));
  const int32_t* h = static_cast<const int32_t*>(host.data_ptr());
  return std::vector<int32_t>(h, h + t.numel());
}

// torch's rules for the mask of its flash forward: windows at least the key
// length are none; causal means no right window; one query row is never
// masked by the diagonal. Sliding windows are not implemented.
Result<bool> flash_causal(int32_t is_causal, const int64_t* window_size_left, const int64_t* window_size_right,
                          int64_t max_q, int64_t max_k) {
  int64_t left = window_size_left ? *window_size_left : -1;
  int64_t right = window_size_right ? *window_size_right : -1;
  if (left >= max_k) left = -1;
  if (right >= max_k) right = -1;
  const bool causal = is_causal != 0 && max_q != 1;
  if (causal) right = 0;
  AOTIRT_ENSURE(left < 0, kUnimplemented, "window_size_left={} (sliding-window attention) is not supported", left);
  AOTIRT_ENSURE(right <= 0, kUnimplemented, "window_size_right={} (sliding-window attention) is not supported",
                right);
  // A right window of 0 without a left one is the causal mask.
  return right == 0;
}

Status flash_forward(AtenTensorHandle query, AtenTensorHandle key, AtenTensorHandle value,
                     AtenTensorHandle* cum_seq_q, AtenTensorHandle* cum_seq_k, int64_t max_q, int64_t max_k,
                     double dropout_p, int32_t is_causal, int32_t return_debug_mask, double* scale,
                     int64_t* window_size_left, int64_t* window_size_right, AtenTensorHandle* seqused_k,
                     AtenTensorHandle* alibi_slopes, AtenTensorHandle* ret0, AtenTensorHandle* ret1,
                     AtenTensorHandle* ret2, AtenTensorHandle* ret3, AtenTensorHandle* ret4) {
  AOTIRT_ASSIGN_OR_RETURN(const TensorImpl* q, ops::require_tensor(query, "query"));
  AOTIRT_ASSIGN_OR_RETURN(const TensorImpl* k, ops::require_tensor(key, "key"));
  AOTIRT_ASSIGN_OR_RETURN(const TensorImpl* v, ops::require_tensor(value, "value"));
  const TensorImpl* cq = ops::optional_tensor(cum_seq_q);
  const TensorImpl* ck = ops::optional_tensor(cum_seq_k);
  AOTIRT_ASSIGN_OR_RETURN(std::unique_ptr<CudaOpScope> scope, CudaOpScope::enter(*q, "query"));
  AOTIRT_RETURN_IF_ERROR(scope->check_same_device(*k, "key"));
  AOTIRT_RETURN_IF_ERROR(scope->check_same_device(*v, "value"));
  AOTIRT_ENSURE(dropout_p == 0.0, kUnimplemented,
                "dropout_p={} is not supported: aotirt runs inference graphs (dropout_p must be 0)", dropout_p);
  AOTIRT_ENSURE(!return_debug_mask, kInvalidArgument,
                "return_debug_mask=true needs dropout_p > 0 (torch returns the softmax only with dropout)");
  AOTIRT_ENSURE(ops::optional_tensor(seqused_k) == nullptr, kUnimplemented, "seqused_k is not supported");
  AOTIRT_ENSURE(ops::optional_tensor(alibi_slopes) == nullptr, kUnimplemented, "alibi_slopes is not supported");
  AOTIRT_ENSURE((cq == nullptr) == (ck == nullptr), kInvalidArgument,
                "cum_seq_q and cum_seq_k are given together or not at all (cum_seq_q {}, cum_seq_k {})",
                cq ? "given" : "absent", ck ? "given" : "absent");
  const bool packed = cq != nullptr;
  const DType dt = q->dtype();
  AOTIRT_ENSURE(dt == DType::kFloat16 || dt == DType::kBFloat16, kInvalidArgument,
                "flash attention supports float16 and bfloat16, not query dtype {}", dtype_name(dt));
  AOTIRT_RETURN_IF_ERROR(ops::check_same_dtype(*q, "query", *k, "key"));
  AOTIRT_RETURN_IF_ERROR(ops::check_same_dtype(*q, "query", *v, "value"));
  const int64_t rank = packed ? 3 : 4;
  AOTIRT_RETURN_IF_ERROR(ops::check_dim(*q, rank, "query"));
  AOTIRT_RETURN_IF_ERROR(ops::check_dim(*k, rank, "key"));
  AOTIRT_RETURN_IF_ERROR(ops::check_dim(*v, rank, "value"));
  AOTIRT_RETURN_IF_ERROR(check_last_dim_contiguous(*q, "query"));
  AOTIRT_RETURN_IF_ERROR(check_last_dim_contiguous(*k, "key"));
  AOTIRT_RETURN_IF_ERROR(check_last_dim_contiguous(*v, "value"));
  // Dense: [B, L, H, E]; packed: [total, H, E]. Heads and features are the
  // last two dims either way.
  const int64_t H = q->sizes()[rank - 2], E = q->sizes()[rank - 1];
  const int64_t Hk = k->sizes()[rank - 2];
  AOTIRT_ENSURE(k->sizes()[rank - 1] == E && v->sizes()[rank - 1] == E && v->sizes()[rank - 2] == Hk &&
                    v->sizes()[rank - 3] == k->sizes()[rank - 3] && (packed || k->sizes()[0] == q->sizes()[0]),
                kInvalidArgument, "query {}, key {} and value {} do not fit flash attention's {}",
                shape_str(*q), shape_str(*k), shape_str(*v),
                packed ? "[Tq, H, E], [Tk, Hk, E], [Tk, Hk, E]" : "[B, L, H, E], [B, S, Hk, E], [B, S, Hk, E]");
  AOTIRT_ENSURE(E <= 256, kInvalidArgument, "flash attention supports head dims up to 256, not {}", E);
  // torch's op refuses these too: its SDPA entry pads the heads before it.
  AOTIRT_ENSURE(E % 8 == 0, kInvalidArgument, "flash attention needs a head dim that is a multiple of 8, not {}", E);
  AOTIRT_ENSURE(Hk > 0 && H % Hk == 0, kInvalidArgument,
                "query has {} heads, which is not a multiple of key/value's {}", H, Hk);
  AOTIRT_ASSIGN_OR_RETURN(bool causal, flash_causal(is_causal, window_size_left, window_size_right,
                                                    packed ? max_q : q->sizes()[1],
                                                    packed ? max_k : k->sizes()[1]));

  const int dev = scope->device();
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl out, cuda_empty(q->sizes(), ops::empty_like_strides(*q), dt, dev));
  TensorImpl lse;
  if (!packed) {
    const int64_t B = q->sizes()[0], L = q->sizes()[1], S = k->sizes()[1];
    AOTIRT_ASSIGN_OR_RETURN(lse, cuda_empty_contiguous(DimVector{B, H, L}, DType::kFloat32, dev));
    if (B * H * L > 0) {
      AOTIRT_ENSURE(S > 0, kUnimplemented, "flash attention without keys (key {}) is not supported",
                    shape_str(*k));
      const TensorImpl qv = swap_seq_heads(*q), kv = swap_seq_heads(*k), vv = swap_seq_heads(*v);
      AttentionArgs a;
      a.q = &qv;
      a.k = &kv;
      a.v = &vv;
      a.causal = causal;
      if (causal) {
        AOTIRT_ASSIGN_OR_RETURN(a.causal_offset, bottom_right_offset(L, S, "is_causal"));
      }
      a.scale = scale;
      AOTIRT_RETURN_IF_ERROR(check_args(a, *scope));
      const int64_t lse_strides[3] = {H * L, L, 1};
      AOTIRT_RETURN_IF_ERROR(
          run_attention(a, *scope, swap_seq_heads(out), static_cast<float*>(lse.data_ptr()), lse_strides));
    }
  } else {
    const int64_t Tq = q->sizes()[0], Tk = k->sizes()[0];
    AOTIRT_ENSURE(cq->numel() == ck->numel(), kInvalidArgument,
                  "cum_seq_q ({} offsets) and cum_seq_k ({} offsets) disagree on the batch", cq->numel(),
                  ck->numel());
    AOTIRT_ASSIGN_OR_RETURN(std::vector<int32_t> oq, read_offsets(*cq, "cum_seq_q", *scope));
    AOTIRT_ASSIGN_OR_RETURN(std::vector<int32_t> ok, read_offsets(*ck, "cum_seq_k", *scope));
    AOTIRT_ASSIGN_OR_RETURN(lse, cuda_empty_contiguous(DimVector{H, Tq}, DType::kFloat32, dev));
    float* lse_base = static_cast<float*>(lse.data_ptr());
    const DimVector& qs = q->strides();
    const DimVector& ks = k->strides();
    const DimVector& vs = v->strides();
    const DimVector& os = out.strides();
    // One kernel launch per sequence, each on [1, H, len, E] views of the
    // packed tensors.
    for (size_t b = 0; b + 1 < oq.size(); ++b) {
      const int64_t q0 = oq[b], q1 = oq[b + 1], k0 = ok[b], k1 = ok[b + 1];
      AOTIRT_ENSURE(0 <= q0 && q0 <= q1 && q1 <= Tq, kInvalidArgument,
                    "cum_seq_q's offsets {} and {} of sequence {} do not lie in order within query's {} rows", q0,
                    q1, b, Tq);
      AOTIRT_ENSURE(0 <= k0 && k0 <= k1 && k1 <= Tk, kInvalidArgument,
                    "cum_seq_k's offsets {} and {} of sequence {} do not lie in order within key's {} rows", k0, k1,
                    b, Tk);
      const int64_t lq = q1 - q0, lk = k1 - k0;
      if (lq == 0 || H == 0) continue;
      AOTIRT_ENSURE(lk > 0, kUnimplemented, "sequence {} has {} queries and no keys (cum_seq_k), not supported", b,
                    lq);
      auto seq_view = [](const TensorImpl& t, const DimVector& st, int64_t first, int64_t len) {
        return TensorImpl(t.storage(), t.dtype(), DimVector{1, t.sizes()[1], len, t.sizes()[2]},
                          DimVector{st[0], st[1], st[0], st[2]}, t.storage_offset() + first * st[0]);
      };
      const TensorImpl qv = seq_view(*q, qs, q0, lq), kv = seq_view(*k, ks, k0, lk), vv = seq_view(*v, vs, k0, lk);
      AttentionArgs a;
      a.q = &qv;
      a.k = &kv;
      a.v = &vv;
      a.causal = causal;
      if (causal) {
        AOTIRT_ASSIGN_OR_RETURN(a.causal_offset, bottom_right_offset(lq, lk, "is_causal"));
      }
      a.scale = scale;
      AOTIRT_RETURN_IF_ERROR(check_args(a, *scope));
      const int64_t lse_strides[3] = {H * Tq, Tq, 1};
      AOTIRT_RETURN_IF_ERROR(run_attention(a, *scope, seq_view(out, os, q0, lq), lse_base + q0, lse_strides));
    }
  }
  TensorImpl rng_state, unused;
  AOTIRT_RETURN_IF_ERROR(flash_rng_outputs(*scope, &rng_state, &unused));
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl debug, cuda_empty_contiguous(DimVector{0}, dt, dev));
  Outputs outs;
  outs.add(ret0, std::move(out));
  outs.add(ret1, std::move(lse));
  outs.add(ret2, std::move(rng_state));
  outs.add(ret3, std::move(unused));
  outs.add(ret4, std::move(debug));
  outs.commit();
  return Status();
}

// torch's memory-efficient forward takes its bias as [B, H, L, S] exactly
// (an expanded view broadcasts with zero strides); no implicit broadcasting.
Status check_efficient_bias(const TensorImpl& bias, const TensorImpl& q, const DimVector& full) {
  AOTIRT_ENSURE(bias.dtype() == q.dtype(), kInvalidArgument, "bias has dtype {}, which should match query's {}",
                dtype_name(bias.dtype()), dtype_name(q.dtype()));
  AOTIRT_ENSURE(bias.dim() == 4 && bias.sizes() == full, kInvalidArgument,
                "bias {} must be [B, H, L, S] = {} (expand it to broadcast)", shape_str(bias),
                dims_to_string(full.data(), full.size()));
  return check_last_dim_contiguous(bias, "bias");
}

Status efficient_forward(AtenTensorHandle query, AtenTensorHandle key, AtenTensorHandle value,
                         AtenTensorHandle* bias_handle, AtenTensorHandle* cu_seqlens_q,
                         AtenTensorHandle* cu_seqlens_k, double dropout_p, int64_t custom_mask_type,
                         int32_t compute_log_sumexp, double* scale, AtenTensorHandle* seqlen_k,
                         int64_t* window_size, AtenTensorHandle* ret0, AtenTensorHandle* ret1,
                         AtenTensorHandle* ret2, AtenTensorHandle* ret3, int64_t* ret4, int64_t* ret5) {
  AOTIRT_ASSIGN_OR_RETURN(const TensorImpl* q, ops::require_tensor(query, "query"));
  AOTIRT_ASSIGN_OR_RETURN(const TensorImpl* k, ops::require_tensor(key, "key"));
  AOTIRT_ASSIGN_OR_RETURN(const TensorImpl* v, ops::require_tensor(value, "value"));
  const TensorImpl* bias = ops::optional_tensor(bias_handle);
  AOTIRT_ASSIGN_OR_RETURN(std::unique_ptr<CudaOpScope> scope, CudaOpScope::enter(*q, "query"));
  AOTIRT_ENSURE(ops::optional_tensor(cu_seqlens_q) == nullptr && ops::optional_tensor(cu_seqlens_k) == nullptr,
                kUnimplemented, "cu_seqlens_q/cu_seqlens_k (packed variable-length sequences) are not supported");
  AOTIRT_ENSURE(ops::optional_tensor(seqlen_k) == nullptr, kUnimplemented, "seqlen_k is not supported");
  AOTIRT_ENSURE(!window_size || *window_size <= 0, kUnimplemented,
                "window_size={} (sliding-window attention) is not supported", window_size ? *window_size : 0);
  AOTIRT_ENSURE(dropout_p == 0.0, kUnimplemented,
                "dropout_p={} is not supported: aotirt runs inference graphs (dropout_p must be 0)", dropout_p);
  AOTIRT_ENSURE(custom_mask_type >= 0 && custom_mask_type <= 2, kInvalidArgument,
                "custom_mask_type must be 0 (none), 1 (causal from the top-left) or 2 (from the bottom-right), "
                "not {}", custom_mask_type);
  AOTIRT_RETURN_IF_ERROR(ops::check_dim(*q, 4, "query"));
  AOTIRT_RETURN_IF_ERROR(ops::check_dim(*k, 4, "key"));
  AOTIRT_RETURN_IF_ERROR(ops::check_dim(*v, 4, "value"));
  const DimVector& qs = q->sizes();
  const DimVector& ks = k->sizes();
  const DimVector& vs = v->sizes();
  AOTIRT_ENSURE(ks[0] == qs[0] && vs[0] == qs[0] && vs[1] == ks[1] && ks[2] == qs[2] && vs[2] == qs[2] &&
                    ks[3] == qs[3],
                kInvalidArgument,
                "query {}, key {} and value {} do not fit [B, L, H, E], [B, S, H, E], [B, S, H, Ev]", shape_str(*q),
                shape_str(*k), shape_str(*v));
  AOTIRT_RETURN_IF_ERROR(check_last_dim_contiguous(*q, "query"));
  AOTIRT_RETURN_IF_ERROR(check_last_dim_contiguous(*k, "key"));
  AOTIRT_RETURN_IF_ERROR(check_last_dim_contiguous(*v, "value"));
  const int64_t B = qs[0], L = qs[1], H = qs[2], S = ks[1], Ev = vs[3];
  const int dev = scope->device();
  const TensorImpl qv = swap_seq_heads(*q), kv = swap_seq_heads(*k), vv = swap_seq_heads(*v);
  AttentionArgs a;
  a.q = &qv;
  a.k = &kv;
  a.v = &vv;
  a.scale = scale;
  if (bias) {
    AOTIRT_RETURN_IF_ERROR(check_efficient_bias(*bias, *q, DimVector{B, H, L, S}));
    a.mask = bias;
  }
  AOTIRT_RETURN_IF_ERROR(check_args(a, *scope));

  const DimVector out_sizes{B, L, H, Ev};
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl out, cuda_empty_contiguous(out_sizes, q->dtype(), dev));
  const int64_t lse_len = compute_log_sumexp ? (L + 31) / 32 * 32 : 0;
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl lse, cuda_empty_contiguous(DimVector{B, H, lse_len}, DType::kFloat32, dev));
  if (B * H * L > 0) {
    AOTIRT_ENSURE(S > 0, kUnimplemented, "memory-efficient attention without keys (key {}) is not supported",
                  shape_str(*k));
    // 1: query i sees keys 0..i; 2: keys 0..i + S - L.
    a.causal = custom_mask_type != 0;
    if (custom_mask_type == 2) {
      AOTIRT_ASSIGN_OR_RETURN(a.causal_offset, bottom_right_offset(L, S, "custom_mask_type=2"));
    }
    const int64_t lse_strides[3] = {H * lse_len, lse_len, 1};
    float* lse_ptr = compute_log_sumexp ? static_cast<float*>(lse.data_ptr()) : nullptr;
    AOTIRT_RETURN_IF_ERROR(run_attention(a, *scope, swap_seq_heads(out), lse_ptr, lse_strides));
  }
  if (B * H * lse_len > 0) {
    // Padding past L; with a bias, the rows it masks out entirely.
    AOTIRT_CUDA_RETURN_IF_ERROR(cuda_launch_attention_lse_finish(static_cast<float*>(lse.data_ptr()), B * H, L,
                                                                lse_len, bias != nullptr, scope->stream()));
  }
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl seed, host_zeros(DimVector{}, DType::kInt64));
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl offset, host_zeros(DimVector{}, DType::kInt64));
  Outputs outs;
  outs.add(ret0, std::move(out));
  outs.add(ret1, std::move(lse));
  outs.add(ret2, std::move(seed));
  outs.add(ret3, std::move(offset));
  outs.commit();
  if (ret4) *ret4 = L;
  if (ret5) *ret5 = S;
  return Status();
}

}  // namespace
}  // namespace aotirt

using namespace aotirt;

extern "C" {

AOTITorchError aoti_torch_cuda__scaled_dot_product_flash_attention(
    AtenTensorHandle query, AtenTensorHandle key, AtenTensorHandle value, double dropout_p, int32_t is_causal,
    int32_t return_debug_mask, double* scale, AtenTensorHandle* ret0, AtenTensorHandle* ret1, AtenTensorHandle* ret2,
    AtenTensorHandle* ret3, int64_t* ret4, int64_t* ret5, AtenTensorHandle* ret6, AtenTensorHandle* ret7,
    AtenTensorHandle* ret8) noexcept {
  return shim_call(__func__, [&]() -> Status {
    return flash(query, key, value, dropout_p, is_causal, return_debug_mask, scale, ret0, ret1, ret2, ret3, ret4, ret5,
                 ret6, ret7, ret8);
  });
}

AOTITorchError aoti_torch_cuda__scaled_dot_product_efficient_attention(
    AtenTensorHandle query, AtenTensorHandle key, AtenTensorHandle value, AtenTensorHandle* attn_bias,
    int32_t compute_log_sumexp, double dropout_p, int32_t is_causal, double* scale, AtenTensorHandle* ret0,
    AtenTensorHandle* ret1, AtenTensorHandle* ret2, AtenTensorHandle* ret3) noexcept {
  return shim_call(__func__, [&]() -> Status {
    return efficient(query, key, value, attn_bias, compute_log_sumexp, dropout_p, is_causal, scale, ret0, ret1, ret2,
                     ret3);
  });
}

AOTITorchError aoti_torch_cuda__scaled_dot_product_cudnn_attention(
    AtenTensorHandle query, AtenTensorHandle key, AtenTensorHandle value, AtenTensorHandle* attn_bias,
    int32_t compute_log_sumexp, double dropout_p, int32_t is_causal, int32_t return_debug_mask, double* scale,
    AtenTensorHandle* ret0, AtenTensorHandle* ret1, AtenTensorHandle* ret2, AtenTensorHandle* ret3, int64_t* ret4,
    int64_t* ret5, AtenTensorHandle* ret6, AtenTensorHandle* ret7, AtenTensorHandle* ret8) noexcept {
  return shim_call(__func__, [&]() -> Status {
    return cudnn_attention(query, key, value, attn_bias, compute_log_sumexp, dropout_p, is_causal, return_debug_mask,
                           scale, ret0, ret1, ret2, ret3, ret4, ret5, ret6, ret7, ret8);
  });
}

AOTITorchError aoti_torch_cuda__flash_attention_forward(
    AtenTensorHandle query, AtenTensorHandle key, AtenTensorHandle value, AtenTensorHandle* cum_seq_q,
    AtenTensorHandle* cum_seq_k, int64_t max_q, int64_t max_k, double dropout_p, int32_t is_causal,
    int32_t return_debug_mask, double* scale, int64_t* window_size_left, int64_t* window_size_right,
    AtenTensorHandle* seqused_k, AtenTensorHandle* alibi_slopes, AtenTensorHandle* ret0, AtenTensorHandle* ret1,
    AtenTensorHandle* ret2, AtenTensorHandle* ret3, AtenTensorHandle* ret4) noexcept {
  return shim_call(__func__, [&]() -> Status {
    return flash_forward(query, key, value, cum_seq_q, cum_seq_k, max_q, max_k, dropout_p, is_causal,
                         return_debug_mask, scale, window_size_left, window_size_right, seqused_k, alibi_slopes, ret0,
                         ret1, ret2, ret3, ret4);
  });
}

AOTITorchError aoti_torch_cuda__efficient_attention_forward(
    AtenTensorHandle query, AtenTensorHandle key, AtenTensorHandle value, AtenTensorHandle* bias,
    AtenTensorHandle* cu_seqlens_q, AtenTensorHandle* cu_seqlens_k, int64_t* max_seqlen_q, int64_t* max_seqlen_k,
    double dropout_p, int64_t custom_mask_type, int32_t compute_log_sumexp, double* scale,
    AtenTensorHandle* seqlen_k, int64_t* window_size, AtenTensorHandle* ret0, AtenTensorHandle* ret1,
    AtenTensorHandle* ret2, AtenTensorHandle* ret3, int64_t* ret4, int64_t* ret5) noexcept {
  // max_seqlen_q/k size only the packed layout, which is not implemented;
  // the dense one takes the lengths from the tensors, as torch does.
  (void)max_seqlen_q;
  (void)max_seqlen_k;
  return shim_call(__func__, [&]() -> Status {
    return efficient_forward(query, key, value, bias, cu_seqlens_q, cu_seqlens_k, dropout_p, custom_mask_type,
                             compute_log_sumexp, scale, seqlen_k, window_size, ret0, ret1, ret2, ret3, ret4, ret5);
  });
}

}  // extern "C"
