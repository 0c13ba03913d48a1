// Fuzz target "wrapper_source": the reader of a plain package's input
// specs from its generated wrapper .cpp (src/package/wrapper_specs.h).
//
// The input is the wrapper's text. It goes (1) straight to
// parse_wrapper_specs, whose result must respect the caps it promises, and
// (2) into a package without aotirt metadata, as the .wrapper.cpp beside the
// fake model library, through open_pt2_package, which must never fail
// because of it. Seeds: tests/fuzz/regressions/wrapper_source (written in
// the generated form by hand).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "fuzz_util.h"
#include "package/pt2_package.h"
#include "package/wrapper_specs.h"

namespace {

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "wrapper_source fuzzer: %s\n", what);
  std::abort();
}

void check_specs(const aotirt::WrapperSpecs& w) {
  if (!w.found) {
    if (w.problem.empty()) fail("unknown specs without a reason");
    if (!w.inputs.empty()) fail("unknown specs with inputs");
    return;
  }
  if (w.inputs.size() > aotirt::kMaxWrapperInputs) fail("more inputs than the cap");
  for (const aotirt::TensorSpec& s : w.inputs) {
    if (!s.has_shape && !s.shape.empty()) fail("a spec without a shape holds dimensions");
    if (s.shape.size() > aotirt::kMaxWrapperDims) fail("more dimensions than the cap");
    for (int64_t d : s.shape)
      if (d < -1) fail("a size below -1");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace aotirt;
  const std::string text(reinterpret_cast<const char*>(data), size);
  check_specs(parse_wrapper_specs(text));

  static fuzz::MemFile file("aotirt-fuzz-wrapper-source");
  file.set(fuzz::stored_zip({
      fuzz::fake_model_entry("pkg/data/aotinductor/model/m.wrapper.so"),
      {"pkg/data/aotinductor/model/m.wrapper_metadata.json", "{\"AOTI_DEVICE_KEY\": \"cpu\"}"},
      {"pkg/data/aotinductor/model/m.wrapper.cpp", text},
  }));
  Result<Pt2Package> pkg = open_pt2_package(file.path());
  if (!pkg.ok()) fail("a wrapper source failed the package");
  if (pkg->info.spec_source == SpecSource::kNone && pkg->info.spec_note.empty())
    fail("unknown specs without a note");
  return 0;
}
