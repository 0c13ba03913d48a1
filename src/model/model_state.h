// ModelState: everything a loaded model owns -- the package, the opened
// library and its container, extracted kernels -- and the run path that
// turns caller tensors into handles and handles back into tensors.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "aotirt/model.h"
#include "base/file_util.h"
#include "device/device.h"
#include "model/constant_pool.h"
#include "model/model_library.h"
#include "package/pt2_package.h"

namespace aotirt {

// Lists the package's imported aoti_torch_* symbols in its info, each marked
// provided or missing: whether it resolves among this process's global
// symbols once aotirt's shims are global there.
Status resolve_imported_shims(Pt2Package& package);

class ModelState {
 public:
  // |pool|: the weights of a ModelGroup's earlier packages, which this one
  // borrows where they match its own; its own weights are added to it.
  // Null: a model on its own.
  static Result<std::unique_ptr<ModelState>> load(const std::string& path, const LoadOptions& options,
                                                  ConstantPool* pool = nullptr);
  ~ModelState();

  Result<std::vector<Tensor>> run(const std::vector<Tensor>& inputs, const RunOptions& options);

  const PackageInfo& info() const { return package_.info; }
  DeviceId device_id() const { return device_id_; }
  const std::vector<TensorSpec>& inputs() const { return inputs_; }
  const std::vector<TensorSpec>& outputs() const { return outputs_; }
  Device* device() const { return device_; }
  GraphStats graph_stats() const;
  const WeightStats& weight_stats() const { return weight_stats_; }

 private:
  // One constant of the library, as its container API reports it.
  struct ConstantInfo {
    std::string name;  // the library's own name, the key of user-managed constants
    std::string fqn;   // the original FQN; empty when the library has none
    bool folded = false;
    int32_t dtype = -1;
    size_t nbytes = 0;
  };
  // A constant of this package that a ModelGroup already holds.
  struct Borrowed {
    size_t index;     // in the library's constant list
    size_t loaded;    // among the constants that are not folded
    const PooledConstant* held;
  };
  // One input signature of the CUDA-graph mode and its recording.
  struct GraphEntry {
    std::vector<int64_t> key;  // dtype, rank and sizes of every input
    size_t eager_runs = 0;
    bool failed = false;
    std::unique_ptr<DeviceGraph> graph;
    std::vector<TensorImpl> inputs;  // owned: the buffers the graph reads
    std::vector<Tensor> outputs;     // the buffers the graph writes
    // Per input: the source of the copy recorded inside the graph (device
    // inputs), or null when the input is copied in before each replay.
    std::vector<const void*> sources;
    std::vector<TensorImpl> staging;  // device copies of host data for recorded copies
    // Per input: recorded in place (graph_inputs_in_place); |inputs| then
    // holds the caller's own tensor, whose storage it keeps alive.
    std::vector<bool> in_place;
  };

  // Input handles for one run of the container, which steals them -- unless
  // it refuses the run before taking them (its generated input checks, a
  // failed constant fold), and its C API does not say which happened. Each
  // handle views a storage of its own, a tracker over the input's bytes
  // that keeps the input's real storage alive: while the handle lives the
  // tracker is referenced by it and by this object, so after a failed run
  // the handles the library did not delete are told apart and freed.
  class InputHandles {
   public:
    InputHandles() = default;
    ~InputHandles();
    InputHandles(const InputHandles&) = delete;
    InputHandles& operator=(const InputHandles&) = delete;
    void reserve(size_t n);
    // A handle viewing |t|. |owned|: |t|'s storage was made for this run
    // and nothing else holds it, so it serves as its own tracker.
    void add(TensorImpl t, bool owned);
    AtenTensorHandle* data() { return handles_.data(); }
    size_t size() const { return handles_.size(); }
    // Marks the handles as passed to the container.
    void offer() { offered_ = true; }
    // After a successful run: the container has taken every handle.
    void taken();
    // After a failed run, once its outputs are released: frees the handles
    // the library left alive. Returns how many.
    size_t reclaim();

   private:
    std::vector<AtenTensorHandle> handles_;
    std::vector<StorageRef> trackers_;
    bool offered_ = false;
  };

  ModelState() = default;
  Status validate_input(size_t index, const TensorImpl& t) const;
  Status check_inputs(const std::vector<Tensor>& inputs) const;
  Status load_weights(ConstantPool* pool);
  // The library's constant list; nullopt when it lacks a query sharing needs.
  std::optional<std::vector<ConstantInfo>> constant_table() const;
  // Which constants |pool| holds already; fails on a name whose dtype or
  // size differ. Empty when the library cannot take user-managed constants.
  Result<std::vector<Borrowed>> match_pool(const ConstantPool& pool, const std::vector<ConstantInfo>& table) const;
  // Hands |borrowed| to the container as user-managed constants.
  Status borrow_constants(const std::vector<Borrowed>& borrowed, const std::vector<ConstantInfo>& table,
                          bool all);
  // Adds the loaded constants |tensors| (one per constant that is not
  // folded) to |pool|, but for those in |borrowed|.
  void share_constants(ConstantPool& pool, const std::vector<ConstantInfo>& table,
                       const std::vector<TensorImpl>& tensors, const std::vector<Borrowed>& borrowed) const;
  // The blob bytes of each constant that is not folded, in order; empty when
  // the library cannot say.
  std::vector<size_t> constant_blob_sizes() const;
  // The same, or nullopt when the library cannot say.
  std::optional<std::vector<size_t>> library_constant_sizes() const;
  // The length the library expects of its weights blob: its own
  // GetConstantsBlobSize, else the sum of its constants' sizes; nullopt
  // when it can say neither.
  std::optional<uint64_t> expected_blob_bytes() const;
  void mark_immutable_constants(std::vector<StorageRef>& storages);
  // Handles for the container (which steals them): the caller's tensors
  // when they already sit densely on the model's device, else copies.
  Status make_input_handles(const std::vector<Tensor>& inputs, InputHandles* handles);
  // Runs the container and adopts its outputs (each handle once); settles
  // the ownership of |in| whatever the outcome.
  Result<std::vector<Tensor>> invoke(InputHandles& in, bool single_threaded, const char* what);
  Result<std::vector<Tensor>> finish(std::vector<Tensor> outputs, const RunOptions& options);
  // |trace|: the debug trace times the run's phases (the first run's).
  Result<std::vector<Tensor>> run_eager(const std::vector<Tensor>& inputs, const RunOptions& options, bool trace);
  Result<std::vector<Tensor>> run_graph(const std::vector<Tensor>& inputs, const RunOptions& options);
  Status record_graph(GraphEntry& entry, const std::vector<Tensor>& inputs);
  // Points the graph's input copies at |inputs| (or copies them in).
  Status feed_graph(GraphEntry& entry, const std::vector<Tensor>& inputs);

  Pt2Package package_;
  DeviceId device_id_;
  Device* device_ = nullptr;  // borrowed from the registry
  bool counted_on_device_ = false;  // in device_->models()
  TempDir kernel_dir_;        // extracted GPU kernels, removed on unload
  std::unique_ptr<ModelLibrary> library_;
  ContainerHandle container_ = nullptr;
  std::vector<TensorSpec> inputs_, outputs_;
  // Handles the library took on borrowed constants: it never deletes them,
  // so they go once its container is gone.
  std::vector<TensorImpl*> borrowed_handles_;
  WeightStats weight_stats_;

  // Background loads of op libraries (Device::prewarm), joined before the
  // first run.
  void join_prewarm();
  std::vector<std::thread> prewarm_;
  std::mutex prewarm_mutex_;
  std::atomic<bool> prewarm_pending_{false};
  std::atomic<bool> first_run_done_{false};  // for the debug trace
  // Until one run has succeeded, runs go one at a time (ModelState::run).
  std::mutex first_success_mutex_;
  std::atomic<bool> first_success_{false};

  bool graph_mode_ = false;
  size_t graph_warmup_runs_ = 1;
  bool graph_inputs_in_place_ = false;
  mutable std::mutex graph_mutex_;  // serialises graph-mode runs
  std::vector<std::unique_ptr<GraphEntry>> graphs_;
  bool graph_overflow_warned_ = false;
  GraphStats graph_stats_;
};

}  // namespace aotirt
