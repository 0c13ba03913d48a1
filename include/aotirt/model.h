// aotirt::Model: load an AOTInductor .pt2 package and run it, without libtorch.
//
//   auto model = aotirt::Model::load("model.pt2");
//   if (!model.ok()) { std::cerr << model.status().to_string(); return 1; }
//   auto outputs = (*model)->run({aotirt::Tensor::from_blob(buf, {1, 3}, aotirt::DType::kFloat32)});
//
// A Model owns the model library, its weights and any files it extracted;
// destroying it releases all of them.
//
// Loading a package runs the native code inside it: load only packages you
// trust (SECURITY.md). inspect_package() reads one without running it. No
// function here throws; running out of memory is RESOURCE_EXHAUSTED. Thread
// safety: SECURITY.md, "Thread safety of aotirt::Model".
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "aotirt/status.h"
#include "aotirt/tensor.h"
#include "aotirt/types.h"

namespace aotirt {

// What is known about one input or output. Packages made by aotirt's exporter
// record dtype and shape; for other packages aotirt reads them from the
// input checks in the package's wrapper source when it has one (only names
// of outputs), and otherwise only the names the library reports are known.
struct TensorSpec {
  std::string name;
  bool has_dtype = false;
  DType dtype = DType::kFloat32;
  bool has_shape = false;
  std::vector<int64_t> shape;  // -1 marks a dynamic dimension
};

// Where a package's input and output specs came from.
enum class SpecSource {
  kNone,            // nothing recorded or readable: only the library's names, after loading
  kAotirtMetadata,  // "aotirt.inputs"/"aotirt.outputs", written by aotirt.export
  kWrapperSource,   // the input checks in the generated wrapper .cpp the package carries
};
// "aotirt metadata", "wrapper source" or "none".
AOTIRT_API const char* spec_source_name(SpecSource source);

// A package's contents, read without loading the model library.
struct PackageInfo {
  std::string path;
  std::string model_name;          // "model" unless the package says otherwise
  std::string device_key;          // "cpu", "cuda", "mps"
  std::string cpu_isa;             // "AVX512", "AVX2", "" when scalar
  std::string compute_capability;  // "90" for an sm_90 CUDA package
  std::string library_entry;       // zip entry of the .so
  size_t library_bytes = 0;
  size_t weight_bytes = 0;         // external weights blob; 0 when weights live in the .so
  bool weights_in_library = false;
  std::vector<std::string> kernel_entries;  // .cubin files
  std::vector<TensorSpec> inputs, outputs;  // empty when spec_source is kNone
  SpecSource spec_source = SpecSource::kNone;
  // When spec_source is kNone: why the wrapper source gave no specs (there
  // is none, or its input checks could not be read).
  std::string spec_note;
  // Every aoti_torch_* symbol the library imports, and whether aotirt has it.
  struct Symbol {
    std::string name;
    bool provided;
  };
  std::vector<Symbol> imported_shims;
  // Problems that do not stop the package from loading but that its user
  // should hear of (a CPU package compiled without vector instructions for a
  // CPU that has them, say). `aotirt inspect` prints them.
  std::vector<std::string> warnings;
  // The package's top-level metadata (AOTInductor's and the exporter's own
  // keys), as strings; JSON lists and objects are left out.
  std::vector<std::pair<std::string, std::string>> metadata;
};

struct LoadOptions {
  // Where to run. Unset: the package's own device (index 0). When set, its
  // type must match the package's.
  std::optional<DeviceId> device;
  size_t num_runners = 1;     // concurrent Run calls the container allows
  size_t memory_limit_bytes = 0;  // 0 = none; allocations past it fail cleanly

  // CUDA graphs (CUDA models only). For each input signature (dtypes and
  // shapes), the first |graph_warmup_runs| runs (at least 1) run normally;
  // the next one records the model into a CUDA graph, and later runs replay
  // it, which removes nearly all per-kernel launch cost. Inputs are copied
  // into device buffers the graph owns; outputs are the graph's own buffers,
  // overwritten by the next run of the same signature (copy them, or use
  // RunOptions::outputs_to_host, to keep them). Runs are serialised. When a
  // model cannot be recorded (it waits for the device mid-run, for example),
  // that signature runs without a graph and a warning is logged. At most 8
  // signatures get a graph.
  bool cuda_graph = false;
  int graph_warmup_runs = 1;
  // With cuda_graph: inputs already on the model's device are recorded where
  // they are instead of being copied into the graph's buffers, so a model
  // that updates an input in place (a KV cache) updates the caller's tensor.
  // The graph keeps a reference to those tensors and serves only runs given
  // the same ones (the same data and strides); other device tensors make a
  // signature of their own, recorded anew. Host inputs are copied as above.
  bool graph_inputs_in_place = false;
};

struct RunOptions {
  // Copy outputs back to host memory (device models only; CPU outputs are
  // already on the host).
  bool outputs_to_host = false;
  // Wait until the device has finished the run before returning. Device runs
  // are otherwise asynchronous: outputs are valid for further device work
  // and for Tensor::to, which waits itself. For timing and host interop.
  bool synchronize = false;
};

// How a model with LoadOptions::cuda_graph has run so far.
struct GraphStats {
  size_t graphs = 0;          // signatures recorded
  size_t replays = 0;         // runs served by a graph
  size_t eager_runs = 0;      // warm-up and fallback runs
  size_t failed_captures = 0; // signatures that could not be recorded
  std::string last_failure;   // why the last recording failed
};

// How a model holds its weights: the constants its package loads (folded
// constants, which the model computes at its first run, are not counted).
struct WeightStats {
  size_t constants = 0;         // weights the package has
  size_t held_bytes = 0;        // bytes of them this model's library keeps in memory
  size_t shared_constants = 0;  // weights borrowed from an earlier package of its ModelGroup
  size_t shared_bytes = 0;      // their bytes (held once, by the package that loaded them)
};

class ModelState;
class ModelGroup;

class AOTIRT_API Model {
 public:
  // Loads |path|. Fails with a Status naming the problem (missing file, not a
  // zip, no AOTI model, wrong device or ISA, missing shim symbol, a weights
  // blob of the wrong length, ...). The package's library runs as it loads.
  static Result<std::unique_ptr<Model>> load(const std::string& path, const LoadOptions& options = {});
  ~Model();
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;

  const PackageInfo& package() const;
  DeviceId device() const;
  size_t num_inputs() const;
  size_t num_outputs() const;
  const std::vector<TensorSpec>& inputs() const;
  const std::vector<TensorSpec>& outputs() const;

  // Runs the model. CPU inputs on a CPU model are used in place (zero-copy);
  // host inputs for a device model are copied to the device. Outputs own
  // their memory and live on the model's device unless |options| says host.
  // Inputs are checked against the package's specs when it records them,
  // and always by the model library's own generated checks (dtype, sizes,
  // strides, device), which aotirt turns on for this library alone.
  // May be called from several threads at once.
  Result<std::vector<Tensor>> run(const std::vector<Tensor>& inputs, const RunOptions& options = {});

  // Caps the memory aotirt's allocator hands out on this model's device
  // (shared by every model on it); 0 removes the cap. Allocations past it
  // fail the run with RESOURCE_EXHAUSTED; the model stays usable.
  void set_memory_limit(size_t bytes);

  // Counters of the CUDA-graph mode (all zero without it).
  GraphStats graph_stats() const;

  // The weights this model holds and those it borrows (ModelGroup).
  WeightStats weight_stats() const;

 private:
  friend class ModelGroup;
  explicit Model(std::unique_ptr<ModelState> state);
  std::unique_ptr<ModelState> state_;
};

// Reads a package's metadata and imported symbols without running anything:
// the library is parsed as ELF data, never loaded, so this is safe on files
// of unknown origin.
AOTIRT_API Result<PackageInfo> inspect_package(const std::string& path);

// The last error recorded on this thread by aotirt (including errors from
// shim calls made by the model library), as "CODE: message". Empty if none.
AOTIRT_API std::string last_error();

}  // namespace aotirt

// The same as aotirt::last_error(), for callers through a C foreign-function
// interface (ctypes, cffi) that call aoti_torch_* shims directly: the
// thread's last error as a NUL-terminated "CODE: message", empty if none.
// The pointer stays valid until the next call of this function on the thread.
extern "C" AOTIRT_API const char* aotirt_last_error_message(void) noexcept;

// For callers that call the aoti_torch_* shims themselves (a custom runner, a
// test): brackets the calls this thread makes on device |device_type|
// (c10's number: 0 CPU, 1 CUDA) |device_index| as one run, as a model run
// brackets its library's calls. Inside one, checks that only device kernels
// can make (an index held on the device that is out of range) are read once,
// by aotirt_run_end, rather than after each call: a call with a bad index
// then returns 0, writes nothing out of bounds, and aotirt_run_end fails.
// Both return 0 on success, 1 with the thread's last error set on failure;
// aotirt_run_end frees |run| either way. Runs nest; end them in reverse
// order, on the thread that began them.
extern "C" AOTIRT_API int32_t aotirt_run_begin(int32_t device_type, int32_t device_index, void** run) noexcept;
extern "C" AOTIRT_API int32_t aotirt_run_end(void* run) noexcept;

namespace aotirt {

// Host time spent inside the aoti_torch_* calls of model libraries, per
// function: for finding where a run's time goes on the host (the device work
// the calls queue is not included). Off by default.
struct ShimProfileEntry {
  std::string name;
  uint64_t calls = 0;
  double total_us = 0;
};
AOTIRT_API void set_shim_profiling(bool on);
// The profile gathered since the last reset, by function name; |reset| clears it.
AOTIRT_API std::vector<ShimProfileEntry> shim_profile(bool reset = true);

// Version string, e.g. "0.1.0".
AOTIRT_API const char* version();

}  // namespace aotirt
