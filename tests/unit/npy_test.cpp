// Tests for the CLI's .npy reader and writer (tools/cli/npy.cpp). The
// reference files below were written by numpy 2.4 (np.save, and
// numpy.lib.format.write_array for versions 2.0 and 3.0) and are stored as
// hex; our writer must reproduce them byte for byte.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/resource.h>

#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "aotirt/aotirt.h"
#include "cli/npy.h"

namespace aotirt {
namespace cli {
namespace {

namespace fs = std::filesystem;

struct Fixture {
  const char* name;
  const char* hex;
};

// np.save of a (2, 3) array of each dtype; the name is the dtype string.
const Fixture kPerDtype[] = {
    {"<f2",
     "934e554d5059010076007b276465736372273a20273c6632272c2027666f727472616e5f6f72646572273a2046616c73"
     "652c20277368617065273a2028322c2033292c207d202020202020202020202020202020202020202020202020202020"
     "202020202020202020202020202020202020202020202020202020202020200a00be00ba0000003a003e8040",
    },
    {"<f4",
     "934e554d5059010076007b276465736372273a20273c6634272c2027666f727472616e5f6f72646572273a2046616c73"
     "652c20277368617065273a2028322c2033292c207d202020202020202020202020202020202020202020202020202020"
     "202020202020202020202020202020202020202020202020202020202020200a0000c0bf000040bf000000000000403f"
     "0000c03f00001040",
    },
    {"<f8",
     "934e554d5059010076007b276465736372273a20273c6638272c2027666f727472616e5f6f72646572273a2046616c73"
     "652c20277368617065273a2028322c2033292c207d202020202020202020202020202020202020202020202020202020"
     "202020202020202020202020202020202020202020202020202020202020200a000000000000f8bf000000000000e8bf"
     "0000000000000000000000000000e83f000000000000f83f0000000000000240",
    },
    {"|i1",
     "934e554d5059010076007b276465736372273a20277c6931272c2027666f727472616e5f6f72646572273a2046616c73"
     "652c20277368617065273a2028322c2033292c207d202020202020202020202020202020202020202020202020202020"
     "202020202020202020202020202020202020202020202020202020202020200afeff00010203",
    },
    {"<i2",
     "934e554d5059010076007b276465736372273a20273c6932272c2027666f727472616e5f6f72646572273a2046616c73"
     "652c20277368617065273a2028322c2033292c207d202020202020202020202020202020202020202020202020202020"
     "202020202020202020202020202020202020202020202020202020202020200afeffffff0000010002000300",
    },
    {"<i4",
     "934e554d5059010076007b276465736372273a20273c6934272c2027666f727472616e5f6f72646572273a2046616c73"
     "652c20277368617065273a2028322c2033292c207d202020202020202020202020202020202020202020202020202020"
     "202020202020202020202020202020202020202020202020202020202020200afeffffffffffffff0000000001000000"
     "0200000003000000",
    },
    {"<i8",
     "934e554d5059010076007b276465736372273a20273c6938272c2027666f727472616e5f6f72646572273a2046616c73"
     "652c20277368617065273a2028322c2033292c207d202020202020202020202020202020202020202020202020202020"
     "202020202020202020202020202020202020202020202020202020202020200afeffffffffffffffffffffffffffffff"
     "0000000000000000010000000000000002000000000000000300000000000000",
    },
    {"|u1",
     "934e554d5059010076007b276465736372273a20277c7531272c2027666f727472616e5f6f72646572273a2046616c73"
     "652c20277368617065273a2028322c2033292c207d202020202020202020202020202020202020202020202020202020"
     "202020202020202020202020202020202020202020202020202020202020200a00285078a0c8",
    },
    {"<u2",
     "934e554d5059010076007b276465736372273a20273c7532272c2027666f727472616e5f6f72646572273a2046616c73"
     "652c20277368617065273a2028322c2033292c207d202020202020202020202020202020202020202020202020202020"
     "202020202020202020202020202020202020202020202020202020202020200a0000280050007800a000c800",
    },
    {"<u4",
     "934e554d5059010076007b276465736372273a20273c7534272c2027666f727472616e5f6f72646572273a2046616c73"
     "652c20277368617065273a2028322c2033292c207d202020202020202020202020202020202020202020202020202020"
     "202020202020202020202020202020202020202020202020202020202020200a00000000280000005000000078000000"
     "a0000000c8000000",
    },
    {"<u8",
     "934e554d5059010076007b276465736372273a20273c7538272c2027666f727472616e5f6f72646572273a2046616c73"
     "652c20277368617065273a2028322c2033292c207d202020202020202020202020202020202020202020202020202020"
     "202020202020202020202020202020202020202020202020202020202020200a00000000000000002800000000000000"
     "50000000000000007800000000000000a000000000000000c800000000000000",
    },
    {"|b1",
     "934e554d5059010076007b276465736372273a20277c6231272c2027666f727472616e5f6f72646572273a2046616c73"
     "652c20277368617065273a2028322c2033292c207d202020202020202020202020202020202020202020202020202020"
     "202020202020202020202020202020202020202020202020202020202020200a010001000100",
    },
    {"<c8",
     "934e554d5059010076007b276465736372273a20273c6338272c2027666f727472616e5f6f72646572273a2046616c73"
     "652c20277368617065273a2028322c2033292c207d202020202020202020202020202020202020202020202020202020"
     "202020202020202020202020202020202020202020202020202020202020200a000000c000000000000080bf0000003f"
     "000000000000803f0000803f0000c03f00000040000000400000404000002040",
    },
    {"<c16",
     "934e554d5059010076007b276465736372273a20273c633136272c2027666f727472616e5f6f72646572273a2046616c"
     "73652c20277368617065273a2028322c2033292c207d2020202020202020202020202020202020202020202020202020"
     "202020202020202020202020202020202020202020202020202020202020200a00000000000000c00000000000000000"
     "000000000000f0bf000000000000e03f0000000000000000000000000000f03f000000000000f03f000000000000f83f"
     "0000000000000040000000000000004000000000000008400000000000000440",
    },
};

const Fixture kOthers[] = {
    {"fortran_f4_2x3x4",
     "934e554d5059010076007b276465736372273a20273c6634272c2027666f727472616e5f6f72646572273a2054727565"
     "2c20277368617065273a2028322c20332c2034292c207d20202020202020202020202020202020202020202020202020"
     "202020202020202020202020202020202020202020202020202020202020200a00000000000040410000804000008041"
     "000000410000a0410000803f000050410000a04000008841000010410000a84100000040000060410000c04000009041"
     "000020410000b04100004040000070410000e04000009841000030410000b841",
    },
    {"v2_f4_3",
     "934e554d50590200740000007b276465736372273a20273c6634272c2027666f727472616e5f6f72646572273a204661"
     "6c73652c20277368617065273a2028332c292c207d202020202020202020202020202020202020202020202020202020"
     "202020202020202020202020202020202020202020202020202020202020200a000000000000803f00000040",
    },
    {"v3_f4_3",
     "934e554d50590300740000007b276465736372273a20273c6634272c2027666f727472616e5f6f72646572273a204661"
     "6c73652c20277368617065273a2028332c292c207d202020202020202020202020202020202020202020202020202020"
     "202020202020202020202020202020202020202020202020202020202020200a000000000000803f00000040",
    },
    {"scalar_b1",
     "934e554d5059010076007b276465736372273a20277c6231272c2027666f727472616e5f6f72646572273a2046616c73"
     "652c20277368617065273a2028292c207d20202020202020202020202020202020202020202020202020202020202020"
     "202020202020202020202020202020202020202020202020202020202020200a01",
    },
    {"empty_u1_0x3",
     "934e554d5059010076007b276465736372273a20277c7531272c2027666f727472616e5f6f72646572273a2046616c73"
     "652c20277368617065273a2028302c2033292c207d202020202020202020202020202020202020202020202020202020"
     "202020202020202020202020202020202020202020202020202020202020200a",
    },
    {"transposed_f4_3x2",
     "934e554d5059010076007b276465736372273a20273c6634272c2027666f727472616e5f6f72646572273a2046616c73"
     "652c20277368617065273a2028332c2032292c207d202020202020202020202020202020202020202020202020202020"
     "202020202020202020202020202020202020202020202020202020202020200a00000000000040400000803f00008040"
     "000000400000a040",
    },
    {"long_shape_f4_1x2x1x2x1x2x1",
     "934e554d5059010076007b276465736372273a20273c6634272c2027666f727472616e5f6f72646572273a2046616c73"
     "652c20277368617065273a2028312c20322c20312c20322c20312c20322c2031292c207d202020202020202020202020"
     "202020202020202020202020202020202020202020202020202020202020200a000000000000803f0000004000004040"
     "000080400000a0400000c0400000e040",
    },
};

struct DTypeCase {
  const char* descr;
  DType dtype;
};
const DTypeCase kDTypes[] = {
    {"<f2", DType::kFloat16}, {"<f4", DType::kFloat32}, {"<f8", DType::kFloat64},
    {"|i1", DType::kInt8},    {"<i2", DType::kInt16},   {"<i4", DType::kInt32},
    {"<i8", DType::kInt64},   {"|u1", DType::kUInt8},   {"<u2", DType::kUInt16},
    {"<u4", DType::kUInt32},  {"<u8", DType::kUInt64},  {"|b1", DType::kBool},
    {"<c8", DType::kComplex64}, {"<c16", DType::kComplex128},
};

std::string from_hex(const char* hex) {
  std::string out;
  for (size_t i = 0; hex[i] && hex[i + 1]; i += 2) out += static_cast<char>(std::stoi(std::string(hex + i, 2), nullptr, 16));
  return out;
}

std::string fixture(const char* name) {
  for (const auto& f : kOthers)
    if (std::strcmp(f.name, name) == 0) return from_hex(f.hex);
  ADD_FAILURE() << "no fixture " << name;
  return {};
}

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// A .npy file with |dict| as its header, padded as numpy pads it.
std::string make_npy(const std::string& dict, const std::string& data, int major = 1) {
  const size_t prelude = major == 1 ? 10 : 12;
  std::string header = dict;
  header.append(64 - (prelude + header.size() + 1) % 64, ' ');
  header += '\n';
  std::string out = "\x93NUMPY";
  out += static_cast<char>(major);
  out += '\0';
  for (size_t i = 0; i < prelude - 8; ++i) out += static_cast<char>((header.size() >> (8 * i)) & 0xff);
  return out + header + data;
}

std::string tensor_bytes(const Tensor& t) { return std::string(static_cast<const char*>(t.data()), t.nbytes()); }

class NpyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "aotirt_npy_test_XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string path(const std::string& name) const { return (fs::path(dir_) / name).string(); }
  std::string put(const std::string& name, const std::string& bytes) const {
    write_bytes(path(name), bytes);
    return path(name);
  }
  // Reads |bytes| as a file and expects |code| with |needle| and the path in the message.
  void expect_error(const std::string& bytes, StatusCode code, const std::string& needle) {
    const std::string p = put("bad.npy", bytes);
    Result<Tensor> t = read_npy(p);
    ASSERT_FALSE(t.ok()) << "read succeeded; expected: " << needle;
    EXPECT_EQ(t.status().code(), code) << t.status().to_string();
    EXPECT_NE(t.status().message().find(needle), std::string::npos) << t.status().to_string();
    EXPECT_NE(t.status().message().find(p), std::string::npos) << t.status().to_string();
  }
  std::string dir_;
};

TEST_F(NpyTest, DescrMapping) {
  for (const auto& c : kDTypes) {
    Result<DType> d = dtype_from_npy_descr(c.descr);
    ASSERT_TRUE(d.ok()) << c.descr;
    EXPECT_EQ(d.value(), c.dtype) << c.descr;
    Result<std::string> s = npy_descr(c.dtype);
    ASSERT_TRUE(s.ok());
    EXPECT_EQ(s.value(), c.descr);
  }
  EXPECT_EQ(dtype_from_npy_descr("=f4").value(), DType::kFloat32);
  EXPECT_EQ(dtype_from_npy_descr("<u1").value(), DType::kUInt8);
  EXPECT_EQ(npy_descr(DType::kBFloat16).status().code(), StatusCode::kUnimplemented);
  EXPECT_EQ(npy_descr(DType::kFloat8_e4m3fn).status().code(), StatusCode::kUnimplemented);
}

TEST_F(NpyTest, ReadsNumpyFilesOfEveryDtype) {
  ASSERT_EQ(std::size(kPerDtype), std::size(kDTypes));
  for (size_t i = 0; i < std::size(kPerDtype); ++i) {
    SCOPED_TRACE(kPerDtype[i].name);
    ASSERT_STREQ(kPerDtype[i].name, kDTypes[i].descr);
    const std::string bytes = from_hex(kPerDtype[i].hex);
    Result<Tensor> t = read_npy(put("ref.npy", bytes));
    ASSERT_TRUE(t.ok()) << t.status().to_string();
    EXPECT_EQ(t->dtype(), kDTypes[i].dtype);
    EXPECT_EQ(t->sizes(), (std::vector<int64_t>{2, 3}));
    EXPECT_TRUE(t->device().is_cpu());
    EXPECT_EQ(tensor_bytes(*t), bytes.substr(bytes.size() - t->nbytes()));
  }
}

TEST_F(NpyTest, ReadsValues) {
  Result<Tensor> f = read_npy(put("f4.npy", from_hex(kPerDtype[1].hex)));
  ASSERT_TRUE(f.ok()) << f.status().to_string();
  const float* v = static_cast<const float*>(f->data());
  const float expected[] = {-1.5f, -0.75f, 0.0f, 0.75f, 1.5f, 2.25f};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(v[i], expected[i]) << i;

  Result<Tensor> b = read_npy(put("b1.npy", from_hex(kPerDtype[11].hex)));
  ASSERT_TRUE(b.ok()) << b.status().to_string();
  const uint8_t* bv = static_cast<const uint8_t*>(b->data());
  for (int i = 0; i < 6; ++i) EXPECT_EQ(bv[i], i % 2 == 0 ? 1 : 0) << i;
}

TEST_F(NpyTest, WritesNumpyIdenticalFilesForEveryDtype) {
  for (const auto& fx : kPerDtype) {
    SCOPED_TRACE(fx.name);
    const std::string bytes = from_hex(fx.hex);
    Result<Tensor> t = read_npy(put("ref.npy", bytes));
    ASSERT_TRUE(t.ok()) << t.status().to_string();
    ASSERT_TRUE(write_npy(path("out.npy"), *t).ok());
    EXPECT_EQ(read_bytes(path("out.npy")), bytes);
  }
}

TEST_F(NpyTest, RoundTripsEveryDtype) {
  const std::vector<std::vector<int64_t>> shapes = {{3, 1, 4}, {}, {0, 5}, {7}};
  for (const auto& c : kDTypes) {
    for (const auto& shape : shapes) {
      SCOPED_TRACE(std::string(c.descr) + " rank " + std::to_string(shape.size()));
      Result<Tensor> t = Tensor::empty(shape, c.dtype);
      ASSERT_TRUE(t.ok()) << t.status().to_string();
      uint8_t* p = static_cast<uint8_t*>(t->data());
      for (size_t i = 0; i < t->nbytes(); ++i)
        p[i] = c.dtype == DType::kBool ? static_cast<uint8_t>(i % 3 == 0) : static_cast<uint8_t>(i * 37 + 11);
      ASSERT_TRUE(write_npy(path("rt.npy"), *t).ok());
      Result<Tensor> back = read_npy(path("rt.npy"));
      ASSERT_TRUE(back.ok()) << back.status().to_string();
      EXPECT_EQ(back->dtype(), c.dtype);
      EXPECT_EQ(back->sizes(), shape);
      EXPECT_EQ(tensor_bytes(*back), tensor_bytes(*t));
    }
  }
}

TEST_F(NpyTest, ReadsFortranOrder) {
  Result<Tensor> t = read_npy(put("f.npy", fixture("fortran_f4_2x3x4")));
  ASSERT_TRUE(t.ok()) << t.status().to_string();
  EXPECT_EQ(t->sizes(), (std::vector<int64_t>{2, 3, 4}));
  EXPECT_TRUE(t->is_contiguous());
  const float* v = static_cast<const float*>(t->data());
  for (int i = 0; i < 24; ++i) EXPECT_EQ(v[i], static_cast<float>(i)) << i;
}

TEST_F(NpyTest, ReadsVersions2And3) {
  for (const char* name : {"v2_f4_3", "v3_f4_3"}) {
    SCOPED_TRACE(name);
    Result<Tensor> t = read_npy(put("v.npy", fixture(name)));
    ASSERT_TRUE(t.ok()) << t.status().to_string();
    EXPECT_EQ(t->sizes(), (std::vector<int64_t>{3}));
    const float* v = static_cast<const float*>(t->data());
    EXPECT_EQ(v[0], 0.0f);
    EXPECT_EQ(v[2], 2.0f);
  }
}

TEST_F(NpyTest, ScalarEmptyAndHighRankMatchNumpy) {
  for (const char* name : {"scalar_b1", "empty_u1_0x3", "long_shape_f4_1x2x1x2x1x2x1"}) {
    SCOPED_TRACE(name);
    const std::string bytes = fixture(name);
    Result<Tensor> t = read_npy(put("in.npy", bytes));
    ASSERT_TRUE(t.ok()) << t.status().to_string();
    ASSERT_TRUE(write_npy(path("out.npy"), *t).ok());
    EXPECT_EQ(read_bytes(path("out.npy")), bytes);
  }
  Result<Tensor> s = read_npy(put("s.npy", fixture("scalar_b1")));
  EXPECT_EQ(s->dim(), 0);
  EXPECT_EQ(s->numel(), 1);
  Result<Tensor> e = read_npy(put("e.npy", fixture("empty_u1_0x3")));
  EXPECT_EQ(e->sizes(), (std::vector<int64_t>{0, 3}));
}

TEST_F(NpyTest, WritesNonContiguousInCOrder) {
  float data[6] = {0, 1, 2, 3, 4, 5};
  // The transpose of a row-major (2, 3) array.
  Tensor t = Tensor::from_blob(data, {3, 2}, DType::kFloat32, DeviceId{}, {1, 3});
  ASSERT_FALSE(t.is_contiguous());
  ASSERT_TRUE(write_npy(path("t.npy"), t).ok());
  EXPECT_EQ(read_bytes(path("t.npy")), fixture("transposed_f4_3x2"));
}

// write_npy_float32 against write_npy of the same tensor widened in one
// conversion: byte for byte, for bfloat16 and float16, below one chunk
// (262144 elements), across several with a partial last one, with one
// thread and several, and for a strided view.
TEST_F(NpyTest, Float32WriterMatchesOneConversion) {
  std::vector<uint16_t> bits(3 * 262144 + 12345);
  uint32_t x = 12345;
  for (uint16_t& b : bits) {
    x = x * 1664525u + 1013904223u;
    b = static_cast<uint16_t>(x >> 16);
    // No NaN patterns: float16 and bfloat16 NaN payloads widen alike either
    // way, but the comparison below would need them spelled out.
    if ((b & 0x7f80) == 0x7f80 || (b & 0x7c00) == 0x7c00) b &= 0xbfff;
  }
  struct Case {
    DType dtype;
    std::vector<int64_t> sizes;
    std::vector<int64_t> strides;
    int threads;
  };
  const int64_t big = static_cast<int64_t>(bits.size());
  const Case cases[] = {{DType::kBFloat16, {big}, {}, 4},
                        {DType::kBFloat16, {3, big / 3}, {}, 1},
                        {DType::kFloat16, {big}, {}, 3},
                        {DType::kBFloat16, {5, 7}, {}, 4},
                        {DType::kFloat16, {7, 5}, {1, 7}, 2},
                        {DType::kBFloat16, {1000, 300}, {1, 1000}, 4},
                        {DType::kFloat32, {4, 4}, {}, 2}};
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(dtype_name(c.dtype)) + " " + std::to_string(c.sizes.back()) + " threads " +
                 std::to_string(c.threads));
    Tensor t = Tensor::from_blob(bits.data(), c.sizes, c.dtype, DeviceId{}, c.strides);
    Result<Tensor> wide = t.to(DeviceId{}, DType::kFloat32);
    ASSERT_TRUE(wide.ok()) << wide.status().to_string();
    ASSERT_TRUE(write_npy(path("one.npy"), *wide).ok());
    Status st = write_npy_float32(path("chunked.npy"), t, c.threads);
    ASSERT_TRUE(st.ok()) << st.to_string();
    const std::string want = read_bytes(path("one.npy"));
    ASSERT_EQ(read_bytes(path("chunked.npy")).size(), want.size());
    EXPECT_TRUE(read_bytes(path("chunked.npy")) == want);
    Result<Tensor> back = read_npy(path("chunked.npy"));
    ASSERT_TRUE(back.ok()) << back.status().to_string();
    EXPECT_EQ(back->dtype(), DType::kFloat32);
    EXPECT_EQ(back->sizes(), c.sizes);
  }
}

// A write that fails part way (the file size limit: EFBIG) names the path,
// and no partial file is left.
TEST_F(NpyTest, Float32WriterFailsCleanly) {
  std::vector<uint16_t> bits(4 * 262144, 0x3f80);
  Tensor t = Tensor::from_blob(bits.data(), {static_cast<int64_t>(bits.size())}, DType::kBFloat16);
  const std::string out = path("limited.npy");
  struct rlimit saved;
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &saved), 0);
  void (*old_handler)(int) = std::signal(SIGXFSZ, SIG_IGN);
  struct rlimit small = saved;
  small.rlim_cur = 3 << 20;  // a 4 MiB file is refused from its fourth MiB on
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
  Status st = write_npy_float32(out, t, 3);
  setrlimit(RLIMIT_FSIZE, &saved);
  std::signal(SIGXFSZ, old_handler);
  EXPECT_EQ(st.code(), StatusCode::kIoError) << st.to_string();
  EXPECT_NE(st.message().find(out), std::string::npos) << st.to_string();
  EXPECT_NE(st.message().find("write failed"), std::string::npos) << st.to_string();
  EXPECT_FALSE(fs::exists(out));

  const std::string unwritable = path("no/such/dir/out.npy");
  Status missing = write_npy_float32(unwritable, t, 2);
  EXPECT_EQ(missing.code(), StatusCode::kIoError);
  EXPECT_NE(missing.message().find("cannot create"), std::string::npos) << missing.to_string();
  EXPECT_EQ(write_npy_float32(path("u.npy"), Tensor(), 2).code(), StatusCode::kInvalidArgument);
  Tensor on_gpu = Tensor::from_blob(bits.data(), {2}, DType::kBFloat16, DeviceId{DeviceType::kCuda, 0});
  Status device = write_npy_float32(path("d.npy"), on_gpu, 2);
  EXPECT_EQ(device.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(device.message().find("copy it to the CPU first"), std::string::npos) << device.to_string();
  Tensor text = Tensor::from_blob(bits.data(), {2}, DType::kComplex32);
  EXPECT_FALSE(write_npy_float32(path("c.npy"), text, 2).ok());
  EXPECT_FALSE(fs::exists(path("c.npy")));
}

TEST_F(NpyTest, AcceptsNativeOrderDoubleQuotesAndPython2Longs) {
  const std::string data("\x01\x00\x02\x00", 4);
  Result<Tensor> t = read_npy(
      put("n.npy", make_npy("{\"shape\": (1L, 2L), \"fortran_order\": False, \"descr\": \"=i2\"}", data)));
  ASSERT_TRUE(t.ok()) << t.status().to_string();
  EXPECT_EQ(t->dtype(), DType::kInt16);
  EXPECT_EQ(t->sizes(), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(tensor_bytes(*t), data);
}

// ---- malformed files ----

const char kF4Dict[] = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }";
const std::string kTwoFloats(8, '\0');

TEST_F(NpyTest, MissingFile) {
  Result<Tensor> t = read_npy(path("absent.npy"));
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), StatusCode::kNotFound);
  EXPECT_NE(t.status().message().find("absent.npy"), std::string::npos);
}

TEST_F(NpyTest, Directory) {
  Result<Tensor> t = read_npy(dir_);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), StatusCode::kIoError);
  EXPECT_NE(t.status().message().find("directory"), std::string::npos);
}

TEST_F(NpyTest, EmptyFile) { expect_error("", StatusCode::kInvalidArgument, "empty"); }

TEST_F(NpyTest, BadMagic) {
  expect_error("PK\x03\x04 this is a zip", StatusCode::kInvalidArgument, "bad magic");
  expect_error("\x93NUMPZ\x01\x00", StatusCode::kInvalidArgument, "bad magic");
  expect_error("abc", StatusCode::kInvalidArgument, "bad magic");
}

TEST_F(NpyTest, TruncatedHeader) {
  const std::string good = make_npy(kF4Dict, kTwoFloats);
  expect_error(good.substr(0, 4), StatusCode::kDataLoss, "truncated header");
  expect_error(good.substr(0, 7), StatusCode::kDataLoss, "truncated header");
  expect_error(good.substr(0, 9), StatusCode::kDataLoss, "truncated header");
  expect_error(good.substr(0, 40), StatusCode::kDataLoss, "truncated header");
  expect_error(make_npy(kF4Dict, kTwoFloats, 2).substr(0, 11), StatusCode::kDataLoss, "truncated header");
}

TEST_F(NpyTest, UnsupportedVersion) {
  std::string v4 = make_npy(kF4Dict, kTwoFloats, 2);
  v4[6] = 4;
  expect_error(v4, StatusCode::kUnimplemented, "version 4.0");
}

TEST_F(NpyTest, MalformedHeader) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"'descr': '<f4', 'fortran_order': False, 'shape': (2,)", "expected '{'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,)", "expected ',' or '}'"},
      {"{'descr': '<f4' 'fortran_order': False, 'shape': (2,)}", "expected ',' or '}'"},
      {"{descr: '<f4', 'fortran_order': False, 'shape': (2,)}", "expected a quoted key"},
      {"{'descr': '<f4, 'fortran_order': False, 'shape': (2,)}", "malformed header"},
      {"{'descr': '<f4', 'fortran_order': false, 'shape': (2,)}", "expected a string, True, False"},
      {"{'descr': '<f4', 'fortran_order': False}", "missing key 'shape'"},
      {"{'fortran_order': False, 'shape': (2,)}", "missing key 'descr'"},
      {"{'descr': '<f4', 'shape': (2,)}", "missing key 'fortran_order'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'extra': 1}", "expected a string"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'extra': 'x'}", "unexpected key 'extra'"},
      {"{'descr': (4,), 'fortran_order': False, 'shape': (2,)}", "'descr' is not a string"},
      {"{'descr': '<f4', 'fortran_order': 'no', 'shape': (2,)}", "'fortran_order' is not True or False"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,)} x", "unexpected text after"},
  };
  for (const auto& [dict, needle] : cases) {
    SCOPED_TRACE(dict);
    expect_error(make_npy(dict, kTwoFloats), StatusCode::kDataLoss, needle);
  }
}

TEST_F(NpyTest, UnsupportedDtype) {
  for (const char* descr : {"<U5", "|O", "<M8[ns]", "|S3", "<f16", "|f4", "f4", ""}) {
    SCOPED_TRACE(descr);
    expect_error(make_npy(std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': (2,), }",
                          kTwoFloats),
                 StatusCode::kUnimplemented, "unsupported dtype");
  }
  expect_error(make_npy("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }", kTwoFloats),
               StatusCode::kUnimplemented, "structured");
}

TEST_F(NpyTest, BigEndian) {
  expect_error(make_npy("{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", kTwoFloats),
               StatusCode::kUnimplemented, "big-endian");
  // One-byte types have no byte order, so '>' is harmless there.
  Result<Tensor> t =
      read_npy(put("u1.npy", make_npy("{'descr': '>u1', 'fortran_order': False, 'shape': (2,), }", "ab")));
  EXPECT_TRUE(t.ok()) << t.status().to_string();
}

TEST_F(NpyTest, BadShape) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"(-2,)", "negative dimension"},
      {"(2.5,)", "expected ',' or ')'"},
      {"(a,)", "expected an integer"},
      {"[2]", "'shape' is not a tuple"},
      {"'2'", "'shape' is not a tuple"},
      {"(99999999999999999999,)", "does not fit"},
      {"(4294967296, 4294967296)", "overflows"},
  };
  for (const auto& [shape, needle] : cases) {
    SCOPED_TRACE(shape);
    expect_error(make_npy("{'descr': '<f4', 'fortran_order': False, 'shape': " + shape + ", }", kTwoFloats),
                 StatusCode::kDataLoss, needle);
  }
}

TEST_F(NpyTest, TruncatedData) {
  expect_error(make_npy(kF4Dict, kTwoFloats.substr(0, 7)), StatusCode::kDataLoss, "truncated data");
  expect_error(make_npy(kF4Dict, ""), StatusCode::kDataLoss, "truncated data");
}

TEST_F(NpyTest, TrailingData) {
  expect_error(make_npy(kF4Dict, kTwoFloats + "x"), StatusCode::kDataLoss, "unexpected bytes after the data");
}

TEST_F(NpyTest, WriteErrors) {
  float data[2] = {1, 2};
  Tensor t = Tensor::from_blob(data, {2}, DType::kFloat32);
  const std::string unwritable = path("no/such/dir/out.npy");
  Status st = write_npy(unwritable, t);
  EXPECT_EQ(st.code(), StatusCode::kIoError);
  EXPECT_NE(st.message().find(unwritable), std::string::npos) << st.to_string();

  Status bf = write_npy(path("bf.npy"), Tensor::from_blob(data, {2}, DType::kBFloat16));
  EXPECT_EQ(bf.code(), StatusCode::kUnimplemented);
  EXPECT_NE(bf.message().find("bfloat16"), std::string::npos) << bf.to_string();
  EXPECT_FALSE(fs::exists(path("bf.npy")));

  EXPECT_EQ(write_npy(path("u.npy"), Tensor()).code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace cli
}  // namespace aotirt
