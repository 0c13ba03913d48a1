// Redirects what a loaded shared library imports: every GOT slot of the
// library that the dynamic linker bound to a named symbol is pointed at a
// replacement function. aotirt uses it to answer a model library's own
// getenv calls without changing the process environment (see
// model/model_library.h). Only this library's slots change; every other
// object in the process keeps its bindings.
#pragma once

#include "base/status.h"

namespace aotirt {

// Points every GOT slot of the dlopen()ed library |handle| bound to
// |symbol| (PLT jump slots and GLOB_DAT data slots) at |replacement|, making
// RELRO pages writable for the moment of the write. Returns how many slots
// changed (0 when the library does not import |symbol|). x86-64 and aarch64
// only; elsewhere kUnimplemented.
Result<int> redirect_import(void* handle, const char* symbol, void* replacement);

}  // namespace aotirt
