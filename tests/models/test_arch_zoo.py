"""The architecture zoo (arch_zoo.py): real torchvision, timm and
transformers models, exported with plain aoti_compile_and_package and the
lean options, run through the aotirt CLI and compared with eager PyTorch.

The packages come from $AOTIRT_ARCH_ZOO_MANIFEST (scripts/test.sh builds
them, two exports at a time) or are built here, once per torch version and
zoo source, into the test cache. Without the pinned model libraries the
module is skipped, visibly."""
from __future__ import annotations

import importlib.util
import json
import os
import subprocess
from pathlib import Path

import pytest

import arch_zoo
from cli_util import CLI, requires_cli
from zoo_check import compare_outputs, package_entry, zoo_device

LIBRARIES = ("torchvision", "timm", "transformers")
MISSING = [name for name in LIBRARIES if importlib.util.find_spec(name) is None]
# The quantized layer alone needs torchao (its export fails without it);
# the rest of the zoo runs where it is missing.
NEEDS_TORCHAO = {m.name for m in arch_zoo.MODELS if m.name.startswith("ao_")}
HAS_TORCHAO = importlib.util.find_spec("torchao") is not None

pytestmark = [
    requires_cli,
    pytest.mark.skipif(bool(MISSING), reason=f"not installed: {', '.join(MISSING)} (scripts/setup.sh installs them)"),
]

NAMES = [m.name for m in arch_zoo.MODELS]


@pytest.fixture(scope="module")
def arch_manifest() -> dict:
    path = os.environ.get("AOTIRT_ARCH_ZOO_MANIFEST")
    if path and Path(path).is_file():
        manifest = json.loads(Path(path).read_text())
        if manifest.get("device") == zoo_device():
            return manifest
    import make_packages

    return make_packages.ensure_packages(zoo_device(), zoo_name="arch", jobs=2)


def test_zoo_has_thirty_architectures_from_three_libraries():
    sources = {m.name.split("_", 1)[0] for m in arch_zoo.MODELS}
    assert len(arch_zoo.MODELS) >= 30
    assert {"tv", "timm", "hf"} <= sources


def _missing_shims(pkg: dict) -> list:
    import aotirt

    provided = aotirt.provided_shims(zoo_device())
    return [n for n in pkg["imported_shims"] if n not in provided]


@pytest.mark.parametrize("name", NAMES)
def test_arch_matches_eager(name, arch_manifest, tmp_path):
    if name in NEEDS_TORCHAO and not HAS_TORCHAO:
        pytest.skip("not installed: torchao (scripts/setup.sh installs it)")
    pkg = package_entry(arch_manifest, name)
    pkg_dir = Path(arch_manifest["root"]) / pkg["dir"]
    for s in pkg["input_sets"]:
        out_dir = tmp_path / s["name"]
        cmd = [str(CLI), "run", str(pkg_dir / pkg["package"]), "--output-dir", str(out_dir),
               "--device", zoo_device()]
        for e in s["inputs"]:
            cmd += ["--input", str(pkg_dir / e["file"])]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        if proc.returncode != 0:
            missing = _missing_shims(pkg)
            hint = f"\nshims the package imports that aotirt lacks: {missing}" if missing else ""
            pytest.fail(f"{' '.join(cmd)}\nexited {proc.returncode}\nstderr:\n{proc.stderr}{hint}")
        problems = compare_outputs(pkg_dir, s["expected"], out_dir, pkg["tolerance"])
        assert not problems, f"{name} {s['name']}:\n" + "\n".join(problems)
