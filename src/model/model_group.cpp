// ModelGroup: several packages of one model loaded with each weight held
// once. ModelState does the matching (model.cpp, load_weights); the group
// keeps the pool of held weights and the order in which models go.
#include "aotirt/model_group.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <exception>
#include <new>

#include "base/status.h"
#include "model/constant_pool.h"
#include "model/model_state.h"

namespace aotirt {

class ModelGroupState {
 public:
  ~ModelGroupState() {
    // A model borrows weights only from those loaded before it: the last
    // loaded goes first, so the weights outlive every container reading them.
    while (!models.empty()) models.pop_back();
  }

  ConstantPool pool;
  std::vector<std::unique_ptr<Model>> models;
};

ModelGroup::ModelGroup(std::unique_ptr<ModelGroupState> state) : state_(std::move(state)) {}
ModelGroup::~ModelGroup() = default;

Result<std::unique_ptr<ModelGroup>> ModelGroup::load(const std::vector<std::string>& paths,
                                                     const LoadOptions& options, size_t* failed_index) {
  try {
    return load(paths, std::vector<LoadOptions>(paths.size(), options), failed_index);
  } catch (const std::bad_alloc&) {
    return AOTIRT_STATUS(kResourceExhausted, "loading a model group: out of memory");
  }
}

Result<std::unique_ptr<ModelGroup>> ModelGroup::load(const std::vector<std::string>& paths,
                                                     const std::vector<LoadOptions>& options,
                                                     size_t* failed_index) {
  size_t index = 0;
  auto fail = [&](Status s) {
    if (failed_index) *failed_index = index;
    set_last_error(s);
    return s;
  };
  try {
    if (paths.empty()) return fail(AOTIRT_STATUS(kInvalidArgument, "a model group needs at least one package"));
    if (options.size() != paths.size())
      return fail(AOTIRT_STATUS(kInvalidArgument, "a model group of {} packages was given {} sets of load options",
                                paths.size(), options.size()));
    // A missing package is named before any other is loaded.
    for (index = 0; index < paths.size(); ++index)
      if (::access(paths[index].c_str(), R_OK) != 0)
        return fail(AOTIRT_STATUS(kNotFound, "cannot read '{}' (package {} of {} in the group): {}", paths[index],
                                  index + 1, paths.size(), std::strerror(errno)));
    auto state = std::make_unique<ModelGroupState>();
    state->models.reserve(paths.size());
    for (index = 0; index < paths.size(); ++index) {
      Result<std::unique_ptr<ModelState>> m = ModelState::load(paths[index], options[index], &state->pool);
      if (!m.ok()) {
        Status s = m.take_status();
        return fail(s.annotate(fmt::format("loading '{}' (package {} of {} in the group)", paths[index], index + 1,
                                           paths.size())));
      }
      state->models.push_back(std::unique_ptr<Model>(new Model(std::move(m).value())));
    }
    return std::unique_ptr<ModelGroup>(new ModelGroup(std::move(state)));
  } catch (const std::bad_alloc&) {
    return fail(AOTIRT_STATUS(kResourceExhausted, "loading a model group: out of memory"));
  } catch (const std::exception& e) {
    return fail(AOTIRT_STATUS(kInternal, "loading a model group: unexpected exception: {}", e.what()));
  }
}

size_t ModelGroup::size() const { return state_->models.size(); }
Model& ModelGroup::model(size_t index) { return *state_->models[index]; }
const Model& ModelGroup::model(size_t index) const { return *state_->models[index]; }

size_t ModelGroup::weight_bytes() const {
  size_t total = 0;
  for (const auto& m : state_->models) total += m->weight_stats().held_bytes;
  return total;
}

size_t ModelGroup::unshared_weight_bytes() const {
  size_t total = 0;
  for (const auto& m : state_->models) {
    const WeightStats s = m->weight_stats();
    // A package that borrows some weights after loading its own copies
    // (its weights did not all match) holds those bytes already.
    total += s.held_bytes ? s.held_bytes : s.shared_bytes;
  }
  return total;
}

size_t ModelGroup::shared_constants() const {
  size_t total = 0;
  for (const auto& m : state_->models) total += m->weight_stats().shared_constants;
  return total;
}

}  // namespace aotirt
