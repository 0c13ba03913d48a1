# The `aotirt` console script of the wheel: runs the CLI binary installed
# beside the package (aotirt/bin/aotirt), with the same arguments and exit code.

from __future__ import annotations

import os
import sys
from pathlib import Path


def binary() -> Path:
    """The installed CLI binary."""
    return Path(__file__).resolve().parent / "bin" / "aotirt"


def main() -> None:
    exe = binary()
    if not exe.is_file():
        sys.stderr.write(f"aotirt: error: the CLI binary is not installed at {exe}; "
                         "install aotirt from its wheel (pip install aotirt)\n")
        sys.exit(2)
    from . import _nvidia

    _nvidia.point_at_wheels()  # CUDA packages: NVIDIA's wheels, where installed
    os.execv(str(exe), [str(exe), *sys.argv[1:]])
