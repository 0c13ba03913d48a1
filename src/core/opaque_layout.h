// Layout metadata for storage whose bytes are not a strided array but a
// library's own arrangement: the prepacked weights of a frozen package
// (PyTorch's layout _mkldnn, whose metadata is the serialized oneDNN memory
// descriptor of the weight). Core keeps both opaque; the ops that understand a
// layout read the metadata, and keep what they derive from the bytes with the
// storage (DerivedForms).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace aotirt {

class OpaqueLayout {
 public:
  OpaqueLayout(int32_t layout, std::vector<uint8_t> metadata)
      : layout_(layout), metadata_(std::move(metadata)) {}

  // c10's layout number (3 for _mkldnn).
  int32_t layout() const { return layout_; }
  const std::vector<uint8_t>& metadata() const { return metadata_; }

 private:
  int32_t layout_;
  std::vector<uint8_t> metadata_;
};

}  // namespace aotirt
