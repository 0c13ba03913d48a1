// Layout metadata for storage whose bytes are not a strided array but a
// library's own arrangement: the prepacked weights of a frozen package
// (PyTorch's layout _mkldnn, whose metadata is the serialized oneDNN memory
// descriptor of the weight). Core keeps both opaque; the ops that understand a
// layout read the metadata, and keep what they derive from the bytes (a
// weight reordered for one kernel) here, so it lives exactly as long as the
// weight itself and never outlives it into a later model's memory.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "aotirt/status.h"

namespace aotirt {

class OpaqueLayout {
 public:
  // At most this many derived forms per storage; the oldest goes first.
  static constexpr size_t kMaxDerived = 4;

  OpaqueLayout(int32_t layout, std::vector<uint8_t> metadata)
      : layout_(layout), metadata_(std::move(metadata)) {}

  // c10's layout number (3 for _mkldnn).
  int32_t layout() const { return layout_; }
  const std::vector<uint8_t>& metadata() const { return metadata_; }

  using Derived = std::shared_ptr<const void>;
  // The form derived under |key|, made by |make| on first use. Callers that
  // race for one key wait for the first to finish; a failed |make| is not kept.
  Result<Derived> derived(const std::string& key, const std::function<Result<Derived>()>& make) const;

 private:
  int32_t layout_;
  std::vector<uint8_t> metadata_;
  mutable std::mutex mu_;
  mutable std::vector<std::pair<std::string, Derived>> derived_;
};

}  // namespace aotirt
