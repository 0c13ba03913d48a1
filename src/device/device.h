// The device interface every backend implements (CPU, CUDA, Metal), and the
// registry that creates devices on first use.
//
// Core and shim code only talk to Device and Allocator; they never name a
// backend. A backend that is built off registers a stub whose probe reports
// UNAVAILABLE, so callers get a clear error instead of a missing symbol.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "aotirt/status.h"
#include "aotirt/types.h"
#include "core/tensor.h"

namespace aotirt {

struct MemoryStats {
  size_t active_bytes = 0;   // handed out and not yet returned
  size_t peak_bytes = 0;     // highest active_bytes seen
  size_t cached_bytes = 0;   // returned to the cache, not to the system
  size_t limit_bytes = 0;    // 0 = no limit
  size_t alloc_count = 0;    // allocate() calls that succeeded
  size_t cache_hits = 0;     // of those, served from the cache
};

class Allocator {
 public:
  virtual ~Allocator() = default;
  // Returns owned memory of at least |nbytes|, aligned to 64 bytes; nbytes 0
  // gives a valid unique pointer. Fails with RESOURCE_EXHAUSTED past the limit.
  virtual Result<void*> allocate(size_t nbytes) = 0;
  // Returns memory from allocate() with the same |nbytes|.
  virtual void deallocate(void* ptr, size_t nbytes) = 0;
  virtual MemoryStats stats() const = 0;
  // Caps active plus cached bytes; 0 removes the cap.
  virtual void set_limit(size_t bytes) = 0;
  // Gives cached blocks back to the system.
  virtual void trim() = 0;
  virtual void reset_peak() = 0;
};

// Device work recorded once and queued again as a whole (a CUDA graph). It
// owns the memory its work touches, so that memory stays at the same
// addresses for every replay.
class DeviceGraph {
 public:
  virtual ~DeviceGraph() = default;
  // Queues the recorded work on the calling thread's current stream.
  virtual Status replay() = 0;
  // Points the recorded plain copy of |bytes| into |dst| at a new source on
  // the same device, for the next replays. NOT_FOUND when the graph holds no
  // such copy; UNIMPLEMENTED on devices that cannot.
  virtual Status retarget_copy(void* dst, const void* src, size_t bytes) {
    return Status(StatusCode::kUnimplemented, "this device's graphs cannot retarget copies");
  }
};

// A device's own path for a model library's host-to-device copies out of one
// mapped file range (its weights), open while the library copies them. The
// copies it takes over may still be in flight when the library's call
// returns; finish() waits for all of them.
class HostUpload {
 public:
  // Waits for the queued copies (their errors are lost; call finish() first).
  virtual ~HostUpload() = default;
  // Waits for every copy taken so far; the first failure among them, naming
  // the file and offset for a read error.
  virtual Status finish() = 0;
};

// A small read of device memory that the host collects later (a generated
// token, say): it is queued behind the work already queued on the stream and
// does not wait for it, so the host can queue more work before it collects.
class DeviceReadback {
 public:
  // Waits for the read if it is still in flight.
  virtual ~DeviceReadback() = default;
  // Waits until the bytes have arrived, then copies them to |dst| (as many
  // as the tensor read had).
  virtual Status wait(void* dst) = 0;
};

class Device {
 public:
  virtual ~Device() = default;
  virtual DeviceId id() const = 0;
  // "cpu", "cuda:0 (NVIDIA H200, sm_90)".
  virtual std::string description() const = 0;
  virtual Allocator& allocator() = 0;
  // Copies |src| into |dst| elementwise, broadcasting |src| to |dst|'s shape
  // and converting dtype where they differ. One side is on this device; the
  // other is on this device or on the CPU.
  virtual Status copy(const TensorImpl& dst, const TensorImpl& src, bool non_blocking) = 0;
  // Sets every byte of |dst|'s elements to zero.
  virtual Status zero(const TensorImpl& dst) = 0;
  // Waits for all work queued on this device by this thread's current stream.
  virtual Status synchronize() = 0;
  // The native stream this thread's work goes to (cudaStream_t); null on CPU.
  virtual void* current_stream() { return nullptr; }
  // Queues a read of |src| (contiguous, on this device) behind the work
  // queued on this thread's current stream. This default copies at once,
  // waiting for that work; CUDA queues it for small reads.
  virtual Result<std::unique_ptr<DeviceReadback>> read_back(const TensorImpl& src);

  // Models loaded on this device. When the last one unloads, the device
  // drops what its ops cached for it (release_caches: plans, recorded
  // graphs, scratch buffers, cached memory), since no op runs on it then.
  void add_model() { models_.fetch_add(1, std::memory_order_acq_rel); }
  void remove_model() {
    if (models_.fetch_sub(1, std::memory_order_acq_rel) == 1) release_caches();
  }
  int models() const { return models_.load(std::memory_order_acquire); }
  // Empties the ops' caches; only while no op runs on the device.
  virtual void release_caches() { allocator().trim(); }
  // Held around each run of a model on this device, for whatever the device
  // sets up per run (the CPU's OpenMP thread budget while runs overlap:
  // backends/cpu/cpu_run_threads.h; CUDA's deferred index checks). Null:
  // nothing to hold.
  class RunScope {
   public:
    virtual ~RunScope() = default;
    // Called once the run's work is queued: reports what the device's ops
    // left to be checked at the run's end (on CUDA, indices that kernels
    // found out of range: cuda_run_checks.h). May wait for the device.
    virtual Status finish() { return Status(); }
  };
  virtual std::unique_ptr<RunScope> enter_run() { return nullptr; }

  // Called before a model library for this device is opened: a chance to put
  // runtime symbols the library imports (e.g. libcudart's) in global scope.
  virtual Status prepare_model_load() { return Status(); }
  // Refuses packages this device cannot run. |metadata| is the package's
  // *_metadata.json as key/value strings (AOTI_COMPUTE_CAPABILITY, ...).
  virtual Status check_package(const std::vector<std::pair<std::string, std::string>>& metadata) {
    return Status();
  }

  // Opens an upload for the library's copies from |data| (|size| mapped
  // bytes of the file |path|, from byte |file_offset|) made on this thread
  // until finish(). Null when the device copies such memory no faster than
  // the library itself would, or the range is too small to be worth it.
  virtual Result<std::unique_ptr<HostUpload>> begin_host_upload(const uint8_t* data, size_t size,
                                                                const std::string& path, uint64_t file_offset) {
    return std::unique_ptr<HostUpload>();
  }

  // Records the device work |body| queues on this thread's current stream
  // into a graph instead of running it. Memory allocated on this thread while
  // recording comes from a pool private to the graph; memory freed meanwhile
  // is reused only inside it. Fails (and runs nothing) when |body| fails or
  // does something that cannot be recorded, such as waiting for the device.
  virtual Result<std::unique_ptr<DeviceGraph>> capture(const std::function<Status()>& body) {
    return Status(StatusCode::kUnimplemented, description() + " cannot record graphs");
  }

 private:
  std::atomic<int> models_{0};
};

// An import of a model library that a backend points at its own function
// (ModelLibrary::open applies them).
struct ImportOverride {
  const char* symbol;
  void* replacement;
};

struct BackendInfo {
  DeviceType type;
  const char* name;
  // Number of devices; UNAVAILABLE when the backend is built off or has no driver.
  Result<int> (*probe)();
  Result<std::unique_ptr<Device>> (*create)(int index);
  // Optional. Starts loading, on background threads, what the fallback ops
  // among |imported| (a model library's undefined symbols) will need -- GEMM
  // and convolution libraries, their handles -- so that it overlaps the rest
  // of a model load, device creation included. The caller joins the threads
  // before the model's first run. Failures are left for the ops to report.
  std::vector<std::thread> (*prewarm)(int index, const std::vector<std::string>& imported) = nullptr;
  // Optional. Called once get_device has decided to create device |index|,
  // before it probes: work the driver can do on its own (a GPU's context)
  // may start here, beside the probe. create(), or a probe that shows
  // |index| absent, finishes it.
  void (*begin_create)(int index) = nullptr;
  // Whether its devices can record a model run as a graph and replay it
  // (Device::capture).
  bool records_graphs = false;
  // Optional. Imports of its model libraries to redirect, each to a
  // replacement that keeps what the library acquires in its
  // LibraryResources (base/library_resources.h).
  std::vector<ImportOverride> (*library_imports)() = nullptr;
};

// Each backend defines one of these (the real one or its stub).
const BackendInfo& cpu_backend_info();
const BackendInfo& cuda_backend_info();
const BackendInfo& metal_backend_info();

// The backend whose packages carry device key |key| ("cpu", "cuda", "mps"),
// or null for a key no backend claims.
const BackendInfo* backend_for_key(const std::string& key);

// The backend of |type| (a stub when it is built off).
const BackendInfo* backend_for(DeviceType type);

// Returns the device, creating it on first use. Borrowed: the registry owns it
// until process exit. Creating one device does not hold up callers of another.
Result<Device*> get_device(DeviceId id);
// For tests: |info| stands in for the backend of info->type (null puts the
// real one back). Devices it created stay in the registry.
void set_backend_for_testing(const BackendInfo* info);
// The backend's prewarm threads for a model on |id| (none if it has none).
std::vector<std::thread> prewarm_backend(DeviceId id, const std::vector<std::string>& imported);
// Number of devices of |type|, or the backend's UNAVAILABLE status.
Result<int> device_count(DeviceType type);

// Allocates an owned tensor on |id| with the given layout. Its storage holds
// exactly the bytes the strides can reach.
Result<TensorImpl> empty_strided(const DimVector& sizes, const DimVector& strides, DType dtype,
                                 DeviceId id);
Result<TensorImpl> empty_contiguous(const DimVector& sizes, DType dtype, DeviceId id);
// Copies |src| into |dst| on whichever device is not the CPU (or the CPU).
Status copy_tensor(const TensorImpl& dst, const TensorImpl& src, bool non_blocking);
// A new contiguous tensor on the same device with |src|'s values.
Result<TensorImpl> clone_tensor(const TensorImpl& src);
// Storage bytes needed for |sizes|/|strides| of |dtype| (0 when any size is 0).
Result<size_t> storage_bytes_for(const DimVector& sizes, const DimVector& strides, DType dtype);

}  // namespace aotirt
