// Kernel modules of CUDA model libraries. The code AOTInductor generates
// loads each kernel with cuModuleLoad / cuModuleLoadData and never unloads
// it, so every load and unload of a package would leave its modules (host
// and device memory) in the process. aotirt points those imports of each
// model library at wrappers that hand every module to the library's
// LibraryResources (base/library_resources.h), which unloads it when the
// library closes.
#pragma once

#include <vector>

#include "device/device.h"

namespace aotirt {

// The imports of a model library the CUDA backend redirects.
std::vector<ImportOverride> cuda_library_imports();

}  // namespace aotirt
