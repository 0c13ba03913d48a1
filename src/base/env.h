// The process environment, read in one place. Options files (one per
// backend) and base/ read variables through this or std::getenv directly;
// everything else receives options instead of reading the environment.
#pragma once

namespace aotirt {

// The process's own value of |name| (std::getenv), or null.
char* process_env(const char* name);

}  // namespace aotirt
