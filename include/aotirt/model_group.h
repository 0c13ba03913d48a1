// aotirt::ModelGroup: several packages of one model (the prefill and decode
// packages of aotirt.export_llm, say) loaded together, each weight held once.
//
//   auto group = aotirt::ModelGroup::load({"prefill.pt2", "decode.pt2"});
//   if (!group.ok()) { std::cerr << group.status().to_string(); return 1; }
//   auto logits = (*group)->model(1).run(inputs);
//
// The first package loads its weights as Model::load does. Each later
// package is matched weight by weight against those already held, by the
// original name of the parameter or buffer (its FQN in the exported
// module): a weight held already, of the same dtype and size, is handed to
// the package's model library as a user-managed constant, pointing at the
// held tensor, without a copy. When every weight of a package is held
// already its weights blob is never read. Otherwise the package loads its
// weights as usual and then reads the held ones in their place: its own
// copies of those stay allocated (the library allocates its weights as one
// block), which weight_bytes() counts. Constants the model folds at its first
// run are never shared. A weight whose name matches one held but whose
// dtype or size differ fails the load: the packages are not one model's.
// Packages whose weights are compiled into their library (no external
// weights blob) load on their own, sharing nothing.
//
// The group owns its models and the weights they share; a model borrowing
// weights never outlives the package that holds them (the models are
// destroyed in reverse load order). Loading runs native code from each
// package: load only packages you trust (SECURITY.md). No function here
// throws.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "aotirt/model.h"
#include "aotirt/status.h"

namespace aotirt {

class ModelGroupState;

class AOTIRT_API ModelGroup {
 public:
  // Loads |paths| in order, with the same |options| for each. On failure,
  // |failed_index| (when given) is set to the index of the package that
  // failed; the error's message names its path.
  static Result<std::unique_ptr<ModelGroup>> load(const std::vector<std::string>& paths,
                                                  const LoadOptions& options = {}, size_t* failed_index = nullptr);
  // The same, with options of its own for each package (one per path).
  static Result<std::unique_ptr<ModelGroup>> load(const std::vector<std::string>& paths,
                                                  const std::vector<LoadOptions>& options,
                                                  size_t* failed_index = nullptr);
  ~ModelGroup();
  ModelGroup(const ModelGroup&) = delete;
  ModelGroup& operator=(const ModelGroup&) = delete;

  size_t size() const;
  // The model of package |index| (index < size()), owned by the group.
  Model& model(size_t index);
  const Model& model(size_t index) const;

  // Bytes of weights the group's models hold in memory, each shared weight
  // counted once.
  size_t weight_bytes() const;
  // Bytes they would hold if each package were loaded alone.
  size_t unshared_weight_bytes() const;
  // Weights borrowed by later packages instead of loaded again.
  size_t shared_constants() const;

 private:
  explicit ModelGroup(std::unique_ptr<ModelGroupState> state);
  std::unique_ptr<ModelGroupState> state_;
};

}  // namespace aotirt
