# Points aotirt at the CUDA libraries of NVIDIA's wheels (`pip install
# aotirt[cuda]`, the ones torch uses): they live in site-packages/nvidia/,
# where the dynamic loader does not look. aotirt opens each on first use by
# the path its AOTIRT_*_LIBRARY variable names (docs/cuda.md), so
# this sets those variables, once, before the runtime reads them; a value
# the user set wins. Nothing is loaded here.

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

# aotirt's variable and the soname it opens.
LIBRARIES = {
    "AOTIRT_CUBLASLT_LIBRARY": "libcublasLt.so.13",
    "AOTIRT_CUBLAS_LIBRARY": "libcublas.so.13",
    "AOTIRT_CUDNN_LIBRARY": "libcudnn.so.9",
    "AOTIRT_CUFFT_LIBRARY": "libcufft.so.12",
    "AOTIRT_CUSOLVER_LIBRARY": "libcusolver.so.12",
}

_done = False


def library_dirs() -> list:
    """The lib/ folders of the installed nvidia-* wheels."""
    spec = importlib.util.find_spec("nvidia")
    if spec is None or not spec.submodule_search_locations:
        return []
    dirs = []
    for root in spec.submodule_search_locations:
        for lib in sorted(Path(root).glob("*/lib")) + sorted(Path(root).glob("*/*/lib")):
            if lib.is_dir():
                dirs.append(lib)
    return dirs


def point_at_wheels(environ=os.environ) -> None:
    """Sets the AOTIRT_*_LIBRARY variables for the libraries the wheels have."""
    global _done
    if _done and environ is os.environ:
        return
    dirs = library_dirs()
    for var, soname in LIBRARIES.items():
        if environ.get(var):
            continue
        for d in dirs:
            if (d / soname).is_file():
                environ[var] = str(d / soname)
                break
    if environ is os.environ:
        _done = True
