// LibraryResources (base/library_resources.h): what a model library acquires
// through redirected imports is released once, newest first, and only
// acquisitions made inside a ScopedLibraryResources find an owner.
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "base/library_resources.h"

namespace aotirt {
namespace {

std::vector<int> g_released;
void record(void* p) { g_released.push_back(*static_cast<int*>(p)); }

TEST(LibraryResourcesTest, ReleasesEachOnceNewestFirst) {
  g_released.clear();
  int a = 1, b = 2, c = 3;
  {
    LibraryResources r;
    EXPECT_TRUE(r.add(&a, record));
    EXPECT_TRUE(r.add(&b, record));
    EXPECT_TRUE(r.add(&c, record));
    EXPECT_EQ(r.size(), 3u);
    r.release_all();
    EXPECT_EQ(g_released, (std::vector<int>{3, 2, 1}));
    EXPECT_EQ(r.size(), 0u);
    EXPECT_TRUE(r.add(&a, record));
  }  // the destructor releases what came after
  EXPECT_EQ(g_released, (std::vector<int>{3, 2, 1, 1}));
}

TEST(LibraryResourcesTest, ScopesNestAndStayOnTheirThread) {
  EXPECT_EQ(current_library_resources(), nullptr);
  LibraryResources outer, inner;
  {
    ScopedLibraryResources s1(&outer);
    EXPECT_EQ(current_library_resources(), &outer);
    {
      ScopedLibraryResources s2(&inner);
      EXPECT_EQ(current_library_resources(), &inner);
      LibraryResources* seen = &outer;
      std::thread([&] { seen = current_library_resources(); }).join();
      EXPECT_EQ(seen, nullptr) << "another thread saw this thread's library";
    }
    EXPECT_EQ(current_library_resources(), &outer);
  }
  EXPECT_EQ(current_library_resources(), nullptr);
}

}  // namespace
}  // namespace aotirt
