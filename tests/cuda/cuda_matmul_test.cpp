// aoti_torch_cuda_{mm,addmm,bmm,baddbmm}_out against the CPU ops on the same
// values (computed in float64 on the host), over random shapes and operand
// layouts: contiguous, transposed, padded rows, unreadable strides that need a
// copy, broadcast batches, strided outputs. float32 tolerances are tight
// enough that TF32 would fail them. Skipped without a GPU or cuBLASLt.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "cuda_test_util.h"
#include "device/device.h"

namespace aotirt {
namespace {

using namespace cuda_test;

class CudaMatmulTest : public ::testing::Test {
 protected:
  void SetUp() override { AOTIRT_REQUIRE_CUBLASLT(); }
};

// How an operand is laid out on the device.
enum class Layout { kContiguous, kTransposed, kPadded, kCopyNeeded, kBatchBroadcast };

const char* layout_name(Layout l) {
  switch (l) {
    case Layout::kContiguous: return "contiguous";
    case Layout::kTransposed: return "transposed";
    case Layout::kPadded: return "padded";
    case Layout::kCopyNeeded: return "copy-needed";
    case Layout::kBatchBroadcast: return "batch-broadcast";
  }
  return "?";
}

// Strides for a [.., R, C] tensor in layout |l| (the batch dim, if any, first).
DimVector strides_for(const DimVector& sizes, Layout l) {
  const int64_t nd = sizes.size();
  const int64_t r = sizes[nd - 2], c = sizes[nd - 1];
  DimVector st;
  st.resize(nd);
  int64_t mat = 0;
  switch (l) {
    case Layout::kTransposed:
      st[nd - 2] = 1;
      st[nd - 1] = r;
      mat = r * c;
      break;
    case Layout::kPadded:
      st[nd - 2] = c + 3;
      st[nd - 1] = 1;
      mat = r * (c + 3);
      break;
    case Layout::kCopyNeeded:
      st[nd - 2] = 2 * c;
      st[nd - 1] = 2;
      mat = 2 * r * c;
      break;
    default:
      st[nd - 2] = c;
      st[nd - 1] = 1;
      mat = r * c;
  }
  if (nd == 3) st[0] = l == Layout::kBatchBroadcast ? 0 : mat + 5;
  return st;
}

// A device operand with |host|'s values in layout |l|. For a broadcast batch
// the host tensor's batches are all made equal to its first.
TensorImpl place(TensorImpl& host, Layout l) {
  if (l == Layout::kBatchBroadcast) {
    const DimVector& s = host.sizes();
    TensorImpl first(host.storage(), host.dtype(), DimVector{1, s[1], s[2]}, contiguous_strides(DimVector{1, s[1], s[2]}),
                     host.storage_offset());
    TensorImpl expanded = host_empty(s, host.dtype());
    EXPECT_TRUE(copy_tensor(expanded, first, false).ok());
    host = expanded;
    TensorImpl d = to_device(first);
    return TensorImpl(d.storage(), d.dtype(), s, DimVector{0, s[2], 1}, d.storage_offset());
  }
  return to_device(host, strides_for(host.sizes(), l), 2);
}

std::string fmt_case(DType dt, int64_t m, int64_t n, int64_t k, Layout la, Layout lb, Layout lo) {
  return std::string(dtype_name(dt)) + " m=" + std::to_string(m) + " n=" + std::to_string(n) + " k=" +
         std::to_string(k) + " a " + layout_name(la) + " b " + layout_name(lb) + " out " + layout_name(lo);
}

TensorImpl as_f64(const TensorImpl& t) {
  TensorImpl out = host_empty(t.sizes(), DType::kFloat64);
  EXPECT_TRUE(copy_tensor(out, t, false).ok());
  return out;
}

struct Tol {
  double atol, rtol;
};
Tol tolerance(DType dt, int64_t k) {
  const double sk = std::sqrt(static_cast<double>(std::max<int64_t>(k, 1)));
  switch (dt) {
    case DType::kFloat32: return {2e-5 * sk, 1e-5};  // TF32 would be ~1e-3 * sqrt(k)
    case DType::kBFloat16: return {2e-2 * sk, 1e-2};
    case DType::kFloat16: return {3e-3 * sk, 2e-3};
    default: return {1e-11 * sk, 1e-11};
  }
}

const DType kDTypes[] = {DType::kFloat32, DType::kBFloat16, DType::kFloat16, DType::kFloat64};

TEST_F(CudaMatmulTest, MmMatchesCpuOverRandomShapesAndLayouts) {
  std::mt19937 rng(1234);
  const Layout in_layouts[] = {Layout::kContiguous, Layout::kTransposed, Layout::kPadded, Layout::kCopyNeeded};
  const Layout out_layouts[] = {Layout::kContiguous, Layout::kTransposed, Layout::kPadded, Layout::kCopyNeeded};
  int cases = 0;
  for (DType dt : kDTypes) {
    for (int it = 0; it < 24; ++it) {
      const int64_t m = 1 + rng() % 70, n = 1 + rng() % 70, k = 1 + rng() % 300;
      const Layout la = in_layouts[rng() % 4], lb = in_layouts[rng() % 4], lo = out_layouts[rng() % 4];
      SCOPED_TRACE(fmt_case(dt, m, n, k, la, lb, lo));
      TensorImpl ha = host_random(DimVector{m, k}, dt, rng());
      TensorImpl hb = host_random(DimVector{k, n}, dt, rng());
      TensorImpl da = place(ha, la), db = place(hb, lb);
      TensorImpl dout = device_empty(DimVector{m, n}, dt, strides_for(DimVector{m, n}, lo), 1);
      ASSERT_EQ(aoti_torch_cuda_mm_out(handle(dout), handle(da), handle(db)), 0) << last_error_text();
      TensorImpl ref = host_empty(DimVector{m, n}, DType::kFloat64);
      ASSERT_EQ(aoti_torch_cpu_mm_out(handle(ref), handle(as_f64(ha)), handle(as_f64(hb))), 0) << last_error_text();
      Tol tol = tolerance(dt, k);
      EXPECT_LE(max_scaled_error(dout, ref, tol.atol, tol.rtol), 1.0);
      ++cases;
    }
  }
  EXPECT_EQ(cases, 96);
}

TEST_F(CudaMatmulTest, AddmmBiasScalesAndBroadcasts) {
  std::mt19937 rng(99);
  struct Case {
    DimVector self_sizes;
    double beta, alpha;
  };
  const Case cases[] = {
      {{37}, 1.0, 1.0},       // bias epilogue
      {{1, 37}, 1.0, 1.0},    // bias epilogue, 2-D bias
      {{37}, 0.5, 2.0},       // bias through beta
      {{29, 37}, 1.0, -1.0},  // full self
      {{29, 1}, 2.0, 1.0},    // column broadcast
      {{}, 1.0, 1.0},         // scalar self
  };
  for (DType dt : kDTypes) {
    for (const Case& c : cases) {
      SCOPED_TRACE(std::string(dtype_name(dt)) + " self " + dims_to_string(c.self_sizes.data(), c.self_sizes.size()) +
                   " beta " + std::to_string(c.beta) + " alpha " + std::to_string(c.alpha));
      const int64_t m = 29, n = 37, k = 45;
      TensorImpl ha = host_random(DimVector{m, k}, dt, rng());
      TensorImpl hb = host_random(DimVector{k, n}, dt, rng());
      TensorImpl hs = host_random(c.self_sizes, dt, rng());
      TensorImpl da = place(ha, Layout::kContiguous), db = place(hb, Layout::kTransposed);
      TensorImpl dout = device_empty(DimVector{m, n}, dt);
      ASSERT_EQ(aoti_torch_cuda_addmm_out(handle(dout), handle(to_device(hs)), handle(da), handle(db), c.beta, c.alpha),
                0)
          << last_error_text();
      TensorImpl ref = host_empty(DimVector{m, n}, DType::kFloat64);
      ASSERT_EQ(aoti_torch_cpu_addmm_out(handle(ref), handle(as_f64(hs)), handle(as_f64(ha)), handle(as_f64(hb)), c.beta,
                                         c.alpha),
                0)
          << last_error_text();
      Tol tol = tolerance(dt, k);
      EXPECT_LE(max_scaled_error(dout, ref, tol.atol * 2, tol.rtol * 2), 1.0);
    }
  }
}

// A ViT-sized GEMM with the bias epilogue, run after run on the same
// operands: recorded on the second call, replayed on the third (the output
// usually gets the same address from the allocator's cache).
TEST_F(CudaMatmulTest, LargeGemmsMatchRunAfterRun) {
  std::mt19937 rng(7);
  for (DType dt : {DType::kFloat32, DType::kBFloat16}) {
    const int64_t m = 197, n = 2304, k = 768;  // ViT-B/16's qkv projection
    TensorImpl ha = host_random(DimVector{m, k}, dt, rng());
    TensorImpl hb = host_random(DimVector{k, n}, dt, rng());
    TensorImpl hs = host_random(DimVector{n}, dt, rng());
    TensorImpl da = place(ha, Layout::kContiguous), db = place(hb, Layout::kTransposed), ds = to_device(hs);
    TensorImpl ref = host_empty(DimVector{m, n}, DType::kFloat64);
    ASSERT_EQ(aoti_torch_cpu_addmm_out(handle(ref), handle(as_f64(hs)), handle(as_f64(ha)), handle(as_f64(hb)), 1.0,
                                       1.0),
              0)
        << last_error_text();
    for (int run = 0; run < 3; ++run) {
      SCOPED_TRACE(std::string(dtype_name(dt)) + " run " + std::to_string(run));
      TensorImpl dout = device_empty(DimVector{m, n}, dt);
      ASSERT_EQ(aoti_torch_cuda_addmm_out(handle(dout), handle(ds), handle(da), handle(db), 1.0, 1.0), 0)
          << last_error_text();
      Tol tol = tolerance(dt, k);
      EXPECT_LE(max_scaled_error(dout, ref, tol.atol * 2, tol.rtol * 2), 1.0);
    }
  }
}

TEST_F(CudaMatmulTest, AddmmWithBetaZeroIgnoresSelf) {
  TensorImpl self = host_empty(DimVector{8, 8}, DType::kFloat32);
  float* p = static_cast<float*>(self.data_ptr());
  for (int i = 0; i < 64; ++i) p[i] = std::numeric_limits<float>::quiet_NaN();
  TensorImpl a = host_random(DimVector{8, 5}, DType::kFloat32, 1), b = host_random(DimVector{5, 8}, DType::kFloat32, 2);
  TensorImpl dout = device_empty(DimVector{8, 8}, DType::kFloat32);
  ASSERT_EQ(aoti_torch_cuda_addmm_out(handle(dout), handle(to_device(self)), handle(to_device(a)), handle(to_device(b)),
                                      0.0, 1.0),
            0)
      << last_error_text();
  for (double v : values(dout)) ASSERT_FALSE(std::isnan(v));
}

TEST_F(CudaMatmulTest, BmmAndBaddbmmMatchCpu) {
  std::mt19937 rng(7);
  const Layout layouts[] = {Layout::kContiguous, Layout::kTransposed, Layout::kPadded, Layout::kCopyNeeded,
                            Layout::kBatchBroadcast};
  for (DType dt : kDTypes) {
    for (int it = 0; it < 10; ++it) {
      const int64_t bsz = 1 + rng() % 4, m = 1 + rng() % 40, n = 1 + rng() % 40, k = 1 + rng() % 90;
      const Layout la = layouts[rng() % 5], lb = layouts[rng() % 5];
      const Layout lo = layouts[rng() % 4];
      SCOPED_TRACE(fmt_case(dt, m, n, k, la, lb, lo) + " batch " + std::to_string(bsz));
      TensorImpl ha = host_random(DimVector{bsz, m, k}, dt, rng());
      TensorImpl hb = host_random(DimVector{bsz, k, n}, dt, rng());
      TensorImpl da = place(ha, la), db = place(hb, lb);
      TensorImpl dout = device_empty(DimVector{bsz, m, n}, dt, strides_for(DimVector{bsz, m, n}, lo));
      ASSERT_EQ(aoti_torch_cuda_bmm_out(handle(dout), handle(da), handle(db)), 0) << last_error_text();
      TensorImpl ref = host_empty(DimVector{bsz, m, n}, DType::kFloat64);
      ASSERT_EQ(aoti_torch_cpu_bmm_out(handle(ref), handle(as_f64(ha)), handle(as_f64(hb))), 0) << last_error_text();
      Tol tol = tolerance(dt, k);
      EXPECT_LE(max_scaled_error(dout, ref, tol.atol, tol.rtol), 1.0);

      // baddbmm with a [N] bias broadcast over batches and rows.
      TensorImpl hs = host_random(DimVector{n}, dt, rng());
      ASSERT_EQ(aoti_torch_cuda_baddbmm_out(handle(dout), handle(to_device(hs)), handle(da), handle(db), 0.75, 1.5), 0)
          << last_error_text();
      ASSERT_EQ(aoti_torch_cpu_baddbmm_out(handle(ref), handle(as_f64(hs)), handle(as_f64(ha)), handle(as_f64(hb)),
                                           0.75, 1.5),
                0);
      EXPECT_LE(max_scaled_error(dout, ref, tol.atol * 2, tol.rtol * 2), 1.0);
    }
  }
}

TEST_F(CudaMatmulTest, EmptyInnerDimension) {
  TensorImpl a = device_empty(DimVector{3, 0}, DType::kFloat32), b = device_empty(DimVector{0, 4}, DType::kFloat32);
  TensorImpl out = to_device(host_random(DimVector{3, 4}, DType::kFloat32, 1));
  ASSERT_EQ(aoti_torch_cuda_mm_out(handle(out), handle(a), handle(b)), 0) << last_error_text();
  for (double v : values(out)) EXPECT_EQ(v, 0.0);
  TensorImpl self = host_random(DimVector{4}, DType::kFloat32, 2);
  ASSERT_EQ(aoti_torch_cuda_addmm_out(handle(out), handle(to_device(self)), handle(a), handle(b), 2.0, 1.0), 0)
      << last_error_text();
  std::vector<double> got = values(out), s = values(self);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j) EXPECT_FLOAT_EQ(got[i * 4 + j], 2.0 * s[j]);
  // Empty M: nothing to do.
  ASSERT_EQ(aoti_torch_cuda_mm_out(handle(device_empty(DimVector{0, 4}, DType::kFloat32)),
                                   handle(device_empty(DimVector{0, 3}, DType::kFloat32)),
                                   handle(device_empty(DimVector{3, 4}, DType::kFloat32))),
            0);
}

TEST_F(CudaMatmulTest, RunsOnTheCurrentStream) {
  cudaStream_t s;
  ASSERT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
  TensorImpl ha = host_random(DimVector{256, 512}, DType::kFloat32, 3);
  TensorImpl hb = host_random(DimVector{512, 256}, DType::kFloat32, 4);
  TensorImpl da = to_device(ha), db = to_device(hb);
  {
    CUDAStreamGuardHandle g = nullptr;
    ASSERT_EQ(aoti_torch_create_cuda_stream_guard(s, 0, &g), 0);
    TensorImpl out = device_empty(DimVector{256, 256}, DType::kFloat32);
    ASSERT_EQ(aoti_torch_cuda_mm_out(handle(out), handle(da), handle(db)), 0) << last_error_text();
    ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
    ASSERT_EQ(aoti_torch_delete_cuda_stream_guard(g), 0);
    TensorImpl ref = host_empty(DimVector{256, 256}, DType::kFloat64);
    ASSERT_EQ(aoti_torch_cpu_mm_out(handle(ref), handle(as_f64(ha)), handle(as_f64(hb))), 0);
    Tol tol = tolerance(DType::kFloat32, 512);
    EXPECT_LE(max_scaled_error(out, ref, tol.atol, tol.rtol), 1.0);
    // out was allocated on s: it is freed on s, so it must go before s does.
  }
  ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
  cudaStreamDestroy(s);
}

TEST_F(CudaMatmulTest, BadArgumentsFailCleanly) {
  TensorImpl a = device_empty(DimVector{3, 4}, DType::kFloat32), b = device_empty(DimVector{5, 6}, DType::kFloat32);
  TensorImpl out = device_empty(DimVector{3, 6}, DType::kFloat32);
  EXPECT_EQ(aoti_torch_cuda_mm_out(handle(out), handle(a), handle(b)), 1);
  EXPECT_NE(last_error_text().find("cannot be multiplied"), std::string::npos) << last_error_text();
  TensorImpl b2 = device_empty(DimVector{4, 6}, DType::kFloat32);
  EXPECT_EQ(aoti_torch_cuda_mm_out(handle(device_empty(DimVector{3, 5}, DType::kFloat32)), handle(a), handle(b2)), 1);
  EXPECT_NE(last_error_text().find("'out' has shape"), std::string::npos) << last_error_text();
  EXPECT_EQ(aoti_torch_cuda_mm_out(handle(out), handle(a), handle(host_empty(DimVector{4, 6}, DType::kFloat32))), 1);
  EXPECT_NE(last_error_text().find("cpu"), std::string::npos) << last_error_text();
  TensorImpl ia = device_empty(DimVector{3, 4}, DType::kInt32), ib = device_empty(DimVector{4, 6}, DType::kInt32);
  EXPECT_EQ(aoti_torch_cuda_mm_out(handle(device_empty(DimVector{3, 6}, DType::kInt32)), handle(ia), handle(ib)), 1);
  EXPECT_NE(last_error_text().find("UNIMPLEMENTED"), std::string::npos) << last_error_text();
  EXPECT_EQ(aoti_torch_cuda_bmm_out(handle(out), handle(a), handle(b2)), 1);  // 2-D to bmm
  EXPECT_EQ(aoti_torch_cuda_mm_out(nullptr, handle(a), handle(b2)), 1);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}

}  // namespace
}  // namespace aotirt
