# Reads the parts of a .pt2 package that aotirt cares about: the compiled
# model libraries and their *_metadata.json files. Loaders find models by the
# "data/aotinductor/<model>/" part of an entry name, because the zip's top
# folder is named after whatever file name the package was written under.

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
import zipfile

from ._symbols import foreign_imports, shim_imports

_MODEL_ENTRY = re.compile(r"(?:^|/)data/aotinductor/([^/]+)/([^/]+)$")


def _model_entries(pt2_path: str) -> dict:
    """{model_name: [zip entry names]} for every model in the package."""
    models: dict = {}
    with zipfile.ZipFile(pt2_path) as zf:
        for name in zf.namelist():
            m = _MODEL_ENTRY.search(name)
            if m:
                models.setdefault(m.group(1), []).append(name)
    return models


def model_names(pt2_path: str) -> list:
    return sorted(_model_entries(os.fspath(pt2_path)))


def read_metadata(pt2_path: str, model: str | None = None) -> dict:
    """The wrapper metadata json of `model` (the only model when None)."""
    pt2_path = os.fspath(pt2_path)
    models = _model_entries(pt2_path)
    if model is None:
        if len(models) != 1:
            raise ValueError(
                f"{pt2_path} holds {len(models)} models {sorted(models)}; name one"
            )
        model = next(iter(models))
    entries = models.get(model)
    if entries is None:
        raise ValueError(f"{pt2_path} has no model named {model!r}")
    # Kernel files carry a copy of the same metadata; the wrapper's is the one
    # a runtime reads.
    wanted = [e for e in entries if e.endswith(".wrapper_metadata.json")]
    if not wanted:
        wanted = [e for e in entries if e.endswith("_metadata.json")]
    if not wanted:
        raise ValueError(f"{pt2_path}: model {model!r} has no *_metadata.json")
    with zipfile.ZipFile(pt2_path) as zf:
        return json.loads(zf.read(sorted(wanted)[0]))


def read_all_metadata(pt2_path: str) -> dict:
    """{zip entry name: parsed json} for every *_metadata.json in the package."""
    out = {}
    with zipfile.ZipFile(os.fspath(pt2_path)) as zf:
        for name in zf.namelist():
            if _MODEL_ENTRY.search(name) and name.endswith("_metadata.json"):
                out[name] = json.loads(zf.read(name))
    return out


def _map_libraries(pt2_path: str, fn) -> dict:
    """{model_name: union of fn(extracted .so path) over the model's libraries}."""
    result = {}
    with zipfile.ZipFile(pt2_path) as zf, tempfile.TemporaryDirectory(
        prefix="aotirt-syms-"
    ) as tmp:
        for model, entries in sorted(_model_entries(pt2_path).items()):
            names: set = set()
            for i, entry in enumerate(sorted(e for e in entries if e.endswith(".so"))):
                dest = os.path.join(tmp, f"{i}-{os.path.basename(entry)}")
                with zf.open(entry) as src, open(dest, "wb") as dst:
                    shutil.copyfileobj(src, dst, 1 << 20)
                names.update(fn(dest))
            result[model] = sorted(names)
    return result


def imported_shims_by_model(pt2_path, use_nm: bool = True) -> dict:
    """{model_name: sorted aoti_torch_* imports of its .so files}."""
    return _map_libraries(os.fspath(pt2_path), lambda so: shim_imports(so, use_nm=use_nm))


def foreign_imports_by_model(pt2_path, use_nm: bool = True) -> dict:
    """{model_name: other unversioned imports (SLEEF, CUDA runtime, ...)}."""
    return _map_libraries(os.fspath(pt2_path), lambda so: foreign_imports(so, use_nm=use_nm))


def imported_shims(pt2_path, use_nm: bool = True) -> list:
    """Sorted aoti_torch_* symbols imported by the compiled libraries in a .pt2.

    A package built with package_cpp_only (sources, no .so) imports nothing yet
    and yields an empty list.
    """
    names: set = set()
    for syms in imported_shims_by_model(pt2_path, use_nm=use_nm).values():
        names.update(syms)
    return sorted(names)
