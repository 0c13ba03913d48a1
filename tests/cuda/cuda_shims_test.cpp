// The CUDA shims (device and stream guards, current stream, raw allocations)
// and the common shims on CUDA tensors (empty_strided, from_blob, copy_,
// clone, clone_preserve_strides, zero_, item_*). Skipped without a GPU.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstring>
#include <thread>

#include "backends/cuda/runtime/cuda_device.h"
#include "backends/cuda/runtime/cuda_stream.h"
#include "core/dtype.h"
#include "cuda_test_util.h"
#include "device/device.h"
#include "shim/common/shim_util.h"

namespace aotirt {
namespace {

using namespace cuda_test;

class CudaShimsTest : public CudaTest {};

int current_device() {
  int d = -1;
  EXPECT_EQ(cudaGetDevice(&d), cudaSuccess);
  return d;
}

void* current_stream(int32_t index = 0) {
  void* s = reinterpret_cast<void*>(0x1);
  EXPECT_EQ(aoti_torch_get_current_cuda_stream(index, &s), 0) << last_error_text();
  return s;
}

TEST_F(CudaShimsTest, DeviceGuardSetsAndRestoresTheDevice) {
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  CUDAGuardHandle g = nullptr;
  ASSERT_EQ(aoti_torch_create_cuda_guard(0, &g), 0) << last_error_text();
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(current_device(), 0);
  EXPECT_EQ(aoti_torch_cuda_guard_set_index(g, 0), 0);
  int count = 0;
  ASSERT_EQ(cudaGetDeviceCount(&count), cudaSuccess);
  if (count > 1) {
    EXPECT_EQ(aoti_torch_cuda_guard_set_index(g, 1), 0);
    EXPECT_EQ(current_device(), 1);
  }
  EXPECT_EQ(aoti_torch_delete_cuda_guard(g), 0);
  EXPECT_EQ(current_device(), 0);
  // -1 keeps the current device.
  ASSERT_EQ(aoti_torch_create_cuda_guard(-1, &g), 0);
  EXPECT_EQ(current_device(), 0);
  EXPECT_EQ(aoti_torch_delete_cuda_guard(g), 0);
}

TEST_F(CudaShimsTest, DeviceGuardRefusesAMissingDevice) {
  CUDAGuardHandle g = nullptr;
  EXPECT_EQ(aoti_torch_create_cuda_guard(999, &g), 1);
  EXPECT_EQ(g, nullptr);
  EXPECT_NE(last_error_text().find("out of range"), std::string::npos) << last_error_text();
  EXPECT_EQ(current_device(), 0);
  EXPECT_EQ(aoti_torch_delete_cuda_guard(nullptr), 1);
  EXPECT_EQ(aoti_torch_create_cuda_guard(0, nullptr), 1);
}

TEST_F(CudaShimsTest, StreamGuardsNestAndRestoreTheCurrentStream) {
  void* original = current_stream();
  Result<cudaStream_t> def = cuda_default_stream(0);
  ASSERT_TRUE(def.ok());
  EXPECT_EQ(original, static_cast<void*>(def.value()));
  EXPECT_EQ(current_stream(-1), original);  // -1: the current device

  cudaStream_t s1, s2;
  ASSERT_EQ(cudaStreamCreate(&s1), cudaSuccess);
  ASSERT_EQ(cudaStreamCreate(&s2), cudaSuccess);
  CUDAStreamGuardHandle g1 = nullptr, g2 = nullptr;
  ASSERT_EQ(aoti_torch_create_cuda_stream_guard(s1, 0, &g1), 0) << last_error_text();
  EXPECT_EQ(current_stream(), static_cast<void*>(s1));
  Result<Device*> dev = get_device(kCuda0);
  ASSERT_TRUE(dev.ok());
  EXPECT_EQ(dev.value()->current_stream(), static_cast<void*>(s1));

  // Another thread keeps its own current stream.
  void* other = nullptr;
  std::thread([&] { aoti_torch_get_current_cuda_stream(0, &other); }).join();
  EXPECT_EQ(other, original);

  ASSERT_EQ(aoti_torch_create_cuda_stream_guard(s2, 0, &g2), 0);
  EXPECT_EQ(current_stream(), static_cast<void*>(s2));
  ASSERT_EQ(aoti_torch_delete_cuda_stream_guard(g2), 0);
  EXPECT_EQ(current_stream(), static_cast<void*>(s1));
  ASSERT_EQ(aoti_torch_delete_cuda_stream_guard(g1), 0);
  EXPECT_EQ(current_stream(), original);

  // The null (legacy) stream is a valid choice too.
  ASSERT_EQ(aoti_torch_create_cuda_stream_guard(nullptr, 0, &g1), 0);
  EXPECT_EQ(current_stream(), nullptr);
  ASSERT_EQ(aoti_torch_delete_cuda_stream_guard(g1), 0);
  EXPECT_EQ(current_stream(), original);

  EXPECT_EQ(aoti_torch_create_cuda_stream_guard(s1, 999, &g1), 1);
  EXPECT_EQ(aoti_torch_delete_cuda_stream_guard(nullptr), 1);
  cudaStreamDestroy(s1);
  cudaStreamDestroy(s2);
}

TEST_F(CudaShimsTest, WorkUnderAStreamGuardGoesToThatStream) {
  // A copy queued under the guard completes once its stream is synchronized.
  cudaStream_t s;
  ASSERT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
  {
    CUDAStreamGuardHandle g = nullptr;
    ASSERT_EQ(aoti_torch_create_cuda_stream_guard(s, 0, &g), 0);
    TensorImpl src = to_device(host_random(DimVector{256, 33}, DType::kFloat32, 7));
    TensorImpl dst = device_empty(DimVector{33, 256}, DType::kFloat32);
    ASSERT_EQ(aoti_torch_copy_(handle(dst), handle(transposed(src, 0, 1)), 0), 0) << last_error_text();
    ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
    ASSERT_EQ(aoti_torch_delete_cuda_stream_guard(g), 0);
    EXPECT_EQ(max_scaled_error(dst, transposed(to_host(src), 0, 1), 0, 0), 0);
    // src and dst were allocated on s: they must be released before s goes.
  }
  ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
  cudaStreamDestroy(s);
}

TEST_F(CudaShimsTest, RawAllocAndDelete) {
  Result<CudaDevice*> dev = cuda_device(0);
  ASSERT_TRUE(dev.ok());
  const size_t before = dev.value()->allocator().stats().active_bytes;
  void* p = nullptr;
  ASSERT_EQ(aoti_torch_cuda_caching_allocator_raw_alloc(1 << 20, &p), 0) << last_error_text();
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(dev.value()->allocator().stats().active_bytes, before + (1 << 20));
  EXPECT_EQ(cudaMemset(p, 1, 1 << 20), cudaSuccess);
  EXPECT_EQ(aoti_torch_cuda_caching_allocator_raw_delete(p), 0) << last_error_text();
  EXPECT_EQ(dev.value()->allocator().stats().active_bytes, before);
  EXPECT_EQ(aoti_torch_cuda_caching_allocator_raw_delete(nullptr), 0);

  // Memory aotirt did not hand out is refused, not freed.
  void* foreign = nullptr;
  ASSERT_EQ(cudaMalloc(&foreign, 256), cudaSuccess);
  EXPECT_EQ(aoti_torch_cuda_caching_allocator_raw_delete(foreign), 1);
  EXPECT_NE(last_error_text().find("not allocated by aotirt"), std::string::npos) << last_error_text();
  int host_value = 0;
  EXPECT_EQ(aoti_torch_cuda_caching_allocator_raw_delete(&host_value), 1);
  EXPECT_EQ(cudaFree(foreign), cudaSuccess);
  EXPECT_EQ(aoti_torch_cuda_caching_allocator_raw_alloc(16, nullptr), 1);
}

TEST_F(CudaShimsTest, EmptyStridedMakesAlignedDeviceTensors) {
  const int64_t sizes[3] = {2, 3, 5}, strides[3] = {1, 2, 6};
  AtenTensorHandle h = nullptr;
  ASSERT_EQ(aoti_torch_empty_strided(3, sizes, strides, 15, 1, 0, &h), 0) << last_error_text();
  int32_t type = -1, index = -1, dtype = -1;
  void* data = nullptr;
  EXPECT_EQ(aoti_torch_get_device_type(h, &type), 0);
  EXPECT_EQ(aoti_torch_get_device_index(h, &index), 0);
  EXPECT_EQ(aoti_torch_get_dtype(h, &dtype), 0);
  EXPECT_EQ(aoti_torch_get_data_ptr(h, &data), 0);
  EXPECT_EQ(type, 1);
  EXPECT_EQ(index, 0);
  EXPECT_EQ(dtype, 15);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(data) % 64, 0u);
  cudaPointerAttributes attr;
  ASSERT_EQ(cudaPointerGetAttributes(&attr, data), cudaSuccess);
  EXPECT_EQ(attr.type, cudaMemoryTypeDevice);
  int64_t storage = 0;
  EXPECT_EQ(aoti_torch_get_storage_size(h, &storage), 0);
  EXPECT_EQ(storage, 30 * 2);
  EXPECT_EQ(aoti_torch_delete_tensor_object(h), 0);

  // Zero-size tensors are fine too.
  const int64_t zero[2] = {0, 4}, zs[2] = {4, 1};
  ASSERT_EQ(aoti_torch_empty_strided(2, zero, zs, 6, 1, 0, &h), 0) << last_error_text();
  EXPECT_EQ(aoti_torch_delete_tensor_object(h), 0);
  // A missing device index is refused.
  EXPECT_EQ(aoti_torch_empty_strided(3, sizes, strides, 6, 1, 999, &h), 1);
}

TEST_F(CudaShimsTest, CopyCloneAndZeroOnCudaTensors) {
  TensorImpl host = host_random(DimVector{4, 6}, DType::kFloat32, 3);
  TensorImpl dev = device_empty(DimVector{4, 6}, DType::kFloat32);
  ASSERT_EQ(aoti_torch_copy_(handle(dev), handle(host), 0), 0) << last_error_text();

  // clone: contiguous, on the same device.
  AtenTensorHandle c = nullptr;
  ASSERT_EQ(aoti_torch_clone(handle(transposed(dev, 0, 1)), &c), 0) << last_error_text();
  TensorImpl cloned = take(c);
  EXPECT_EQ(cloned.device(), kCuda0);
  EXPECT_TRUE(cloned.is_contiguous());
  EXPECT_EQ(max_scaled_error(cloned, transposed(host, 0, 1), 0, 0), 0);

  // clone_preserve_strides keeps the transposed strides.
  ASSERT_EQ(aoti_torch_clone_preserve_strides(handle(transposed(dev, 0, 1)), &c), 0) << last_error_text();
  TensorImpl kept = take(c);
  EXPECT_EQ(kept.strides(), (DimVector{1, 6}));
  EXPECT_EQ(max_scaled_error(kept, transposed(host, 0, 1), 0, 0), 0);

  // copy_ back to the host, with a dtype change.
  TensorImpl back = host_empty(DimVector{4, 6}, DType::kFloat64);
  ASSERT_EQ(aoti_torch_copy_(handle(back), handle(dev), 0), 0) << last_error_text();
  EXPECT_EQ(max_scaled_error(back, host, 0, 0), 0);

  // zero_ on a strided view touches only its elements.
  TensorImpl column(dev.storage(), DType::kFloat32, DimVector{4}, DimVector{6}, 2);
  ASSERT_EQ(aoti_torch_zero_(handle(column)), 0) << last_error_text();
  std::vector<double> got = values(dev), want = values(host);
  for (int64_t i = 0; i < 4; ++i) want[i * 6 + 2] = 0;
  EXPECT_EQ(got, want);
}

TEST_F(CudaShimsTest, ItemReadsDeviceScalars) {
  TensorImpl f = to_device(host_random(DimVector{}, DType::kFloat32, 11));
  float fv = 0;
  ASSERT_EQ(aoti_torch_item_float32(handle(f), &fv), 0) << last_error_text();
  EXPECT_EQ(fv, static_cast<float>(values(f)[0]));

  TensorImpl hi = host_empty(DimVector{1}, DType::kInt64);
  *static_cast<int64_t*>(hi.data_ptr()) = (int64_t{1} << 53) + 1;  // not representable as double
  int64_t iv = 0;
  ASSERT_EQ(aoti_torch_item_int64(handle(to_device(hi)), &iv), 0);
  EXPECT_EQ(iv, (int64_t{1} << 53) + 1);

  TensorImpl hb = host_empty(DimVector{1, 1}, DType::kBool);
  *static_cast<uint8_t*>(hb.data_ptr()) = 1;
  bool bv = false;
  ASSERT_EQ(aoti_torch_item_bool(handle(to_device(hb)), &bv), 0);
  EXPECT_TRUE(bv);

  TensorImpl bf = to_device(host_random(DimVector{1}, DType::kBFloat16, 5));
  AotirtBFloat16 bfv{0};
  ASSERT_EQ(aoti_torch_item_bfloat16(handle(bf), &bfv), 0);
  EXPECT_EQ(bf16_to_float(bfv.bits), static_cast<float>(values(bf)[0]));

  EXPECT_EQ(aoti_torch_item_float32(handle(device_empty(DimVector{2}, DType::kFloat32)), &fv), 1);
}

TEST_F(CudaShimsTest, FromBlobWrapsDeviceMemory) {
  void* p = nullptr;
  ASSERT_EQ(cudaMalloc(&p, 64 * sizeof(float)), cudaSuccess);
  const int64_t sizes[2] = {4, 8}, strides[2] = {8, 1};
  AtenTensorHandle h = nullptr;
  ASSERT_EQ(aoti_torch_create_tensor_from_blob(p, 2, sizes, strides, 4, 6, 1, 0, &h), 0) << last_error_text();
  void* data = nullptr;
  EXPECT_EQ(aoti_torch_get_data_ptr(h, &data), 0);
  EXPECT_EQ(data, static_cast<char*>(p) + 16);
  TensorImpl host = host_random(DimVector{4, 8}, DType::kFloat32, 9);
  ASSERT_EQ(aoti_torch_copy_(h, handle(host), 0), 0) << last_error_text();
  EXPECT_EQ(max_scaled_error(*impl_of(h), host, 0, 0), 0);
  EXPECT_EQ(aoti_torch_delete_tensor_object(h), 0);
  // Borrowed: aotirt did not free it.
  EXPECT_EQ(cudaFree(p), cudaSuccess);
}

TEST_F(CudaShimsTest, DeviceDescribesItselfAndChecksPackages) {
  Result<CudaDevice*> dev = cuda_device(0);
  ASSERT_TRUE(dev.ok());
  const CudaDeviceProperties& p = dev.value()->properties();
  EXPECT_GT(p.sm_count, 0);
  EXPECT_GT(p.shared_memory_per_block_optin, 0u);
  const CudaDeviceIdentity& id = dev.value()->identity();
  EXPECT_GT(id.total_memory, 0u);
  EXPECT_FALSE(id.name.empty());
  const std::string desc = dev.value()->description();
  EXPECT_NE(desc.find("cuda:0"), std::string::npos) << desc;
  EXPECT_NE(desc.find(id.name), std::string::npos) << desc;
  const std::string cc = std::to_string(p.major) + std::to_string(p.minor);
  EXPECT_TRUE(dev.value()->check_package({{"AOTI_DEVICE_KEY", "cuda"}, {"AOTI_COMPUTE_CAPABILITY", cc}}).ok());
  EXPECT_TRUE(dev.value()->check_package({}).ok());
  Status bad = dev.value()->check_package({{"AOTI_COMPUTE_CAPABILITY", p.major == 7 ? "80" : "75"}});
  EXPECT_EQ(bad.code(), StatusCode::kIncompatible) << bad.to_string();
  EXPECT_NE(bad.message().find(id.name), std::string::npos) << bad.to_string();
  // Model libraries will find the runtime's functions.
  EXPECT_TRUE(dev.value()->prepare_model_load().ok());
}

}  // namespace
}  // namespace aotirt
