#include <array>
#include <atomic>
#include <cstring>
#include <map>
#include <mutex>

#include "base/status.h"
#include "device/device.h"

namespace aotirt {
namespace {

std::atomic<const BackendInfo*> g_test_backend{nullptr};

// One per device: creating a GPU device (its context) takes a good part of
// a second, and other devices must stay reachable meanwhile (the CLI reads its inputs into
// host tensors beside a GPU model's load).
struct Slot {
  std::mutex mutex;  // held while the device is created
  std::unique_ptr<Device> device;
  std::atomic<Device*> ready{nullptr};  // |device| once created
};

struct Registry {
  std::mutex mutex;  // guards |slots| only
  std::map<std::pair<int, int>, std::unique_ptr<Slot>> slots;
  // Hot path: every CPU empty_strided asks for it, without taking the mutex,
  // so it is atomic (shims run on any thread).
  std::atomic<Device*> cpu{nullptr};
};

Registry& registry() {
  // Intentionally leaked: model libraries may free tensors from static
  // destructors that run after ours.
  static Registry* r = new Registry();
  return *r;
}

}  // namespace

const BackendInfo* backend_for(DeviceType type) {
  if (const BackendInfo* t = g_test_backend.load(std::memory_order_acquire); t && t->type == type) return t;
  switch (type) {
    case DeviceType::kCpu: return &cpu_backend_info();
    case DeviceType::kCuda: return &cuda_backend_info();
    case DeviceType::kMps: return &metal_backend_info();
  }
  return nullptr;
}

const BackendInfo* backend_for_key(const std::string& key) {
  for (DeviceType type : {DeviceType::kCpu, DeviceType::kCuda, DeviceType::kMps}) {
    const BackendInfo* b = backend_for(type);
    if (b && key == b->name) return b;
  }
  return nullptr;
}

void set_backend_for_testing(const BackendInfo* info) { g_test_backend.store(info, std::memory_order_release); }

Result<int> device_count(DeviceType type) {
  const BackendInfo* info = backend_for(type);
  if (!info) return AOTIRT_STATUS(kInvalidArgument, "unknown device type {}", static_cast<int>(type));
  return info->probe();
}

std::vector<std::thread> prewarm_backend(DeviceId id, const std::vector<std::string>& imported) {
  const BackendInfo* info = backend_for(id.type);
  if (!info || !info->prewarm) return {};
  return info->prewarm(id.index, imported);
}

Result<Device*> get_device(DeviceId id) {
  Registry& r = registry();
  if (id.type == DeviceType::kCpu && id.index == 0) {
    if (Device* cpu = r.cpu.load(std::memory_order_acquire)) return cpu;
  }
  const BackendInfo* info = backend_for(id.type);
  if (!info) return AOTIRT_STATUS(kInvalidArgument, "unknown device type {}", static_cast<int>(id.type));
  auto not_found = [&](int count) {
    return AOTIRT_STATUS(kNotFound, "device {} does not exist: {} {} device(s) present", id.to_string(), count,
                         info->name);
  };
  if (id.index < 0) {
    AOTIRT_ASSIGN_OR_RETURN(int count, info->probe());
    return not_found(count);
  }
  Slot* slot = nullptr;
  {
    std::lock_guard<std::mutex> lock(r.mutex);
    std::unique_ptr<Slot>& s = r.slots[std::make_pair(static_cast<int>(id.type), id.index)];
    if (!s) s.reset(new Slot());
    if (Device* d = s->ready.load(std::memory_order_acquire)) return d;
    slot = s.get();
  }
  // A failed creation leaves the slot empty, so the next caller tries again.
  std::lock_guard<std::mutex> lock(slot->mutex);
  if (slot->device) return slot->device.get();
  if (info->begin_create) info->begin_create(id.index);
  AOTIRT_ASSIGN_OR_RETURN(int count, info->probe());
  if (id.index >= count) return not_found(count);
  AOTIRT_ASSIGN_OR_RETURN(slot->device, info->create(id.index));
  Device* raw = slot->device.get();
  slot->ready.store(raw, std::memory_order_release);
  if (id.type == DeviceType::kCpu) r.cpu.store(raw, std::memory_order_release);
  return raw;
}

Result<size_t> storage_bytes_for(const DimVector& sizes, const DimVector& strides, DType dtype) {
  size_t elsize = dtype_size(dtype);
  if (elsize == 0) return AOTIRT_STATUS(kInvalidArgument, "invalid dtype {}", static_cast<int>(dtype));
  if (sizes.size() != strides.size())
    return AOTIRT_STATUS(kInvalidArgument, "sizes has {} dims but strides has {}", sizes.size(), strides.size());
  for (int64_t i = 0; i < sizes.size(); ++i)
    if (sizes[i] < 0) return AOTIRT_STATUS(kInvalidArgument, "negative size {} in dim {}", sizes[i], i);
  for (int64_t i = 0; i < sizes.size(); ++i)
    if (sizes[i] == 0) return size_t{0};
  // Sizes come from the model or the caller: a product that overflows would
  // otherwise yield a small buffer for a huge tensor.
  int64_t last = 0;
  bool overflow = false;
  for (int64_t i = 0; i < sizes.size(); ++i) {
    if (strides[i] < 0) return AOTIRT_STATUS(kInvalidArgument, "negative stride {} in dim {}", strides[i], i);
    int64_t span = 0;
    overflow |= __builtin_mul_overflow(sizes[i] - 1, strides[i], &span);
    overflow |= __builtin_add_overflow(last, span, &last);
  }
  int64_t nbytes = 0;
  overflow |= __builtin_add_overflow(last, int64_t{1}, &last);
  overflow |= __builtin_mul_overflow(last, static_cast<int64_t>(elsize), &nbytes);
  if (overflow)
    return AOTIRT_STATUS(kInvalidArgument, "tensor of shape {} with strides {} is too large to allocate",
                         dims_to_string(sizes.data(), sizes.size()), dims_to_string(strides.data(), strides.size()));
  return static_cast<size_t>(nbytes);
}

namespace {
void allocator_deleter(void* ctx, void* ptr, size_t nbytes) {
  static_cast<Allocator*>(ctx)->deallocate(ptr, nbytes);
}
}  // namespace

Result<TensorImpl> empty_strided(const DimVector& sizes, const DimVector& strides, DType dtype,
                                 DeviceId id) {
  AOTIRT_ASSIGN_OR_RETURN(size_t nbytes, storage_bytes_for(sizes, strides, dtype));
  AOTIRT_ASSIGN_OR_RETURN(Device * dev, get_device(id));
  Allocator& alloc = dev->allocator();
  AOTIRT_ASSIGN_OR_RETURN(void* ptr, alloc.allocate(nbytes));
  Storage* s = Storage::new_owning(ptr, nbytes, id, allocator_deleter, &alloc);
  return TensorImpl(StorageRef::adopt(s), dtype, sizes, strides, 0);
}

Result<TensorImpl> empty_contiguous(const DimVector& sizes, DType dtype, DeviceId id) {
  return empty_strided(sizes, contiguous_strides(sizes), dtype, id);
}

Status copy_tensor(const TensorImpl& dst, const TensorImpl& src, bool non_blocking) {
  if (!dst.defined() || !src.defined())
    return AOTIRT_STATUS(kInvalidArgument, "copy with an undefined tensor");
  // A prepacked (_mkldnn) weight's bytes follow its library's layout, not
  // its sizes and strides: a strided copy would be garbage.
  if (src.storage()->opaque() || dst.storage()->opaque())
    return AOTIRT_STATUS(kUnimplemented, "a tensor with an opaque (_mkldnn) layout cannot be copied as a strided one");
  DeviceId owner = dst.device().is_cpu() ? src.device() : dst.device();
  if (!dst.device().is_cpu() && !src.device().is_cpu() && dst.device() != src.device())
    return AOTIRT_STATUS(kUnimplemented, "copy between {} and {} is not supported",
                         src.device().to_string(), dst.device().to_string());
  AOTIRT_ASSIGN_OR_RETURN(Device * dev, get_device(owner));
  return dev->copy(dst, src, non_blocking);
}

namespace {
// The default read back: the bytes, read at once.
class ReadNow final : public DeviceReadback {
 public:
  explicit ReadNow(std::vector<uint8_t> bytes) : bytes_(std::move(bytes)) {}
  Status wait(void* dst) override {
    if (!bytes_.empty()) std::memcpy(dst, bytes_.data(), bytes_.size());
    return Status();
  }

 private:
  std::vector<uint8_t> bytes_;
};
}  // namespace

Result<std::unique_ptr<DeviceReadback>> Device::read_back(const TensorImpl& src) {
  AOTIRT_ENSURE(src.defined() && src.is_contiguous(), kInvalidArgument, "read back of {}",
                src.defined() ? "a strided tensor" : "an undefined tensor");
  std::vector<uint8_t> bytes(src.nbytes());
  if (!bytes.empty()) {
    TensorImpl host(StorageRef::adopt(Storage::new_borrowed(bytes.data(), bytes.size(), DeviceId{})), src.dtype(),
                    src.sizes(), src.strides(), 0);
    AOTIRT_RETURN_IF_ERROR(copy(host, src, false));
  }
  return std::unique_ptr<DeviceReadback>(new ReadNow(std::move(bytes)));
}

Result<TensorImpl> clone_tensor(const TensorImpl& src) {
  AOTIRT_ASSIGN_OR_RETURN(TensorImpl out, empty_contiguous(src.sizes(), src.dtype(), src.device()));
  AOTIRT_RETURN_IF_ERROR(copy_tensor(out, src, false));
  return out;
}

}  // namespace aotirt
