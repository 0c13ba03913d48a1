"""The conformance suite's timing mode: aotirt's op shims against torch's own
kernels on the same device and shapes, side by side in one process.

    PYTHONPATH=python .venv/bin/python tests/ops/time_ops.py --device cuda \
        [--json out.json] [--markdown out.md]

Each case times `reps` calls of torch's op and of aotirt's shim (called
through ctypes, as a model library would call it; the handle and the
ctypes call cost a few microseconds, so the shapes are large enough for the
kernels to dominate) with CUDA events (wall clock on the CPU), after a
warm-up, and reports the median of 5 rounds per call and the ratio
aotirt / torch. Each round of aotirt's calls is one run (aotirt_run_begin /
aotirt_run_end), as a model's calls are: the indexing ops' bounds flags are
read once, at the round's end, as at a model run's end. Results are written
as markdown and JSON; bench/ keeps the committed tables.
"""
from __future__ import annotations

import argparse
import contextlib
import ctypes
import json
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from shim_harness import DTYPE_CODES, Handle, Shims, out_handles  # noqa: E402


def cases(device):
    g = torch.Generator().manual_seed(0)

    def rnd(*shape, dtype=torch.float32):
        return torch.randn(*shape, generator=g).to(dtype).to(device)

    yield "cumsum [4096, 4096] dim 1 fp32", "cumsum", rnd(4096, 4096), dict(dim=1)
    yield "cumsum [4096, 4096] dim 0 fp32", "cumsum", rnd(4096, 4096), dict(dim=0)
    yield "cumsum [1, 16M] fp32", "cumsum", rnd(1, 1 << 24), dict(dim=1)
    yield "cumsum [8, 2048] int64 (attention mask)", "cumsum", torch.ones(8, 2048, dtype=torch.int64, device=device), dict(dim=1)
    yield "cumsum [64, 1M] bf16", "cumsum", rnd(64, 1 << 20, dtype=torch.bfloat16), dict(dim=1)
    yield "cummax [4096, 4096] dim 1 fp32", "cummax", rnd(4096, 4096), dict(dim=1)
    yield "logcumsumexp [4096, 4096] dim 1 fp32", "logcumsumexp", rnd(4096, 4096), dict(dim=1)
    yield "sort [1M] fp32", "sort", rnd(1 << 20), dict(dim=0)
    yield "sort [4096, 4096] dim 1 fp32", "sort", rnd(4096, 4096), dict(dim=1)
    yield "sort [64, 50257] dim 1 fp32 descending", "sort", rnd(64, 50257), dict(dim=1, descending=True)
    yield "topk k=50 [64, 50257] fp32 (sampling)", "topk", rnd(64, 50257), dict(dim=1, k=50)
    yield "topk k=8 [16384, 64] fp32 (MoE routing)", "topk", rnd(16384, 64), dict(dim=1, k=8)
    yield "topk k=1000 [1, 16M] fp32", "topk", rnd(1, 1 << 24), dict(dim=1, k=1000)
    # index_put: a KV-cache write of one position (a device index, as a
    # compiled decoder passes it), and a scatter-add of 1M rows into 64k.
    pos = torch.tensor([1000], dtype=torch.int64, device=device)
    yield ("index_put KV row [1, 8, 2048, 128] bf16", "index_put", rnd(1, 8, 2048, 128, dtype=torch.bfloat16),
           dict(dim=0, indices=[None, None, pos], values=rnd(1, 8, 1, 128, dtype=torch.bfloat16), accumulate=False))
    rows = torch.randint(0, 1 << 16, (1 << 20,), generator=g).to(device)
    yield ("index_put accumulate 1M rows into [64k, 64] fp32", "index_put", rnd(1 << 16, 64),
           dict(dim=0, indices=[rows], values=rnd(1 << 20, 64), accumulate=True))


def torch_call(op, t, kw):
    if op == "cumsum":
        return lambda: torch.cumsum(t, kw["dim"])
    if op == "cummax":
        return lambda: torch.cummax(t, kw["dim"])
    if op == "logcumsumexp":
        return lambda: torch.logcumsumexp(t, kw["dim"])
    if op == "sort":
        return lambda: torch.sort(t, dim=kw["dim"], descending=kw.get("descending", False))
    if op == "topk":
        return lambda: torch.topk(t, kw["k"], dim=kw["dim"])
    if op == "index_put":
        return lambda: torch.ops.aten.index_put(t, kw["indices"], kw["values"], kw["accumulate"])
    raise ValueError(op)


def shim_call(shims, device, op, t, kw):
    name = f"aoti_torch_{device}_{op}"
    fn = shims.fn(name)
    delete = shims.fn("aoti_torch_delete_tensor_object")
    h = shims.handle(t)
    dim = ctypes.c_int64(kw["dim"])
    outs = out_handles(2)
    refs = [ctypes.byref(o) for o in outs]
    if op == "index_put":
        # A const AtenTensorHandle** list: null for None, else a pointer to a
        # handle (kept alive by |boxes|).
        indices = kw["indices"]
        arr = (ctypes.POINTER(Handle) * len(indices))()
        boxes = [shims.handle(i) if i is not None else None for i in indices]
        for j, box in enumerate(boxes):
            if box is not None:
                arr[j] = ctypes.pointer(box)
        values = shims.handle(kw["values"])
        count = ctypes.c_int64(len(indices))
        accumulate = ctypes.c_int32(int(kw["accumulate"]))

    def run():
        if op == "cumsum":
            rc = fn(h, dim, None, refs[0])
            n = 1
        elif op == "logcumsumexp":
            rc = fn(h, dim, refs[0])
            n = 1
        elif op == "cummax":
            rc = fn(h, dim, refs[0], refs[1])
            n = 2
        elif op == "index_put":
            rc = fn(h, arr, count, values, accumulate, refs[0])
            n = 1
        elif op == "sort":
            rc = fn(h, dim, ctypes.c_int32(int(kw.get("descending", False))), refs[0], refs[1])
            n = 2
        else:
            rc = fn(h, ctypes.c_int64(kw["k"]), dim, ctypes.c_int32(1), ctypes.c_int32(1), refs[0], refs[1])
            n = 2
        if rc != 0:
            raise RuntimeError(f"{name} failed")
        for o in outs[:n]:
            delete(o)
    return run


def timed(fn, device, reps, bracket=contextlib.nullcontext):
    with bracket():
        for _ in range(3):
            fn()
    rounds = []
    for _ in range(5):
        if device == "cuda":
            torch.cuda.synchronize()
            start = time.perf_counter()
            with bracket():
                for _ in range(reps):
                    fn()
            torch.cuda.synchronize()
        else:
            start = time.perf_counter()
            with bracket():
                for _ in range(reps):
                    fn()
        rounds.append((time.perf_counter() - start) / reps)
    return statistics.median(rounds)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--reps", type=int, default=20)
    p.add_argument("--json", type=Path)
    p.add_argument("--markdown", type=Path)
    args = p.parse_args()
    shims = Shims()
    rows = []
    for label, op, t, kw in cases(args.device):
        name = f"aoti_torch_{args.device}_{op}"
        try:
            shims.fn(name)
        except AttributeError:
            rows.append({"case": label, "op": op, "torch_us": None, "aotirt_us": None, "ratio": None,
                         "note": "not provided"})
            continue
        t_torch = timed(torch_call(op, t, kw), args.device, args.reps)
        t_ours = timed(shim_call(shims, args.device, op, t, kw), args.device, args.reps,
                       lambda: shims.run(args.device))
        rows.append({"case": label, "op": op, "torch_us": t_torch * 1e6, "aotirt_us": t_ours * 1e6,
                     "ratio": t_ours / t_torch})
        print(f"{label:45s} torch {t_torch * 1e6:10.1f} us  aotirt {t_ours * 1e6:10.1f} us  "
              f"ratio {t_ours / t_torch:5.2f}", flush=True)
    dev = torch.cuda.get_device_name() if args.device == "cuda" else "cpu"
    md = [f"Device: {dev}; torch {torch.__version__}. Time per call (median of 5 rounds of {args.reps}, "
          "aotirt's each one run); ratio = aotirt / torch (under 1 is faster).", "",
          "| case | torch (us) | aotirt (us) | ratio |", "|---|---:|---:|---:|"]
    for r in rows:
        if r["ratio"] is None:
            md.append(f"| {r['case']} | - | - | {r['note']} |")
        else:
            md.append(f"| {r['case']} | {r['torch_us']:.1f} | {r['aotirt_us']:.1f} | {r['ratio']:.2f} |")
    text = "\n".join(md) + "\n"
    print(text)
    if args.markdown:
        args.markdown.write_text(text)
    if args.json:
        args.json.write_text(json.dumps({"device": dev, "torch": torch.__version__, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
