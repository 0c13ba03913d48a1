// Weight uploads (cuda_upload.h): cudaMemcpy calls from a mapped file range
// taken over by aotirt's readers land byte for byte, in program order where
// destinations overlap, while copies from elsewhere still go to the runtime;
// refusals, and read errors that name the file. Skipped without a GPU, except
// the option and refusal checks that need none.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "backends/cuda/runtime/cuda_options.h"
#include "backends/cuda/runtime/cuda_upload.h"
#include "base/file_util.h"
#include "cuda_test_util.h"

namespace aotirt {
namespace {

using namespace cuda_test;

constexpr size_t kHeader = 4096 + 7;  // the range starts at an odd file offset, as a zip entry does

struct BlobFile {
  TempDir dir;
  std::string path;
  std::vector<uint8_t> bytes;  // the range's bytes
  MappedRegion region;
};

BlobFile make_blob(size_t size, unsigned seed) {
  BlobFile b;
  Result<TempDir> dir = TempDir::create("aotirt-upload-test-");
  EXPECT_TRUE(dir.ok()) << dir.status().to_string();
  b.dir = std::move(dir).value();
  b.path = b.dir.path() + "/blob.bin";
  std::mt19937 rng(seed);
  b.bytes.resize(size);
  for (auto& v : b.bytes) v = static_cast<uint8_t>(rng());
  std::ofstream f(b.path, std::ios::binary);
  std::vector<char> header(kHeader, 'h');
  f.write(header.data(), header.size());
  f.write(reinterpret_cast<const char*>(b.bytes.data()), b.bytes.size());
  f.close();
  Result<MappedRegion> r = MappedRegion::map(b.path, kHeader, size);
  EXPECT_TRUE(r.ok()) << r.status().to_string();
  b.region = std::move(r).value();
  return b;
}

CudaUploadOptions small_pieces(int threads) {
  CudaUploadOptions o;
  o.threads = threads;
  o.piece_bytes = 64 << 10;
  o.min_bytes = 0;
  return o;
}

// An upload of the whole of |b|'s range, with 64 KiB pieces.
Result<std::unique_ptr<HostUpload>> open_upload(const BlobFile& b, int threads) {
  return cuda_begin_upload(0, b.region.data(), b.bytes.size(), b.path, kHeader, small_pieces(threads));
}

struct DeviceBuffer {
  void* ptr = nullptr;
  explicit DeviceBuffer(size_t n) { EXPECT_EQ(cudaMalloc(&ptr, n), cudaSuccess); }
  ~DeviceBuffer() { cudaFree(ptr); }
  std::vector<uint8_t> read(size_t n) const {
    std::vector<uint8_t> out(n);
    EXPECT_EQ(cudaMemcpy(out.data(), ptr, n, cudaMemcpyDeviceToHost), cudaSuccess);
    return out;
  }
  uint8_t* at(size_t off) const { return static_cast<uint8_t*>(ptr) + off; }
};

TEST(CudaUploadOptionsTest, DisablingUploadsLeavesNoThreads) {
  EXPECT_EQ(cuda_upload_options().threads, CudaUploadOptions().threads);
  CudaOptions off;
  off.disabled = static_cast<uint32_t>(CudaFeature::kUpload);
  set_cuda_options_for_testing(&off);
  EXPECT_EQ(cuda_upload_options().threads, 0);
  off.disabled = static_cast<uint32_t>(CudaFeature::kUploadThreshold);
  EXPECT_EQ(cuda_upload_options().min_bytes, 0u);
  EXPECT_EQ(cuda_upload_options().threads, CudaUploadOptions().threads);
  set_cuda_options_for_testing(nullptr);
}

TEST(CudaUploadOptionsTest, SmallRangesAndZeroThreadsOpenNothing) {
  static const uint8_t data[16] = {};
  CudaUploadOptions o;
  Result<std::unique_ptr<HostUpload>> u = cuda_begin_upload(0, data, sizeof(data), "/nonexistent", 0, o);
  ASSERT_TRUE(u.ok()) << u.status().to_string();
  EXPECT_EQ(u.value(), nullptr);  // under min_bytes: the file is not even opened
  o.min_bytes = 0;
  o.threads = 0;
  u = cuda_begin_upload(0, data, sizeof(data), "/nonexistent", 0, o);
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u.value(), nullptr);
}

class CudaUploadTest : public CudaTest {};

TEST_F(CudaUploadTest, CopiesFromTheRangeLandByteForByte) {
  const size_t n = (size_t{5} << 20) + 333;
  BlobFile blob = make_blob(n, 1);
  DeviceBuffer dev(n + 4096);
  ASSERT_EQ(cudaMemset(dev.ptr, 0, n + 4096), cudaSuccess);
  const CudaUploadStats before = cuda_upload_stats();
  Result<std::unique_ptr<HostUpload>> u = open_upload(blob, 3);
  ASSERT_TRUE(u.ok()) << u.status().to_string();
  ASSERT_NE(u.value(), nullptr);
  // Pieces of every kind: one byte, under one buffer, across several, the
  // rest; the destination is shifted by 64 bytes.
  const size_t cuts[] = {0, 1, 1000, (64 << 10) + 5, (3 << 20) + 17, n};
  for (size_t i = 0; i + 1 < sizeof(cuts) / sizeof(cuts[0]); ++i)
    ASSERT_EQ(cudaMemcpy(dev.at(64 + cuts[i]), blob.region.data() + cuts[i], cuts[i + 1] - cuts[i],
                         cudaMemcpyHostToDevice),
              cudaSuccess);
  // A copy from elsewhere goes to the runtime, after the queued ones.
  const std::vector<uint8_t> other(64, 0xab);
  ASSERT_EQ(cudaMemcpy(dev.at(0), other.data(), other.size(), cudaMemcpyHostToDevice), cudaSuccess);
  AOTIRT_ASSERT_OK(u.value()->finish());
  const CudaUploadStats after = cuda_upload_stats();
  EXPECT_EQ(after.uploads - before.uploads, 1u);
  EXPECT_EQ(after.copies - before.copies, 5u);
  EXPECT_EQ(after.bytes - before.bytes, n);

  const std::vector<uint8_t> got = dev.read(n + 64);
  EXPECT_EQ(std::memcmp(got.data(), other.data(), 64), 0);
  EXPECT_EQ(std::memcmp(got.data() + 64, blob.bytes.data(), n), 0) << "uploaded bytes differ from the file's";
}

TEST_F(CudaUploadTest, OverlappingDestinationsKeepProgramOrder) {
  const size_t n = size_t{2} << 20;
  BlobFile blob = make_blob(n, 2);
  DeviceBuffer dev(n);
  Result<std::unique_ptr<HostUpload>> u = open_upload(blob, 4);
  ASSERT_TRUE(u.ok() && u.value()) << u.status().to_string();
  // The whole range, then its second half over the first half: the second
  // copy must win wherever they overlap.
  ASSERT_EQ(cudaMemcpy(dev.ptr, blob.region.data(), n, cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(dev.ptr, blob.region.data() + n / 2, n / 2, cudaMemcpyDefault), cudaSuccess);
  AOTIRT_ASSERT_OK(u.value()->finish());
  std::vector<uint8_t> want(blob.bytes.begin() + n / 2, blob.bytes.end());
  want.insert(want.end(), blob.bytes.begin() + n / 2, blob.bytes.end());
  EXPECT_EQ(dev.read(n), want);
}

TEST_F(CudaUploadTest, CopiesToHostMemoryAreLeftToTheRuntime) {
  const size_t n = size_t{1} << 20;
  BlobFile blob = make_blob(n, 3);
  Result<std::unique_ptr<HostUpload>> u = open_upload(blob, 2);
  ASSERT_TRUE(u.ok() && u.value());
  const CudaUploadStats before = cuda_upload_stats();
  std::vector<uint8_t> host(n);
  // cudaMemcpyDefault between two host buffers: not a device upload.
  ASSERT_EQ(cudaMemcpy(host.data(), blob.region.data(), n, cudaMemcpyDefault), cudaSuccess);
  AOTIRT_ASSERT_OK(u.value()->finish());
  EXPECT_EQ(cuda_upload_stats().copies, before.copies);
  EXPECT_EQ(host, blob.bytes);
}

TEST_F(CudaUploadTest, AFileCutShortFailsNamingIt) {
  const size_t n = size_t{3} << 20;
  BlobFile blob = make_blob(n, 4);
  DeviceBuffer dev(n);
  Result<std::unique_ptr<HostUpload>> u = open_upload(blob, 2);
  ASSERT_TRUE(u.ok() && u.value());
  // The file loses its second half after it was mapped; the readers never
  // touch the mapping, so this is a short read, not a SIGBUS.
  ASSERT_EQ(truncate(blob.path.c_str(), static_cast<off_t>(kHeader + n / 2)), 0);
  ASSERT_EQ(cudaMemcpy(dev.ptr, blob.region.data(), n, cudaMemcpyHostToDevice), cudaSuccess);  // queued
  // Once the readers hit the cut, later copies from the range report it.
  cudaError_t last = cudaSuccess;
  for (int i = 0; i < 2000 && last == cudaSuccess; ++i) {
    usleep(1000);
    last = cudaMemcpy(dev.ptr, blob.region.data(), 1, cudaMemcpyHostToDevice);
  }
  Status s = u.value()->finish();
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kDataLoss) << s.to_string();
  EXPECT_NE(s.message().find(blob.path), std::string::npos) << s.to_string();
  EXPECT_NE(s.message().find("ends at byte"), std::string::npos) << s.to_string();
  EXPECT_NE(last, cudaSuccess) << "copies queued after the failure must report it";
  // Closed: a second finish() says the same, and copies go to the runtime again.
  EXPECT_EQ(u.value()->finish().code(), StatusCode::kDataLoss);
  const std::vector<uint8_t> small(16, 1);
  EXPECT_EQ(cudaMemcpy(dev.ptr, small.data(), small.size(), cudaMemcpyHostToDevice), cudaSuccess);
}

TEST_F(CudaUploadTest, AnUnreadableFileIsRefusedAtOpen) {
  static std::vector<uint8_t> data(1 << 20);
  Result<std::unique_ptr<HostUpload>> u =
      cuda_begin_upload(0, data.data(), data.size(), "/nonexistent/model.pt2", 0, small_pieces(2));
  ASSERT_FALSE(u.ok());
  EXPECT_EQ(u.status().code(), StatusCode::kIoError);
  EXPECT_NE(u.status().message().find("/nonexistent/model.pt2"), std::string::npos);
}

TEST_F(CudaUploadTest, DestroyingWithoutFinishWaitsForTheCopies) {
  const size_t n = size_t{4} << 20;
  BlobFile blob = make_blob(n, 5);
  DeviceBuffer dev(n);
  {
    Result<std::unique_ptr<HostUpload>> u = open_upload(blob, 3);
    ASSERT_TRUE(u.ok() && u.value());
    ASSERT_EQ(cudaMemcpy(dev.ptr, blob.region.data(), n, cudaMemcpyHostToDevice), cudaSuccess);
  }
  EXPECT_EQ(dev.read(n), blob.bytes);
}

}  // namespace
}  // namespace aotirt
