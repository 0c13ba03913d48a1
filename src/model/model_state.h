// ModelState: everything a loaded model owns -- the package, the opened
// library and its container, extracted kernels -- and the run path that
// turns caller tensors into handles and handles back into tensors.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "aotirt/model.h"
#include "base/file_util.h"
#include "device/device.h"
#include "model/model_library.h"
#include "package/pt2_package.h"

namespace aotirt {

class ModelState {
 public:
  static Result<std::unique_ptr<ModelState>> load(const std::string& path, const LoadOptions& options);
  ~ModelState();

  Result<std::vector<Tensor>> run(const std::vector<Tensor>& inputs, const RunOptions& options);

  const PackageInfo& info() const { return package_.info; }
  DeviceId device_id() const { return device_id_; }
  const std::vector<TensorSpec>& inputs() const { return inputs_; }
  const std::vector<TensorSpec>& outputs() const { return outputs_; }
  Device* device() const { return device_; }

 private:
  ModelState() = default;
  Status validate_input(size_t index, const TensorImpl& t) const;
  Status load_weights();

  Pt2Package package_;
  DeviceId device_id_;
  Device* device_ = nullptr;  // borrowed from the registry
  TempDir kernel_dir_;        // extracted GPU kernels, removed on unload
  std::unique_ptr<ModelLibrary> library_;
  ContainerHandle container_ = nullptr;
  bool has_specs_ = false;
  std::vector<TensorSpec> inputs_, outputs_;
};

}  // namespace aotirt
