// Per-thread state shims: grad mode and the device-generic guard's current
// device index, which must be saved and restored like RAII guards.
#include <gtest/gtest.h>

#include <thread>

#include "base/status.h"
#include "shim/shim_abi.h"

namespace aotirt {
namespace {

TEST(ShimGradModeTest, RoundTripsPerThread) {
  const bool initial = aoti_torch_grad_mode_is_enabled();
  aoti_torch_grad_mode_set_enabled(false);
  EXPECT_FALSE(aoti_torch_grad_mode_is_enabled());
  bool other_thread = false;
  std::thread([&] {
    other_thread = aoti_torch_grad_mode_is_enabled();
    aoti_torch_grad_mode_set_enabled(false);
  }).join();
  EXPECT_TRUE(other_thread) << "a fresh thread starts with grad mode on, as in PyTorch";
  aoti_torch_grad_mode_set_enabled(true);
  EXPECT_TRUE(aoti_torch_grad_mode_is_enabled());
  aoti_torch_grad_mode_set_enabled(initial);
}

int32_t current_index() {
  int32_t i = -100;
  EXPECT_EQ(aoti_torch_get_current_device_index(&i), 0);
  return i;
}

TEST(ShimDeviceGuardTest, SavesAndRestoresTheIndex) {
  const int32_t start = current_index();
  DeviceGuardHandle outer = nullptr, inner = nullptr;
  ASSERT_EQ(aoti_torch_create_device_guard(3, &outer), 0);
  ASSERT_NE(outer, nullptr);
  EXPECT_EQ(current_index(), 3);
  ASSERT_EQ(aoti_torch_device_guard_set_index(outer, 5), 0);
  EXPECT_EQ(current_index(), 5);
  ASSERT_EQ(aoti_torch_create_device_guard(1, &inner), 0);
  EXPECT_EQ(current_index(), 1);
  ASSERT_EQ(aoti_torch_delete_device_guard(inner), 0);
  EXPECT_EQ(current_index(), 5);
  ASSERT_EQ(aoti_torch_delete_device_guard(outer), 0);
  EXPECT_EQ(current_index(), start);
}

TEST(ShimDeviceGuardTest, NegativeIndexKeepsTheCurrentOne) {
  const int32_t start = current_index();
  DeviceGuardHandle g = nullptr;
  ASSERT_EQ(aoti_torch_create_device_guard(-1, &g), 0);
  EXPECT_EQ(current_index(), start);
  ASSERT_EQ(aoti_torch_device_guard_set_index(g, 2), 0);
  ASSERT_EQ(aoti_torch_device_guard_set_index(g, -1), 0);
  EXPECT_EQ(current_index(), 2);
  ASSERT_EQ(aoti_torch_delete_device_guard(g), 0);
  EXPECT_EQ(current_index(), start);
}

TEST(ShimDeviceGuardTest, IndexIsPerThread) {
  DeviceGuardHandle g = nullptr;
  ASSERT_EQ(aoti_torch_create_device_guard(7, &g), 0);
  int32_t seen = -1;
  std::thread([&] { seen = current_index(); }).join();
  EXPECT_EQ(seen, 0);
  EXPECT_EQ(current_index(), 7);
  ASSERT_EQ(aoti_torch_delete_device_guard(g), 0);
}

TEST(ShimDeviceGuardTest, NullArgumentsAreErrors) {
  clear_last_error();
  EXPECT_EQ(aoti_torch_create_device_guard(0, nullptr), 1);
  EXPECT_NE(get_last_error().message().find("output pointer"), std::string::npos);
  EXPECT_EQ(aoti_torch_delete_device_guard(nullptr), 1);
  EXPECT_NE(get_last_error().message().find("guard is null"), std::string::npos);
  EXPECT_EQ(aoti_torch_device_guard_set_index(nullptr, 1), 1);
  EXPECT_NE(get_last_error().message().find("guard is null"), std::string::npos);
  EXPECT_EQ(aoti_torch_get_current_device_index(nullptr), 1);
}

}  // namespace
}  // namespace aotirt
