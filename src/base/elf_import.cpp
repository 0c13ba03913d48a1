#include "base/elf_import.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace aotirt {

#if defined(__x86_64__)
constexpr uint32_t kJumpSlot = R_X86_64_JUMP_SLOT, kGlobDat = R_X86_64_GLOB_DAT;
#elif defined(__aarch64__)
constexpr uint32_t kJumpSlot = R_AARCH64_JUMP_SLOT, kGlobDat = R_AARCH64_GLOB_DAT;
#endif

#if defined(__x86_64__) || defined(__aarch64__)
namespace {

// The PT_GNU_RELRO range of the object loaded at |base|: the part of its
// GOT that ld.so makes read-only once relocation is done (-z relro).
struct RelroSearch {
  uintptr_t base = 0;
  uintptr_t start = 0, end = 0;
};

int find_relro(struct dl_phdr_info* info, size_t, void* data) {
  auto* search = static_cast<RelroSearch*>(data);
  if (info->dlpi_addr != search->base) return 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_GNU_RELRO) continue;
    search->start = search->base + ph.p_vaddr;
    search->end = search->start + ph.p_memsz;
  }
  return 1;
}

}  // namespace

Result<int> redirect_import(void* handle, const char* symbol, void* replacement) {
  struct link_map* lm = nullptr;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &lm) != 0 || !lm)
    return AOTIRT_STATUS(kInternal, "cannot read the library's link map: {}", dlerror());
  const uintptr_t base = lm->l_addr;
  // glibc relocates the pointers of a writable .dynamic in place; a
  // read-only one keeps link-time addresses, which are small offsets.
  auto at = [base](ElfW(Addr) a) { return a < base ? base + a : static_cast<uintptr_t>(a); };
  const ElfW(Sym)* symtab = nullptr;
  const char* strtab = nullptr;
  size_t strsz = 0;
  const ElfW(Rela)* tables[2] = {nullptr, nullptr};  // PLT relocations, other relocations
  size_t table_bytes[2] = {0, 0};
  bool plt_is_rela = true;
  for (const ElfW(Dyn)* d = lm->l_ld; d && d->d_tag != DT_NULL; ++d) {
    switch (d->d_tag) {
      case DT_SYMTAB: symtab = reinterpret_cast<const ElfW(Sym)*>(at(d->d_un.d_ptr)); break;
      case DT_STRTAB: strtab = reinterpret_cast<const char*>(at(d->d_un.d_ptr)); break;
      case DT_STRSZ: strsz = d->d_un.d_val; break;
      case DT_JMPREL: tables[0] = reinterpret_cast<const ElfW(Rela)*>(at(d->d_un.d_ptr)); break;
      case DT_PLTRELSZ: table_bytes[0] = d->d_un.d_val; break;
      case DT_PLTREL: plt_is_rela = d->d_un.d_val == DT_RELA; break;
      case DT_RELA: tables[1] = reinterpret_cast<const ElfW(Rela)*>(at(d->d_un.d_ptr)); break;
      case DT_RELASZ: table_bytes[1] = d->d_un.d_val; break;
      default: break;
    }
  }
  if (!symtab || !strtab) return AOTIRT_STATUS(kInternal, "the library has no dynamic symbol table");
  if (!plt_is_rela) tables[0] = nullptr;  // REL-format PLT relocations: not used on x86-64 or aarch64

  RelroSearch relro;
  relro.base = base;
  dl_iterate_phdr(find_relro, &relro);
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  // ld.so protects whole pages inside the range, rounding both ends down.
  const uintptr_t ro_start = relro.start & ~(page - 1), ro_end = relro.end & ~(page - 1);

  int changed = 0;
  for (int t = 0; t < 2; ++t) {
    if (!tables[t]) continue;
    const size_t n = table_bytes[t] / sizeof(ElfW(Rela));
    for (size_t i = 0; i < n; ++i) {
      const ElfW(Rela)& r = tables[t][i];
      const uint32_t type = static_cast<uint32_t>(ELF64_R_TYPE(r.r_info));
      if (type != kJumpSlot && type != kGlobDat) continue;
      const ElfW(Sym)& sym = symtab[ELF64_R_SYM(r.r_info)];
      if (sym.st_name >= strsz || std::strcmp(strtab + sym.st_name, symbol) != 0) continue;
      void** slot = reinterpret_cast<void**>(base + r.r_offset);
      const uintptr_t slot_page = reinterpret_cast<uintptr_t>(slot) & ~(page - 1);
      const bool read_only = slot_page >= ro_start && slot_page < ro_end;
      if (read_only && mprotect(reinterpret_cast<void*>(slot_page), page, PROT_READ | PROT_WRITE) != 0)
        return AOTIRT_STATUS(kInternal, "cannot make the library's GOT writable: {}", std::strerror(errno));
      *slot = replacement;
      if (read_only) mprotect(reinterpret_cast<void*>(slot_page), page, PROT_READ);
      ++changed;
    }
  }
  return changed;
}
#else
Result<int> redirect_import(void*, const char*, void*) {
  return AOTIRT_STATUS(kUnimplemented, "redirecting a library's imports is implemented for x86-64 and aarch64 only");
}
#endif

}  // namespace aotirt
