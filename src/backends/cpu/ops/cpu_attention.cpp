// CPU fallback for aten::_scaled_dot_product_flash_attention_for_cpu
// (inference only: dropout must be 0). Per (batch, head): scores = q k^T on
// BLAS, mask and causal cut, a max-subtracted softmax, then p v on BLAS.
// q, k and v are read in place when their rows are unit-stride.
// bfloat16/float16 run in float32, float64 in float64.
//
// Output layouts follow PyTorch's meta function, because the generated code
// indexes the returned tensors with the strides it saw at compile time: the
// output is laid out like torch.empty_like(query), and the logsumexp is a
// float32 [B, L, H] buffer viewed as [B, H, L].
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "core/host_copy.h"
#include "backends/cpu/ops/cpu_op_util.h"
#include "base/status.h"
#include "core/dtype.h"
#include "device/device.h"
#include "shim/common/shim_util.h"

using namespace aotirt;
using namespace aotirt::cpu_ops;

namespace {

struct AttentionShape {
  int64_t batch, heads, kv_heads, q_len, kv_len, head_dim;
};

// Converts one row of the mask, |n| elements |stride| apart, into additive
// form: bool masks keep (0) or drop (-inf); float masks are added as they are.
template <class T>
void load_mask_row(const char* base, DType dtype, int64_t stride, int64_t n, T* dst) {
  const int64_t step = stride * static_cast<int64_t>(dtype_size(dtype));
  const T neg_inf = -std::numeric_limits<T>::infinity();
  for (int64_t j = 0; j < n; ++j) {
    const char* p = base + j * step;
    switch (dtype) {
      case DType::kBool: dst[j] = *reinterpret_cast<const uint8_t*>(p) ? T(0) : neg_inf; break;
      case DType::kFloat32: dst[j] = static_cast<T>(*reinterpret_cast<const float*>(p)); break;
      case DType::kFloat64: dst[j] = static_cast<T>(*reinterpret_cast<const double*>(p)); break;
      case DType::kBFloat16:
        dst[j] = static_cast<T>(bf16_to_float(*reinterpret_cast<const uint16_t*>(p)));
        break;
      default: dst[j] = static_cast<T>(half_to_float(*reinterpret_cast<const uint16_t*>(p))); break;
    }
  }
}

struct AttentionArgs {
  AttentionShape shape;
  const TensorImpl* mask = nullptr;
  DimVector mask_strides;  // broadcast to [B, H, L, S]
  bool causal = false;
  double scale = 1.0;
};

// One of q, k, v as BLAS reads it: [B, H, rows, E] with unit-stride rows
// |row| elements apart (at least E, as BLAS wants), so that views such as
// the q/k/v slices of one packed projection need no copy.
template <class T>
struct RowsView {
  const T* data = nullptr;
  int64_t batch = 0, head = 0, row = 0;
  const T* at(int64_t b, int64_t h) const { return data + b * batch + h * head; }
};

// |out| receives [B,H,L,E] rows at |out_row_stride| (head and batch strides
// from |out_strides|); |lse| is float32 with strides [L*H, 1, H]. |work|
// holds |threads| blocks of L*S + S values.
//
// The (batch, head) pairs are split across the OpenMP threads when there
// are at least as many pairs as threads, each pair's products then on one
// thread (OpenBLAS's OpenMP build runs single-threaded inside a parallel
// region); with fewer pairs the pairs run in turn on threaded BLAS. One pair
// at a time on threaded BLAS left most of a thread idle in the small
// products of encoder attention (L = S = 128..256, E = 64).
template <class T>
void attention(const AttentionArgs& args, const RowsView<T>& q, const RowsView<T>& k, const RowsView<T>& v, T* out,
               const DimVector& out_strides, int64_t out_row_stride, float* lse, T* work, int threads) {
  const AttentionShape& s = args.shape;
  const int64_t L = s.q_len, S = s.kv_len, E = s.head_dim;
  const int64_t group = s.heads / s.kv_heads;
  const int64_t pairs = s.batch * s.heads;
  const char* mask_base = args.mask ? static_cast<const char*>(args.mask->data_ptr()) : nullptr;
  const int64_t mask_el = args.mask ? static_cast<int64_t>(dtype_size(args.mask->dtype())) : 0;
  const int64_t ldq = std::max<int64_t>(q.row, 1), ldk = std::max<int64_t>(k.row, 1);
  const int64_t ldv = std::max<int64_t>(v.row, 1);

  auto one_pair = [&](int64_t bh, T* scores, T* mask_row) {
    const T neg_inf = -std::numeric_limits<T>::infinity();
    const int64_t b = bh / s.heads, h = bh % s.heads;
    const int64_t kvh = h / group;  // grouped-query heads share a K/V head
    T* op = out + b * out_strides[0] + h * out_strides[1];
    gemm<T>(false, true, L, S, E, static_cast<T>(args.scale), q.at(b, h), ldq, k.at(b, kvh), ldk, T(0), scores,
            std::max<int64_t>(S, 1));
    for (int64_t i = 0; i < L; ++i) {
      T* row = scores + i * S;
      if (mask_base) {
        const char* mrow =
            mask_base + (b * args.mask_strides[0] + h * args.mask_strides[1] + i * args.mask_strides[2]) * mask_el;
        load_mask_row(mrow, args.mask->dtype(), args.mask_strides[3], S, mask_row);
#pragma omp simd
        for (int64_t j = 0; j < S; ++j) row[j] += mask_row[j];
      }
      // Top-left aligned: query i sees keys 0..i, whatever S is.
      if (args.causal)
        for (int64_t j = i + 1; j < S; ++j) row[j] = neg_inf;
      T max = neg_inf;
#pragma omp simd reduction(max : max)
      for (int64_t j = 0; j < S; ++j) max = row[j] > max ? row[j] : max;
      float* lse_at = lse + b * L * s.heads + h + i * s.heads;
      if (max == neg_inf) {
        // Every key is masked out: PyTorch's CPU kernel yields zeros and a
        // logsumexp of 0 rather than NaN.
        std::fill(row, row + S, T(0));
        *lse_at = 0.0f;
        continue;
      }
      T sum = 0;
      for (int64_t j = 0; j < S; ++j) {
        row[j] = std::exp(row[j] - max);
        sum += row[j];
      }
      const T inv = T(1) / sum;
#pragma omp simd
      for (int64_t j = 0; j < S; ++j) row[j] *= inv;
      *lse_at = static_cast<float>(max + std::log(sum));
    }
    // out_bh [L, E] = p [L, S] @ v_bh [S, E]
    gemm<T>(false, false, L, E, S, T(1), scores, std::max<int64_t>(S, 1), v.at(b, kvh), ldv, T(0), op,
            out_row_stride);
  };

  const int64_t block = L * S + S;
  if (threads > 1) {
#pragma omp parallel num_threads(threads)
    {
      T* mine = work + static_cast<int64_t>(omp_get_thread_num()) * block;
#pragma omp for schedule(static)
      for (int64_t bh = 0; bh < pairs; ++bh) one_pair(bh, mine, mine + L * S);
    }
  } else {
    for (int64_t bh = 0; bh < pairs; ++bh) one_pair(bh, work, work + L * S);
  }
}

// |t| itself when BLAS can read its rows in place (dtype |ct|, unit-stride
// rows at least E apart, no negative strides), else a contiguous copy.
Status rows_operand(const TensorImpl& t, DType ct, TensorImpl* out) {
  const DimVector& sz = t.sizes();
  const DimVector& st = t.strides();
  const int64_t e = std::max<int64_t>(sz[3], 1);
  const bool in_place = t.dtype() == ct && (sz[3] <= 1 || st[3] == 1) && (sz[2] <= 1 || st[2] >= e) &&
                        st[0] >= 0 && st[1] >= 0;
  if (in_place) {
    *out = t;
    return Status();
  }
  AOTIRT_ASSIGN_OR_RETURN(*out, contiguous_as(t, ct));
  return Status();
}

template <class T>
RowsView<T> rows_view(const TensorImpl& t, int64_t rows) {
  RowsView<T> r;
  r.data = static_cast<const T*>(t.data_ptr());
  r.batch = t.strides()[0];
  r.head = t.strides()[1];
  // A single row's stride is never stepped over; BLAS only wants it >= E.
  r.row = rows <= 1 ? std::max<int64_t>(t.sizes()[3], 1) : t.strides()[2];
  return r;
}

Status check_mask(const TensorImpl& mask, DType qdtype, const DimVector& full, DimVector* strides) {
  AOTIRT_RETURN_IF_ERROR(check_cpu(mask, "attn_mask"));
  const DType md = mask.dtype();
  AOTIRT_ENSURE(md == DType::kBool || md == qdtype || md == DType::kFloat32, kInvalidArgument,
                "'attn_mask' has dtype {}; expected bool, {} (the query's dtype) or float32", dtype_name(md),
                dtype_name(qdtype));
  AOTIRT_ENSURE(mask.dim() == 2 || mask.dim() == 4, kInvalidArgument,
                "'attn_mask' must be 2-D or 4-D, got shape {}", shape_str(mask));
  auto st = broadcast_strides(mask.sizes(), mask.strides(), full);
  AOTIRT_ENSURE(st.ok(), kInvalidArgument, "'attn_mask' {} does not broadcast to {}", shape_str(mask),
                dims_to_string(full.data(), full.size()));
  *strides = std::move(st).value();
  return Status();
}

Status sdpa(AtenTensorHandle query, AtenTensorHandle key, AtenTensorHandle value, double dropout_p,
            int32_t is_causal, AtenTensorHandle* attn_mask, double* scale, AtenTensorHandle* ret0,
            AtenTensorHandle* ret1) {
  AOTIRT_REQUIRE_OUT(ret0);
  AOTIRT_REQUIRE_OUT(ret1);
  AOTIRT_ASSIGN_OR_RETURN(const TensorImpl* q, require_tensor(query, "query"));
  AOTIRT_ASSIGN_OR_RETURN(const TensorImpl* k, require_tensor(key, "key"));
  AOTIRT_ASSIGN_OR_RETURN(const TensorImpl* v, require_tensor(value, "value"));
  AOTIRT_ENSURE(!(dropout_p > 0.0), kUnimplemented,
                "dropout_p={} is not supported (inference only, must be 0)", dropout_p);
  AOTIRT_ENSURE(dropout_p == 0.0, kInvalidArgument, "dropout_p={} is invalid", dropout_p);
  const char* names[3] = {"query", "key", "value"};
  const TensorImpl* qkv[3] = {q, k, v};
  for (int i = 0; i < 3; ++i) {
    AOTIRT_RETURN_IF_ERROR(check_cpu(*qkv[i], names[i]));
    AOTIRT_ENSURE(qkv[i]->dim() == 4, kInvalidArgument, "'{}' must be 4-D [B, H, L, E], got shape {}",
                  names[i], shape_str(*qkv[i]));
  }
  AOTIRT_RETURN_IF_ERROR(check_float_dtype(q->dtype(), "query"));
  AOTIRT_RETURN_IF_ERROR(check_same_dtype(*q, "query", *k, "key"));
  AOTIRT_RETURN_IF_ERROR(check_same_dtype(*q, "query", *v, "value"));

  AttentionArgs args;
  AttentionShape& s = args.shape;
  s.batch = q->sizes()[0];
  s.heads = q->sizes()[1];
  s.q_len = q->sizes()[2];
  s.head_dim = q->sizes()[3];
  s.kv_heads = k->sizes()[1];
  s.kv_len = k->sizes()[2];
  const std::string shapes = "query " + shape_str(*q) + ", key " + shape_str(*k) + ", value " + shape_str(*v);
  AOTIRT_ENSURE(k->sizes()[0] == s.batch && v->sizes()[0] == s.batch, kInvalidArgument,
                "batch sizes differ: {}", shapes);
  AOTIRT_ENSURE(v->sizes()[1] == s.kv_heads && v->sizes()[2] == s.kv_len, kInvalidArgument,
                "key and value disagree on heads or length: {}", shapes);
  AOTIRT_ENSURE(s.kv_heads > 0 ? s.heads % s.kv_heads == 0 : s.heads == 0, kInvalidArgument,
                "query heads must be a multiple of key/value heads: {}", shapes);
  AOTIRT_ENSURE(k->sizes()[3] == s.head_dim && v->sizes()[3] == s.head_dim, kInvalidArgument,
                "query, key and value must have the same head size: {}", shapes);

  const DimVector full{s.batch, s.heads, s.q_len, s.kv_len};
  args.mask = optional_tensor(attn_mask);
  if (args.mask) AOTIRT_RETURN_IF_ERROR(check_mask(*args.mask, q->dtype(), full, &args.mask_strides));
  args.causal = is_causal != 0;
  args.scale = scale ? *scale : 1.0 / std::sqrt(static_cast<double>(s.head_dim));

  const DType dtype = q->dtype();
  const DType ct = compute_dtype(dtype);
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl out,
                          empty_strided(q->sizes(), empty_like_strides(*q), dtype, DeviceId{}));
  const DimVector lse_sizes{s.batch, s.heads, s.q_len};
  const DimVector lse_strides{s.q_len * s.heads, 1, s.heads};
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl lse, empty_strided(lse_sizes, lse_strides, DType::kFloat32, DeviceId{}));

  // Runs even when the head size is 0: the logsumexp is still defined.
  if (lse.numel() > 0) {
    AOTIRT_RETURN_IF_ERROR(check_blas_int(s.q_len, "query length"));
    AOTIRT_RETURN_IF_ERROR(check_blas_int(s.kv_len, "key length"));
    AOTIRT_RETURN_IF_ERROR(check_blas_int(s.head_dim, "head size"));
    TensorImpl qc, kc, vc;
    AOTIRT_RETURN_IF_ERROR(rows_operand(*q, ct, &qc));
    AOTIRT_RETURN_IF_ERROR(rows_operand(*k, ct, &kc));
    AOTIRT_RETURN_IF_ERROR(rows_operand(*v, ct, &vc));
    // Rows of each (batch, head) slice go straight into |out| when its head
    // dim is unit-stride; otherwise through a contiguous temporary.
    const DimVector& os = out.strides();
    const int64_t min_ld = std::max<int64_t>(s.head_dim, 1);
    const bool direct = dtype == ct && (s.head_dim <= 1 || os[3] == 1) && (s.q_len <= 1 || os[2] >= min_ld);
    TensorImpl y = out;
    if (!direct) {
      AOTIRT_ASSIGN_OR_RETURN(y, empty_contiguous(q->sizes(), ct, DeviceId{}));
    }
    const int64_t ldo = s.q_len <= 1 ? min_ld : y.strides()[2];
    float* plse = static_cast<float*>(lse.data_ptr());
    // Pairs split across threads only when every thread gets one and the
    // products are worth a fork.
    const int64_t pairs = s.batch * s.heads;
    const int max_threads = std::max(1, omp_get_max_threads());
    const bool split = max_threads > 1 && pairs >= max_threads && s.q_len * s.kv_len * s.head_dim * pairs >= 32768;
    const int threads = split ? max_threads : 1;
    const int64_t block = s.q_len * s.kv_len + s.kv_len;
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl work,
                            empty_contiguous(DimVector{std::max<int64_t>(block * threads, 1)}, ct, DeviceId{}));
    if (ct == DType::kFloat64) {
      attention<double>(args, rows_view<double>(qc, s.q_len), rows_view<double>(kc, s.kv_len),
                        rows_view<double>(vc, s.kv_len), static_cast<double*>(y.data_ptr()), y.strides(), ldo, plse,
                        static_cast<double*>(work.data_ptr()), threads);
    } else {
      attention<float>(args, rows_view<float>(qc, s.q_len), rows_view<float>(kc, s.kv_len),
                       rows_view<float>(vc, s.kv_len), static_cast<float*>(y.data_ptr()), y.strides(), ldo, plse,
                       static_cast<float*>(work.data_ptr()), threads);
    }
    if (!direct) AOTIRT_RETURN_IF_ERROR(host_copy_strided(out, y));
  }
  // Both handles or neither: a failed shim's outputs are never read, so a
  // first handle made before the second's allocation failed would leak.
  AtenTensorHandle o = new_handle(std::move(out));
  try {
    *ret1 = new_handle(std::move(lse));
  } catch (...) {
    delete impl_of(o);
    throw;
  }
  *ret0 = o;
  return Status();
}

}  // namespace

extern "C" {

AOTITorchError aoti_torch_cpu__scaled_dot_product_flash_attention_for_cpu(
    AtenTensorHandle query, AtenTensorHandle key, AtenTensorHandle value, double dropout_p, int32_t is_causal,
    AtenTensorHandle* attn_mask, double* scale, AtenTensorHandle* ret0, AtenTensorHandle* ret1) noexcept {
  return shim_call(__func__, [&]() -> Status {
    AOTIRT_RETURN_IF_ERROR(cpu_ops::ensure_blas());
    return sdpa(query, key, value, dropout_p, is_causal, attn_mask, scale, ret0, ret1);
  });
}

}  // extern "C"
