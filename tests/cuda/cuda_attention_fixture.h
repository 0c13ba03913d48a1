// Fixtures for the CUDA SDPA shims, shared by their tests
// (cuda_attention_test.cpp) and their timing cases
// (bench/cuda/attention_bench.cpp): an attention problem, its description,
// and random inputs for it on the host and the device.
#pragma once

#include <gtest/gtest.h>

#include <aotirt/types.h>

#include <cstdint>
#include <limits>
#include <random>
#include <string>

#include "core/dtype.h"
#include "core/tensor.h"
#include "cuda_test_util.h"

namespace aotirt {
namespace cuda_test {

// The attention shims' suite: skipped without a GPU.
class CudaAttentionTest : public CudaTest {};

enum class Mask { kNone, kBool, kAdditive };

struct AttnCase {
  int64_t b, hq, hkv, l, s, e, ev;
  bool causal;
  Mask mask;
  bool mask_broadcast;  // [L, S] instead of [B, H, L, S]
  bool transposed_q;    // q stored as [B, L, H, E]
  double scale;         // 0: default 1/sqrt(E)
  // The mask in bands rather than at random: a causal band over the cache
  // (query i sees keys up to i + S - L; with at most 4 queries, a decode
  // step, the cache is filled to two thirds only), odd batches with their
  // last 37 keys hidden, odd heads (of a full mask) with their first 64, and
  // every 97th row from the 5th hidden whole; an additive one holds 0 and
  // -inf, and random values on every 13th row. Whole tiles of it hide or
  // show every key, which the tensor-core kernel skips or takes unmasked.
  bool band = false;
  // With band: an additive mask hides with -65504 (what torch's cuDNN
  // attention makes of a boolean mask's false) instead of -inf.
  bool lowest_hides = false;
};

// |c| in |dt|, for traces and timing lines.
inline std::string describe(const AttnCase& c, DType dt) {
  return std::string(dtype_name(dt)) + " B=" + std::to_string(c.b) + " H=" + std::to_string(c.hq) + "/" +
         std::to_string(c.hkv) + " L=" + std::to_string(c.l) + " S=" + std::to_string(c.s) +
         " E=" + std::to_string(c.e) + " Ev=" + std::to_string(c.ev) + (c.causal ? " causal" : "") +
         (c.mask == Mask::kBool ? " bool-mask" : c.mask == Mask::kAdditive ? " add-mask" : "") +
         (c.mask_broadcast ? "(LS)" : "") + (c.band ? " band" : "") + (c.lowest_hides ? "(-65504)" : "") +
         (c.transposed_q ? " q-transposed" : "") +
         (c.scale ? " scale=" + std::to_string(c.scale) : "");
}

struct Inputs {
  TensorImpl q, k, v, mask;     // host, in the test dtype
  TensorImpl dq, dk, dv, dmask;  // device
};

// Random q, k, v (and a mask) for |c| in |dt| from |seed|, on the host and
// on the device: k stored as [B, S, H, E], q so too when |c| says.
inline Inputs make_inputs(const AttnCase& c, DType dt, uint32_t seed) {
  std::mt19937 rng(seed);
  Inputs in;
  in.q = host_random(DimVector{c.b, c.hq, c.l, c.e}, dt, rng(), -2, 2);
  in.k = host_random(DimVector{c.b, c.hkv, c.s, c.e}, dt, rng(), -2, 2);
  in.v = host_random(DimVector{c.b, c.hkv, c.s, c.ev}, dt, rng());
  in.dq = c.transposed_q ? to_device(in.q, permuted_strides(in.q.sizes(), {0, 2, 1, 3})) : to_device(in.q);
  in.dk = to_device(in.k, permuted_strides(in.k.sizes(), {0, 2, 1, 3}));  // [B, S, H, E] storage
  in.dv = to_device(in.v);
  if (c.mask != Mask::kNone) {
    DimVector ms = c.mask_broadcast ? DimVector{c.l, c.s} : DimVector{c.b, c.hq, c.l, c.s};
    if (c.band) {
      const DType mdt = c.mask == Mask::kBool ? DType::kBool : dt;
      in.mask = host_empty(ms, mdt);
      char* p = static_cast<char*>(in.mask.data_ptr());
      const int64_t nb = c.mask_broadcast ? 1 : c.b, nh = c.mask_broadcast ? 1 : c.hq;
      std::uniform_real_distribution<double> value(-3, 1);
      for (int64_t b = 0; b < nb; ++b)
        for (int64_t h = 0; h < nh; ++h)
          for (int64_t i = 0; i < c.l; ++i)
            for (int64_t j = 0; j < c.s; ++j) {
              const int64_t filled = c.l <= 4 ? c.s * 2 / 3 : c.s;
              const bool shown = j <= i + (filled - c.l) && i % 97 != 5 && !(b % 2 == 1 && j >= c.s - 37) &&
                                 !(h % 2 == 1 && j < 64);
              double x = shown ? 1.0 : 0.0;
              if (c.mask != Mask::kBool)
                x = !shown ? (c.lowest_hides ? -65504.0 : -std::numeric_limits<double>::infinity())
                           : (i % 13 == 0 ? value(rng) : 0.0);
              store_from_double(p + (((b * nh + h) * c.l + i) * c.s + j) * dtype_size(mdt), mdt, x);
            }
    } else if (c.mask == Mask::kBool) {
      in.mask = host_empty(ms, DType::kBool);
      uint8_t* p = static_cast<uint8_t*>(in.mask.data_ptr());
      for (int64_t i = 0; i < in.mask.numel(); ++i) p[i] = (rng() % 4) != 0;
    } else {
      in.mask = host_random(ms, dt == DType::kFloat32 ? DType::kFloat32 : dt, rng(), -3, 1);
    }
    in.dmask = to_device(in.mask);
  }
  return in;
}

}  // namespace cuda_test
}  // namespace aotirt
