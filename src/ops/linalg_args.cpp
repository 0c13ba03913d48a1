// Argument rules of the linear-algebra fallback ops (see linalg_args.h).
// Integer operands, which torch's CPU kernels also take for some of these
// ops, are refused as UNIMPLEMENTED rather than computed in floating point.
#include "ops/linalg_args.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "base/status.h"
#include "core/host_copy.h"
#include "ops/op_args.h"

namespace aotirt {
namespace ops {
namespace {

std::string mat_str(const TensorImpl& t) {
  std::string s;
  for (int64_t i = 0; i < t.dim(); ++i) s += (i ? "x" : "") + std::to_string(t.sizes()[i]);
  return s;
}

Status check_broadcasts(const TensorImpl& self, const DimVector& to) {
  AOTIRT_ENSURE(self.dim() <= static_cast<int64_t>(to.size()) &&
                    broadcast_strides(self.sizes(), self.strides(), to).ok(),
                kInvalidArgument, "'self' {} does not broadcast to {}", shape_str(self),
                dims_to_string(to.data(), to.size()));
  return Status();
}

// Operands of one dtype, a floating one.
Status check_operands(const TensorImpl& self, const TensorImpl& a, const char* a_name, const TensorImpl& b,
                      const char* b_name) {
  AOTIRT_RETURN_IF_ERROR(check_same_dtype(a, a_name, b, b_name));
  AOTIRT_RETURN_IF_ERROR(check_same_dtype(self, "self", a, a_name));
  return check_float_dtype(a.dtype(), a_name);
}

bool is_half(DType d) { return d == DType::kBFloat16 || d == DType::kFloat16; }

}  // namespace

Result<AddProductArgs> addmv_args(AtenTensorHandle self, AtenTensorHandle mat, AtenTensorHandle vec, double beta,
                                  double alpha) {
  AddProductArgs a;
  AOTIRT_ASSIGN_OR_RETURN(a.self, require_tensor(self, "self"));
  AOTIRT_ASSIGN_OR_RETURN(a.a, require_tensor(mat, "mat"));
  AOTIRT_ASSIGN_OR_RETURN(a.b, require_tensor(vec, "vec"));
  const TensorImpl &s = *a.self, &m = *a.a, &v = *a.b;
  AOTIRT_ENSURE(m.dim() == 2 && v.dim() == 1 && s.dim() <= 1, kInvalidArgument,
                "vector + matrix @ vector expected, got {}, {}, {}", s.dim(), m.dim(), v.dim());
  AOTIRT_ENSURE(m.sizes()[1] == v.sizes()[0], kInvalidArgument, "size mismatch, got input ({}), mat ({}), vec ({})",
                mat_str(s), mat_str(m), mat_str(v));
  AOTIRT_RETURN_IF_ERROR(check_operands(s, m, "mat", v, "vec"));
  a.m = m.sizes()[0];
  a.k = m.sizes()[1];
  a.n = 1;
  a.beta = beta;
  a.alpha = alpha;
  a.out_sizes = DimVector{a.m};
  AOTIRT_RETURN_IF_ERROR(check_broadcasts(s, a.out_sizes));
  return a;
}

Result<AddProductArgs> addbmm_args(AtenTensorHandle self, AtenTensorHandle batch1, AtenTensorHandle batch2,
                                   double beta, double alpha) {
  AddProductArgs a;
  AOTIRT_ASSIGN_OR_RETURN(a.self, require_tensor(self, "self"));
  AOTIRT_ASSIGN_OR_RETURN(a.a, require_tensor(batch1, "batch1"));
  AOTIRT_ASSIGN_OR_RETURN(a.b, require_tensor(batch2, "batch2"));
  const TensorImpl &s = *a.self, &b1 = *a.a, &b2 = *a.b;
  AOTIRT_ENSURE(b1.dim() == 3, kInvalidArgument, "batch1 must be a 3D tensor, got shape {}", shape_str(b1));
  AOTIRT_ENSURE(b2.dim() == 3, kInvalidArgument, "batch2 must be a 3D tensor, got shape {}", shape_str(b2));
  AOTIRT_ENSURE(b1.sizes()[0] == b2.sizes()[0], kInvalidArgument,
                "batch1 and batch2 must have same number of batches, got {} and {}", b1.sizes()[0], b2.sizes()[0]);
  AOTIRT_ENSURE(b1.sizes()[2] == b2.sizes()[1], kInvalidArgument, "Incompatible matrix sizes for bmm ({}x{} and {}x{})",
                b1.sizes()[1], b1.sizes()[2], b2.sizes()[1], b2.sizes()[2]);
  AOTIRT_RETURN_IF_ERROR(check_operands(s, b1, "batch1", b2, "batch2"));
  a.batch = b1.sizes()[0];
  a.m = b1.sizes()[1];
  a.k = b1.sizes()[2];
  a.n = b2.sizes()[2];
  a.beta = beta;
  a.alpha = alpha;
  a.out_sizes = DimVector{a.m, a.n};
  AOTIRT_RETURN_IF_ERROR(check_broadcasts(s, a.out_sizes));
  return a;
}

Result<AddProductArgs> addmm_activation_args(AtenTensorHandle self, AtenTensorHandle mat1, AtenTensorHandle mat2,
                                             double beta, double alpha) {
  AddProductArgs a;
  AOTIRT_ASSIGN_OR_RETURN(a.self, require_tensor(self, "self"));
  AOTIRT_ASSIGN_OR_RETURN(a.a, require_tensor(mat1, "mat1"));
  AOTIRT_ASSIGN_OR_RETURN(a.b, require_tensor(mat2, "mat2"));
  const TensorImpl &s = *a.self, &m1 = *a.a, &m2 = *a.b;
  AOTIRT_ENSURE(m1.dim() == 2, kInvalidArgument, "mat1 must be a matrix, got {}-D tensor", m1.dim());
  AOTIRT_ENSURE(m2.dim() == 2, kInvalidArgument, "mat2 must be a matrix, got {}-D tensor", m2.dim());
  AOTIRT_ENSURE(m1.sizes()[1] == m2.sizes()[0], kInvalidArgument,
                "mat1 and mat2 shapes cannot be multiplied ({} and {})", mat_str(m1), mat_str(m2));
  AOTIRT_RETURN_IF_ERROR(check_operands(s, m1, "mat1", m2, "mat2"));
  a.m = m1.sizes()[0];
  a.k = m1.sizes()[1];
  a.n = m2.sizes()[1];
  a.beta = beta;
  a.alpha = alpha;
  a.out_sizes = DimVector{a.m, a.n};
  AOTIRT_RETURN_IF_ERROR(check_broadcasts(s, a.out_sizes));
  return a;
}

namespace {

// cdist and pdist compute float32 and float64 only, as torch's CPU kernels.
Status check_dist_dtype(DType d, const char* op, const char* what) {
  AOTIRT_ENSURE(d == DType::kFloat32 || d == DType::kFloat64, kUnimplemented,
                "'{}' has dtype {}; {} is computed for float32 and float64 only", what, dtype_name(d), op);
  return Status();
}

}  // namespace

Result<DistArgs> cdist_args(AtenTensorHandle x1, AtenTensorHandle x2, double p, const int64_t* compute_mode) {
  DistArgs a;
  AOTIRT_ASSIGN_OR_RETURN(a.x1, require_tensor(x1, "x1"));
  AOTIRT_ASSIGN_OR_RETURN(a.x2, require_tensor(x2, "x2"));
  const TensorImpl &t1 = *a.x1, &t2 = *a.x2;
  AOTIRT_ENSURE(t1.dim() >= 2, kInvalidArgument, "cdist only supports at least 2D tensors, X1 got: {}D", t1.dim());
  AOTIRT_ENSURE(t2.dim() >= 2, kInvalidArgument, "cdist only supports at least 2D tensors, X2 got: {}D", t2.dim());
  AOTIRT_RETURN_IF_ERROR(check_dist_dtype(t1.dtype(), "cdist", "x1"));
  AOTIRT_RETURN_IF_ERROR(check_same_dtype(t1, "x1", t2, "x2"));
  a.cols = t1.sizes()[t1.dim() - 1];
  AOTIRT_ENSURE(a.cols == t2.sizes()[t2.dim() - 1], kInvalidArgument,
                "X1 and X2 must have the same number of columns. X1: {} X2: {}", a.cols, t2.sizes()[t2.dim() - 1]);
  AOTIRT_ENSURE(p >= 0, kInvalidArgument, "cdist only supports non-negative p values, got {}", p);
  const int64_t mode = compute_mode ? *compute_mode : 0;
  AOTIRT_ENSURE(mode >= 0 && mode <= 2, kInvalidArgument, "possible modes: 0, 1, 2, but was: {}", mode);
  a.p = p;
  a.rows1 = t1.sizes()[t1.dim() - 2];
  a.rows2 = t2.sizes()[t2.dim() - 2];
  // Batch dims broadcast, numpy style.
  const int64_t nb1 = t1.dim() - 2, nb2 = t2.dim() - 2, nb = std::max(nb1, nb2);
  a.batch_sizes.resize(nb);
  for (int64_t i = 0; i < nb; ++i) {
    const int64_t j1 = i - (nb - nb1), j2 = i - (nb - nb2);
    const int64_t s1 = j1 >= 0 ? t1.sizes()[j1] : 1, s2 = j2 >= 0 ? t2.sizes()[j2] : 1;
    AOTIRT_ENSURE(s1 == s2 || s1 == 1 || s2 == 1, kInvalidArgument,
                  "the batch dims of x1 {} and x2 {} do not broadcast", shape_str(t1), shape_str(t2));
    a.batch_sizes[i] = s1 == 1 ? s2 : s1;
    a.batch *= a.batch_sizes[i];
  }
  // torch's rule: mode 0 takes the matrix-product path for p = 2 once
  // either side has more than 25 rows, mode 1 always, mode 2 never.
  a.use_mm = p == 2.0 && (mode == 1 || (mode == 0 && (a.rows1 > 25 || a.rows2 > 25)));
  a.out_sizes = a.batch_sizes;
  a.out_sizes.resize(nb + 2);
  a.out_sizes[nb] = a.rows1;
  a.out_sizes[nb + 1] = a.rows2;
  return a;
}

Result<DistArgs> pdist_args(AtenTensorHandle self, double p) {
  DistArgs a;
  AOTIRT_ASSIGN_OR_RETURN(a.x1, require_tensor(self, "self"));
  const TensorImpl& t = *a.x1;
  AOTIRT_ENSURE(t.dim() == 2, kInvalidArgument, "pdist only supports 2D tensors, got: {}D", t.dim());
  AOTIRT_ENSURE(t.numel() == 0 || t.is_contiguous(), kInvalidArgument, "_pdist_forward requires contiguous input");
  AOTIRT_RETURN_IF_ERROR(check_dist_dtype(t.dtype(), "pdist", "self"));
  AOTIRT_ENSURE(p >= 0, kInvalidArgument, "pdist only supports non-negative p values, got {}", p);
  a.p = p;
  a.rows1 = t.sizes()[0];
  a.cols = t.sizes()[1];
  a.out_sizes = DimVector{a.rows1 <= 1 ? 0 : a.rows1 * (a.rows1 - 1) / 2};
  return a;
}

Result<TrilinearArgs> trilinear_args(AtenTensorHandle i1, AtenTensorHandle i2, AtenTensorHandle i3,
                                     const int64_t* expand1, int64_t expand1_len, const int64_t* expand2,
                                     int64_t expand2_len, const int64_t* expand3, int64_t expand3_len,
                                     const int64_t* sumdim, int64_t sumdim_len, int64_t unroll_dim) {
  TrilinearArgs a;
  const char* names[3] = {"i1", "i2", "i3"};
  AOTIRT_ASSIGN_OR_RETURN(a.in[0], require_tensor(i1, "i1"));
  AOTIRT_ASSIGN_OR_RETURN(a.in[1], require_tensor(i2, "i2"));
  AOTIRT_ASSIGN_OR_RETURN(a.in[2], require_tensor(i3, "i3"));
  const int64_t* expands[3] = {expand1, expand2, expand3};
  const int64_t lens[3] = {expand1_len, expand2_len, expand3_len};
  const int64_t total = a.in[0]->dim() + expand1_len;
  AOTIRT_ENSURE(unroll_dim >= 0 && unroll_dim < total, kInvalidArgument, "unroll_dim must be in [0,{}]", total - 1);
  for (int i = 0; i < 3; ++i) {
    AOTIRT_ENSURE(lens[i] == 0 || expands[i], kInvalidArgument, "expand{} is null", i + 1);
    AOTIRT_ENSURE(a.in[i]->dim() + lens[i] == total, kInvalidArgument,
                  "'{}' {} with {} expanded dims does not have rank {}", names[i], shape_str(*a.in[i]), lens[i], total);
  }
  AOTIRT_ENSURE(sumdim_len == 0 || sumdim, kInvalidArgument, "sumdim is null");
  AOTIRT_RETURN_IF_ERROR(check_same_dtype(*a.in[0], "i1", *a.in[1], "i2"));
  AOTIRT_RETURN_IF_ERROR(check_same_dtype(*a.in[0], "i1", *a.in[2], "i3"));
  AOTIRT_RETURN_IF_ERROR(check_float_dtype(a.in[0]->dtype(), "i1"));
  // A dim list as a bitset over |total| dims: wrapped, each dim at most once.
  auto bits = [&](const int64_t* dims, int64_t len, std::vector<bool>* out) -> Status {
    out->assign(total, false);
    for (int64_t j = 0; j < len; ++j) {
      int64_t d = dims[j];
      AOTIRT_ENSURE(d >= -total && d < total, kInvalidArgument,
                    "Dimension out of range (expected to be in range of [{}, {}], but got {})", -total, total - 1, d);
      if (d < 0) d += total;
      AOTIRT_ENSURE(!(*out)[d], kInvalidArgument, "dim {} appears multiple times in the list of dims", d);
      (*out)[d] = true;
    }
    return Status();
  };
  std::vector<bool> expanded[3];
  for (int i = 0; i < 3; ++i) AOTIRT_RETURN_IF_ERROR(bits(expands[i], lens[i], &expanded[i]));
  AOTIRT_RETURN_IF_ERROR(bits(sumdim, sumdim_len, &a.summed));
  a.sizes.resize(total);
  for (int i = 0; i < 3; ++i) a.own_dim[i].assign(total, -1);
  for (int64_t d = 0; d < total; ++d) {
    int64_t size = -1;
    for (int i = 0; i < 3; ++i) {
      if (expanded[i][d]) continue;
      // The input's own dim index: |d| less the expanded dims before it.
      int64_t own = 0;
      for (int64_t e = 0; e < d; ++e) own += expanded[i][e] ? 0 : 1;
      const int64_t s = a.in[i]->sizes()[own];
      // torch multiplies slices of equal sizes; a size that differs would
      // broadcast in some of its paths and fail in others, so it is refused.
      AOTIRT_ENSURE(size < 0 || s == size, kInvalidArgument,
                    "'{}' has size {} at dim {} where another input has {}; the inputs' sizes must agree", names[i],
                    s, d, size);
      size = s;
      a.own_dim[i][d] = own;
    }
    a.sizes[d] = size < 0 ? 1 : size;
  }
  for (int64_t d = 0; d < total; ++d) {
    if (a.summed[d]) continue;
    const int64_t n = a.out_sizes.size();
    a.out_sizes.resize(n + 1);
    a.out_sizes[n] = a.sizes[d];
  }
  return a;
}

Result<IntMmArgs> int_mm_out_args(AtenTensorHandle out, AtenTensorHandle self, AtenTensorHandle mat2) {
  IntMmArgs a;
  AOTIRT_ASSIGN_OR_RETURN(a.out, require_tensor(out, "out"));
  AOTIRT_ASSIGN_OR_RETURN(a.a, require_tensor(self, "self"));
  AOTIRT_ASSIGN_OR_RETURN(a.b, require_tensor(mat2, "mat2"));
  const TensorImpl &o = *a.out, &s = *a.a, &m = *a.b;
  AOTIRT_ENSURE(s.dim() == 2, kInvalidArgument, "Expected self to be of dimension 2 but got {}", s.dim());
  AOTIRT_ENSURE(m.dim() == 2, kInvalidArgument, "Expected mat2 to be of dimension 2 but got {}", m.dim());
  AOTIRT_ENSURE(s.sizes()[1] == m.sizes()[0], kInvalidArgument,
                "self.size(1) needs to match mat2.size(0) but got {} and {}", s.sizes()[1], m.sizes()[0]);
  AOTIRT_ENSURE(s.dtype() == DType::kInt8, kInvalidArgument, "Expected self dtype to be of type int8 but got {}",
                dtype_name(s.dtype()));
  AOTIRT_ENSURE(m.dtype() == DType::kInt8, kInvalidArgument, "Expected mat2 dtype to be of type int8 but got {}",
                dtype_name(m.dtype()));
  AOTIRT_ENSURE(o.dtype() == DType::kInt32, kInvalidArgument, "Expected result dtype to be of type int32 but got {}",
                dtype_name(o.dtype()));
  a.m = s.sizes()[0];
  a.k = s.sizes()[1];
  a.n = m.sizes()[1];
  // torch's CPU kernel neither resizes nor restrides the result.
  AOTIRT_ENSURE(o.dim() == 2, kInvalidArgument, "Expected result to be of dimension 2 but got {}", o.dim());
  AOTIRT_ENSURE(o.sizes()[0] == a.m, kInvalidArgument, "Expected result.size(0) to be {} but got {}", a.m,
                o.sizes()[0]);
  AOTIRT_ENSURE(o.sizes()[1] == a.n, kInvalidArgument, "Expected result.size(1) to be {} but got {}", a.n,
                o.sizes()[1]);
  AOTIRT_ENSURE(o.numel() == 0 || o.is_contiguous(), kInvalidArgument, "Expected result to be contiguous, got {}",
                layout_str(o));
  return a;
}

Status check_int_mm_cuda_shape(const IntMmArgs& a) {
  AOTIRT_ENSURE(a.m > 16, kInvalidArgument, "self.size(0) needs to be greater than 16, but got {}", a.m);
  AOTIRT_ENSURE(a.k > 0 && a.k % 8 == 0, kInvalidArgument,
                "self.size(1) needs to be greater than 0 and a multiple of 8, but got {}", a.k);
  AOTIRT_ENSURE(a.n > 0 && a.n % 8 == 0, kInvalidArgument,
                "mat2.size(1) needs to be greater than 0 and a multiple of 8, but got {}", a.n);
  return Status();
}

Result<RmsNormArgs> fused_rms_norm_args(AtenTensorHandle input, const int64_t* normalized_shape,
                                        int64_t normalized_shape_len, AtenTensorHandle* weight, const double* eps) {
  RmsNormArgs a;
  AOTIRT_ASSIGN_OR_RETURN(a.input, require_tensor(input, "input"));
  a.weight = optional_tensor(weight);
  const TensorImpl& x = *a.input;
  AOTIRT_RETURN_IF_ERROR(check_float_dtype(x.dtype(), "input"));
  const int64_t nd = normalized_shape_len;
  AOTIRT_ENSURE(nd >= 1, kInvalidArgument, "Expected normalized_shape to be at least 1-dimensional, got {} dims",
                nd);
  AOTIRT_ENSURE(normalized_shape != nullptr, kInvalidArgument, "normalized_shape is null");
  bool matches = nd <= x.dim();
  for (int64_t i = 0; matches && i < nd; ++i) matches = x.sizes()[x.dim() - nd + i] == normalized_shape[i];
  AOTIRT_ENSURE(matches, kInvalidArgument, "input {} does not end in normalized_shape {}", shape_str(x),
                dims_to_string(normalized_shape, nd));
  if (a.weight) {
    const TensorImpl& w = *a.weight;
    AOTIRT_RETURN_IF_ERROR(check_float_dtype(w.dtype(), "weight"));
    AOTIRT_ENSURE(w.dim() == nd && std::equal(normalized_shape, normalized_shape + nd, w.sizes().data()),
                  kInvalidArgument, "Expected weight to be of same shape as normalized_shape {}, but got {}",
                  dims_to_string(normalized_shape, nd), shape_str(w));
  }
  const int64_t axis = x.dim() - nd;
  a.rstd_sizes.resize(x.dim());
  for (int64_t i = 0; i < x.dim(); ++i) {
    a.rstd_sizes[i] = i < axis ? x.sizes()[i] : 1;
    if (i < axis) a.rows *= x.sizes()[i];
    else a.inner *= x.sizes()[i];
  }
  a.rstd_dtype = x.dtype() == DType::kFloat64 ? DType::kFloat64 : DType::kFloat32;
  a.eps = eps ? *eps
              : (a.rstd_dtype == DType::kFloat64 ? std::numeric_limits<double>::epsilon()
                                                 : static_cast<double>(std::numeric_limits<float>::epsilon()));
  return a;
}

namespace {

Status check_weight_only_a(const TensorImpl& a, const char* op) {
  AOTIRT_ENSURE(a.dtype() == DType::kFloat32 || is_half(a.dtype()), kInvalidArgument,
                "{} : expect A to be either 32-bit or 16-bit float tensor, got {}", op, dtype_name(a.dtype()));
  AOTIRT_ENSURE(a.dim() == 2, kInvalidArgument, "{} : expect A to be 2D tensor, got shape {}", op, shape_str(a));
  return Status();
}

}  // namespace

Result<WeightOnlyArgs> weight_int8pack_mm_args(AtenTensorHandle self, AtenTensorHandle mat2,
                                               AtenTensorHandle scales) {
  constexpr const char* kOp = "_weight_int8pack_mm";
  WeightOnlyArgs a;
  AOTIRT_ASSIGN_OR_RETURN(a.a, require_tensor(self, "self"));
  AOTIRT_ASSIGN_OR_RETURN(a.b, require_tensor(mat2, "mat2"));
  AOTIRT_ASSIGN_OR_RETURN(a.scales, require_tensor(scales, "scales"));
  const TensorImpl &x = *a.a, &w = *a.b, &s = *a.scales;
  AOTIRT_RETURN_IF_ERROR(check_weight_only_a(x, kOp));
  AOTIRT_ENSURE(x.sizes()[1] <= 1 || x.strides()[1] == 1, kInvalidArgument,
                "{} : A must be contiguous on the last dimension, got {}", kOp, layout_str(x));
  AOTIRT_ENSURE(w.dtype() == DType::kInt8, kInvalidArgument, "{} : expect B to be int8 tensor, got {}", kOp,
                dtype_name(w.dtype()));
  AOTIRT_ENSURE(w.dim() == 2 && (w.numel() == 0 || w.is_contiguous()), kInvalidArgument,
                "{} : expect B to be a contiguous 2D tensor, got {}", kOp, layout_str(w));
  a.m = x.sizes()[0];
  a.k = x.sizes()[1];
  a.n = w.sizes()[0];
  AOTIRT_ENSURE(w.sizes()[1] == a.k, kInvalidArgument, "{} : expect B.size(1) to be {} (A's K), got {}", kOp, a.k,
                w.sizes()[1]);
  AOTIRT_ENSURE(s.dim() == 1 && s.sizes()[0] == a.n, kInvalidArgument,
                "{} : expect scales to be 1d tensor with size {}, got {}", kOp, a.n, shape_str(s));
  AOTIRT_RETURN_IF_ERROR(check_same_dtype(s, "scales", x, "self"));
  return a;
}

Result<WeightOnlyArgs> weight_int4pack_mm_args(AtenTensorHandle x, AtenTensorHandle w, AtenTensorHandle group_size,
                                               AtenTensorHandle scales_zeros) {
  AOTIRT_ASSIGN_OR_RETURN(const TensorImpl* g, require_tensor(group_size, "qGroupSize"));
  AOTIRT_ENSURE(g->dtype() == DType::kInt64 && g->numel() == 1, kInvalidArgument,
                "_weight_int4pack_mm_cpu_tensor: group size must be one int64, got {} of {}", shape_str(*g),
                dtype_name(g->dtype()));
  return weight_int4pack_mm_cpu_args(x, w, scales_zeros);
}

Result<WeightOnlyArgs> weight_int4pack_mm_cpu_args(AtenTensorHandle x, AtenTensorHandle w,
                                                   AtenTensorHandle scales_zeros) {
  constexpr const char* kOp = "_weight_int4pack_mm_cpu";
  WeightOnlyArgs a;
  AOTIRT_ASSIGN_OR_RETURN(a.a, require_tensor(x, "X"));
  AOTIRT_ASSIGN_OR_RETURN(a.b, require_tensor(w, "w"));
  AOTIRT_ASSIGN_OR_RETURN(a.scales, require_tensor(scales_zeros, "qScaleAndZeros"));
  const TensorImpl &t = *a.a, &b = *a.b, &s = *a.scales;
  AOTIRT_RETURN_IF_ERROR(check_weight_only_a(t, kOp));
  AOTIRT_ENSURE(t.numel() == 0 || t.is_contiguous(), kInvalidArgument, "{} : expect A to be contiguous, got {}", kOp,
                layout_str(t));
  AOTIRT_ENSURE(b.dtype() == DType::kUInt8, kInvalidArgument, "{} : expect B to be uint8 tensor, got {}", kOp,
                dtype_name(b.dtype()));
  AOTIRT_ENSURE(b.dim() == 2 && (b.numel() == 0 || b.is_contiguous()), kInvalidArgument,
                "{} : expect B to be a contiguous 2D tensor, got {}", kOp, layout_str(b));
  a.m = t.sizes()[0];
  a.k = t.sizes()[1];
  a.n = b.sizes()[0];
  AOTIRT_ENSURE(b.sizes()[1] * 2 == a.k, kInvalidArgument, "{} : expect B.size(1) to be K/2, got {} (K = {})", kOp,
                b.sizes()[1], a.k);
  // torch's CPU packing and kernels take row blocks of 16, 32, 48 or 64.
  AOTIRT_ENSURE(a.n % 16 == 0, kInvalidArgument, "{} : expect N to be divisible by 16, got {}", kOp, a.n);
  AOTIRT_ENSURE(s.dim() == 3 && s.sizes()[1] == a.n && s.sizes()[2] == 2, kInvalidArgument,
                "{}: expect qScaleAndZeros to be 3d tensor with sizes [:, {}, 2], got {}", kOp, a.n, shape_str(s));
  AOTIRT_RETURN_IF_ERROR(check_same_dtype(s, "qScaleAndZeros", t, "X"));
  return a;
}

Status check_int4_group(const WeightOnlyArgs& a, int64_t group) {
  constexpr const char* kOp = "_weight_int4pack_mm_cpu";
  AOTIRT_ENSURE(group == 32 || group == 64 || group == 128 || group == 256, kInvalidArgument,
                "{}: expect qGroupSize to be 32, 64, 128 or 256, got {}", kOp, group);
  AOTIRT_ENSURE(a.k % group == 0, kInvalidArgument,
                "{}: expect K to be divisible by qGroupSize, got K:{}, qGroupSize:{}", kOp, a.k, group);
  AOTIRT_ENSURE(a.scales->sizes()[0] == a.k / group, kInvalidArgument,
                "{}: expect qScaleAndZeros to have K / qGroupSize = {} groups, got {}", kOp, a.k / group,
                a.scales->sizes()[0]);
  return Status();
}

Result<WeightOnlyArgs> weight_int4pack_mm_cuda_args(AtenTensorHandle x, AtenTensorHandle w, int64_t group,
                                                    AtenTensorHandle scales_zeros) {
  constexpr const char* kOp = "_weight_int4pack_mm";
  WeightOnlyArgs a;
  AOTIRT_ASSIGN_OR_RETURN(a.a, require_tensor(x, "self"));
  AOTIRT_ASSIGN_OR_RETURN(a.b, require_tensor(w, "mat2"));
  AOTIRT_ASSIGN_OR_RETURN(a.scales, require_tensor(scales_zeros, "qScaleAndZeros"));
  const TensorImpl &t = *a.a, &b = *a.b, &s = *a.scales;
  AOTIRT_ENSURE(t.dtype() == DType::kBFloat16 && t.dim() == 2 && t.is_contiguous(), kInvalidArgument,
                "{}: expect A to be a contiguous 2D bfloat16 tensor, got {} {}", kOp, dtype_name(t.dtype()),
                layout_str(t));
  AOTIRT_ENSURE(b.dtype() == DType::kInt32 && b.dim() == 4 && b.is_contiguous(), kInvalidArgument,
                "{}: expect B to be a contiguous 4D int32 tensor (the CUDA int4 packing), got {} {}", kOp,
                dtype_name(b.dtype()), layout_str(b));
  a.inner_k_tiles = b.sizes()[3] * 2;
  AOTIRT_ENSURE(a.inner_k_tiles == 2 || a.inner_k_tiles == 4 || a.inner_k_tiles == 8, kInvalidArgument,
                "{}: expect B.size(3) * 2 (inner k tiles) to be 2, 4 or 8, got {}", kOp, a.inner_k_tiles);
  AOTIRT_ENSURE(b.sizes()[2] == 32, kInvalidArgument, "{}: expect B.size(2) to be 32, got {}", kOp, b.sizes()[2]);
  a.m = t.sizes()[0];
  a.k = t.sizes()[1];
  a.n = b.sizes()[0] * 8;
  const int64_t super_k = a.inner_k_tiles * 16;
  AOTIRT_ENSURE(a.k > 0 && a.k % super_k == 0 && b.sizes()[1] == a.k / super_k, kInvalidArgument,
                "{}: A's K = {} does not match B {} (K must be a positive multiple of {} and B.size(1) K / {})", kOp,
                a.k, shape_str(b), super_k, super_k);
  AOTIRT_ENSURE(group == 32 || group == 64 || group == 128 || group == 256, kInvalidArgument,
                "{}: expect qGroupSize to be 32, 64, 128 or 256, got {}", kOp, group);
  AOTIRT_ENSURE(a.k % group == 0, kInvalidArgument, "{}: expect K ({}) to be divisible by qGroupSize ({})", kOp, a.k,
                group);
  a.group = group;
  AOTIRT_ENSURE(s.dtype() == DType::kBFloat16 && s.dim() == 3 && s.is_contiguous() && s.sizes()[0] == a.k / group &&
                    s.sizes()[1] == a.n && s.sizes()[2] == 2,
                kInvalidArgument, "{}: expect qScaleAndZeros to be a contiguous bfloat16 [{}, {}, 2], got {} {}", kOp,
                a.k / group, a.n, dtype_name(s.dtype()), layout_str(s));
  return a;
}

// ---- LAPACK-backed ops ----

DimVector batched_fortran_strides(const DimVector& sizes) {
  const int64_t nd = sizes.size();
  DimVector strides;
  strides.resize(nd);
  if (nd < 2) return contiguous_strides(sizes);
  auto at_least_1 = [](int64_t s) { return s > 1 ? s : int64_t{1}; };
  strides[nd - 2] = 1;
  strides[nd - 1] = at_least_1(sizes[nd - 2]);
  int64_t s = strides[nd - 1] * at_least_1(sizes[nd - 1]);
  for (int64_t i = nd - 3; i >= 0; --i) {
    strides[i] = s;
    s *= at_least_1(sizes[i]);
  }
  return strides;
}

namespace {

Status check_lapack_dtype(DType d, const char* op, const char* what) {
  AOTIRT_ENSURE(d == DType::kFloat32 || d == DType::kFloat64, kUnimplemented,
                "{}: '{}' has dtype {}; it is computed for float32 and float64 only", op, what, dtype_name(d));
  return Status();
}

DimVector batch_of(const TensorImpl& t, int64_t trailing) {
  DimVector b;
  b.resize(t.dim() - trailing);
  for (int64_t i = 0; i < t.dim() - trailing; ++i) b[i] = t.sizes()[i];
  return b;
}

Result<DimVector> broadcast_batch(const DimVector& x, const DimVector& y, const char* op) {
  const int64_t nx = x.size(), ny = y.size(), n = std::max(nx, ny);
  DimVector out;
  out.resize(n);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t jx = i - (n - nx), jy = i - (n - ny);
    const int64_t sx = jx >= 0 ? x[jx] : 1, sy = jy >= 0 ? y[jy] : 1;
    AOTIRT_ENSURE(sx == sy || sx == 1 || sy == 1, kInvalidArgument, "{}: the batch dims {} and {} do not broadcast",
                  op, dims_to_string(x.data(), nx), dims_to_string(y.data(), ny));
    out[i] = sx == 1 ? sy : sx;
  }
  return out;
}

DimVector with_matrix(const DimVector& batch, int64_t rows, int64_t cols) {
  DimVector s = batch;
  const int64_t n = s.size();
  s.resize(n + 2);
  s[n] = rows;
  s[n + 1] = cols;
  return s;
}

Status check_square(const TensorImpl& a, const char* op) {
  AOTIRT_ENSURE(a.sizes()[a.dim() - 1] == a.sizes()[a.dim() - 2], kInvalidArgument,
                "{}: A must be batches of square matrices, but they are {} by {} matrices", op,
                a.sizes()[a.dim() - 2], a.sizes()[a.dim() - 1]);
  return Status();
}

Result<SolveArgs> solve_args(AtenTensorHandle self, AtenTensorHandle a, const char* op) {
  SolveArgs s;
  AOTIRT_ASSIGN_OR_RETURN(s.b, require_tensor(self, "self"));
  AOTIRT_ASSIGN_OR_RETURN(s.a, require_tensor(a, "A"));
  const TensorImpl &b = *s.b, &m = *s.a;
  AOTIRT_ENSURE(b.dim() >= 2, kInvalidArgument, "{}: b should have at least 2 dimensions, but has {} dimensions instead",
                op, b.dim());
  AOTIRT_ENSURE(m.dim() >= 2, kInvalidArgument, "{}: A should have at least 2 dimensions, but has {} dimensions instead",
                op, m.dim());
  AOTIRT_RETURN_IF_ERROR(check_square(m, op));
  AOTIRT_ENSURE(b.dtype() == m.dtype(), kInvalidArgument,
                "{}: Expected b and A to have the same dtype, but found b of type {} and A of type {} instead", op,
                dtype_name(b.dtype()), dtype_name(m.dtype()));
  AOTIRT_RETURN_IF_ERROR(check_lapack_dtype(b.dtype(), op, "self"));
  s.m = m.sizes()[m.dim() - 1];
  s.k = b.sizes()[b.dim() - 1];
  AOTIRT_ENSURE(b.sizes()[b.dim() - 2] == s.m, kInvalidArgument,
                "Incompatible matrix sizes for {}: each A matrix is {} by {} but each b matrix is {} by {}", op, s.m,
                s.m, b.sizes()[b.dim() - 2], s.k);
  AOTIRT_ASSIGN_OR_RETURN(s.batch, broadcast_batch(batch_of(b, 2), batch_of(m, 2), op));
  s.b_sizes = with_matrix(s.batch, s.m, s.k);
  s.a_sizes = with_matrix(s.batch, s.m, s.m);
  return s;
}

}  // namespace

Result<SolveArgs> cholesky_solve_args(AtenTensorHandle self, AtenTensorHandle input2, bool upper) {
  AOTIRT_ASSIGN_OR_RETURN(SolveArgs s, solve_args(self, input2, "cholesky_solve"));
  s.upper = upper;
  return s;
}

Result<SolveArgs> triangular_solve_args(AtenTensorHandle self, AtenTensorHandle a, bool upper, bool transpose,
                                        bool unitriangular) {
  AOTIRT_ASSIGN_OR_RETURN(SolveArgs s, solve_args(self, a, "triangular_solve"));
  s.upper = upper;
  s.transpose = transpose;
  s.unitriangular = unitriangular;
  return s;
}

Result<SolveArgs> cholesky_inverse_args(AtenTensorHandle self, bool upper) {
  constexpr const char* kOp = "cholesky_inverse";
  SolveArgs s;
  AOTIRT_ASSIGN_OR_RETURN(s.a, require_tensor(self, "self"));
  const TensorImpl& a = *s.a;
  AOTIRT_ENSURE(a.dim() >= 2, kInvalidArgument, "{}: The input tensor A must have at least 2 dimensions.", kOp);
  AOTIRT_RETURN_IF_ERROR(check_square(a, kOp));
  AOTIRT_RETURN_IF_ERROR(check_lapack_dtype(a.dtype(), kOp, "self"));
  s.upper = upper;
  s.m = a.sizes()[a.dim() - 1];
  s.batch = batch_of(a, 2);
  s.a_sizes = a.sizes();
  return s;
}

Result<QrArgs> geqrf_args(AtenTensorHandle self) {
  QrArgs q;
  AOTIRT_ASSIGN_OR_RETURN(q.a, require_tensor(self, "self"));
  const TensorImpl& a = *q.a;
  AOTIRT_ENSURE(a.dim() >= 2, kInvalidArgument, "torch.geqrf: input must have at least 2 dimensions.");
  AOTIRT_RETURN_IF_ERROR(check_lapack_dtype(a.dtype(), "geqrf", "self"));
  q.batch = batch_of(a, 2);
  q.m = a.sizes()[a.dim() - 2];
  q.n = a.sizes()[a.dim() - 1];
  q.k = std::min(q.m, q.n);
  return q;
}

Result<QrArgs> ormqr_args(AtenTensorHandle self, AtenTensorHandle input2, AtenTensorHandle input3, bool left,
                          bool transpose) {
  constexpr const char* kOp = "torch.ormqr";
  QrArgs q;
  AOTIRT_ASSIGN_OR_RETURN(q.a, require_tensor(self, "self"));
  AOTIRT_ASSIGN_OR_RETURN(q.tau, require_tensor(input2, "input2"));
  AOTIRT_ASSIGN_OR_RETURN(q.other, require_tensor(input3, "input3"));
  const TensorImpl &a = *q.a, &tau = *q.tau, &o = *q.other;
  AOTIRT_ENSURE(a.dim() >= 2, kInvalidArgument, "{}: input must have at least 2 dimensions.", kOp);
  AOTIRT_ENSURE(o.dim() >= 2, kInvalidArgument, "{}: other must have at least 2 dimensions.", kOp);
  AOTIRT_ENSURE(o.dim() == a.dim(), kInvalidArgument,
                "{}: Expected other to have the same number of dimensions as input, but got other.ndim equal to {} "
                "and input.ndim is equal to {}",
                kOp, o.dim(), a.dim());
  AOTIRT_ENSURE(tau.dim() == a.dim() - 1, kInvalidArgument,
                "{}: Expected tau to have one dimension less than input, but got tau.ndim equal to {} and input.ndim "
                "is equal to {}",
                kOp, tau.dim(), a.dim());
  const int64_t nd = a.dim();
  const DimVector batch = batch_of(a, 2);
  AOTIRT_ENSURE(batch_of(tau, 1) == batch, kInvalidArgument,
                "{}: Expected batch dimensions of tau to be equal to input.shape[:-2], but got {}", kOp,
                shape_str(tau));
  AOTIRT_ENSURE(batch_of(o, 2) == batch, kInvalidArgument,
                "{}: Expected batch dimensions of other to be equal to input.shape[:-2], but got {}", kOp,
                shape_str(o));
  const int64_t rows = o.sizes()[nd - 2], cols = o.sizes()[nd - 1];
  const int64_t kk = tau.sizes()[nd - 2];
  if (left) {
    AOTIRT_ENSURE(rows == a.sizes()[nd - 2], kInvalidArgument,
                  "{}: other.shape[-2] must be equal to input.shape[-2]", kOp);
    AOTIRT_ENSURE(kk == std::min(rows, a.sizes()[nd - 1]), kInvalidArgument,
                  "{}: tau.shape[-1] must be equal to min(other.shape[-2], input.shape[-1])", kOp);
  } else {
    AOTIRT_ENSURE(cols == a.sizes()[nd - 2], kInvalidArgument,
                  "{}: other.shape[-1] must be equal to input.shape[-2]", kOp);
    AOTIRT_ENSURE(kk == std::min(cols, a.sizes()[nd - 1]), kInvalidArgument,
                  "{}: tau.shape[-1] must be equal to min(other.shape[-1], input.shape[-1])", kOp);
  }
  AOTIRT_ENSURE(tau.dtype() == a.dtype(), kInvalidArgument,
                "{}: Expected input and tau to have the same dtype, but input has dtype {} and tau has dtype {}", kOp,
                dtype_name(a.dtype()), dtype_name(tau.dtype()));
  AOTIRT_ENSURE(o.dtype() == a.dtype(), kInvalidArgument,
                "{}: Expected input and other to have the same dtype, but input has dtype {} and other has dtype {}",
                kOp, dtype_name(a.dtype()), dtype_name(o.dtype()));
  AOTIRT_RETURN_IF_ERROR(check_lapack_dtype(a.dtype(), "ormqr", "self"));
  q.batch = batch;
  q.m = rows;
  q.n = cols;
  q.k = kk;
  q.left = left;
  q.transpose = transpose;
  return q;
}

Result<LuUnpackArgs> lu_unpack_args(AtenTensorHandle lu_data, AtenTensorHandle lu_pivots, bool unpack_data,
                                    bool unpack_pivots) {
  constexpr const char* kOp = "torch.lu_unpack";
  LuUnpackArgs u;
  AOTIRT_ASSIGN_OR_RETURN(u.lu, require_tensor(lu_data, "LU_data"));
  AOTIRT_ASSIGN_OR_RETURN(u.pivots, require_tensor(lu_pivots, "LU_pivots"));
  const TensorImpl &lu = *u.lu, &piv = *u.pivots;
  AOTIRT_ENSURE(lu.dim() >= 2, kInvalidArgument, "{}: Expected tensor with 2 or more dimensions. Got size: {} instead",
                kOp, shape_str(lu));
  switch (lu.dtype()) {
    case DType::kFloat32:
    case DType::kFloat64:
    case DType::kBFloat16:
    case DType::kFloat16:
    case DType::kInt64:
    case DType::kInt32:
    case DType::kInt16:
    case DType::kInt8:
    case DType::kUInt8: break;
    default:
      return AOTIRT_STATUS(kUnimplemented, "{}: 'LU_data' has dtype {}, which aotirt does not unpack", kOp,
                           dtype_name(lu.dtype()));
  }
  AOTIRT_ENSURE(piv.dtype() == DType::kInt32 && (piv.numel() == 0 || piv.is_contiguous()), kInvalidArgument,
                "{}: LU_pivots is expected to be a contiguous tensor of torch.int32 dtype, got {} with {}", kOp,
                dtype_name(piv.dtype()), layout_str(piv));
  u.m = lu.sizes()[lu.dim() - 2];
  u.n = lu.sizes()[lu.dim() - 1];
  u.k = std::min(u.m, u.n);
  u.batch = batch_of(lu, 2);
  AOTIRT_ENSURE(piv.dim() >= 1 && piv.sizes()[piv.dim() - 1] == u.k, kInvalidArgument,
                "{}: LU_pivots {} must end in min(m, n) = {} for LU_data {}", kOp, shape_str(piv), u.k, shape_str(lu));
  // torch 2.11 accepts pivots whose batch dims broadcast, but then leaves
  // every P past the first batch the identity; only equal batches are taken.
  AOTIRT_ENSURE(batch_of(piv, 1) == u.batch, kInvalidArgument,
                "{}: the batch dims of LU_pivots {} must equal those of LU_data {}", kOp, shape_str(piv),
                shape_str(lu));
  u.unpack_data = unpack_data;
  u.unpack_pivots = unpack_pivots;
  return u;
}

namespace {

Status check_dyn_quant_sizes(const char* op, int64_t block, int64_t k, int64_t n) {
  AOTIRT_ENSURE(k > 0 && n >= 0 && k % 2 == 0, kInvalidArgument,
                "{}: in_features must be positive and even and out_features non-negative, got {} and {}", op, k, n);
  AOTIRT_ENSURE(block == k || (block > 0 && block % 32 == 0 && k % block == 0), kInvalidArgument,
                "{}: Group size should be multiple of 32 dividing in_features, or in_features [{}]. Provided {}", op,
                k, block);
  return Status();
}

}  // namespace

Result<DynQuantArgs> dyn_quant_pack_args(AtenTensorHandle weights, AtenTensorHandle scales_zeros,
                                         AtenTensorHandle* bias, int64_t block_size, int64_t in_features,
                                         int64_t out_features) {
  constexpr const char* kOp = "_dyn_quant_pack_4bit_weight_cpu";
  DynQuantArgs d;
  AOTIRT_ASSIGN_OR_RETURN(d.weights, require_tensor(weights, "weights"));
  AOTIRT_ASSIGN_OR_RETURN(d.scales, require_tensor(scales_zeros, "scales_zeros"));
  d.bias = optional_tensor(bias);
  AOTIRT_ENSURE(d.weights->dtype() == DType::kUInt8, kInvalidArgument, "{} : expect weight to be kByte, got {}", kOp,
                dtype_name(d.weights->dtype()));
  AOTIRT_RETURN_IF_ERROR(check_dyn_quant_sizes(kOp, block_size, in_features, out_features));
  d.k = in_features;
  d.n = out_features;
  d.block = block_size;
  AOTIRT_ENSURE(d.weights->numel() == d.n * d.k / 2, kInvalidArgument,
                "{}: weights {} must hold out_features * in_features / 2 = {} bytes", kOp, shape_str(*d.weights),
                d.n * d.k / 2);
  AOTIRT_RETURN_IF_ERROR(check_float_dtype(d.scales->dtype(), "scales_zeros"));
  AOTIRT_ENSURE(d.scales->numel() == d.n * (d.k / d.block), kInvalidArgument,
                "{}: scales_zeros {} must hold out_features * (in_features / block_size) = {} scales", kOp,
                shape_str(*d.scales), d.n * (d.k / d.block));
  if (d.bias) {
    AOTIRT_RETURN_IF_ERROR(check_float_dtype(d.bias->dtype(), "bias"));
    AOTIRT_ENSURE(d.bias->numel() == d.n, kInvalidArgument, "{}: bias {} must hold out_features = {} values", kOp,
                  shape_str(*d.bias), d.n);
  }
  return d;
}

Result<DynQuantArgs> dyn_quant_matmul_args(AtenTensorHandle inp, AtenTensorHandle packed_weights, int64_t block_size,
                                           int64_t in_features, int64_t out_features) {
  constexpr const char* kOp = "_dyn_quant_matmul_4bit_cpu";
  DynQuantArgs d;
  AOTIRT_ASSIGN_OR_RETURN(d.input, require_tensor(inp, "inp"));
  AOTIRT_ASSIGN_OR_RETURN(d.packed, require_tensor(packed_weights, "packed_weights"));
  const TensorImpl &x = *d.input, &p = *d.packed;
  AOTIRT_ENSURE(x.dtype() == DType::kFloat32 || x.dtype() == DType::kBFloat16, kInvalidArgument,
                "{} : expect input to be float32 or bfloat16 tensor, got {}", kOp, dtype_name(x.dtype()));
  AOTIRT_RETURN_IF_ERROR(check_dyn_quant_sizes(kOp, block_size, in_features, out_features));
  // torch's reference path has a per-channel kernel only for bfloat16.
  AOTIRT_ENSURE(x.dtype() == DType::kFloat32 || block_size == in_features, kInvalidArgument,
                "{}: a bfloat16 input needs block_size == in_features ({}), got {}", kOp, in_features, block_size);
  d.k = in_features;
  d.n = out_features;
  d.block = block_size;
  AOTIRT_ENSURE(x.dim() == 2 && x.sizes()[1] == d.k, kInvalidArgument, "{}: expect input to be [M, {}], got {}", kOp,
                d.k, shape_str(x));
  d.m = x.sizes()[0];
  AOTIRT_ENSURE(p.dtype() == DType::kFloat32 && p.dim() == 1, kUnimplemented,
                "{}: packed_weights {} of {} is not the reference layout (a 1-D float32 pack from "
                "_dyn_quant_pack_4bit_weight without KleidiAI)",
                kOp, shape_str(p), dtype_name(p.dtype()));
  const int64_t base = d.n * d.k / 2 + d.n * (d.k / d.block);
  AOTIRT_ENSURE(p.numel() == base || p.numel() == base + d.n, kInvalidArgument,
                "{}: packed_weights holds {} values; expected {} (or {} with a bias)", kOp, p.numel(), base,
                base + d.n);
  d.has_bias = p.numel() == base + d.n && d.n > 0;
  return d;
}

}  // namespace ops
}  // namespace aotirt
