// Writes zip archives for tests, so package tests can assemble .pt2 files of
// any shape, valid or broken.
//
// write_zip goes through libzip's writer: archives made by an implementation
// other than the reader's own checks. write_raw_zip is a small hand-written
// writer for what no real writer makes: zip64 records on small archives,
// gigabyte entries left as holes in a sparse file, and deliberate damage
// (a local header that disagrees with the central directory, a false size,
// a shifted offset, a name used twice).
#pragma once

#include <zip.h>
#include <zlib.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace aotirt {

struct ZipItem {
  std::string name;
  std::string data;
  bool stored = true;       // false: deflated
  std::string local_extra;  // raw extra fields (id, length, payload) for the local header
};

// Writes |items| to |path| with libzip; false on any writer error. An empty
// list makes an archive of only the end record (libzip writes no file then).
inline bool write_zip(const std::string& path, const std::vector<ZipItem>& items) {
  if (items.empty()) {
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (!f) return false;
    const unsigned char eocd[22] = {'P', 'K', 5, 6};
    bool ok = std::fwrite(eocd, 1, sizeof(eocd), f) == sizeof(eocd);
    return std::fclose(f) == 0 && ok;
  }
  int error = 0;
  zip_t* za = zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &error);
  if (!za) return false;
  bool ok = true;
  for (const auto& it : items) {
    zip_source_t* src = zip_source_buffer(za, it.data.data(), it.data.size(), 0);
    zip_int64_t idx = src ? zip_file_add(za, it.name.c_str(), src, ZIP_FL_ENC_UTF_8) : -1;
    if (idx < 0) {
      if (src) zip_source_free(src);
      ok = false;
      break;
    }
    ok = ok && zip_set_file_compression(za, static_cast<zip_uint64_t>(idx),
                                        it.stored ? ZIP_CM_STORE : ZIP_CM_DEFLATE, 0) == 0;
    const std::string& x = it.local_extra;
    for (size_t pos = 0; ok && pos + 4 <= x.size();) {
      const auto* p = reinterpret_cast<const unsigned char*>(x.data()) + pos;
      uint16_t id = static_cast<uint16_t>(p[0] | (p[1] << 8)), n = static_cast<uint16_t>(p[2] | (p[3] << 8));
      ok = zip_file_extra_field_set(za, static_cast<zip_uint64_t>(idx), id, ZIP_EXTRA_FIELD_NEW, p + 4, n,
                                    ZIP_FL_LOCAL) == 0;
      pos += 4 + n;
    }
  }
  if (!ok) {
    zip_discard(za);
    return false;
  }
  return zip_close(za) == 0;
}

namespace ziptest {

inline void put16(std::string& s, uint64_t v) {
  for (int i = 0; i < 2; ++i) s += static_cast<char>((v >> (8 * i)) & 0xFF);
}
inline void put32(std::string& s, uint64_t v) {
  for (int i = 0; i < 4; ++i) s += static_cast<char>((v >> (8 * i)) & 0xFF);
}
inline void put64(std::string& s, uint64_t v) {
  for (int i = 0; i < 8; ++i) s += static_cast<char>((v >> (8 * i)) & 0xFF);
}

// Raw deflate (no zlib header), as zip entries hold it.
inline std::string deflate_raw(const std::string& data) {
  z_stream zs;
  std::memset(&zs, 0, sizeof(zs));
  if (deflateInit2(&zs, 9, Z_DEFLATED, -15, 9, Z_DEFAULT_STRATEGY) != Z_OK) return "";
  std::string out(deflateBound(&zs, data.size()) + 64, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  zs.avail_in = static_cast<uInt>(data.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  int rc = deflate(&zs, Z_FINISH);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return rc == Z_STREAM_END ? out : "";
}

// CRC-32 of |n| zero bytes without touching |n| bytes: doubling with
// crc32_combine.
inline uint32_t crc32_of_zeros(uint64_t n) {
  static const std::string chunk(1 << 16, '\0');
  const uint64_t c = chunk.size();
  uLong acc = crc32(0L, Z_NULL, 0);
  uLong pow = crc32(0L, reinterpret_cast<const Bytef*>(chunk.data()), static_cast<uInt>(c));
  uint64_t pow_len = c;
  for (uint64_t blocks = n / c; blocks; blocks >>= 1) {
    if (blocks & 1) acc = crc32_combine(acc, pow, static_cast<z_off_t>(pow_len));
    pow = crc32_combine(pow, pow, static_cast<z_off_t>(pow_len));
    pow_len *= 2;
  }
  uint64_t rest = n % c;
  uLong tail = crc32(0L, reinterpret_cast<const Bytef*>(chunk.data()), static_cast<uInt>(rest));
  return static_cast<uint32_t>(crc32_combine(acc, tail, static_cast<z_off_t>(rest)));
}

}  // namespace ziptest

struct RawZipEntry {
  std::string name;
  std::string data;  // uncompressed
  bool deflate = false;
  std::string local_extra;  // extra fields for the local header (besides zip64's)
  // A stored entry of this many zero bytes, left as a hole in the file
  // (|data| is ignored): a multi-gigabyte entry that costs no disk.
  uint64_t zeros = 0;
  bool zip64 = false;  // zip64 fields in both headers even when nothing overflows
  // CRC and sizes in a data descriptor after the data, zeros in the local
  // header (as PyTorch writes every entry).
  bool data_descriptor = false;
  // Damage:
  std::string local_name;                    // the local header's name, when set
  int local_method = -1;                     // the local header's method, when >= 0
  int64_t declared_size = -1;                // uncompressed size in both headers, when >= 0
  int64_t central_offset_shift = 0;          // added to the central directory's local header offset
};

// Writes |entries| as a zip archive, with zip64 records wherever a value
// overflows 32 bits or an entry asks for them. False on an I/O error.
inline bool write_raw_zip(const std::string& path, const std::vector<RawZipEntry>& entries,
                          bool zip64_end_record = false) {
  using namespace ziptest;
  constexpr uint64_t kMax32 = 0xFFFFFFFFu;
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return false;
  bool ok = true;
  uint64_t pos = 0;
  auto write = [&](const std::string& s) {
    ok = ok && std::fwrite(s.data(), 1, s.size(), f) == s.size();
    pos += s.size();
  };
  std::string central;
  for (const RawZipEntry& e : entries) {
    const bool sparse = e.zeros > 0;
    const std::string payload = sparse ? std::string() : (e.deflate ? deflate_raw(e.data) : e.data);
    const uint64_t csize = sparse ? e.zeros : payload.size();
    const uint64_t usize = e.declared_size >= 0 ? static_cast<uint64_t>(e.declared_size)
                                                : (sparse ? e.zeros : e.data.size());
    const uint32_t crc = sparse ? crc32_of_zeros(e.zeros)
                                : static_cast<uint32_t>(crc32(0L, reinterpret_cast<const Bytef*>(e.data.data()),
                                                              static_cast<uInt>(e.data.size())));
    const uint16_t method = e.deflate ? 8 : 0;
    const uint64_t offset = pos;
    const bool sizes64 = e.zip64 || usize >= kMax32 || csize >= kMax32;
    const bool offset64 = e.zip64 || offset >= kMax32;
    const std::string& lname = e.local_name.empty() ? e.name : e.local_name;

    std::string lextra;
    const bool dd = e.data_descriptor;
    if (sizes64) {
      put16(lextra, 1);
      put16(lextra, 16);
      put64(lextra, dd ? 0 : usize);
      put64(lextra, dd ? 0 : csize);
    }
    lextra += e.local_extra;
    std::string lh;
    put32(lh, 0x04034b50);
    put16(lh, sizes64 ? 45 : 20);
    put16(lh, dd ? 0x0808 : 0x0800);  // UTF-8 names
    put16(lh, e.local_method >= 0 ? static_cast<uint16_t>(e.local_method) : method);
    put32(lh, 0x00210000);  // 1980-01-01 00:00
    put32(lh, dd ? 0 : crc);
    put32(lh, sizes64 ? kMax32 : dd ? 0 : csize);
    put32(lh, sizes64 ? kMax32 : dd ? 0 : usize);
    put16(lh, lname.size());
    put16(lh, lextra.size());
    write(lh + lname + lextra);
    if (sparse) {
      ok = ok && fseeko(f, static_cast<off_t>(e.zeros), SEEK_CUR) == 0;
      pos += e.zeros;
    } else {
      write(payload);
    }
    if (dd) {
      std::string d;
      put32(d, 0x08074b50);
      put32(d, crc);
      if (sizes64) {
        put64(d, csize);
        put64(d, usize);
      } else {
        put32(d, csize);
        put32(d, usize);
      }
      write(d);
    }

    std::string cextra;
    if (sizes64 || offset64) {
      std::string v;
      if (sizes64) {
        put64(v, usize);
        put64(v, csize);
      }
      if (offset64) put64(v, offset + static_cast<uint64_t>(e.central_offset_shift));
      put16(cextra, 1);
      put16(cextra, v.size());
      cextra += v;
    }
    put32(central, 0x02014b50);
    put16(central, (3 << 8) | 45);
    put16(central, (sizes64 || offset64) ? 45 : 20);
    put16(central, dd ? 0x0808 : 0x0800);
    put16(central, method);
    put32(central, 0x00210000);
    put32(central, crc);
    put32(central, sizes64 ? kMax32 : csize);
    put32(central, sizes64 ? kMax32 : usize);
    put16(central, e.name.size());
    put16(central, cextra.size());
    put16(central, 0);  // comment
    put16(central, 0);  // disk
    put16(central, 0);  // internal attributes
    put32(central, 0);  // external attributes
    put32(central, offset64 ? kMax32 : offset + static_cast<uint64_t>(e.central_offset_shift));
    central += e.name + cextra;
  }
  const uint64_t cd_offset = pos, cd_size = central.size(), count = entries.size();
  write(central);
  const bool z64 = zip64_end_record || cd_offset >= kMax32 || count >= 0xFFFF ||
                   [&] {
                     for (const RawZipEntry& e : entries)
                       if (e.zip64 || e.zeros >= kMax32) return true;
                     return false;
                   }();
  std::string tail;
  if (z64) {
    const uint64_t z64_offset = pos;
    put32(tail, 0x06064b50);
    put64(tail, 44);
    put16(tail, 45);
    put16(tail, 45);
    put32(tail, 0);
    put32(tail, 0);
    put64(tail, count);
    put64(tail, count);
    put64(tail, cd_size);
    put64(tail, cd_offset);
    put32(tail, 0x07064b50);
    put32(tail, 0);
    put64(tail, z64_offset);
    put32(tail, 1);
  }
  put32(tail, 0x06054b50);
  put16(tail, 0);
  put16(tail, 0);
  put16(tail, z64 ? 0xFFFF : count);
  put16(tail, z64 ? 0xFFFF : count);
  put32(tail, z64 ? kMax32 : cd_size);
  put32(tail, z64 ? kMax32 : cd_offset);
  put16(tail, 0);
  write(tail);
  return std::fclose(f) == 0 && ok;
}

}  // namespace aotirt
