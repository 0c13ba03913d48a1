// Parts of the CUDA backend that need no GPU: error mapping, the dlopen'ed
// library tables and their error messages, the compute-capability check, the
// copy layout coalescing, and the probe's answer on a machine without a GPU.
// These run everywhere, CI included.
#include <gtest/gtest.h>

#include <string>

#include "backends/cuda/runtime/cuda_copy.h"
#include "backends/cuda/runtime/cuda_device.h"
#include "backends/cuda/runtime/cuda_status.h"
#include "backends/cuda/runtime/cuda_symbols.h"
#include "cuda_test_util.h"
#include "device/device.h"

namespace aotirt {
namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

TEST(CudaStatusTest, RuntimeErrorsMapToStatusCodes) {
  EXPECT_EQ(cuda_error_code(cudaErrorMemoryAllocation), StatusCode::kResourceExhausted);
  EXPECT_EQ(cuda_error_code(cudaErrorNoDevice), StatusCode::kUnavailable);
  EXPECT_EQ(cuda_error_code(cudaErrorInsufficientDriver), StatusCode::kUnavailable);
  EXPECT_EQ(cuda_error_code(cudaErrorInvalidValue), StatusCode::kInvalidArgument);
  EXPECT_EQ(cuda_error_code(cudaErrorNotSupported), StatusCode::kUnimplemented);
  EXPECT_EQ(cuda_error_code(cudaErrorLaunchFailure), StatusCode::kInternal);
}

Status fails_with(cudaError_t err) {
  AOTIRT_CUDA_RETURN_IF_ERROR(err);
  return Status();
}

TEST(CudaStatusTest, ReturnIfErrorCarriesNameTextExpressionAndLocation) {
  EXPECT_TRUE(fails_with(cudaSuccess).ok());
  Status s = fails_with(cudaErrorMemoryAllocation);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted);
  const std::string text = s.to_string();
  EXPECT_TRUE(contains(text, "cudaErrorMemoryAllocation")) << text;
  EXPECT_TRUE(contains(text, "out of memory")) << text;
  EXPECT_TRUE(contains(text, "[in err]")) << text;
  EXPECT_TRUE(contains(text, "cuda_status_test.cpp")) << text;
}

TEST(CudaStatusTest, DriverResultsMapToStatusCodes) {
  Status oom = cu_result_status(2, "cuMemAlloc(...)", __FILE__, __LINE__);  // CUDA_ERROR_OUT_OF_MEMORY
  EXPECT_EQ(oom.code(), StatusCode::kResourceExhausted);
  EXPECT_TRUE(contains(oom.message(), "(2)")) << oom.message();
  EXPECT_TRUE(contains(oom.message(), "cuMemAlloc")) << oom.message();
  EXPECT_EQ(cu_result_code(100), StatusCode::kUnavailable);   // CUDA_ERROR_NO_DEVICE
  EXPECT_EQ(cu_result_code(209), StatusCode::kUnimplemented); // CUDA_ERROR_NO_BINARY_FOR_GPU
  EXPECT_EQ(cu_result_code(301), StatusCode::kNotFound);      // CUDA_ERROR_FILE_NOT_FOUND
  EXPECT_EQ(cu_result_code(999), StatusCode::kInternal);
}

TEST(CudaStatusTest, LibraryStatusesMapToStatusCodes) {
  EXPECT_EQ(cublas_status(CUBLAS_STATUS_ALLOC_FAILED, "x", __FILE__, __LINE__).code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(cublas_status(CUBLAS_STATUS_NOT_SUPPORTED, "x", __FILE__, __LINE__).code(), StatusCode::kUnimplemented);
  EXPECT_EQ(cublas_status(CUBLAS_STATUS_INVALID_VALUE, "x", __FILE__, __LINE__).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(cudnn_status(CUDNN_STATUS_BAD_PARAM, "x", __FILE__, __LINE__).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(cudnn_status(CUDNN_STATUS_NOT_SUPPORTED_SHAPE, "x", __FILE__, __LINE__).code(),
            StatusCode::kUnimplemented);
  EXPECT_EQ(cudnn_status(CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED, "x", __FILE__, __LINE__).code(),
            StatusCode::kResourceExhausted);
  Status s = cudnn_status(CUDNN_STATUS_EXECUTION_FAILED, "cudnnConvolutionForward", __FILE__, __LINE__);
  EXPECT_EQ(s.code(), StatusCode::kInternal);
  EXPECT_TRUE(contains(s.message(), "5000")) << s.message();
}

TEST(CudaSymbolsTest, MissingLibraryIsUnavailableAndNamesIt) {
  auto lt = load_cublaslt("libaotirt-no-such-cublasLt.so.13");
  ASSERT_FALSE(lt.ok());
  EXPECT_EQ(lt.status().code(), StatusCode::kUnavailable);
  EXPECT_TRUE(contains(lt.status().message(), "cuBLASLt")) << lt.status().message();
  EXPECT_TRUE(contains(lt.status().message(), "libaotirt-no-such-cublasLt.so.13")) << lt.status().message();
  EXPECT_TRUE(contains(lt.status().message(), "AOTIRT_CUBLASLT_LIBRARY")) << lt.status().message();

  auto dnn = load_cudnn("/nonexistent/libcudnn.so.9");
  ASSERT_FALSE(dnn.ok());
  EXPECT_EQ(dnn.status().code(), StatusCode::kUnavailable);
  EXPECT_TRUE(contains(dnn.status().message(), "cuDNN")) << dnn.status().message();
  EXPECT_TRUE(contains(dnn.status().message(), "AOTIRT_CUDNN_LIBRARY")) << dnn.status().message();

  auto fft = load_cufft("/nonexistent/libcufft.so.12");
  ASSERT_FALSE(fft.ok());
  EXPECT_EQ(fft.status().code(), StatusCode::kUnavailable);
  EXPECT_TRUE(contains(fft.status().message(), "AOTIRT_CUFFT_LIBRARY")) << fft.status().message();
  auto solver = load_cusolver("/nonexistent/libcusolver.so.12");
  ASSERT_FALSE(solver.ok());
  EXPECT_TRUE(contains(solver.status().message(), "AOTIRT_CUSOLVER_LIBRARY")) << solver.status().message();
  auto blas = load_cublas("/nonexistent/libcublas.so.13");
  ASSERT_FALSE(blas.ok());
  EXPECT_TRUE(contains(blas.status().message(), "AOTIRT_CUBLAS_LIBRARY")) << blas.status().message();
}

TEST(CudaSymbolsTest, LibraryWithoutTheFunctionsIsUnavailable) {
  // libc opens fine but has none of cuBLASLt's functions.
  auto lt = load_cublaslt("libc.so.6");
  ASSERT_FALSE(lt.ok());
  EXPECT_EQ(lt.status().code(), StatusCode::kUnavailable);
  EXPECT_TRUE(contains(lt.status().message(), "lacks the function cublasLtGetVersion")) << lt.status().message();
  auto dnn = load_cudnn("libc.so.6");
  ASSERT_FALSE(dnn.ok());
  EXPECT_TRUE(contains(dnn.status().message(), "lacks the function cudnnGetVersion")) << dnn.status().message();
  auto fft = load_cufft("libc.so.6");
  ASSERT_FALSE(fft.ok());
  EXPECT_TRUE(contains(fft.status().message(), "lacks the function cufftGetProperty")) << fft.status().message();
}

TEST(CudaDeviceCheckTest, ComputeCapabilityMustMatch) {
  EXPECT_TRUE(cuda_check_compute_capability("90", 9, 0, "gpu").ok());
  EXPECT_TRUE(cuda_check_compute_capability("86", 8, 6, "gpu").ok());
  EXPECT_TRUE(cuda_check_compute_capability("100", 10, 0, "gpu").ok());
  EXPECT_TRUE(cuda_check_compute_capability("90a", 9, 0, "gpu").ok());
  Status s = cuda_check_compute_capability("90", 8, 0, "cuda:0 (NVIDIA A100)");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kIncompatible);
  EXPECT_TRUE(contains(s.message(), "sm_90")) << s.message();
  EXPECT_TRUE(contains(s.message(), "sm_80")) << s.message();
  EXPECT_TRUE(contains(s.message(), "NVIDIA A100")) << s.message();
  EXPECT_EQ(cuda_check_compute_capability("120", 9, 0, "gpu").code(), StatusCode::kIncompatible);
  EXPECT_EQ(cuda_check_compute_capability("x", 9, 0, "gpu").code(), StatusCode::kDataLoss);
}

TEST(CudaCopyLayoutTest, MergesContiguousDimsAndDropsUnitDims) {
  auto l = cuda_copy_layout(DimVector{2, 3, 4}, DimVector{12, 4, 1}, DimVector{12, 4, 1});
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l->ndim, 1);
  EXPECT_EQ(l->sizes[0], 24);

  // dst contiguous, src transposed: nothing merges.
  l = cuda_copy_layout(DimVector{3, 4}, DimVector{4, 1}, DimVector{1, 3});
  ASSERT_TRUE(l.ok());
  ASSERT_EQ(l->ndim, 2);
  EXPECT_EQ(l->sizes[0], 3);
  EXPECT_EQ(l->src_strides[0], 1);
  EXPECT_EQ(l->src_strides[1], 3);

  // A broadcast row: the source's zero strides merge with each other only.
  l = cuda_copy_layout(DimVector{5, 1, 6}, DimVector{6, 6, 1}, DimVector{0, 0, 1});
  ASSERT_TRUE(l.ok());
  ASSERT_EQ(l->ndim, 2);
  EXPECT_EQ(l->sizes[0], 5);
  EXPECT_EQ(l->src_strides[0], 0);

  // A scalar becomes one element.
  l = cuda_copy_layout(DimVector{}, DimVector{}, DimVector{});
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l->ndim, 1);
  EXPECT_EQ(l->sizes[0], 1);
}

TEST(CudaCopyLayoutTest, TooManyUnmergeableDimsIsUnimplemented) {
  DimVector sizes, dst, src;
  const int nd = kCudaCopyMaxDims + 1;
  sizes.resize(nd);
  dst.resize(nd);
  src.resize(nd);
  // Every dim of size 2 with a stride that never lines up with its neighbour.
  int64_t stride = 1;
  for (int d = nd - 1; d >= 0; --d) {
    sizes[d] = 2;
    dst[d] = stride;
    src[d] = stride * 3;
    stride *= 3;
  }
  auto l = cuda_copy_layout(sizes, dst, src);
  ASSERT_FALSE(l.ok());
  EXPECT_EQ(l.status().code(), StatusCode::kUnimplemented);
}

TEST(CudaProbeTest, ReportsDevicesOrUnavailableWithTheReason) {
  Result<int> n = device_count(DeviceType::kCuda);
  if (n.ok()) {
    EXPECT_GE(n.value(), 1);
    return;
  }
  EXPECT_EQ(n.status().code(), StatusCode::kUnavailable);
  EXPECT_TRUE(contains(n.status().message(), "CUDA is unavailable")) << n.status().message();
  Result<Device*> d = get_device(cuda_test::kCuda0);
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().code(), StatusCode::kUnavailable);
  // And a CUDA tensor cannot be made.
  AtenTensorHandle h = nullptr;
  const int64_t sizes[1] = {4}, strides[1] = {1};
  EXPECT_EQ(aoti_torch_empty_strided(1, sizes, strides, 6, 1, 0, &h), 1);
  EXPECT_EQ(h, nullptr);
}

}  // namespace
}  // namespace aotirt
