"""zip64 packages through the CLI: a real zoo package rewritten with a 4.5 GiB
entry first, in PyTorch's own order (the weights blob of a large model comes
before its library), so every entry of the model lies past 4 GiB and is only
reachable through zip64 offsets. The filler is a hole in a sparse file: the
test writes its local header, seeks over its bytes and writes the rest, so it
costs a few MB of disk, and the file is removed afterwards.

One test (it runs once per CI run); a deflated copy of the same package checks
the compressed path of the weights blob beside it."""
from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess
import zipfile
import zlib
from pathlib import Path

import numpy as np
import pytest

from cli_util import CLI, cpu_zoo_packages, requires_cli

pytestmark = requires_cli

FILLER_BYTES = 9 << 29  # 4.5 GiB
MAX32 = 0xFFFFFFFF


@pytest.fixture(scope="module")
def mlp():
    packages = cpu_zoo_packages(("mlp",))
    if "mlp" not in packages:
        pytest.fail("zoo package mlp failed to export")
    return packages["mlp"]


def crc32_of_zeros(n: int) -> int:
    chunk = bytes(64 << 20)
    crc = 0
    while n >= len(chunk):
        crc = zlib.crc32(chunk, crc)
        n -= len(chunk)
    return zlib.crc32(chunk[:n], crc)


def write_with_filler(src: Path, dst: Path, filler_name: str, filler_bytes: int) -> None:
    """Writes |src|'s entries, stored, after a stored |filler_bytes| zero entry
    left as a hole, with zip64 records wherever a value needs them."""
    central = []

    def local_header(name: bytes, crc: int, size: int) -> bytes:
        extra = b""
        if size >= MAX32:
            extra = struct.pack("<HHQQ", 1, 16, size, size)
        field = MAX32 if extra else size
        return struct.pack("<IHHHHHIIIHH", 0x04034B50, 45 if extra else 20, 0x0800, 0, 0, 0x21, crc, field, field,
                           len(name), len(extra)) + name + extra

    def central_header(name: bytes, crc: int, size: int, offset: int) -> bytes:
        values = []
        if size >= MAX32:
            values += [size, size]
        if offset >= MAX32:
            values.append(offset)
        extra = struct.pack("<HH", 1, 8 * len(values)) + struct.pack(f"<{len(values)}Q", *values) if values else b""
        return struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, (3 << 8) | 45, 45 if values else 20, 0x0800, 0, 0, 0x21,
                           crc, MAX32 if size >= MAX32 else size, MAX32 if size >= MAX32 else size, len(name),
                           len(extra), 0, 0, 0, 0, MAX32 if offset >= MAX32 else offset) + name + extra

    with zipfile.ZipFile(src) as zin, open(dst, "wb") as f:
        name = filler_name.encode()
        crc = crc32_of_zeros(filler_bytes)
        f.write(local_header(name, crc, filler_bytes))
        f.seek(filler_bytes, os.SEEK_CUR)  # a hole: nothing is written
        central.append(central_header(name, crc, filler_bytes, 0))
        for info in zin.infolist():
            data = zin.read(info.filename)
            name = info.filename.encode()
            crc = zlib.crc32(data)
            offset = f.tell()
            f.write(local_header(name, crc, len(data)))
            f.write(data)
            central.append(central_header(name, crc, len(data), offset))
        cd_offset = f.tell()
        cd = b"".join(central)
        f.write(cd)
        z64_offset = f.tell()
        n = len(central)
        f.write(struct.pack("<IQHHIIQQQQ", 0x06064B50, 44, 45, 45, 0, 0, n, n, len(cd), cd_offset))
        f.write(struct.pack("<IIQI", 0x07064B50, 0, z64_offset, 1))
        f.write(struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 0xFFFF, 0xFFFF, MAX32, MAX32, 0))


def run(pt2: Path, inputs, out: Path) -> list:
    args = [str(CLI), "run", str(pt2)]
    for x in inputs:
        args += ["--input", str(x)]
    env = dict(os.environ, OMP_NUM_THREADS="1")
    proc = subprocess.run(args + ["--output-dir", str(out)], capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return [np.load(p) for p in sorted(out.glob("output*.npy"))]


def test_package_past_4gib_runs_like_the_original(tmp_path, mlp):
    if shutil.disk_usage(tmp_path).free < (2 << 30):
        pytest.skip("less than 2 GiB free where the sparse package would go")
    with zipfile.ZipFile(mlp["pt2"]) as z:
        names = z.namelist()
        root = names[0].split("/")[0]
    big = tmp_path / "big.pt2"
    try:
        write_with_filler(mlp["pt2"], big, f"{root}/extra/zip64_filler.bin", FILLER_BYTES)
        if os.stat(big).st_blocks * 512 > (1 << 30):
            pytest.skip("this filesystem does not keep the filler as a hole (no sparse files)")
        assert big.stat().st_size > FILLER_BYTES
        # Every entry of the model lies past 4 GiB.
        with zipfile.ZipFile(big) as z:
            model = [i for i in z.infolist() if "/data/aotinductor/" in i.filename]
            assert model and all(i.header_offset > MAX32 for i in model)
            assert any(i.filename.endswith("_weights.blob") for i in model), "the package has no weights blob"

        want = run(mlp["pt2"], mlp["inputs"], tmp_path / "want")
        got = run(big, mlp["inputs"], tmp_path / "got")
        assert len(got) == len(want) > 0
        for g, w in zip(got, want):
            assert g.dtype == w.dtype and g.shape == w.shape
            assert np.array_equal(g, w)

        seen = {}
        for name, pt2 in (("big", big), ("original", mlp["pt2"])):
            proc = subprocess.run([str(CLI), "inspect", str(pt2), "--json"], capture_output=True, text=True,
                                  timeout=120)
            assert proc.returncode == 0, proc.stderr
            seen[name] = json.loads(proc.stdout)
        for key in ("library_entry", "library_bytes", "weight_bytes", "weights_in_library"):
            assert seen["big"][key] == seen["original"][key], key
    finally:
        big.unlink(missing_ok=True)


def test_deflated_package_runs_like_the_original(tmp_path, mlp):
    """Every entry deflated, the weights blob too: it is read into memory
    (CRC-checked, exactly its size), not mapped."""
    deflated = tmp_path / "deflated.pt2"
    with zipfile.ZipFile(mlp["pt2"]) as zin, zipfile.ZipFile(deflated, "w", zipfile.ZIP_DEFLATED) as zout:
        for info in zin.infolist():
            zout.writestr(info.filename, zin.read(info.filename))
    with zipfile.ZipFile(deflated) as z:
        blobs = [i for i in z.infolist() if i.filename.endswith("_weights.blob")]
        assert blobs and all(i.compress_type == zipfile.ZIP_DEFLATED for i in blobs)
    want = run(mlp["pt2"], mlp["inputs"], tmp_path / "want")
    got = run(deflated, mlp["inputs"], tmp_path / "got")
    assert len(got) == len(want) > 0
    for g, w in zip(got, want):
        assert np.array_equal(g, w)
