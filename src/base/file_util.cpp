#include "base/file_util.h"

#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "base/fault.h"
#include "base/log.h"
#include "base/status.h"

namespace aotirt {

Result<TempDir> TempDir::create(const std::string& prefix) {
  const char* base = std::getenv("TMPDIR");
  std::string path = std::string(base && *base ? base : "/tmp") + "/" + prefix + "XXXXXX";
  // mkdtemp fills in the name in place: nothing allocates once the
  // directory exists, so it cannot be left behind by an exception.
  if (!mkdtemp(path.data()))
    return AOTIRT_STATUS(kIoError, "cannot create a temporary directory '{}': {}", path, std::strerror(errno));
  return TempDir(std::move(path));
}

TempDir& TempDir::operator=(TempDir&& o) noexcept {
  if (this != &o) {
    remove();
    path_ = std::move(o.path_);
    o.path_.clear();
  }
  return *this;
}

namespace {

// Empties the directory |name| (relative to |parent|) with system calls
// only: it runs in destructors, also when memory has run out, where
// std::filesystem would need to allocate. Returns 0 or an errno value.
int empty_directory_at(int parent, const char* name, int depth) {
  if (depth > 32) return ELOOP;
  const int fd = ::openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return errno;
  DIR* dir = ::fdopendir(fd);
  if (!dir) {
    const int e = errno;
    ::close(fd);
    return e;
  }
  int err = 0;
  while (struct dirent* e = ::readdir(dir)) {
    if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
    if (::unlinkat(fd, e->d_name, 0) == 0) continue;
    if (errno != EISDIR && errno != EPERM) {
      err = errno;
      continue;
    }
    const int r = empty_directory_at(fd, e->d_name, depth + 1);
    if (r != 0)
      err = r;
    else if (::unlinkat(fd, e->d_name, AT_REMOVEDIR) != 0)
      err = errno;
  }
  ::closedir(dir);
  return err;
}

}  // namespace

void TempDir::remove() {
  if (path_.empty()) return;
  int err = empty_directory_at(AT_FDCWD, path_.c_str(), 0);
  if (::rmdir(path_.c_str()) != 0 && err == 0) err = errno;
  if (err != 0 && err != ENOENT) {
    try {
      AOTIRT_LOG(kWarning, "could not remove temporary directory {}: {}", path_, std::strerror(err));
    } catch (...) {
    }
  }
  path_.clear();
}

UniqueFd& UniqueFd::operator=(UniqueFd&& o) noexcept {
  if (this != &o) {
    reset();
    fd_ = o.fd_;
    o.fd_ = -1;
  }
  return *this;
}

void UniqueFd::reset() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

Result<UniqueFd> create_memfd(const std::string& name) {
  int fd = memfd_create(name.c_str(), MFD_CLOEXEC);
  if (fd < 0) return AOTIRT_STATUS(kIoError, "memfd_create failed: {}", std::strerror(errno));
  return UniqueFd(fd);
}

Status write_all(int fd, const void* data, size_t size, const std::string& what) {
  if (int e = fault::check(fault::Point::kFileWrite))
    return AOTIRT_STATUS(kIoError, "writing {} failed: {} (injected fault)", what, std::strerror(e));
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t n = ::write(fd, p, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return AOTIRT_STATUS(kIoError, "writing {} failed: {}", what, std::strerror(errno));
    }
    p += n;
    size -= static_cast<size_t>(n);
  }
  return Status();
}

MappedRegion& MappedRegion::operator=(MappedRegion&& o) noexcept {
  if (this != &o) {
    unmap();
    base_ = o.base_;
    base_length_ = o.base_length_;
    data_ = o.data_;
    size_ = o.size_;
    o.base_ = nullptr;
    o.data_ = nullptr;
    o.size_ = o.base_length_ = 0;
  }
  return *this;
}

void MappedRegion::unmap() {
  if (base_) munmap(base_, base_length_);
  base_ = nullptr;
  data_ = nullptr;
  size_ = base_length_ = 0;
}

Result<MappedRegion> MappedRegion::map(const std::string& path, uint64_t offset, size_t length) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return AOTIRT_STATUS(kIoError, "cannot open '{}': {}", path, std::strerror(errno));
  struct stat st;
  // Written so that a huge |offset| + |length| cannot wrap around.
  if (fstat(fd, &st) != 0 || static_cast<uint64_t>(st.st_size) < offset ||
      static_cast<uint64_t>(st.st_size) - offset < length) {
    ::close(fd);
    return AOTIRT_STATUS(kDataLoss, "'{}' is shorter than the {} bytes at offset {} it should hold", path,
                         length, offset);
  }
  MappedRegion r;
  if (length == 0) {
    ::close(fd);
    return r;
  }
  const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  const uint64_t aligned = offset / page * page;
  const size_t map_len = static_cast<size_t>(offset - aligned) + length;
  void* base = mmap(nullptr, map_len, PROT_READ, MAP_PRIVATE, fd, static_cast<off_t>(aligned));
  ::close(fd);  // the mapping keeps the file alive
  if (base == MAP_FAILED) return AOTIRT_STATUS(kIoError, "mmap of '{}' failed: {}", path, std::strerror(errno));
  r.base_ = base;
  r.base_length_ = map_len;
  r.data_ = static_cast<const uint8_t*>(base) + (offset - aligned);
  r.size_ = length;
  return r;
}

void release_pages_before(const MappedRegion& region, size_t offset) {
  if (!region.data()) return;
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t start = reinterpret_cast<uintptr_t>(region.data());
  const uintptr_t begin = (start + page - 1) / page * page;
  const uintptr_t end = (start + std::min(offset, region.size())) / page * page;
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
}

Status populate_range(const MappedRegion& region, size_t offset, size_t length, const std::string& what) {
#ifndef MADV_POPULATE_READ
  constexpr int MADV_POPULATE_READ = 22;  // Linux 5.14; older C library headers lack it
#endif
  if (!region.data() || offset >= region.size() || length == 0) return Status();
  length = std::min(length, region.size() - offset);
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t start = reinterpret_cast<uintptr_t>(region.data()) + offset;
  const uintptr_t begin = start / page * page;
  const uintptr_t end = (start + length + page - 1) / page * page;
  if (madvise(reinterpret_cast<void*>(begin), end - begin, MADV_POPULATE_READ) == 0) return Status();
  const int e = errno;
  if (e == EINVAL) return Status();  // the kernel cannot populate: nothing checked
  if (e == EFAULT || e == EIO)
    return AOTIRT_STATUS(kIoError, "reading {} bytes {}..{} failed: {}", what, offset, offset + length,
                         e == EFAULT ? "the file ends before them (was it truncated or replaced while loading?)"
                                     : std::strerror(e));
  return AOTIRT_STATUS(kIoError, "reading {} bytes {}..{} failed: {}", what, offset, offset + length,
                       std::strerror(e));
}

MemoryUsage process_memory_usage() {
  MemoryUsage u;
  FILE* f = std::fopen("/proc/self/status", "r");
  if (!f) return u;
  char line[256];
  while (std::fgets(line, sizeof(line), f)) {
    unsigned long kb = 0;
    if (std::sscanf(line, "VmRSS: %lu kB", &kb) == 1) u.rss = kb * 1024;
    if (std::sscanf(line, "VmHWM: %lu kB", &kb) == 1) u.peak_rss = kb * 1024;
  }
  std::fclose(f);
  return u;
}

Status check_readable_file(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT || errno == ENOTDIR) return AOTIRT_STATUS(kNotFound, "'{}' does not exist", path);
    return AOTIRT_STATUS(kIoError, "cannot access '{}': {}", path, std::strerror(errno));
  }
  if (S_ISDIR(st.st_mode)) return AOTIRT_STATUS(kInvalidArgument, "'{}' is a directory, not a .pt2 file", path);
  if (::access(path.c_str(), R_OK) != 0)
    return AOTIRT_STATUS(kIoError, "cannot read '{}': {}", path, std::strerror(errno));
  return Status();
}

}  // namespace aotirt
