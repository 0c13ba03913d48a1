// ElementLoop's set-up (cpu_elementwise_loop.h): broadcasting each operand
// to the loop's shape, ordering the dims so the first operand's strides
// fall from outermost to innermost, dropping size-1 dims and merging dims
// that every operand walks as one.
#include "backends/cpu/ops/cpu_elementwise_loop.h"

#include <cstdlib>
#include <numeric>
#include <stdexcept>

namespace aotirt {
namespace cpu_ops {

LoopOperand loop_operand(const TensorImpl& t) {
  LoopOperand o;
  o.data = static_cast<char*>(t.data_ptr());
  o.sizes = t.sizes();
  o.strides = t.strides();
  o.element_size = static_cast<int64_t>(t.element_size());
  return o;
}

ElementLoop::ElementLoop(const DimVector& shape, std::initializer_list<LoopOperand> operands) {
  // A caller's mistake, reported before any OpenMP region (shim_call turns
  // it into an INTERNAL error).
  if (operands.size() > kLoopMaxOperands) throw std::logic_error("ElementLoop takes at most 3 operands");
  nops_ = static_cast<int>(operands.size());
  const int64_t nd = shape.size();
  numel_ = numel_of(shape);
  // Byte strides over |shape|, right-aligned, 0 where an operand broadcasts.
  std::vector<std::vector<int64_t>> full(nops_, std::vector<int64_t>(nd, 0));
  int k = 0;
  for (const LoopOperand& o : operands) {
    base_[k] = o.data;
    const int64_t offset = nd - o.sizes.size();
    for (int64_t i = 0; i < o.sizes.size(); ++i)
      full[k][offset + i] = o.sizes[i] == 1 ? 0 : o.strides[i] * o.element_size;
    ++k;
  }
  // Outermost first: larger |stride| of the first operand that tells them
  // apart; ties keep the dims' own order.
  std::vector<int64_t> order;
  for (int64_t d = 0; d < nd; ++d)
    if (shape[d] != 1) order.push_back(d);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    for (int j = 0; j < nops_; ++j) {
      const int64_t sa = std::llabs(full[j][a]), sb = std::llabs(full[j][b]);
      if (sa != sb) return sa > sb;
    }
    return false;
  });
  for (int64_t d : order) {
    const int64_t n = sizes_.size();
    // Merge into the previous (outer) dim when every operand steps over the
    // inner dim's whole extent to reach the outer one.
    bool merge = n > 0;
    for (int j = 0; j < nops_ && merge; ++j) merge = strides_[j][n - 1] == full[j][d] * shape[d];
    if (merge) {
      sizes_[n - 1] *= shape[d];
      for (int j = 0; j < nops_; ++j) strides_[j][n - 1] = full[j][d];
    } else {
      sizes_.push_back(shape[d]);
      for (int j = 0; j < nops_; ++j) strides_[j].push_back(full[j][d]);
    }
  }
}

}  // namespace cpu_ops
}  // namespace aotirt
