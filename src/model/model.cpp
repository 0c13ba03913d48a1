// Loading a model (package, device, library, container, weights) and
// running it: the checks on what the package claims, the handles the
// container steals, and the CUDA-graph mode.
#include <dlfcn.h>
#include <fcntl.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <new>

#include "base/fault.h"
#include "base/file_util.h"
#include "base/library_resources.h"
#include "base/log.h"
#include "core/constant_load.h"
#include "base/status.h"
#include "model/model_state.h"
#include "shim/common/shim_symbols.h"
#include "shim/common/shim_util.h"

namespace aotirt {
namespace {

// OpenMP's runtime must outlive every model library that used it: its worker
// threads keep running after a library is closed.
void pin_needed_runtimes(const std::vector<std::string>& undefined) {
  bool uses_omp = std::any_of(undefined.begin(), undefined.end(),
                              [](const std::string& s) { return s.rfind("GOMP_", 0) == 0 || s.rfind("omp_", 0) == 0; });
  if (uses_omp) dlopen("libgomp.so.1", RTLD_NOW | RTLD_GLOBAL);
}

// Debug-level timing of the load phases, with the process's memory, for
// finding where cold start and peak memory go (AOTIRT_LOG_LEVEL=debug).
class LoadTrace {
 public:
  explicit LoadTrace(const std::string& path) : on_(log_level() <= LogLevel::kDebug), path_(path) {
    start_ = last_ = std::chrono::steady_clock::now();
  }
  void mark(const char* phase) {
    if (!on_) return;
    const auto now = std::chrono::steady_clock::now();
    const MemoryUsage m = process_memory_usage();
    AOTIRT_LOG(kDebug, "load {}: {} {:.1f} ms (total {:.1f} ms, RSS {} MiB, peak {} MiB)", path_, phase,
               std::chrono::duration<double, std::milli>(now - last_).count(),
               std::chrono::duration<double, std::milli>(now - start_).count(), m.rss >> 20, m.peak_rss >> 20);
    last_ = now;
  }

 private:
  bool on_;
  std::string path_;
  std::chrono::steady_clock::time_point start_, last_;
};

// |hint|: the likely cause, when the library left no message of its own
// with aotirt (it prints its exceptions to stderr).
Status run_error(const char* what, const char* hint = nullptr) {
  const Status& shim_error = get_last_error();
  if (!shim_error.ok()) {
    Status s = shim_error;
    return s.annotate(what);
  }
  if (!hint) hint = "a wrong input shape, dtype or layout is the usual cause";
  return AOTIRT_STATUS(kInternal,
                       "{} failed inside the model library (its own message, if any, was printed to stderr; {})",
                       what, hint);
}

}  // namespace

Result<std::unique_ptr<ModelState>> ModelState::load(const std::string& path, const LoadOptions& options,
                                                     ConstantPool* pool) {
  std::unique_ptr<ModelState> m(new ModelState());
  LoadTrace trace(path);

  // Creating a GPU device (its context) is the slowest step of a load: it
  // runs on a thread of its own while this one reads the package, checks the
  // imports and extracts the kernels. A device the caller names starts
  // before the package is read; otherwise the package names it.
  Status device_status;
  std::thread device_thread;
  struct Joiner {
    std::thread& t;
    ~Joiner() {
      if (t.joinable()) t.join();
    }
  } joiner{device_thread};
  auto start_device = [&](DeviceId id) {
    device_thread = std::thread([&m, &device_status, id] {
      // An exception leaving a thread ends the process: out of memory while
      // the device is created comes back as the load's error instead.
      try {
        Result<Device*> dev = get_device(id);
        if (!dev.ok()) {
          device_status = dev.take_status();
          return;
        }
        m->device_ = dev.value();
      } catch (const std::bad_alloc&) {
        device_status = AOTIRT_STATUS(kResourceExhausted, "out of memory while creating device {}", id.to_string());
      } catch (const std::exception& e) {
        device_status = AOTIRT_STATUS(kInternal, "creating device {} failed: {}", id.to_string(), e.what());
      }
    });
  };
  if (options.device && !options.device->is_cpu()) start_device(*options.device);

  // The metadata first: it names the device, which can then start while the
  // library is read.
  AOTIRT_ASSIGN_OR_RETURN(m->package_, open_pt2_layout(path));
  const PackageInfo& info = m->package_.info;
  trace.mark("package metadata read");

  // The device: the package decides its type; the options may only pick an index.
  const BackendInfo* backend = backend_for_key(info.device_key);
  if (!backend)
    return AOTIRT_STATUS(kIncompatible, "'{}' was compiled for device '{}', which aotirt does not support", path,
                         info.device_key);
  const DeviceType type = backend->type;
  DeviceId wanted = options.device.value_or(DeviceId{type, 0});
  if (wanted.type != type)
    return AOTIRT_STATUS(kIncompatible, "'{}' was compiled for {} but device {} was requested", path,
                         info.device_key, wanted.to_string());
  m->device_id_ = wanted;
  AOTIRT_RETURN_IF_ERROR(check_package_host(m->package_));
  for (const std::string& w : info.warnings) AOTIRT_LOG(kWarning, "'{}': {}", path, w);
  if (options.cuda_graph) {
    if (!backend->records_graphs)
      return AOTIRT_STATUS(kInvalidArgument, "CUDA graphs were requested, but '{}' is a {} model", path,
                           info.device_key);
    m->graph_mode_ = true;
    m->graph_warmup_runs_ = static_cast<size_t>(std::max(options.graph_warmup_runs, 1));
    m->graph_inputs_in_place_ = options.graph_inputs_in_place;
  }

  if (!device_thread.joinable()) start_device(m->device_id_);
  AOTIRT_RETURN_IF_ERROR(read_pt2_library(m->package_));
  trace.mark("library read");
  // The GEMM and convolution libraries load on threads of their own.
  m->prewarm_ = prewarm_backend(m->device_id_, m->package_.undefined_symbols);
  m->prewarm_pending_.store(!m->prewarm_.empty());

  // Every imported shim must exist before the library is opened; listing them
  // all beats dlopen's "first undefined symbol" message.
  AOTIRT_RETURN_IF_ERROR(resolve_imported_shims(m->package_));
  std::vector<std::string> missing;
  for (const auto& s : info.imported_shims)
    if (!s.provided) missing.push_back(s.name);
  if (!missing.empty()) {
    std::string list;
    for (const auto& s : missing) list += (list.empty() ? "" : ", ") + s;
    return AOTIRT_STATUS(kUnimplemented,
                         "the model imports {} aoti_torch_* function(s) that aotirt does not provide: {}",
                         missing.size(), list);
  }
  pin_needed_runtimes(m->package_.undefined_symbols);
  trace.mark("shims checked");

  // Only the kernel files this device loads are written out: none for a CPU
  // model, whose kernels are compiled into its library.
  const char* cubin_dir = nullptr;
  const std::vector<const ZipEntry*> kernels = kernels_for_device(m->package_, m->device_id_.type);
  if (!kernels.empty()) {
    AOTIRT_ASSIGN_OR_RETURN(m->kernel_dir_, TempDir::create("aotirt-kernels-"));
    for (const ZipEntry* k : kernels) {
      std::string base = k->name.substr(k->name.rfind('/') + 1);
      std::string out = m->kernel_dir_.path() + "/" + base;
      UniqueFd fd(::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
      if (fd.get() < 0) return AOTIRT_STATUS(kIoError, "cannot write kernel file {}", out);
      AOTIRT_RETURN_IF_ERROR(m->package_.zip->extract_to_fd(*k, fd.get()));
    }
    cubin_dir = m->kernel_dir_.path().c_str();
  }

  trace.mark("kernels extracted");

  // A GPU model's library opens while its device is still being created:
  // the runtime functions it imports are aotirt's own, global already. If
  // that fails, it is opened again once the device has checked them.
  const BackendInfo* device_backend = backend_for(m->device_id_.type);
  const std::vector<ImportOverride> imports = device_backend && device_backend->library_imports
                                                  ? device_backend->library_imports()
                                                  : std::vector<ImportOverride>();
  auto open_library = [&] {
    Result<std::unique_ptr<ModelLibrary>> l = ModelLibrary::open(m->package_.library_bytes, info.model_name, imports);
    trace.mark("library opened");
    return l;
  };
  Result<std::unique_ptr<ModelLibrary>> library = AOTIRT_STATUS(kUnavailable, "the library is not open");
  if (!m->device_id_.is_cpu()) library = open_library();
  device_thread.join();
  // The device's error is the more basic one (no GPU, wrong architecture).
  // When the package picked the device, the message says so.
  if (!device_status.ok() && !options.device)
    return device_status.annotate(fmt::format("'{}' was compiled for {}", path, m->device_id_.to_string()));
  AOTIRT_RETURN_IF_ERROR(device_status);
  AOTIRT_RETURN_IF_ERROR(m->device_->check_package(m->package_.metadata));
  if (options.memory_limit_bytes) m->device_->allocator().set_limit(options.memory_limit_bytes);
  // Runtime symbols the library imports (SLEEF, the CUDA runtime) must be
  // global before it is opened.
  AOTIRT_RETURN_IF_ERROR(m->device_->prepare_model_load());
  m->device_->add_model();
  m->counted_on_device_ = true;
  trace.mark("device ready");
  if (!library.ok()) library = open_library();
  if (!library.ok()) return library.take_status();
  m->library_ = std::move(library).value();
  // The bytes now live in the memfd; don't keep a second copy.
  std::string().swap(m->package_.library_bytes);

  clear_last_error();
  std::string device_str = m->device_id_.is_cpu() ? "cpu" : m->device_id_.to_string();
  size_t runners = options.num_runners ? options.num_runners : 1;
  bool created = false;
  {
    ScopedLibraryResources scope(&m->library_->resources());
    created = m->library_->api().create_with_device(&m->container_, runners, device_str.c_str(), cubin_dir) == 0;
  }
  if (!created || !m->container_) {
    m->container_ = nullptr;
    return run_error("creating the model container");
  }
  trace.mark("container created");
  AOTIRT_RETURN_IF_ERROR(m->load_weights(pool));
  trace.mark("weights loaded");

  // Names and specs of inputs and outputs.
  const ContainerApi& api = m->library_->api();
  if (m->graph_mode_ && !api.run_single_threaded)
    return AOTIRT_STATUS(kIncompatible,
                         "CUDA graphs need AOTInductorModelContainerRunSingleThreaded, which the library of '{}' "
                         "lacks (built by torch older than 2.6?)",
                         path);
  size_t n_in = 0, n_out = 0;
  if (api.get_num_inputs(m->container_, &n_in) != 0 || api.get_num_outputs(m->container_, &n_out) != 0)
    return run_error("querying the model's inputs and outputs");
  // The metadata only describes the library; where they disagree the
  // library is right. A count that differs means the metadata is not this
  // library's: refused. Dtypes and shapes are checked by the library itself
  // at every run (its generated input checks, which ModelLibrary turned on),
  // so metadata that is wrong about them cannot make a kernel read past an
  // input.
  // Specs read from the wrapper source are a hint: where they miscount,
  // they are dropped rather than refusing a library that may well be right.
  if (!info.inputs.empty() && info.inputs.size() != n_in) {
    if (info.spec_source != SpecSource::kWrapperSource)
      return AOTIRT_STATUS(kDataLoss, "package metadata lists {} inputs but the model library takes {}",
                           info.inputs.size(), n_in);
    AOTIRT_LOG(kWarning, "'{}': the wrapper source lists {} inputs but the model library takes {}; input dtypes and "
               "shapes are unknown", path, info.inputs.size(), n_in);
    PackageInfo& dropped = m->package_.info;
    dropped.inputs.clear();
    dropped.outputs.clear();
    dropped.spec_source = SpecSource::kNone;
    dropped.spec_note = "the wrapper source does not match the library";
  }

  m->inputs_ = info.inputs.empty() ? std::vector<TensorSpec>(n_in) : info.inputs;
  // Output specs only label the outputs: used when their count fits.
  m->outputs_ = info.outputs.size() == n_out ? info.outputs : std::vector<TensorSpec>(n_out);
  for (size_t i = 0; i < n_in; ++i) {
    const char* name = nullptr;
    if (m->inputs_[i].name.empty() && api.get_input_name(m->container_, i, &name) == 0 && name)
      m->inputs_[i].name = name;
  }
  for (size_t i = 0; i < n_out; ++i) {
    const char* name = nullptr;
    if (m->outputs_[i].name.empty() && api.get_output_name(m->container_, i, &name) == 0 && name)
      m->outputs_[i].name = name;
  }
  return m;
}

namespace {

// Follows the library as it copies its constants out of the blob: it
// keeps their storages, to mark the immutable ones once the copy is done, and
// drops the blob's pages behind the copy.
class WeightLoad : public ConstantLoadObserver {
 public:
  // |blob|: the mapped blob the library copies from (null when it reads
  // from elsewhere). |sizes|: the blob bytes of each constant the library
  // will create, in order, when it reports them. |what| names the blob in
  // errors.
  WeightLoad(const MappedRegion* blob, std::vector<size_t> sizes, std::string what)
      : blob_(blob), sizes_(std::move(sizes)), what_(std::move(what)) {}

  // Before the library starts: the first constant's bytes.
  Status begin() { return read_ahead(0); }

  Status on_constant(const TensorImpl& t) override {
    if (!t.storage()) return Status();
    const size_t k = storages_.size();
    storages_.push_back(t.storage());
    tensors_.push_back(t);
    // The library reads its constants in blob order, each right before it
    // wraps it. A prepacked weight's storage size is nominal, so the
    // library's own sizes go first; a wrong guess only costs a re-read
    // from the page cache.
    read_ += k < sizes_.size() ? sizes_[k] : t.storage()->nbytes();
    if (blob_ && read_ >= released_ + kReleaseStep) {
      release_pages_before(*blob_, read_);
      released_ = read_;
    }
    return read_ahead(k + 1);
  }
  std::vector<StorageRef>& storages() { return storages_; }
  const std::vector<TensorImpl>& tensors() const { return tensors_; }

 private:
  // Reads constant |k|'s bytes in before the library copies them: a read
  // error inside the library's copy would be SIGBUS, here it fails the
  // shim call and the load. The constant's size must be the library's own.
  Status read_ahead(size_t k) {
    if (!blob_ || k >= sizes_.size()) return Status();
    if (int e = fault::check(fault::Point::kWeightsRead))
      return AOTIRT_STATUS(kIoError, "reading {} bytes {}..{} failed: {} (injected fault)", what_, read_,
                           read_ + sizes_[k], std::strerror(e));
    return populate_range(*blob_, read_, sizes_[k], what_);
  }

  static constexpr size_t kReleaseStep = size_t{4} << 20;
  const MappedRegion* blob_;
  std::vector<size_t> sizes_;
  std::string what_;
  std::vector<StorageRef> storages_;
  std::vector<TensorImpl> tensors_;  // the constants themselves, for a ModelGroup
  size_t read_ = 0, released_ = 0;
};

// Collects the handles a library takes on the user-managed constants it is
// given (aoti_torch_new_tensor_handle), which it never deletes.
class BorrowedHandleWatch : public ConstantLoadObserver {
 public:
  // |out| has room reserved for every handle expected: taking more fails.
  explicit BorrowedHandleWatch(std::vector<TensorImpl*>* out) : out_(out) {}
  Status on_constant(const TensorImpl&) override { return Status(); }
  Status on_new_handle(TensorImpl* h) override {
    AOTIRT_ENSURE(out_->size() < out_->capacity(), kInternal,
                  "the model library took more handles on its shared weights than it was given weights");
    out_->push_back(h);
    return Status();
  }

 private:
  std::vector<TensorImpl*>* out_;
};

}  // namespace

Status resolve_imported_shims(Pt2Package& p) {
  AOTIRT_RETURN_IF_ERROR(ensure_shims_global());
  p.info.imported_shims.clear();
  for (const std::string& s : p.undefined_symbols)
    if (s.rfind("aoti_torch_", 0) == 0) p.info.imported_shims.push_back({s, symbol_in_global_scope(s)});
  return Status();
}

Status ModelState::load_weights(ConstantPool* pool) {
  const ZipEntry* w = package_.weights;
  if (!w) {
    // Weights compiled into the library, copied as its container was made:
    // too late to share them.
    const std::vector<size_t> sizes = constant_blob_sizes();
    weight_stats_.constants = sizes.size();
    for (size_t b : sizes) weight_stats_.held_bytes += b;
    if (pool)
      AOTIRT_LOG(kInfo, "'{}' has its weights compiled into its library: it shares none with its group",
                 package_.info.path);
    return Status();
  }
  const ContainerApi& api = library_->api();
  if (!api.update_constants_from_blob)
    return AOTIRT_STATUS(kIncompatible,
                         "the package has an external weights blob but its library lacks "
                         "AOTInductorModelUpdateConstantsFromBlob (built by torch older than 2.9)");
  // The library copies as many bytes out of the blob as its constants take,
  // whatever the blob's length: a short blob would be read past its end
  // (a crash, or garbage weights and a run that "succeeds").
  std::optional<uint64_t> expected = expected_blob_bytes();
  if (!expected)
    AOTIRT_LOG(kWarning, "'{}': the model library does not say how long its weights blob is; {} is not checked",
               package_.info.path, w->name);
  else if (*expected != w->size)
    return AOTIRT_STATUS(kDataLoss,
                         "'{}': the weights blob {} is {} bytes, but the model library expects {} bytes (the "
                         "package is truncated or its blob belongs to another model)",
                         package_.info.path, w->name, w->size, *expected);
  // What a ModelGroup holds already. When that is every weight, the blob
  // is not read at all.
  std::optional<std::vector<ConstantInfo>> table;
  std::vector<Borrowed> borrowed;
  if (pool) {
    table = constant_table();
    if (!table) {
      AOTIRT_LOG(kInfo, "the model library of '{}' cannot list its constants: it shares no weights with its group",
                 package_.info.path);
    } else {
      AOTIRT_ASSIGN_OR_RETURN(borrowed, match_pool(*pool, *table));
    }
  }
  size_t loaded = 0, loaded_bytes = 0;
  if (table)
    for (const ConstantInfo& c : *table)
      if (!c.folded) {
        ++loaded;
        loaded_bytes += c.nbytes;
      }
  if (!borrowed.empty() && borrowed.size() == loaded) {
    AOTIRT_RETURN_IF_ERROR(borrow_constants(borrowed, *table, true));
    weight_stats_.constants = loaded;
    return Status();
  }

  // PyTorch stores package entries uncompressed, so the blob is mapped
  // straight out of the .pt2; the model copies it into its own buffers.
  MappedRegion mapped;
  uint64_t offset = 0;  // of the mapped blob in the package file
  std::string copy;
  const uint8_t* data = nullptr;
  if (w->stored) {
    AOTIRT_ASSIGN_OR_RETURN(offset, package_.zip->data_offset(*w));
    AOTIRT_ASSIGN_OR_RETURN(mapped, MappedRegion::map(package_.info.path, offset, w->size));
    data = mapped.data();
  } else {
    AOTIRT_ASSIGN_OR_RETURN(copy, package_.zip->read(*w));
    data = reinterpret_cast<const uint8_t*>(copy.data());
  }
  // An empty blob (of a model whose constants take no bytes) maps to
  // nothing; the library still wants a pointer.
  static const uint8_t kEmpty[64] = {};
  if (!data) data = kEmpty;
  // A device may take over the library's copies out of the mapped blob
  // (CUDA: pinned reads of the file on several threads).
  std::unique_ptr<HostUpload> upload;
  if (mapped.data()) {
    AOTIRT_ASSIGN_OR_RETURN(upload, device_->begin_host_upload(data, w->size, package_.info.path, offset));
  }
  WeightLoad watch(mapped.data() && !upload ? &mapped : nullptr, constant_blob_sizes(),
                   fmt::format("the weights blob {} of '{}'", w->name, package_.info.path));
  AOTIRT_RETURN_IF_ERROR(watch.begin());
  clear_last_error();
  bool failed = false;
  {
    ScopedConstantLoadObserver scope(&watch);
    ScopedLibraryResources resources(&library_->resources());
    failed = api.update_constants_from_blob(container_, data) != 0;
  }
  // The upload's own error (a short read, say) says more than the library's
  // report of the copy it failed.
  if (upload) {
    Status s = upload->finish();
    if (!s.ok()) return s.annotate("loading the weights");
  }
  if (failed) return run_error("loading the weights");
  release_pages_before(mapped, mapped.size());
  mark_immutable_constants(watch.storages());
  if (table) {
    weight_stats_.constants = loaded;
    weight_stats_.held_bytes = loaded_bytes;
  } else {
    const std::vector<size_t> sizes = constant_blob_sizes();
    weight_stats_.constants = sizes.size();
    for (size_t b : sizes) weight_stats_.held_bytes += b;
  }
  if (!pool || !table) return Status();
  const std::vector<TensorImpl>& tensors = watch.tensors();
  if (tensors.size() != loaded) {
    AOTIRT_LOG(kInfo, "the model library of '{}' created {} constants for {} in its list: it shares no weights "
               "with its group", package_.info.path, tensors.size(), loaded);
    return Status();
  }
  // The library copied every weight; those its group holds already are
  // read from the group's copy instead, so that all packages see one state.
  // A shape or layout the size check could not see is caught here.
  for (const Borrowed& b : borrowed) {
    const TensorImpl& own = tensors[b.loaded];
    const TensorImpl& held = b.held->tensor;
    AOTIRT_ENSURE(own.sizes() == held.sizes() && own.strides() == held.strides() &&
                      own.storage_offset() == held.storage_offset(),
                  kIncompatible,
                  "'{}': weight '{}' has shape {} (strides {}) but {} (strides {}) in '{}': the packages are not "
                  "one model's",
                  package_.info.path, (*table)[b.index].fqn, dims_to_string(own.sizes().data(), own.dim()),
                  dims_to_string(own.strides().data(), own.dim()), dims_to_string(held.sizes().data(), held.dim()),
                  dims_to_string(held.strides().data(), held.dim()), b.held->package);
  }
  if (!borrowed.empty()) AOTIRT_RETURN_IF_ERROR(borrow_constants(borrowed, *table, false));
  share_constants(*pool, *table, tensors, borrowed);
  return Status();
}

std::optional<std::vector<ModelState::ConstantInfo>> ModelState::constant_table() const {
  const ContainerApi& api = library_->api();
  size_t n = 0;
  if (!api.get_num_constants || !api.get_constant_name || !api.get_constant_original_fqn ||
      !api.get_constant_from_folded || !api.get_constant_dtype || !api.get_constant_data_size ||
      api.get_num_constants(container_, &n) != 0)
    return std::nullopt;
  std::vector<ConstantInfo> table(n);
  for (size_t i = 0; i < n; ++i) {
    ConstantInfo& c = table[i];
    const char* name = nullptr;
    const char* fqn = nullptr;
    if (api.get_constant_name(container_, i, &name) != 0 || !name ||
        api.get_constant_original_fqn(container_, i, &fqn) != 0 ||
        api.get_constant_from_folded(container_, i, &c.folded) != 0 ||
        api.get_constant_dtype(container_, i, &c.dtype) != 0 ||
        api.get_constant_data_size(container_, i, &c.nbytes) != 0)
      return std::nullopt;
    c.name = name;
    if (fqn) c.fqn = fqn;
  }
  return table;
}

Result<std::vector<ModelState::Borrowed>> ModelState::match_pool(const ConstantPool& pool,
                                                                 const std::vector<ConstantInfo>& table) const {
  std::vector<Borrowed> borrowed;
  if (!library_->api().update_user_managed_constants) {
    AOTIRT_LOG(kInfo, "the model library of '{}' lacks AOTInductorModelContainerUpdateUserManagedConstantBufferPairs "
               "(built by torch older than 2.8?): it shares no weights with its group", package_.info.path);
    return borrowed;
  }
  size_t loaded = 0;
  for (size_t i = 0; i < table.size(); ++i) {
    const ConstantInfo& c = table[i];
    if (c.folded) continue;
    const size_t k = loaded++;
    if (c.fqn.empty()) continue;
    const PooledConstant* held = pool.find(c.fqn);
    if (!held) continue;
    const DType dtype = held->tensor.dtype();
    AOTIRT_ENSURE(dtype_is_valid(c.dtype) && static_cast<DType>(c.dtype) == dtype, kIncompatible,
                  "'{}': weight '{}' is {} but {} in '{}': the packages are not one model's",
                  package_.info.path, c.fqn,
                  dtype_is_valid(c.dtype) ? dtype_name(static_cast<DType>(c.dtype)) : "of an unknown dtype",
                  dtype_name(dtype), held->package);
    AOTIRT_ENSURE(c.nbytes == held->nbytes, kIncompatible,
                  "'{}': weight '{}' takes {} bytes but {} in '{}': the packages are not one model's",
                  package_.info.path, c.fqn, c.nbytes, held->nbytes, held->package);
    // A model's constants on another device (the host constants of a CUDA
    // model) are its own: the container takes user-managed constants only
    // on its own device.
    if (held->tensor.device() != device_id_) continue;
    borrowed.push_back(Borrowed{i, k, held});
  }
  return borrowed;
}

Status ModelState::borrow_constants(const std::vector<Borrowed>& borrowed, const std::vector<ConstantInfo>& table,
                                    bool all) {
  // Handles for the call only: the library takes handles of its own.
  std::vector<std::unique_ptr<TensorImpl>> views;
  std::vector<ConstantMapEntry> entries;
  views.reserve(borrowed.size());
  entries.reserve(borrowed.size());
  for (const Borrowed& b : borrowed) {
    views.push_back(std::make_unique<TensorImpl>(b.held->tensor));
    entries.push_back(ConstantMapEntry{table[b.index].name.c_str(), handle_of(views.back().get())});
  }
  borrowed_handles_.reserve(borrowed_handles_.size() + borrowed.size());
  const size_t before = borrowed_handles_.size();
  BorrowedHandleWatch watch(&borrowed_handles_);
  clear_last_error();
  bool failed = false;
  {
    ScopedConstantLoadObserver scope(&watch);
    ScopedLibraryResources resources(&library_->resources());
    // Every weight is given when |all|: the library then checks that
    // none is missing.
    failed = library_->api().update_user_managed_constants(container_, entries.data(), entries.size(),
                                                           /*use_inactive=*/false, /*validate_full_update=*/all) != 0;
  }
  if (failed)
    return run_error("handing the group's shared weights to the model library",
                     "a weight on another device than the model's is the usual cause");
  // The library takes one handle per weight and does not check that it got
  // it: one missing means a constant it would run with a null handle.
  if (borrowed_handles_.size() - before != entries.size())
    return run_error("handing the group's shared weights to the model library",
                     "it could not take a handle on each of them");
  for (const Borrowed& b : borrowed) {
    weight_stats_.shared_constants++;
    weight_stats_.shared_bytes += b.held->nbytes;
  }
  AOTIRT_LOG(kDebug, "'{}' borrows {} weights ({} bytes) from its group", package_.info.path, borrowed.size(),
             weight_stats_.shared_bytes);
  return Status();
}

void ModelState::share_constants(ConstantPool& pool, const std::vector<ConstantInfo>& table,
                                 const std::vector<TensorImpl>& tensors, const std::vector<Borrowed>& borrowed) const {
  size_t loaded = 0, next = 0;
  for (size_t i = 0; i < table.size(); ++i) {
    const ConstantInfo& c = table[i];
    if (c.folded) continue;
    const size_t k = loaded++;
    if (next < borrowed.size() && borrowed[next].index == i) {
      ++next;
      continue;
    }
    if (c.fqn.empty() || !tensors[k].defined() || tensors[k].device() != device_id_) continue;
    pool.add(c.fqn, PooledConstant{tensors[k], c.nbytes, package_.info.path});
  }
}

std::vector<size_t> ModelState::constant_blob_sizes() const {
  std::optional<std::vector<size_t>> sizes = library_constant_sizes();
  return sizes ? std::move(*sizes) : std::vector<size_t>();
}

std::optional<std::vector<size_t>> ModelState::library_constant_sizes() const {
  const ContainerApi& api = library_->api();
  std::vector<size_t> sizes;
  size_t n = 0;
  if (!api.get_num_constants || !api.get_constant_from_folded || !api.get_constant_data_size ||
      api.get_num_constants(container_, &n) != 0)
    return std::nullopt;
  for (size_t i = 0; i < n; ++i) {
    bool folded = false;
    size_t bytes = 0;
    if (api.get_constant_from_folded(container_, i, &folded) != 0 ||
        api.get_constant_data_size(container_, i, &bytes) != 0)
      return std::nullopt;
    if (!folded) sizes.push_back(bytes);
  }
  return sizes;
}

std::optional<uint64_t> ModelState::expected_blob_bytes() const {
  const ContainerApi& api = library_->api();
  // The library's own figure (torch 2.9+) ...
  uint64_t bytes = 0;
  if (api.get_constants_blob_size && api.get_constants_blob_size(container_, &bytes) == 0) return bytes;
  // ... else what its loader reads: the sizes of the constants that are not
  // folded, back to back (load_constants in torch's model_base.h).
  std::optional<std::vector<size_t>> sizes = library_constant_sizes();
  if (!sizes) return std::nullopt;
  uint64_t total = 0;
  for (size_t s : *sizes) total += s;
  return total;
}

// Parameters and tensor constants never change after load, so the ops may
// keep forms derived from them (a weight reordered for a kernel) with their
// storage. Buffers may be updated in place by the model, and stay mutable.
void ModelState::mark_immutable_constants(std::vector<StorageRef>& storages) {
  const ContainerApi& api = library_->api();
  size_t n = 0;
  if (!api.get_num_constants || !api.get_constant_type || !api.get_constant_from_folded ||
      api.get_num_constants(container_, &n) != 0)
    return;
  // The library creates one tensor per constant that is not folded, in order.
  std::vector<int32_t> types;
  for (size_t i = 0; i < n; ++i) {
    bool folded = false;
    int32_t type = 0;
    if (api.get_constant_from_folded(container_, i, &folded) != 0 || api.get_constant_type(container_, i, &type) != 0)
      return;
    if (!folded) types.push_back(type);
  }
  if (types.size() != storages.size()) {
    AOTIRT_LOG(kDebug, "the model created {} constants for {} in its list; none is marked immutable",
               storages.size(), types.size());
    return;
  }
  constexpr int32_t kParameter = 1, kTensorConstant = 3;
  size_t marked = 0;
  for (size_t i = 0; i < types.size(); ++i) {
    if (types[i] != kParameter && types[i] != kTensorConstant) continue;
    storages[i]->mark_immutable();
    ++marked;
  }
  AOTIRT_LOG(kDebug, "{} of the model's {} constants are immutable", marked, types.size());
}

void ModelState::join_prewarm() {
  for (std::thread& t : prewarm_)
    if (t.joinable()) t.join();
  prewarm_.clear();
}

ModelState::~ModelState() {
  join_prewarm();
  // Graphs launch the library's kernels and read its buffers: they go first.
  graphs_.clear();
  if (container_ && library_) {
    ScopedLibraryResources resources(&library_->resources());
    if (library_->api().destroy(container_) != 0) {
      AOTIRT_LOG(kWarning, "deleting the model container failed: {}", get_last_error().to_string());
      // It may still hold them: a leak beats a use after free.
      borrowed_handles_.clear();
    }
  }
  for (TensorImpl* h : borrowed_handles_) delete h;
  borrowed_handles_.clear();
  container_ = nullptr;
  library_.reset();
  kernel_dir_.remove();
  // The last model on its device takes the ops' caches with it.
  if (counted_on_device_) device_->remove_model();
}

Status ModelState::validate_input(size_t i, const TensorImpl& t) const {
  const TensorSpec& spec = inputs_[i];
  // The label is built only on failure: this runs for every input of every run.
  auto label = [&] {
    return spec.name.empty() ? fmt::format("input {}", i) : fmt::format("input {} ('{}')", i, spec.name);
  };
  // Worded as the CLI words its checks of --input files, with "the input"
  // where the CLI names the file: the Python API passes these on.
  if (spec.has_dtype && spec.dtype != t.dtype())
    return AOTIRT_STATUS(kInvalidArgument, "{}: the model expects {}, but the input holds {}", label(),
                         dtype_name(spec.dtype), dtype_name(t.dtype()));
  if (spec.has_shape) {
    bool ok = static_cast<int64_t>(spec.shape.size()) == t.dim();
    for (int64_t d = 0; ok && d < t.dim(); ++d)
      if (spec.shape[d] >= 0 && spec.shape[d] != t.sizes()[d]) ok = false;
    if (!ok) {
      std::string expected = "[";
      for (size_t d = 0; d < spec.shape.size(); ++d)
        expected += (d ? ", " : "") + (spec.shape[d] < 0 ? std::string("?") : std::to_string(spec.shape[d]));
      expected += "]";
      return AOTIRT_STATUS(kInvalidArgument, "{}: the model expects shape {}, but the input has shape {}", label(),
                           expected, dims_to_string(t.sizes().data(), t.dim()));
    }
  }
  return Status();
}

Status ModelState::check_inputs(const std::vector<Tensor>& inputs) const {
  const size_t n_in = inputs_.size();
  if (inputs.size() != n_in)
    return AOTIRT_STATUS(kInvalidArgument, "the model takes {} input(s) but {} were given", n_in, inputs.size());
  for (size_t i = 0; i < n_in; ++i) {
    const TensorImpl* t = inputs[i].impl();
    if (!t || !t->defined()) return AOTIRT_STATUS(kInvalidArgument, "input {} is an undefined tensor", i);
    AOTIRT_RETURN_IF_ERROR(validate_input(i, *t));
    if (!t->device().is_cpu() && t->device() != device_id_)
      return AOTIRT_STATUS(kInvalidArgument, "input {} is on {} but the model runs on {}", i,
                           t->device().to_string(), device_id_.to_string());
  }
  return Status();
}

// ---- input handles ----

namespace {

// A tracker's deleter: lets go of the real storage it stood for.
void release_tracked_storage(void* ctx, void*, size_t) { static_cast<Storage*>(ctx)->release(); }

}  // namespace

ModelState::InputHandles::~InputHandles() {
  // Never offered to the container: every handle is still ours. Offered but
  // not settled (an exception in between): they may be the library's now,
  // and a leak beats a double free.
  if (!offered_)
    for (AtenTensorHandle h : handles_) delete impl_of(h);
}

void ModelState::InputHandles::reserve(size_t n) {
  handles_.reserve(n);
  trackers_.reserve(n);
}

void ModelState::InputHandles::add(TensorImpl t, bool owned) {
  StorageRef tracker;
  if (owned) {
    tracker = t.storage();
  } else {
    Storage* real = t.storage().get();
    // The tracker releases this reference when it goes; so does new_owning
    // when it cannot make the tracker.
    real->retain();
    tracker = StorageRef::adopt(
        Storage::new_owning(real->data(), real->nbytes(), real->device(), &release_tracked_storage, real));
    t = TensorImpl(tracker, t.dtype(), t.sizes(), t.strides(), t.storage_offset());
  }
  AtenTensorHandle h = new_handle(std::move(t));
  // Both have room (reserve): nothing throws past the new handle.
  handles_.push_back(h);
  trackers_.push_back(std::move(tracker));
}

void ModelState::InputHandles::taken() {
  handles_.clear();
  trackers_.clear();
  offered_ = false;
}

size_t ModelState::InputHandles::reclaim() {
  size_t freed = 0;
  for (size_t i = 0; i < handles_.size(); ++i) {
    const int refs = trackers_[i]->refcount();
    if (refs == 2) {
      // This object and the handle: the library never took it.
      delete impl_of(handles_[i]);
      ++freed;
    } else if (refs > 2) {
      AOTIRT_LOG(kDebug, "input {} of a failed run is still viewed elsewhere; its handle is left alone", i);
    }
  }
  handles_.clear();
  trackers_.clear();
  offered_ = false;
  return freed;
}

Status ModelState::make_input_handles(const std::vector<Tensor>& inputs, InputHandles* handles) {
  // The container steals the input handles (it deletes them), so each gets a
  // fresh handle that views the caller's bytes: no data is copied for
  // contiguous tensors already on the model's device.
  handles->reserve(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TensorImpl* t = inputs[i].impl();
    if (t->device() == device_id_ && t->is_contiguous()) {
      // Row-major strides exactly: the library's input checks compare every
      // static stride, and a contiguous tensor may carry any stride on a
      // dimension of size 1.
      handles->add(TensorImpl(t->storage(), t->dtype(), t->sizes(), contiguous_strides(t->sizes()),
                              t->storage_offset()),
                   false);
      continue;
    }
    // Host data for a device model, or a strided view: the generated code
    // assumes the exported (contiguous) layout on the model's device.
    Result<TensorImpl> moved = empty_contiguous(t->sizes(), t->dtype(), device_id_);
    Status st = moved.ok() ? copy_tensor(moved.value(), *t, false) : moved.status();
    if (!st.ok()) return st;  // |handles| frees those made so far
    handles->add(std::move(moved.value()), true);
  }
  return Status();
}

Result<std::vector<Tensor>> ModelState::invoke(InputHandles& in, bool single_threaded, const char* what) {
  const size_t n_out = outputs_.size();
  std::vector<AtenTensorHandle> out_handles(n_out, nullptr);
  std::vector<Tensor> outputs;
  outputs.reserve(n_out);
  clear_last_error();
  const ContainerApi& api = library_->api();
  auto* run_fn = single_threaded && api.run_single_threaded ? api.run_single_threaded : api.run;
  in.offer();
  RuntimeError rc;
  {
    // The library loads its kernels lazily, during runs.
    ScopedLibraryResources resources(&library_->resources());
    rc = run_fn(container_, in.data(), in.size(), out_handles.data(), n_out, device_->current_stream(), nullptr);
  }

  // Take ownership of every returned handle exactly once: the generated code
  // may return the same handle twice when outputs alias. Until a Tensor owns
  // a handle, |orphans| does: making a Tensor can run out of memory, and the
  // handles after it must not leak.
  size_t adopted = 0;
  struct Orphans {
    const std::vector<AtenTensorHandle>& handles;
    const size_t& adopted;
    ~Orphans() {
      for (size_t j = adopted; j < handles.size(); ++j) {
        size_t first = 0;
        while (handles[first] != handles[j]) ++first;
        if (handles[j] && first == j) delete impl_of(handles[j]);  // not adopted, not seen before
      }
    }
  } orphans{out_handles, adopted};
  for (size_t i = 0; i < n_out; ++i) {
    AtenTensorHandle h = out_handles[i];
    // Handle i passes to the shared_ptr below even when that throws (it
    // then deletes the handle itself).
    adopted = i + 1;
    if (!h) {
      outputs.emplace_back();
      continue;
    }
    // Outputs are few: a linear look-back beats a hash map on this hot path.
    size_t first = 0;
    while (out_handles[first] != h) ++first;
    outputs.push_back(first < i ? outputs[first] : Tensor(std::shared_ptr<TensorImpl>(impl_of(h))));
  }
  if (rc != 0) {
    // A run the library refused before it took its inputs (its own input
    // checks throw before it steals them) leaves their handles with us.
    // Whatever it returned goes first: an output may view an input.
    outputs.clear();
    in.reclaim();
    if (library_->input_checks_forced())
      return run_error(what,
                       "its input checks are on, so an input whose dtype, shape or strides differ from what the "
                       "library was compiled for is the usual cause");
    return run_error(what, "a wrong input shape, dtype or layout is the usual cause");
  }
  in.taken();
  for (size_t i = 0; i < n_out; ++i)
    if (!outputs[i].defined()) return AOTIRT_STATUS(kInternal, "the model returned no tensor for output {}", i);
  return outputs;
}

Result<std::vector<Tensor>> ModelState::finish(std::vector<Tensor> outputs, const RunOptions& options) {
  if (options.synchronize) AOTIRT_RETURN_IF_ERROR(device_->synchronize());
  if (options.outputs_to_host && !device_id_.is_cpu()) {
    for (auto& o : outputs) {
      AOTIRT_ASSIGN_OR_RETURN(o, o.to(DeviceId{}));
    }
  }
  return outputs;
}

Result<std::vector<Tensor>> ModelState::run(const std::vector<Tensor>& inputs, const RunOptions& options) {
  const std::unique_ptr<Device::RunScope> run_scope = device_->enter_run();
  // The generated container folds its constants at its first run, for which
  // it takes its execution lock exclusively; other runs hold that lock shared
  // while they wait for a free runner, so with more callers than runners the
  // first calls could wait on each other for ever. Until one run has
  // succeeded, runs therefore go one at a time.
  std::unique_lock<std::mutex> first_lock;
  if (!first_success_.load(std::memory_order_acquire)) {
    first_lock = std::unique_lock<std::mutex>(first_success_mutex_);
    if (first_success_.load(std::memory_order_acquire)) first_lock.unlock();
  }
  if (prewarm_pending_.load(std::memory_order_acquire)) {
    std::lock_guard<std::mutex> lock(prewarm_mutex_);
    join_prewarm();
    prewarm_pending_.store(false, std::memory_order_release);
  }
  // The debug trace times the first run (kernel modules and plans load there).
  const bool trace = log_level() <= LogLevel::kDebug && !first_run_done_.exchange(true);
  const auto start = trace ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point();
  Result<std::vector<Tensor>> r = graph_mode_ ? run_graph(inputs, options) : run_eager(inputs, options, trace);
  // What the device's ops left to check at the run's end (an index a kernel
  // found out of range) fails the run.
  if (r.ok() && run_scope) {
    Status checked = run_scope->finish();
    if (!checked.ok()) r = std::move(checked.annotate("running the model"));
  }
  if (trace) {
    const MemoryUsage m = process_memory_usage();
    AOTIRT_LOG(kDebug, "first run: {:.1f} ms (RSS {} MiB, peak {} MiB)",
               std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count(),
               m.rss >> 20, m.peak_rss >> 20);
  }
  if (first_lock.owns_lock() && r.ok()) first_success_.store(true, std::memory_order_release);
  return r;
}

Result<std::vector<Tensor>> ModelState::run_eager(const std::vector<Tensor>& inputs, const RunOptions& options,
                                                  bool trace) {
  AOTIRT_RETURN_IF_ERROR(check_inputs(inputs));
  // The first run's phases in the debug trace; the model's part is waited
  // for there, so that its kernels' time is not counted as the outputs'.
  auto last = trace ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point();
  auto phase = [&](const char* what, bool wait) -> Status {
    if (!trace) return Status();
    if (wait) AOTIRT_RETURN_IF_ERROR(device_->synchronize());
    const auto now = std::chrono::steady_clock::now();
    AOTIRT_LOG(kDebug, "first run: {} {:.1f} ms", what, std::chrono::duration<double, std::milli>(now - last).count());
    last = now;
    return Status();
  };
  InputHandles in_handles;
  AOTIRT_RETURN_IF_ERROR(make_input_handles(inputs, &in_handles));
  AOTIRT_RETURN_IF_ERROR(phase("inputs placed", false));
  AOTIRT_ASSIGN_OR_RETURN(std::vector<Tensor> outputs, invoke(in_handles, false, "running the model"));
  AOTIRT_RETURN_IF_ERROR(phase("model ran", true));
  Result<std::vector<Tensor>> r = finish(std::move(outputs), options);
  if (r.ok()) AOTIRT_RETURN_IF_ERROR(phase("outputs finished", false));
  return r;
}

// ---- CUDA-graph mode ----

namespace {

constexpr size_t kMaxGraphs = 8;

// Whether |t| is recorded where it is in the in-place mode.
bool binds_in_place(const TensorImpl& t, DeviceId device) {
  return t.device() == device && t.data_ptr() != nullptr;
}

// dtype, rank and sizes of every input; in the in-place mode also the data
// pointer and strides of each input recorded in place, since the graph reads
// and writes that very memory.
std::vector<int64_t> signature_of(const std::vector<Tensor>& inputs, bool in_place, DeviceId device) {
  std::vector<int64_t> key;
  key.reserve(inputs.size() * 5);
  for (const Tensor& t : inputs) {
    const TensorImpl* impl = t.impl();
    key.push_back(static_cast<int64_t>(impl->dtype()));
    key.push_back(impl->dim());
    for (int64_t d = 0; d < impl->dim(); ++d) key.push_back(impl->sizes()[d]);
    if (in_place && binds_in_place(*impl, device)) {
      key.push_back(static_cast<int64_t>(reinterpret_cast<uintptr_t>(impl->data_ptr())));
      for (int64_t d = 0; d < impl->dim(); ++d) key.push_back(impl->strides()[d]);
    }
  }
  return key;
}

std::string shapes_text(const std::vector<Tensor>& inputs) {
  std::string s;
  for (const Tensor& t : inputs) {
    const TensorImpl* impl = t.impl();
    s += (s.empty() ? "" : ", ") + dims_to_string(impl->sizes().data(), impl->dim());
  }
  return "(" + s + ")";
}

// Whether |t| can feed a graph input by a plain device-to-device copy.
bool copies_plainly(const TensorImpl& t, const TensorImpl& dst) {
  return t.device() == dst.device() && t.dtype() == dst.dtype() && t.is_contiguous() && t.data_ptr();
}

}  // namespace

GraphStats ModelState::graph_stats() const {
  std::lock_guard<std::mutex> lock(graph_mutex_);
  return graph_stats_;
}

Status ModelState::record_graph(GraphEntry& e, const std::vector<Tensor>& inputs) {
  // The graph reads its inputs from buffers it owns. Device inputs are
  // copied in by copies recorded in the graph itself (a replay then costs
  // one launch, and a new source only retargets the copy); host inputs are
  // copied in before each replay.
  e.inputs.clear();
  e.sources.assign(inputs.size(), nullptr);
  e.staging.assign(inputs.size(), TensorImpl());
  e.in_place.assign(inputs.size(), false);
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TensorImpl& t = *inputs[i].impl();
    if (graph_inputs_in_place_ && binds_in_place(t, device_id_)) {
      e.in_place[i] = true;
      e.inputs.push_back(t);
      continue;
    }
    AOTIRT_ASSIGN_OR_RETURN(TensorImpl buf, empty_contiguous(t.sizes(), t.dtype(), device_id_));
    if (copies_plainly(t, buf) && buf.nbytes() > 0)
      e.sources[i] = t.data_ptr();
    else
      AOTIRT_RETURN_IF_ERROR(copy_tensor(buf, t, false));
    e.inputs.push_back(std::move(buf));
  }
  InputHandles in_handles;
  in_handles.reserve(e.inputs.size());
  for (const TensorImpl& t : e.inputs) in_handles.add(t, false);
  // Everything queued before the recording must be done with: the graph's
  // pool may hand out memory that earlier, still-queued work reads.
  AOTIRT_RETURN_IF_ERROR(device_->synchronize());

  std::vector<Tensor> outputs;
  Result<std::unique_ptr<DeviceGraph>> graph = device_->capture([&]() -> Status {
    for (size_t i = 0; i < inputs.size(); ++i)
      if (e.sources[i]) AOTIRT_RETURN_IF_ERROR(copy_tensor(e.inputs[i], *inputs[i].impl(), true));
    // Single-threaded: the container's other entry point records an event
    // per run, which a graph would then own.
    Result<std::vector<Tensor>> r = invoke(in_handles, true, "running the model while recording a CUDA graph");
    if (!r.ok()) return r.take_status();
    outputs = std::move(r).value();
    return Status();
  });
  if (!graph.ok()) {
    e.inputs.clear();
    return graph.take_status();
  }
  e.graph = std::move(graph).value();
  e.outputs = std::move(outputs);
  return Status();
}

Status ModelState::feed_graph(GraphEntry& e, const std::vector<Tensor>& inputs) {
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TensorImpl& src = *inputs[i].impl();
    TensorImpl& dst = e.inputs[i];
    if (e.in_place[i]) {
      // The signature holds the pointer and strides; this guards the key.
      AOTIRT_ENSURE(src.data_ptr() == dst.data_ptr() && src.strides() == dst.strides(), kInternal,
                    "input {} is not the tensor its CUDA graph was recorded with", i);
      continue;
    }
    if (!e.sources[i]) {
      // A caller that writes into the graph's own buffer needs no copy.
      if (src.data_ptr() == dst.data_ptr() && src.strides() == dst.strides()) continue;
      AOTIRT_RETURN_IF_ERROR(copy_tensor(dst, src, !src.device().is_cpu()));
      continue;
    }
    const void* from = src.data_ptr();
    if (!copies_plainly(src, dst)) {
      // Host or strided data for a recorded copy: stage it on the device.
      if (!e.staging[i].defined()) {
        AOTIRT_ASSIGN_OR_RETURN(e.staging[i], empty_contiguous(dst.sizes(), dst.dtype(), device_id_));
      }
      AOTIRT_RETURN_IF_ERROR(copy_tensor(e.staging[i], src, !src.device().is_cpu()));
      from = e.staging[i].data_ptr();
    }
    if (from != e.sources[i]) {
      AOTIRT_RETURN_IF_ERROR(e.graph->retarget_copy(dst.data_ptr(), from, dst.nbytes()));
      e.sources[i] = from;
    }
  }
  return Status();
}

Result<std::vector<Tensor>> ModelState::run_graph(const std::vector<Tensor>& inputs, const RunOptions& options) {
  AOTIRT_RETURN_IF_ERROR(check_inputs(inputs));
  std::lock_guard<std::mutex> lock(graph_mutex_);
  std::vector<int64_t> key = signature_of(inputs, graph_inputs_in_place_, device_id_);
  GraphEntry* e = nullptr;
  for (auto& g : graphs_)
    if (g->key == key) e = g.get();
  if (!e && graphs_.size() < kMaxGraphs) {
    graphs_.push_back(std::make_unique<GraphEntry>());
    e = graphs_.back().get();
    e->key = std::move(key);
  } else if (!e && !graph_overflow_warned_) {
    graph_overflow_warned_ = true;
    AOTIRT_LOG(kWarning, "CUDA graphs: {} input signatures recorded already; {} runs without a graph", kMaxGraphs,
               shapes_text(inputs));
  }

  auto eager = [&]() -> Result<std::vector<Tensor>> {
    graph_stats_.eager_runs++;
    InputHandles in_handles;
    AOTIRT_RETURN_IF_ERROR(make_input_handles(inputs, &in_handles));
    AOTIRT_ASSIGN_OR_RETURN(std::vector<Tensor> outputs, invoke(in_handles, true, "running the model"));
    return finish(std::move(outputs), options);
  };
  if (!e || e->failed) return eager();
  if (!e->graph) {
    if (e->eager_runs < graph_warmup_runs_) {
      e->eager_runs++;
      return eager();
    }
    Status s = record_graph(*e, inputs);
    if (!s.ok()) {
      e->failed = true;
      graph_stats_.failed_captures++;
      graph_stats_.last_failure = s.to_string();
      AOTIRT_LOG(kWarning, "CUDA graphs: cannot record the model for inputs {}; running it without a graph: {}",
                 shapes_text(inputs), s.to_string());
      return eager();
    }
    graph_stats_.graphs++;
  }

  Status fed = feed_graph(*e, inputs);
  if (!fed.ok()) {
    // A graph whose recorded copies cannot be pointed at the new inputs must
    // not run again: it would read the old ones.
    e->failed = true;
    e->graph.reset();
    graph_stats_.failed_captures++;
    graph_stats_.last_failure = fed.to_string();
    AOTIRT_LOG(kWarning, "CUDA graphs: cannot feed the graph for inputs {}; running without it: {}",
               shapes_text(inputs), fed.to_string());
    return eager();
  }
  AOTIRT_RETURN_IF_ERROR(e->graph->replay());
  graph_stats_.replays++;
  return finish(e->outputs, options);
}

}  // namespace aotirt
