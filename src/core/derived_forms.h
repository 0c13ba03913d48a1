// Forms derived from a storage's bytes (a weight reordered for one kernel,
// say), kept with the storage they come from. Only storage whose bytes never
// change after load has them: model constants that are parameters or tensor
// constants, and prepacked weights. A derived form then lives exactly as long
// as the bytes it was made from and never outlives them into a later
// model's memory.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "aotirt/status.h"

namespace aotirt {

class DerivedForms {
 public:
  // At most this many forms per storage; the oldest goes first.
  static constexpr size_t kMaxForms = 4;

  using Form = std::shared_ptr<const void>;
  // The form kept under |key|, made by |make| on first use. Callers that race
  // for one key wait for the first to finish; a failed |make| is not kept.
  Result<Form> get(const std::string& key, const std::function<Result<Form>()>& make) const;
  size_t size() const;

 private:
  mutable std::mutex mu_;
  mutable std::vector<std::pair<std::string, Form>> forms_;
};

}  // namespace aotirt
