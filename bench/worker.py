# The harness's child processes (bench/run.py starts them; each run is a
# fresh process so its start-up, memory and compile caches are its own):
#
#   worker.py export WORKLOAD_DIR --workload W --device D [--quick] [--lean] [--default] [--onnx]
#           [--key K --package-name NAME --cpp-threads N [--freezing]]
#       builds the workload, saves its inputs and eager reference outputs as
#       .npy, and writes the aotirt (lean) package and/or a package with
#       AOTInductor's default options, plus manifest.json. With --key (the
#       CPU benchmark) the package is NAME, compiled for N OpenMP threads
#       (Inductor's cpp.threads) and with freezing if asked, recorded under K
#       in the manifest's "packages" (lean) or "default_packages". --onnx
#       writes model.onnx with torch.onnx.export for onnxruntime
#       (ort_worker.py).
#   worker.py python-system WORKLOAD_DIR --system S --device D [--threads T] ...
#       times eager / torch.compile / torch.compile reduce-overhead; prints
#       "first_output" as soon as the first output is on the host, then one
#       JSON line. --threads: torch.set_num_threads(T) before anything else.
#   worker.py python-warm WORKLOAD_DIR --system S --device D [--threads T]
#       fills the inductor cache for torch.compile / reduce-overhead: builds
#       and compiles the model exactly as python-system does, runs it twice
#       and exits (no timing); the harness runs several at once before any
#       row is timed, so the timed rows find the cache hot.
#   worker.py environment --device D
#       versions, device name, library folders, and the copy bandwidth.

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
for p in (str(REPO / "python"), str(HERE)):
    if p not in sys.path:
        sys.path.insert(0, p)

import numpy as np  # noqa: E402
import torch  # noqa: E402

import workloads  # noqa: E402
from measure_util import rel_error, vm_hwm_mb  # noqa: E402

_WIDENED = (torch.bfloat16, torch.float16)


def dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).rsplit(".", 1)[-1]


def save_npy(t: torch.Tensor, path: Path) -> None:
    t = t.detach().cpu()
    if t.dtype in _WIDENED:
        t = t.float()  # exact; the runners convert back to the input's dtype
    path.parent.mkdir(parents=True, exist_ok=True)
    # Written beside and renamed: another export of the same workload (one
    # per package on the CPU) rewrites the same files while a reader may have
    # them open.
    tmp = path.with_name(path.name + ".tmp.npy")
    np.save(tmp, t.contiguous().numpy())
    os.replace(tmp, path)


def load_inputs(wdir: Path, manifest: dict, device: torch.device) -> list:
    out = []
    for spec in manifest["inputs"]:
        t = torch.from_numpy(np.load(wdir / spec["file"]))
        out.append(t.to(getattr(torch, spec["dtype"])).to(device).contiguous())
    return out


def flat_outputs(out) -> list:
    if isinstance(out, torch.Tensor):
        return [out]
    from torch.utils import _pytree as pytree

    return [x for x in pytree.tree_leaves(out) if isinstance(x, torch.Tensor)]


def synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


# ---- export ----


def cmd_export(args) -> int:
    wdir = Path(args.dir)
    wdir.mkdir(parents=True, exist_ok=True)
    device = torch.device(args.device)
    manifest_path = wdir / "manifest.json"
    manifest = json.loads(manifest_path.read_text()) if manifest_path.exists() else {}

    module, inputs = workloads.build(args.workload, args.quick)
    manifest.update(
        {
            "workload": args.workload,
            "description": workloads.describe(args.workload, args.quick),
            "quick": args.quick,
            "device": args.device,
            "torch": torch.__version__,
            "inputs": [],
        }
    )
    for i, t in enumerate(inputs):
        f = f"inputs/input{i}.npy"
        save_npy(t, wdir / f)
        manifest["inputs"].append({"file": f, "dtype": dtype_name(t.dtype), "shape": list(t.shape)})
    if workloads.WORKLOADS[args.workload].memory_bound:
        manifest["decode_bytes"] = workloads.decode_bytes_per_step(module, inputs)

    module = module.to(device)
    dev_inputs = [t.to(device) for t in inputs]
    with torch.no_grad():
        ref = flat_outputs(module(*dev_inputs))
    manifest["reference"] = []
    for i, t in enumerate(ref):
        f = f"reference/output{i}.npy"
        save_npy(t, wdir / f)
        manifest["reference"].append(f)

    # The CPU benchmark's packages: one per OpenMP thread count, which
    # Inductor writes into the generated code (cpp.threads; -1, its default,
    # means torch.get_num_threads() of the exporting process), and with
    # freezing (Inductor's CPU recipe) where asked.
    configs = {}
    if args.cpp_threads:
        configs["cpp.threads"] = args.cpp_threads
    if args.freezing:
        configs["freezing"] = True
    if args.lean:
        import aotirt

        start = time.perf_counter()
        pkg = wdir / (args.package_name or "model.pt2")
        # Packages the runtime cannot load yet are still written (and the
        # missing shims recorded), so the other systems are measured anyway.
        aotirt.export(module, tuple(dev_inputs), pkg, device=device, check_shims=False,
                      inductor_configs=configs or None)
        # Against the shims the build for this device provides (a CUDA
        # build adds those of provided_shims_cuda.txt); the harness checks
        # again with `aotirt inspect --json` when the binary is there.
        info = {
            "export_s": round(time.perf_counter() - start, 1),
            "package_bytes": pkg.stat().st_size,
            "missing_shims": sorted(
                {n for names in aotirt.check_package_shims(pkg, device=device).values() for n in names}
            ),
            "missing_shims_device": device.type,
        }
        if args.key:
            manifest.setdefault("packages", {})[args.key] = pkg.name
            manifest.setdefault("package_info", {})[args.key] = {**info, "inductor_configs": configs}
            # What tools that take one package (bench/ab.py) run: the first
            # unfrozen one written.
            if not args.freezing:
                manifest.setdefault("package", pkg.name)
        else:
            manifest["package"] = pkg.name
            manifest.update(info)
    if args.default:
        start = time.perf_counter()
        pkg = wdir / (("model.default." + args.package_name.removeprefix("model.")) if args.package_name
                      else "model.default.pt2")
        ep = torch.export.export(module, tuple(dev_inputs), strict=False)
        # Built under its final name (the zip's top folder is named after
        # the file) in a private folder, then moved into place.
        staging = Path(tempfile.mkdtemp(prefix=".export-", dir=wdir))
        try:
            torch._inductor.aoti_compile_and_package(ep, package_path=str(staging / pkg.name),
                                                     inductor_configs=configs or None)
            os.replace(staging / pkg.name, pkg)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        if args.key:
            manifest.setdefault("default_packages", {})[args.key] = pkg.name
        else:
            manifest["default_package"] = pkg.name
            manifest["default_export_s"] = round(time.perf_counter() - start, 1)
    if args.onnx:
        manifest["onnx"] = export_onnx(module, tuple(dev_inputs), wdir)
    tmp_manifest = wdir / ".manifest.json.tmp"
    tmp_manifest.write_text(json.dumps(manifest, indent=1))
    os.replace(tmp_manifest, manifest_path)
    print(json.dumps({"ok": True, "workload": args.workload}))
    return 0


def export_onnx(module, inputs: tuple, wdir: Path) -> dict:
    """Writes WDIR/model.onnx (and its external data file) with
    torch.onnx.export: the default exporter first (torch 2.11's is the
    dynamo one), then the TorchScript one (dynamo=False) if that fails.
    Returns what happened; raises when both fail."""
    import inspect

    default_dynamo = inspect.signature(torch.onnx.export).parameters["dynamo"].default
    info = {"file": "model.onnx", "torch_default_dynamo": default_dynamo}
    attempts = [("default", {}), ("dynamo=False", {"dynamo": False})]
    errors = []
    start = time.perf_counter()
    for name, kwargs in attempts:
        # Written under its final name (the external data file is named
        # after it, and the model refers to it by that name) in a private
        # folder, then moved into place.
        staging = Path(tempfile.mkdtemp(prefix=".onnx-", dir=wdir))
        try:
            with torch.no_grad():
                torch.onnx.export(module, inputs, str(staging / "model.onnx"), **kwargs)
            files = sorted(p.name for p in staging.iterdir())
            for old in wdir.glob("model.onnx*"):
                old.unlink()
            for f in files:
                os.replace(staging / f, wdir / f)
        except Exception as e:  # noqa: BLE001 - the fallback, then the error, is the answer
            errors.append(f"{name}: {type(e).__name__}: {' '.join(str(e).split())[:600]}")
            continue
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        info["exporter"] = (f"torch.onnx.export default (dynamo={default_dynamo})" if name == "default"
                            else "torch.onnx.export(dynamo=False)")
        info["files"] = files
        info["export_s"] = round(time.perf_counter() - start, 1)
        if errors:
            info["fallback_reason"] = errors[0]
        return info
    raise RuntimeError("torch.onnx.export failed with both exporters: " + " | ".join(errors))


# ---- eager / torch.compile ----


PY_SYSTEMS = ("eager", "torch.compile", "torch.compile-reduce-overhead")


def prepare(wdir: Path, system: str, device: torch.device):
    """(manifest, step) for a Python system: the model built and moved to the
    device, compiled for the torch.compile systems, and a step() that runs it
    once on the saved inputs. python-system and python-warm share it, so the
    warm-up process compiles exactly what the measured one compiles (same
    graphs, same inductor cache keys)."""
    manifest = json.loads((wdir / "manifest.json").read_text())
    module, _ = workloads.build(manifest["workload"], manifest["quick"])
    module = module.to(device)
    inputs = load_inputs(wdir, manifest, device)
    if system == "eager":
        fn = module
    elif system == "torch.compile":
        fn = torch.compile(module)
    elif system == "torch.compile-reduce-overhead":
        fn = torch.compile(module, mode="reduce-overhead")
    else:
        raise ValueError(f"unknown system {system}")
    graphs = system == "torch.compile-reduce-overhead"

    def step():
        if graphs:
            # Outputs of the previous replay are dropped before the next one.
            torch.compiler.cudagraph_mark_step_begin()
        return fn(*inputs)

    return manifest, step


def set_threads(threads: int | None) -> None:
    if threads:
        torch.set_num_threads(threads)


def cmd_python_warm(args) -> int:
    wdir = Path(args.dir)
    device = torch.device(args.device)
    set_threads(args.threads)
    start = time.perf_counter()
    _, step = prepare(wdir, args.system, device)
    runs = []
    with torch.inference_mode():
        for _ in range(max(1, args.runs)):
            t0 = time.perf_counter()
            out = flat_outputs(step())
            synchronize(device)
            out[0].float().cpu()
            runs.append(time.perf_counter() - t0)
            del out
    print(json.dumps({"ok": True, "system": args.system, "runs_s": runs,
                      "total_s": time.perf_counter() - start,
                      "inductor_cache_dir": os.environ.get("TORCHINDUCTOR_CACHE_DIR")}), flush=True)
    return 0


def cmd_python_system(args) -> int:
    wdir = Path(args.dir)
    device = torch.device(args.device)
    set_threads(args.threads)

    load_start = time.perf_counter()
    if args.system not in PY_SYSTEMS:
        print(f"unknown system {args.system}", file=sys.stderr)
        return 2
    manifest, step = prepare(wdir, args.system, device)
    synchronize(device)
    load_ms = (time.perf_counter() - load_start) * 1000

    with torch.inference_mode():
        start = time.perf_counter()
        out = flat_outputs(step())
        synchronize(device)
        first_run_us = (time.perf_counter() - start) * 1e6
        first = out[0].float().cpu().numpy()
        print("first_output", flush=True)
        ref = np.load(wdir / manifest["reference"][0])
        err = rel_error(first, ref)
        del out

        for _ in range(args.warmup):
            step()
        synchronize(device)
        samples = []
        for _ in range(args.iters):
            t0 = time.perf_counter()
            step()
            synchronize(device)
            samples.append((time.perf_counter() - t0) * 1e6)

    samples.sort()
    n = len(samples)

    def rank(pct):
        k = min(max(int(np.ceil(pct / 100.0 * n)), 1), n)
        return samples[k - 1]

    result = {
        "system": args.system,
        "device": str(device),
        "iters": args.iters,
        "warmup": args.warmup,
        "synchronized": True,
        "load_ms": load_ms,
        "first_run_us": first_run_us,
        "median_us": rank(50),
        "p90_us": rank(90),
        "p99_us": rank(99),
        "min_us": samples[0],
        "max_us": samples[-1],
        "mean_us": sum(samples) / n,
        "peak_rss_mb": vm_hwm_mb(),
        "rel_err_vs_reference": err,
        "torch_num_threads": torch.get_num_threads(),
    }
    if device.type == "cuda":
        result["torch_max_allocated_mb"] = torch.cuda.max_memory_allocated(device) / 2**20
        result["torch_max_reserved_mb"] = torch.cuda.max_memory_reserved(device) / 2**20
    print(json.dumps(result), flush=True)
    return 0


# ---- environment ----


def _library_dirs() -> list:
    dirs = [os.path.join(os.path.dirname(torch.__file__), "lib")]
    try:
        import nvidia

        for base in nvidia.__path__:
            for sub in sorted(os.listdir(base)):
                lib = os.path.join(base, sub, "lib")
                if os.path.isdir(lib):
                    dirs.append(lib)
    except ImportError:
        pass
    return dirs


def cmd_environment(args) -> int:
    device = torch.device(args.device)
    env = {
        "torch": torch.__version__,
        "python": sys.version.split()[0],
        "torch_lib": os.path.join(os.path.dirname(torch.__file__), "lib"),
        "library_dirs": _library_dirs(),
        "cudnn_allow_tf32": torch.backends.cudnn.allow_tf32,
        "matmul_allow_tf32": torch.backends.cuda.matmul.allow_tf32,
    }
    # On a CPU also the onnxruntime system's packages.
    mods = ("torchvision", "transformers") + (("onnxruntime", "onnx", "onnxscript") if device.type == "cpu" else ())
    for mod in mods:
        try:
            env[mod] = __import__(mod).__version__
        except Exception as e:  # noqa: BLE001
            env[mod] = f"unavailable ({type(e).__name__})"
    if device.type == "cuda":
        props = torch.cuda.get_device_properties(device)
        env["device_name"] = props.name
        env["device_memory_gb"] = round(props.total_memory / 1e9, 1)
        env["cuda"] = torch.version.cuda
        env["cudnn"] = torch.backends.cudnn.version()
        n = 2 << 30
        src = torch.empty(n, dtype=torch.uint8, device=device).random_(0, 256)
        dst = torch.empty_like(src)
        for _ in range(3):
            dst.copy_(src)
        reps = 10
        begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        begin.record()
        for _ in range(reps):
            dst.copy_(src)
        end.record()
        end.synchronize()
        seconds = begin.elapsed_time(end) / 1000 / reps
        env["copy_bytes"] = n
    else:
        name = "cpu"
        try:
            with open("/proc/cpuinfo") as f:
                for line in f:
                    if line.startswith("model name"):
                        name = line.split(":", 1)[1].strip()
                        break
        except OSError:
            pass
        env["device_name"] = f"{name} ({os.cpu_count()} cores)"
        n = 256 << 20
        src = torch.randint(0, 256, (n,), dtype=torch.uint8)
        dst = torch.empty_like(src)
        for _ in range(2):
            dst.copy_(src)
        reps = 5
        t0 = time.perf_counter()
        for _ in range(reps):
            dst.copy_(src)
        seconds = (time.perf_counter() - t0) / reps
        env["copy_bytes"] = n
    # Bytes read plus bytes written, per second.
    env["copy_bandwidth_gbps"] = 2 * n / seconds / 1e9
    print(json.dumps(env), flush=True)
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    sub = ap.add_subparsers(dest="cmd", required=True)
    e = sub.add_parser("export")
    e.add_argument("dir")
    e.add_argument("--workload", required=True, choices=sorted(workloads.WORKLOADS))
    e.add_argument("--device", required=True)
    e.add_argument("--quick", action="store_true")
    e.add_argument("--lean", action="store_true", help="the aotirt package (model.pt2)")
    e.add_argument("--default", action="store_true", help="a default-options package (model.default.pt2)")
    e.add_argument("--onnx", action="store_true", help="model.onnx, with torch.onnx.export")
    e.add_argument("--key", help="record the package under this key (packages / default_packages)")
    e.add_argument("--package-name", help="the lean package's file name (default model.pt2)")
    e.add_argument("--cpp-threads", type=int, help="Inductor's cpp.threads: OpenMP threads of the generated code")
    e.add_argument("--freezing", action="store_true", help="compile with Inductor's freezing=True")
    p = sub.add_parser("python-system")
    p.add_argument("dir")
    p.add_argument("--system", required=True)
    p.add_argument("--device", required=True)
    p.add_argument("--iters", type=int, required=True)
    p.add_argument("--warmup", type=int, required=True)
    p.add_argument("--threads", type=int, help="torch.set_num_threads")
    pw = sub.add_parser("python-warm")
    pw.add_argument("dir")
    pw.add_argument("--system", required=True, choices=["torch.compile", "torch.compile-reduce-overhead"])
    pw.add_argument("--device", required=True)
    pw.add_argument("--runs", type=int, default=2)
    pw.add_argument("--threads", type=int, help="torch.set_num_threads")
    v = sub.add_parser("environment")
    v.add_argument("--device", required=True)
    args = ap.parse_args()
    if args.cmd == "export":
        if not (args.lean or args.default or args.onnx):
            ap.error("export needs --lean, --default and/or --onnx")
        if args.key and not args.package_name:
            ap.error("--key needs --package-name")
        return cmd_export(args)
    if args.cmd == "python-system":
        return cmd_python_system(args)
    if args.cmd == "python-warm":
        return cmd_python_warm(args)
    return cmd_environment(args)


if __name__ == "__main__":
    sys.exit(main())
