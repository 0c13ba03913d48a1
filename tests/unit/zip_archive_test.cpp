// ZipArchive over archives written here with minizip's writer: stored and
// deflated entries, CRC checks, data offsets of stored entries, and every way
// an archive can be missing, foreign, truncated or corrupt.
#include <gtest/gtest.h>
#include <zip.h>

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "private_tmpdir_test_util.h"
#include "base/file_util.h"
#include "package/zip_archive.h"

namespace aotirt {
namespace {

namespace fs = std::filesystem;

struct ZipItem {
  std::string name;
  std::string data;
  bool stored = true;
  std::string local_extra;  // raw local extra field bytes
};

// Writes |items| to |path| with minizip; returns false on any writer error.
bool write_zip(const std::string& path, const std::vector<ZipItem>& items) {
  zipFile zf = zipOpen64(path.c_str(), 0);
  if (!zf) return false;
  bool ok = true;
  for (const auto& it : items) {
    zip_fileinfo info;
    std::memset(&info, 0, sizeof(info));
    int rc = zipOpenNewFileInZip64(zf, it.name.c_str(), &info,
                                   it.local_extra.empty() ? nullptr : it.local_extra.data(),
                                   static_cast<uInt>(it.local_extra.size()), nullptr, 0, nullptr,
                                   it.stored ? 0 : Z_DEFLATED, it.stored ? 0 : Z_DEFAULT_COMPRESSION, 0);
    ok = ok && rc == ZIP_OK;
    if (rc != ZIP_OK) break;
    if (!it.data.empty())
      ok = ok && zipWriteInFileInZip(zf, it.data.data(), static_cast<unsigned>(it.data.size())) == ZIP_OK;
    ok = ok && zipCloseFileInZip(zf) == ZIP_OK;
  }
  return zipClose(zf, nullptr) == ZIP_OK && ok;
}

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

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
  // length and zero high bytes, leaves every entry intact; minizip reads such
  // files, so they are not listed here.)
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

}  // namespace
}  // namespace aotirt
