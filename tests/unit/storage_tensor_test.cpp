// Storage reference counting, TensorImpl views and layout helpers, and the
// device registry: its tensor allocation (empty_strided, storage_bytes_for) and
// devices created without holding each other up.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/storage.h"
#include "core/tensor.h"
#include "device/device.h"

namespace aotirt {
namespace {

struct DeleterLog {
  std::atomic<int> calls{0};
  void* ptr = nullptr;
  size_t nbytes = 0;
};

void counting_deleter(void* ctx, void* ptr, size_t nbytes) {
  auto* log = static_cast<DeleterLog*>(ctx);
  log->calls.fetch_add(1);
  log->ptr = ptr;
  log->nbytes = nbytes;
  std::free(ptr);
}

TEST(StorageTest, DeleterRunsOnceWhenTheLastReferenceDrops) {
  DeleterLog log;
  void* mem = std::malloc(64);
  {
    StorageRef a = StorageRef::adopt(Storage::new_owning(mem, 64, DeviceId{}, counting_deleter, &log));
    EXPECT_EQ(a->refcount(), 1);
    EXPECT_FALSE(a->is_borrowed());
    EXPECT_EQ(a->data(), mem);
    EXPECT_EQ(a->nbytes(), 64u);
    {
      StorageRef b = a;
      EXPECT_EQ(a->refcount(), 2);
      StorageRef c = std::move(b);
      EXPECT_FALSE(static_cast<bool>(b));
      EXPECT_EQ(a->refcount(), 2);
      StorageRef d;
      d = c;
      EXPECT_EQ(a->refcount(), 3);
      d = d;  // self-assignment keeps the count
      EXPECT_EQ(a->refcount(), 3);
    }
    EXPECT_EQ(a->refcount(), 1);
    EXPECT_EQ(log.calls.load(), 0);
  }
  EXPECT_EQ(log.calls.load(), 1);
  EXPECT_EQ(log.ptr, mem);
  EXPECT_EQ(log.nbytes, 64u);
}

TEST(StorageTest, DeleterRunsOnceUnderConcurrentReleases) {
  for (int round = 0; round < 20; ++round) {
    DeleterLog log;
    StorageRef root = StorageRef::adopt(
        Storage::new_owning(std::malloc(16), 16, DeviceId{}, counting_deleter, &log));
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([copy = root]() mutable {
        for (int i = 0; i < 1000; ++i) {
          StorageRef tmp = copy;
          StorageRef moved = std::move(tmp);
        }
      });
    }
    root = StorageRef();
    for (auto& th : threads) th.join();
    EXPECT_EQ(log.calls.load(), 1);
  }
}

TEST(StorageTest, BorrowedMemoryIsNeverFreed) {
  // Stack memory: freeing it would abort the test.
  alignas(8) unsigned char buf[32] = {1, 2, 3};
  {
    StorageRef s = StorageRef::adopt(Storage::new_borrowed(buf, sizeof(buf), DeviceId{DeviceType::kCuda, 2}));
    EXPECT_TRUE(s->is_borrowed());
    EXPECT_EQ(s->device(), (DeviceId{DeviceType::kCuda, 2}));
    TensorImpl t(s, DType::kUInt8, {32}, {1}, 0);
    TensorImpl view = t;
    EXPECT_EQ(s->refcount(), 3);
  }
  EXPECT_EQ(buf[0], 1);
  EXPECT_EQ(buf[2], 3);
}

TEST(TensorImplTest, DataPtrIncludesTheElementOffset) {
  alignas(16) unsigned char buf[256] = {0};
  for (DType dt : {DType::kUInt8, DType::kFloat16, DType::kFloat32, DType::kFloat64, DType::kComplex128}) {
    StorageRef s = StorageRef::adopt(Storage::new_borrowed(buf, sizeof(buf), DeviceId{}));
    TensorImpl t(s, dt, {2}, {1}, 3);
    EXPECT_EQ(t.data_ptr(), buf + 3 * dtype_size(dt)) << dtype_name(dt);
    EXPECT_EQ(t.storage_offset(), 3);
    EXPECT_EQ(t.element_size(), dtype_size(dt));
    EXPECT_EQ(t.nbytes(), 2 * dtype_size(dt));
  }
}

TEST(TensorImplTest, UndefinedTensor) {
  TensorImpl t;
  EXPECT_FALSE(t.defined());
  EXPECT_EQ(t.data_ptr(), nullptr);
  EXPECT_TRUE(t.device().is_cpu());
  EXPECT_EQ(t.dim(), 0);
  // A storage with a null pointer (an empty tensor) has no data either.
  TensorImpl e(StorageRef::adopt(Storage::new_borrowed(nullptr, 0, DeviceId{})), DType::kFloat32, {0}, {1}, 0);
  EXPECT_TRUE(e.defined());
  EXPECT_EQ(e.data_ptr(), nullptr);
}

TEST(TensorImplTest, CopyIsAViewOfTheSameStorage) {
  DeleterLog log;
  StorageRef s = StorageRef::adopt(Storage::new_owning(std::malloc(48), 48, DeviceId{}, counting_deleter, &log));
  auto* view = new TensorImpl(s, DType::kFloat32, {3, 4}, {4, 1}, 0);
  s = StorageRef();
  TensorImpl copy = *view;
  EXPECT_EQ(copy.storage().get(), view->storage().get());
  EXPECT_EQ(copy.storage()->refcount(), 2);
  delete view;
  EXPECT_EQ(log.calls.load(), 0);
  EXPECT_EQ(copy.sizes(), (DimVector{3, 4}));
  copy = TensorImpl();
  EXPECT_EQ(log.calls.load(), 1);
}

TEST(DimVectorTest, InlineAndHeapRanks) {
  for (int64_t n : {0, 1, 5, 6, 7, 8, 12, 25}) {
    std::vector<int64_t> v;
    for (int64_t i = 0; i < n; ++i) v.push_back(i * 10 + 1);
    DimVector d(v);
    ASSERT_EQ(d.size(), n);
    EXPECT_EQ(d.to_vector(), v);
    DimVector copy = d;
    EXPECT_EQ(copy, d);
    EXPECT_NE(copy.data(), d.data());
    for (int64_t i = 0; i < n; ++i) EXPECT_EQ(copy[i], v[i]);
    if (n > 0) {
      copy[0] = 0;
      EXPECT_FALSE(copy == d);
    }
  }
}

TEST(DimVectorTest, ResizeAcrossTheInlineBoundary) {
  DimVector d{1, 2, 3};
  d.resize(9);
  EXPECT_EQ(d.to_vector(), (std::vector<int64_t>{1, 2, 3, 0, 0, 0, 0, 0, 0}));
  d[8] = 9;
  d.resize(4);
  EXPECT_EQ(d.to_vector(), (std::vector<int64_t>{1, 2, 3, 0}));
  d.resize(0);
  EXPECT_EQ(d.size(), 0);
}

TEST(DimVectorTest, AssignFromItsOwnStorage) {
  DimVector big{1, 2, 3, 4, 5, 6, 7, 8};
  big.assign(big.data() + 2, 3);  // heap -> inline, reading from the old heap
  EXPECT_EQ(big.to_vector(), (std::vector<int64_t>{3, 4, 5}));
  DimVector bigger{1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  bigger.assign(bigger.data() + 1, 8);  // heap -> heap
  EXPECT_EQ(bigger.to_vector(), (std::vector<int64_t>{2, 3, 4, 5, 6, 7, 8, 9}));
  DimVector small{1, 2, 3, 4};
  small.assign(small.data() + 1, 3);
  EXPECT_EQ(small.to_vector(), (std::vector<int64_t>{2, 3, 4}));
  DimVector self{1, 2, 3, 4, 5, 6, 7};
  const DimVector& alias = self;
  self = alias;
  EXPECT_EQ(self.size(), 7);
  EXPECT_EQ(self[6], 7);
}

TEST(LayoutTest, ContiguousStridesAndNumel) {
  EXPECT_EQ(contiguous_strides({2, 3, 4}), (DimVector{12, 4, 1}));
  EXPECT_EQ(contiguous_strides({}), (DimVector{}));
  EXPECT_EQ(contiguous_strides({5}), (DimVector{1}));
  // Sizes 0 and 1 count as 1, as in PyTorch.
  EXPECT_EQ(contiguous_strides({2, 0, 3}), (DimVector{3, 3, 1}));
  EXPECT_EQ(contiguous_strides({2, 1, 3}), (DimVector{3, 3, 1}));
  EXPECT_EQ(contiguous_strides({1, 2, 1, 2, 1, 2, 1, 2}), (DimVector{16, 8, 8, 4, 4, 2, 2, 1}));
  // Products past int64 saturate rather than wrap (the allocation check refuses them).
  const int64_t huge = int64_t{1} << 40;
  EXPECT_EQ(contiguous_strides({huge, huge, huge}), (DimVector{INT64_MAX, huge, 1}));
  EXPECT_EQ(numel_of({2, 3, 4}), 24);
  EXPECT_EQ(numel_of({}), 1);
  EXPECT_EQ(numel_of({3, 0}), 0);
  EXPECT_EQ(numel_of({2, 2, 2, 2, 2, 2, 2, 2}), 256);
  int64_t dims[] = {2, -1, 3};
  EXPECT_EQ(dims_to_string(dims, 3), "[2, -1, 3]");
  EXPECT_EQ(dims_to_string(dims, 0), "[]");
}

TensorImpl layout_only(DimVector sizes, DimVector strides, int64_t offset = 0, DType dt = DType::kFloat32) {
  return TensorImpl(StorageRef(), dt, std::move(sizes), std::move(strides), offset);
}

TEST(LayoutTest, IsContiguous) {
  EXPECT_TRUE(layout_only({2, 3}, {3, 1}).is_contiguous());
  EXPECT_FALSE(layout_only({2, 3}, {1, 2}).is_contiguous());
  EXPECT_FALSE(layout_only({2, 3}, {6, 2}).is_contiguous());
  EXPECT_TRUE(layout_only({}, {}).is_contiguous());
  // Size-1 dims may carry any stride.
  EXPECT_TRUE(layout_only({2, 1, 3}, {3, 99, 1}).is_contiguous());
  EXPECT_TRUE(layout_only({1, 1}, {7, 5}).is_contiguous());
  // Broadcast (stride 0) is not contiguous.
  EXPECT_FALSE(layout_only({2, 3}, {0, 1}).is_contiguous());
  // Empty tensors are contiguous whatever their strides, as in PyTorch.
  EXPECT_TRUE(layout_only({0, 3}, {5, 1}).is_contiguous());
  EXPECT_TRUE(layout_only({3, 0}, {1, 7}).is_contiguous());
  // Beyond the inline rank.
  EXPECT_TRUE(layout_only({2, 2, 2, 2, 2, 2, 2, 2}, contiguous_strides({2, 2, 2, 2, 2, 2, 2, 2})).is_contiguous());
  EXPECT_FALSE(layout_only({2, 2, 2, 2, 2, 2, 2, 2}, {1, 2, 4, 8, 16, 32, 64, 128}).is_contiguous());
}

TEST(LayoutTest, MaxByteExtent) {
  EXPECT_EQ(layout_only({2, 3}, {3, 1}).max_byte_extent(), 24);
  EXPECT_EQ(layout_only({2, 3}, {3, 1}, 5).max_byte_extent(), (5 + 6) * 4);
  EXPECT_EQ(layout_only({2, 3}, {1, 2}).max_byte_extent(), (1 + 4 + 1) * 4);
  EXPECT_EQ(layout_only({4, 3}, {0, 1}).max_byte_extent(), 12);  // broadcast rows
  EXPECT_EQ(layout_only({}, {}, 2).max_byte_extent(), 12);
  EXPECT_EQ(layout_only({0, 3}, {3, 1}, 4).max_byte_extent(), 16);  // empty: just the offset
  EXPECT_EQ(layout_only({2, 3}, {3, 1}, 1, DType::kComplex128).max_byte_extent(), 7 * 16);
  EXPECT_EQ(layout_only({2, 2, 2, 2, 2, 2, 2, 2}, contiguous_strides({2, 2, 2, 2, 2, 2, 2, 2}), 0, DType::kInt8)
                .max_byte_extent(),
            256);
}

// ---- the registry's allocation helpers ----

TEST(EmptyStridedTest, StorageBytesFor) {
  Result<size_t> r = storage_bytes_for({2, 3}, {3, 1}, DType::kFloat32);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, 24u);
  r = storage_bytes_for({2, 3}, {1, 4}, DType::kFloat64);  // padded rows
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, (1 + 8 + 1) * 8u);
  r = storage_bytes_for({}, {}, DType::kInt16);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, 2u);
  r = storage_bytes_for({4, 0}, {0, 1}, DType::kFloat32);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, 0u);
  r = storage_bytes_for({5}, {0}, DType::kFloat32);  // expanded scalar
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, 4u);
}

TEST(EmptyStridedTest, StorageBytesForRefusesBadLayouts) {
  Result<size_t> r = storage_bytes_for({2}, {1, 1}, DType::kFloat32);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  r = storage_bytes_for({-2}, {1}, DType::kFloat32);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("negative size"), std::string::npos);
  r = storage_bytes_for({2}, {-1}, DType::kFloat32);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("negative stride"), std::string::npos);
  r = storage_bytes_for({2}, {1}, static_cast<DType>(13));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("dtype"), std::string::npos);
}

TEST(EmptyStridedTest, SizesThatOverflowAreRefused) {
  const int64_t huge = int64_t{1} << 40;
  for (auto layout : {std::make_pair(DimVector{huge, huge}, DimVector{huge, 1}),
                      std::make_pair(DimVector{int64_t{1} << 62}, DimVector{1}),
                      std::make_pair(DimVector{3}, DimVector{int64_t{1} << 62}),
                      std::make_pair(DimVector{huge, huge, huge}, contiguous_strides({huge, huge, huge}))}) {
    Result<size_t> r = storage_bytes_for(layout.first, layout.second, DType::kFloat64);
    ASSERT_FALSE(r.ok()) << "accepted a tensor of " << dims_to_string(layout.first.data(), layout.first.size())
                         << " with " << (r.ok() ? *r : 0) << " bytes";
    EXPECT_NE(r.status().message().find("too large"), std::string::npos) << r.status().message();
    Result<TensorImpl> t = empty_strided(layout.first, layout.second, DType::kFloat64, DeviceId{});
    ASSERT_FALSE(t.ok());
  }
}

TEST(EmptyStridedTest, AllocatesOwnedCpuTensors) {
  Result<TensorImpl> t = empty_strided({2, 3}, {1, 2}, DType::kFloat32, DeviceId{});
  ASSERT_TRUE(t.ok()) << t.status().to_string();
  EXPECT_EQ(t->storage()->nbytes(), 24u);
  EXPECT_FALSE(t->storage()->is_borrowed());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t->data_ptr()) % 64, 0u);
  EXPECT_EQ(t->strides(), (DimVector{1, 2}));
  Result<TensorImpl> c = empty_contiguous({4, 5, 6}, DType::kBFloat16, DeviceId{});
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->strides(), (DimVector{30, 6, 1}));
  EXPECT_EQ(c->storage()->nbytes(), 240u);
  EXPECT_TRUE(c->is_contiguous());
}

TEST(EmptyStridedTest, UnknownDevicesAreErrors) {
  Result<TensorImpl> t = empty_contiguous({2}, DType::kFloat32, DeviceId{DeviceType::kCpu, 1});
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), StatusCode::kNotFound);
  EXPECT_NE(t.status().message().find("does not exist"), std::string::npos);
  Result<Device*> d = get_device(DeviceId{static_cast<DeviceType>(42), 0});
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().code(), StatusCode::kInvalidArgument);
  Result<int> n = device_count(DeviceType::kCpu);
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 1);
}

// A device whose creation takes a while (a GPU's context): while it is
// created, other devices stay reachable, and a second caller for the same
// device waits for the one creation instead of making its own.
namespace slow_backend {
std::atomic<int> creations{0};
std::atomic<bool> creating{false};

class SlowDevice final : public Device {
 public:
  explicit SlowDevice(int index) : index_(index) {}
  DeviceId id() const override { return DeviceId{DeviceType::kMps, index_}; }
  std::string description() const override { return "slow test device"; }
  Allocator& allocator() override { return get_device(DeviceId{}).value()->allocator(); }
  Status copy(const TensorImpl&, const TensorImpl&, bool) override { return Status(); }
  Status zero(const TensorImpl&) override { return Status(); }
  Status synchronize() override { return Status(); }

 private:
  int index_;
};

Result<int> probe() { return 8; }
Result<std::unique_ptr<Device>> create(int index) {
  creations++;
  creating = true;
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  return std::unique_ptr<Device>(new SlowDevice(index));
}
const BackendInfo kInfo{DeviceType::kMps, "slow test", probe, create};
}  // namespace slow_backend

TEST(DeviceRegistryTest, ACreationHoldsUpNoOtherDevice) {
  using namespace slow_backend;
  set_backend_for_testing(&kInfo);
  const DeviceId slow{DeviceType::kMps, 7};
  Result<Device*> first = Status(StatusCode::kInternal, "not run");
  Result<Device*> second = Status(StatusCode::kInternal, "not run");
  std::thread a([&] { first = get_device(slow); });
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!creating && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
  if (!creating) {
    a.join();
    set_backend_for_testing(nullptr);
    FAIL() << "the slow backend was never asked to create the device: " << first.status().to_string();
  }
  std::thread b([&] { second = get_device(slow); });
  // CPU index 1 misses the CPU's lock-free path: it goes through the registry.
  const auto start = std::chrono::steady_clock::now();
  Result<Device*> other = get_device(DeviceId{DeviceType::kCpu, 1});
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(other.status().code(), StatusCode::kNotFound);
  EXPECT_LT(ms, 150.0) << "another device's lookup waited for the slow creation";
  a.join();
  b.join();
  set_backend_for_testing(nullptr);
  ASSERT_TRUE(first.ok()) << first.status().to_string();
  ASSERT_TRUE(second.ok()) << second.status().to_string();
  EXPECT_EQ(first.value(), second.value());
  EXPECT_EQ(creations.load(), 1);
}

// begin_create hears of each creation before the probe, and only of creations.
namespace recording_backend {
std::vector<std::string> calls;
Result<int> probe() {
  calls.push_back("probe");
  return 2;
}
void begin_create(int index) { calls.push_back("begin " + std::to_string(index)); }
Result<std::unique_ptr<Device>> create(int index) {
  calls.push_back("create " + std::to_string(index));
  return std::unique_ptr<Device>(new slow_backend::SlowDevice(index));
}
const BackendInfo kInfo{DeviceType::kMps, "recording test", probe, create, nullptr, begin_create};
}  // namespace recording_backend

TEST(DeviceRegistryTest, BeginCreateComesBeforeTheProbeOfACreation) {
  using namespace recording_backend;
  set_backend_for_testing(&kInfo);
  calls.clear();
  Result<Device*> d = get_device(DeviceId{DeviceType::kMps, 1});
  Result<Device*> again = get_device(DeviceId{DeviceType::kMps, 1});
  Result<Device*> absent = get_device(DeviceId{DeviceType::kMps, 5});
  set_backend_for_testing(nullptr);
  ASSERT_TRUE(d.ok()) << d.status().to_string();
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(d.value(), again.value());
  EXPECT_EQ(absent.status().code(), StatusCode::kNotFound);
  // The second lookup finds the device made; the absent one is probed, not created.
  EXPECT_EQ(calls, (std::vector<std::string>{"begin 1", "probe", "create 1", "begin 5", "probe"}));
}

TEST(EmptyStridedTest, CloneMakesAContiguousCopy) {
  Result<TensorImpl> src = empty_strided({2, 3}, {1, 2}, DType::kInt32, DeviceId{});
  ASSERT_TRUE(src.ok());
  auto* p = static_cast<int32_t*>(src->data_ptr());
  for (int i = 0; i < 6; ++i) p[i] = i;  // storage order: column-major
  Result<TensorImpl> c = clone_tensor(*src);
  ASSERT_TRUE(c.ok());
  EXPECT_TRUE(c->is_contiguous());
  EXPECT_NE(c->data_ptr(), src->data_ptr());
  auto* q = static_cast<int32_t*>(c->data_ptr());
  EXPECT_EQ((std::vector<int32_t>(q, q + 6)), (std::vector<int32_t>{0, 2, 4, 1, 3, 5}));
  EXPECT_FALSE(copy_tensor(TensorImpl(), *src, false).ok());
}

// Device::read_back's default (every device but CUDA's small reads): the
// bytes are read at once and handed over by wait().
TEST(DeviceReadbackTest, TheDefaultReadsTheBytesAtOnce) {
  Result<Device*> cpu = get_device(DeviceId{});
  ASSERT_TRUE(cpu.ok());
  Result<TensorImpl> src = empty_contiguous({3}, DType::kInt64, DeviceId{});
  ASSERT_TRUE(src.ok());
  auto* p = static_cast<int64_t*>(src->data_ptr());
  p[0] = 7, p[1] = -1, p[2] = int64_t{1} << 40;
  Result<std::unique_ptr<DeviceReadback>> r = (*cpu)->read_back(*src);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  p[0] = 0;  // read already: later writes do not show
  int64_t got[3] = {};
  ASSERT_TRUE((*r)->wait(got).ok());
  EXPECT_EQ((std::vector<int64_t>(got, got + 3)), (std::vector<int64_t>{7, -1, int64_t{1} << 40}));
  // Reads of nothing, of a strided view and of no tensor.
  Result<TensorImpl> none = empty_contiguous({0}, DType::kInt64, DeviceId{});
  ASSERT_TRUE(none.ok());
  Result<std::unique_ptr<DeviceReadback>> empty = (*cpu)->read_back(*none);
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE((*empty)->wait(nullptr).ok());
  TensorImpl strided(src->storage(), DType::kInt64, {2}, {2}, 0);
  Result<std::unique_ptr<DeviceReadback>> bad = (*cpu)->read_back(strided);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("strided"), std::string::npos) << bad.status().to_string();
  EXPECT_FALSE((*cpu)->read_back(TensorImpl()).ok());
}

}  // namespace
}  // namespace aotirt
