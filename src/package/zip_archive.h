// Read-only access to a zip archive (a .pt2 package), with zip64 (entries,
// sizes and offsets past 4 GiB): stored and deflated entries (zlib inflates),
// CRC-checked.
//
// Entries can be read into memory, streamed into a file descriptor, or -- for
// entries stored without compression, as PyTorch writes them -- located by
// byte offset so their bytes can be mapped straight from the archive.
//
// The central directory is indexed once when the archive is opened: find() is
// a hash lookup and reading an entry never scans the others. An archive is
// refused when its entries are ambiguous or inconsistent: two entries with the
// same name, entries whose data overlap, a stored entry whose two sizes differ,
// or an entry that lies past the central directory. Every read is bounded: an
// entry may not declare more than ZipLimits allows, and one that inflates to
// more than it declares is cut off as soon as it does. Nothing here throws:
// running out of memory is a RESOURCE_EXHAUSTED status.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "aotirt/status.h"

namespace aotirt {

struct ZipEntry {
  std::string name;     // raw bytes of the central directory's name
  uint64_t compressed_size = 0;
  uint64_t size = 0;    // uncompressed
  bool stored = false;  // no compression: bytes sit verbatim in the archive
  size_t index = 0;     // position in the central directory
  uint16_t method = 0;  // zip compression method (0 stored, 8 deflate, ...)
  uint32_t crc32 = 0;
  bool encrypted = false;
  uint64_t local_header_offset = 0;
};

// How much an entry may inflate to. A read or extraction of an entry whose
// uncompressed size is over max(min_entry_bytes, max_ratio * the archive
// file's size) is refused (RESOURCE_EXHAUSTED) before anything is allocated.
// Deflate cannot exceed 1032:1 (258 bytes from two bits), so the default
// ratio never refuses an honest deflated entry; it stops a small file from
// declaring gigabytes. As entries may not overlap, an archive's entries
// together inflate to at most 1032 times its size.
struct ZipLimits {
  uint64_t max_ratio = 1032;
  uint64_t min_entry_bytes = uint64_t{64} << 20;  // 64 MiB
};

class ZipArchive {
 public:
  // Opens |path|. NOT_FOUND when missing, DATA_LOSS when it is not a zip or is
  // truncated or inconsistent; the message says which.
  static Result<std::unique_ptr<ZipArchive>> open(const std::string& path, const ZipLimits& limits = {});
  ~ZipArchive();
  ZipArchive(const ZipArchive&) = delete;
  ZipArchive& operator=(const ZipArchive&) = delete;

  const std::string& path() const { return path_; }
  uint64_t file_size() const { return file_size_; }
  // The largest uncompressed size read() and extract_to_fd() accept.
  uint64_t entry_size_limit() const { return entry_limit_; }
  const std::vector<ZipEntry>& entries() const { return entries_; }
  // Borrowed; null when absent.
  const ZipEntry* find(const std::string& name) const;

  // The whole entry in memory, CRC-checked.
  Result<std::string> read(const ZipEntry& entry);
  // Streams the entry into |fd| (CRC-checked).
  Status extract_to_fd(const ZipEntry& entry, int fd);
  // Byte offset of a stored entry's data within the archive file, after its
  // local header was checked against the central directory (name, method,
  // CRC and sizes, or the data descriptor's): the |size| bytes from there are
  // the entry's and no other's. They are not CRC-checked (mapping them is the
  // point). INVALID_ARGUMENT for a compressed entry: read() it instead.
  Result<uint64_t> data_offset(const ZipEntry& entry);

 private:
  ZipArchive() = default;
  static Result<std::unique_ptr<ZipArchive>> open_impl(const std::string& path, const ZipLimits& limits);
  Status index_central_directory();
  // This archive's own copy of |entry|, checked readable within the limits.
  Result<const ZipEntry*> readable(const ZipEntry& entry) const;
  Result<uint64_t> check_local_header(const ZipEntry& e) const;
  template <class Sink>
  Status stream(const ZipEntry& entry, Sink&& sink);

  std::string path_;
  int fd_ = -1;              // the archive
  uint64_t file_size_ = 0;
  uint64_t cd_offset_ = 0;   // where the central directory starts
  ZipLimits limits_;
  uint64_t entry_limit_ = 0;
  std::vector<ZipEntry> entries_;
  std::vector<uint64_t> data_end_;  // per entry: the next local header or the central directory
  std::unordered_map<std::string_view, size_t> by_name_;  // views into entries_
};

}  // namespace aotirt
