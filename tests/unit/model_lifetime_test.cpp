// Handle ownership in the loader, checked with a hand-written fake model
// library (tests/unit/fake_model): an output handle returned in two slots is
// owned once and both outputs share it, inputs are stolen by the library, and
// unloading the model deletes its container.
#include <gtest/gtest.h>

#include <malloc.h>

#include <fstream>
#include <iterator>
#include <string>

#include "aotirt/aotirt.h"
#include "base/log.h"
#include "package/cpu_features.h"
#include "private_tmpdir_test_util.h"
#include "zip_test_util.h"

namespace aotirt {
namespace {

class ModelLifetimeTest : public PrivateTmpdirTest {
 protected:
  ModelLifetimeTest() : PrivateTmpdirTest("aotirt-lifetime-test") {}

  std::string fake_package(const char* library = AOTIRT_FAKE_MODEL_PATH) {
    std::ifstream f(library, std::ios::binary);
    std::string so((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    EXPECT_GT(so.size(), 1000u) << library;
    const std::string meta = "{\"AOTI_DEVICE_KEY\": \"cpu\", \"AOTI_MACHINE\": \"" + host_machine() +
                             "\", \"aotirt.inputs\": \"[{\\\"name\\\": \\\"x\\\", \\\"dtype\\\": "
                             "\\\"float32\\\", \\\"shape\\\": [-1]}]\"}";
    const std::string path = root_ + "/fake.pt2";
    EXPECT_TRUE(write_zip(path, {{"fake/data/aotinductor/model/f.wrapper.so", so, true},
                                 {"fake/data/aotinductor/model/f.wrapper_metadata.json", meta, true}}));
    return path;
  }
};

// Counts the fake library's "created"/"deleted" warnings while alive.
struct ContainerEvents {
  int created = 0, deleted = 0;
  static void sink(LogLevel, const char* message, void* user) {
    auto* self = static_cast<ContainerEvents*>(user);
    std::string m = message;
    if (m.find("fake container created") != std::string::npos) ++self->created;
    if (m.find("fake container deleted") != std::string::npos) ++self->deleted;
  }
  ContainerEvents() { set_log_sink(&ContainerEvents::sink, this); }
  ~ContainerEvents() { set_log_sink(nullptr, nullptr); }
};

TEST_F(ModelLifetimeTest, AliasedOutputsAreOwnedOnceAndContainerIsDeleted) {
  const std::string pkg = fake_package();
  float x[4] = {1, 2, 3, 4};
  {
    auto model = Model::load(pkg);
    ASSERT_TRUE(model.ok()) << model.status().to_string();
    for (int round = 0; round < 3; ++round) {
      auto out = (*model)->run({Tensor::from_blob(x, {4}, DType::kFloat32)});
      ASSERT_TRUE(out.ok()) << out.status().to_string();
      ASSERT_EQ(out->size(), 2u);
      EXPECT_EQ((*out)[0].data(), (*out)[1].data()) << "the two slots held one handle";
      const float* y = static_cast<const float*>((*out)[1].data());
      for (int i = 0; i < 4; ++i) EXPECT_EQ(y[i], 2 * x[i]);
    }
    // Outputs outlive the run that made them, and the caller's input is untouched.
    auto kept = (*model)->run({Tensor::from_blob(x, {4}, DType::kFloat32)});
    ASSERT_TRUE(kept.ok());
    EXPECT_EQ(x[3], 4.0f);
    EXPECT_EQ(static_cast<const float*>((*kept)[0].data())[3], 8.0f);
  }
}

TEST_F(ModelLifetimeTest, UnloadDeletesTheContainer) {
  const std::string pkg = fake_package();
  ContainerEvents events;
  std::unique_ptr<Model> a, b;
  {
    auto ma = Model::load(pkg);
    auto mb = Model::load(pkg);
    ASSERT_TRUE(ma.ok() && mb.ok());
    a = std::move(ma).value();
    b = std::move(mb).value();
  }
  EXPECT_EQ(events.created, 2);
  EXPECT_EQ(events.deleted, 0);
  a.reset();
  EXPECT_EQ(events.deleted, 1);
  // The other model is untouched by the first one's unload.
  float x[2] = {1, 2};
  auto out = b->run({Tensor::from_blob(x, {2}, DType::kFloat32)});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ(static_cast<const float*>((*out)[0].data())[1], 4.0f);
  b.reset();
  EXPECT_EQ(events.deleted, 2);
}

// A library with its own static C++ runtime allocates that copy's exception
// pool in its constructor; unloading it must give the pool back, or every
// load and unload cycle leaks it (tens of KB each).
TEST_F(ModelLifetimeTest, UnloadFreesAPrivateCxxRuntimesPool) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "malloc statistics are the sanitizer's own in this build";
#else
  const std::string pkg = fake_package(AOTIRT_FAKE_MODEL_STATIC_CXX_PATH);
  float x[2] = {1, 2};
  auto cycle = [&] {
    auto model = Model::load(pkg);
    ASSERT_TRUE(model.ok()) << model.status().to_string();
    auto out = (*model)->run({Tensor::from_blob(x, {2}, DType::kFloat32)});
    ASSERT_TRUE(out.ok()) << out.status().to_string();
  };
  for (int i = 0; i < 3; ++i) cycle();  // caches and first-use allocations
  const size_t before = mallinfo2().uordblks;
  constexpr int kCycles = 40;
  for (int i = 0; i < kCycles; ++i) cycle();
  const size_t after = mallinfo2().uordblks;
  // Without the fix this grows by the pool's size (64 KB or more) a cycle.
  EXPECT_LT(after, before + kCycles * 4096) << "heap in use grew from " << before << " to " << after;
#endif
}

}  // namespace
}  // namespace aotirt
