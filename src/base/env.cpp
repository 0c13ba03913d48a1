#include "base/env.h"

#include <cstdlib>

namespace aotirt {

char* process_env(const char* name) { return name ? std::getenv(name) : nullptr; }

}  // namespace aotirt
