// SLEEF symbols for CPU model libraries (see cpu_sleef.cpp).
#pragma once

#include "aotirt/status.h"

namespace aotirt {

// Loads libsleef RTLD_GLOBAL once. NOT_FOUND when it is not installed.
Status ensure_sleef_global();

}  // namespace aotirt
