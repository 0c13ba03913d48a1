// The public C++ API (include/aotirt/) over the internal model and tensor code.
#include "aotirt/aotirt.h"
#include "base/status.h"
#include "device/device.h"
#include "model/model_state.h"
#include "shim/common/shim_profile.h"

namespace aotirt {

// ---- Tensor ----

Tensor Tensor::from_blob(void* data, std::vector<int64_t> sizes, DType dtype, DeviceId device,
                         std::vector<int64_t> strides) {
  DimVector s(sizes);
  DimVector st = strides.empty() ? contiguous_strides(s) : DimVector(strides);
  Result<size_t> nbytes = storage_bytes_for(s, st, dtype);
  Storage* storage = Storage::new_borrowed(data, nbytes.ok() ? nbytes.value() : 0, device);
  return Tensor(std::make_shared<TensorImpl>(StorageRef::adopt(storage), dtype, s, st, 0));
}

Result<Tensor> Tensor::empty(std::vector<int64_t> sizes, DType dtype, DeviceId device) {
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl t, empty_contiguous(DimVector(sizes), dtype, device));
  return Tensor(std::make_shared<TensorImpl>(std::move(t)));
}

DType Tensor::dtype() const { return impl_ ? impl_->dtype() : DType::kFloat32; }
DeviceId Tensor::device() const { return impl_ ? impl_->device() : DeviceId{}; }
int64_t Tensor::dim() const { return impl_ ? impl_->dim() : 0; }
std::vector<int64_t> Tensor::sizes() const { return impl_ ? impl_->sizes().to_vector() : std::vector<int64_t>{}; }
std::vector<int64_t> Tensor::strides() const {
  return impl_ ? impl_->strides().to_vector() : std::vector<int64_t>{};
}
int64_t Tensor::numel() const { return impl_ ? impl_->numel() : 0; }
size_t Tensor::nbytes() const { return impl_ ? impl_->nbytes() : 0; }
bool Tensor::is_contiguous() const { return impl_ ? impl_->is_contiguous() : true; }
void* Tensor::data() const { return impl_ ? impl_->data_ptr() : nullptr; }

Result<Tensor> Tensor::to(DeviceId device, DType dtype) const {
  if (!impl_) return AOTIRT_STATUS(kInvalidArgument, "cannot copy an undefined tensor");
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl out, empty_contiguous(impl_->sizes(), dtype, device));
  if (impl_->dtype() != dtype && !impl_->device().is_cpu() && !device.is_cpu()) {
    return AOTIRT_STATUS(kUnimplemented, "dtype conversion between two device tensors is not supported");
  }
  if (impl_->dtype() != dtype && !device.is_cpu()) {
    // Convert on the host, then upload.
    AOTIRT_ASSIGN_OR_RETURN(Tensor host, to(DeviceId{}, dtype));
    AOTIRT_RETURN_IF_ERROR(copy_tensor(out, *host.impl(), false));
  } else if (impl_->dtype() != dtype && !impl_->device().is_cpu()) {
    AOTIRT_ASSIGN_OR_RETURN(Tensor host, to(DeviceId{}));
    AOTIRT_RETURN_IF_ERROR(copy_tensor(out, *host.impl(), false));
  } else {
    AOTIRT_RETURN_IF_ERROR(copy_tensor(out, *impl_, false));
  }
  AOTIRT_ASSIGN_OR_RETURN(Device * dev, get_device(device.is_cpu() ? impl_->device() : device));
  AOTIRT_RETURN_IF_ERROR(dev->synchronize());
  return Tensor(std::make_shared<TensorImpl>(std::move(out)));
}

// ---- Model ----

Model::Model(std::unique_ptr<ModelState> state) : state_(std::move(state)) {}
Model::~Model() = default;

Result<std::unique_ptr<Model>> Model::load(const std::string& path, const LoadOptions& options) {
  Result<std::unique_ptr<ModelState>> state = ModelState::load(path, options);
  if (!state.ok()) {
    set_last_error(state.status());
    return state.take_status();
  }
  return std::unique_ptr<Model>(new Model(std::move(state).value()));
}

const PackageInfo& Model::package() const { return state_->info(); }
DeviceId Model::device() const { return state_->device_id(); }
size_t Model::num_inputs() const { return state_->inputs().size(); }
size_t Model::num_outputs() const { return state_->outputs().size(); }
const std::vector<TensorSpec>& Model::inputs() const { return state_->inputs(); }
const std::vector<TensorSpec>& Model::outputs() const { return state_->outputs(); }

Result<std::vector<Tensor>> Model::run(const std::vector<Tensor>& inputs, const RunOptions& options) {
  Result<std::vector<Tensor>> r = state_->run(inputs, options);
  if (!r.ok()) set_last_error(r.status());
  return r;
}

void Model::set_memory_limit(size_t bytes) { state_->device()->allocator().set_limit(bytes); }

GraphStats Model::graph_stats() const { return state_->graph_stats(); }

Result<PackageInfo> inspect_package(const std::string& path) {
  Result<Pt2Package> p = open_pt2_package(path);
  if (!p.ok()) {
    set_last_error(p.status());
    return p.take_status();
  }
  AOTIRT_RETURN_IF_ERROR(resolve_imported_shims(p.value()));
  return p.value().info;
}

std::string last_error() {
  const Status& s = get_last_error();
  return s.ok() ? std::string() : s.to_string();
}

void set_shim_profiling(bool on) { g_shim_profiling.store(on, std::memory_order_relaxed); }

std::vector<ShimProfileEntry> shim_profile(bool reset) {
  std::vector<ShimProfileEntry> out;
  for (const ShimProfileCount& c : shim_profile_counts(reset)) {
    ShimProfileEntry e;
    e.name = c.name;
    e.calls = c.calls;
    e.total_us = static_cast<double>(c.ns) / 1000.0;
    out.push_back(std::move(e));
  }
  return out;
}

const char* version() { return "0.1.0"; }

}  // namespace aotirt
