// A .pt2 package opened for loading: which zip entries hold the model
// library, its metadata, the weights blob and the GPU kernels, plus the
// parsed metadata and the library's imported symbols.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "aotirt/model.h"
#include "package/zip_archive.h"

namespace aotirt {

struct Pt2Package {
  std::unique_ptr<ZipArchive> zip;
  PackageInfo info;
  std::vector<std::pair<std::string, std::string>> metadata;  // *_metadata.json, as strings
  const ZipEntry* library = nullptr;   // borrowed from zip
  const ZipEntry* weights = nullptr;   // null when weights are inside the library
  std::vector<const ZipEntry*> kernels;  // .cubin / .fatbin files
  std::string library_bytes;           // the .so, read once
  std::vector<std::string> undefined_symbols;
};

// Opens |path| and finds the AOTI model |model_name| ("" = the only one, or
// "model"). Does not check the device or the host: see check_package_host.
Result<Pt2Package> open_pt2_package(const std::string& path, const std::string& model_name = "");

// Refuses packages this machine cannot run: another OS or CPU architecture,
// or CPU kernels for a vector ISA this CPU lacks.
Status check_package_host(const Pt2Package& package);


// Parses aotirt's "aotirt.inputs"/"aotirt.outputs" metadata (JSON lists of
// {name, dtype, shape}). Returns an empty list when absent.
Result<std::vector<TensorSpec>> parse_tensor_specs(const std::string& json_text, const std::string& key);

}  // namespace aotirt
