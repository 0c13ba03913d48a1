// Helpers shared by the fuzz targets (tests/fuzz/*_fuzzer.cpp) and the
// concurrency tests (tests/sanitize): an in-memory file with a path, a
// minimal writer of stored (uncompressed) zip archives, and the bytes of the
// fake model library (tests/unit/fake_model).
//
// The zip writer is written here, with no zip library, so the fuzzers and
// tests do not depend on which library src/package reads zips with.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

// Harness code is not what a fuzzer should learn from: no coverage feedback
// (and no time spent on it) for the helpers below.
#if defined(__clang__) && __clang_major__ >= 13
#define AOTIRT_FUZZ_HARNESS __attribute__((no_sanitize("coverage")))
#else
#define AOTIRT_FUZZ_HARNESS
#endif

namespace aotirt {
namespace fuzz {

// An anonymous in-memory file (memfd) reachable by path ("/proc/self/fd/N"),
// so code that opens files by name reads the fuzzer's bytes without touching
// the disk. set() replaces the whole content.
class MemFile {
 public:
  explicit MemFile(const char* name) {
    fd_ = memfd_create(name, MFD_CLOEXEC);
    if (fd_ < 0) {
      std::perror("memfd_create");
      std::abort();
    }
    path_ = "/proc/self/fd/" + std::to_string(fd_);
  }
  ~MemFile() { close(fd_); }
  MemFile(const MemFile&) = delete;
  MemFile& operator=(const MemFile&) = delete;

  void set(const void* data, size_t size) {
    if (ftruncate(fd_, 0) != 0) std::abort();
    const char* p = static_cast<const char*>(data);
    size_t done = 0;
    while (done < size) {
      ssize_t n = pwrite(fd_, p + done, size - done, static_cast<off_t>(done));
      if (n <= 0) std::abort();
      done += static_cast<size_t>(n);
    }
  }
  void set(const std::string& s) { set(s.data(), s.size()); }
  std::string get() const {
    std::string out;
    char buf[65536];
    off_t off = 0;
    for (ssize_t n; (n = pread(fd_, buf, sizeof(buf), off)) > 0; off += n) out.append(buf, static_cast<size_t>(n));
    return out;
  }
  const std::string& path() const { return path_; }

 private:
  int fd_ = -1;
  std::string path_;
};

AOTIRT_FUZZ_HARNESS inline uint32_t crc32(const std::string& data) {
  static const std::vector<uint32_t> table = [] {
    std::vector<uint32_t> t(256);
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  uint32_t c = 0xFFFFFFFFu;
  for (unsigned char b : data) c = table[(c ^ b) & 0xFF] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

struct ZipFileEntry {
  std::string name;
  std::string data;
  bool has_crc = false;  // |crc| is data's CRC-32 already (saves recomputing it)
  uint32_t crc = 0;
};

// A zip archive (PKZIP 2.0, no zip64) of |entries| stored without
// compression, as PyTorch writes .pt2 packages.
AOTIRT_FUZZ_HARNESS inline std::string stored_zip(const std::vector<ZipFileEntry>& entries) {
  auto u16 = [](std::string& s, uint32_t v) {
    s += static_cast<char>(v & 0xFF);
    s += static_cast<char>((v >> 8) & 0xFF);
  };
  auto u32 = [&](std::string& s, uint32_t v) {
    u16(s, v & 0xFFFF);
    u16(s, v >> 16);
  };
  std::string out, central;
  for (const ZipFileEntry& e : entries) {
    const uint32_t offset = static_cast<uint32_t>(out.size());
    const uint32_t crc = e.has_crc ? e.crc : crc32(e.data);
    const uint32_t size = static_cast<uint32_t>(e.data.size());
    const uint32_t name_len = static_cast<uint32_t>(e.name.size());
    u32(out, 0x04034b50);  // local file header
    u16(out, 20);          // version needed
    u16(out, 0);           // flags
    u16(out, 0);           // stored
    u16(out, 0);           // time
    u16(out, 0x21);        // date (1980-01-01)
    u32(out, crc);
    u32(out, size);
    u32(out, size);
    u16(out, name_len);
    u16(out, 0);  // extra
    out += e.name;
    out += e.data;

    u32(central, 0x02014b50);  // central directory header
    u16(central, 20);          // version made by
    u16(central, 20);          // version needed
    u16(central, 0);
    u16(central, 0);
    u16(central, 0);
    u16(central, 0x21);
    u32(central, crc);
    u32(central, size);
    u32(central, size);
    u16(central, name_len);
    u16(central, 0);  // extra
    u16(central, 0);  // comment
    u16(central, 0);  // disk
    u16(central, 0);  // internal attributes
    u32(central, 0);  // external attributes
    u32(central, offset);
    central += e.name;
  }
  const uint32_t cd_offset = static_cast<uint32_t>(out.size());
  out += central;
  u32(out, 0x06054b50);  // end of central directory
  u16(out, 0);
  u16(out, 0);
  u16(out, static_cast<uint32_t>(entries.size()));
  u16(out, static_cast<uint32_t>(entries.size()));
  u32(out, static_cast<uint32_t>(central.size()));
  u32(out, cd_offset);
  u16(out, 0);
  return out;
}

inline std::string read_whole_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

#ifdef AOTIRT_FAKE_MODEL_PATH
// The fake model library's bytes (read once); aborts when it is missing.
inline const std::string& fake_model_library() {
  static const std::string bytes = [] {
    std::string b = read_whole_file(AOTIRT_FAKE_MODEL_PATH);
    if (b.size() < 1000) {
      std::fprintf(stderr, "fake model library missing or empty: %s\n", AOTIRT_FAKE_MODEL_PATH);
      std::abort();
    }
    return b;
  }();
  return bytes;
}

// A zip entry |name| holding the fake model library.
inline ZipFileEntry fake_model_entry(const std::string& name) {
  static const uint32_t crc = crc32(fake_model_library());
  ZipFileEntry e{name, fake_model_library(), true, crc};
  return e;
}
#endif

}  // namespace fuzz
}  // namespace aotirt
