// dtype, device, layout and memory-format constants and dtype element sizes,
// compared with c10's numbering (ScalarType, DeviceType, Layout, MemoryFormat).
#include <gtest/gtest.h>

#include "shim/shim_abi.h"

namespace {

TEST(ShimConstantsTest, DeviceTypes) {
  EXPECT_EQ(aoti_torch_device_type_cpu(), 0);
  EXPECT_EQ(aoti_torch_device_type_cuda(), 1);
  EXPECT_EQ(aoti_torch_device_type_xpu(), 12);
  EXPECT_EQ(aoti_torch_device_type_mps(), 13);
  EXPECT_EQ(aoti_torch_device_type_meta(), 14);
  EXPECT_EQ(aoti_torch_device_type_privateuse1(), 20);
}

TEST(ShimConstantsTest, DTypes) {
  EXPECT_EQ(aoti_torch_dtype_uint8(), 0);
  EXPECT_EQ(aoti_torch_dtype_int8(), 1);
  EXPECT_EQ(aoti_torch_dtype_int16(), 2);
  EXPECT_EQ(aoti_torch_dtype_int32(), 3);
  EXPECT_EQ(aoti_torch_dtype_int64(), 4);
  EXPECT_EQ(aoti_torch_dtype_float16(), 5);
  EXPECT_EQ(aoti_torch_dtype_float32(), 6);
  EXPECT_EQ(aoti_torch_dtype_float64(), 7);
  EXPECT_EQ(aoti_torch_dtype_complex32(), 8);
  EXPECT_EQ(aoti_torch_dtype_complex64(), 9);
  EXPECT_EQ(aoti_torch_dtype_complex128(), 10);
  EXPECT_EQ(aoti_torch_dtype_bool(), 11);
  EXPECT_EQ(aoti_torch_dtype_bfloat16(), 15);
  EXPECT_EQ(aoti_torch_dtype_float8_e5m2(), 23);
  EXPECT_EQ(aoti_torch_dtype_float8_e4m3fn(), 24);
  EXPECT_EQ(aoti_torch_dtype_float8_e5m2fnuz(), 25);
  EXPECT_EQ(aoti_torch_dtype_float8_e4m3fnuz(), 26);
  EXPECT_EQ(aoti_torch_dtype_uint16(), 27);
  EXPECT_EQ(aoti_torch_dtype_uint32(), 28);
  EXPECT_EQ(aoti_torch_dtype_uint64(), 29);
}

TEST(ShimConstantsTest, LayoutsAndMemoryFormats) {
  EXPECT_EQ(aoti_torch_layout_strided(), 0);
  EXPECT_EQ(aoti_torch_layout_sparse_coo(), 1);
  EXPECT_EQ(aoti_torch_layout_sparse_csr(), 2);
  EXPECT_EQ(aoti_torch_layout__mkldnn(), 3);
  EXPECT_EQ(aoti_torch_layout_sparse_csc(), 4);
  EXPECT_EQ(aoti_torch_layout_sparse_bsr(), 5);
  EXPECT_EQ(aoti_torch_layout_sparse_bsc(), 6);
  EXPECT_EQ(aoti_torch_layout_jagged(), 7);
  EXPECT_EQ(aoti_torch_memory_format_contiguous_format(), 0);
  EXPECT_EQ(aoti_torch_memory_format_preserve_format(), 1);
  EXPECT_EQ(aoti_torch_memory_format_channels_last(), 2);
  EXPECT_EQ(aoti_torch_memory_format_channels_last_3d(), 3);
}

TEST(ShimConstantsTest, AbiVersionIsTorch2_11) {
  const uint64_t v = aoti_torch_abi_version();
  EXPECT_EQ(v >> 56, 2u);
  EXPECT_EQ((v >> 48) & 0xFF, 11u);
}

TEST(ShimConstantsTest, ElementSizes) {
  const struct { int32_t (*dtype)(); size_t size; } kSizes[] = {
      {aoti_torch_dtype_uint8, 1},          {aoti_torch_dtype_int8, 1},
      {aoti_torch_dtype_int16, 2},          {aoti_torch_dtype_int32, 4},
      {aoti_torch_dtype_int64, 8},          {aoti_torch_dtype_float16, 2},
      {aoti_torch_dtype_float32, 4},        {aoti_torch_dtype_float64, 8},
      {aoti_torch_dtype_complex32, 4},      {aoti_torch_dtype_complex64, 8},
      {aoti_torch_dtype_complex128, 16},    {aoti_torch_dtype_bool, 1},
      {aoti_torch_dtype_bfloat16, 2},       {aoti_torch_dtype_float8_e5m2, 1},
      {aoti_torch_dtype_float8_e4m3fn, 1},  {aoti_torch_dtype_float8_e5m2fnuz, 1},
      {aoti_torch_dtype_float8_e4m3fnuz, 1}, {aoti_torch_dtype_uint16, 2},
      {aoti_torch_dtype_uint32, 4},         {aoti_torch_dtype_uint64, 8},
  };
  for (const auto& s : kSizes) EXPECT_EQ(aoti_torch_dtype_element_size(s.dtype()), s.size) << s.dtype();
  for (int32_t bad : {-1, 12, 13, 14, 16, 22, 30, 1000}) EXPECT_EQ(aoti_torch_dtype_element_size(bad), 0u) << bad;
}

}  // namespace
