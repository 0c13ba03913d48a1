// A test fixture that gives each test a private scratch folder (root_) and
// points TMPDIR at an empty subfolder (tmp_), so tests can check that the
// code under test leaves nothing behind in TMPDIR.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace aotirt {

class PrivateTmpdirTest : public ::testing::Test {
 protected:
  // |expect_clean_tmpdir|: fail a test that leaves files in TMPDIR.
  explicit PrivateTmpdirTest(const char* prefix, bool expect_clean_tmpdir = true)
      : prefix_(prefix), expect_clean_(expect_clean_tmpdir) {}

  void SetUp() override {
    namespace fs = std::filesystem;
    const char* old = std::getenv("TMPDIR");
    had_tmpdir_ = old != nullptr;
    if (old) old_tmpdir_ = old;
    std::string tmpl = (fs::temp_directory_path() / (prefix_ + "-XXXXXX")).string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    root_ = tmpl;
    tmp_ = root_ + "/tmp";
    fs::create_directory(tmp_);
    setenv("TMPDIR", tmp_.c_str(), 1);
  }

  void TearDown() override {
    namespace fs = std::filesystem;
    if (expect_clean_) EXPECT_TRUE(fs::is_empty(tmp_)) << "something was left in TMPDIR";
    if (had_tmpdir_)
      setenv("TMPDIR", old_tmpdir_.c_str(), 1);
    else
      unsetenv("TMPDIR");
    std::error_code ec;
    fs::remove_all(root_, ec);
  }

  std::string root_, tmp_;

 private:
  std::string prefix_, old_tmpdir_;
  bool expect_clean_;
  bool had_tmpdir_ = false;
};

}  // namespace aotirt
