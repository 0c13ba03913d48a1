// Fuzz target "model_load": Model::load up to and into the model library,
// with the fake model library (tests/unit/fake_model) as the library.
//
// A mutated shared library must never be dlopen()ed (the dynamic loader
// trusts its input and runs its constructors), so the input describes the
// package instead of being it: the zip entries (names and contents) and the
// load options, and an entry may stand for "the fake model library". The
// harness writes the package as a stored zip and loads it: package layout,
// model selection, metadata and tensor specs, host and device checks, shim
// resolution, kernel-file extraction, the library opened from memory, the
// container created, weights, input/output names and specs. Optionally the
// model runs once on an input its specs allow.
//
// Input layout:
//   byte 0        options: bit 0 device cpu:0 named explicitly; bit 1 device
//                 cuda:0 (wins over bit 0); bit 2 cuda_graph; bits 3-4
//                 num_runners - 1; bit 5 a 1 MiB memory limit; bit 6 run once
//   then records until the input ends (a truncated record ends the list):
//     u8 kind     0: the data follows; 1: the entry is the fake model library
//     u8 N, N bytes of entry name
//     u16 L (little-endian), L bytes of data (kind 0 only)
// tests/fuzz/make_seeds.py writes seeds in this layout from the zoo packages.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "aotirt/aotirt.h"
#include "device/device.h"
#include "fuzz_util.h"

namespace {

[[noreturn]] void fail(const char* what, const aotirt::Status& status = aotirt::Status()) {
  std::fprintf(stderr, "model_load fuzzer: %s %s\n", what, status.ok() ? "" : status.to_string().c_str());
  std::abort();
}

struct Parsed {
  uint8_t options = 0;
  std::vector<aotirt::fuzz::ZipFileEntry> entries;
};

AOTIRT_FUZZ_HARNESS Parsed parse(const uint8_t* data, size_t size) {
  Parsed p;
  if (size == 0) return p;
  p.options = data[0];
  size_t pos = 1;
  while (pos + 2 <= size && p.entries.size() < 64) {
    const uint8_t kind = data[pos++];
    const size_t name_len = data[pos++];
    if (pos + name_len > size) break;
    aotirt::fuzz::ZipFileEntry e;
    e.name.assign(reinterpret_cast<const char*>(data + pos), name_len);
    pos += name_len;
    if (kind & 1) {
      e = aotirt::fuzz::fake_model_entry(e.name);
    } else {
      if (pos + 2 > size) break;
      const size_t len = data[pos] | static_cast<size_t>(data[pos + 1]) << 8;
      pos += 2;
      if (pos + len > size) break;
      e.data.assign(reinterpret_cast<const char*>(data + pos), len);
      pos += len;
    }
    p.entries.push_back(std::move(e));
  }
  return p;
}

// Runs the fake model once when its input spec allows: it reads sizes[0]
// float32 values and returns them doubled, in two aliased outputs.
void run_once(aotirt::Model& model) {
  using namespace aotirt;
  if (model.num_inputs() != 1) return;
  const TensorSpec& spec = model.inputs()[0];
  if (spec.has_dtype && spec.dtype != DType::kFloat32) return;
  std::vector<int64_t> shape = {4};
  if (spec.has_shape) {
    shape = spec.shape;
    int64_t numel = 1;
    for (int64_t& d : shape) {
      if (d < 0) d = 3;
      if (d > 4096) return;
      numel *= d;
      if (numel > 4096) return;
    }
    if (shape.empty()) return;  // the fake reads sizes[0]
  }
  int64_t numel = 1;
  for (int64_t d : shape) numel *= d;
  // The fake reads sizes[0] values, more than a shape such as [2, 0] holds.
  if (numel < shape[0]) return;
  std::vector<float> x(static_cast<size_t>(numel));
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i) - 1.5f;
  auto out = model.run({Tensor::from_blob(x.data(), shape, DType::kFloat32)});
  if (!out.ok()) return;
  if (out->size() != 2) fail("the fake model's two outputs did not come back");
  const Tensor& y = (*out)[0];
  if (!y.defined() || y.numel() != shape[0] || (*out)[1].data() != y.data()) fail("wrong outputs from the fake model");
  const float* py = static_cast<const float*>(y.data());
  for (int64_t i = 0; i < shape[0]; ++i)
    if (py[i] != 2 * x[static_cast<size_t>(i)]) fail("wrong values from the fake model");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace aotirt;
  Parsed p = parse(data, size);
  static fuzz::MemFile file("aotirt-fuzz-model");
  file.set(fuzz::stored_zip(p.entries));

  LoadOptions options;
  if (p.options & 1) options.device = DeviceId{DeviceType::kCpu, 0};
  if (p.options & 2) options.device = DeviceId{DeviceType::kCuda, 0};
  options.cuda_graph = (p.options & 4) != 0;
  options.num_runners = 1 + ((p.options >> 3) & 3);
  if (p.options & 0x20) options.memory_limit_bytes = size_t{1} << 20;
  {
    auto model = Model::load(file.path(), options);
    if (model.ok() && (p.options & 0x40)) run_once(**model);
  }
  // The memory limit belongs to the device and outlives the model: lift it,
  // so that every input is judged on its own.
  if (Result<Device*> cpu = get_device(DeviceId{DeviceType::kCpu, 0}); cpu.ok()) (*cpu)->allocator().set_limit(0);
  return 0;
}
