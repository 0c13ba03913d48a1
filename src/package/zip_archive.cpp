#include "package/zip_archive.h"

#include <unzip.h>

#include <cstdio>
#include <cstring>
#include <vector>

#include "base/file_util.h"
#include "base/status.h"

namespace aotirt {
namespace {

enum class ZipMagic { kNone, kLocalHeader, kEmptyArchive };

// How the file begins: a local header, or (for an archive without entries)
// straight away the end-of-central-directory record.
ZipMagic zip_magic(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return ZipMagic::kNone;
  unsigned char magic[4] = {0, 0, 0, 0};
  size_t n = std::fread(magic, 1, 4, f);
  std::fclose(f);
  if (n != 4 || magic[0] != 'P' || magic[1] != 'K') return ZipMagic::kNone;
  if (magic[2] == 3 && magic[3] == 4) return ZipMagic::kLocalHeader;
  if (magic[2] == 5 && magic[3] == 6) return ZipMagic::kEmptyArchive;
  return ZipMagic::kNone;
}

}  // namespace

Result<std::unique_ptr<ZipArchive>> ZipArchive::open(const std::string& path) {
  AOTIRT_RETURN_IF_ERROR(check_readable_file(path));
  unzFile uf = unzOpen64(path.c_str());
  if (!uf) {
    ZipMagic magic = zip_magic(path);
    if (magic == ZipMagic::kEmptyArchive) {
      // minizip refuses archives without entries; report them as empty so the
      // caller can say what is missing.
      std::unique_ptr<ZipArchive> empty(new ZipArchive());
      empty->path_ = path;
      return empty;
    }
    if (magic == ZipMagic::kLocalHeader)
      return AOTIRT_STATUS(kDataLoss,
                           "'{}' starts like a zip archive but is truncated or corrupt (its central "
                           "directory cannot be read)",
                           path);
    return AOTIRT_STATUS(kDataLoss, "'{}' is not a zip archive, so it is not a .pt2 package", path);
  }
  std::unique_ptr<ZipArchive> zip(new ZipArchive());
  zip->path_ = path;
  zip->handle_ = uf;
  int rc = unzGoToFirstFile(uf);
  size_t index = 0;
  while (rc == UNZ_OK) {
    unz_file_info64 info;
    char name[4096];
    if (unzGetCurrentFileInfo64(uf, &info, name, sizeof(name), nullptr, 0, nullptr, 0) != UNZ_OK)
      return AOTIRT_STATUS(kDataLoss, "'{}': central directory entry {} is truncated or corrupt", path, index);
    ZipEntry e;
    e.name = name;
    e.compressed_size = info.compressed_size;
    e.size = info.uncompressed_size;
    e.stored = info.compression_method == 0;
    e.index = index++;
    zip->entries_.push_back(std::move(e));
    rc = unzGoToNextFile(uf);
  }
  if (rc != UNZ_END_OF_LIST_OF_FILE)
    return AOTIRT_STATUS(kDataLoss, "'{}': the zip central directory is truncated or corrupt (minizip error {})",
                         path, rc);
  return zip;
}

ZipArchive::~ZipArchive() {
  if (handle_) unzClose(static_cast<unzFile>(handle_));
}

const ZipEntry* ZipArchive::find(const std::string& name) const {
  for (const auto& e : entries_)
    if (e.name == name) return &e;
  return nullptr;
}

Status ZipArchive::locate(const ZipEntry& entry) {
  unzFile uf = static_cast<unzFile>(handle_);
  if (!uf || unzLocateFile(uf, entry.name.c_str(), 1) != UNZ_OK)
    return AOTIRT_STATUS(kDataLoss, "'{}': entry '{}' cannot be located", path_, entry.name);
  return Status();
}

template <class Sink>
Status ZipArchive::stream(const ZipEntry& entry, Sink&& sink) {
  AOTIRT_RETURN_IF_ERROR(locate(entry));
  unzFile uf = static_cast<unzFile>(handle_);
  if (unzOpenCurrentFile(uf) != UNZ_OK)
    return AOTIRT_STATUS(kDataLoss, "'{}': cannot open entry '{}'", path_, entry.name);
  std::vector<char> buf(1 << 20);
  uint64_t total = 0;
  Status status;
  while (true) {
    int n = unzReadCurrentFile(uf, buf.data(), static_cast<unsigned>(buf.size()));
    if (n < 0) {
      status = AOTIRT_STATUS(kDataLoss, "'{}': entry '{}' is truncated or corrupt (read error {})", path_,
                             entry.name, n);
      break;
    }
    if (n == 0) break;
    total += static_cast<uint64_t>(n);
    status = sink(buf.data(), static_cast<size_t>(n));
    if (!status.ok()) break;
  }
  // unzCloseCurrentFile verifies the CRC once the whole entry was read.
  int close_rc = unzCloseCurrentFile(uf);
  if (!status.ok()) return status;
  if (close_rc == UNZ_CRCERROR)
    return AOTIRT_STATUS(kDataLoss, "'{}': entry '{}' fails its CRC check (corrupt package)", path_, entry.name);
  if (total != entry.size)
    return AOTIRT_STATUS(kDataLoss, "'{}': entry '{}' has {} bytes, expected {} (truncated package)", path_,
                         entry.name, total, entry.size);
  return Status();
}

Result<std::string> ZipArchive::read(const ZipEntry& entry) {
  std::string out;
  out.reserve(entry.size);
  AOTIRT_RETURN_IF_ERROR(stream(entry, [&](const char* p, size_t n) {
    out.append(p, n);
    return Status();
  }));
  return out;
}

Status ZipArchive::extract_to_fd(const ZipEntry& entry, int fd) {
  return stream(entry, [&](const char* p, size_t n) { return write_all(fd, p, n, entry.name); });
}

Result<uint64_t> ZipArchive::data_offset(const ZipEntry& entry) {
  AOTIRT_ENSURE(entry.stored, kInvalidArgument, "entry '{}' is compressed; its bytes cannot be mapped",
                entry.name);
  AOTIRT_RETURN_IF_ERROR(locate(entry));
  unzFile uf = static_cast<unzFile>(handle_);
  if (unzOpenCurrentFile(uf) != UNZ_OK)
    return AOTIRT_STATUS(kDataLoss, "'{}': cannot open entry '{}'", path_, entry.name);
  uint64_t pos = unzGetCurrentFileZStreamPos64(uf);
  unzCloseCurrentFile(uf);
  return pos;
}

}  // namespace aotirt
