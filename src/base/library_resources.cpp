#include "base/library_resources.h"

#include <new>

namespace aotirt {
namespace {
thread_local LibraryResources* t_current = nullptr;
}  // namespace

bool LibraryResources::add(void* handle, Release release) noexcept {
  try {
    std::lock_guard<std::mutex> lock(mu_);
    items_.emplace_back(handle, release);
    return true;
  } catch (...) {
    return false;
  }
}

void LibraryResources::release_all() noexcept {
  std::vector<std::pair<void*, Release>> items;
  {
    std::lock_guard<std::mutex> lock(mu_);
    items.swap(items_);
  }
  for (auto it = items.rbegin(); it != items.rend(); ++it) it->second(it->first);
}

size_t LibraryResources::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return items_.size();
}

LibraryResources* current_library_resources() { return t_current; }

ScopedLibraryResources::ScopedLibraryResources(LibraryResources* r) : previous_(t_current) { t_current = r; }
ScopedLibraryResources::~ScopedLibraryResources() { t_current = previous_; }

}  // namespace aotirt
