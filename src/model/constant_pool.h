// The weights a ModelGroup holds once for all of its packages: each constant
// a package loaded, keyed by its original FQN (the parameter's or buffer's
// name in the exported module), for the packages loaded after it to borrow
// instead of loading a copy of their own.
//
// The tensors view memory that the loading package's model library owns;
// the group keeps that package alive for as long as any package that
// borrows from it (ModelGroup destroys its models in reverse load order).
#pragma once

#include <cstddef>
#include <string>
#include <unordered_map>
#include <utility>

#include "core/tensor.h"

namespace aotirt {

struct PooledConstant {
  TensorImpl tensor;    // the constant as its library created it
  size_t nbytes = 0;    // its data size, as the library reports it
  std::string package;  // path of the package that loaded it, for errors
};

class ConstantPool {
 public:
  const PooledConstant* find(const std::string& fqn) const {
    auto it = by_fqn_.find(fqn);
    return it == by_fqn_.end() ? nullptr : &it->second;
  }
  // The first constant registered under |fqn| stays.
  void add(const std::string& fqn, PooledConstant c) { by_fqn_.emplace(fqn, std::move(c)); }
  size_t size() const { return by_fqn_.size(); }

 private:
  std::unordered_map<std::string, PooledConstant> by_fqn_;
};

}  // namespace aotirt
