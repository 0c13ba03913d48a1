// Fuzz target "zip_package": the zip reader and the .pt2 package reader.
//
// The input is the bytes of a .pt2 file (a zip archive). It is written to an
// in-memory file, opened with ZipArchive::open, and every entry is read,
// streamed and (when stored) located; then open_pt2_package and
// check_package_host run on the same file, and inspect_package's symbol
// check. Seeds: real zoo packages with their model library replaced by the
// small fake one (tests/fuzz/make_seeds.py).
//
// Oracles besides the sanitizers: an entry that reads successfully has its
// declared size, and a stored entry's bytes at its data offset (what the
// loader maps for the weights) are the bytes read through the zip reader.
#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "fuzz_util.h"
#include "aotirt/model.h"
#include "package/pt2_package.h"
#include "package/zip_archive.h"

namespace {

// Entries larger than this are not read by the harness itself (the package
// reader still reads what it needs, at any size).
constexpr uint64_t kMaxEntryRead = 8u << 20;
constexpr size_t kMaxEntries = 64;

[[noreturn]] void fail(const char* what, const std::string& entry) {
  std::fprintf(stderr, "zip_package fuzzer: %s (entry '%s')\n", what, entry.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace aotirt;
  static fuzz::MemFile file("aotirt-fuzz-pt2");
  static const int devnull = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  file.set(data, size);

  {
    auto zip = ZipArchive::open(file.path());
    if (zip.ok()) {
      ZipArchive& z = **zip;
      size_t n = 0;
      for (const ZipEntry& e : z.entries()) {
        if (++n > kMaxEntries) break;
        if (z.find(e.name) == nullptr) fail("find() misses a listed entry", e.name);
        if (e.size > kMaxEntryRead || e.compressed_size > kMaxEntryRead) continue;
        Result<std::string> bytes = z.read(e);
        if (bytes.ok() && bytes->size() != e.size) fail("read() returned a size other than the entry's", e.name);
        (void)z.extract_to_fd(e, devnull);
        Result<uint64_t> offset = z.data_offset(e);
        // (Entries are located by name: only the first of a duplicated name.)
        if (bytes.ok() && offset.ok() && e.stored && z.find(e.name) == &e) {
          // The loader maps [offset, offset + size) of the file for a stored
          // weights blob: it must be exactly what the reader read.
          if (*offset > size || bytes->size() > size - *offset)
            fail("a stored entry's data offset points past the end of the file", e.name);
          if (std::memcmp(data + *offset, bytes->data(), bytes->size()) != 0)
            fail("a stored entry's bytes at its data offset differ from the bytes read", e.name);
        }
      }
    }
  }

  Result<Pt2Package> pkg = open_pt2_package(file.path());
  if (pkg.ok()) {
    (void)check_package_host(*pkg);
    // The public API's view: the same reader plus the imported-shim check.
    Result<PackageInfo> info = inspect_package(file.path());
    if (!info.ok()) fail("inspect_package refuses a package open_pt2_package accepts", "");
  }
  return 0;
}
