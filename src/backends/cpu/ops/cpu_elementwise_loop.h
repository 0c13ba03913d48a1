// The CPU elementwise ops' shared loop: an N-d strided walk over an output
// shape with any number (up to kLoopMaxOperands) of operands, each
// broadcast to that shape (stride 0 where it broadcasts). Dims are ordered
// by the first operand's strides (the output's, so writes stream), size-1
// dims dropped and contiguous runs coalesced; the body is called once per
// row of the innermost dim with byte pointers and byte strides. Large walks
// split their rows (and long rows into blocks) over OpenMP threads; the
// body must not throw.
#pragma once

#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <vector>

#include "core/tensor.h"

namespace aotirt {
namespace cpu_ops {

constexpr int kLoopMaxOperands = 3;

// One operand of an ElementLoop: its first element and its layout.
struct LoopOperand {
  char* data = nullptr;
  DimVector sizes, strides;  // elements; sizes broadcast to the loop's shape
  int64_t element_size = 1;
};
LoopOperand loop_operand(const TensorImpl& t);

class ElementLoop {
 public:
  ElementLoop(const DimVector& shape, std::initializer_list<LoopOperand> operands);

  int64_t numel() const { return numel_; }

  // Calls body(char* const* ptrs, const int64_t* byte_strides, int64_t n)
  // for every row; ptrs[k] is operand k's first element of the row.
  template <class Body>
  void run(Body&& body) const {
    if (numel_ == 0) return;
    const int64_t nd = static_cast<int64_t>(sizes_.size());
    if (nd == 0) {
      char* ptrs[kLoopMaxOperands];
      int64_t zero[kLoopMaxOperands] = {0, 0, 0};
      for (int k = 0; k < nops_; ++k) ptrs[k] = base_[k];
      body(static_cast<char* const*>(ptrs), static_cast<const int64_t*>(zero), int64_t{1});
      return;
    }
    const int64_t inner = sizes_[nd - 1];
    const int64_t rows = numel_ / inner;
    constexpr int64_t kParallelElements = int64_t{1} << 15;
    constexpr int64_t kMinBlock = 4096;
    const int threads = omp_get_max_threads();
    const bool parallel = numel_ >= kParallelElements && threads > 1;
    // Few long rows: cut each into blocks so every thread gets work.
    int64_t blocks = 1;
    if (parallel && rows < 4 * threads)
      blocks = std::max<int64_t>(1, std::min<int64_t>((4 * threads + rows - 1) / rows, inner / kMinBlock));
    const int64_t block_len = (inner + blocks - 1) / blocks;
    blocks = (inner + block_len - 1) / block_len;
    const int64_t tasks = rows * blocks;
    int64_t inner_strides[kLoopMaxOperands] = {0, 0, 0};
    for (int k = 0; k < nops_; ++k) inner_strides[k] = strides_[k][nd - 1];
#pragma omp parallel for schedule(static) if (parallel)
    for (int64_t task = 0; task < tasks; ++task) {
      const int64_t row = task / blocks, block = task % blocks;
      char* ptrs[kLoopMaxOperands];
      for (int k = 0; k < nops_; ++k) ptrs[k] = base_[k];
      int64_t r = row;
      for (int64_t d = nd - 2; d >= 0; --d) {
        const int64_t i = r % sizes_[d];
        r /= sizes_[d];
        for (int k = 0; k < nops_; ++k) ptrs[k] += i * strides_[k][d];
      }
      const int64_t start = block * block_len;
      const int64_t n = std::min(block_len, inner - start);
      for (int k = 0; k < nops_; ++k) ptrs[k] += start * inner_strides[k];
      body(static_cast<char* const*>(ptrs), static_cast<const int64_t*>(inner_strides), n);
    }
  }

 private:
  int nops_ = 0;
  int64_t numel_ = 0;
  char* base_[kLoopMaxOperands] = {nullptr, nullptr, nullptr};
  std::vector<int64_t> sizes_;                        // outermost first
  std::vector<int64_t> strides_[kLoopMaxOperands];    // bytes, per operand
};

}  // namespace cpu_ops
}  // namespace aotirt
