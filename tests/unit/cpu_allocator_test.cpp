// The caching host allocator: size classes, cache reuse, statistics, the
// memory limit and alignment. Each test uses its own allocator instance.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <set>
#include <thread>
#include <vector>

#include "backends/cpu/cpu_allocator.h"

namespace aotirt {
namespace {

TEST(CpuAllocatorTest, SizeClasses) {
  EXPECT_EQ(CpuAllocator::size_class(0), 256u);
  EXPECT_EQ(CpuAllocator::size_class(1), 256u);
  EXPECT_EQ(CpuAllocator::size_class(256), 256u);
  EXPECT_EQ(CpuAllocator::size_class(257), 320u);
  EXPECT_EQ(CpuAllocator::size_class(320), 320u);
  EXPECT_EQ(CpuAllocator::size_class(321), 384u);
  EXPECT_EQ(CpuAllocator::size_class(512), 512u);
  EXPECT_EQ(CpuAllocator::size_class(513), 640u);
  EXPECT_EQ(CpuAllocator::size_class(1000), 1024u);
  EXPECT_EQ(CpuAllocator::size_class(1025), 1280u);
  EXPECT_EQ(CpuAllocator::size_class(size_t{3} << 30), size_t{3} << 30);
}

TEST(CpuAllocatorTest, SizeClassesCoverTheRequestWithLittleWaste) {
  size_t prev = 0;
  for (size_t n = 0; n < (size_t{1} << 20); n = n < 4096 ? n + 1 : n * 17 / 16) {
    size_t cls = CpuAllocator::size_class(n);
    ASSERT_GE(cls, n);
    ASSERT_GE(cls, prev) << "classes must not shrink as requests grow";
    ASSERT_EQ(cls % 64, 0u) << n;
    if (n > 256) {
      ASSERT_LT(cls - n, n / 4 + 1) << n;
    }
    prev = cls;
  }
}

TEST(CpuAllocatorTest, HugeRequestsFailInsteadOfHanging) {
  // Rounding SIZE_MAX up must not overflow (or loop forever).
  EXPECT_GE(CpuAllocator::size_class(SIZE_MAX), size_t{1} << 62);
  EXPECT_GE(CpuAllocator::size_class((size_t{1} << 63) + 1), (size_t{1} << 63) + 1);
  CpuAllocator alloc;
  for (size_t n : {SIZE_MAX, SIZE_MAX / 2, size_t{1} << 62}) {
    Result<void*> r = alloc.allocate(n);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), StatusCode::kResourceExhausted);
  }
  EXPECT_EQ(alloc.stats().active_bytes, 0u);
  EXPECT_EQ(alloc.stats().alloc_count, 0u);
}

TEST(CpuAllocatorTest, BlocksAre64ByteAlignedAndWritable) {
  CpuAllocator alloc;
  std::vector<std::pair<void*, size_t>> blocks;
  std::set<void*> seen;
  for (size_t n : {0, 1, 3, 63, 64, 65, 255, 256, 257, 1000, 4097, 100000}) {
    Result<void*> r = alloc.allocate(n);
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    void* p = *r;
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u) << n;
    EXPECT_TRUE(seen.insert(p).second) << "two live blocks share an address";
    std::memset(p, 0xAB, n);
    blocks.emplace_back(p, n);
  }
  for (auto& b : blocks) alloc.deallocate(b.first, b.second);
  alloc.deallocate(nullptr, 100);  // ignored
  EXPECT_EQ(alloc.stats().active_bytes, 0u);
}

// Blocks of 8 MiB and more sit on 2 MiB boundaries (for transparent huge
// pages); smaller ones keep the 64-byte alignment.
TEST(CpuAllocatorTest, LargeBlocksAreAlignedForHugePages) {
  CpuAllocator alloc(0);
  for (size_t n : {size_t{8} << 20, (size_t{8} << 20) + 1, size_t{37748736}, size_t{103} << 20}) {
    Result<void*> r = alloc.allocate(n);
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    EXPECT_EQ(reinterpret_cast<uintptr_t>(*r) % (size_t{2} << 20), 0u) << n;
    static_cast<unsigned char*>(*r)[n - 1] = 1;  // the whole request is usable
    alloc.deallocate(*r, n);
  }
  EXPECT_EQ(alloc.stats().active_bytes, 0u);
}

TEST(CpuAllocatorTest, CacheHitsReuseBlocksOfTheSameClass) {
  CpuAllocator alloc;
  void* a = alloc.allocate(1000).value();
  alloc.deallocate(a, 1000);
  MemoryStats s = alloc.stats();
  EXPECT_EQ(s.cached_bytes, 1024u);
  EXPECT_EQ(s.active_bytes, 0u);
  void* b = alloc.allocate(1001).value();  // same 1024-byte class
  EXPECT_EQ(b, a);
  s = alloc.stats();
  EXPECT_EQ(s.cache_hits, 1u);
  EXPECT_EQ(s.cached_bytes, 0u);
  EXPECT_EQ(s.active_bytes, 1024u);
  void* c = alloc.allocate(2000).value();  // another class: a miss
  EXPECT_NE(c, b);
  EXPECT_EQ(alloc.stats().cache_hits, 1u);
  alloc.deallocate(b, 1001);
  alloc.deallocate(c, 2000);
}

TEST(CpuAllocatorTest, Statistics) {
  CpuAllocator alloc;
  void* a = alloc.allocate(256).value();
  void* b = alloc.allocate(512).value();
  MemoryStats s = alloc.stats();
  EXPECT_EQ(s.active_bytes, 768u);
  EXPECT_EQ(s.peak_bytes, 768u);
  EXPECT_EQ(s.alloc_count, 2u);
  EXPECT_EQ(s.cache_hits, 0u);
  alloc.deallocate(a, 256);
  s = alloc.stats();
  EXPECT_EQ(s.active_bytes, 512u);
  EXPECT_EQ(s.peak_bytes, 768u);
  EXPECT_EQ(s.cached_bytes, 256u);
  alloc.reset_peak();
  EXPECT_EQ(alloc.stats().peak_bytes, 512u);
  alloc.deallocate(b, 512);
  s = alloc.stats();
  EXPECT_EQ(s.active_bytes, 0u);
  EXPECT_EQ(s.cached_bytes, 768u);
  alloc.trim();
  s = alloc.stats();
  EXPECT_EQ(s.cached_bytes, 0u);
  EXPECT_EQ(s.peak_bytes, 512u);
  EXPECT_EQ(s.alloc_count, 2u);
  // After a trim, the next allocation is a miss.
  void* c = alloc.allocate(256).value();
  EXPECT_EQ(alloc.stats().cache_hits, 0u);
  alloc.deallocate(c, 256);
}

TEST(CpuAllocatorTest, CacheIsBounded) {
  CpuAllocator alloc(/*max_cached_bytes=*/1024);
  void* a = alloc.allocate(1024).value();
  void* b = alloc.allocate(1024).value();
  alloc.deallocate(a, 1024);
  alloc.deallocate(b, 1024);  // over the bound: goes back to the system
  EXPECT_EQ(alloc.stats().cached_bytes, 1024u);
  CpuAllocator none(0);
  void* c = none.allocate(10).value();
  none.deallocate(c, 10);
  EXPECT_EQ(none.stats().cached_bytes, 0u);
}

TEST(CpuAllocatorTest, LimitRefusesThenWorksAfterFrees) {
  CpuAllocator alloc;
  alloc.set_limit(4096);
  EXPECT_EQ(alloc.stats().limit_bytes, 4096u);
  void* a = alloc.allocate(3000).value();  // 3072-byte class
  Result<void*> r = alloc.allocate(2000);  // 2048 more is past the limit
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(r.status().message().find("limit of 4096 bytes"), std::string::npos) << r.status().message();
  EXPECT_EQ(alloc.stats().alloc_count, 1u);
  alloc.deallocate(a, 3000);
  Result<void*> again = alloc.allocate(2000);
  ASSERT_TRUE(again.ok()) << again.status().to_string();
  alloc.deallocate(*again, 2000);
  alloc.set_limit(0);
  Result<void*> unlimited = alloc.allocate(1 << 20);
  ASSERT_TRUE(unlimited.ok());
  alloc.deallocate(*unlimited, 1 << 20);
}

TEST(CpuAllocatorTest, LimitCountsCachedBytes) {
  CpuAllocator alloc;
  alloc.set_limit(4096);
  void* a = alloc.allocate(3000).value();
  alloc.deallocate(a, 3000);  // 3072 bytes now sit in the cache
  Result<void*> b = alloc.allocate(2000);
  ASSERT_TRUE(b.ok()) << "the cache should be given back before refusing";
  MemoryStats s = alloc.stats();
  EXPECT_LE(s.active_bytes + s.cached_bytes, 4096u)
      << "active " << s.active_bytes << " + cached " << s.cached_bytes << " exceeds the limit";
  alloc.deallocate(*b, 2000);
}

TEST(CpuAllocatorTest, ConcurrentUse) {
  CpuAllocator alloc;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&alloc, t] {
      for (int i = 0; i < 2000; ++i) {
        size_t n = static_cast<size_t>((i * 37 + t * 11) % 5000);
        Result<void*> r = alloc.allocate(n);
        if (!r.ok()) continue;
        std::memset(*r, t, n);
        alloc.deallocate(*r, n);
      }
    });
  }
  for (auto& th : threads) th.join();
  MemoryStats s = alloc.stats();
  EXPECT_EQ(s.active_bytes, 0u);
  EXPECT_EQ(s.alloc_count, 8000u);
  EXPECT_GT(s.cache_hits, 0u);
}

}  // namespace
}  // namespace aotirt
