"""Symbol checks on the built libraries: libaotirt.so exports exactly the
shims python/aotirt/provided_shims*.txt list (the exporter trusts those
lists), every zoo package's imported shims are among them, nothing else leaks
out of the library, and the CPU-only build holds no CUDA symbol at all."""
from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent.parent
BUILD = Path(os.environ.get("AOTIRT_BUILD_DIR", REPO / "build"))
LIB = BUILD / "lib" / "libaotirt.so"
CPU_ONLY_LIB = os.environ.get("AOTIRT_CPU_ONLY_LIB")

pytestmark = pytest.mark.skipif(not LIB.exists(), reason=f"{LIB} not built")


def dynamic_symbols(lib: Path, defined: bool) -> set:
    flag = "--defined-only" if defined else "--undefined-only"
    out = subprocess.run(["nm", "-D", flag, str(lib)], capture_output=True, text=True, check=True).stdout
    return {line.split()[-1].split("@")[0] for line in out.splitlines() if line.strip()}


def listed(name: str) -> set:
    text = (REPO / "python" / "aotirt" / name).read_text()
    return {l.strip() for l in text.splitlines() if l.strip() and not l.startswith("#")}


def has_cuda(lib: Path) -> bool:
    return any(s.startswith("aoti_torch_cuda") for s in dynamic_symbols(lib, True))


# The oneDNN shims of frozen packages: in provided_shims.txt (the exporter
# accepts frozen models), but defined only by builds that found oneDNN's
# headers; a build without them exports none and refuses such packages at load.
ONEDNN_SHIM = re.compile(r"^aoti_torch_cpu_(mkldnn_|_linear_pointwise)")


def expected_exports(lib: Path) -> set:
    expected = listed("provided_shims.txt")
    if has_cuda(lib):
        expected |= listed("provided_shims_cuda.txt")
    if not any(ONEDNN_SHIM.match(s) for s in dynamic_symbols(lib, True)):
        expected = {s for s in expected if not ONEDNN_SHIM.match(s)}
    return expected


def test_exports_equal_provided_lists():
    exported = {s for s in dynamic_symbols(LIB, True) if s.startswith("aoti_torch_")}
    expected = expected_exports(LIB)
    assert exported - expected == set(), "exported but not listed (update provided_shims*.txt)"
    assert expected - exported == set(), "listed but not exported"


def test_nothing_else_is_exported():
    # aotirt_last_error_message, aotirt_run_begin and aotirt_run_end: the C
    # entry points for foreign-function callers of the shims
    # (include/aotirt/model.h).
    allowed = re.compile(r"^(aoti_torch_|aoti_record_function_(start|end)$|aotirt_last_error_message$|"
                         r"aotirt_run_(begin|end)$|"
                         r"_ZN6aotirt|_ZNK6aotirt|_init$|_fini$)")
    cuda_rt = re.compile(r"^(cuda|__cuda)")  # cudart, exported on purpose in CUDA builds
    leaked = {s for s in dynamic_symbols(LIB, True) if not allowed.match(s) and not cuda_rt.match(s)}
    assert leaked == set()


def test_zoo_imports_are_provided(zoo_manifest, zoo_root):
    import aotirt

    exported = dynamic_symbols(LIB, True)
    checked = 0
    for pkg in zoo_manifest["packages"]:
        assert "error" not in pkg, f"{pkg['name']}: {pkg['error']}"
        imports = set(aotirt.imported_shims(zoo_root / pkg["dir"] / pkg["package"]))
        assert imports, f"{pkg['name']} imports no shim: the reader is broken"
        assert imports - exported == set(), f"{pkg['name']} imports shims libaotirt.so lacks"
        checked += 1
    assert checked >= 7


@pytest.mark.skipif(not CPU_ONLY_LIB, reason="AOTIRT_CPU_ONLY_LIB not set (scripts/test.sh sets it)")
def test_cpu_only_build_has_no_cuda_symbol():
    lib = Path(CPU_ONLY_LIB)
    assert lib.exists(), f"{lib} missing"
    symbols = dynamic_symbols(lib, True) | dynamic_symbols(lib, False)
    cuda = {s for s in symbols if re.match(r"^(cu[A-Z]|cuda|cublas|cudnn|nvrtc|aoti_torch_cuda)", s)}
    assert cuda == set()
    needed = subprocess.run(["readelf", "-d", str(lib)], capture_output=True, text=True, check=True).stdout
    assert not re.search(r"NEEDED.*(libcuda|libcudart|libcublas|libcudnn)", needed)
    assert {s for s in dynamic_symbols(lib, True) if s.startswith("aoti_torch_")} == expected_exports(lib)


def test_no_torch_library_is_needed():
    needed = subprocess.run(["readelf", "-d", str(LIB)], capture_output=True, text=True, check=True).stdout
    assert not re.search(r"NEEDED.*(libtorch|libc10)", needed)


def test_onednn_is_loaded_lazily():
    # oneDNN is opened at the first frozen op (cpu_onednn.cpp), never linked.
    needed = subprocess.run(["readelf", "-d", str(LIB)], capture_output=True, text=True, check=True).stdout
    assert not re.search(r"NEEDED.*libdnnl", needed)
