// host_copy_strided: same-dtype copies of every dtype through strided,
// broadcast and reversed views, large copies split across threads (and
// overlapping ones kept in row order), and dtype conversions checked element
// by element against the scalar conversion routines and known values.
#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "core/host_copy.h"
#include "core/dtype.h"
#include "device/device.h"

namespace aotirt {
namespace {

const DType kEveryDType[] = {
    DType::kUInt8,        DType::kInt8,          DType::kInt16,           DType::kInt32,
    DType::kInt64,        DType::kFloat16,       DType::kFloat32,         DType::kFloat64,
    DType::kComplex32,    DType::kComplex64,     DType::kComplex128,      DType::kBool,
    DType::kBFloat16,     DType::kFloat8_e5m2,   DType::kFloat8_e4m3fn,   DType::kFloat8_e5m2fnuz,
    DType::kFloat8_e4m3fnuz, DType::kUInt16,     DType::kUInt32,          DType::kUInt64,
};

// A host tensor over its own buffer, so tests control the exact bytes.
struct HostTensor {
  std::vector<unsigned char> bytes;
  TensorImpl impl;

  HostTensor(DType dt, DimVector sizes, DimVector strides = {}, int64_t offset = 0, size_t nbytes = 0) {
    if (strides.size() == 0 && sizes.size() != 0) strides = contiguous_strides(sizes);
    if (nbytes == 0) {
      TensorImpl probe(StorageRef(), dt, sizes, strides, offset);
      nbytes = static_cast<size_t>(probe.max_byte_extent()) + 1;
    }
    bytes.assign(nbytes, 0);
    StorageRef s = StorageRef::adopt(Storage::new_borrowed(bytes.data(), bytes.size(), DeviceId{}));
    impl = TensorImpl(std::move(s), dt, std::move(sizes), std::move(strides), offset);
  }
  // Address of the element at |idx| (one index per dim).
  unsigned char* at(std::initializer_list<int64_t> idx) {
    int64_t off = impl.storage_offset();
    int64_t d = 0;
    for (int64_t i : idx) off += i * impl.strides()[d++];
    return bytes.data() + off * static_cast<int64_t>(impl.element_size());
  }
  double get(std::initializer_list<int64_t> idx) { return load_as_double(at(idx), impl.dtype()); }
  void set(std::initializer_list<int64_t> idx, double v) { store_from_double(at(idx), impl.dtype(), v); }
};

TEST(HostCopyTest, ContiguousSameDTypeCopiesBytesForEveryDType) {
  for (DType dt : kEveryDType) {
    SCOPED_TRACE(dtype_name(dt));
    HostTensor src(dt, {3, 5}), dst(dt, {3, 5});
    for (size_t i = 0; i < src.bytes.size(); ++i) src.bytes[i] = static_cast<unsigned char>(i * 7 + 1);
    ASSERT_TRUE(host_copy_strided(dst.impl, src.impl).ok());
    EXPECT_EQ(0, std::memcmp(dst.bytes.data(), src.bytes.data(), 15 * dtype_size(dt)));
  }
}

TEST(HostCopyTest, TransposedSameDTypeForEveryDType) {
  for (DType dt : kEveryDType) {
    SCOPED_TRACE(dtype_name(dt));
    const size_t es = dtype_size(dt);
    HostTensor src(dt, {3, 4});
    for (size_t i = 0; i < src.bytes.size(); ++i) src.bytes[i] = static_cast<unsigned char>(i * 13 + 5);
    // dst is a column-major [3, 4] view with a storage offset.
    HostTensor dst(dt, {3, 4}, {1, 3}, 2);
    ASSERT_TRUE(host_copy_strided(dst.impl, src.impl).ok());
    for (int64_t i = 0; i < 3; ++i)
      for (int64_t j = 0; j < 4; ++j)
        ASSERT_EQ(0, std::memcmp(dst.at({i, j}), src.at({i, j}), es)) << i << "," << j;
    // Nothing before the offset was touched.
    for (size_t b = 0; b < 2 * es; ++b) ASSERT_EQ(dst.bytes[b], 0);
  }
}

TEST(HostCopyTest, StridedSourceWithPaddingAndOffset) {
  // Every other column of a [3, 8] int16 buffer, starting at column 1.
  HostTensor src(DType::kInt16, {3, 4}, {8, 2}, 1, 3 * 8 * 2);
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t j = 0; j < 4; ++j) src.set({i, j}, static_cast<double>(i * 10 + j));
  HostTensor dst(DType::kInt16, {3, 4});
  ASSERT_TRUE(host_copy_strided(dst.impl, src.impl).ok());
  auto* d = reinterpret_cast<int16_t*>(dst.bytes.data());
  EXPECT_EQ((std::vector<int16_t>(d, d + 12)), (std::vector<int16_t>{0, 1, 2, 3, 10, 11, 12, 13, 20, 21, 22, 23}));
}

TEST(HostCopyTest, ReversedSourceWithNegativeStride) {
  HostTensor base(DType::kFloat32, {5});
  for (int64_t i = 0; i < 5; ++i) base.set({i}, static_cast<double>(i));
  TensorImpl reversed(base.impl.storage(), DType::kFloat32, {5}, {-1}, 4);
  HostTensor dst(DType::kFloat32, {5});
  ASSERT_TRUE(host_copy_strided(dst.impl, reversed).ok());
  for (int64_t i = 0; i < 5; ++i) EXPECT_EQ(dst.get({i}), 4.0 - static_cast<double>(i));
}

// Copies of 64K elements and more split their rows across the OpenMP
// threads (four here, whatever the machine has).
class ThreadsScope {
 public:
  explicit ThreadsScope(int n) : saved_(omp_get_max_threads()) { omp_set_num_threads(n); }
  ~ThreadsScope() { omp_set_num_threads(saved_); }

 private:
  int saved_;
};

TEST(HostCopyTest, LargeCopiesSplitAcrossThreads) {
  ThreadsScope threads(4);
  const int64_t R = 301, C = 403;  // rows not divisible by the thread count
  HostTensor src(DType::kFloat32, {R, C});
  auto* ps = reinterpret_cast<float*>(src.bytes.data());
  for (int64_t i = 0; i < R * C; ++i) ps[i] = static_cast<float>(i % 61) - 7.5f;  // exact in bfloat16
  // Transposed destination, same dtype and converted to bfloat16.
  for (DType dt : {DType::kFloat32, DType::kBFloat16, DType::kFloat64}) {
    SCOPED_TRACE(dtype_name(dt));
    HostTensor dst(dt, {R, C}, {1, R}, 3);
    ASSERT_TRUE(host_copy_strided(dst.impl, src.impl).ok());
    for (int64_t i = 0; i < R; ++i)
      for (int64_t j = 0; j < C; ++j) ASSERT_EQ(dst.get({i, j}), src.get({i, j})) << i << "," << j;
  }
  // A broadcast row, and a 4-d permuted source whose two leading dims coalesce.
  HostTensor row(DType::kFloat32, {C});
  for (int64_t j = 0; j < C; ++j) row.set({j}, static_cast<double>(j));
  HostTensor wide(DType::kFloat32, {R, C});
  ASSERT_TRUE(host_copy_strided(wide.impl, row.impl).ok());
  for (int64_t i = 0; i < R; i += 37)
    for (int64_t j = 0; j < C; ++j) ASSERT_EQ(wide.get({i, j}), static_cast<double>(j));
  HostTensor perm(DType::kInt32, {6, 5, 67, 41}, {5 * 67 * 41, 67 * 41, 1, 67});
  for (int64_t a = 0; a < 6; ++a)
    for (int64_t b = 0; b < 5; ++b)
      for (int64_t c = 0; c < 67; ++c)
        for (int64_t d = 0; d < 41; ++d) perm.set({a, b, c, d}, static_cast<double>(((a * 5 + b) * 67 + c) * 41 + d));
  HostTensor dense(DType::kInt32, {6, 5, 67, 41});
  ASSERT_TRUE(host_copy_strided(dense.impl, perm.impl).ok());
  auto* pd = reinterpret_cast<int32_t*>(dense.bytes.data());
  for (int64_t i = 0; i < 6 * 5 * 67 * 41; ++i) ASSERT_EQ(pd[i], i);
  // Fewer rows than threads: a dense conversion (one row once coalesced),
  // and three padded rows; the threads split each row's columns.
  HostTensor flat(DType::kFloat32, {2, 50001});
  auto* pf = reinterpret_cast<float*>(flat.bytes.data());
  for (int64_t i = 0; i < 2 * 50001; ++i) pf[i] = static_cast<float>(i % 97) - 40.0f;
  HostTensor flat_bf16(DType::kBFloat16, {2, 50001});
  ASSERT_TRUE(host_copy_strided(flat_bf16.impl, flat.impl).ok());
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 50001; ++j) ASSERT_EQ(flat_bf16.get({i, j}), flat.get({i, j})) << i << "," << j;
  HostTensor padded(DType::kFloat64, {3, 30000}, {30007, 1}, 1);
  HostTensor three(DType::kFloat32, {3, 30000});
  auto* p3 = reinterpret_cast<float*>(three.bytes.data());
  for (int64_t i = 0; i < 3 * 30000; ++i) p3[i] = static_cast<float>(i);
  ASSERT_TRUE(host_copy_strided(padded.impl, three.impl).ok());
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t j = 0; j < 30000; ++j) ASSERT_EQ(padded.get({i, j}), static_cast<double>(i * 30000 + j));
}

TEST(HostCopyTest, OverlappingLargeCopyKeepsTheRowOrder) {
  ThreadsScope threads(4);
  // Every other row of one buffer copied one such row further on: in row
  // order each row is read after the previous one overwrote it, so every
  // destination row ends up holding source row 0 (as on one thread).
  const int64_t R = 300, C = 512;
  HostTensor buf(DType::kFloat32, {2 * R + 2, C});
  for (int64_t i = 0; i < 2 * R + 2; ++i)
    for (int64_t j = 0; j < C; ++j) buf.set({i, j}, static_cast<double>(i * C + j));
  TensorImpl src(buf.impl.storage(), DType::kFloat32, {R, C}, {2 * C, 1}, 0);
  TensorImpl dst(buf.impl.storage(), DType::kFloat32, {R, C}, {2 * C, 1}, 2 * C);
  ASSERT_TRUE(host_copy_strided(dst, src).ok());
  for (int64_t i = 1; i <= R; ++i)
    for (int64_t j = 0; j < C; ++j) ASSERT_EQ(buf.get({2 * i, j}), static_cast<double>(j)) << i << "," << j;
}

TEST(HostCopyTest, BroadcastSources) {
  HostTensor row(DType::kFloat32, {4});
  for (int64_t j = 0; j < 4; ++j) row.set({j}, static_cast<double>(j + 1));
  HostTensor col(DType::kFloat32, {3, 1});
  for (int64_t i = 0; i < 3; ++i) col.set({i, 0}, static_cast<double>(100 * (i + 1)));
  HostTensor scalar(DType::kFloat32, {});
  scalar.set({}, 7.5);

  HostTensor dst(DType::kFloat32, {3, 4});
  ASSERT_TRUE(host_copy_strided(dst.impl, row.impl).ok());
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t j = 0; j < 4; ++j) EXPECT_EQ(dst.get({i, j}), j + 1.0);
  ASSERT_TRUE(host_copy_strided(dst.impl, col.impl).ok());
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t j = 0; j < 4; ++j) EXPECT_EQ(dst.get({i, j}), 100.0 * (i + 1));
  ASSERT_TRUE(host_copy_strided(dst.impl, scalar.impl).ok());
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t j = 0; j < 4; ++j) EXPECT_EQ(dst.get({i, j}), 7.5);
  // Broadcast with a conversion at the same time.
  HostTensor idst(DType::kInt64, {2, 3, 4});
  ASSERT_TRUE(host_copy_strided(idst.impl, col.impl).ok());
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t i = 0; i < 3; ++i)
      for (int64_t j = 0; j < 4; ++j) EXPECT_EQ(idst.get({b, i, j}), 100.0 * (i + 1));
}

TEST(HostCopyTest, NonBroadcastableShapesAreRefused) {
  const struct { DimVector src, dst; } kBad[] = {
      {{3}, {4}}, {{2, 3}, {3, 2}}, {{2, 1, 3}, {1, 3}}, {{1}, {}}, {{4, 1}, {3, 5}},
  };
  for (const auto& c : kBad) {
    HostTensor src(DType::kFloat32, c.src), dst(DType::kFloat32, c.dst);
    Status s = host_copy_strided(dst.impl, src.impl);
    ASSERT_FALSE(s.ok()) << dims_to_string(c.src.data(), c.src.size());
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(s.message().find("cannot broadcast shape " + dims_to_string(c.src.data(), c.src.size())),
              std::string::npos)
        << s.message();
  }
}

TEST(HostCopyTest, BroadcastStrides) {
  Result<DimVector> r = broadcast_strides({3, 1}, {1, 1}, {2, 3, 4});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, (DimVector{0, 1, 0}));
  r = broadcast_strides({}, {}, {2, 2});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, (DimVector{0, 0}));
}

TEST(HostCopyTest, EmptyAndZeroDimTensors) {
  HostTensor src(DType::kFloat32, {0, 3}), dst(DType::kFloat32, {0, 3});
  EXPECT_TRUE(host_copy_strided(dst.impl, src.impl).ok());
  HostTensor s0(DType::kFloat64, {}), d0(DType::kFloat16, {});
  s0.set({}, -3.25);
  ASSERT_TRUE(host_copy_strided(d0.impl, s0.impl).ok());
  EXPECT_EQ(d0.get({}), -3.25);
}

TEST(HostCopyTest, NullDataIsAnError) {
  HostTensor src(DType::kFloat32, {2});
  TensorImpl dst(StorageRef::adopt(Storage::new_borrowed(nullptr, 8, DeviceId{})), DType::kFloat32, {2}, {1}, 0);
  Status s = host_copy_strided(dst, src.impl);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("null"), std::string::npos);
}

TEST(HostCopyTest, BeyondSixDims) {
  DimVector sizes{2, 1, 2, 3, 1, 2, 2, 2};
  HostTensor src(DType::kInt32, sizes);
  auto* s = reinterpret_cast<int32_t*>(src.bytes.data());
  const int64_t n = numel_of(sizes);
  for (int64_t i = 0; i < n; ++i) s[i] = static_cast<int32_t>(i);
  // dst has the dims in reverse memory order.
  DimVector strides;
  strides.resize(sizes.size());
  int64_t st = 1;
  for (int64_t d = 0; d < sizes.size(); ++d) {
    strides[d] = st;
    st *= sizes[d];
  }
  HostTensor dst(DType::kInt32, sizes, strides);
  ASSERT_TRUE(host_copy_strided(dst.impl, src.impl).ok());
  // Copy back into a contiguous tensor and compare with the source.
  HostTensor back(DType::kInt32, sizes);
  ASSERT_TRUE(host_copy_strided(back.impl, dst.impl).ok());
  EXPECT_EQ(0, std::memcmp(back.bytes.data(), src.bytes.data(), static_cast<size_t>(n) * 4));
  EXPECT_NE(0, std::memcmp(dst.bytes.data(), src.bytes.data(), static_cast<size_t>(n) * 4));
}

// ---- conversions ----

template <class T>
std::vector<T> values_of(HostTensor& t) {
  const T* p = reinterpret_cast<const T*>(t.bytes.data());
  return std::vector<T>(p, p + t.impl.numel());
}

template <class T>
void fill(HostTensor& t, const std::vector<T>& v) {
  ASSERT_EQ(static_cast<int64_t>(v.size()), t.impl.numel());
  std::memcpy(t.bytes.data(), v.data(), v.size() * sizeof(T));
}

TEST(CpuCopyConvertTest, FloatToBFloat16AndBack) {
  const std::vector<float> in = {1.0f, -2.0f, 3.140625f, 0.0f, 1e-3f, 65504.0f, -1.0f / 3};
  HostTensor f(DType::kFloat32, {7}), b(DType::kBFloat16, {7}), back(DType::kFloat32, {7});
  fill(f, in);
  ASSERT_TRUE(host_copy_strided(b.impl, f.impl).ok());
  std::vector<uint16_t> bits = values_of<uint16_t>(b);
  EXPECT_EQ(bits[0], 0x3F80);
  EXPECT_EQ(bits[1], 0xC000);
  EXPECT_EQ(bits[2], 0x4049);
  EXPECT_EQ(bits[3], 0x0000);
  for (size_t i = 0; i < in.size(); ++i) EXPECT_EQ(bits[i], float_to_bf16(in[i])) << i;
  ASSERT_TRUE(host_copy_strided(back.impl, b.impl).ok());
  std::vector<float> out = values_of<float>(back);
  for (size_t i = 0; i < in.size(); ++i) EXPECT_NEAR(out[i], in[i], std::fabs(in[i]) / 128) << i;
}

TEST(CpuCopyConvertTest, FloatToHalfAndBack) {
  const std::vector<float> in = {1.0f, -2.0f, 0.5f, 65504.0f, 1e6f, std::ldexp(1.0f, -24), -0.0f};
  HostTensor f(DType::kFloat32, {7}), h(DType::kFloat16, {7}), back(DType::kFloat32, {7});
  fill(f, in);
  ASSERT_TRUE(host_copy_strided(h.impl, f.impl).ok());
  EXPECT_EQ(values_of<uint16_t>(h), (std::vector<uint16_t>{0x3C00, 0xC000, 0x3800, 0x7BFF, 0x7C00, 0x0001, 0x8000}));
  ASSERT_TRUE(host_copy_strided(back.impl, h.impl).ok());
  std::vector<float> out = values_of<float>(back);
  EXPECT_EQ(out[3], 65504.0f);
  EXPECT_TRUE(std::isinf(out[4]));
  EXPECT_EQ(out[5], std::ldexp(1.0f, -24));
  // half -> bfloat16 directly.
  HostTensor b(DType::kBFloat16, {7});
  ASSERT_TRUE(host_copy_strided(b.impl, h.impl).ok());
  EXPECT_EQ(values_of<uint16_t>(b)[0], 0x3F80);
}

// float32 <-> bfloat16 / float16 take typed loops; they must agree with the
// scalar routines bit for bit, through a transposed source and a broadcast
// one, for every 16-bit pattern (NaNs stay NaN).
TEST(CpuCopyConvertTest, TypedFloatConversionsMatchTheScalarPathOnStridedViews) {
  for (DType narrow : {DType::kBFloat16, DType::kFloat16}) {
    SCOPED_TRACE(dtype_name(narrow));
    // Every pattern, narrow -> float32 -> narrow, as a 256x256 transposed view.
    HostTensor n(narrow, {256, 256}, {1, 256});
    for (int64_t i = 0; i < 256; ++i)
      for (int64_t j = 0; j < 256; ++j) {
        const uint16_t v = static_cast<uint16_t>(j * 256 + i);
        std::memcpy(n.at({i, j}), &v, 2);
      }
    HostTensor f(DType::kFloat32, {256, 256}), back(narrow, {256, 256});
    ASSERT_TRUE(host_copy_strided(f.impl, n.impl).ok());
    ASSERT_TRUE(host_copy_strided(back.impl, f.impl).ok());
    int64_t bad = 0;
    for (int64_t i = 0; i < 256; ++i)
      for (int64_t j = 0; j < 256; ++j) {
        uint16_t src, got;
        std::memcpy(&src, n.at({i, j}), 2);
        std::memcpy(&got, back.at({i, j}), 2);
        float as_f;
        std::memcpy(&as_f, f.at({i, j}), 4);
        const double want = load_as_double(n.at({i, j}), narrow);
        if (std::isnan(want) ? !std::isnan(as_f) : static_cast<double>(as_f) != want) ++bad;
        if (std::isnan(want) ? !std::isnan(load_as_double(&got, narrow)) : got != src) ++bad;
      }
    EXPECT_EQ(bad, 0);
    // float32 -> narrow from a broadcast row: each element as the scalar path rounds it.
    HostTensor row(DType::kFloat32, {1, 5});
    const float vals[5] = {1.00390625f, -3.3e-5f, 70000.0f, 1e-8f, std::nanf("")};
    for (int64_t j = 0; j < 5; ++j) std::memcpy(row.at({0, j}), &vals[j], 4);
    HostTensor out(narrow, {3, 5});
    ASSERT_TRUE(host_copy_strided(out.impl, row.impl).ok());
    for (int64_t i = 0; i < 3; ++i)
      for (int64_t j = 0; j < 5; ++j) {
        unsigned char want[2];
        store_from_double(want, narrow, static_cast<double>(vals[j]));
        EXPECT_EQ(std::memcmp(out.at({i, j}), want, 2), 0) << i << "," << j;
      }
  }
}

TEST(CpuCopyConvertTest, FloatToIntTruncatesTowardZero) {
  HostTensor f(DType::kFloat32, {6}), i(DType::kInt32, {6}), u(DType::kUInt8, {6});
  fill(f, std::vector<float>{2.7f, -2.7f, 0.5f, -0.5f, 100.0f, 255.0f});
  ASSERT_TRUE(host_copy_strided(i.impl, f.impl).ok());
  EXPECT_EQ(values_of<int32_t>(i), (std::vector<int32_t>{2, -2, 0, 0, 100, 255}));
  ASSERT_TRUE(host_copy_strided(u.impl, f.impl).ok());
  EXPECT_EQ(values_of<uint8_t>(u)[4], 100);
  EXPECT_EQ(values_of<uint8_t>(u)[5], 255);
  HostTensor back(DType::kFloat64, {6});
  ASSERT_TRUE(host_copy_strided(back.impl, i.impl).ok());
  EXPECT_EQ(values_of<double>(back), (std::vector<double>{2, -2, 0, 0, 100, 255}));
}

TEST(CpuCopyConvertTest, BoolConversions) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  HostTensor f(DType::kFloat32, {5}), b(DType::kBool, {5});
  fill(f, std::vector<float>{0.0f, -0.0f, 0.25f, -3.0f, nan});
  ASSERT_TRUE(host_copy_strided(b.impl, f.impl).ok());
  EXPECT_EQ(values_of<uint8_t>(b), (std::vector<uint8_t>{0, 0, 1, 1, 1}));
  HostTensor i(DType::kInt64, {5}), bf(DType::kBFloat16, {5});
  ASSERT_TRUE(host_copy_strided(i.impl, b.impl).ok());
  EXPECT_EQ(values_of<int64_t>(i), (std::vector<int64_t>{0, 0, 1, 1, 1}));
  ASSERT_TRUE(host_copy_strided(bf.impl, b.impl).ok());
  EXPECT_EQ(values_of<uint16_t>(bf), (std::vector<uint16_t>{0, 0, 0x3F80, 0x3F80, 0x3F80}));
  HostTensor big(DType::kInt64, {2}), b2(DType::kBool, {2});
  fill(big, std::vector<int64_t>{int64_t{1} << 40, 0});
  ASSERT_TRUE(host_copy_strided(b2.impl, big.impl).ok());
  EXPECT_EQ(values_of<uint8_t>(b2), (std::vector<uint8_t>{1, 0}));
}

TEST(CpuCopyConvertTest, Int64StaysExact) {
  const std::vector<int64_t> in = {(int64_t{1} << 62) + 1, -((int64_t{1} << 60) + 3),
                                   std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min()};
  HostTensor src(DType::kInt64, {4});
  fill(src, in);
  // Strided int64 -> int64.
  HostTensor strided(DType::kInt64, {4}, {2}, 1);
  ASSERT_TRUE(host_copy_strided(strided.impl, src.impl).ok());
  for (int64_t k = 0; k < 4; ++k) {
    int64_t v;
    std::memcpy(&v, strided.at({k}), 8);
    EXPECT_EQ(v, in[static_cast<size_t>(k)]);
  }
  // int64 -> uint64 -> int64 keeps every bit.
  HostTensor u(DType::kUInt64, {4}), back(DType::kInt64, {4});
  ASSERT_TRUE(host_copy_strided(u.impl, src.impl).ok());
  ASSERT_TRUE(host_copy_strided(back.impl, u.impl).ok());
  EXPECT_EQ(values_of<int64_t>(back), in);
  // int64 -> int32 wraps like a C cast.
  HostTensor w(DType::kInt32, {1}), one(DType::kInt64, {1});
  fill(one, std::vector<int64_t>{(int64_t{1} << 32) + 7});
  ASSERT_TRUE(host_copy_strided(w.impl, one.impl).ok());
  EXPECT_EQ(values_of<int32_t>(w)[0], 7);
  // float64 -> int64 is exact for large representable values.
  HostTensor d(DType::kFloat64, {2}), di(DType::kInt64, {2});
  fill(d, std::vector<double>{std::ldexp(1.0, 62), -std::ldexp(1.0, 53) - 2});
  ASSERT_TRUE(host_copy_strided(di.impl, d.impl).ok());
  EXPECT_EQ(values_of<int64_t>(di), (std::vector<int64_t>{int64_t{1} << 62, -(int64_t{1} << 53) - 2}));
}

TEST(CpuCopyConvertTest, Int64ToFloat32RoundsOnce) {
  // Rounding through double first would land on a tie and round to even
  // (2^60); a single rounding goes up.
  const int64_t v = (int64_t{1} << 60) + (int64_t{1} << 36) + 1;
  HostTensor src(DType::kInt64, {1}), dst(DType::kFloat32, {1});
  fill(src, std::vector<int64_t>{v});
  ASSERT_TRUE(host_copy_strided(dst.impl, src.impl).ok());
  EXPECT_EQ(values_of<float>(dst)[0], static_cast<float>(v));
  EXPECT_EQ(values_of<float>(dst)[0], std::ldexp(1.0f, 60) + std::ldexp(1.0f, 37));
}

TEST(CpuCopyConvertTest, Float8Conversions) {
  HostTensor f(DType::kFloat32, {4}), e4(DType::kFloat8_e4m3fn, {4}), e5(DType::kFloat8_e5m2, {4});
  fill(f, std::vector<float>{1.0f, -1.5f, 448.0f, 1000.0f});
  ASSERT_TRUE(host_copy_strided(e4.impl, f.impl).ok());
  EXPECT_EQ(values_of<uint8_t>(e4), (std::vector<uint8_t>{0x38, 0xBC, 0x7E, 0x7F}));
  ASSERT_TRUE(host_copy_strided(e5.impl, e4.impl).ok());
  std::vector<uint8_t> e5v = values_of<uint8_t>(e5);
  EXPECT_EQ(e5v[0], 0x3C);
  EXPECT_EQ(e5v[1], 0xBE);
  EXPECT_TRUE(std::isnan(load_as_double(&e5v[3], DType::kFloat8_e5m2)));
}

TEST(CpuCopyConvertTest, EveryPairOfRealDTypesConvertsSmallIntegers) {
  for (DType from : kEveryDType) {
    for (DType to : kEveryDType) {
      if (dtype_is_complex(from) || dtype_is_complex(to)) continue;
      SCOPED_TRACE(std::string(dtype_name(from)) + " -> " + dtype_name(to));
      HostTensor src(from, {2, 3}, {1, 2});  // column-major source
      for (int64_t i = 0; i < 2; ++i)
        for (int64_t j = 0; j < 3; ++j) src.set({i, j}, from == DType::kBool ? (i + j) % 2 : i * 3 + j);
      HostTensor dst(to, {2, 3});
      ASSERT_TRUE(host_copy_strided(dst.impl, src.impl).ok());
      for (int64_t i = 0; i < 2; ++i)
        for (int64_t j = 0; j < 3; ++j) {
          double want = from == DType::kBool ? (i + j) % 2 : i * 3 + j;
          if (to == DType::kBool) want = want != 0;
          ASSERT_EQ(dst.get({i, j}), want) << i << "," << j;
        }
    }
  }
}

TEST(CpuCopyConvertTest, ComplexConversionsAreRefusedCleanly) {
  HostTensor f(DType::kFloat32, {2}), c(DType::kComplex64, {2});
  Status s = host_copy_strided(c.impl, f.impl);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kUnimplemented);
  EXPECT_NE(s.message().find("float32 to complex64"), std::string::npos) << s.message();
  s = host_copy_strided(f.impl, c.impl);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("complex64 to float32"), std::string::npos);
}

TEST(HostCopyTest, CopyTensorThroughTheRegistryAndZero) {
  Result<TensorImpl> a = empty_contiguous({2, 3}, DType::kFloat32, DeviceId{});
  Result<TensorImpl> b = empty_strided({2, 3}, {1, 2}, DType::kFloat64, DeviceId{});
  ASSERT_TRUE(a.ok() && b.ok());
  auto* pa = static_cast<float*>(a->data_ptr());
  for (int k = 0; k < 6; ++k) pa[k] = static_cast<float>(k) + 0.5f;
  ASSERT_TRUE(copy_tensor(*b, *a, false).ok());
  auto* pb = static_cast<double*>(b->data_ptr());
  EXPECT_EQ((std::vector<double>(pb, pb + 6)), (std::vector<double>{0.5, 3.5, 1.5, 4.5, 2.5, 5.5}));
  Result<Device*> cpu = get_device(DeviceId{});
  ASSERT_TRUE(cpu.ok());
  EXPECT_EQ((*cpu)->description(), "cpu");
  EXPECT_EQ((*cpu)->current_stream(), nullptr);
  EXPECT_TRUE((*cpu)->synchronize().ok());
  // Zero a strided view (every other element) of a.
  TensorImpl every_other(a->storage(), DType::kFloat32, {3}, {2}, 0);
  ASSERT_TRUE((*cpu)->zero(every_other).ok());
  EXPECT_EQ((std::vector<float>(pa, pa + 6)), (std::vector<float>{0, 1.5f, 0, 3.5f, 0, 5.5f}));
  ASSERT_TRUE((*cpu)->zero(*a).ok());
  EXPECT_EQ((std::vector<float>(pa, pa + 6)), (std::vector<float>(6, 0.0f)));
}

}  // namespace
}  // namespace aotirt
