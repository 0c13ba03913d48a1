#include "package/elf_symbols.h"

#include <gelf.h>
#include <libelf.h>

#include <algorithm>
#include <memory>

#include "base/status.h"

namespace aotirt {

Result<ElfImports> read_elf_imports(const std::string& data) {
  if (elf_version(EV_CURRENT) == EV_NONE)
    return AOTIRT_STATUS(kInternal, "libelf initialisation failed: {}", elf_errmsg(-1));
  Elf* elf = elf_memory(const_cast<char*>(data.data()), data.size());
  // Ended on every way out, a thrown std::bad_alloc included.
  std::unique_ptr<Elf, int (*)(Elf*)> ender(elf, &elf_end);
  if (!elf || elf_kind(elf) != ELF_K_ELF) return AOTIRT_STATUS(kDataLoss, "the model library is not an ELF file");
  ElfImports out;
  Elf_Scn* scn = nullptr;
  bool found_dynsym = false;
  while ((scn = elf_nextscn(elf, scn)) != nullptr) {
    GElf_Shdr shdr;
    if (!gelf_getshdr(scn, &shdr)) continue;
    Elf_Data* d = elf_getdata(scn, nullptr);
    if (!d) continue;
    if (shdr.sh_type == SHT_DYNSYM) {
      found_dynsym = true;
      size_t count = shdr.sh_entsize ? shdr.sh_size / shdr.sh_entsize : 0;
      for (size_t i = 1; i < count; ++i) {
        GElf_Sym sym;
        if (!gelf_getsym(d, static_cast<int>(i), &sym)) continue;
        if (sym.st_shndx != SHN_UNDEF) continue;
        const char* name = elf_strptr(elf, shdr.sh_link, sym.st_name);
        if (name && *name) out.undefined.emplace_back(name);
      }
    } else if (shdr.sh_type == SHT_DYNAMIC) {
      size_t count = shdr.sh_entsize ? shdr.sh_size / shdr.sh_entsize : 0;
      for (size_t i = 0; i < count; ++i) {
        GElf_Dyn dyn;
        if (!gelf_getdyn(d, static_cast<int>(i), &dyn)) continue;
        if (dyn.d_tag == DT_NEEDED) {
          const char* name = elf_strptr(elf, shdr.sh_link, dyn.d_un.d_val);
          if (name) out.needed.emplace_back(name);
        }
      }
    }
  }
  ender.reset();
  if (!found_dynsym) return AOTIRT_STATUS(kDataLoss, "the model library has no dynamic symbol table");
  std::sort(out.undefined.begin(), out.undefined.end());
  out.undefined.erase(std::unique(out.undefined.begin(), out.undefined.end()), out.undefined.end());
  return out;
}

}  // namespace aotirt
