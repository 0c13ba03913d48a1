// Reads the dynamic symbol table of an ELF shared library in memory (through
// libelf), so a package's imports can be checked before it is loaded.
#pragma once

#include <string>
#include <vector>

#include "aotirt/status.h"

namespace aotirt {

struct ElfImports {
  std::vector<std::string> undefined;  // symbols the library needs from elsewhere
  std::vector<std::string> needed;     // DT_NEEDED libraries
};

// |data| holds the whole file. DATA_LOSS when it is not a valid ELF library.
Result<ElfImports> read_elf_imports(const std::string& data);

}  // namespace aotirt
