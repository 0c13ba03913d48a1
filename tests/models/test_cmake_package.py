"""The installed CMake package works for a project outside the tree:
`cmake --install`, then `find_package(aotirt)` + `aotirt::aotirt` in a fresh
project that builds examples/embed/main.cpp, which runs a real zoo package."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent.parent
BUILD = Path(os.environ.get("AOTIRT_BUILD_DIR", REPO / "build"))

pytestmark = pytest.mark.skipif(
    not (BUILD / "CMakeCache.txt").exists() or shutil.which("cmake") is None,
    reason=f"no configured build at {BUILD}",
)

CONSUMER = """
cmake_minimum_required(VERSION 3.25)
project(consumer CXX)
set(CMAKE_CXX_STANDARD 17)
find_package(aotirt 0.1 REQUIRED)
add_executable(consumer main.cpp)
target_link_libraries(consumer PRIVATE aotirt::aotirt)
"""


def run(cmd, **kw):
    proc = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=300, **kw)
    assert proc.returncode == 0, f"{' '.join(map(str, cmd))}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc


def test_installed_package_builds_and_runs_a_consumer(tmp_path, zoo_manifest, zoo_root):
    prefix = tmp_path / "prefix"
    run(["cmake", "--install", BUILD, "--prefix", prefix])
    assert (prefix / "include" / "aotirt" / "aotirt.h").exists()
    assert (prefix / "lib" / "cmake" / "aotirt" / "aotirtConfig.cmake").exists()

    src = tmp_path / "consumer"
    src.mkdir()
    (src / "CMakeLists.txt").write_text(CONSUMER)
    shutil.copy(REPO / "examples" / "embed" / "main.cpp", src / "main.cpp")
    run(["cmake", "-S", src, "-B", src / "b", "-G", "Ninja", f"-DCMAKE_PREFIX_PATH={prefix}"])
    run(["ninja", "-C", src / "b"])

    pkg = next(p for p in zoo_manifest["packages"] if p["name"] == "mlp")
    proc = run([src / "b" / "consumer", zoo_root / pkg["dir"] / pkg["package"]])
    assert "output 0" in proc.stdout, proc.stdout
