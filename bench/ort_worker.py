# The onnxruntime system of the CPU benchmark (bench/run.py starts it as a
# fresh process per row, like the eager and torch.compile workers):
#
#   ort_worker.py WORKLOAD_DIR --threads T --iters N --warmup W
#
# loads WORKLOAD_DIR/model.onnx (written by `worker.py export --onnx`) into an
# onnxruntime InferenceSession on the CPU execution provider with
# intra_op_num_threads=T, inter_op_num_threads=1 and every graph optimisation
# (ORT_ENABLE_ALL), feeds it the inputs the export saved, prints
# "first_output" once the first run's outputs are back, compares output 0
# with the eager reference, times N runs after W warm-up runs and ends with
# one JSON line, the same fields as worker.py python-system's.
#
# It imports numpy and onnxruntime only, not torch: the process is what a
# deployment on onnxruntime would start, so its cold start and peak RSS are
# that runtime's.

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import numpy as np
from measure_util import rel_error, vm_hwm_mb  # noqa: E402

# ONNX element types by name (onnx.TensorProto's numbering), for inputs that
# numpy cannot hold in their own dtype.
ONNX_BFLOAT16 = 16
_NUMPY = {"float32": np.float32, "float16": np.float16, "float64": np.float64, "int64": np.int64,
          "int32": np.int32, "int8": np.int8, "uint8": np.uint8, "bool": np.bool_}


def bfloat16_bits(a: np.ndarray) -> np.ndarray:
    """The bfloat16 bit patterns of float32 values that are bfloat16 values
    already (the export saves bfloat16 inputs widened exactly), as uint16."""
    a = np.ascontiguousarray(a, dtype=np.float32)
    return (a.view(np.uint32) >> 16).astype(np.uint16)


def bfloat16_to_float32(bits: np.ndarray) -> np.ndarray:
    return (bits.astype(np.uint32) << 16).view(np.float32)


def session_options(ort, threads: int):
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    return so


def feeds_for(ort, session, wdir: Path, manifest: dict) -> tuple:
    """({input name: value}, as OrtValues?): numpy arrays, the fastest path
    through session.run (a tenth of an MLP's 40 us through OrtValues); all
    OrtValues when an input is bfloat16, which numpy cannot hold."""
    specs = manifest["inputs"]
    inputs = session.get_inputs()
    if len(inputs) != len(specs):
        raise ValueError(f"the ONNX model takes {len(inputs)} inputs, the workload has {len(specs)}")
    arrays = [np.load(wdir / spec["file"]) for spec in specs]
    if not any(spec["dtype"] == "bfloat16" for spec in specs):
        return {node.name: np.ascontiguousarray(a.astype(_NUMPY[spec["dtype"]]))
                for node, spec, a in zip(inputs, specs, arrays)}, False
    feeds = {}
    for node, spec, a in zip(inputs, specs, arrays):
        if spec["dtype"] == "bfloat16":
            feeds[node.name] = ort.OrtValue.ortvalue_from_numpy_with_onnx_type(bfloat16_bits(a), ONNX_BFLOAT16)
        else:
            a = np.ascontiguousarray(a.astype(_NUMPY[spec["dtype"]]))
            feeds[node.name] = ort.OrtValue.ortvalue_from_numpy(a)
    return feeds, True


def as_float(x) -> np.ndarray:
    """An output as a float numpy array (bfloat16 OrtValues widened)."""
    if hasattr(x, "numpy"):
        if "bfloat16" in x.data_type():
            return bfloat16_to_float32(x.numpy().view(np.uint16))
        x = x.numpy()
    return np.asarray(x).astype(np.float32)


def nearest_rank(samples: list, pct: float) -> float:
    n = len(samples)
    k = min(max(int(math.ceil(pct / 100.0 * n)), 1), n)
    return samples[k - 1]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("dir")
    ap.add_argument("--threads", type=int, required=True, help="intra_op_num_threads")
    ap.add_argument("--iters", type=int, required=True)
    ap.add_argument("--warmup", type=int, required=True)
    args = ap.parse_args(argv)
    wdir = Path(args.dir)

    load_start = time.perf_counter()
    import onnxruntime as ort

    manifest = json.loads((wdir / "manifest.json").read_text())
    onnx = manifest.get("onnx") or {}
    if not onnx.get("file"):
        print("the workload has no ONNX model (export --onnx)", file=sys.stderr)
        return 2
    session = ort.InferenceSession(str(wdir / onnx["file"]), sess_options=session_options(ort, args.threads),
                                   providers=["CPUExecutionProvider"])
    feeds, ort_values = feeds_for(ort, session, wdir, manifest)
    names = [o.name for o in session.get_outputs()]

    def step():
        return session.run_with_ort_values(names, feeds) if ort_values else session.run(names, feeds)

    load_ms = (time.perf_counter() - load_start) * 1000

    start = time.perf_counter()
    out = step()
    first_run_us = (time.perf_counter() - start) * 1e6
    first = as_float(out[0])
    print("first_output", flush=True)
    ref = np.load(wdir / manifest["reference"][0])
    err = rel_error(first, ref)
    del out

    for _ in range(args.warmup):
        step()
    samples = []
    for _ in range(args.iters):
        t0 = time.perf_counter()
        step()
        samples.append((time.perf_counter() - t0) * 1e6)
    samples.sort()
    result = {
        "system": "onnxruntime",
        "device": "cpu",
        "iters": args.iters,
        "warmup": args.warmup,
        "synchronized": True,
        "load_ms": load_ms,
        "first_run_us": first_run_us,
        "median_us": nearest_rank(samples, 50),
        "p90_us": nearest_rank(samples, 90),
        "p99_us": nearest_rank(samples, 99),
        "min_us": samples[0],
        "max_us": samples[-1],
        "mean_us": sum(samples) / len(samples),
        "peak_rss_mb": vm_hwm_mb(),
        "rel_err_vs_reference": err,
        "onnxruntime": ort.__version__,
        "providers": session.get_providers(),
        "intra_op_num_threads": args.threads,
        "inter_op_num_threads": 1,
        "graph_optimization_level": "ORT_ENABLE_ALL",
        "onnx_exporter": onnx.get("exporter"),
        "ort_values": ort_values,
    }
    print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
