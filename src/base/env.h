// The process environment, read in one place. Options files (one per
// backend) and base/ read variables through this or std::getenv directly;
// everything else receives options instead of reading the environment.
#pragma once

namespace aotirt {

// The process's own value of |name| (std::getenv), or null.
char* process_env(const char* name);

// The variable that turns on the input checks AOTInductor generates.
constexpr const char* kCheckInputsEnv = "AOTI_RUNTIME_CHECK_INPUTS";

// The C library's environment lookup, by symbol name: what a model
// library's import is redirected from (base/elf_import.h).
constexpr const char* kEnvLookupSymbol = "getenv";

// The lookup a model library's import is redirected to: kCheckInputsEnv
// reads "1", every other variable is the process's own.
char* env_with_input_checks(const char* name);

}  // namespace aotirt
