#include "package/zip_archive.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <new>
#include <stdexcept>
#include <memory>
#include <vector>

#include "base/file_util.h"
#include "base/status.h"

namespace aotirt {
namespace {

// Zip record layouts (APPNOTE.TXT 4.3): signatures and fixed sizes.
constexpr uint32_t kLocalHeaderSig = 0x04034b50;    // PK\3\4
constexpr uint32_t kCentralHeaderSig = 0x02014b50;  // PK\1\2
constexpr uint32_t kEocdSig = 0x06054b50;           // PK\5\6
constexpr uint32_t kZip64EocdSig = 0x06064b50;      // PK\6\6
constexpr uint32_t kZip64LocatorSig = 0x07064b50;   // PK\6\7
constexpr uint32_t kDataDescriptorSig = 0x08074b50;  // PK\7\8
constexpr size_t kLocalHeaderSize = 30;
constexpr size_t kCentralHeaderSize = 46;
constexpr size_t kEocdSize = 22;
constexpr size_t kZip64EocdSize = 56;
constexpr size_t kZip64LocatorSize = 20;
constexpr uint16_t kZip64ExtraId = 0x0001;
constexpr uint32_t kMax32 = 0xFFFFFFFFu;
constexpr uint16_t kFlagEncrypted = 1u << 0;
constexpr uint16_t kFlagDataDescriptor = 1u << 3;
constexpr uint16_t kMethodStored = 0;
constexpr uint16_t kMethodDeflate = 8;
// Bytes read from the archive, or handed to the sink, at a time.
constexpr size_t kChunk = size_t{1} << 20;
// Bytes kept of a very long entry name in a message.
constexpr size_t kShownNameBytes = 200;

uint16_t get16(const unsigned char* p) { return static_cast<uint16_t>(p[0] | (p[1] << 8)); }
uint32_t get32(const unsigned char* p) {
  return static_cast<uint32_t>(p[0]) | (static_cast<uint32_t>(p[1]) << 8) | (static_cast<uint32_t>(p[2]) << 16) |
         (static_cast<uint32_t>(p[3]) << 24);
}
uint64_t get64(const unsigned char* p) { return get32(p) | (static_cast<uint64_t>(get32(p + 4)) << 32); }

// An entry name for a message: printable, and cut short when very long.
std::string shown(const std::string& name) {
  std::string s;
  for (char c : name.substr(0, kShownNameBytes)) s += (static_cast<unsigned char>(c) < 0x20) ? '?' : c;
  if (name.size() > kShownNameBytes) s += "... (" + std::to_string(name.size()) + " bytes)";
  return s;
}

// Reads exactly |n| bytes at |offset|; false on a short read or an error.
bool pread_all(int fd, void* buf, size_t n, uint64_t offset) {
  char* p = static_cast<char*>(buf);
  while (n > 0) {
    ssize_t r = ::pread(fd, p, n, static_cast<off_t>(offset));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    p += r;
    n -= static_cast<size_t>(r);
    offset += static_cast<uint64_t>(r);
  }
  return true;
}

// Whether the file begins as a zip archive does: with a local header, or
// (an archive without entries) with the end of central directory record.
bool starts_like_zip(int fd) {
  unsigned char magic[4] = {0, 0, 0, 0};
  if (!pread_all(fd, magic, 4, 0)) return false;
  return get32(magic) == kLocalHeaderSig || get32(magic) == kEocdSig;
}

// Saturating a * b.
uint64_t mul_sat(uint64_t a, uint64_t b) {
  if (a != 0 && b > UINT64_MAX / a) return UINT64_MAX;
  return a * b;
}

// The zip64 extended-information extra field (0x0001) of a header: the 64-bit
// values of those 32-bit fields that hold 0xFFFFFFFF, in the order
// uncompressed size, compressed size, local header offset. False when a value
// is needed but missing.
bool read_zip64_extra(const unsigned char* extra, size_t len, uint64_t* usize, uint64_t* csize,
                      uint64_t* offset) {
  bool need_u = usize && *usize == kMax32, need_c = csize && *csize == kMax32;
  bool need_o = offset && *offset == kMax32;
  if (!need_u && !need_c && !need_o) return true;
  for (size_t pos = 0; pos + 4 <= len;) {
    uint16_t id = get16(extra + pos), n = get16(extra + pos + 2);
    if (pos + 4 + n > len) break;
    if (id == kZip64ExtraId) {
      const unsigned char* v = extra + pos + 4;
      size_t left = n;
      for (auto [need, value] : {std::pair{need_u, usize}, std::pair{need_c, csize}, std::pair{need_o, offset}}) {
        if (!need) continue;
        if (left < 8) return false;
        *value = get64(v);
        v += 8;
        left -= 8;
      }
      return true;
    }
    pos += 4 + n;
  }
  return false;
}

// One record of the central directory.
struct RawEntry {
  std::string name;
  uint16_t flags = 0, method = 0;
  uint32_t crc = 0;
  uint64_t csize = 0, usize = 0, offset = 0;
};

struct CentralDirectory {
  uint64_t offset = 0, size = 0, count = 0;
  std::vector<RawEntry> entries;
};

// Finds the end record (and its zip64 counterpart) and walks the central
// directory it points at. Returns false with |why| set when this candidate
// end record does not lead to a readable central directory.
bool walk_central_directory(int fd, uint64_t file_size, uint64_t eocd_pos, CentralDirectory* cd, std::string* why) {
  unsigned char eocd[kEocdSize];
  if (!pread_all(fd, eocd, kEocdSize, eocd_pos) || get32(eocd) != kEocdSig) {
    *why = "no end of central directory record";
    return false;
  }
  if (get16(eocd + 4) != 0 || get16(eocd + 6) != 0 || get16(eocd + 8) != get16(eocd + 10)) {
    *why = "its end record names several disks (a split archive, or a record found inside the data)";
    return false;
  }
  cd->count = get16(eocd + 10);
  cd->size = get32(eocd + 12);
  cd->offset = get32(eocd + 16);
  uint64_t cd_limit = eocd_pos;  // the central directory ends before this
  if (eocd_pos >= kZip64LocatorSize) {
    unsigned char loc[kZip64LocatorSize];
    if (pread_all(fd, loc, kZip64LocatorSize, eocd_pos - kZip64LocatorSize) && get32(loc) == kZip64LocatorSig) {
      uint64_t z64_pos = get64(loc + 8);
      unsigned char z64[kZip64EocdSize];
      if (z64_pos > eocd_pos - kZip64LocatorSize || eocd_pos - kZip64LocatorSize - z64_pos < kZip64EocdSize ||
          !pread_all(fd, z64, kZip64EocdSize, z64_pos) || get32(z64) != kZip64EocdSig) {
        *why = "its zip64 end of central directory record is missing";
        return false;
      }
      cd->count = get64(z64 + 32);
      cd->size = get64(z64 + 40);
      cd->offset = get64(z64 + 48);
      cd_limit = z64_pos;
    }
  }
  if (cd->offset > cd_limit || cd_limit - cd->offset < cd->size || cd_limit > file_size) {
    *why = "the central directory lies outside the file";
    return false;
  }
  // Every record takes at least 46 bytes, so a count the size cannot hold is
  // refused before anything is reserved for it.
  if (cd->count > cd->size / kCentralHeaderSize) {
    *why = "the central directory is too small for the entries it counts";
    return false;
  }
  std::string buf(cd->size, '\0');
  if (!pread_all(fd, buf.data(), buf.size(), cd->offset)) {
    *why = "the central directory cannot be read";
    return false;
  }
  const unsigned char* p = reinterpret_cast<const unsigned char*>(buf.data());
  cd->entries.reserve(cd->count);
  size_t pos = 0;
  for (uint64_t i = 0; i < cd->count; ++i) {
    if (buf.size() - pos < kCentralHeaderSize || get32(p + pos) != kCentralHeaderSig) {
      *why = "central directory record " + std::to_string(i) + " is truncated or corrupt";
      return false;
    }
    const unsigned char* h = p + pos;
    size_t name_len = get16(h + 28), extra_len = get16(h + 30), comment_len = get16(h + 32);
    if (buf.size() - pos - kCentralHeaderSize < name_len + extra_len + comment_len) {
      *why = "central directory record " + std::to_string(i) + " is truncated";
      return false;
    }
    RawEntry e;
    e.flags = get16(h + 8);
    e.method = get16(h + 10);
    e.crc = get32(h + 16);
    e.csize = get32(h + 20);
    e.usize = get32(h + 24);
    e.offset = get32(h + 42);
    e.name.assign(reinterpret_cast<const char*>(h + kCentralHeaderSize), name_len);
    if (e.name.find('\0') != std::string::npos) {
      *why = "central directory record " + std::to_string(i) + " has a NUL byte in its name";
      return false;
    }
    if (!read_zip64_extra(h + kCentralHeaderSize + name_len, extra_len, &e.usize, &e.csize, &e.offset)) {
      *why = "central directory record " + std::to_string(i) + " lacks its zip64 sizes or offset";
      return false;
    }
    cd->entries.push_back(std::move(e));
    pos += kCentralHeaderSize + name_len + extra_len + comment_len;
  }
  return true;
}

// The end record is the last "PK\5\6" whose central directory reads; it sits
// within the last 22 + 65535 (comment) bytes. A file with none that does not
// start like a zip archive is not one.
Status find_central_directory(const std::string& path, int fd, uint64_t file_size, CentralDirectory* cd) {
  uint64_t tail_len = std::min<uint64_t>(file_size, kEocdSize + 0xFFFF);
  std::string tail(tail_len, '\0');
  if (!pread_all(fd, tail.data(), tail.size(), file_size - tail_len))
    return AOTIRT_STATUS(kIoError, "'{}': cannot read the end of the archive", path);
  std::string why = "no end of central directory record";
  bool any_end_record = false;
  for (size_t i = tail.size() >= kEocdSize ? tail.size() - kEocdSize + 1 : 0; i-- > 0;) {
    if (get32(reinterpret_cast<const unsigned char*>(tail.data()) + i) != kEocdSig) continue;
    any_end_record = true;
    CentralDirectory candidate;
    if (walk_central_directory(fd, file_size, file_size - tail_len + i, &candidate, &why)) {
      *cd = std::move(candidate);
      return Status();
    }
  }
  if (!any_end_record && !starts_like_zip(fd))
    return AOTIRT_STATUS(kDataLoss, "'{}' is not a zip archive, so it is not a .pt2 package", path);
  return AOTIRT_STATUS(kDataLoss,
                       "'{}' starts like a zip archive but is truncated or corrupt (its central directory cannot "
                       "be read: {})",
                       path, why);
}

}  // namespace

Result<std::unique_ptr<ZipArchive>> ZipArchive::open(const std::string& path, const ZipLimits& limits) {
  try {
    return open_impl(path, limits);
  } catch (const std::bad_alloc&) {
    return AOTIRT_STATUS(kResourceExhausted, "'{}': out of memory while reading the zip central directory", path);
  } catch (const std::length_error&) {
    return AOTIRT_STATUS(kResourceExhausted, "'{}': the zip central directory is too large to hold", path);
  }
}

Result<std::unique_ptr<ZipArchive>> ZipArchive::open_impl(const std::string& path, const ZipLimits& limits) {
  AOTIRT_RETURN_IF_ERROR(check_readable_file(path));
  std::unique_ptr<ZipArchive> zip(new ZipArchive());
  zip->path_ = path;
  zip->fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (zip->fd_ < 0) return AOTIRT_STATUS(kIoError, "cannot open '{}': {}", path, std::strerror(errno));
  struct stat st;
  if (fstat(zip->fd_, &st) != 0)
    return AOTIRT_STATUS(kIoError, "cannot stat '{}': {}", path, std::strerror(errno));
  zip->file_size_ = static_cast<uint64_t>(st.st_size);
  zip->limits_ = limits;
  zip->entry_limit_ = std::max(limits.min_entry_bytes, mul_sat(limits.max_ratio, zip->file_size_));
  if (zip->file_size_ == 0)
    return AOTIRT_STATUS(kDataLoss, "'{}' is not a zip archive (it is empty), so it is not a .pt2 package", path);
  AOTIRT_RETURN_IF_ERROR(zip->index_central_directory());
  return zip;
}

Status ZipArchive::index_central_directory() {
  CentralDirectory cd;
  AOTIRT_RETURN_IF_ERROR(find_central_directory(path_, fd_, file_size_, &cd));
  cd_offset_ = cd.offset;

  entries_.reserve(cd.entries.size());
  for (size_t i = 0; i < cd.entries.size(); ++i) {
    RawEntry& raw = cd.entries[i];
    ZipEntry e;
    e.name = std::move(raw.name);
    e.compressed_size = raw.csize;
    e.size = raw.usize;
    e.method = raw.method;
    e.stored = raw.method == kMethodStored;
    e.crc32 = raw.crc;
    e.encrypted = (raw.flags & kFlagEncrypted) != 0;
    e.local_header_offset = raw.offset;
    e.index = i;
    // A stored entry's bytes are its data, mapped as |size| bytes.
    if (e.stored && !e.encrypted && e.compressed_size != e.size)
      return AOTIRT_STATUS(kDataLoss, "'{}': stored entry '{}' has {} bytes in the archive but declares {} (corrupt)",
                           path_, shown(e.name), e.compressed_size, e.size);
    // The local header (at least 30 bytes and the name) and the data must lie
    // before the central directory.
    uint64_t min_extent = kLocalHeaderSize + e.name.size();
    if (e.local_header_offset > cd_offset_ || cd_offset_ - e.local_header_offset < min_extent ||
        cd_offset_ - e.local_header_offset - min_extent < e.compressed_size)
      return AOTIRT_STATUS(kDataLoss,
                           "'{}': entry '{}' ({} bytes at offset {}) runs past the start of the central directory "
                           "at {} (truncated or corrupt package)",
                           path_, shown(e.name), e.compressed_size, e.local_header_offset, cd_offset_);
    entries_.push_back(std::move(e));
  }

  by_name_.reserve(entries_.size());
  for (const ZipEntry& e : entries_) {
    auto [it, inserted] = by_name_.emplace(std::string_view(e.name), e.index);
    if (!inserted)
      return AOTIRT_STATUS(kDataLoss,
                           "'{}': the entry name '{}' appears twice in the zip central directory (entries {} and "
                           "{}); a package with duplicate names is ambiguous",
                           path_, shown(e.name), it->second, e.index);
  }

  // Entries may not share bytes: overlapping entries are how small zip bombs
  // multiply their output, and no writer makes them. Each entry ends before
  // the next local header; that bound is checked exactly once its own local
  // header was read (check_local_header).
  std::vector<size_t> order(entries_.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return entries_[a].local_header_offset < entries_[b].local_header_offset;
  });
  data_end_.assign(entries_.size(), cd_offset_);
  for (size_t k = 0; k + 1 < order.size(); ++k) {
    const ZipEntry& a = entries_[order[k]];
    const ZipEntry& b = entries_[order[k + 1]];
    uint64_t gap = b.local_header_offset - a.local_header_offset;
    if (gap < kLocalHeaderSize + a.name.size() || gap - kLocalHeaderSize - a.name.size() < a.compressed_size)
      return AOTIRT_STATUS(kDataLoss,
                           "'{}': entries '{}' and '{}' overlap in the archive (a corrupt package, or a zip bomb)",
                           path_, shown(a.name), shown(b.name));
    data_end_[a.index] = b.local_header_offset;
  }
  return Status();
}

ZipArchive::~ZipArchive() {
  if (fd_ >= 0) ::close(fd_);
}

const ZipEntry* ZipArchive::find(const std::string& name) const {
  auto it = by_name_.find(std::string_view(name));
  return it == by_name_.end() ? nullptr : &entries_[it->second];
}

Result<const ZipEntry*> ZipArchive::readable(const ZipEntry& entry) const {
  if (entry.index >= entries_.size() || entries_[entry.index].name != entry.name)
    return AOTIRT_STATUS(kDataLoss, "'{}': entry '{}' cannot be located (it is not in this archive)", path_,
                         shown(entry.name));
  const ZipEntry& e = entries_[entry.index];
  if (e.encrypted)
    return AOTIRT_STATUS(kUnimplemented, "'{}': entry '{}' is encrypted; aotirt reads unencrypted packages only",
                         path_, shown(e.name));
  if (!e.stored && e.method != kMethodDeflate)
    return AOTIRT_STATUS(kUnimplemented, "'{}': entry '{}' uses zip compression method {}, which is not supported",
                         path_, shown(e.name), e.method);
  if (e.size > entry_limit_)
    return AOTIRT_STATUS(kResourceExhausted,
                         "'{}': entry '{}' declares {} bytes uncompressed, over the limit of {} bytes for this "
                         "{}-byte archive (the larger of {}x its size and {} bytes); refused as a likely zip bomb",
                         path_, shown(e.name), e.size, entry_limit_, file_size_, limits_.max_ratio,
                         limits_.min_entry_bytes);
  return &e;
}

// The local header repeats the central directory's name, method, CRC and
// sizes; readers that trust the central directory's offset alone read a
// shifted or cross-linked entry without noticing. Each is compared here before
// the entry's bytes are read or mapped. Returns the offset of the data.
Result<uint64_t> ZipArchive::check_local_header(const ZipEntry& e) const {
  const uint64_t at = e.local_header_offset;
  unsigned char h[kLocalHeaderSize];
  if (!pread_all(fd_, h, kLocalHeaderSize, at) || get32(h) != kLocalHeaderSig)
    return AOTIRT_STATUS(kDataLoss,
                         "'{}': entry '{}' has no local header at offset {} where the central directory puts it "
                         "(corrupt or shifted package)",
                         path_, shown(e.name), at);
  const uint16_t flags = get16(h + 6), method = get16(h + 8);
  const size_t name_len = get16(h + 26), extra_len = get16(h + 28);
  std::string tail(name_len + extra_len, '\0');
  if (!pread_all(fd_, tail.data(), tail.size(), at + kLocalHeaderSize))
    return AOTIRT_STATUS(kDataLoss, "'{}': the local header of entry '{}' is truncated", path_, shown(e.name));
  auto mismatch = [&](const char* what) {
    return AOTIRT_STATUS(kDataLoss,
                         "'{}': the local header at offset {} does not match the central directory's entry '{}' "
                         "(its {} differs): a corrupt, shifted or cross-linked package",
                         path_, at, shown(e.name), what);
  };
  if (name_len != e.name.size() || tail.compare(0, name_len, e.name) != 0) return mismatch("name");
  if (method != e.method) return mismatch("compression method");
  // With a data descriptor (flag bit 3, as PyTorch writes every entry) the
  // CRC and sizes follow the data, and the local header holds zeros.
  const bool descriptor = (flags & kFlagDataDescriptor) != 0;
  if (!descriptor) {
    uint64_t csize = get32(h + 18), usize = get32(h + 22);
    const auto* extra = reinterpret_cast<const unsigned char*>(tail.data()) + name_len;
    // A local zip64 field holds both sizes, whichever of them overflowed.
    if (usize == kMax32 || csize == kMax32) {
      bool both = false;
      for (size_t pos = 0; pos + 4 <= extra_len;) {
        uint16_t id = get16(extra + pos), n = get16(extra + pos + 2);
        if (pos + 4 + n > extra_len) break;
        if (id == kZip64ExtraId && n >= 16) {
          usize = get64(extra + pos + 4);
          csize = get64(extra + pos + 12);
          both = true;
          break;
        }
        pos += 4 + n;
      }
      if (!both && !read_zip64_extra(extra, extra_len, &usize, &csize, nullptr)) return mismatch("zip64 sizes");
    }
    if (get32(h + 14) != e.crc32) return mismatch("CRC");
    if (csize != e.compressed_size || usize != e.size) return mismatch("size");
  }
  const uint64_t data = at + kLocalHeaderSize + name_len + extra_len;
  const uint64_t end = data_end_[e.index];
  if (data > end || end - data < e.compressed_size)
    return AOTIRT_STATUS(kDataLoss,
                         "'{}': the data of entry '{}' ({} bytes at offset {}) runs into the next entry or the "
                         "central directory at {} (corrupt package)",
                         path_, shown(e.name), e.compressed_size, data, end);
  if (descriptor) {
    // [signature] CRC, compressed and uncompressed size, of 4 bytes each or
    // (zip64) 8 for the sizes.
    unsigned char dd[24];
    const uint64_t at_dd = data + e.compressed_size;
    const size_t n = static_cast<size_t>(std::min<uint64_t>(sizeof(dd), end - at_dd));
    bool match = false;
    if (pread_all(fd_, dd, n, at_dd)) {
      size_t p = n >= 4 && get32(dd) == kDataDescriptorSig ? 4 : 0;
      if (n >= p + 12 && get32(dd + p) == e.crc32)
        match = (get32(dd + p + 4) == e.compressed_size && get32(dd + p + 8) == e.size) ||
                (n >= p + 20 && get64(dd + p + 4) == e.compressed_size && get64(dd + p + 12) == e.size);
    }
    if (!match) return mismatch("data descriptor (CRC and sizes after the data)");
  }
  return data;
}

// Why zlib and no zip library: everything a zip library would do here but
// inflate is done above anyway (the central directory walk gives each entry's
// local header offset, which libzip does not expose and a stored entry's
// mapping needs; every local header is held against the directory), and
// libzip, the library used before, depends on OpenSSL's libcrypto for the
// encryption a package never uses: a fifth of a CUDA deployment's bytes and
// over the benchmark's install-footprint target (docs/benchmarks.md).
// minizip reads no more of a lying entry than it declares, so it cannot tell
// a deflate stream that runs past its size from a CRC error. zlib inflates
// and checks the CRC-32.
template <class Sink>
Status ZipArchive::stream(const ZipEntry& entry, Sink&& sink) {
  AOTIRT_ASSIGN_OR_RETURN(const ZipEntry* e, readable(entry));
  AOTIRT_ASSIGN_OR_RETURN(uint64_t data, check_local_header(*e));
  auto corrupt = [&](const std::string& why) {
    return AOTIRT_STATUS(kDataLoss, "'{}': entry '{}' is truncated or corrupt ({})", path_, shown(e->name), why);
  };
  auto read_in = [&](std::vector<unsigned char>& in, uint64_t done) {
    size_t n = static_cast<size_t>(std::min<uint64_t>(kChunk, e->compressed_size - done));
    in.resize(n);
    return pread_all(fd_, in.data(), n, data + done);
  };
  std::vector<unsigned char> in;
  uLong crc = crc32(0L, Z_NULL, 0);
  uint64_t total = 0;
  if (e->stored) {
    while (total < e->size) {
      if (!read_in(in, total)) return corrupt("a read of its bytes failed");
      crc = crc32_z(crc, in.data(), in.size());
      AOTIRT_RETURN_IF_ERROR(sink(reinterpret_cast<const char*>(in.data()), in.size()));
      total += in.size();
    }
  } else {
    z_stream zs{};
    if (inflateInit2(&zs, -MAX_WBITS) != Z_OK)  // a raw deflate stream, no zlib header
      return AOTIRT_STATUS(kResourceExhausted, "'{}': out of memory opening entry '{}'", path_, shown(e->name));
    // Ended on every way out, a thrown std::bad_alloc included.
    std::unique_ptr<z_stream, int (*)(z_stream*)> ender(&zs, &inflateEnd);
    std::vector<unsigned char> out(static_cast<size_t>(std::min<uint64_t>(kChunk, e->size + 1)));
    uint64_t consumed = 0;
    int rc = Z_OK;
    while (rc != Z_STREAM_END) {
      if (zs.avail_in == 0) {
        if (consumed == e->compressed_size) return corrupt("its deflate stream ends early");
        if (!read_in(in, consumed)) return corrupt("a read of its bytes failed");
        consumed += in.size();
        zs.next_in = in.data();
        zs.avail_in = static_cast<uInt>(in.size());
      }
      // Room for at most one byte past the declared size: an entry that
      // inflates to more than it declares stops here, not at its stream's end.
      zs.next_out = out.data();
      zs.avail_out = static_cast<uInt>(std::min<uint64_t>(out.size(), e->size - total + 1));
      rc = inflate(&zs, Z_NO_FLUSH);
      if (rc == Z_MEM_ERROR)
        return AOTIRT_STATUS(kResourceExhausted, "'{}': out of memory reading entry '{}'", path_, shown(e->name));
      if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR)
        return corrupt(zs.msg ? zs.msg : "its deflate stream is invalid");
      const size_t n = static_cast<size_t>(zs.next_out - out.data());
      total += n;
      if (total > e->size)
        return AOTIRT_STATUS(kDataLoss,
                             "'{}': entry '{}' inflates to more than the {} bytes it declares (a corrupt package, "
                             "or a zip bomb); reading stopped",
                             path_, shown(e->name), e->size);
      crc = crc32_z(crc, out.data(), n);
      if (n > 0) AOTIRT_RETURN_IF_ERROR(sink(reinterpret_cast<const char*>(out.data()), n));
    }
  }
  if (total != e->size)
    return AOTIRT_STATUS(kDataLoss, "'{}': entry '{}' has {} bytes, expected {} (truncated package)", path_,
                         shown(e->name), total, e->size);
  if (static_cast<uint32_t>(crc) != e->crc32)
    return AOTIRT_STATUS(kDataLoss, "'{}': entry '{}' fails its CRC check (corrupt package)", path_, shown(e->name));
  return Status();
}

Result<std::string> ZipArchive::read(const ZipEntry& entry) {
  try {
    AOTIRT_ASSIGN_OR_RETURN(const ZipEntry* e, readable(entry));
    std::string out;
    out.reserve(static_cast<size_t>(e->size));  // within entry_limit_
    AOTIRT_RETURN_IF_ERROR(stream(*e, [&](const char* p, size_t n) {
      out.append(p, n);
      return Status();
    }));
    return out;
  } catch (const std::bad_alloc&) {
    return AOTIRT_STATUS(kResourceExhausted, "'{}': not enough memory to read entry '{}' ({} bytes)", path_,
                         shown(entry.name), entry.size);
  } catch (const std::length_error&) {
    return AOTIRT_STATUS(kResourceExhausted, "'{}': entry '{}' ({} bytes) is too large to read into memory", path_,
                         shown(entry.name), entry.size);
  }
}

Status ZipArchive::extract_to_fd(const ZipEntry& entry, int fd) {
  try {
    return stream(entry, [&](const char* p, size_t n) { return write_all(fd, p, n, entry.name); });
  } catch (const std::bad_alloc&) {
    return AOTIRT_STATUS(kResourceExhausted, "'{}': out of memory extracting entry '{}'", path_, shown(entry.name));
  }
}

Result<uint64_t> ZipArchive::data_offset(const ZipEntry& entry) {
  try {
    AOTIRT_ENSURE(entry.stored, kInvalidArgument, "entry '{}' is compressed; its bytes cannot be mapped",
                  shown(entry.name));
    AOTIRT_ASSIGN_OR_RETURN(const ZipEntry* e, readable(entry));
    return check_local_header(*e);
  } catch (const std::bad_alloc&) {
    return AOTIRT_STATUS(kResourceExhausted, "'{}': out of memory locating entry '{}'", path_, shown(entry.name));
  }
}

}  // namespace aotirt
