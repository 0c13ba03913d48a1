#include "core/opaque_layout.h"

namespace aotirt {

Result<OpaqueLayout::Derived> OpaqueLayout::derived(const std::string& key,
                                                    const std::function<Result<Derived>()>& make) const {
  // One lock for lookup and creation: preparing a weight happens once per
  // weight and kernel, and a second caller must not build it again.
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& entry : derived_)
    if (entry.first == key) return entry.second;
  Result<Derived> made = make();
  if (!made.ok()) return made;
  if (derived_.size() >= kMaxDerived) derived_.erase(derived_.begin());
  derived_.emplace_back(key, *made);
  return made;
}

}  // namespace aotirt
