// The public C++ API (include/aotirt/) over the internal model and tensor code.
//
// No exception crosses this API: it promises a Status, and a caller built
// without exceptions could not catch one. aotirt's own code does not throw,
// but the standard library does when memory runs out (std::bad_alloc), so
// every entry point that allocates runs inside guarded(), which turns an
// escaped exception into RESOURCE_EXHAUSTED (out of memory) or INTERNAL.
#include <exception>
#include <new>
#include <system_error>

#include "aotirt/aotirt.h"
#include "base/status.h"
#include "device/device.h"
#include "model/model_state.h"
#include "shim/common/shim_profile.h"

namespace aotirt {
namespace {

// The Status for an exception that reached the API boundary.
Status exception_status(const char* what) {
  try {
    throw;
  } catch (const std::bad_alloc&) {
    return Status(StatusCode::kResourceExhausted, std::string(what) + ": out of memory");
  } catch (const std::system_error& e) {
    // std::thread's way of saying no thread can be started (EAGAIN).
    if (e.code() == std::errc::resource_unavailable_try_again || e.code() == std::errc::not_enough_memory)
      return Status(StatusCode::kResourceExhausted, std::string(what) + ": " + e.what());
    return Status(StatusCode::kInternal, std::string(what) + ": unexpected exception: " + e.what());
  } catch (const std::exception& e) {
    return Status(StatusCode::kInternal, std::string(what) + ": unexpected exception: " + e.what());
  } catch (...) {
    return Status(StatusCode::kInternal, std::string(what) + ": unexpected exception");
  }
}

// Runs |fn| (returning a Result or Status); an exception it lets out becomes
// an error Status, recorded as the thread's last error too. Making that
// Status allocates a little: should even that fail, the process ends
// (std::terminate, as noexcept demands) rather than unwind into the caller.
template <class Fn>
auto guarded(const char* what, Fn&& fn) noexcept -> decltype(fn()) {
  try {
    return fn();
  } catch (...) {
    Status s = exception_status(what);
    set_last_error(s);
    return s;
  }
}

}  // namespace

// ---- Tensor ----

Tensor Tensor::from_blob(void* data, std::vector<int64_t> sizes, DType dtype, DeviceId device,
                         std::vector<int64_t> strides) {
  // Without room for the tensor's few bytes, the result is undefined: a run
  // given it refuses it as an undefined tensor.
  try {
    DimVector s(sizes);
    DimVector st = strides.empty() ? contiguous_strides(s) : DimVector(strides);
    Result<size_t> nbytes = storage_bytes_for(s, st, dtype);
    StorageRef storage = StorageRef::adopt(Storage::new_borrowed(data, nbytes.ok() ? nbytes.value() : 0, device));
    return Tensor(std::make_shared<TensorImpl>(std::move(storage), dtype, s, st, 0));
  } catch (...) {
    set_last_error(exception_status("Tensor::from_blob"));
    return Tensor();
  }
}

Result<Tensor> Tensor::empty(std::vector<int64_t> sizes, DType dtype, DeviceId device) {
  return guarded("Tensor::empty", [&]() -> Result<Tensor> {
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl t, empty_contiguous(DimVector(sizes), dtype, device));
    return Tensor(std::make_shared<TensorImpl>(std::move(t)));
  });
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

namespace {

Result<Tensor> copy_tensor_to(const Tensor& self, DeviceId device, DType dtype) {
  const TensorImpl* impl = self.impl();
  if (!impl) return AOTIRT_STATUS(kInvalidArgument, "cannot copy an undefined tensor");
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl out, empty_contiguous(impl->sizes(), dtype, device));
  if (impl->dtype() != dtype && !impl->device().is_cpu() && !device.is_cpu()) {
    return AOTIRT_STATUS(kUnimplemented, "dtype conversion between two device tensors is not supported");
  }
  if (impl->dtype() != dtype && !device.is_cpu()) {
    // Convert on the host, then upload.
    AOTIRT_ASSIGN_OR_RETURN(Tensor host, copy_tensor_to(self, DeviceId{}, dtype));
    AOTIRT_RETURN_IF_ERROR(copy_tensor(out, *host.impl(), false));
  } else if (impl->dtype() != dtype && !impl->device().is_cpu()) {
    AOTIRT_ASSIGN_OR_RETURN(Tensor host, copy_tensor_to(self, DeviceId{}, impl->dtype()));
    AOTIRT_RETURN_IF_ERROR(copy_tensor(out, *host.impl(), false));
  } else {
    AOTIRT_RETURN_IF_ERROR(copy_tensor(out, *impl, false));
  }
  AOTIRT_ASSIGN_OR_RETURN(Device * dev, get_device(device.is_cpu() ? impl->device() : device));
  AOTIRT_RETURN_IF_ERROR(dev->synchronize());
  return Tensor(std::make_shared<TensorImpl>(std::move(out)));
}

}  // namespace

Result<Tensor> Tensor::to(DeviceId device, DType dtype) const {
  return guarded("Tensor::to", [&] { return copy_tensor_to(*this, device, dtype); });
}

// ---- Model ----

Model::Model(std::unique_ptr<ModelState> state) : state_(std::move(state)) {}
Model::~Model() = default;

Result<std::unique_ptr<Model>> Model::load(const std::string& path, const LoadOptions& options) {
  return guarded("loading a model", [&]() -> Result<std::unique_ptr<Model>> {
    Result<std::unique_ptr<ModelState>> state = ModelState::load(path, options);
    if (!state.ok()) {
      set_last_error(state.status());
      return state.take_status();
    }
    return std::unique_ptr<Model>(new Model(std::move(state).value()));
  });
}

const PackageInfo& Model::package() const { return state_->info(); }
DeviceId Model::device() const { return state_->device_id(); }
size_t Model::num_inputs() const { return state_->inputs().size(); }
size_t Model::num_outputs() const { return state_->outputs().size(); }
const std::vector<TensorSpec>& Model::inputs() const { return state_->inputs(); }
const std::vector<TensorSpec>& Model::outputs() const { return state_->outputs(); }

Result<std::vector<Tensor>> Model::run(const std::vector<Tensor>& inputs, const RunOptions& options) {
  return guarded("running a model", [&] {
    Result<std::vector<Tensor>> r = state_->run(inputs, options);
    if (!r.ok()) set_last_error(r.status());
    return r;
  });
}

void Model::set_memory_limit(size_t bytes) { state_->device()->allocator().set_limit(bytes); }

WeightStats Model::weight_stats() const { return state_->weight_stats(); }

GraphStats Model::graph_stats() const {
  try {
    return state_->graph_stats();
  } catch (...) {
    return GraphStats();  // out of memory for the failure message's copy
  }
}

Result<PackageInfo> inspect_package(const std::string& path) {
  // Reads the package as data only: the library is parsed as ELF, never
  // loaded, so no code from the package runs (SECURITY.md).
  return guarded("inspecting a package", [&]() -> Result<PackageInfo> {
    Result<Pt2Package> p = open_pt2_package(path);
    if (!p.ok()) {
      set_last_error(p.status());
      return p.take_status();
    }
    Status shims = resolve_imported_shims(p.value());
    if (!shims.ok()) {
      set_last_error(shims);
      return shims;
    }
    return std::move(p.value().info);
  });
}

std::string last_error() {
  try {
    const Status& s = get_last_error();
    return s.ok() ? std::string() : s.to_string();
  } catch (...) {
    return std::string();
  }
}

}  // namespace aotirt

extern "C" AOTIRT_API const char* aotirt_last_error_message(void) noexcept {
  thread_local std::string text;
  try {
    text = aotirt::last_error();
  } catch (...) {
    text.clear();
  }
  return text.c_str();
}

namespace {

// What aotirt_run_begin hands out: the device's scope, or none where the
// device holds nothing per run.
struct ShimRun {
  std::unique_ptr<aotirt::Device::RunScope> scope;
};

}  // namespace

extern "C" AOTIRT_API int32_t aotirt_run_begin(int32_t device_type, int32_t device_index, void** run) noexcept {
  try {
    if (!run) {
      aotirt::set_last_error(AOTIRT_STATUS(kInvalidArgument, "aotirt_run_begin: 'run' is null"));
      return 1;
    }
    *run = nullptr;
    aotirt::Result<aotirt::Device*> dev =
        aotirt::get_device(aotirt::DeviceId{static_cast<aotirt::DeviceType>(device_type), device_index});
    if (!dev.ok()) {
      aotirt::Status s = dev.status();
      aotirt::set_last_error(s.annotate("aotirt_run_begin"));
      return 1;
    }
    auto r = std::make_unique<ShimRun>();
    r->scope = dev.value()->enter_run();
    *run = r.release();
    return 0;
  } catch (const std::exception& e) {
    aotirt::set_last_error(AOTIRT_STATUS(kInternal, "aotirt_run_begin: {}", e.what()));
    return 1;
  }
}

extern "C" AOTIRT_API int32_t aotirt_run_end(void* run) noexcept {
  std::unique_ptr<ShimRun> r(static_cast<ShimRun*>(run));
  if (!r) {
    aotirt::set_last_error(AOTIRT_STATUS(kInvalidArgument, "aotirt_run_end: 'run' is null"));
    return 1;
  }
  try {
    aotirt::Status s = r->scope ? r->scope->finish() : aotirt::Status();
    r.reset();
    if (s.ok()) return 0;
    aotirt::set_last_error(s);
    return 1;
  } catch (const std::exception& e) {
    aotirt::set_last_error(AOTIRT_STATUS(kInternal, "aotirt_run_end: {}", e.what()));
    return 1;
  }
}

namespace aotirt {

void set_shim_profiling(bool on) { g_shim_profiling.store(on, std::memory_order_relaxed); }

std::vector<ShimProfileEntry> shim_profile(bool reset) try {
  std::vector<ShimProfileEntry> out;
  for (const ShimProfileCount& c : shim_profile_counts(reset)) {
    ShimProfileEntry e;
    e.name = c.name;
    e.calls = c.calls;
    e.total_us = static_cast<double>(c.ns) / 1000.0;
    out.push_back(std::move(e));
  }
  return out;
} catch (...) {
  return {};  // out of memory: no profile rather than an exception
}

const char* version() { return "0.1.0"; }

const char* spec_source_name(SpecSource source) {
  switch (source) {
    case SpecSource::kAotirtMetadata: return "aotirt metadata";
    case SpecSource::kWrapperSource: return "wrapper source";
    case SpecSource::kNone: break;
  }
  return "none";
}

}  // namespace aotirt
