#!/usr/bin/env python3
# Runs zoo packages with PyTorch's own AOTInductor loader, as a reference for
# the aotirt runtime: if these outputs match the expected files, the packages
# and tolerances are sound and any aotirt mismatch is aotirt's.
#
# The packages are built without linking libtorch, so their aoti_torch_*
# imports only resolve when libtorch_cpu (and libtorch_cuda plus the CUDA
# runtime for CUDA packages) are in the global symbol scope; this script loads
# them that way before loading any package. Run it in its own process.
#
#   python reference_run.py --manifest M --out DIR
# writes DIR/<package>/<set>/output<i>.npy (and call<k>/ for repeated calls)
# and DIR/status.json: {package: "ok" | error text}.

from __future__ import annotations

import argparse
import ctypes
import glob
import json
import os
import sys
import traceback
from pathlib import Path

import numpy as np
import torch

_WIDENED = (torch.bfloat16, torch.float16)


def _load_global(path: str) -> None:
    ctypes.CDLL(path, mode=os.RTLD_GLOBAL | os.RTLD_NOW)


def expose_libtorch(device: str) -> None:
    lib = Path(torch.__file__).parent / "lib"
    _load_global(str(lib / "libtorch_cpu.so"))
    if device == "cuda":
        site = Path(torch.__file__).parent.parent
        for cudart in sorted(glob.glob(str(site / "nvidia" / "**" / "libcudart.so*"), recursive=True)):
            _load_global(cudart)
            break
        _load_global(str(lib / "libtorch_cuda.so"))


def _read_input(path: Path, dtype_name: str, device: str) -> torch.Tensor:
    t = torch.from_numpy(np.load(path))
    return t.to(getattr(torch, dtype_name)).to(device)


def _write_outputs(outputs, out_dir: Path) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    if isinstance(outputs, torch.Tensor):
        outputs = [outputs]
    for i, t in enumerate(outputs):
        t = t.detach().cpu()
        if t.dtype in _WIDENED:
            t = t.float()
        np.save(out_dir / f"output{i}.npy", t.contiguous().numpy())


def run_manifest(manifest_path: Path, out: Path) -> dict:
    manifest = json.loads(manifest_path.read_text())
    device = manifest["device"]
    expose_libtorch(device)
    # The expected outputs were computed without TF32 (make_packages.py), and
    # libtorch's fallback ops follow these process-wide switches.
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    root = manifest_path.parent
    status = {}
    for pkg in manifest["packages"]:
        name = pkg["name"]
        if "error" in pkg:
            status[name] = f"not built: {pkg['error']}"
            continue
        try:
            pkg_dir = root / pkg["dir"]
            for s in pkg["input_sets"]:
                # A fresh runner per set, like a fresh process per CLI run.
                runner = torch._inductor.aoti_load_package(str(pkg_dir / pkg["package"]))
                inputs = [_read_input(pkg_dir / e["file"], e["dtype"], device) for e in s["inputs"]]
                with torch.no_grad():
                    _write_outputs(runner(*inputs), out / name / s["name"])
                    for k in range(len(s.get("expected_repeat", []))):
                        _write_outputs(runner(*inputs), out / name / s["name"] / f"call{k + 1}")
            status[name] = "ok"
        except Exception:
            status[name] = traceback.format_exc(limit=3)
    (out / "status.json").write_text(json.dumps(status, indent=2) + "\n")
    return status


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="Run zoo packages with libtorch's loader.")
    parser.add_argument("--manifest", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    status = run_manifest(args.manifest, args.out)
    for name, s in status.items():
        print(f"{name:18s} {s.splitlines()[0] if s else s}")
    return 0 if all(s == "ok" for s in status.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
