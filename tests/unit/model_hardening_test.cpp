// The loader's defences against what a package or a failed run can do to the
// process: runs the library refuses do not leak their inputs, a CPU package's
// kernel files are not written out, loading leaves the process environment
// alone, and running out of memory comes back as a Status instead of an
// exception. Most use the hand-written fake model (tests/unit/fake_model);
// those that need the generated input checks use the zoo's real packages
// ($AOTIRT_ZOO_MANIFEST, else the newest .cache/zoo/*-cpu/manifest.json) and
// are skipped without them.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <new>
#include <string>
#include <thread>

#include "../zoo_test_util.h"
#include "aotirt/aotirt.h"
#include "core/tensor.h"
#include "shim/shim_abi.h"
#include "file_test_util.h"
#include "package/cpu_features.h"
#include "failing_operator_new.h"
#include "private_tmpdir_test_util.h"
#include "zip_test_util.h"

namespace aotirt {
namespace {

namespace fs = std::filesystem;

constexpr const char* kFakeDir = "fake/data/aotinductor/model/";

class ModelHardeningTest : public PrivateTmpdirTest {
 protected:
  ModelHardeningTest() : PrivateTmpdirTest("aotirt-hardening-test") {}

  // The fake library with |meta| as its metadata, plus |extra| entries.
  std::string fake_package(const std::string& meta, std::vector<ZipItem> extra = {}) {
    const std::string so = read_file(AOTIRT_FAKE_MODEL_PATH);
    EXPECT_GT(so.size(), 1000u) << AOTIRT_FAKE_MODEL_PATH;
    extra.push_back({std::string(kFakeDir) + "f.wrapper.so", so, true});
    extra.push_back({std::string(kFakeDir) + "f.wrapper_metadata.json", meta, true});
    const std::string path = root_ + "/fake.pt2";
    EXPECT_TRUE(write_zip(path, extra));
    return path;
  }
  static std::string cpu_metadata(const std::string& extra = "") {
    return "{\"AOTI_DEVICE_KEY\": \"cpu\", \"AOTI_MACHINE\": \"" + host_machine() + "\"" +
           (extra.empty() ? "" : ", " + extra) + "}";
  }
  static std::string specs_metadata() {
    return cpu_metadata(
        "\"aotirt.inputs\": \"[{\\\"name\\\": \\\"x\\\", \\\"dtype\\\": \\\"float32\\\", \\\"shape\\\": [-1]}]\"");
  }
};

// Lifts a model's memory limit when the test ends, pass or fail: the CPU
// allocator's limit is shared by every model in the process.
struct LimitGuard {
  Model* model;
  ~LimitGuard() { model->set_memory_limit(0); }
};

// The caller's storage is referenced once by the caller's tensor; each input
// handle a run makes adds a reference until the library deletes the handle.
int storage_refs(const Tensor& t) { return t.impl()->storage()->refcount(); }

TEST_F(ModelHardeningTest, RunsTheLibraryRefusesDoNotLeakTheirInputs) {
  auto model = Model::load(fake_package(specs_metadata()));
  ASSERT_TRUE(model.ok()) << model.status().to_string();
  Result<Tensor> x = Tensor::empty({4}, DType::kFloat32);
  ASSERT_TRUE(x.ok());
  for (int i = 0; i < 4; ++i) static_cast<float*>(x->data())[i] = static_cast<float>(i);
  ASSERT_EQ(storage_refs(*x), 1);
  // The fake library returns failure before it takes its input when it
  // cannot allocate its output: as a generated library does when its own
  // input checks refuse a run.
  LimitGuard guard{model->get()};
  guard.model->set_memory_limit(1);
  // The allocator hands out a cached block even past its limit; a refused
  // allocation of a size it has not cached empties the cache first.
  ASSERT_FALSE(Tensor::empty({1234567}, DType::kFloat32).ok());
  for (int i = 0; i < 1000; ++i) {
    auto out = (*model)->run({*x});
    ASSERT_FALSE(out.ok());
  }
  EXPECT_EQ(storage_refs(*x), 1) << "handles of refused runs were left alive";
  // A run that succeeds: the library deleted the handle itself, and nothing
  // is freed twice.
  guard.model->set_memory_limit(0);
  {
    auto out = (*model)->run({*x});
    ASSERT_TRUE(out.ok()) << out.status().to_string();
    EXPECT_EQ(static_cast<const float*>((*out)[0].data())[3], 6.0f);
  }
  EXPECT_EQ(storage_refs(*x), 1);
  // A borrowed, strided input (copied for the run) takes the other path.
  float buf[8] = {0, 1, 2, 3, 4, 5, 6, 7};
  Tensor strided = Tensor::from_blob(buf, {4}, DType::kFloat32, {}, {2});
  guard.model->set_memory_limit(1);
  ASSERT_FALSE(Tensor::empty({1234567}, DType::kFloat32).ok());
  for (int i = 0; i < 100; ++i) ASSERT_FALSE((*model)->run({strided}).ok());
  EXPECT_EQ(storage_refs(strided), 1);
}

TEST_F(ModelHardeningTest, CpuPackageKernelFilesAreNotExtracted) {
  // A .cubin is only ever opened by a CUDA model; a CPU model used to write
  // it to a temporary directory all the same.
  auto model = Model::load(
      fake_package(specs_metadata(), {{std::string(kFakeDir) + "k0.cubin", std::string(4096, 'c'), true}}));
  ASSERT_TRUE(model.ok()) << model.status().to_string();
  EXPECT_EQ((*model)->package().kernel_entries.size(), 1u);
  EXPECT_TRUE(fs::is_empty(tmp_)) << "a CPU model wrote files under TMPDIR";
}

TEST_F(ModelHardeningTest, LoadingLeavesTheEnvironmentAlone) {
  // A package without aotirt's specs used to set AOTI_RUNTIME_CHECK_INPUTS
  // for the whole process.
  unsetenv("AOTI_RUNTIME_CHECK_INPUTS");
  auto model = Model::load(fake_package(cpu_metadata()));
  ASSERT_TRUE(model.ok()) << model.status().to_string();
  float x[2] = {1, 2};
  ASSERT_TRUE((*model)->run({Tensor::from_blob(x, {2}, DType::kFloat32)}).ok());
  EXPECT_EQ(std::getenv("AOTI_RUNTIME_CHECK_INPUTS"), nullptr);
}

TEST_F(ModelHardeningTest, MetadataInputCountMustMatchTheLibrary) {
  const std::string two = cpu_metadata(
      "\"aotirt.inputs\": \"[{\\\"name\\\": \\\"x\\\"}, {\\\"name\\\": \\\"y\\\"}]\"");
  auto model = Model::load(fake_package(two));
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(model.status().message().find("lists 2 inputs but the model library takes 1"), std::string::npos)
      << model.status().message();
}

using test::FailLargeAllocations;

TEST_F(ModelHardeningTest, OutOfMemoryIsAStatusNotAnException) {
  // A 2,000,000-dimension shape: 4 MB of metadata (under the cap) whose
  // shape alone needs a 16 MiB buffer. That allocation fails here; its
  // std::bad_alloc used to escape Model::load and inspect_package (and, in
  // `aotirt run`, to abort the process from the CLI's reader thread).
  std::string shape = "0";
  shape.reserve(4000000);
  for (int i = 1; i < 2000000; ++i) shape += ",0";
  const std::string meta = cpu_metadata("\"aotirt.inputs\": \"[{\\\"name\\\": \\\"x\\\", \\\"shape\\\": [" +
                                        shape + "]}]\"");
  const std::string path = fake_package(meta);
  {
    FailLargeAllocations oom(size_t{12} << 20);
    Result<PackageInfo> info = Status(StatusCode::kInternal, "not run");
    EXPECT_NO_THROW(info = inspect_package(path));
    ASSERT_FALSE(info.ok());
    EXPECT_EQ(info.status().code(), StatusCode::kResourceExhausted) << info.status().to_string();
    EXPECT_NE(info.status().message().find("out of memory"), std::string::npos) << info.status().message();
    Result<std::unique_ptr<Model>> model = Status(StatusCode::kInternal, "not run");
    EXPECT_NO_THROW(model = Model::load(path));
    ASSERT_FALSE(model.ok());
    EXPECT_EQ(model.status().code(), StatusCode::kResourceExhausted) << model.status().to_string();
    EXPECT_NE(last_error().find("out of memory"), std::string::npos) << last_error();
  }
  // With memory, the same package is read (and its 2,000,000 dims kept).
  Result<PackageInfo> info = inspect_package(path);
  ASSERT_TRUE(info.ok()) << info.status().to_string();
  ASSERT_EQ(info->inputs.size(), 1u);
  EXPECT_EQ(info->inputs[0].shape.size(), 2000000u);
}

// ---- with the zoo's real packages ----

// The .pt2 and first input of zoo package |name|; empty when unavailable.
std::pair<std::string, std::string> zoo_package(const std::string& name) {
  const std::string path = zoo_manifest_path();
  if (path.empty()) return {};
  nlohmann::json m = nlohmann::json::parse(read_file(path), nullptr, false);
  if (!m.is_object() || !m.contains("packages")) return {};
  for (const auto& p : m["packages"]) {
    if (p.value("name", "") != name || p.contains("error")) continue;
    const fs::path dir = fs::path(path).parent_path() / p["dir"].get<std::string>();
    return {(dir / p["package"].get<std::string>()).string(),
            (dir / p["input_sets"][0]["inputs"][0]["file"].get<std::string>()).string()};
  }
  return {};
}

// Silences stderr while alive: the library prints each refused run.
class QuietStderr {
 public:
  QuietStderr() : saved_(dup(2)) {
    std::fflush(stderr);
    FILE* null = std::fopen("/dev/null", "w");
    if (null) {
      dup2(fileno(null), 2);
      std::fclose(null);
    }
  }
  ~QuietStderr() {
    std::fflush(stderr);
    dup2(saved_, 2);
    close(saved_);
  }

 private:
  int saved_;
};

TEST_F(ModelHardeningTest, ZooRunsRefusedByTheLibrarysChecksDoNotLeak) {
  // dynamic_batch's specs say [?, 16]; the bounds of its batch (1 to 64)
  // only the library's generated checks know, so they alone see a batch of
  // 65, and refuse the run before taking its input.
  const auto pkg = zoo_package("dynamic_batch");
  if (pkg.first.empty()) GTEST_SKIP() << "no zoo manifest with dynamic_batch (run tests/models/make_packages.py)";
  unsetenv("AOTI_RUNTIME_CHECK_INPUTS");
  auto model = Model::load(pkg.first);
  ASSERT_TRUE(model.ok()) << model.status().to_string();
  Result<Tensor> wrong = Tensor::empty({65, 16}, DType::kFloat32);  // the batch is at most 64
  ASSERT_TRUE(wrong.ok());
  {
    QuietStderr quiet;
    for (int i = 0; i < 1000; ++i) {
      auto out = (*model)->run({*wrong});
      if (out.ok()) break;
    }
  }
  auto out = (*model)->run({*wrong});
  ASSERT_FALSE(out.ok()) << "the library's own input checks did not refuse a [65, 16] input";
  EXPECT_NE(out.status().message().find("input checks are on"), std::string::npos) << out.status().message();
  EXPECT_EQ(storage_refs(*wrong), 1) << "handles of refused runs were left alive";
  EXPECT_EQ(std::getenv("AOTI_RUNTIME_CHECK_INPUTS"), nullptr);
}

// The C entry gives foreign-function callers of the shims the same message as
// aotirt::last_error(), per thread.
// Options per package must come one per path; a group of none is refused.
TEST(ModelGroupArgumentsTest, OptionsMustMatchThePaths) {
  size_t failed = 99;
  Result<std::unique_ptr<ModelGroup>> g =
      ModelGroup::load({"a.pt2", "b.pt2"}, std::vector<LoadOptions>(1), &failed);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(g.status().message().find("2 packages was given 1 sets of load options"), std::string::npos)
      << g.status().to_string();
  EXPECT_NE(last_error().find("load options"), std::string::npos);
  g = ModelGroup::load({}, std::vector<LoadOptions>{});
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.status().message().find("at least one package"), std::string::npos);
}

TEST(LastErrorMessageTest, CEntryCarriesTheShimsMessage) {
  int64_t dim = 0;
  ASSERT_EQ(aoti_torch_get_dim(nullptr, &dim), 1);
  std::string text = aotirt_last_error_message();
  EXPECT_EQ(text, last_error());
  EXPECT_NE(text.find("aoti_torch_get_dim"), std::string::npos) << text;
  std::string other = "unset";
  std::thread([&] { other = aotirt_last_error_message(); }).join();
  EXPECT_EQ(other, "");
}

}  // namespace
}  // namespace aotirt
