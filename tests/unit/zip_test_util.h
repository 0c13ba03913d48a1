// Writes zip archives for tests (through minizip's writer), so package tests
// can assemble .pt2 files of any shape, valid or broken.
#pragma once

#include <zip.h>

#include <cstring>
#include <string>
#include <vector>

namespace aotirt {

struct ZipItem {
  std::string name;
  std::string data;
  bool stored = true;  // false: deflated
};

inline bool write_zip(const std::string& path, const std::vector<ZipItem>& items) {
  zipFile zf = zipOpen64(path.c_str(), 0);
  if (!zf) return false;
  bool ok = true;
  for (const auto& it : items) {
    zip_fileinfo info;
    std::memset(&info, 0, sizeof(info));
    ok = ok && zipOpenNewFileInZip64(zf, it.name.c_str(), &info, nullptr, 0, nullptr, 0, nullptr,
                                     it.stored ? 0 : Z_DEFLATED, it.stored ? 0 : Z_DEFAULT_COMPRESSION,
                                     0) == ZIP_OK;
    if (!it.data.empty())
      ok = ok && zipWriteInFileInZip(zf, it.data.data(), static_cast<unsigned>(it.data.size())) == ZIP_OK;
    ok = ok && zipCloseFileInZip(zf) == ZIP_OK;
  }
  return zipClose(zf, nullptr) == ZIP_OK && ok;
}

}  // namespace aotirt
