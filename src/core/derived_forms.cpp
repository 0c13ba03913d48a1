#include "core/derived_forms.h"

namespace aotirt {

Result<DerivedForms::Form> DerivedForms::get(const std::string& key,
                                             const std::function<Result<Form>()>& make) const {
  // One lock for lookup and creation: a form is made once per weight and
  // kernel, and a second caller must not build it again.
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& entry : forms_)
    if (entry.first == key) return entry.second;
  Result<Form> made = make();
  if (!made.ok()) return made;
  if (forms_.size() >= kMaxForms) forms_.erase(forms_.begin());
  forms_.emplace_back(key, *made);
  return made;
}

size_t DerivedForms::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return forms_.size();
}

}  // namespace aotirt
