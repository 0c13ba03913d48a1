// Fuzz target "npy": the CLI's .npy reader (tools/cli/npy.cpp).
//
// The input is the bytes of a .npy file, read with read_npy from an in-memory
// file. Whatever it accepts must survive a round trip: write_npy writes it
// back, read_npy reads the same dtype, shape and bytes, and
// write_npy_float32 (the CLI's writer for bfloat16/float16 outputs) writes a
// float32 file of the same shape. Seeds: small arrays of every supported
// dtype, both orders, every header version (tests/fuzz/make_seeds.py).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "cli/npy.h"
#include "fuzz_util.h"

namespace {

[[noreturn]] void fail(const char* what, const aotirt::Status& status = aotirt::Status()) {
  std::fprintf(stderr, "npy fuzzer: %s %s\n", what, status.ok() ? "" : status.to_string().c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace aotirt;
  static fuzz::MemFile in("aotirt-fuzz-npy-in");
  static fuzz::MemFile out("aotirt-fuzz-npy-out");
  in.set(data, size);
  Result<Tensor> t = cli::read_npy(in.path());
  if (!t.ok()) {
    if (t.status().message().find(in.path()) == std::string::npos) fail("an error that does not name the file", t.status());
    return 0;
  }
  if (!t->is_contiguous()) fail("read_npy returned a non-contiguous tensor");

  Status w = cli::write_npy(out.path(), *t);
  if (!w.ok()) fail("write_npy refuses what read_npy returned", w);
  Result<Tensor> back = cli::read_npy(out.path());
  if (!back.ok()) fail("read_npy refuses what write_npy wrote", back.status());
  if (back->dtype() != t->dtype() || back->sizes() != t->sizes()) fail("the round trip changed dtype or shape");
  if (back->nbytes() != t->nbytes() || (t->nbytes() && std::memcmp(back->data(), t->data(), t->nbytes()) != 0))
    fail("the round trip changed the data");

  Status f = cli::write_npy_float32(out.path(), *t, 2);
  if (f.ok()) {
    Result<Tensor> wide = cli::read_npy(out.path());
    if (!wide.ok()) fail("read_npy refuses what write_npy_float32 wrote", wide.status());
    if (wide->dtype() != DType::kFloat32 || wide->sizes() != t->sizes()) fail("write_npy_float32 changed the shape");
  }
  return 0;
}
