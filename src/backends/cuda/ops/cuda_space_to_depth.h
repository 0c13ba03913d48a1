// Space-to-depth for the stems of CNNs: a convolution of stride 2 over a few
// channels (ResNet-50's 7x7 over 3) equals one of stride 1 over four times
// as many, on the input regrouped in 2x2 blocks of pixels and the filters
// regrouped the same way (their taps padded to an even count with zeros).
// The rewritten problem has channels enough for the convolution kernels'
// regular loads, where the stem padded to 4 channels needs the slow
// fixed-channels ones (cuda_conv_tf32.h). The gather is one mapping for both
// tensors; it is shared by the kernel (cuda_op_kernels.cu) and the host
// tests, so it is plain arithmetic, callable on either side.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define AOTIRT_HOST_DEVICE __host__ __device__
#else
#define AOTIRT_HOST_DEVICE
#endif

namespace aotirt {

// |batch| dense channels-last images of h x w x c, padded by pad_h above
// and pad_w to the left (and with zeros as far as needed below and to the
// right), regrouped into out_h x out_w x (4 * c): output pixel (y, x),
// channel (2 * bh + bw) * c + k holds input pixel (2y + bh - pad_h, 2x + bw -
// pad_w), channel k. For filters [k, r, s, c]: batch k, no padding, out_h x
// out_w = ceil(r / 2) x ceil(s / 2).
struct SpaceToDepth2 {
  int64_t batch = 0;
  int h = 0, w = 0, c = 0;
  int pad_h = 0, pad_w = 0;
  int out_h = 0, out_w = 0;

  // Output elements.
  AOTIRT_HOST_DEVICE int64_t size() const { return batch * out_h * out_w * 4 * c; }

  // The output holds groups of c floats, one per output pixel and block
  // position (group g = 4 * pixel + 2 * bh + bw), each a copy of one input
  // pixel's c channels: where group |g|'s start in the input, or -1 where
  // the group is zeros.
  AOTIRT_HOST_DEVICE int64_t group_source(int64_t g) const {
    const int block = static_cast<int>(g & 3);
    int64_t pixel = g >> 2;
    const int x = static_cast<int>(pixel % out_w);
    pixel /= out_w;
    const int y = static_cast<int>(pixel % out_h);
    const int64_t b = pixel / out_h;
    const int sy = 2 * y + (block >> 1) - pad_h, sx = 2 * x + (block & 1) - pad_w;
    if (sy < 0 || sy >= h || sx < 0 || sx >= w) return -1;
    return ((b * h + sy) * w + sx) * c;
  }

  // The input element output element |i| copies, or -1 where it is zero.
  AOTIRT_HOST_DEVICE int64_t source(int64_t i) const {
    const int64_t from = group_source(i / c);
    return from < 0 ? -1 : from + i % c;
  }
};

}  // namespace aotirt
