// Build-time tool: gives the CUDA runtime API symbols ("cuda*" functions) in a
// relocatable object default visibility.
//
// libcudart_static.a marks its whole API hidden, so a shared library that
// links it cannot export it, yet model libraries built without libtorch
// import those functions from the process's global scope. The CUDA build
// merges the archive into one object (ld -r) and runs this tool on it; the
// version script then decides what libaotirt.so exports.
//
// Usage: aotirt_cuda_export_symbols <object.o>   (edits the file in place)
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <relocatable object>\n", argv[0]);
    return 2;
  }
  if (elf_version(EV_CURRENT) == EV_NONE) {
    std::fprintf(stderr, "libelf: %s\n", elf_errmsg(-1));
    return 1;
  }
  int fd = open(argv[1], O_RDWR);
  if (fd < 0) {
    std::perror(argv[1]);
    return 1;
  }
  Elf* elf = elf_begin(fd, ELF_C_RDWR, nullptr);
  if (!elf || elf_kind(elf) != ELF_K_ELF) {
    std::fprintf(stderr, "%s: not an ELF object: %s\n", argv[1], elf_errmsg(-1));
    return 1;
  }
  int changed = 0;
  Elf_Scn* scn = nullptr;
  while ((scn = elf_nextscn(elf, scn)) != nullptr) {
    GElf_Shdr shdr;
    if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_SYMTAB) continue;
    Elf_Data* data = elf_getdata(scn, nullptr);
    if (!data || shdr.sh_entsize == 0) continue;
    const size_t count = shdr.sh_size / shdr.sh_entsize;
    for (size_t i = 0; i < count; ++i) {
      GElf_Sym sym;
      if (!gelf_getsym(data, static_cast<int>(i), &sym)) continue;
      if (GELF_ST_BIND(sym.st_info) != STB_GLOBAL || GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
          sym.st_shndx == SHN_UNDEF)
        continue;
      const char* name = elf_strptr(elf, shdr.sh_link, sym.st_name);
      if (!name || std::strncmp(name, "cuda", 4) != 0) continue;
      if (GELF_ST_VISIBILITY(sym.st_other) == STV_DEFAULT) continue;
      sym.st_other = static_cast<unsigned char>((sym.st_other & ~0x3) | STV_DEFAULT);
      if (!gelf_update_sym(data, static_cast<int>(i), &sym)) {
        std::fprintf(stderr, "libelf: %s\n", elf_errmsg(-1));
        return 1;
      }
      ++changed;
    }
    elf_flagdata(data, ELF_C_SET, ELF_F_DIRTY);
  }
  // Keep the layout ld produced; only symbol bytes change.
  elf_flagelf(elf, ELF_C_SET, ELF_F_LAYOUT);
  if (elf_update(elf, ELF_C_WRITE) < 0) {
    std::fprintf(stderr, "libelf: %s\n", elf_errmsg(-1));
    return 1;
  }
  elf_end(elf);
  close(fd);
  if (changed == 0) {
    std::fprintf(stderr, "%s: no hidden cuda* functions found; is this the CUDA runtime?\n", argv[1]);
    return 1;
  }
  return 0;
}
