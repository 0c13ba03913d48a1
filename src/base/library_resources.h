// Resources a loaded model library acquires through imports that aotirt
// redirects (a GPU driver's kernel modules, say), kept with the library and
// released when it closes. Generated code loads such things and never frees
// them, so without this every load and unload of a model would leave them
// behind in the process.
//
// The library's code runs only inside calls aotirt makes into it; the loader
// marks each such call with a ScopedLibraryResources, and the redirected
// import finds the owner with current_library_resources().
#pragma once

#include <cstddef>
#include <mutex>
#include <utility>
#include <vector>

namespace aotirt {

class LibraryResources {
 public:
  using Release = void (*)(void* handle);

  LibraryResources() = default;
  ~LibraryResources() { release_all(); }
  LibraryResources(const LibraryResources&) = delete;
  LibraryResources& operator=(const LibraryResources&) = delete;

  // Keeps |handle| until release_all(), which passes it to |release|.
  // Thread-safe. Returns false (and keeps nothing) when out of memory: the
  // resource then lives on, as it would have without this.
  bool add(void* handle, Release release) noexcept;
  // Releases every resource, the newest first.
  void release_all() noexcept;
  size_t size() const;

 private:
  mutable std::mutex mu_;
  std::vector<std::pair<void*, Release>> items_;
};

// The resources of the library whose code runs on this thread, or null.
LibraryResources* current_library_resources();

// Marks a call into a library: its acquisitions go to |r| meanwhile.
class ScopedLibraryResources {
 public:
  explicit ScopedLibraryResources(LibraryResources* r);
  ~ScopedLibraryResources();
  ScopedLibraryResources(const ScopedLibraryResources&) = delete;
  ScopedLibraryResources& operator=(const ScopedLibraryResources&) = delete;

 private:
  LibraryResources* previous_;
};

}  // namespace aotirt
