# Inductor's CPU vector-ISA probe, made to report the host's ISA before a
# lean export.
#
# Inductor picks the vector ISA of its CPU kernels (AVX2, AVX-512, ...) by
# building a small probe library per ISA and loading it in a child process.
# The probe library is cached in Inductor's cache directory under a key that
# leaves out `aot_inductor.link_libtorch`. When the first probe on a machine
# runs under aotirt's lean options, the library is linked without
# libtorch_cpu, its Sleef_* symbols stay unresolved, loading it fails, and the
# probe says "no vector ISA". That failed library then stays in the cache, so
# every later process on the machine, lean or not, compiles scalar kernels
# (AOTI_CPU_ISA "INVALID_VEC_ISA"), several times slower than vectorised ones.
#
# prepare_vec_isa() runs the probe the way a normal configuration does (with
# libtorch linked), removes cached probe libraries that fail on a CPU that has
# their ISA, and leaves Inductor's in-process answer set to the good result.
# It relies on torch 2.11's torch._inductor.cpu_vec_isa internals (the pinned
# version); with other versions it degrades to a plain probe.

from __future__ import annotations

import os
import platform
import warnings

_prepared: str | None = None


def _clear_caches(cpu_vec_isa) -> None:
    """Forgets Inductor's in-process answers, so the next query probes again."""
    cpu_vec_isa.valid_vec_isa_list.cache_clear()
    seen = set()
    for isa in cpu_vec_isa.supported_vec_isa_list:
        for cls in type(isa).__mro__:
            for name in ("__bool__", "_VecISA__bool__impl", "is_avx512_bf16_supported"):
                fn = cls.__dict__.get(name)
                if fn is not None and id(fn) not in seen and hasattr(fn, "cache_clear"):
                    seen.add(id(fn))
                    fn.cache_clear()


def _host_candidates(cpu_vec_isa) -> list:
    """The ISAs whose instructions this CPU has (x86 only: elsewhere the
    probe is Inductor's whole answer)."""
    if platform.machine() not in ("x86_64", "AMD64"):
        return []
    flags = cpu_vec_isa.x86_isa_checker()
    return [
        isa
        for isa in cpu_vec_isa.supported_vec_isa_list
        if str(isa).split() and all(f in flags for f in str(isa).split())
    ]


def _probe_library(cpu_vec_isa, isa) -> str | None:
    """Path of the cached probe library of `isa` (the one that needs Sleef),
    computed as Inductor's check_build does; None when that fails."""
    try:
        from torch._inductor.codecache import write
        from torch._inductor.cpp_builder import (
            CppBuilder,
            CppTorchOptions,
            normalize_path_separator,
        )

        fingerprint = cpu_vec_isa._get_isa_dry_compile_fingerprint(isa._arch_flags)
        key, source = write(cpu_vec_isa.VecISA._avx_code, "cpp", extra=fingerprint)
        builder = CppBuilder(
            key, [source], CppTorchOptions(vec_isa=isa, warning_all=False), os.path.dirname(source)
        )
        return normalize_path_separator(builder.get_target_file_path())
    except Exception:  # internals moved: nothing to repair
        return None


def _remove_failed_probes(cpu_vec_isa, failed: list) -> list:
    removed = []
    for isa in failed:
        path = _probe_library(cpu_vec_isa, isa)
        if path and os.path.isfile(path):
            os.remove(path)
            removed.append(path)
    return removed


def prepare_vec_isa(force: bool = False) -> str:
    """Make Inductor compile CPU kernels for this host's best vector ISA.

    Call it once before `torch._inductor.aoti_compile_and_package` with the
    lean options (`aotirt.export` calls it itself). It probes each vector ISA
    with libtorch linked, as a normal configuration does; a cached probe
    library that fails to load although this CPU has its ISA (one built by an
    earlier lean export) is deleted and built again. Later processes on the
    machine then find good probes in the cache too.

    Returns the ISA Inductor now compiles for, as Inductor names it
    ("avx512", "avx2", "INVALID_VEC_ISA", ...). The work is done once per
    process; `force=True` does it again. When the caller fixed the answer with
    `torch._inductor.config.cpp.vec_isa_ok`, nothing is probed.
    """
    global _prepared
    if _prepared is not None and not force:
        return _prepared
    from torch._inductor import config, cpu_vec_isa

    if config.cpp.vec_isa_ok is not None:
        _prepared = str(cpu_vec_isa.pick_vec_isa())
        return _prepared
    with config.patch({"aot_inductor.link_libtorch": True}):
        _clear_caches(cpu_vec_isa)
        candidates = _host_candidates(cpu_vec_isa)
        valid = {str(isa) for isa in cpu_vec_isa.valid_vec_isa_list()}
        failed = [isa for isa in candidates if str(isa) not in valid]
        if failed and _remove_failed_probes(cpu_vec_isa, failed):
            _clear_caches(cpu_vec_isa)
            valid = {str(isa) for isa in cpu_vec_isa.valid_vec_isa_list()}
            failed = [isa for isa in candidates if str(isa) not in valid]
        if failed:
            warnings.warn(
                "Inductor's vector-ISA probe fails for "
                + ", ".join(str(isa) for isa in failed)
                + " although this CPU has it (is a C++ compiler installed?); "
                "CPU kernels compiled now may be scalar and slow",
                stacklevel=2,
            )
        _prepared = str(cpu_vec_isa.pick_vec_isa())
    return _prepared
