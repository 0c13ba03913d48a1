// The CUDA backend's options as read from the environment (no GPU needed):
// defaults, every switch, the AOTIRT_CUDA_DISABLE list, and values that are
// warned about and ignored.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "backends/cuda/runtime/cuda_options.h"

namespace aotirt {
namespace {

std::map<std::string, std::string> g_env;

const char* lookup(const char* name) {
  auto it = g_env.find(name);
  return it == g_env.end() ? nullptr : it->second.c_str();
}

CudaOptions parse(std::map<std::string, std::string> env) {
  g_env = std::move(env);
  return CudaOptions::parse(lookup);
}

TEST(CudaOptionsTest, Defaults) {
  const CudaOptions o = parse({});
  EXPECT_EQ(o.allow_tf32, -1);
  EXPECT_EQ(o.conv, CudaLibraryChoice::kAuto);
  EXPECT_EQ(o.gemm, CudaLibraryChoice::kAuto);
  EXPECT_TRUE(o.op_replay);
  EXPECT_FALSE(o.allow_arch_mismatch);
  EXPECT_TRUE(o.cublaslt_library.empty());
  EXPECT_TRUE(o.cudnn_library.empty());
  EXPECT_TRUE(o.cufft_library.empty());
  EXPECT_TRUE(o.cusolver_library.empty());
  EXPECT_TRUE(o.cublas_library.empty());
  EXPECT_EQ(o.disabled, 0u);
  EXPECT_TRUE(o.enabled(CudaFeature::kPdl));
}

TEST(CudaOptionsTest, EverySwitch) {
  const CudaOptions o = parse({{"AOTIRT_CUDA_ALLOW_TF32", "0"},
                               {"AOTIRT_CUDA_CONV", "cudnn"},
                               {"AOTIRT_CUDA_GEMM", "aotirt"},
                               {"AOTIRT_CUDA_OP_REPLAY", "0"},
                               {"AOTIRT_CUDA_ALLOW_ARCH_MISMATCH", "1"},
                               {"AOTIRT_CUBLASLT_LIBRARY", "/opt/libcublasLt.so"},
                               {"AOTIRT_CUDNN_LIBRARY", "/opt/libcudnn.so"},
                               {"AOTIRT_CUFFT_LIBRARY", "/opt/libcufft.so"},
                               {"AOTIRT_CUSOLVER_LIBRARY", "/opt/libcusolver.so"},
                               {"AOTIRT_CUBLAS_LIBRARY", "/opt/libcublas.so"}});
  EXPECT_EQ(o.allow_tf32, 0);
  EXPECT_EQ(o.conv, CudaLibraryChoice::kVendor);
  EXPECT_EQ(o.gemm, CudaLibraryChoice::kAotirt);
  EXPECT_FALSE(o.op_replay);
  EXPECT_TRUE(o.allow_arch_mismatch);
  EXPECT_EQ(o.cublaslt_library, "/opt/libcublasLt.so");
  EXPECT_EQ(o.cudnn_library, "/opt/libcudnn.so");
  EXPECT_EQ(o.cufft_library, "/opt/libcufft.so");
  EXPECT_EQ(o.cusolver_library, "/opt/libcusolver.so");
  EXPECT_EQ(o.cublas_library, "/opt/libcublas.so");
  EXPECT_EQ(parse({{"AOTIRT_CUDA_ALLOW_TF32", "1"}}).allow_tf32, 1);
  EXPECT_EQ(parse({{"AOTIRT_CUDA_GEMM", "cublaslt"}}).gemm, CudaLibraryChoice::kVendor);
  EXPECT_EQ(parse({{"AOTIRT_CUDA_CONV", "aotirt"}}).conv, CudaLibraryChoice::kAotirt);
}

TEST(CudaOptionsTest, DisableList) {
  const CudaOptions o = parse({{"AOTIRT_CUDA_DISABLE", "pdl,,conv_stem,upload"}});
  EXPECT_FALSE(o.enabled(CudaFeature::kPdl));
  EXPECT_FALSE(o.enabled(CudaFeature::kConvStem));
  EXPECT_FALSE(o.enabled(CudaFeature::kUpload));
  EXPECT_TRUE(o.enabled(CudaFeature::kAttentionTc));
  const CudaOptions all = parse({{"AOTIRT_CUDA_DISABLE",
                                  "patch_conv,conv_sm90,conv_gemm,conv_stem,conv_parallel_split,pdl,bf16_sm90,"
                                  "attention_tc,attention_gemm,l2_prefetch,cudnn_graph,upload,upload_threshold"}});
  EXPECT_EQ(all.disabled, (1u << 13) - 1);
}

TEST(CudaOptionsTest, UnknownValuesAreIgnored) {
  const CudaOptions o = parse({{"AOTIRT_CUDA_CONV", "fastest"},
                               {"AOTIRT_CUDA_GEMM", "cudnn"},
                               {"AOTIRT_CUDA_DISABLE", "warp_drive,pdl"},
                               {"AOTIRT_CUDA_ALLOW_TF32", "false"},
                               {"AOTIRT_CUDA_OP_REPLAY", "relaxed"},
                               {"AOTIRT_CUDA_ALLOW_ARCH_MISMATCH", "yes"}});
  EXPECT_EQ(o.conv, CudaLibraryChoice::kAuto);
  EXPECT_EQ(o.gemm, CudaLibraryChoice::kAuto);
  EXPECT_EQ(o.disabled, static_cast<uint32_t>(CudaFeature::kPdl));
  EXPECT_EQ(o.allow_tf32, -1);
  EXPECT_TRUE(o.op_replay);
  EXPECT_FALSE(o.allow_arch_mismatch);
}

TEST(CudaOptionsTest, TestsCanReplaceTheOptions) {
  CudaOptions mine;
  mine.gemm = CudaLibraryChoice::kVendor;
  set_cuda_options_for_testing(&mine);
  EXPECT_EQ(cuda_options().gemm, CudaLibraryChoice::kVendor);
  set_cuda_options_for_testing(nullptr);
  EXPECT_EQ(&cuda_options(), &cuda_options());
}

}  // namespace
}  // namespace aotirt
