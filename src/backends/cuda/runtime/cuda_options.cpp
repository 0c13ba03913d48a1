#include "backends/cuda/runtime/cuda_options.h"

#include <atomic>
#include <cstdlib>
#include <sstream>

#include "base/log.h"

namespace aotirt {
namespace {

struct FeatureName {
  const char* name;
  CudaFeature feature;
};
constexpr FeatureName kFeatures[] = {
    {"patch_conv", CudaFeature::kPatchConv},
    {"conv_sm90", CudaFeature::kConvSm90},
    {"conv_gemm", CudaFeature::kConvGemm},
    {"conv_stem", CudaFeature::kConvStem},
    {"conv_parallel_split", CudaFeature::kConvParallelSplit},
    {"pdl", CudaFeature::kPdl},
    {"bf16_sm90", CudaFeature::kBf16Sm90},
    {"attention_tc", CudaFeature::kAttentionTc},
    {"attention_gemm", CudaFeature::kAttentionGemm},
    {"l2_prefetch", CudaFeature::kL2Prefetch},
    {"cudnn_graph", CudaFeature::kCudnnGraph},
    {"upload", CudaFeature::kUpload},
    {"upload_threshold", CudaFeature::kUploadThreshold},
};

CudaLibraryChoice library_choice(const char* name, const char* value, const char* vendor) {
  const std::string v = value ? value : "";
  if (v.empty() || v == "auto") return CudaLibraryChoice::kAuto;
  if (v == "aotirt") return CudaLibraryChoice::kAotirt;
  if (v == vendor) return CudaLibraryChoice::kVendor;
  AOTIRT_LOG(kWarning, "{}={} is not auto, aotirt or {}; using auto", name, v, vendor);
  return CudaLibraryChoice::kAuto;
}

// 0 or 1 as set; |unset| when unset or empty, or (with a warning) not 0 or 1.
int flag(const char* name, const char* value, int unset) {
  const std::string v = value ? value : "";
  if (v.empty()) return unset;
  if (v == "0" || v == "1") return v == "1";
  AOTIRT_LOG(kWarning, "{}={} is not 0 or 1; ignored", name, v);
  return unset;
}

std::atomic<const CudaOptions*> g_test_options{nullptr};

}  // namespace

CudaOptions CudaOptions::parse(const char* (*get)(const char* name)) {
  CudaOptions o;
  o.allow_tf32 = flag("AOTIRT_CUDA_ALLOW_TF32", get("AOTIRT_CUDA_ALLOW_TF32"), -1);
  o.conv = library_choice("AOTIRT_CUDA_CONV", get("AOTIRT_CUDA_CONV"), "cudnn");
  o.gemm = library_choice("AOTIRT_CUDA_GEMM", get("AOTIRT_CUDA_GEMM"), "cublaslt");
  o.op_replay = flag("AOTIRT_CUDA_OP_REPLAY", get("AOTIRT_CUDA_OP_REPLAY"), 1) != 0;
  o.allow_arch_mismatch = flag("AOTIRT_CUDA_ALLOW_ARCH_MISMATCH", get("AOTIRT_CUDA_ALLOW_ARCH_MISMATCH"), 0) == 1;
  if (const char* v = get("AOTIRT_CUBLASLT_LIBRARY"); v && *v) o.cublaslt_library = v;
  if (const char* v = get("AOTIRT_CUDNN_LIBRARY"); v && *v) o.cudnn_library = v;
  if (const char* v = get("AOTIRT_CUFFT_LIBRARY"); v && *v) o.cufft_library = v;
  if (const char* v = get("AOTIRT_CUSOLVER_LIBRARY"); v && *v) o.cusolver_library = v;
  if (const char* v = get("AOTIRT_CUBLAS_LIBRARY"); v && *v) o.cublas_library = v;
  if (const char* v = get("AOTIRT_SEED"); v && *v) o.random_seed = v;
  if (const char* v = get("AOTIRT_CUDA_DISABLE"); v && *v) {
    std::stringstream list(v);
    std::string item;
    while (std::getline(list, item, ',')) {
      if (item.empty()) continue;
      bool known = false;
      for (const FeatureName& f : kFeatures) {
        if (item != f.name) continue;
        o.disabled |= static_cast<uint32_t>(f.feature);
        known = true;
      }
      if (!known) AOTIRT_LOG(kWarning, "AOTIRT_CUDA_DISABLE names '{}', which is not a switch; ignored", item);
    }
  }
  return o;
}

const CudaOptions& cuda_options() {
  if (const CudaOptions* t = g_test_options.load(std::memory_order_acquire)) return *t;
  static const CudaOptions options = CudaOptions::parse([](const char* name) -> const char* {
    return std::getenv(name);
  });
  return options;
}

void set_cuda_options_for_testing(const CudaOptions* options) {
  g_test_options.store(options, std::memory_order_release);
}

}  // namespace aotirt
