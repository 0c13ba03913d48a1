#!/usr/bin/env python3
"""Writes seed corpora for the fuzz targets in tests/fuzz (docs/testing.md).

Seeds come from real exported packages, the zoo that tests/models/make_packages.py
caches, kept small: model libraries are replaced (by the fake model library, or by
a marker the model_load target swaps for it), sources are dropped and weight blobs
cut to a few hundred bytes. Every seed stays far below 1 MB.

  make_seeds.py --out DIR [--fake-model LIB] [--zoo MANIFEST]
      writes DIR/<target>/ for every target; zip_package needs --fake-model.
  make_seeds.py --committed
      rewrites tests/fuzz/seeds/<target>/ for the targets whose seeds do not
      depend on a build (metadata, npy, model_load): the committed seeds.

The zoo manifest is --zoo, else $AOTIRT_ZOO_MANIFEST, else the newest
.cache/zoo/*-cpu/manifest.json. Without one, only the synthetic seeds are
written. Python standard library only.
"""
from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import shutil
import struct
import sys
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
MAX_SEED = 1 << 20
WEIGHTS_KEEP = 512
BUILD_FREE_TARGETS = ("metadata", "npy", "model_load")


def find_manifest(arg: str | None) -> Path | None:
    if arg:
        return Path(arg)
    env = os.environ.get("AOTIRT_ZOO_MANIFEST")
    if env:
        return Path(env)
    cache = Path(os.environ.get("AOTIRT_CACHE_DIR") or REPO / ".cache")
    found = sorted((cache / "zoo").glob("*-cpu/manifest.json"), key=lambda p: p.stat().st_mtime)
    return found[-1] if found else None


def zoo_packages(manifest: Path | None) -> list[tuple[str, Path, dict]]:
    """(name, package path, manifest entry) for each package, smallest first."""
    if manifest is None or not manifest.is_file():
        return []
    m = json.loads(manifest.read_text())
    out = []
    for p in m.get("packages", []):
        if "error" in p:
            continue
        pt2 = manifest.parent / p["dir"] / p["package"]
        if pt2.is_file():
            out.append((p["name"], pt2, p))
    return sorted(out, key=lambda t: t[1].stat().st_size)


class SeedDir:
    """Writes seeds into one directory, skipping duplicate contents."""

    def __init__(self, path: Path):
        self.path = path
        path.mkdir(parents=True, exist_ok=True)
        self.seen: set[str] = set()
        self.count = 0

    def add(self, name: str, data: bytes) -> None:
        if len(data) > MAX_SEED:
            raise SystemExit(f"seed {self.path / name} is {len(data)} bytes (limit {MAX_SEED})")
        digest = hashlib.sha1(data).hexdigest()
        if digest in self.seen:
            return
        self.seen.add(digest)
        (self.path / name).write_bytes(data)
        self.count += 1


# ---- package entries ----

def slim_entries(pt2: Path) -> list[tuple[str, bytes | None]]:
    """The package's entries, slimmed: (name, data), data None for the library.

    Generated sources are dropped (the reader only notes they exist) and the
    weights blob is cut; everything else is kept as it is.
    """
    out = []
    with zipfile.ZipFile(pt2) as z:
        for info in z.infolist():
            name = info.filename
            if name.endswith(".so"):
                out.append((name, None))
            elif name.endswith(".cpp"):
                continue
            elif name.endswith("_weights.blob"):
                out.append((name, z.read(name)[:WEIGHTS_KEEP]))
            else:
                out.append((name, z.read(name)))
    return out


def write_zip(entries: list[tuple[str, bytes]], deflate: set[str] = frozenset(), zip64: bool = False) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, data in entries:
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED if name in deflate else zipfile.ZIP_STORED
            with z.open(info, "w", force_zip64=zip64) as f:
                f.write(data)
    return buf.getvalue()


# ---- model_load's record layout (tests/fuzz/model_load_fuzzer.cpp) ----

OPT_RUN = 0x40


def model_load_input(options: int, entries: list[tuple[str, bytes | None]]) -> bytes:
    out = bytearray([options])
    for name, data in entries:
        n = name.encode()[:255]
        if data is None:
            out += bytes([1, len(n)]) + n
        else:
            data = data[:0xFFFF]
            out += bytes([0, len(n)]) + n + struct.pack("<H", len(data)) + data
    return bytes(out)


# ---- .npy files ----

NPY_DTYPES = {  # descr: (struct code, sample values)
    "<f2": ("e", [-1.5, 0.0, 2.25]), "<f4": ("f", [-1.5, 0.0, 3.0e38]), "<f8": ("d", [1e-300, -0.0, 2.0]),
    "|i1": ("b", [-128, 0, 127]), "<i2": ("h", [-3, 0, 3]), "<i4": ("i", [-7, 1, 2**31 - 1]),
    "<i8": ("q", [-(2**63), 5, 2**63 - 1]), "|u1": ("B", [0, 1, 255]), "<u2": ("H", [0, 9, 65535]),
    "<u4": ("I", [0, 1, 2**32 - 1]), "<u8": ("Q", [0, 1, 2**64 - 1]), "|b1": ("?", [True, False, True]),
    "<c8": ("ff", [1.0, -1.0, 0.5]), "<c16": ("dd", [1.0, 2.0, -3.0]),
}


def npy(descr: str, shape: tuple, payload: bytes, fortran: bool = False, version: int = 1) -> bytes:
    shape_text = "(" + ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"
    header = f"{{'descr': '{descr}', 'fortran_order': {fortran}, 'shape': {shape_text}, }}"
    prelude = 10 if version == 1 else 12
    pad = 64 - (prelude + len(header) + 1) % 64
    header = (header + " " * pad + "\n").encode("latin1")
    size = struct.pack("<H", len(header)) if version == 1 else struct.pack("<I", len(header))
    return b"\x93NUMPY" + bytes([version, 0]) + size + header + payload


def npy_values(descr: str, count: int) -> bytes:
    code, sample = NPY_DTYPES[descr]
    values = [sample[i % len(sample)] for i in range(count)]
    if len(code) == 2:  # complex: real and imaginary parts
        return b"".join(struct.pack("<" + code, v, -v) for v in values)
    return struct.pack("<" + code * count, *values)


def synthetic_npy(d: SeedDir) -> None:
    for descr in NPY_DTYPES:
        tag = descr.strip("<|")
        d.add(f"{tag}_2x3.npy", npy(descr, (2, 3), npy_values(descr, 6)))
    d.add("f4_fortran_3x2.npy", npy("<f4", (3, 2), npy_values("<f4", 6), fortran=True))
    d.add("i8_fortran_2x2x2.npy", npy("<i8", (2, 2, 2), npy_values("<i8", 8), fortran=True))
    d.add("f4_scalar.npy", npy("<f4", (), npy_values("<f4", 1)))
    d.add("f4_empty.npy", npy("<f4", (0,), b""))
    d.add("u1_0x5.npy", npy("|u1", (0, 5), b""))
    d.add("f4_v2.npy", npy("<f4", (4,), npy_values("<f4", 4), version=2))
    d.add("i4_v3.npy", npy("<i4", (1, 4), npy_values("<i4", 4), version=3))
    d.add("f4_native_order.npy", npy("=f4", (2,), npy_values("<f4", 2)))


# ---- targets ----

def metadata_seeds(d: SeedDir, packages) -> None:
    d.add("empty_list.json", b"[]")
    d.add("empty_object.json", b"{}")
    d.add("specs.json", json.dumps([{"name": "x", "dtype": "bfloat16", "shape": [-1, 3]},
                                    {"name": "y", "dtype": "int64", "shape": []}]).encode())
    d.add("minimal.json", json.dumps({"AOTI_DEVICE_KEY": "cpu", "AOTI_CPU_ISA": "AVX2",
                                      "AOTI_MACHINE": "x86_64", "AOTI_PLATFORM": "linux"}).encode())
    for name, pt2, _ in packages:
        with zipfile.ZipFile(pt2) as z:
            for n in z.namelist():
                if n.endswith("wrapper_metadata.json"):
                    text = z.read(n)
                    d.add(f"{name}_metadata.json", text)
                    meta = json.loads(text)
                    for key in ("aotirt.inputs", "aotirt.outputs"):
                        if isinstance(meta.get(key), str):
                            d.add(f"{name}_{key.split('.')[1]}.json", meta[key].encode())


def npy_seeds(d: SeedDir, packages) -> None:
    synthetic_npy(d)
    for name, pt2, _ in packages[:6]:
        for f in sorted(pt2.parent.glob("*/set0/*.npy")):
            if f.stat().st_size <= 2048:
                d.add(f"{name}_{f.parent.parent.name}_{f.name}", f.read_bytes())


def model_load_seeds(d: SeedDir, packages) -> None:
    meta = json.dumps({"AOTI_DEVICE_KEY": "cpu", "aotirt.inputs": json.dumps(
        [{"name": "x", "dtype": "float32", "shape": [-1]}])}).encode()
    base = [("p/data/aotinductor/model/m.wrapper.so", None), ("p/data/aotinductor/model/m.wrapper_metadata.json", meta)]
    d.add("fake_minimal", model_load_input(OPT_RUN, base))
    d.add("fake_cpu_named_runners", model_load_input(OPT_RUN | 0x01 | 0x18, base))
    d.add("fake_with_cubin", model_load_input(OPT_RUN, base + [("p/data/aotinductor/model/k.cubin", b"\0" * 16)]))
    d.add("fake_two_models", model_load_input(OPT_RUN, base + [
        ("p/data/aotinductor/other/o.wrapper.so", None),
        ("p/data/aotinductor/other/o.wrapper_metadata.json", b'{"AOTI_DEVICE_KEY": "cpu"}')]))
    for name, pt2, _ in packages:
        entries = slim_entries(pt2)
        without_weights = [e for e in entries if not e[0].endswith("_weights.blob")]
        d.add(f"{name}", model_load_input(OPT_RUN, without_weights))
        if len(without_weights) != len(entries):
            d.add(f"{name}_weights", model_load_input(0, entries))


def zip_package_seeds(d: SeedDir, packages, fake: bytes) -> None:
    for name, pt2, _ in packages:
        entries = [(n, fake if data is None else data) for n, data in slim_entries(pt2)]
        d.add(f"{name}.pt2", write_zip(entries))
        meta = {n for n, _ in entries if n.endswith("metadata.json")}
        d.add(f"{name}_deflated_metadata.pt2", write_zip(entries, deflate=meta))
    if packages:
        name, pt2, _ = packages[0]
        entries = [(n, fake if data is None else data) for n, data in slim_entries(pt2)]
        d.add(f"{name}_zip64.pt2", write_zip(entries, zip64=True))
    d.add("empty.zip", write_zip([]))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, help="write DIR/<target>/ for every target")
    ap.add_argument("--committed", action="store_true", help="rewrite tests/fuzz/seeds/ (build-free targets)")
    ap.add_argument("--fake-model", type=Path, help="the fake model library (zip_package seeds need it)")
    ap.add_argument("--zoo", help="zoo manifest.json")
    args = ap.parse_args()
    if not args.out and not args.committed:
        ap.error("give --out DIR or --committed")

    manifest = find_manifest(args.zoo)
    packages = zoo_packages(manifest)
    # One package per model: the manifest may list each once, but be safe.
    seen, unique = set(), []
    for p in packages:
        if p[0] not in seen:
            seen.add(p[0])
            unique.append(p)
    packages = unique
    print(f"make_seeds: zoo {manifest if packages else '(none found: synthetic seeds only)'}")

    root = HERE / "seeds" if args.committed else args.out
    targets = list(BUILD_FREE_TARGETS) + ([] if args.committed else ["zip_package"])
    for t in targets:
        path = root / t
        if args.committed and path.exists():
            shutil.rmtree(path)
        d = SeedDir(path)
        if t == "metadata":
            metadata_seeds(d, packages)
        elif t == "npy":
            npy_seeds(d, packages)
        elif t == "model_load":
            model_load_seeds(d, packages)
        elif t == "zip_package":
            if not args.fake_model:
                print("make_seeds: zip_package skipped (no --fake-model)")
                continue
            zip_package_seeds(d, packages, args.fake_model.read_bytes())
        print(f"make_seeds: {d.count:3d} seeds in {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
