#include "model/model_library.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "base/log.h"
#include "base/status.h"

namespace aotirt {
namespace {

// What a model library's getenv calls reach once redirected (see
// ModelLibrary::open): its input checks are on, every other variable is the
// process's own.
char* model_library_getenv(const char* name) {
  static char kOn[] = "1";
  if (name && std::strcmp(name, kCheckInputsEnv) == 0) return kOn;
  return std::getenv(name);
}

#if defined(__x86_64__)
constexpr uint32_t kJumpSlot = R_X86_64_JUMP_SLOT, kGlobDat = R_X86_64_GLOB_DAT;
#elif defined(__aarch64__)
constexpr uint32_t kJumpSlot = R_AARCH64_JUMP_SLOT, kGlobDat = R_AARCH64_GLOB_DAT;
#endif

#if defined(__x86_64__) || defined(__aarch64__)
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

// Points every GOT slot of the library |handle| that is bound to getenv at
// model_library_getenv. Returns how many slots changed.
Result<int> redirect_getenv(void* handle) {
  struct link_map* lm = nullptr;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &lm) != 0 || !lm)
    return AOTIRT_STATUS(kInternal, "cannot read the model library's link map: {}", dlerror());
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
  if (!symtab || !strtab) return AOTIRT_STATUS(kInternal, "the model library has no dynamic symbol table");
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
      if (sym.st_name >= strsz || std::strcmp(strtab + sym.st_name, "getenv") != 0) continue;
      void** slot = reinterpret_cast<void**>(base + r.r_offset);
      const uintptr_t slot_page = reinterpret_cast<uintptr_t>(slot) & ~(page - 1);
      const bool read_only = slot_page >= ro_start && slot_page < ro_end;
      if (read_only && mprotect(reinterpret_cast<void*>(slot_page), page, PROT_READ | PROT_WRITE) != 0)
        return AOTIRT_STATUS(kInternal, "cannot make the model library's GOT writable: {}", std::strerror(errno));
      *slot = reinterpret_cast<void*>(&model_library_getenv);
      if (read_only) mprotect(reinterpret_cast<void*>(slot_page), page, PROT_READ);
      ++changed;
    }
  }
  return changed;
}
#else
Result<int> redirect_getenv(void*) {
  return AOTIRT_STATUS(kUnimplemented, "redirecting a library's getenv is implemented for x86-64 and aarch64 only");
}
#endif

template <class Fn>
Status resolve(void* handle, const char* symbol, bool required, Fn* out) {
  dlerror();
  void* p = dlsym(handle, symbol);
  if (!p && required)
    return AOTIRT_STATUS(kIncompatible,
                         "the model library does not export {}; it was not built by a supported "
                         "AOTInductor (torch 2.9 or newer)",
                         symbol);
  *out = reinterpret_cast<Fn>(p);
  return Status();
}

}  // namespace

Result<std::unique_ptr<ModelLibrary>> ModelLibrary::open(const std::string& bytes, const std::string& name) {
  std::unique_ptr<ModelLibrary> lib(new ModelLibrary());
  AOTIRT_ASSIGN_OR_RETURN(lib->fd_, create_memfd("aotirt-" + name));
  AOTIRT_RETURN_IF_ERROR(write_all(lib->fd_.get(), bytes.data(), bytes.size(), "the model library"));
  lib->path_ = "/proc/self/fd/" + std::to_string(lib->fd_.get());
  lib->handle_ = dlopen(lib->path_.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib->handle_) {
    const char* err = dlerror();
    return AOTIRT_STATUS(kNotFound, "cannot load the model library: {}", err ? err : "unknown dlopen error");
  }
  ContainerApi& a = lib->api_;
  AOTIRT_RETURN_IF_ERROR(resolve(lib->handle_, "AOTInductorModelContainerCreateWithDevice", true, &a.create_with_device));
  AOTIRT_RETURN_IF_ERROR(resolve(lib->handle_, "AOTInductorModelContainerDelete", true, &a.destroy));
  AOTIRT_RETURN_IF_ERROR(resolve(lib->handle_, "AOTInductorModelContainerRun", true, &a.run));
  AOTIRT_RETURN_IF_ERROR(resolve(lib->handle_, "AOTInductorModelContainerRunSingleThreaded", false, &a.run_single_threaded));
  AOTIRT_RETURN_IF_ERROR(resolve(lib->handle_, "AOTInductorModelContainerGetNumInputs", true, &a.get_num_inputs));
  AOTIRT_RETURN_IF_ERROR(resolve(lib->handle_, "AOTInductorModelContainerGetNumOutputs", true, &a.get_num_outputs));
  AOTIRT_RETURN_IF_ERROR(resolve(lib->handle_, "AOTInductorModelContainerGetInputName", true, &a.get_input_name));
  AOTIRT_RETURN_IF_ERROR(resolve(lib->handle_, "AOTInductorModelContainerGetOutputName", true, &a.get_output_name));
  AOTIRT_RETURN_IF_ERROR(resolve(lib->handle_, "AOTInductorModelContainerGetCallSpec", true, &a.get_call_spec));
  AOTIRT_RETURN_IF_ERROR(resolve(lib->handle_, "AOTInductorModelContainerGetNumConstants", false, &a.get_num_constants));
  AOTIRT_RETURN_IF_ERROR(resolve(lib->handle_, "AOTInductorModelUpdateConstantsFromBlob", false,
                                 &a.update_constants_from_blob));
  AOTIRT_RETURN_IF_ERROR(resolve(lib->handle_, "AOTInductorModelContainerGetConstantFromFolded", false,
                                 &a.get_constant_from_folded));
  AOTIRT_RETURN_IF_ERROR(
      resolve(lib->handle_, "AOTInductorModelContainerGetConstantType", false, &a.get_constant_type));
  AOTIRT_RETURN_IF_ERROR(
      resolve(lib->handle_, "AOTInductorModelContainerGetConstantDataSize", false, &a.get_constant_data_size));
  AOTIRT_RETURN_IF_ERROR(
      resolve(lib->handle_, "AOTInductorModelContainerGetConstantsBlobSize", false, &a.get_constants_blob_size));

  // Before anything runs in the library (its constructors ran in dlopen,
  // and they do not run a model).
  Result<int> redirected = redirect_getenv(lib->handle_);
  if (redirected.ok()) {
    lib->input_checks_forced_ = redirected.value() > 0;
    if (!lib->input_checks_forced_)
      AOTIRT_LOG(kDebug, "the model library imports no getenv: it has no generated input checks to turn on");
  } else {
    AOTIRT_LOG(kWarning, "the model library's own input checks stay off unless {} is set: {}", kCheckInputsEnv,
               redirected.status().message());
  }
  return lib;
}

ModelLibrary::~ModelLibrary() {
  if (!handle_) return;
  dlclose(handle_);
  // Libraries with STB_GNU_UNIQUE symbols (libstdc++ templates emit them)
  // can never be unloaded. glibc finds loaded libraries by path, so if this
  // one stays resident its fd number must never name another library: keep
  // the memfd open for the life of the process (its pages stay mapped anyway).
  if (void* resident = dlopen(path_.c_str(), RTLD_NOW | RTLD_NOLOAD)) {
    dlclose(resident);
    fd_.release();
  }
}

}  // namespace aotirt
