// The shim profile: off by default (nothing recorded), counts each call of a
// shim while on, including failing calls, and resets when read.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "aotirt/model.h"
#include "shim/shim_abi.h"

namespace aotirt {
namespace {

const ShimProfileEntry* find(const std::vector<ShimProfileEntry>& p, const std::string& name) {
  for (const auto& e : p)
    if (e.name == name) return &e;
  return nullptr;
}

void make_and_delete() {
  const int64_t sizes[2] = {4, 4}, strides[2] = {4, 1};
  AtenTensorHandle h = nullptr;
  ASSERT_EQ(aoti_torch_empty_strided(2, sizes, strides, aoti_torch_dtype_float32(), aoti_torch_device_type_cpu(),
                                     0, &h),
            0);
  ASSERT_EQ(aoti_torch_delete_tensor_object(h), 0);
}

TEST(ShimProfileTest, CountsCallsOnlyWhileOn) {
  shim_profile(true);
  make_and_delete();
  EXPECT_EQ(find(shim_profile(true), "aoti_torch_empty_strided"), nullptr) << "recorded while off";

  set_shim_profiling(true);
  for (int i = 0; i < 3; ++i) make_and_delete();
  // A failing call counts too.
  EXPECT_EQ(aoti_torch_empty_strided(2, nullptr, nullptr, aoti_torch_dtype_float32(), aoti_torch_device_type_cpu(),
                                     0, nullptr),
            1);
  set_shim_profiling(false);
  std::vector<ShimProfileEntry> p = shim_profile(true);
  const ShimProfileEntry* e = find(p, "aoti_torch_empty_strided");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->calls, 4u);
  EXPECT_GT(e->total_us, 0.0);
  const ShimProfileEntry* d = find(p, "aoti_torch_delete_tensor_object");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->calls, 3u);
  EXPECT_TRUE(shim_profile(true).empty()) << "reading with reset did not clear the profile";
}

}  // namespace
}  // namespace aotirt
