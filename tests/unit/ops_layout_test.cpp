// The op layer's output-layout rules, copied from PyTorch: the strides
// empty_like gives, c10's channels-last detection and channels-last strides.
// The generated code reinterprets op outputs with these layouts, so a
// difference here corrupts a model's results silently.
#include <gtest/gtest.h>

#include "ops/layout.h"

namespace aotirt {
namespace {

TensorImpl view(DimVector sizes, DimVector strides) {
  return TensorImpl(StorageRef(), DType::kFloat32, std::move(sizes), std::move(strides), 0);
}

TEST(OpsLayoutTest, EmptyLikeKeepsDenseStrides) {
  // A dense but permuted tensor keeps its exact strides.
  EXPECT_EQ(ops::empty_like_strides(view({2, 3, 4}, {1, 8, 2})), (DimVector{1, 8, 2}));
  EXPECT_EQ(ops::empty_like_strides(view({2, 3, 4}, {12, 4, 1})), (DimVector{12, 4, 1}));
}

TEST(OpsLayoutTest, EmptyLikeOfANonDenseViewKeepsItsStrideOrder) {
  // q of a fused qkv buffer: [B=2, H=2, L=64, E=64] with strides
  // (L*3*H*E, E, 3*H*E, 1) -> dense [B, L, H, E] order.
  EXPECT_EQ(ops::empty_like_strides(view({2, 2, 64, 64}, {24576, 64, 384, 1})), (DimVector{8192, 64, 128, 1}));
  // Every other column of a matrix: contiguous result.
  EXPECT_EQ(ops::empty_like_strides(view({3, 4}, {8, 2})), (DimVector{4, 1}));
  // A transposed slice: column-major result.
  EXPECT_EQ(ops::empty_like_strides(view({3, 4}, {1, 6})), (DimVector{1, 3}));
  // Broadcast (zero-stride) dims keep their place.
  EXPECT_EQ(ops::dense_strides_like(DimVector{5, 3}, DimVector{0, 1}), (DimVector{3, 1}));
  // Equal strides: the smaller dim goes inside.
  EXPECT_EQ(ops::dense_strides_like(DimVector{4, 1, 3}, DimVector{3, 3, 1}), (DimVector{3, 3, 1}));
}

TEST(OpsLayoutTest, ChannelsLastDetection) {
  const DimVector sizes{2, 8, 5, 6};
  EXPECT_TRUE(ops::is_channels_last(sizes, ops::channels_last_strides(sizes)));
  EXPECT_EQ(ops::channels_last_strides(sizes), (DimVector{240, 1, 48, 8}));
  EXPECT_FALSE(ops::is_channels_last(sizes, contiguous_strides(sizes)));
  // Ambiguous N111 tensors count as contiguous.
  EXPECT_FALSE(ops::is_channels_last(DimVector{4, 1, 1, 1}, DimVector{1, 1, 1, 1}));
  // 5-d (channels_last_3d).
  const DimVector s5{2, 4, 3, 5, 6};
  EXPECT_TRUE(ops::is_channels_last(s5, ops::channels_last_strides(s5)));
  EXPECT_FALSE(ops::is_channels_last(s5, contiguous_strides(s5)));
  EXPECT_FALSE(ops::is_channels_last(DimVector{2, 3}, DimVector{3, 1}));
  // An empty dim zeroes the strides outside it, as in PyTorch.
  EXPECT_EQ(ops::channels_last_strides(DimVector{2, 0, 5, 6}), (DimVector{0, 1, 0, 0}));
}

TEST(OpsLayoutTest, NonOverlappingAndDense) {
  EXPECT_TRUE(ops::is_non_overlapping_and_dense(view({2, 3}, {3, 1})));
  EXPECT_TRUE(ops::is_non_overlapping_and_dense(view({2, 3}, {1, 2})));
  EXPECT_TRUE(ops::is_non_overlapping_and_dense(view({2, 1, 3}, {3, 100, 1})));
  EXPECT_FALSE(ops::is_non_overlapping_and_dense(view({2, 3}, {4, 1})));
  EXPECT_FALSE(ops::is_non_overlapping_and_dense(view({2, 3}, {0, 1})));
}

}  // namespace
}  // namespace aotirt
