// A .pt2 package opened for loading: which zip entries hold the model
// library, its metadata, the weights blob and the GPU kernels, plus the
// parsed metadata and the library's imported symbols.
//
// Everything here reads the package as untrusted data: the metadata is
// parsed once, with caps on its size and nesting, and nothing in the package
// is executed (the library is only read as bytes and its ELF tables parsed).
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "aotirt/model.h"
#include "package/zip_archive.h"

namespace aotirt {

// Largest *_metadata.json accepted. Torch writes a few hundred bytes, and
// aotirt's input and output specs add about 100 bytes per tensor (4 MiB is
// some 40,000 tensors). The cap refuses a metadata "bomb" (a small
// compressed entry that inflates to hundreds of MB) before it is inflated.
constexpr size_t kMaxMetadataBytes = size_t{4} << 20;
// Deepest nesting accepted in metadata JSON. Real metadata nests 4 levels
// (object, spec list, spec, shape); a deep document is refused while it is
// parsed, without recursion.
constexpr size_t kMaxMetadataDepth = 32;

struct Pt2Package {
  std::unique_ptr<ZipArchive> zip;
  PackageInfo info;
  // The top-level metadata values the runtime reads, as strings: strings as
  // they are, numbers, booleans and null as their JSON text. Lists and
  // objects are not kept (aotirt.inputs/outputs become info's specs).
  std::vector<std::pair<std::string, std::string>> metadata;
  const ZipEntry* library = nullptr;   // borrowed from zip
  const ZipEntry* weights = nullptr;   // null when weights are inside the library
  std::vector<const ZipEntry*> kernels;  // .cubin / .fatbin / .hsaco files
  // The generated wrapper .cpp, when the package carries it: read for the
  // input specs of a package without aotirt's metadata.
  const ZipEntry* wrapper_source = nullptr;
  std::string library_bytes;           // the .so, once read_pt2_library ran
  std::vector<std::string> undefined_symbols;
};

// Opens |path| and finds the AOTI model |model_name| ("" = the only one, or
// "model"), parses its metadata and reads its library: open_pt2_layout and
// read_pt2_library together. Does not check the device or the host: see
// check_package_host.
Result<Pt2Package> open_pt2_package(const std::string& path, const std::string& model_name = "");

// The first half: the archive, the model's entries and its parsed metadata,
// without reading the library (so a loader can start the device as soon as
// the package names it).
Result<Pt2Package> open_pt2_layout(const std::string& path, const std::string& model_name = "");
// The second half: reads the library into package.library_bytes and lists
// its undefined symbols.
Status read_pt2_library(Pt2Package& package);

// Refuses packages this machine cannot run: another OS or CPU architecture,
// or CPU kernels for a vector ISA this CPU lacks.
Status check_package_host(const Pt2Package& package);

// The package's kernel files that a model on |device| loads: CUDA cubins and
// fatbins for a CUDA device, none for the CPU (a CPU model never opens them).
std::vector<const ZipEntry*> kernels_for_device(const Pt2Package& package, DeviceType device);

// Parses aotirt's "aotirt.inputs"/"aotirt.outputs" metadata (JSON lists of
// {name, dtype, shape}). Returns an empty list when absent. Shapes hold
// sizes from 0 to 2^63-1, or -1 for a dynamic dimension; anything else, and
// a shape whose element count overflows int64, is refused.
Result<std::vector<TensorSpec>> parse_tensor_specs(const std::string& json_text, const std::string& key);

}  // namespace aotirt
