// Device copies for every dtype: host-to-device, device-to-host and
// device-to-device through strided, offset, transposed and broadcast views,
// and dtype conversions on the device, each checked against the host's own
// converting copy (host_copy_strided). Skipped without a GPU.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "core/host_copy.h"
#include "core/dtype.h"
#include "cuda_test_util.h"
#include "device/device.h"

namespace aotirt {
namespace {

using namespace cuda_test;

class CudaCopyTest : public CudaTest {};

const DType kEveryDType[] = {
    DType::kBool,      DType::kUInt8,        DType::kInt8,           DType::kInt16,    DType::kInt32,
    DType::kInt64,     DType::kUInt16,       DType::kUInt32,         DType::kUInt64,   DType::kFloat16,
    DType::kBFloat16,  DType::kFloat32,      DType::kFloat64,        DType::kComplex32, DType::kComplex64,
    DType::kComplex128, DType::kFloat8_e4m3fn, DType::kFloat8_e5m2, DType::kFloat8_e5m2fnuz,
};

// The dtypes the device converts between.
const DType kConvertible[] = {
    DType::kBool,   DType::kUInt8,   DType::kInt8,     DType::kInt16,   DType::kInt32,
    DType::kInt64,  DType::kUInt16,  DType::kUInt32,   DType::kUInt64,  DType::kFloat16,
    DType::kBFloat16, DType::kFloat32, DType::kFloat64,
};

// Host reference: the same copy done entirely on the host.
TensorImpl host_reference(const TensorImpl& dst_like, const TensorImpl& src_host) {
  TensorImpl ref = host_empty(dst_like.sizes(), dst_like.dtype());
  Status s = host_copy_strided(ref, src_host);
  EXPECT_TRUE(s.ok()) << s.to_string();
  return ref;
}

TEST_F(CudaCopyTest, HostToDeviceToHostRoundTripsBitsForEveryDType) {
  for (DType dt : kEveryDType) {
    SCOPED_TRACE(dtype_name(dt));
    TensorImpl host = host_empty(DimVector{7, 9}, dt);
    fill_bytes(host, 1);
    TensorImpl dev = device_empty(DimVector{7, 9}, dt);
    AOTIRT_ASSERT_OK(copy_tensor(dev, host, false));
    TensorImpl back = host_empty(DimVector{7, 9}, dt);
    AOTIRT_ASSERT_OK(copy_tensor(back, dev, false));
    EXPECT_EQ(std::memcmp(back.data_ptr(), host.data_ptr(), host.nbytes()), 0);
  }
}

TEST_F(CudaCopyTest, StridedCopiesInEveryDirectionForEveryDType) {
  for (DType dt : kEveryDType) {
    SCOPED_TRACE(dtype_name(dt));
    // Source: [5, 6, 4] stored as dims (2, 0, 1) with an offset.
    const DimVector sizes{5, 6, 4};
    TensorImpl src_host = host_empty(sizes, dt, permuted_strides(sizes, {2, 0, 1}), 3);
    fill_bytes(src_host, 2);
    TensorImpl want = host_reference(host_empty(sizes, dt), src_host);

    // H2D into a transposed device layout, D2D into another, D2H into a strided host view.
    TensorImpl d1 = device_empty(sizes, dt, permuted_strides(sizes, {1, 2, 0}), 5);
    AOTIRT_ASSERT_OK(copy_tensor(d1, src_host, false));
    TensorImpl d2 = device_empty(sizes, dt, permuted_strides(sizes, {2, 1, 0}), 1);
    AOTIRT_ASSERT_OK(copy_tensor(d2, d1, false));
    TensorImpl h2 = host_empty(sizes, dt, permuted_strides(sizes, {0, 2, 1}), 7);
    AOTIRT_ASSERT_OK(copy_tensor(h2, d2, false));
    EXPECT_TRUE(same_bytes(h2, want));
    EXPECT_TRUE(same_bytes(d1, want));
    // Bytes outside the views stay zero.
    TensorImpl d1_raw = to_host(TensorImpl(d1.storage(), DType::kUInt8, DimVector{5 * static_cast<int64_t>(dtype_size(dt))},
                                           DimVector{1}, 0));
    for (double b : values(d1_raw)) ASSERT_EQ(b, 0.0);
  }
}

TEST_F(CudaCopyTest, BroadcastingCopies) {
  for (DType dt : {DType::kFloat32, DType::kBFloat16, DType::kInt64, DType::kBool, DType::kComplex128}) {
    SCOPED_TRACE(dtype_name(dt));
    TensorImpl row = host_empty(DimVector{1, 5}, dt);
    fill_bytes(row, 3);
    TensorImpl want = host_reference(host_empty(DimVector{4, 5}, dt), row);
    // H2D with broadcast.
    TensorImpl d = device_empty(DimVector{4, 5}, dt);
    AOTIRT_ASSERT_OK(copy_tensor(d, row, false));
    EXPECT_TRUE(same_bytes(d, want));
    // D2D with broadcast (and an extra leading dim), D2H with broadcast.
    TensorImpl drow = to_device(row);
    TensorImpl d3 = device_empty(DimVector{2, 4, 5}, dt, permuted_strides(DimVector{2, 4, 5}, {2, 1, 0}));
    AOTIRT_ASSERT_OK(copy_tensor(d3, drow, false));
    TensorImpl h3 = host_empty(DimVector{2, 4, 5}, dt);
    AOTIRT_ASSERT_OK(copy_tensor(h3, drow, false));
    TensorImpl want3 = host_reference(h3, row);
    EXPECT_TRUE(same_bytes(d3, want3));
    EXPECT_TRUE(same_bytes(h3, want3));
  }
  // Shapes that do not broadcast are refused.
  Status s = copy_tensor(device_empty(DimVector{4, 5}, DType::kFloat32), host_empty(DimVector{3}, DType::kFloat32),
                         false);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.to_string();
}

TEST_F(CudaCopyTest, DeviceConversionsMatchTheHostForEveryPair) {
  for (DType from : kConvertible) {
    for (DType to : kConvertible) {
      SCOPED_TRACE(std::string(dtype_name(from)) + " -> " + dtype_name(to));
      // Values every pair represents sensibly: 0 and k + 0.25 in [0, 100).
      TensorImpl src = host_random(DimVector{6, 7}, DType::kFloat64, 4, 0, 100);
      double* p = static_cast<double*>(src.data_ptr());
      for (int64_t i = 0; i < src.numel(); ++i) p[i] = (i % 5 == 0) ? 0.0 : std::floor(p[i]) + 0.25;
      TensorImpl typed = host_reference(host_empty(DimVector{6, 7}, from), src);
      TensorImpl want = host_reference(host_empty(DimVector{7, 6}, to), transposed(typed, 0, 1));

      TensorImpl dsrc = to_device(typed);
      TensorImpl ddst = device_empty(DimVector{7, 6}, to, DimVector{1, 7});
      AOTIRT_ASSERT_OK(copy_tensor(ddst, transposed(dsrc, 0, 1), false));
      EXPECT_TRUE(same_bytes(ddst, want));
    }
  }
}

TEST_F(CudaCopyTest, ConvertingHostDeviceCopies) {
  TensorImpl src = host_random(DimVector{9, 13}, DType::kFloat32, 5, -50, 50);
  // f32 host (transposed view) -> bf16 device.
  TensorImpl d = device_empty(DimVector{13, 9}, DType::kBFloat16);
  AOTIRT_ASSERT_OK(copy_tensor(d, transposed(src, 0, 1), false));
  TensorImpl want = host_reference(host_empty(DimVector{13, 9}, DType::kBFloat16), transposed(src, 0, 1));
  EXPECT_TRUE(same_bytes(d, want));
  // bf16 device (transposed view) -> f64 host (strided).
  TensorImpl h = host_empty(DimVector{9, 13}, DType::kFloat64, DimVector{1, 9});
  AOTIRT_ASSERT_OK(copy_tensor(h, transposed(d, 0, 1), false));
  TensorImpl want2 = host_reference(host_empty(DimVector{9, 13}, DType::kFloat64), transposed(want, 0, 1));
  EXPECT_TRUE(same_bytes(h, want2));
}

TEST_F(CudaCopyTest, Float8ConversionsMatchTheHost) {
  for (DType f8 : {DType::kFloat8_e4m3fn, DType::kFloat8_e5m2}) {
    SCOPED_TRACE(dtype_name(f8));
    TensorImpl src = host_random(DimVector{64}, DType::kFloat32, 6, -200, 200);
    TensorImpl want = host_reference(host_empty(DimVector{64}, f8), src);
    TensorImpl d = device_empty(DimVector{64}, f8);
    AOTIRT_ASSERT_OK(copy_tensor(d, to_device(src), false));
    EXPECT_TRUE(same_bytes(d, want));
    TensorImpl back = device_empty(DimVector{64}, DType::kFloat32);
    AOTIRT_ASSERT_OK(copy_tensor(back, d, false));
    EXPECT_TRUE(same_bytes(back, host_reference(host_empty(DimVector{64}, DType::kFloat32), want)));
  }
}

TEST_F(CudaCopyTest, PairsTheKernelsLackGoThroughTheHost) {
  // float8 fnuz is converted by the host path.
  TensorImpl src = host_random(DimVector{3, 4}, DType::kFloat32, 8, -2, 2);
  TensorImpl want = host_reference(host_empty(DimVector{3, 4}, DType::kFloat8_e4m3fnuz), src);
  TensorImpl d = device_empty(DimVector{3, 4}, DType::kFloat8_e4m3fnuz);
  AOTIRT_ASSERT_OK(copy_tensor(d, to_device(src), false));
  EXPECT_TRUE(same_bytes(d, want));
  // Complex conversions are refused the same way the host refuses them.
  Status s = copy_tensor(device_empty(DimVector{3}, DType::kComplex128), device_empty(DimVector{3}, DType::kComplex64),
                         false);
  EXPECT_EQ(s.code(), StatusCode::kUnimplemented) << s.to_string();
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}

TEST_F(CudaCopyTest, EmptyAndScalarTensors) {
  TensorImpl e = device_empty(DimVector{0, 3}, DType::kFloat32);
  EXPECT_TRUE(copy_tensor(e, host_empty(DimVector{0, 3}, DType::kFloat32), false).ok());
  EXPECT_TRUE(copy_tensor(host_empty(DimVector{0, 3}, DType::kFloat32), e, false).ok());
  TensorImpl s = host_random(DimVector{}, DType::kFloat64, 9);
  TensorImpl ds = to_device(s);
  TensorImpl filled = device_empty(DimVector{3, 3}, DType::kFloat16);
  AOTIRT_ASSERT_OK(copy_tensor(filled, ds, false));  // scalar broadcast with conversion
  EXPECT_TRUE(same_bytes(filled, host_reference(host_empty(DimVector{3, 3}, DType::kFloat16), s)));
}

TEST_F(CudaCopyTest, LargeStridedCopy) {
  // Enough elements for many blocks; a reversed-order layout.
  const DimVector sizes{64, 128, 96};
  TensorImpl src = host_random(sizes, DType::kFloat32, 10);
  TensorImpl d = to_device(src, permuted_strides(sizes, {2, 1, 0}));
  TensorImpl d2 = device_empty(sizes, DType::kFloat16, permuted_strides(sizes, {1, 0, 2}));
  AOTIRT_ASSERT_OK(copy_tensor(d2, d, false));
  EXPECT_TRUE(same_bytes(d2, host_reference(host_empty(sizes, DType::kFloat16), src)));
}

}  // namespace
}  // namespace aotirt
