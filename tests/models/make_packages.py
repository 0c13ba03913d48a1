#!/usr/bin/env python3
# Builds the zoo's .pt2 packages with inputs and eager-PyTorch expected outputs
# into a cache directory, so the runtime tests (and anyone debugging aotirt)
# have ready-made packages:
#
#   <root>/<model>-<hash>/model.pt2
#   <root>/<model>-<hash>/inputs/set<k>/input<i>.npy
#   <root>/<model>-<hash>/expected/set<k>/output<i>.npy
#   <root>/<model>-<hash>/info.json        (what the manifest lists for it)
#   <root>/manifest.json
#
# <root> is ${AOTIRT_CACHE_DIR:-<repo>/.cache}/zoo/torch-<version>-<device>
# unless --out is given. <hash> covers zoo.py, this script and the aotirt
# Python sources, so editing any of them rebuilds; a complete package
# directory is reused. bf16/f16 tensors are stored as float32 .npy files.
#
# --zoo arch builds the architecture zoo (arch_zoo.py: torchvision, timm and
# transformers models) the same way, under zoo-arch/ instead of zoo/.

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import shutil
import sys
import tempfile
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
for p in (str(REPO / "python"), str(HERE)):
    if p not in sys.path:
        sys.path.insert(0, p)

import numpy as np  # noqa: E402
import torch  # noqa: E402
from torch.utils import _pytree as pytree  # noqa: E402

import aotirt  # noqa: E402
import cache_lock  # noqa: E402
import zoo  # noqa: E402

ZOOS = ("core", "arch")


def zoo_module(name: str):
    """The zoo named |name|: "core" (zoo.py's small models) or "arch"
    (arch_zoo.py's real architectures)."""
    if name == "arch":
        import arch_zoo

        return arch_zoo
    if name != "core":
        raise ValueError(f"unknown zoo {name!r}; known: {', '.join(ZOOS)}")
    return zoo

MANIFEST_VERSION = 1
_WIDENED = (torch.bfloat16, torch.float16)


def source_hash(zoo_name: str = "core") -> str:
    """Hash of the files that decide what a package contains.

    provided_shims.txt is left out on purpose: packages are built without the
    shim check (the tests report missing shims themselves), so a new shim in
    the runtime does not force every package to be rebuilt.
    """
    files = [HERE / "zoo.py", Path(__file__).resolve()]
    if zoo_name == "arch":
        files.append(HERE / "arch_zoo.py")
    files += sorted((REPO / "python" / "aotirt").rglob("*.py"))
    h = hashlib.sha256()
    for f in files:
        h.update(str(f.relative_to(REPO)).encode() + b"\0")
        h.update(f.read_bytes() + b"\0")
    return h.hexdigest()[:12]


# Code-generation recipe for the aotirt packages (aotirt.export's `recipe`):
# "default", or "triton" (CUDA: GEMM/conv in Triton, attention as math).
RECIPE = os.environ.get("AOTIRT_TEST_RECIPE", "default")


def default_root(device: str, zoo_name: str = "core") -> Path:
    cache = Path(os.environ.get("AOTIRT_CACHE_DIR") or REPO / ".cache")
    suffix = "" if RECIPE == "default" else f"-{RECIPE}"
    folder = "zoo" if zoo_name == "core" else f"zoo-{zoo_name}"
    return cache / folder / f"torch-{torch.__version__}-{device}{suffix}"


def _to_device(tree, device):
    return pytree.tree_map(
        lambda x: x.to(device) if isinstance(x, torch.Tensor) else x, tree
    )


def _save(t: torch.Tensor, path: Path) -> dict:
    t = t.detach().cpu()
    stored = t.float() if t.dtype in _WIDENED else t
    path.parent.mkdir(parents=True, exist_ok=True)
    np.save(path, stored.contiguous().numpy())
    return {
        "dtype": aotirt.dtype_name(t.dtype),
        "stored_dtype": str(stored.numpy().dtype),
        "shape": list(t.shape),
    }


def _export(model: zoo.ZooModel, example, device: str, pt2: Path) -> None:
    if device == "cpu":
        # What docs/exporting.md asks of plain aoti_compile_and_package users
        # too: the plain exports below would otherwise compile scalar kernels
        # on a machine whose vector-ISA probe a lean export spoilt.
        aotirt.prepare_vec_isa()
    module = model.build()
    dynamic = model.dynamic_shapes() if model.dynamic_shapes else None
    if model.plain:
        # Without grad, as inference is exported.
        with torch.no_grad():
            ep = torch.export.export(
                model.on_device(module, device), _to_device(example, device), dynamic_shapes=dynamic
            )
        torch._inductor.aoti_compile_and_package(
            ep, package_path=str(pt2), inductor_configs={**aotirt.LEAN_OPTIONS, **model.inductor_configs}
        )
    else:
        # The shim check is left to the tests, so a package is produced (and
        # can be inspected) even while the runtime still lacks a shim.
        aotirt.export(
            module, example, pt2, device=device, dynamic_shapes=dynamic, check_shims=False,
            recipe=RECIPE,
        )


@contextlib.contextmanager
def exact_fp32():
    """Full-precision float32 matmul and convolution on CUDA while building.

    PyTorch lets cuDNN convolutions use TF32 by default, which would put
    TF32-sized errors (about 1e-3) into the expected outputs; aotirt's fallback
    ops compute float32 exactly.
    """
    saved = (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    try:
        yield
    finally:
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = saved


def _build(model: zoo.ZooModel, device: str, staging: Path) -> dict:
    sets = model.input_sets()
    pt2 = staging / "model.pt2"
    start = time.perf_counter()
    _export(model, sets[0], device, pt2)
    export_seconds = time.perf_counter() - start

    input_sets = []
    for k, inputs in enumerate(sets):
        # A fresh model per set: the runtime runs each set in a new process,
        # and a model that mutates buffers must start from the same state.
        module = model.on_device(model.build(), device)
        entry = {"name": f"set{k}", "inputs": []}
        for i, t in enumerate(inputs):
            rel = f"inputs/set{k}/input{i}.npy"
            entry["inputs"].append({"file": rel, **_save(t, staging / rel)})
        for call in range(model.calls):
            with torch.no_grad():
                outputs = module(*_to_device(inputs, device))
            key, sub = ("expected", "") if call == 0 else ("expected_repeat", f"call{call}/")
            files = []
            for i, t in enumerate(pytree.tree_leaves(outputs)):
                rel = f"expected/set{k}/{sub}output{i}.npy"
                files.append({"file": rel, **_save(t, staging / rel)})
            if call == 0:
                entry[key] = files
            else:
                entry.setdefault(key, []).append(files)
        input_sets.append(entry)

    return {
        "name": model.name,
        "package": "model.pt2",
        "device": device,
        "recipe": "default" if model.plain else RECIPE,
        "plain": model.plain,
        "dynamic": model.dynamic_shapes is not None,
        "tolerance": dict(model.tolerance),
        "input_sets": input_sets,
        "export_seconds": round(export_seconds, 2),
        "imported_shims": aotirt.imported_shims(pt2),
        "other_imports": sorted(
            {n for names in aotirt.foreign_imports_by_model(pt2).values() for n in names}
        ),
        "metadata": aotirt.read_metadata(pt2),
        "notes": model.notes,
    }


def _complete(pkg_dir: Path) -> dict | None:
    info_path = pkg_dir / "info.json"
    if not info_path.is_file():
        return None
    info = json.loads(info_path.read_text())
    files = [info["package"]]
    for s in info["input_sets"]:
        files += [e["file"] for e in s["inputs"] + s["expected"]]
        files += [e["file"] for call in s.get("expected_repeat", []) for e in call]
    return info if all((pkg_dir / f).is_file() for f in files) else None


def ensure_package(model: zoo.ZooModel, device: str, root: Path, digest: str, log=print):
    """Builds one package unless a complete one exists; returns its info dict."""
    pkg_dir = root / f"{model.name}-{digest}"
    info = _complete(pkg_dir)
    if info is not None:
        log(f"{model.name:18s} cached                {pkg_dir}")
        return {**info, "dir": pkg_dir.name}
    if pkg_dir.exists():
        shutil.rmtree(pkg_dir)
    root.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".staging-{model.name}-", dir=root))
    try:
        with exact_fp32():
            info = _build(model, device, staging)
        (staging / "info.json").write_text(json.dumps(info, indent=2) + "\n")
        try:
            staging.rename(pkg_dir)
        except OSError:
            # Another build finished the same package first; keep that one.
            if _complete(pkg_dir) is None:
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    log(f"{model.name:18s} built  {info['export_seconds']:7.1f}s export  {pkg_dir}")
    return {**info, "dir": pkg_dir.name}


def _ensure_one(zoo_name: str, name: str, device: str, root: Path, digest: str, recipe: str, log=print) -> dict:
    """Builds (or finds) one package; a failure becomes the entry's error."""
    global RECIPE
    RECIPE = recipe
    model = zoo_module(zoo_name).BY_NAME[name]
    try:
        return ensure_package(model, device, root, digest, log)
    except Exception as exc:  # recorded, so one broken model does not hide the others
        log(f"{name:18s} FAILED {type(exc).__name__}: {exc}")
        traceback.print_exc(file=sys.stderr)
        return {"name": name, "error": f"{type(exc).__name__}: {exc}"}


def _worker_init(caches: str) -> None:
    # Each export already compiles on its own; the parallel exports share
    # the cores instead of each starting a pool of compile workers.
    os.environ["TORCHINDUCTOR_COMPILE_THREADS"] = "1"
    # torch's inductor cache names a compiled package's files by its code,
    # not by its metadata: two workers exporting the same graph at once
    # (mlp and mlp_plain differ only in aotirt's metadata) write the same
    # files, and one package can take the other's metadata. Each worker
    # compiles in a cache of its own, removed with the pool.
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(caches, str(os.getpid()))
    for p in (str(REPO / "python"), str(HERE)):
        if p not in sys.path:
            sys.path.insert(0, p)


def ensure_packages(
    device: str = "cpu",
    root: Path | None = None,
    only: list | None = None,
    log=print,
    zoo_name: str = "core",
    jobs: int = 1,
) -> dict:
    """Builds the selected zoo packages (all when `only` is empty), |jobs|
    exports at a time, and writes the manifest, which lists every complete
    package of the current hash. Callers in other processes (test files run
    in parallel) take turns: the second finds the first's packages cached."""
    root = Path(root) if root else default_root(device, zoo_name)
    with cache_lock.held(root.parent / f".{root.name}.lock"):
        return _ensure_packages_locked(device, root, only, log, zoo_name, jobs)


def _ensure_packages_locked(device: str, root: Path, only: list | None, log, zoo_name: str, jobs: int) -> dict:
    models = zoo_module(zoo_name)
    digest = source_hash(zoo_name)
    selected = [models.BY_NAME[n] for n in only] if only else list(models.MODELS)

    entries = {}
    todo = [m.name for m in selected]
    if jobs > 1:
        # Packages already complete are taken here; only the rest start a
        # worker process (spawned: a forked torch is not safe on CUDA).
        for name in list(todo):
            info = _complete(root / f"{name}-{digest}")
            if info is not None:
                log(f"{name:18s} cached                {root / f'{name}-{digest}'}")
                entries[name] = {**info, "dir": f"{name}-{digest}"}
                todo.remove(name)
    if jobs > 1 and len(todo) > 1:
        import concurrent.futures
        import multiprocessing

        with tempfile.TemporaryDirectory(prefix="aotirt-zoo-inductor-") as caches, \
                concurrent.futures.ProcessPoolExecutor(
                    max_workers=jobs, mp_context=multiprocessing.get_context("spawn"), initializer=_worker_init,
                    initargs=(caches,)) as pool:
            futures = {name: pool.submit(_ensure_one, zoo_name, name, device, root, digest, RECIPE)
                       for name in todo}
            for name, future in futures.items():
                try:
                    entries[name] = future.result()
                except Exception as exc:  # a worker that died
                    log(f"{name:18s} FAILED {type(exc).__name__}: {exc}")
                    entries[name] = {"name": name, "error": f"{type(exc).__name__}: {exc}"}
    else:
        for name in todo:
            entries[name] = _ensure_one(zoo_name, name, device, root, digest, RECIPE, log)
    for model in models.MODELS:
        if model.name not in entries:
            info = _complete(root / f"{model.name}-{digest}")
            if info is not None:
                entries[model.name] = {**info, "dir": f"{model.name}-{digest}"}

    manifest = {
        "manifest_version": MANIFEST_VERSION,
        "torch_version": torch.__version__,
        "device": device,
        "hash": digest,
        "root": str(root),
        "zoo": zoo_name,
        "packages": [entries[m.name] for m in models.MODELS if m.name in entries],
    }
    root.mkdir(parents=True, exist_ok=True)
    tmp = root / f".manifest-{os.getpid()}.json"
    tmp.write_text(json.dumps(manifest, indent=2) + "\n")
    tmp.replace(root / "manifest.json")
    return manifest


def prune(root: Path, digest: str, zoo_name: str = "core") -> list:
    """Removes zoo package directories whose hash is not `digest`."""
    removed = []
    for model in zoo_module(zoo_name).MODELS:
        for d in sorted(root.glob(f"{model.name}-*")):
            suffix = d.name[len(model.name) + 1 :]
            # "<model>-<12 hex>" only: another model's name may extend this one's.
            if d.is_dir() and len(suffix) == 12 and suffix != digest and all(
                c in "0123456789abcdef" for c in suffix
            ):
                shutil.rmtree(d)
                removed.append(d)
    return removed


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="Build the zoo packages for aotirt tests.")
    parser.add_argument("--device", default="cpu", help="cpu or cuda (default cpu)")
    parser.add_argument("--zoo", default="core", choices=["core", "arch"],
                        help="core: zoo.py's small models (default); arch: arch_zoo.py's real architectures")
    parser.add_argument("--recipe", default=None, choices=["default", "triton"],
                        help="code generation for the aotirt packages (default: $AOTIRT_TEST_RECIPE or default)")
    parser.add_argument("--only", action="append", default=[], metavar="NAME",
                        help="build only this zoo model (repeatable)")
    parser.add_argument("--out", type=Path, default=None,
                        help="output root (default ${AOTIRT_CACHE_DIR:-.cache}/zoo/torch-<ver>-<device>)")
    parser.add_argument("--jobs", type=int, default=1, metavar="N", help="exports at a time (default 1)")
    parser.add_argument("--list", action="store_true", help="list zoo model names and exit")
    parser.add_argument("--prune", action="store_true",
                        help="delete package directories of other source hashes under the root")
    args = parser.parse_args(argv)
    models = zoo_module(args.zoo)

    if args.list:
        for m in models.MODELS:
            print(m.name)
        return 0
    unknown = [n for n in args.only if n not in models.BY_NAME]
    if unknown:
        parser.error(f"unknown model(s) {unknown}; known: {', '.join(models.BY_NAME)}")

    if args.recipe:
        global RECIPE
        RECIPE = args.recipe
    manifest = ensure_packages(args.device, args.out, args.only, zoo_name=args.zoo, jobs=args.jobs)
    root = Path(manifest["root"])
    if args.prune:
        for stale in prune(root, manifest["hash"], args.zoo):
            print(f"pruned {stale}")
    print(f"manifest: {root / 'manifest.json'}")
    return 1 if any("error" in p for p in manifest["packages"]) else 0


if __name__ == "__main__":
    sys.exit(main())
