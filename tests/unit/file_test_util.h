// Whole-file reads for the unit tests that take bytes from disk (archives
// they wrote, libraries to pack), so each need not define its own.
#pragma once

#include <fstream>
#include <iterator>
#include <string>

namespace aotirt {

// The bytes of |path|; empty when it cannot be read (the callers' checks on
// the content then fail with the path in their message).
inline std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

}  // namespace aotirt
