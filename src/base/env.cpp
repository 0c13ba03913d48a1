#include "base/env.h"

#include <cstdlib>
#include <cstring>

namespace aotirt {

char* process_env(const char* name) { return name ? std::getenv(name) : nullptr; }

char* env_with_input_checks(const char* name) {
  static char kOn[] = "1";
  if (name && std::strcmp(name, kCheckInputsEnv) == 0) return kOn;
  return process_env(name);
}

}  // namespace aotirt
