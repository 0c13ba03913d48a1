// Temporary directories, memfd files, partial file mappings and the
// readable-file check. Runs under a private TMPDIR that must end up empty.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "private_tmpdir_test_util.h"
#include "base/file_util.h"

namespace aotirt {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> list_dir(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  return names;
}

class FileUtilTest : public PrivateTmpdirTest {
 protected:
  FileUtilTest() : PrivateTmpdirTest("aotirt-fileutil-test", false) {}
  std::string write_file(const std::string& name, const std::string& data) {
    std::string path = root_ + "/" + name;
    std::ofstream(path, std::ios::binary) << data;
    return path;
  }

};

TEST_F(FileUtilTest, TempDirRemovesItsWholeTree) {
  std::string path;
  {
    Result<TempDir> t = TempDir::create("unit-");
    ASSERT_TRUE(t.ok()) << t.status().to_string();
    path = t->path();
    EXPECT_EQ(path.rfind(tmp_ + "/unit-", 0), 0u) << path;
    ASSERT_TRUE(fs::is_directory(path));
    fs::create_directories(path + "/a/b/c");
    std::ofstream(path + "/a/b/c/file.bin") << "data";
    std::ofstream(path + "/top.txt") << "x";
    EXPECT_EQ(list_dir(tmp_).size(), 1u);
  }
  EXPECT_FALSE(fs::exists(path));
  EXPECT_TRUE(list_dir(tmp_).empty());
}

TEST_F(FileUtilTest, TempDirMoveTransfersOwnership) {
  Result<TempDir> a = TempDir::create("a-");
  Result<TempDir> b = TempDir::create("b-");
  ASSERT_TRUE(a.ok() && b.ok());
  std::string pa = a->path(), pb = b->path();
  TempDir moved(std::move(*a));
  EXPECT_TRUE(a->empty());
  EXPECT_EQ(moved.path(), pa);
  moved = std::move(*b);  // the old directory goes away now
  EXPECT_FALSE(fs::exists(pa));
  EXPECT_TRUE(fs::exists(pb));
  moved.remove();
  EXPECT_FALSE(fs::exists(pb));
  EXPECT_TRUE(moved.empty());
  moved.remove();  // twice is harmless
}

TEST_F(FileUtilTest, TempDirUnderAMissingTmpdirFails) {
  setenv("TMPDIR", (root_ + "/does-not-exist").c_str(), 1);
  Result<TempDir> t = TempDir::create("x-");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), StatusCode::kIoError);
  EXPECT_NE(t.status().message().find("does-not-exist"), std::string::npos);
}

TEST_F(FileUtilTest, MappedRegionAtUnalignedOffsets) {
  const long page = sysconf(_SC_PAGESIZE);
  std::string data(static_cast<size_t>(3 * page + 123), '\0');
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>((i * 31 + 7) & 0xFF);
  std::string path = write_file("blob.bin", data);
  const uint64_t offsets[] = {0, 1, 63, static_cast<uint64_t>(page - 1), static_cast<uint64_t>(page),
                              static_cast<uint64_t>(page + 1), static_cast<uint64_t>(2 * page + 5)};
  for (uint64_t off : offsets) {
    for (size_t len : {size_t{1}, size_t{100}, static_cast<size_t>(page) + 3, data.size() - off}) {
      if (off + len > data.size()) continue;
      Result<MappedRegion> m = MappedRegion::map(path, off, len);
      ASSERT_TRUE(m.ok()) << off << "+" << len << ": " << m.status().to_string();
      ASSERT_EQ(m->size(), len);
      ASSERT_EQ(0, std::memcmp(m->data(), data.data() + off, len)) << off << "+" << len;
    }
  }
  // The mapping outlives the path.
  Result<MappedRegion> m = MappedRegion::map(path, 10, 20);
  ASSERT_TRUE(m.ok());
  fs::remove(path);
  EXPECT_EQ(0, std::memcmp(m->data(), data.data() + 10, 20));
  MappedRegion moved = std::move(*m);
  EXPECT_EQ(m->data(), nullptr);
  EXPECT_EQ(m->size(), 0u);
  EXPECT_EQ(0, std::memcmp(moved.data(), data.data() + 10, 20));
  moved.unmap();
  EXPECT_EQ(moved.data(), nullptr);
}

bool page_mapped(const void* p) {
  const long page = sysconf(_SC_PAGESIZE);
  int fd = ::open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return true;
  uint64_t entry = 0;
  const off_t at = static_cast<off_t>(reinterpret_cast<uintptr_t>(p) / page * sizeof(uint64_t));
  const bool ok = pread(fd, &entry, sizeof(entry), at) == sizeof(entry);
  ::close(fd);
  return !ok || (entry >> 63);
}

// Pages behind a copy leave the process, and the bytes stay readable (the
// weight blob of a large model would otherwise count fully toward peak
// memory on top of the model's copy).
TEST_F(FileUtilTest, ReleasedPagesLeaveTheProcessButStayReadable) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE)), size = 64 * page;
  std::string data(size, '\0');
  for (size_t i = 0; i < size; i += page) data[i] = static_cast<char>(i / page % 251 + 1);
  std::string path = write_file("weights.bin", data);
  Result<MappedRegion> m = MappedRegion::map(path, 0, size);
  ASSERT_TRUE(m.ok());
  const volatile unsigned char* p = m->data();
  uint64_t sum = 0, want = 0;
  for (size_t i = 0; i < size; i += page) {
    sum += p[i];
    want += static_cast<unsigned char>(data[i]);
  }
  EXPECT_EQ(sum, want);
  ASSERT_TRUE(page_mapped(m->data())) << "the first page was never mapped in";
  release_pages_before(*m, size / 2 + 100);
  EXPECT_FALSE(page_mapped(m->data()));
  EXPECT_FALSE(page_mapped(m->data() + size / 2 - page));
  EXPECT_TRUE(page_mapped(m->data() + size / 2 + page)) << "a page past the offset was released";
  // Read again: the same bytes.
  sum = 0;
  for (size_t i = 0; i < size; i += page) sum += p[i];
  EXPECT_EQ(sum, want);
  // Past the end, and an empty region, are harmless.
  release_pages_before(*m, size * 4);
  EXPECT_FALSE(page_mapped(m->data() + size - page));
  release_pages_before(MappedRegion(), 1000);
}

TEST_F(FileUtilTest, MappedRegionErrors) {
  std::string path = write_file("small.bin", std::string(100, 'x'));
  Result<MappedRegion> empty = MappedRegion::map(path, 50, 0);
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->size(), 0u);
  Result<MappedRegion> past = MappedRegion::map(path, 90, 20);
  ASSERT_FALSE(past.ok());
  EXPECT_EQ(past.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(past.status().message().find("shorter"), std::string::npos);
  Result<MappedRegion> missing = MappedRegion::map(root_ + "/nope.bin", 0, 1);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kIoError);
  EXPECT_NE(missing.status().message().find("nope.bin"), std::string::npos);
  // An offset so large that offset + length wraps around.
  Result<MappedRegion> wrap = MappedRegion::map(path, UINT64_MAX - 2, 10);
  ASSERT_FALSE(wrap.ok());
  EXPECT_EQ(wrap.status().code(), StatusCode::kDataLoss);
  Result<MappedRegion> beyond = MappedRegion::map(path, 200, 0);
  ASSERT_FALSE(beyond.ok()) << "an offset past the end is an error even for 0 bytes";
}

TEST_F(FileUtilTest, CheckReadableFile) {
  std::string file = write_file("model.pt2", "PK");
  EXPECT_TRUE(check_readable_file(file).ok());
  Status missing = check_readable_file(root_ + "/missing.pt2");
  EXPECT_EQ(missing.code(), StatusCode::kNotFound);
  EXPECT_NE(missing.message().find("missing.pt2"), std::string::npos);
  EXPECT_NE(missing.message().find("does not exist"), std::string::npos);
  Status under_file = check_readable_file(file + "/inner");
  EXPECT_EQ(under_file.code(), StatusCode::kNotFound);
  Status dir = check_readable_file(root_);
  ASSERT_FALSE(dir.ok());
  EXPECT_NE(dir.message().find("is a directory"), std::string::npos) << dir.message();
  Status empty = check_readable_file("");
  EXPECT_FALSE(empty.ok());
}

TEST_F(FileUtilTest, MemfdAndWriteAll) {
  Result<UniqueFd> fd = create_memfd("aotirt-unit-memfd");
  ASSERT_TRUE(fd.ok()) << fd.status().to_string();
  ASSERT_GE(fd->get(), 0);
  std::string payload(1 << 20, 'q');
  payload[12345] = 'Z';
  ASSERT_TRUE(write_all(fd->get(), payload.data(), payload.size(), "payload").ok());
  std::string back(payload.size(), '\0');
  ASSERT_EQ(pread(fd->get(), back.data(), back.size(), 0), static_cast<ssize_t>(back.size()));
  EXPECT_EQ(back, payload);
  EXPECT_TRUE(list_dir(tmp_).empty()) << "memfd must not touch the disk";
  UniqueFd moved = std::move(*fd);
  EXPECT_EQ(fd->get(), -1);
  int raw = moved.get();
  moved.reset();
  EXPECT_EQ(moved.get(), -1);
  EXPECT_EQ(fcntl(raw, F_GETFD), -1) << "the descriptor should be closed";
  Status bad = write_all(-1, "x", 1, "thing");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.code(), StatusCode::kIoError);
  EXPECT_NE(bad.message().find("thing"), std::string::npos);
}

}  // namespace
}  // namespace aotirt
