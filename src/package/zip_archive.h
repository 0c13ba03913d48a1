// Read-only access to a zip archive (a .pt2 package) through minizip.
//
// Entries can be read into memory, streamed into a file descriptor, or -- for
// entries stored without compression, as PyTorch writes them -- located by
// byte offset so their bytes can be mapped straight from the archive.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "aotirt/status.h"

namespace aotirt {

struct ZipEntry {
  std::string name;
  uint64_t compressed_size = 0;
  uint64_t size = 0;  // uncompressed
  bool stored = false;  // no compression: bytes sit verbatim in the archive
  size_t index = 0;   // position in the central directory
};

class ZipArchive {
 public:
  // Opens |path|. NOT_FOUND when missing, DATA_LOSS when it is not a zip or is
  // truncated; the message says which.
  static Result<std::unique_ptr<ZipArchive>> open(const std::string& path);
  ~ZipArchive();

  const std::string& path() const { return path_; }
  const std::vector<ZipEntry>& entries() const { return entries_; }
  // Borrowed; null when absent.
  const ZipEntry* find(const std::string& name) const;

  // The whole entry in memory, CRC-checked.
  Result<std::string> read(const ZipEntry& entry);
  // Streams the entry into |fd| (CRC-checked).
  Status extract_to_fd(const ZipEntry& entry, int fd);
  // Byte offset of a stored entry's data within the archive file.
  Result<uint64_t> data_offset(const ZipEntry& entry);

 private:
  ZipArchive() = default;
  template <class Sink>
  Status stream(const ZipEntry& entry, Sink&& sink);
  Status locate(const ZipEntry& entry);

  std::string path_;
  void* handle_ = nullptr;  // unzFile
  std::vector<ZipEntry> entries_;
};

}  // namespace aotirt
