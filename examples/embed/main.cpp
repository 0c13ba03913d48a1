// Embedding aotirt in a program: load a .pt2 package, fill its inputs from
// the recorded specs, run it twice and print the outputs.
//
//   aotirt_embed_example model.pt2 [cpu|cuda|cuda:N]
//
// Without a device argument the package's own device is used.
#include <aotirt/aotirt.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

namespace {

std::string shape_str(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + (shape[i] < 0 ? "?" : std::to_string(shape[i]));
  return s + "]";
}

void print_specs(const char* what, const std::vector<aotirt::TensorSpec>& specs) {
  for (size_t i = 0; i < specs.size(); ++i) {
    const aotirt::TensorSpec& s = specs[i];
    std::printf("%s %zu: %s %s %s\n", what, i, s.name.c_str(), s.has_dtype ? aotirt::dtype_name(s.dtype) : "?",
                s.has_shape ? shape_str(s.shape).c_str() : "?");
  }
}

int fail(const aotirt::Status& status) {
  std::fprintf(stderr, "error: %s\n", status.to_string().c_str());
  return 1;
}

// A deterministic input for |spec|: values made as float32, then converted to
// the input's dtype by the runtime. Dynamic dimensions get size 2.
aotirt::Result<aotirt::Tensor> make_input(const aotirt::TensorSpec& spec) {
  if (!spec.has_dtype || !spec.has_shape)
    return aotirt::Status(aotirt::StatusCode::kInvalidArgument,
                          "input '" + spec.name + "' has no recorded dtype and shape");
  std::vector<int64_t> shape = spec.shape;
  for (int64_t& d : shape) d = d < 0 ? 2 : d;
  aotirt::Result<aotirt::Tensor> values = aotirt::Tensor::empty(shape, aotirt::DType::kFloat32);
  if (!values.ok()) return values;
  float* p = static_cast<float*>(values->data());
  for (int64_t i = 0; i < values->numel(); ++i) p[i] = static_cast<float>(i % 7) * 0.25f;
  return values->to(aotirt::DeviceId{}, spec.dtype);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    std::fprintf(stderr, "usage: %s model.pt2 [cpu|cuda|cuda:N]\n", argv[0]);
    return 2;
  }
  const std::string path = argv[1];

  // The device: the one asked for, else the one the package was compiled for.
  aotirt::LoadOptions options;
  if (argc == 3) {
    auto device = aotirt::DeviceId::parse(argv[2]);
    if (!device.ok()) return fail(device.status());
    options.device = device.value();
  } else {
    auto info = aotirt::inspect_package(path);
    if (!info.ok()) return fail(info.status());
    auto device = aotirt::DeviceId::parse(info->device_key);
    if (!device.ok()) return fail(device.status());
    options.device = device.value();
  }

  auto model = aotirt::Model::load(path, options);
  if (!model.ok()) return fail(model.status());
  std::printf("loaded %s on %s\n", path.c_str(), (*model)->device().to_string().c_str());
  print_specs("input", (*model)->inputs());
  print_specs("output", (*model)->outputs());

  std::vector<aotirt::Tensor> inputs;
  for (const aotirt::TensorSpec& spec : (*model)->inputs()) {
    auto input = make_input(spec);
    if (!input.ok()) return fail(input.status());
    inputs.push_back(input.value());
  }

  // Outputs come back on the host, so their data can be read directly.
  aotirt::RunOptions run_options;
  run_options.outputs_to_host = true;
  for (int run = 1; run <= 2; ++run) {
    auto outputs = (*model)->run(inputs, run_options);
    if (!outputs.ok()) return fail(outputs.status());
    std::printf("run %d:\n", run);
    for (size_t i = 0; i < outputs->size(); ++i) {
      // float64 holds every real dtype's values exactly enough to print.
      auto values = (*outputs)[i].to(aotirt::DeviceId{}, aotirt::DType::kFloat64);
      if (!values.ok()) return fail(values.status());
      const double* v = static_cast<const double*>(values->data());
      std::printf("  output %zu: %s %s:", i, aotirt::dtype_name((*outputs)[i].dtype()),
                  shape_str(values->sizes()).c_str());
      for (int64_t k = 0; k < std::min<int64_t>(values->numel(), 5); ++k) std::printf(" %g", v[k]);
      std::printf("%s\n", values->numel() > 5 ? " ..." : "");
    }
  }
  return 0;
}
