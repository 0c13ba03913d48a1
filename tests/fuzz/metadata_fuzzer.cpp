// Fuzz target "metadata": the package metadata parsers.
//
// The input is JSON text. It goes (1) straight to parse_tensor_specs, the
// parser of aotirt's "aotirt.inputs"/"aotirt.outputs" lists, and (2) into a
// package as its *_metadata.json, beside the fake model library, through
// open_pt2_package (the metadata object, AOTI_DEVICE_KEY, the CPU-ISA
// warning, the tensor specs inside it) and check_package_host (platform,
// machine, AOTI_CPU_ISA). Seeds: the metadata of the zoo packages
// (tests/fuzz/make_seeds.py).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "fuzz_util.h"
#include "package/pt2_package.h"

namespace {

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "metadata fuzzer: %s\n", what);
  std::abort();
}

void check_specs(aotirt::Result<std::vector<aotirt::TensorSpec>> specs) {
  if (!specs.ok()) {
    if (specs.status().message().empty()) fail("an error without a message");
    return;
  }
  for (const aotirt::TensorSpec& s : *specs)
    if (!s.has_shape && !s.shape.empty()) fail("a spec without a shape holds dimensions");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace aotirt;
  const std::string text(reinterpret_cast<const char*>(data), size);
  check_specs(parse_tensor_specs(text, "aotirt.inputs"));

  static fuzz::MemFile file("aotirt-fuzz-metadata");
  file.set(fuzz::stored_zip({
      fuzz::fake_model_entry("pkg/data/aotinductor/model/m.wrapper.so"),
      {"pkg/data/aotinductor/model/m.wrapper_metadata.json", text},
  }));
  Result<Pt2Package> pkg = open_pt2_package(file.path());
  if (pkg.ok()) {
    if (pkg->info.device_key.empty()) fail("a package without AOTI_DEVICE_KEY was accepted");
    (void)check_package_host(*pkg);
  }
  return 0;
}
