// Makes aotirt's shim symbols visible to model libraries and answers whether
// a given symbol is provided.
//
// A model library is opened RTLD_LOCAL and resolves aoti_torch_* from the
// global scope. That holds when libaotirt.so is a dependency of the program,
// but not when a host dlopen()s aotirt itself with RTLD_LOCAL (Python's
// ctypes, plugin systems), so we promote our own library to global first.
#pragma once

#include <string>

#include "aotirt/status.h"

namespace aotirt {

Status ensure_shims_global();
// True when |name| resolves in the global scope (after ensure_shims_global).
bool symbol_in_global_scope(const std::string& name);

}  // namespace aotirt
