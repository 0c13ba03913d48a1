// Helpers shared by the shim tests: a handle that deletes itself, a check
// that a shim failed with a given message, and typed data access.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "base/status.h"
#include "shim/shim_abi.h"

namespace aotirt {
namespace shim_test {

// Deletes the handle at scope exit (and expects that to succeed).
struct Handle {
  AtenTensorHandle h = nullptr;
  Handle() = default;
  Handle(const Handle&) = delete;
  ~Handle() {
    if (h) {
      EXPECT_EQ(aoti_torch_delete_tensor_object(h), 0);
    }
  }
  AtenTensorHandle* out() { return &h; }
  operator AtenTensorHandle() const { return h; }  // NOLINT
};

// Expects |rc| to be a failure whose last-error message contains |needle|.
inline void expect_failure(AOTITorchError rc, const std::string& needle) {
  EXPECT_EQ(rc, 1);
  const Status& e = get_last_error();
  ASSERT_FALSE(e.ok()) << "no last error recorded";
  EXPECT_NE(e.message().find(needle), std::string::npos) << e.message();
}

template <class T>
T* data_of(AtenTensorHandle t) {
  void* p = nullptr;
  EXPECT_EQ(aoti_torch_get_data_ptr(t, &p), 0);
  return static_cast<T*>(p);
}

}  // namespace shim_test
}  // namespace aotirt
