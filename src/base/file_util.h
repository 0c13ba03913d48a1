// Files the runtime creates or maps: private temporary directories that are
// removed with their owner, anonymous in-memory files (memfd) for model
// libraries, and read-only mappings of part of a file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "aotirt/status.h"

namespace aotirt {

// A directory made with mkdtemp under $TMPDIR (or /tmp), removed with all its
// contents when the object is destroyed.
class TempDir {
 public:
  static Result<TempDir> create(const std::string& prefix);
  TempDir() = default;
  TempDir(TempDir&& o) noexcept : path_(std::move(o.path_)) { o.path_.clear(); }
  TempDir& operator=(TempDir&& o) noexcept;
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() { remove(); }

  const std::string& path() const { return path_; }
  bool empty() const { return path_.empty(); }
  void remove();

 private:
  explicit TempDir(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

// An open file descriptor, closed on destruction.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  UniqueFd& operator=(UniqueFd&& o) noexcept;
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd() { reset(); }
  int get() const { return fd_; }
  void reset();
  // Gives up ownership without closing; returns the descriptor.
  int release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }

 private:
  int fd_ = -1;
};

// Creates an anonymous in-memory file called |name| (for /proc/self/maps).
// Nothing is written to disk, and it vanishes when the last fd closes.
Result<UniqueFd> create_memfd(const std::string& name);

// Writes all of |size| bytes to |fd|.
Status write_all(int fd, const void* data, size_t size, const std::string& what);

// A read-only private mapping of |length| bytes of a file starting at |offset|
// (any offset; the page alignment is handled here).
class MappedRegion {
 public:
  static Result<MappedRegion> map(const std::string& path, uint64_t offset, size_t length);
  MappedRegion() = default;
  MappedRegion(MappedRegion&& o) noexcept { *this = std::move(o); }
  MappedRegion& operator=(MappedRegion&& o) noexcept;
  MappedRegion(const MappedRegion&) = delete;
  MappedRegion& operator=(const MappedRegion&) = delete;
  ~MappedRegion() { unmap(); }

  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  void unmap();

 private:
  void* base_ = nullptr;
  size_t base_length_ = 0;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

// Drops this process's pages of |region| that lie wholly below |offset|
// (MADV_DONTNEED). The bytes stay readable: a later read maps them in again
// from the page cache. A model copying its weights out of a mapped blob calls
// this behind the copy, so the blob does not count fully toward the
// process's peak memory on top of the copy.
void release_pages_before(const MappedRegion& region, size_t offset);

// Reads [offset, offset + length) of |region| into memory now
// (MADV_POPULATE_READ), so that a read error shows here as a status naming
// |what| rather than as SIGBUS at the first touch: a bad sector (EIO), or the
// file cut short since it was mapped. Kernels without MADV_POPULATE_READ
// (before Linux 5.14) check nothing and return OK.
Status populate_range(const MappedRegion& region, size_t offset, size_t length, const std::string& what);

// Resident set size and its peak (VmRSS, VmHWM) of this process, in bytes;
// zeros where /proc is unavailable.
struct MemoryUsage {
  size_t rss = 0;
  size_t peak_rss = 0;
};
MemoryUsage process_memory_usage();

// Checks that |path| names a readable regular file; NOT_FOUND or IO_ERROR otherwise.
Status check_readable_file(const std::string& path);

}  // namespace aotirt
