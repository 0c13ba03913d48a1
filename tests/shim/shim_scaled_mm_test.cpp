// Bad input to _scaled_mm and to the device-generic attention entry points
// (tests/ops checks their values against torch): each refusal's code and
// message, and that nothing is returned.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "shim/abi/cpu_scaled_mm.h"
#include "shim/abi/generic_attention.h"
#include "shim/shim_abi.h"
#include "shim_test_util.h"

namespace aotirt {
namespace {

using shim_test::expect_failure;
using shim_test::Handle;

void expect_code(AOTITorchError rc, const std::string& needle, StatusCode code) {
  expect_failure(rc, needle);
  EXPECT_EQ(get_last_error().code(), code) << get_last_error().message();
}

void make(void* data, std::vector<int64_t> sizes, int32_t dtype, Handle* t) {
  std::vector<int64_t> strides(sizes.size(), 1);
  for (int64_t i = static_cast<int64_t>(sizes.size()) - 2; i >= 0; --i) strides[i] = strides[i + 1] * sizes[i + 1];
  ASSERT_EQ(aoti_torch_create_tensor_from_blob(data, static_cast<int64_t>(sizes.size()), sizes.data(),
                                               strides.data(), 0, dtype, 0, 0, t->out()),
            0);
}

constexpr int32_t kF32 = 6, kF8 = 24, kI32 = 3;

TEST(ShimScaledMmTest, RefusalsNameTheArgument) {
  std::vector<uint8_t> a(4 * 8, 0x38), b(8 * 3, 0x38);  // 1.0 in float8_e4m3fn
  std::vector<float> one(1, 1.0f), rows(4, 1.0f), wide(4 * 8, 1.0f);
  Handle ha, hb, hs, hrows, hwide, out;
  make(a.data(), {4, 8}, kF8, &ha);
  make(b.data(), {8, 3}, kF8, &hb);
  make(one.data(), {}, kF32, &hs);
  make(rows.data(), {4, 1}, kF32, &hrows);
  make(wide.data(), {4, 8}, kF32, &hwide);
  expect_code(aoti_torch_cpu__scaled_mm(ha, hb, hrows, hs, nullptr, nullptr, nullptr, 0, out.out()),
              "only per-tensor (one-element) scales", StatusCode::kUnimplemented);
  expect_code(aoti_torch_cpu__scaled_mm(hwide, hb, hs, hs, nullptr, nullptr, nullptr, 0, out.out()),
              "'self' must be float8_e4m3fn or float8_e5m2, got float32", StatusCode::kInvalidArgument);
  expect_code(aoti_torch_cpu__scaled_mm(hb, ha, hs, hs, nullptr, nullptr, nullptr, 0, out.out()),
              "cannot be multiplied", StatusCode::kInvalidArgument);
  int32_t int_out = kI32;
  expect_code(aoti_torch_cpu__scaled_mm(ha, hb, hs, hs, nullptr, nullptr, &int_out, 0, out.out()),
              "out_dtype int32", StatusCode::kUnimplemented);
  expect_code(aoti_torch_cpu__scaled_mm(ha, hb, hs, hs, nullptr, nullptr, nullptr, 0, nullptr), "ret0",
              StatusCode::kInvalidArgument);
  EXPECT_EQ(out.h, nullptr);
  // The generic entry point forwards to the CPU op, whose message it keeps.
  expect_failure(aoti_torch__scaled_mm_v2(ha, hb, hrows, hs, nullptr, nullptr, nullptr, 0, out.out()),
                 "only per-tensor (one-element) scales");
  EXPECT_EQ(out.h, nullptr);
}

TEST(ShimScaledMmTest, GenericAttentionOnTheCpuRefusesDropoutAndDebugMasks) {
  std::vector<float> q(1 * 2 * 3 * 4, 0.5f);
  Handle hq;
  make(q.data(), {1, 2, 3, 4}, kF32, &hq);
  AtenTensorHandle r[9] = {};
  int64_t max_q = -1, max_k = -1;
  expect_code(aoti_torch__scaled_dot_product_flash_attention_v2(hq, hq, hq, 0.1, 0, 0, nullptr, &r[0], &r[1], &r[2],
                                                                &r[3], &max_q, &max_k, &r[6], &r[7], &r[8]),
              "dropout_p 0.1", StatusCode::kUnimplemented);
  expect_code(aoti_torch__scaled_dot_product_flash_attention_v2(hq, hq, hq, 0.0, 0, 1, nullptr, &r[0], &r[1], &r[2],
                                                                &r[3], &max_q, &max_k, &r[6], &r[7], &r[8]),
              "return_debug_mask", StatusCode::kUnimplemented);
  for (AtenTensorHandle h : r) EXPECT_EQ(h, nullptr);
  // A good call hands out every output and the sequence lengths.
  ASSERT_EQ(aoti_torch__scaled_dot_product_flash_attention_v2(hq, hq, hq, 0.0, 1, 0, nullptr, &r[0], &r[1], &r[2],
                                                              &r[3], &max_q, &max_k, &r[6], &r[7], &r[8]),
            0)
      << get_last_error().to_string();
  EXPECT_EQ(max_q, 3);
  EXPECT_EQ(max_k, 3);
  for (int i : {0, 1, 2, 3, 6, 7, 8}) {
    ASSERT_NE(r[i], nullptr) << i;
    EXPECT_EQ(aoti_torch_delete_tensor_object(r[i]), 0);
  }
}

}  // namespace
}  // namespace aotirt
