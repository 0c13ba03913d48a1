// A CUTLASS warp-level mma for 3xTF32 (OpMultiplyAddFastF32) that sums the
// products of each warp step in fresh accumulators and adds them to the
// running sums with a rounded float32 add. mma.sync adds into its float32
// accumulators with truncation, so one accumulator per output drifts toward
// zero by about k * 2^-24 of the sum (30 times less accurate than cuBLAS's
// float32 GEMM at 197x768x3072: bench/notes.md). Used by the 3xTF32 GEMMs
// (cuda_gemm_f32x3.cu) and convolutions (cuda_conv_tf32.cu); CUTLASS headers
// only.
#pragma once

#include <cutlass/cutlass.h>

namespace aotirt {

// CUTLASS's warp-level 3xTF32 mma with the products of each step summed in
// fresh accumulators and added to the running sums in float32.
template <class Base>
class FreshSumMma : public Base {
 public:
  using typename Base::FragmentC;
  using typename Base::TransformedFragmentA;
  using typename Base::TransformedFragmentB;

  CUTLASS_DEVICE
  void operator()(FragmentC& d, TransformedFragmentA const& a, TransformedFragmentB const& b,
                  FragmentC const& c) const {
    FragmentC part;
    part.clear();
    Base::operator()(part, a, b, part);
    CUTLASS_PRAGMA_UNROLL
    for (int i = 0; i < FragmentC::kElements; ++i) d[i] = c[i] + part[i];
  }
};

}  // namespace aotirt
