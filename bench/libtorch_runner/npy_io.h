// Minimal .npy reading and writing for the libtorch reference runner, so it
// can take the same input files as `aotirt bench` and write its outputs for
// the harness's cross-check. Only what the benchmark workloads use:
// little-endian, C order, bool/uint8/int32/int64/float16/float32/float64.
#pragma once

#include <string>

#include <ATen/Tensor.h>

namespace bench {

// Reads |path| into a CPU tensor of the file's dtype. Throws std::runtime_error
// naming the file on any problem.
at::Tensor read_npy(const std::string& path);

// Writes a CPU tensor as a version 1.0 .npy file. bfloat16 and float16 are
// widened to float32 first (numpy has no bfloat16).
void write_npy(const std::string& path, const at::Tensor& tensor);

}  // namespace bench
