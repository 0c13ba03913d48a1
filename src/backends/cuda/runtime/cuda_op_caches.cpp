#include "backends/cuda/runtime/cuda_op_caches.h"

#include <cstdlib>

#include "base/log.h"

namespace aotirt {

int CudaOpCaches::next_type_id() {
  static std::atomic<int> next{0};
  const int id = next.fetch_add(1);
  if (id >= kMaxTypes) {
    // A build-time bound on the kinds of cache the ops define, not on input.
    AOTIRT_LOG(kError, "more than {} kinds of CUDA op cache; raise CudaOpCaches::kMaxTypes", kMaxTypes);
    std::abort();
  }
  return id;
}

CudaOpCaches::~CudaOpCaches() {
  for (auto& slot : slots_) delete slot.load(std::memory_order_acquire);
}

std::vector<std::pair<std::string, size_t>> CudaOpCaches::sizes() const {
  std::vector<std::pair<std::string, size_t>> out;
  for (const auto& slot : slots_)
    if (const CudaOpCache* c = slot.load(std::memory_order_acquire)) out.emplace_back(c->name(), c->size());
  return out;
}

size_t CudaOpCaches::entries() const {
  size_t n = 0;
  for (const auto& s : sizes()) n += s.second;
  return n;
}

void CudaOpCaches::clear() {
  for (auto& slot : slots_)
    if (CudaOpCache* c = slot.load(std::memory_order_acquire)) c->clear();
}

}  // namespace aotirt
