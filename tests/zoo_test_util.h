// Where the C++ tests that run the zoo's CPU packages find them: the
// manifest tests/models/make_packages.py writes. Shared by the unit,
// sanitizer and zoo API tests, so they all pick the same manifest.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>

namespace aotirt {

// $AOTIRT_ZOO_MANIFEST, else the newest .cache/zoo/*-cpu/manifest.json of the
// source tree (scripts/test.sh makes it); empty when there is none, and the
// callers skip their zoo cases.
inline std::string zoo_manifest_path() {
  namespace fs = std::filesystem;
  if (const char* env = std::getenv("AOTIRT_ZOO_MANIFEST")) return env;
  // The source tree is found from this header's own path, so the targets
  // that include it need no definition for it; lexically_normal drops the
  // "unit/.." that a relative include leaves in __FILE__.
  const fs::path source_dir = fs::path(__FILE__).lexically_normal().parent_path().parent_path();
  std::error_code ec;
  fs::path newest;
  fs::file_time_type newest_time{};
  for (const auto& dir : fs::directory_iterator(source_dir / ".cache" / "zoo", ec)) {
    const std::string name = dir.path().filename().string();
    const fs::path m = dir.path() / "manifest.json";
    if (name.size() < 4 || name.compare(name.size() - 4, 4, "-cpu") != 0 || !fs::exists(m, ec)) continue;
    const fs::file_time_type t = fs::last_write_time(m, ec);
    if (newest.empty() || t > newest_time) {
      newest = m;
      newest_time = t;
    }
  }
  return newest.string();
}

}  // namespace aotirt
