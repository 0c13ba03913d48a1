# Reads the dynamic symbol table of a compiled model library, so that export
# can tell which aoti_torch_* shims the library will ask aotirt for. `nm -D`
# from binutils is the primary reader; a small ELF64 .dynsym parser stands in
# when binutils is not installed.

from __future__ import annotations

import os
import shutil
import struct
import subprocess
from dataclasses import dataclass

SHIM_PREFIX = "aoti_torch_"


@dataclass(frozen=True)
class DynamicSymbols:
    """Names from one library's dynamic symbol table (version suffixes removed).

    `unversioned_imports` are the undefined names without a symbol version:
    glibc, libstdc++ and libgcc imports are versioned, so these are what the
    host process has to supply (aoti_torch_* shims, SLEEF, CUDA runtime).
    """

    undefined: frozenset
    defined: frozenset
    unversioned_imports: frozenset = frozenset()


def _strip_version(name: str) -> str:
    # nm prints imports as "name@VERSION"; only the bare name matters here.
    return name.split("@", 1)[0]


def _nm_lines(nm: str, path: str, flag: str) -> list:
    proc = subprocess.run(
        [nm, "-D", flag, path], capture_output=True, text=True, check=False
    )
    if proc.returncode != 0:
        raise OSError(f"{nm} -D {flag} {path} failed: {proc.stderr.strip()}")
    rows = []
    for line in proc.stdout.splitlines():
        fields = line.split()
        if len(fields) >= 2:
            # Lines are "[value] TYPE name": type and name are the last two.
            rows.append((fields[-2], fields[-1]))
    return rows


def _read_elf_dynsym(path: str) -> DynamicSymbols:
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] != b"\x7fELF":
        raise OSError(f"{path} is not an ELF file")
    if data[4] != 2:
        raise OSError(f"{path}: only 64-bit ELF files are supported")
    endian = {1: "<", 2: ">"}.get(data[5])
    if endian is None:
        raise OSError(f"{path}: unknown ELF byte order {data[5]}")

    # ELF64 header: e_shoff at 0x28, e_shentsize/e_shnum at 0x3A/0x3C.
    (shoff,) = struct.unpack_from(endian + "Q", data, 0x28)
    shentsize, shnum = struct.unpack_from(endian + "HH", data, 0x3A)
    if shoff == 0 or shnum == 0:
        raise OSError(f"{path}: no section headers")

    sections = []
    for i in range(shnum):
        base = shoff + i * shentsize
        # sh_name, sh_type, sh_flags, sh_addr, sh_offset, sh_size, sh_link,
        # sh_info, sh_addralign, sh_entsize
        sections.append(struct.unpack_from(endian + "IIQQQQIIQQ", data, base))

    kShtDynsym = 11
    dynsym = next((s for s in sections if s[1] == kShtDynsym), None)
    if dynsym is None:
        return DynamicSymbols(frozenset(), frozenset())
    _, _, _, _, sym_off, sym_size, str_index, _, _, sym_entsize = dynsym
    strtab = sections[str_index]
    str_off, str_size = strtab[4], strtab[5]
    strings = data[str_off : str_off + str_size]

    # .gnu.version holds one u16 per .dynsym entry; 0 and 1 mean "no version".
    kShtGnuVersym = 0x6FFFFFFF
    versym = next((s for s in sections if s[1] == kShtGnuVersym), None)

    undefined, defined, unversioned = set(), set(), set()
    entsize = sym_entsize or 24
    count = sym_size // entsize
    for index in range(1, count):
        pos = sym_off + index * entsize
        # Elf64_Sym: st_name u32, st_info u8, st_other u8, st_shndx u16, ...
        st_name, st_info, _, st_shndx = struct.unpack_from(endian + "IBBH", data, pos)
        end = strings.find(b"\0", st_name)
        name = strings[st_name:end].decode("utf-8", "replace")
        if not name:
            continue
        if st_shndx != 0:
            defined.add(name)
            continue
        undefined.add(name)
        version = 1
        if versym is not None:
            (version,) = struct.unpack_from(endian + "H", data, versym[4] + 2 * index)
        # Weak undefined symbols (binding 2) are optional; nothing must supply them.
        if (version & 0x7FFF) <= 1 and (st_info >> 4) != 2:
            unversioned.add(name)
    return DynamicSymbols(frozenset(undefined), frozenset(defined), frozenset(unversioned))


def dynamic_symbols(path: str, use_nm: bool = True) -> DynamicSymbols:
    """Imported and exported dynamic symbols of the shared library at `path`."""
    path = os.fspath(path)
    nm = shutil.which("nm") if use_nm else None
    if nm is None:
        return _read_elf_dynsym(path)
    undefined = _nm_lines(nm, path, "--undefined-only")
    defined = _nm_lines(nm, path, "--defined-only")
    return DynamicSymbols(
        frozenset(_strip_version(n) for _, n in undefined),
        frozenset(_strip_version(n) for _, n in defined),
        # nm marks weak undefined symbols "w"/"v"; they are optional.
        frozenset(n for t, n in undefined if "@" not in n and t == "U"),
    )


def shim_imports(so_path: str, use_nm: bool = True) -> list:
    """Sorted aoti_torch_* names that the library at `so_path` imports."""
    syms = dynamic_symbols(so_path, use_nm=use_nm)
    return sorted(n for n in syms.undefined if n.startswith(SHIM_PREFIX))


def foreign_imports(so_path: str, use_nm: bool = True) -> list:
    """Sorted unversioned imports other than aoti_torch_* (e.g. Sleef_*, cuda*)."""
    syms = dynamic_symbols(so_path, use_nm=use_nm)
    return sorted(n for n in syms.unversioned_imports if not n.startswith(SHIM_PREFIX))
