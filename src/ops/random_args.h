// The device-neutral rules of the random ops, as torch gives them: factory
// arguments (size, dtype, layout, pin_memory; the device is the backend's),
// which dtypes each distribution accepts, and the range checks on its
// parameters (randint's bounds against the dtype, uniform's [from, to),
// normal's std, exponential's lambda, bernoulli's p, randperm's n). Also the
// counter-based Philox4x32-10 block function (Salmon, Moraes, Dror and Shaw,
// "Parallel random numbers: as easy as 1, 2, 3", SC 2011), which every
// backend draws from: a block addressed by the element's index keeps
// results independent of how the work is split over threads.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "aotirt/status.h"
#include "core/tensor.h"
#include "shim/shim_abi.h"

namespace aotirt {
namespace ops {

// ---- Philox4x32-10 ----

using PhiloxBlock = std::array<uint32_t, 4>;

// One Philox4x32 block: 10 rounds of the paper's S-box over the 128-bit
// counter |ctr| under the 64-bit key |key|.
inline PhiloxBlock philox4x32_10(PhiloxBlock ctr, std::array<uint32_t, 2> key) {
  constexpr uint32_t kMul0 = 0xD2511F53u, kMul1 = 0xCD9E8D57u;
  constexpr uint32_t kWeyl0 = 0x9E3779B9u, kWeyl1 = 0xBB67AE85u;
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      key[0] += kWeyl0;
      key[1] += kWeyl1;
    }
    const uint64_t p0 = static_cast<uint64_t>(kMul0) * ctr[0];
    const uint64_t p1 = static_cast<uint64_t>(kMul1) * ctr[2];
    const uint32_t hi0 = static_cast<uint32_t>(p0 >> 32), lo0 = static_cast<uint32_t>(p0);
    const uint32_t hi1 = static_cast<uint32_t>(p1 >> 32), lo1 = static_cast<uint32_t>(p1);
    ctr = {hi1 ^ ctr[1] ^ key[0], lo1, hi0 ^ ctr[3] ^ key[1], lo0};
  }
  return ctr;
}

// The block for element |index| of a draw under |seed|: the 64-bit index
// fills the counter's low words, the seed is the key.
inline PhiloxBlock philox_block(uint64_t seed, uint64_t index) {
  return philox4x32_10({static_cast<uint32_t>(index), static_cast<uint32_t>(index >> 32), 0u, 0u},
                       {static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)});
}

// ---- argument rules ----

// What a random op is asked to produce or fill.
enum class RandomKind {
  kUniform,      // rand, uniform: floating or complex
  kNormal,       // randn, normal: floating or complex
  kExponential,  // floating only
  kRandint,      // integers, bool and floating
  kRandperm,     // integers and floating (not bool)
  kBernoulli,    // floating, integers and bool (the tensor being filled)
};

// UNIMPLEMENTED for dtypes aotirt does not draw (float8, uint16-64,
// complex32) and INVALID_ARGUMENT for those torch refuses for |kind|.
// |what| names the argument.
Status check_random_dtype(RandomKind kind, DType dtype, const char* what);

// A factory op's output: sizes (checked non-negative) and dtype (the
// |dtype| code, or |default_dtype| when it is null). A non-strided layout
// and pin_memory=True are UNIMPLEMENTED.
struct FactoryArgs {
  DimVector sizes;
  DType dtype = DType::kFloat32;
};
Result<FactoryArgs> factory_args(RandomKind kind, const int64_t* size, int64_t size_len, const int32_t* dtype,
                                 DType default_dtype, const int32_t* layout, const int32_t* pin_memory);

// UNIMPLEMENTED when a generator object is passed (|generator| non-null and
// pointing to a non-null handle): aotirt draws from its one process-wide
// generator only.
Status check_no_generator(AtenGeneratorHandle* generator);
// The process-wide seed of the random ops from its text (AOTIRT_SEED, as a
// backend's options hold it): an unsigned 64-bit integer, or a negative
// int64 taken modulo 2^64 as torch's manual_seed does; empty: a seed from
// std::random_device. INVALID_ARGUMENT names anything else.
Result<uint64_t> parse_random_seed(const std::string& text);

// randint's bounds: low < high, and low and high - 1 representable in
// |dtype| (for floating dtypes, within its finite range), as torch checks.
Status check_randint_range(int64_t low, int64_t high, DType dtype);
// randperm's n: non-negative, and n - 1 representable exactly in |dtype|.
Status check_randperm_n(int64_t n, DType dtype);
// uniform's [from, to): from <= to and to - from finite in |dtype|.
Status check_uniform_range(double from, double to, DType dtype);
// normal's std >= 0.
Status check_normal_std(double std);
// exponential's lambda > 0.
Status check_exponential_lambda(double lambd);
// bernoulli's scalar p in [0, 1] (NaN refused).
Status check_bernoulli_p(double p);

// The sizes/strides |p| takes when broadcast (torch's expand) to |sizes|:
// INVALID_ARGUMENT when it cannot be.
Result<DimVector> expand_strides(const TensorImpl& p, const DimVector& sizes, const char* what);

// ---- FFT (the same family: _fft_c2c and _fft_r2c) ----

// A checked FFT call and its output layout, as torch's CPU (MKL) kernels
// give it: the transformed dims sorted by the input's strides, largest first
// (r2c keeps its last dim last: that one is halved), after the batch dims,
// which are also in the input's stride order; the output is contiguous in
// that dim order.
struct FftArgs {
  const TensorImpl* self = nullptr;
  std::vector<int64_t> dims;  // transformed dims in execution order; r2c's halved dim last
  std::vector<int64_t> given_dims;  // the same dims in the caller's order
  DimVector out_sizes, out_strides;
  DType out_dtype = DType::kComplex64;
  double scale = 1.0;  // normalization: 1, 1/sqrt(n) or 1/n over the signal's n elements
  bool onesided = true;
};

// _fft_c2c: |self| complex64/complex128 (complex32 UNIMPLEMENTED), |dim|
// distinct wrapped dims (empty: a copy), |normalization| 0, 1 or 2.
Result<FftArgs> fft_c2c_args(AtenTensorHandle self, const int64_t* dim, int64_t dim_len, int64_t normalization);
// _fft_r2c: |self| float32/float64 (16-bit floats UNIMPLEMENTED), at least
// one dim; onesided halves the last dim of |dim| to n / 2 + 1.
Result<FftArgs> fft_r2c_args(AtenTensorHandle self, const int64_t* dim, int64_t dim_len, int64_t normalization,
                             bool onesided);

// torch's CUDA (cuFFT) kernels transform at most three dims per cuFFT plan,
// in passes, and each pass lays its own output out: the pass's batch dims
// (the other dims, by the pass input's strides, largest first) outermost,
// then its transformed dims in its order, densely. The final layout can
// therefore differ from the CPU one in FftArgs. fft_cuda_passes replays
// torch's choice of passes so a CUDA backend gives the same strides.
//
// An r2c over at most three dims, unless they begin with dims 0 then 1,
// is one multi-dim r2c pass over all of them in the caller's order, whose
// output takes the result's sizes (full size when two-sided: the pass
// writes the one-sided half into it and the rest is filled in place).
// Otherwise an r2c is a one-dim r2c pass over its last dim into the
// one-sided sizes, then c2c passes (as _fft_c2c plans them) over the
// others; a two-sided result is then copied into a contiguous full-size
// tensor before the fill.
struct FftPass {
  std::vector<int64_t> dims;   // transformed in this pass, slowest first
  std::vector<int64_t> order;  // every dim, slowest first: batch dims, then |dims|
  bool r2c = false;            // real input (an r2c's first pass; its last dim is halved)
  DimVector out_sizes, out_strides;
};
struct FftCudaPasses {
  std::vector<FftPass> passes;
  // A two-sided r2c in several passes whose last dim has n > 2: the passes
  // give the one-sided half, which goes into a contiguous full-size output
  // (out_strides) before the other half is filled by symmetry.
  bool expand = false;
  DimVector out_strides;  // the result's (sizes: FftArgs::out_sizes)
};
// |a| from fft_c2c_args (with at least one dim) or fft_r2c_args; for r2c,
// |complex_aligned| says whether the input's address is a multiple of twice
// its element size (torch first copies a misaligned real input, which
// changes the strides the passes see).
FftCudaPasses fft_cuda_passes(const FftArgs& a, bool r2c, bool complex_aligned);
// Whether torch's CUDA r2c over |dims| (the caller's order) is one cuFFT
// plan: at most three dims, not beginning with dims 0 then 1.
bool fft_cuda_r2c_in_one_plan(const std::vector<int64_t>& dims);

// Strides of a tensor of |sizes| laid out densely with |order|'s dims from
// slowest to fastest (sizes of 0 count as 1, as in contiguous strides).
DimVector dense_strides_in_order(const DimVector& sizes, const std::vector<int64_t>& order);

}  // namespace ops
}  // namespace aotirt
