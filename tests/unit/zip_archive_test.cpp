// ZipArchive over archives written here, with libzip's writer and with a
// hand-written one for what no writer makes (tests/unit/zip_test_util.h):
// stored and deflated entries, CRC checks, data offsets of stored entries,
// zip64, names of any length, and every way an archive can be missing,
// foreign, truncated, corrupt, ambiguous or a zip bomb.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "file_test_util.h"
#include "private_tmpdir_test_util.h"
#include "zip_test_util.h"
#include "base/file_util.h"
#include "package/zip_archive.h"

namespace aotirt {
namespace {

namespace fs = std::filesystem;

void write_file(const std::string& path, const std::string& data) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << data;
}

std::string random_bytes(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(rng() & 0xFF);
  return s;
}

// A local extra field of |n| payload bytes under a private header id.
std::string extra_field(uint16_t n) {
  std::string e;
  e += static_cast<char>(0xFE);
  e += static_cast<char>(0xCA);
  e += static_cast<char>(n & 0xFF);
  e += static_cast<char>(n >> 8);
  e += std::string(n, '\0');
  return e;
}

// Checks that |e| reads back as |data| and, when it is stored, that its data
// offset points at those bytes in |raw| (the whole archive), where a mapping
// would take them from; that offset goes to |offset| when given.
void expect_reads_back(ZipArchive& zip, const ZipEntry& e, const std::string& raw, const std::string& data,
                       uint64_t* offset = nullptr) {
  Result<std::string> r = zip.read(e);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(*r, data);
  if (!e.stored) return;
  Result<uint64_t> off = zip.data_offset(e);
  ASSERT_TRUE(off.ok()) << off.status().to_string();
  ASSERT_LE(*off + e.size, raw.size());
  EXPECT_EQ(raw.substr(*off, e.size), data);
  if (offset) *offset = *off;
}

class ZipArchiveTest : public PrivateTmpdirTest {
 protected:
  ZipArchiveTest() : PrivateTmpdirTest("aotirt-zip-test", true) {}
  std::string path(const std::string& name) const { return root_ + "/" + name; }

  std::vector<ZipItem> sample_items() const {
    std::string text;
    for (int i = 0; i < 5000; ++i) text += "line " + std::to_string(i % 97) + " of a compressible text\n";
    return {
        {"pkg/stored.bin", random_bytes(10000, 1), true, ""},
        {"pkg/deflated.txt", text, false, ""},
        {"pkg/empty", "", true, ""},
        {"pkg/padded.bin", random_bytes(777, 2), true, extra_field(57)},
        {"pkg/dir/", "", true, ""},
    };
  }

};

TEST_F(ZipArchiveTest, ReadsStoredAndDeflatedEntries) {
  const std::vector<ZipItem> items = sample_items();
  ASSERT_TRUE(write_zip(path("a.zip"), items));
  Result<std::unique_ptr<ZipArchive>> zip = ZipArchive::open(path("a.zip"));
  ASSERT_TRUE(zip.ok()) << zip.status().to_string();
  ZipArchive& z = **zip;
  EXPECT_EQ(z.path(), path("a.zip"));
  ASSERT_EQ(z.entries().size(), items.size());
  for (size_t i = 0; i < items.size(); ++i) {
    SCOPED_TRACE(items[i].name);
    const ZipEntry& e = z.entries()[i];
    EXPECT_EQ(e.name, items[i].name);
    EXPECT_EQ(e.index, i);
    EXPECT_EQ(e.size, items[i].data.size());
    EXPECT_EQ(e.stored, items[i].stored);
    if (e.stored) {
      EXPECT_EQ(e.compressed_size, e.size);
    }
    EXPECT_EQ(z.find(items[i].name), &e);
    Result<std::string> data = z.read(e);
    ASSERT_TRUE(data.ok()) << data.status().to_string();
    EXPECT_EQ(*data, items[i].data);
  }
  const ZipEntry* deflated = z.find("pkg/deflated.txt");
  ASSERT_NE(deflated, nullptr);
  EXPECT_LT(deflated->compressed_size, deflated->size / 4);
  EXPECT_EQ(z.find("pkg/missing"), nullptr);
  EXPECT_EQ(z.find("stored.bin"), nullptr);
}

TEST_F(ZipArchiveTest, DataOffsetOfStoredEntriesPointsAtTheBytes) {
  const std::vector<ZipItem> items = sample_items();
  ASSERT_TRUE(write_zip(path("a.zip"), items));
  const std::string raw = read_file(path("a.zip"));
  Result<std::unique_ptr<ZipArchive>> zip = ZipArchive::open(path("a.zip"));
  ASSERT_TRUE(zip.ok());
  for (const char* name : {"pkg/stored.bin", "pkg/padded.bin"}) {
    const ZipEntry* e = (*zip)->find(name);
    ASSERT_NE(e, nullptr);
    Result<uint64_t> off = (*zip)->data_offset(*e);
    ASSERT_TRUE(off.ok()) << off.status().to_string();
    ASSERT_LE(*off + e->size, raw.size());
    EXPECT_EQ(raw.substr(static_cast<size_t>(*off), e->size), (*zip)->read(*e).value()) << name;
    // And through a mapping, as weights are loaded.
    Result<MappedRegion> m = MappedRegion::map(path("a.zip"), *off, e->size);
    ASSERT_TRUE(m.ok());
    EXPECT_EQ(0, std::memcmp(m->data(), raw.data() + *off, e->size));
  }
  // The offset is still right after other entries were read.
  ASSERT_TRUE((*zip)->read(*(*zip)->find("pkg/deflated.txt")).ok());
  Result<uint64_t> again = (*zip)->data_offset(*(*zip)->find("pkg/stored.bin"));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(raw.substr(static_cast<size_t>(*again), 10000), items[0].data);
  Result<uint64_t> compressed = (*zip)->data_offset(*(*zip)->find("pkg/deflated.txt"));
  ASSERT_FALSE(compressed.ok());
  EXPECT_EQ(compressed.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(compressed.status().message().find("compressed"), std::string::npos);
}

TEST_F(ZipArchiveTest, ExtractToFd) {
  const std::vector<ZipItem> items = sample_items();
  ASSERT_TRUE(write_zip(path("a.zip"), items));
  Result<std::unique_ptr<ZipArchive>> zip = ZipArchive::open(path("a.zip"));
  ASSERT_TRUE(zip.ok());
  for (const char* name : {"pkg/stored.bin", "pkg/deflated.txt"}) {
    Result<UniqueFd> fd = create_memfd("zip-extract");
    ASSERT_TRUE(fd.ok());
    const ZipEntry* e = (*zip)->find(name);
    ASSERT_TRUE((*zip)->extract_to_fd(*e, fd->get()).ok());
    std::string back(e->size, '\0');
    ASSERT_EQ(pread(fd->get(), back.data(), back.size(), 0), static_cast<ssize_t>(back.size()));
    EXPECT_EQ(back, (*zip)->read(*e).value());
  }
  Status bad = (*zip)->extract_to_fd(*(*zip)->find("pkg/stored.bin"), -1);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("pkg/stored.bin"), std::string::npos);
}

TEST_F(ZipArchiveTest, EmptyArchive) {
  ASSERT_TRUE(write_zip(path("empty.zip"), {}));
  Result<std::unique_ptr<ZipArchive>> zip = ZipArchive::open(path("empty.zip"));
  ASSERT_TRUE(zip.ok()) << zip.status().to_string();
  EXPECT_TRUE((*zip)->entries().empty());
  EXPECT_EQ((*zip)->find("anything"), nullptr);
  // An entry from elsewhere cannot be read from it.
  ZipEntry stranger;
  stranger.name = "x";
  Result<std::string> r = (*zip)->read(stranger);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kDataLoss);
}

TEST_F(ZipArchiveTest, CorruptStoredEntryFailsItsCrc) {
  ASSERT_TRUE(write_zip(path("a.zip"), sample_items()));
  uint64_t off = 0;
  {
    Result<std::unique_ptr<ZipArchive>> zip = ZipArchive::open(path("a.zip"));
    ASSERT_TRUE(zip.ok());
    off = (*zip)->data_offset(*(*zip)->find("pkg/stored.bin")).value();
  }
  std::string raw = read_file(path("a.zip"));
  raw[static_cast<size_t>(off) + 5000] ^= 0x01;
  write_file(path("a.zip"), raw);
  Result<std::unique_ptr<ZipArchive>> zip = ZipArchive::open(path("a.zip"));
  ASSERT_TRUE(zip.ok());
  Result<std::string> data = (*zip)->read(*(*zip)->find("pkg/stored.bin"));
  ASSERT_FALSE(data.ok());
  EXPECT_EQ(data.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(data.status().message().find("CRC"), std::string::npos) << data.status().message();
  EXPECT_NE(data.status().message().find("pkg/stored.bin"), std::string::npos);
  Result<UniqueFd> fd = create_memfd("crc");
  ASSERT_TRUE(fd.ok());
  EXPECT_FALSE((*zip)->extract_to_fd(*(*zip)->find("pkg/stored.bin"), fd->get()).ok());
  // Other entries still read.
  EXPECT_TRUE((*zip)->read(*(*zip)->find("pkg/deflated.txt")).ok());
}

TEST_F(ZipArchiveTest, CorruptDeflatedEntryIsDataLoss) {
  ASSERT_TRUE(write_zip(path("a.zip"), sample_items()));
  std::string raw = read_file(path("a.zip"));
  // The deflated stream follows the stored entry; garble its middle.
  size_t start = raw.find("pkg/deflated.txt") + 16 + 200;
  for (size_t i = 0; i < 64; ++i) raw[start + i] = static_cast<char>(0xFF - i);
  write_file(path("a.zip"), raw);
  Result<std::unique_ptr<ZipArchive>> zip = ZipArchive::open(path("a.zip"));
  ASSERT_TRUE(zip.ok());
  Result<std::string> data = (*zip)->read(*(*zip)->find("pkg/deflated.txt"));
  ASSERT_FALSE(data.ok());
  EXPECT_EQ(data.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(data.status().message().find("pkg/deflated.txt"), std::string::npos) << data.status().message();
}

TEST_F(ZipArchiveTest, MissingFileIsNotFound) {
  Result<std::unique_ptr<ZipArchive>> zip = ZipArchive::open(path("nope.pt2"));
  ASSERT_FALSE(zip.ok());
  EXPECT_EQ(zip.status().code(), StatusCode::kNotFound);
  EXPECT_NE(zip.status().message().find("nope.pt2"), std::string::npos);
}

TEST_F(ZipArchiveTest, DirectoryIsRefused) {
  fs::create_directory(path("model.pt2"));
  Result<std::unique_ptr<ZipArchive>> zip = ZipArchive::open(path("model.pt2"));
  ASSERT_FALSE(zip.ok());
  EXPECT_NE(zip.status().message().find("directory"), std::string::npos) << zip.status().message();
}

TEST_F(ZipArchiveTest, NonZipFilesAreDataLoss) {
  write_file(path("text.pt2"), "this is not a zip archive at all, just some text\n");
  write_file(path("empty.pt2"), "");
  write_file(path("elf.pt2"), std::string("\x7f" "ELF\x02\x01\x01", 7) + std::string(200, '\0'));
  for (const char* name : {"text.pt2", "empty.pt2", "elf.pt2"}) {
    Result<std::unique_ptr<ZipArchive>> zip = ZipArchive::open(path(name));
    ASSERT_FALSE(zip.ok()) << name;
    EXPECT_EQ(zip.status().code(), StatusCode::kDataLoss) << name;
    EXPECT_NE(zip.status().message().find("not a zip archive"), std::string::npos) << zip.status().message();
    EXPECT_NE(zip.status().message().find(name), std::string::npos);
  }
}

TEST_F(ZipArchiveTest, TruncatedArchivesAreDataLoss) {
  ASSERT_TRUE(write_zip(path("a.zip"), sample_items()));
  const std::string raw = read_file(path("a.zip"));
  // (Losing only the last bytes of the end record, which hold the comment
  // length and zero high bytes, leaves every entry intact; such files may be
  // read, so they are not listed here.)
  for (size_t keep : {raw.size() / 2, raw.size() - 10, raw.size() - 22, size_t{100}, size_t{30}}) {
    write_file(path("cut.pt2"), raw.substr(0, keep));
    Result<std::unique_ptr<ZipArchive>> zip = ZipArchive::open(path("cut.pt2"));
    ASSERT_FALSE(zip.ok()) << "accepted an archive cut to " << keep << " of " << raw.size() << " bytes";
    EXPECT_EQ(zip.status().code(), StatusCode::kDataLoss);
    EXPECT_NE(zip.status().message().find("truncated"), std::string::npos) << zip.status().message();
  }
}

TEST_F(ZipArchiveTest, CorruptCentralDirectoryIsDataLoss) {
  ASSERT_TRUE(write_zip(path("a.zip"), sample_items()));
  std::string raw = read_file(path("a.zip"));
  // Break the signature of the first central directory header.
  size_t cd = raw.find(std::string("PK\x01\x02", 4));
  ASSERT_NE(cd, std::string::npos);
  raw[cd + 2] = 0x7F;
  write_file(path("bad.pt2"), raw);
  Result<std::unique_ptr<ZipArchive>> zip = ZipArchive::open(path("bad.pt2"));
  ASSERT_FALSE(zip.ok());
  EXPECT_EQ(zip.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(zip.status().message().find("bad.pt2"), std::string::npos) << zip.status().message();
}


// Size of |path| on disk (allocated blocks), to see that a file is sparse.
uint64_t allocated_bytes(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_blocks) * 512 : 0;
}

uint64_t fd_size(int fd) {
  struct stat st;
  return fstat(fd, &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
}

TEST_F(ZipArchiveTest, DuplicateNamesAreRefused) {
  ASSERT_TRUE(write_raw_zip(path("dup.pt2"), {{"pkg/a.bin", "first"}, {"pkg/b.bin", "other"}, {"pkg/a.bin", "second"}}));
  Result<std::unique_ptr<ZipArchive>> zip = ZipArchive::open(path("dup.pt2"));
  ASSERT_FALSE(zip.ok()) << "an archive naming pkg/a.bin twice was accepted";
  EXPECT_EQ(zip.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(zip.status().message().find("'pkg/a.bin' appears twice"), std::string::npos) << zip.status().message();
  EXPECT_NE(zip.status().message().find("dup.pt2"), std::string::npos);
}

TEST_F(ZipArchiveTest, NulByteInANameIsRefused) {
  ASSERT_TRUE(write_raw_zip(path("nul.pt2"), {{std::string("pkg/a\0b.bin", 11), "data"}}));
  Result<std::unique_ptr<ZipArchive>> zip = ZipArchive::open(path("nul.pt2"));
  ASSERT_FALSE(zip.ok()) << "a name with a NUL byte was accepted";
  EXPECT_EQ(zip.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(zip.status().message().find("NUL byte in its name"), std::string::npos) << zip.status().message();
}

TEST_F(ZipArchiveTest, SplitArchiveIsRefused) {
  ASSERT_TRUE(write_raw_zip(path("split.pt2"), {{"pkg/a.bin", "data"}}));
  std::string raw = read_file(path("split.pt2"));
  size_t eocd = raw.rfind(std::string("PK\x05\x06", 4));
  ASSERT_NE(eocd, std::string::npos);
  raw[eocd + 4] = 1;  // "this is disk 1"
  write_file(path("split.pt2"), raw);
  Result<std::unique_ptr<ZipArchive>> zip = ZipArchive::open(path("split.pt2"));
  ASSERT_FALSE(zip.ok());
  EXPECT_EQ(zip.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(zip.status().message().find("several disks"), std::string::npos) << zip.status().message();
}

TEST_F(ZipArchiveTest, DeflateStreamCutShortIsDataLoss) {
  // Headers that agree with each other, around a deflate stream missing its
  // last part: the stream runs out before it ends.
  const std::string text = "a deflated entry whose stream is cut short " + std::string(5000, 'x');
  const std::string full = ziptest::deflate_raw(text);
  ASSERT_GT(full.size(), 8u);
  std::string raw;
  const std::string name = "pkg/cut.txt";
  const std::string data = full.substr(0, full.size() / 2);
  const uint32_t crc = static_cast<uint32_t>(crc32(0L, reinterpret_cast<const Bytef*>(text.data()),
                                                   static_cast<uInt>(text.size())));
  using ziptest::put16;
  using ziptest::put32;
  put32(raw, 0x04034b50); put16(raw, 20); put16(raw, 0); put16(raw, 8); put32(raw, 0); put32(raw, crc);
  put32(raw, data.size()); put32(raw, text.size()); put16(raw, name.size()); put16(raw, 0);
  raw += name + data;
  const size_t cd = raw.size();
  put32(raw, 0x02014b50); put16(raw, 20); put16(raw, 20); put16(raw, 0); put16(raw, 8); put32(raw, 0);
  put32(raw, crc); put32(raw, data.size()); put32(raw, text.size()); put16(raw, name.size());
  put16(raw, 0); put16(raw, 0); put16(raw, 0); put16(raw, 0); put32(raw, 0); put32(raw, 0);
  raw += name;
  const size_t cd_size = raw.size() - cd;
  put32(raw, 0x06054b50); put16(raw, 0); put16(raw, 0); put16(raw, 1); put16(raw, 1);
  put32(raw, cd_size); put32(raw, cd); put16(raw, 0);
  write_file(path("cut.pt2"), raw);
  Result<std::unique_ptr<ZipArchive>> zip = ZipArchive::open(path("cut.pt2"));
  ASSERT_TRUE(zip.ok()) << zip.status().to_string();
  Result<std::string> r = (*zip)->read(*(*zip)->find(name));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(r.status().message().find("ends early"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find(name), std::string::npos) << r.status().message();
}

TEST_F(ZipArchiveTest, NamesOfAnyLength) {
  // 300 and 4096 bytes, and the longest a zip header can hold.
  std::vector<ZipItem> items;
  for (size_t len : {size_t{255}, size_t{256}, size_t{300}, size_t{4095}, size_t{4096}, size_t{65535}}) {
    std::string name = "pkg/" + std::string(len - 8, static_cast<char>('a' + len % 26)) + ".bin";
    ASSERT_EQ(name.size(), len);
    items.push_back({name, random_bytes(100 + len % 7, static_cast<unsigned>(len)), len % 2 == 0, ""});
  }
  ASSERT_TRUE(write_zip(path("long.zip"), items));
  Result<std::unique_ptr<ZipArchive>> zip = ZipArchive::open(path("long.zip"));
  ASSERT_TRUE(zip.ok()) << zip.status().to_string();
  ASSERT_EQ((*zip)->entries().size(), items.size());
  const std::string raw = read_file(path("long.zip"));
  for (const ZipItem& it : items) {
    SCOPED_TRACE(it.name.size());
    const ZipEntry* e = (*zip)->find(it.name);
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(e->name, it.name);
    expect_reads_back(**zip, *e, raw, it.data);
  }
  // A name one byte shorter or longer than a stored one is not it.
  EXPECT_EQ((*zip)->find(items[4].name.substr(1)), nullptr);
  EXPECT_EQ((*zip)->find(items[4].name + "x"), nullptr);
}

TEST_F(ZipArchiveTest, DeclaredHugeEntryIsRefusedWithoutAllocating) {
  // A few bytes that declare a petabyte (zip64), and 4 GiB (32 bits).
  RawZipEntry peta{"pkg/huge.so", "tiny", true};
  peta.declared_size = int64_t{1} << 50;
  RawZipEntry four{"pkg/four.json", "{}", true};
  four.declared_size = 0xFFFFFFF0;
  ASSERT_TRUE(write_raw_zip(path("huge.pt2"), {peta, four}));
  Result<std::unique_ptr<ZipArchive>> zip = ZipArchive::open(path("huge.pt2"));
  ASSERT_TRUE(zip.ok()) << zip.status().to_string();
  for (const char* name : {"pkg/huge.so", "pkg/four.json"}) {
    SCOPED_TRACE(name);
    const ZipEntry* e = (*zip)->find(name);
    ASSERT_NE(e, nullptr);
    Result<std::string> r = (*zip)->read(*e);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), StatusCode::kResourceExhausted) << r.status().to_string();
    EXPECT_NE(r.status().message().find("declares"), std::string::npos) << r.status().message();
    EXPECT_NE(r.status().message().find(name), std::string::npos);
    Result<UniqueFd> fd = create_memfd("huge");
    ASSERT_TRUE(fd.ok());
    Status s = (*zip)->extract_to_fd(*e, fd->get());
    EXPECT_EQ(s.code(), StatusCode::kResourceExhausted) << s.to_string();
    EXPECT_EQ(fd_size(fd->get()), 0u);
  }
}

TEST_F(ZipArchiveTest, ZipBombIsCapped) {
  // bzip2 packs 96 MiB of zeros into about a hundred bytes. aotirt reads
  // stored and deflated entries only, so such an entry is refused by its
  // method, naming it, before its size is looked at.
  {
    const std::string zeros(96u << 20, '\0');
    int error = 0;
    zip_t* za = zip_open(path("bz.pt2").c_str(), ZIP_CREATE | ZIP_TRUNCATE, &error);
    ASSERT_NE(za, nullptr);
    zip_source_t* src = zip_source_buffer(za, zeros.data(), zeros.size(), 0);
    zip_int64_t idx = zip_file_add(za, "pkg/bomb.so", src, 0);
    ASSERT_GE(idx, 0);
    ASSERT_EQ(zip_set_file_compression(za, idx, ZIP_CM_BZIP2, 9), 0);
    ASSERT_EQ(zip_close(za), 0);
  }
  Result<std::unique_ptr<ZipArchive>> bz = ZipArchive::open(path("bz.pt2"));
  ASSERT_TRUE(bz.ok()) << bz.status().to_string();
  EXPECT_LT((*bz)->file_size(), 4096u);
  EXPECT_EQ((*bz)->entry_size_limit(), ZipLimits().min_entry_bytes);
  Result<std::string> r = (*bz)->read(*(*bz)->find("pkg/bomb.so"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnimplemented) << r.status().to_string();
  EXPECT_NE(r.status().message().find("compression method 12"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("pkg/bomb.so"), std::string::npos) << r.status().message();

  // Deflate stays under 1032:1, so the default limit never refuses it; a
  // lower one refuses 64 MiB of deflated zeros (about 64 KiB) before inflating.
  ASSERT_TRUE(write_raw_zip(path("deflate.pt2"), {{"pkg/bomb.cubin", std::string(64u << 20, '\0'), true}}));
  ZipLimits strict;
  strict.max_ratio = 10;
  strict.min_entry_bytes = 1u << 20;
  Result<std::unique_ptr<ZipArchive>> zip = ZipArchive::open(path("deflate.pt2"), strict);
  ASSERT_TRUE(zip.ok()) << zip.status().to_string();
  EXPECT_EQ((*zip)->entry_size_limit(), 1u << 20);
  const ZipEntry* e = (*zip)->find("pkg/bomb.cubin");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->size, 64u << 20);
  Result<UniqueFd> fd = create_memfd("bomb");
  ASSERT_TRUE(fd.ok());
  Status s = (*zip)->extract_to_fd(*e, fd->get());
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted) << s.to_string();
  EXPECT_EQ(fd_size(fd->get()), 0u);
  // Under the default limits the same entry reads.
  Result<std::unique_ptr<ZipArchive>> lax = ZipArchive::open(path("deflate.pt2"));
  ASSERT_TRUE(lax.ok());
  Result<std::string> all = (*lax)->read(*(*lax)->find("pkg/bomb.cubin"));
  ASSERT_TRUE(all.ok()) << all.status().to_string();
  EXPECT_EQ(all->size(), 64u << 20);
}

TEST_F(ZipArchiveTest, InflatingPastTheDeclaredSizeStops) {
  // 64 MiB of deflated zeros that claim to be 1000 bytes.
  RawZipEntry liar{"pkg/k.cubin", std::string(64u << 20, '\0'), true};
  liar.declared_size = 1000;
  ASSERT_TRUE(write_raw_zip(path("liar.pt2"), {liar}));
  Result<std::unique_ptr<ZipArchive>> zip = ZipArchive::open(path("liar.pt2"));
  ASSERT_TRUE(zip.ok()) << zip.status().to_string();
  const ZipEntry* e = (*zip)->find("pkg/k.cubin");
  ASSERT_NE(e, nullptr);
  Result<UniqueFd> fd = create_memfd("liar");
  ASSERT_TRUE(fd.ok());
  Status s = (*zip)->extract_to_fd(*e, fd->get());
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kDataLoss);
  EXPECT_NE(s.message().find("more than the 1000 bytes"), std::string::npos) << s.message();
  // Nothing past the declared size reached the file.
  EXPECT_LE(fd_size(fd->get()), 1000u);
  Result<std::string> r = (*zip)->read(*e);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kDataLoss);
}

TEST_F(ZipArchiveTest, LocalHeaderMustMatchTheCentralDirectory) {
  const std::string blob = random_bytes(5000, 7);
  // The same name length, so only the bytes differ.
  RawZipEntry renamed{"pkg/w.blob", blob};
  renamed.local_name = "pkg/x.blob";
  RawZipEntry method{"pkg/m.blob", blob};
  method.local_method = 8;
  ASSERT_TRUE(write_raw_zip(path("lh.pt2"), {{"pkg/a.json", "{}"}, renamed, method}));
  Result<std::unique_ptr<ZipArchive>> zip = ZipArchive::open(path("lh.pt2"));
  ASSERT_TRUE(zip.ok()) << zip.status().to_string();
  for (auto [name, what] : {std::pair{"pkg/w.blob", "name"}, std::pair{"pkg/m.blob", "compression method"}}) {
    SCOPED_TRACE(name);
    const ZipEntry* e = (*zip)->find(name);
    ASSERT_NE(e, nullptr);
    Result<uint64_t> off = (*zip)->data_offset(*e);
    ASSERT_FALSE(off.ok()) << "mapped at " << *off;
    EXPECT_EQ(off.status().code(), StatusCode::kDataLoss);
    EXPECT_NE(off.status().message().find(std::string("its ") + what + " differs"), std::string::npos)
        << off.status().message();
    Result<std::string> r = (*zip)->read(*e);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), StatusCode::kDataLoss);
  }
  EXPECT_TRUE((*zip)->read(*(*zip)->find("pkg/a.json")).ok());
}

TEST_F(ZipArchiveTest, DataDescriptorsAreHeldAgainstTheCentralDirectory) {
  // PyTorch writes every entry with a data descriptor: zeros in the local
  // header, the CRC and sizes after the data.
  std::vector<RawZipEntry> entries = {{"pkg/w.blob", random_bytes(5000, 21)},
                                      {"pkg/m.json", std::string(3000, 'm'), true},
                                      {"pkg/z.bin", random_bytes(700, 22)}};
  for (RawZipEntry& e : entries) e.data_descriptor = true;
  entries[2].zip64 = true;
  ASSERT_TRUE(write_raw_zip(path("dd.pt2"), entries));
  std::string raw = read_file(path("dd.pt2"));
  uint64_t blob_off = 0;
  {
    Result<std::unique_ptr<ZipArchive>> zip = ZipArchive::open(path("dd.pt2"));
    ASSERT_TRUE(zip.ok()) << zip.status().to_string();
    for (const RawZipEntry& want : entries) {
      SCOPED_TRACE(want.name);
      const ZipEntry* e = (*zip)->find(want.name);
      ASSERT_NE(e, nullptr);
      ASSERT_NO_FATAL_FAILURE(
          expect_reads_back(**zip, *e, raw, want.data, want.name == "pkg/w.blob" ? &blob_off : nullptr));
    }
  }
  // The blob's descriptor says it is one byte longer than the central
  // directory does.
  ASSERT_EQ(raw.substr(blob_off + 5000, 4), std::string("PK\x07\x08", 4));
  raw[blob_off + 5000 + 8] += 1;
  write_file(path("bad_dd.pt2"), raw);
  Result<std::unique_ptr<ZipArchive>> zip = ZipArchive::open(path("bad_dd.pt2"));
  ASSERT_TRUE(zip.ok()) << zip.status().to_string();
  Result<uint64_t> off = (*zip)->data_offset(*(*zip)->find("pkg/w.blob"));
  ASSERT_FALSE(off.ok()) << "mapped at " << *off;
  EXPECT_EQ(off.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(off.status().message().find("data descriptor"), std::string::npos) << off.status().message();
  EXPECT_FALSE((*zip)->read(*(*zip)->find("pkg/w.blob")).ok());
  EXPECT_TRUE((*zip)->read(*(*zip)->find("pkg/z.bin")).ok());
}

TEST_F(ZipArchiveTest, ShiftedLocalHeaderIsRefused) {
  const std::string blob = random_bytes(3000, 9);
  const std::string lib = random_bytes(2000, 10);
  // 1. The central directory puts the blob 4 bytes past its local header
  //    (inside the header's padding): there is no header there.
  {
    RawZipEntry shifted{"pkg/w.blob", blob};
    shifted.local_extra = extra_field(40);
    shifted.central_offset_shift = 4;
    ASSERT_TRUE(write_raw_zip(path("shift.pt2"), {{"pkg/lib.so", lib}, shifted}));
    Result<std::unique_ptr<ZipArchive>> zip = ZipArchive::open(path("shift.pt2"));
    ASSERT_TRUE(zip.ok()) << zip.status().to_string();
    Result<uint64_t> off = (*zip)->data_offset(*(*zip)->find("pkg/w.blob"));
    ASSERT_FALSE(off.ok()) << "mapped at " << *off;
    EXPECT_EQ(off.status().code(), StatusCode::kDataLoss);
    EXPECT_NE(off.status().message().find("no local header"), std::string::npos) << off.status().message();
  }
  // 2. It points at a forged local header, with other bytes behind it, inside
  //    the entry before: the entries overlap.
  {
    std::string forged;
    ziptest::put32(forged, 0x04034b50);
    ziptest::put16(forged, 20);
    ziptest::put16(forged, 0x0800);
    ziptest::put16(forged, 0);
    ziptest::put32(forged, 0x00210000);
    ziptest::put32(forged, crc32(0L, reinterpret_cast<const Bytef*>(blob.data()), blob.size()));
    ziptest::put32(forged, blob.size());
    ziptest::put32(forged, blob.size());
    ziptest::put16(forged, 10);
    ziptest::put16(forged, 0);
    forged += "pkg/w.blob" + blob;
    const std::string carrier = std::string(16, 'j') + forged + std::string(16, 'j');
    // The carrier's data starts after its 30-byte header and 10-byte name;
    // the blob's real header follows the carrier's data.
    RawZipEntry shifted{"pkg/w.blob", blob};
    shifted.central_offset_shift = (40 + 16) - (40 + static_cast<int64_t>(carrier.size()));
    ASSERT_TRUE(write_raw_zip(path("forged.pt2"), {{"pkg/lib.so", carrier}, shifted}));
    Result<std::unique_ptr<ZipArchive>> zip = ZipArchive::open(path("forged.pt2"));
    ASSERT_FALSE(zip.ok()) << "an entry inside another was accepted";
    EXPECT_EQ(zip.status().code(), StatusCode::kDataLoss);
    EXPECT_NE(zip.status().message().find("overlap"), std::string::npos) << zip.status().message();
  }
  // 3. Bytes before the archive shift every entry: refused, not read at
  //    offsets that are all wrong by as much.
  {
    ASSERT_TRUE(write_zip(path("a.zip"), sample_items()));
    write_file(path("prefixed.pt2"), std::string(16, 'x') + read_file(path("a.zip")));
    Result<std::unique_ptr<ZipArchive>> zip = ZipArchive::open(path("prefixed.pt2"));
    ASSERT_FALSE(zip.ok());
    EXPECT_EQ(zip.status().code(), StatusCode::kDataLoss);
  }
}

TEST_F(ZipArchiveTest, StoredEntryMustHoldWhatItDeclares) {
  // A stored entry whose uncompressed size is larger than its bytes: mapping
  // it would read the next entry.
  RawZipEntry lying{"pkg/w.blob", random_bytes(100, 3)};
  lying.declared_size = 5000;
  ASSERT_TRUE(write_raw_zip(path("stored.pt2"), {lying, {"pkg/next.bin", random_bytes(6000, 4)}}));
  Result<std::unique_ptr<ZipArchive>> zip = ZipArchive::open(path("stored.pt2"));
  ASSERT_FALSE(zip.ok());
  EXPECT_EQ(zip.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(zip.status().message().find("pkg/w.blob"), std::string::npos) << zip.status().message();
}

TEST_F(ZipArchiveTest, TwentyThousandEntriesOpenAndReadInLinearTime) {
  // Opens an archive of n small entries, finds each by name and extracts
  // each, as the kernels are; returns the seconds taken (best of `repeats`).
  // Linearity is checked as a ratio between two sizes, so that a slow
  // machine or a sanitizer build (several times slower throughout) neither
  // fails the test nor hides a per-entry scan.
  auto time_archive = [&](int n, int repeats) -> double {
    std::vector<RawZipEntry> entries;
    entries.reserve(n);
    for (int i = 0; i < n; ++i)
      entries.push_back({"pkg/data/aotinductor/model/kernel_" + std::to_string(i) + ".cubin",
                         "cubin " + std::to_string(i), i % 2 == 1});
    const std::string file = path("many_" + std::to_string(n) + ".pt2");
    EXPECT_TRUE(write_raw_zip(file, entries));
    double best = 1e9;
    for (int r = 0; r < repeats; ++r) {
      const auto start = std::chrono::steady_clock::now();
      Result<std::unique_ptr<ZipArchive>> zip = ZipArchive::open(file);
      EXPECT_TRUE(zip.ok()) << zip.status().to_string();
      if (!zip.ok()) return best;
      EXPECT_EQ((*zip)->entries().size(), static_cast<size_t>(n));
      for (int i = n - 1; i >= 0; --i) {
        const ZipEntry* e = (*zip)->find(entries[i].name);
        EXPECT_TRUE(e != nullptr && e->index == static_cast<size_t>(i)) << entries[i].name;
        if (e == nullptr) return best;
      }
      UniqueFd devnull(::open("/dev/null", O_WRONLY | O_CLOEXEC));
      EXPECT_GE(devnull.get(), 0);
      for (const ZipEntry& e : (*zip)->entries()) {
        Status s = (*zip)->extract_to_fd(e, devnull.get());
        EXPECT_TRUE(s.ok()) << s.to_string();
        if (e.stored) EXPECT_TRUE((*zip)->data_offset(e).ok());
      }
      best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    return best;
  };
  const double small = time_archive(2500, 3);
  const double large = time_archive(20000, 2);
  ASSERT_FALSE(HasFailure());
  // 8x the entries: about 8x the time when linear, 64x with a scan per entry.
  EXPECT_LT(large, 24.0 * std::max(small, 1e-3)) << "2500 entries: " << small << " s, 20000: " << large << " s";
  EXPECT_LT(large, 60.0) << "opening, finding and extracting 20000 entries";
}

TEST_F(ZipArchiveTest, Zip64RecordsOnASmallArchive) {
  // zip64 extra fields on every entry and the zip64 end records, though
  // nothing overflows (some writers always add them).
  std::vector<RawZipEntry> entries = {{"pkg/a.so", random_bytes(3000, 5)},
                                      {"pkg/b.json", std::string(4000, '{'), true},
                                      {"pkg/c.blob", random_bytes(100, 6)}};
  for (RawZipEntry& e : entries) e.zip64 = true;
  ASSERT_TRUE(write_raw_zip(path("z64.pt2"), entries, true));
  const std::string raw = read_file(path("z64.pt2"));
  Result<std::unique_ptr<ZipArchive>> zip = ZipArchive::open(path("z64.pt2"));
  ASSERT_TRUE(zip.ok()) << zip.status().to_string();
  ASSERT_EQ((*zip)->entries().size(), entries.size());
  for (const RawZipEntry& want : entries) {
    SCOPED_TRACE(want.name);
    const ZipEntry* e = (*zip)->find(want.name);
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(e->size, want.data.size());
    EXPECT_EQ(e->stored, !want.deflate);
    expect_reads_back(**zip, *e, raw, want.data);
  }
}

TEST_F(ZipArchiveTest, EntriesPastFourGiB) {
  // PyTorch's own order: a weights blob of 4.5 GiB first (a hole in a sparse
  // file here), then the library, metadata and kernels at offsets past 4 GiB.
  const uint64_t kFiller = (uint64_t{9} << 30) / 2;
  RawZipEntry filler{"pkg/data/aotinductor/model/w.wrapper_weights.blob", ""};
  filler.zeros = kFiller;
  const std::string lib = random_bytes(70000, 11);
  std::string meta;
  for (int i = 0; i < 300; ++i) meta += "{\"AOTI_DEVICE_KEY\": \"cpu\"}\n";
  ASSERT_TRUE(write_raw_zip(path("big.pt2"), {filler,
                                              {"pkg/data/aotinductor/model/w.wrapper.so", lib},
                                              {"pkg/data/aotinductor/model/w.wrapper_metadata.json", meta, true}}));
  if (allocated_bytes(path("big.pt2")) > (uint64_t{64} << 20)) {
    fs::remove(path("big.pt2"));
    GTEST_SKIP() << "this filesystem does not keep the 4.5 GiB entry as a hole (no sparse files)";
  }
  Result<std::unique_ptr<ZipArchive>> zip = ZipArchive::open(path("big.pt2"));
  ASSERT_TRUE(zip.ok()) << zip.status().to_string();
  EXPECT_GT((*zip)->file_size(), kFiller);
  const ZipEntry* w = (*zip)->find(filler.name);
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->size, kFiller);
  EXPECT_EQ(w->compressed_size, kFiller);
  Result<uint64_t> w_off = (*zip)->data_offset(*w);
  ASSERT_TRUE(w_off.ok()) << w_off.status().to_string();
  EXPECT_EQ(*w_off, 30 + filler.name.size() + 20);

  const ZipEntry* so = (*zip)->find("pkg/data/aotinductor/model/w.wrapper.so");
  ASSERT_NE(so, nullptr);
  EXPECT_GT(so->local_header_offset, kFiller);
  Result<std::string> so_bytes = (*zip)->read(*so);
  ASSERT_TRUE(so_bytes.ok()) << so_bytes.status().to_string();
  EXPECT_EQ(*so_bytes, lib);
  Result<uint64_t> so_off = (*zip)->data_offset(*so);
  ASSERT_TRUE(so_off.ok()) << so_off.status().to_string();
  EXPECT_GT(*so_off, uint64_t{1} << 32);
  Result<MappedRegion> m = MappedRegion::map(path("big.pt2"), *so_off, so->size);
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  EXPECT_EQ(0, std::memcmp(m->data(), lib.data(), lib.size()));

  const ZipEntry* md = (*zip)->find("pkg/data/aotinductor/model/w.wrapper_metadata.json");
  ASSERT_NE(md, nullptr);
  EXPECT_FALSE(md->stored);
  Result<std::string> md_bytes = (*zip)->read(*md);
  ASSERT_TRUE(md_bytes.ok()) << md_bytes.status().to_string();
  EXPECT_EQ(*md_bytes, meta);
  fs::remove(path("big.pt2"));
}

}  // namespace
}  // namespace aotirt
