// Input specs of a package made without aotirt's exporter, learned from the
// C++ wrapper source AOTInductor stores beside the model library
// (data/aotinductor/<model>/<hash>.wrapper.cpp). That source holds the
// library's own input checks, one function per input: the dtype it expects,
// each static size, the bounds of each dynamic size. Reading them lets the
// CLI convert a float32 .npy for a bfloat16 or float16 input and name a
// wrong dtype or shape before the run.
//
// The text is untrusted: it is scanned once, front to back, without
// recursion or regular expressions, under caps on its size, the number of
// inputs and the number of dimensions. Anything that does not have exactly
// the generated form leaves the specs unknown; nothing here fails a load.
// The specs are hints: the library's generated checks stay authoritative.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "aotirt/model.h"

namespace aotirt {

// Largest wrapper source read. Generated wrappers are tens of KB for small
// models and a few MB for large ones; a larger entry is not read (the specs
// stay unknown).
constexpr size_t kMaxWrapperSourceBytes = size_t{64} << 20;
// Most inputs and dimensions per input accepted from a wrapper source.
constexpr size_t kMaxWrapperInputs = size_t{1} << 16;
constexpr size_t kMaxWrapperDims = 64;
// Longest input or output name taken from the source.
constexpr size_t kMaxWrapperNameBytes = 4096;

struct WrapperSpecs {
  // True when the source's checks (or at least its input names) were read:
  // |inputs| then has one entry per input. Each entry's dtype or shape may
  // still be unknown (has_dtype/has_shape false) when its check was not
  // recognised.
  bool found = false;
  // When !found: why, in words ("the wrapper source holds no input checks").
  std::string problem;
  std::vector<TensorSpec> inputs;
  // Output names (dtype and shape unknown: the wrapper does not check them).
  std::vector<TensorSpec> outputs;
};

// Reads |source|, a generated wrapper's text. Never fails: a source it
// cannot read gives found = false and a problem.
WrapperSpecs parse_wrapper_specs(std::string_view source);

}  // namespace aotirt
