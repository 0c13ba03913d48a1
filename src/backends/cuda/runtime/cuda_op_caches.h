// The caches the CUDA ops keep for one device: plans per problem, library
// handles, scratch buffers per stream. The device owns them
// (CudaDevice::op_caches), each is bounded, and all are emptied when the
// last model on the device unloads (Device::release_caches): their entries
// hold descriptors, recorded graphs and buffers made for the shapes and
// memory of models that are gone.
#pragma once

#include <array>
#include <atomic>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "aotirt/status.h"

namespace aotirt {

class CudaOpCache {
 public:
  virtual ~CudaOpCache() = default;
  virtual const char* name() const = 0;
  // Entries kept now.
  virtual size_t size() const = 0;
  virtual void clear() = 0;
};

// A bounded map from Key to a shared Value; past |capacity| the least
// recently used entry goes. Entries are handed out as shared_ptr, so one
// that is evicted or cleared while a call still uses it lives until that
// call is done.
template <class Key, class Value>
class CudaPlanCache final : public CudaOpCache {
 public:
  CudaPlanCache(const char* name, size_t capacity) : name_(name), capacity_(capacity) {}

  // The entry for |key|, made by |make| (returning Result<shared_ptr<Value>>)
  // on a miss. |make| runs outside the lock: two callers may make the same
  // entry, and the first one kept wins.
  template <class Make>
  Result<std::shared_ptr<Value>> get(const Key& key, Make make) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = index_.find(key);
      if (it != index_.end()) {
        lru_.splice(lru_.begin(), lru_, it->second);
        return it->second->second;
      }
    }
    Result<std::shared_ptr<Value>> made = make();
    if (!made.ok()) return made;
    std::lock_guard<std::mutex> lock(mu_);
    auto it = index_.find(key);
    if (it != index_.end()) return it->second->second;
    lru_.emplace_front(key, *made);
    index_[key] = lru_.begin();
    while (lru_.size() > capacity_) {
      index_.erase(lru_.back().first);
      lru_.pop_back();
    }
    return made;
  }

  const char* name() const override { return name_; }
  size_t size() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return lru_.size();
  }
  void clear() override {
    std::list<std::pair<Key, std::shared_ptr<Value>>> dropped;
    {
      std::lock_guard<std::mutex> lock(mu_);
      dropped.swap(lru_);
      index_.clear();
    }
    // Destroyed outside the lock: a Value's destructor may call a library.
  }

 private:
  const char* name_;
  size_t capacity_;
  mutable std::mutex mu_;
  std::list<std::pair<Key, std::shared_ptr<Value>>> lru_;  // most recent first
  std::map<Key, typename decltype(lru_)::iterator> index_;
};

// The device's caches, one of each type, made on first use. Finding one is
// an atomic load: the ops ask on every call.
class CudaOpCaches {
 public:
  static constexpr int kMaxTypes = 32;
  ~CudaOpCaches();

  // The cache of type T, made by |make| the first time.
  template <class T>
  T& get(const std::function<std::unique_ptr<T>()>& make) {
    const int id = type_id<T>();
    if (CudaOpCache* c = slots_[id].load(std::memory_order_acquire)) return static_cast<T&>(*c);
    std::lock_guard<std::mutex> lock(mu_);
    if (CudaOpCache* c = slots_[id].load(std::memory_order_acquire)) return static_cast<T&>(*c);
    CudaOpCache* made = make().release();
    slots_[id].store(made, std::memory_order_release);
    return static_cast<T&>(*made);
  }
  // Each cache's name and entries.
  std::vector<std::pair<std::string, size_t>> sizes() const;
  size_t entries() const;
  void clear();

 private:
  static int next_type_id();
  template <class T>
  static int type_id() {
    static const int id = next_type_id();
    return id;
  }
  std::mutex mu_;  // held while a cache is made
  std::array<std::atomic<CudaOpCache*>, kMaxTypes> slots_{};  // owned
};

}  // namespace aotirt
