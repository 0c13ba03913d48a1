#include "backends/cuda/runtime/cuda_op_caches.h"

namespace aotirt {

std::vector<std::pair<std::string, size_t>> CudaOpCaches::sizes() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::pair<std::string, size_t>> out;
  for (const auto& c : caches_) out.emplace_back(c.second->name(), c.second->size());
  return out;
}

size_t CudaOpCaches::entries() const {
  size_t n = 0;
  for (const auto& s : sizes()) n += s.second;
  return n;
}

void CudaOpCaches::clear() {
  std::vector<CudaOpCache*> all;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& c : caches_) all.push_back(c.second.get());
  }
  for (CudaOpCache* c : all) c->clear();
}

}  // namespace aotirt
