#!/usr/bin/env python3
"""LLM generation benchmark: aotirt against transformers (eager and under
torch.compile's reduce-overhead mode with a static cache) and libtorch's AOTI
runner looping over the same packages, side by side in one run.

  python bench/llm.py --device cuda                 # Llama-3.2-1B-shaped, bfloat16 and int4
  python bench/llm.py --device cpu --tiny --label cpu-llm-smoke   # a small model: proves the pipeline

The model is Llama-3.2-1B-shaped (16 layers, hidden 2048, 32 query and 8
key/value heads, vocabulary 128,256, tied embeddings) with random weights,
saved once as a checkpoint; every system loads that checkpoint (or the
packages aotirt.export_llm makes of it) in a process of its own. Workloads:
a 128-token prompt and 128 generated tokens, and a 1,920-token prompt with
128 generated (a 2,048-token context), each in bfloat16 and in int4
(torchao weight-only, groups of 128). Generation is greedy with no stop token.
On CUDA, aotirt's rows run the pair exported with fuse_decode=True
(docs/generate.md; aotirt's own shims), the other systems the plain pair.

Per row: decode tokens/s, prefill tokens/s, time to the first token (warm),
cold start to the first token (a fresh process, from its start), the time
from its start to the end of its first whole generation (torch.compile
compiles there), and the physical
limit: the weight and cache bytes each decode step must read over the
measured device bandwidth. Results go to bench/results/<date>-<label>.{md,json,png}.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

from measure_util import device_label  # noqa: E402

SYSTEMS = ("aotirt", "torch.compile-reduce-overhead", "eager", "libtorch-aoti")
KINDS = ("bf16", "int4")
# (name, prompt tokens, generated tokens)
SHAPES = (("p128_g128", 128, 128), ("ctx2048", 1920, 128))
MAX_CACHE_LEN = 2048
INT4_GROUP = 128
TINY_SHAPES = (("p16_g16", 16, 16), ("ctx64", 48, 16))
TINY_CACHE_LEN = 64
# Warm repetitions per row; the median is reported.
REPS = 3
# Rough seconds per measurement (one system, one kind), to decide under
# --budget-s whether to start it.
GUESS_S = {"aotirt": 45, "torch.compile-reduce-overhead": 200, "eager": 90, "libtorch-aoti": 60}
FIRST_TOKEN_MARKER = "AOTIRT_BENCH_FIRST_TOKEN"


def llama_config(tiny: bool, layers: int | None = None):
    import transformers

    if layers:
        cfg = llama_config(tiny)
        cfg.num_hidden_layers = layers
        return cfg

    if tiny:
        return transformers.LlamaConfig(vocab_size=512, hidden_size=128, intermediate_size=256, num_hidden_layers=2,
                                        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256,
                                        tie_word_embeddings=True, bos_token_id=1, eos_token_id=2)
    # Llama-3.2-1B's shape (its rope scaling left out: it changes no cost).
    return transformers.LlamaConfig(vocab_size=128256, hidden_size=2048, intermediate_size=8192, num_hidden_layers=16,
                                    num_attention_heads=32, num_key_value_heads=8, head_dim=64,
                                    max_position_embeddings=131072, rope_theta=500000.0, rms_norm_eps=1e-5,
                                    tie_word_embeddings=True, bos_token_id=128000, eos_token_id=128001)


def prompt_ids(n: int, vocab: int) -> list:
    import random

    rng = random.Random(n)
    return [rng.randrange(3, vocab) for _ in range(n)]


def sync(device: str) -> None:
    import torch

    if device == "cuda":
        torch.cuda.synchronize()


# ---------------------------------------------------------------- preparation

def make_checkpoint(work: Path, tiny: bool, layers: int | None = None) -> Path:
    """The random-weight checkpoint every system loads, made once per work
    folder. The model is built without storage and its bfloat16 weights are
    drawn once: transformers' own float32 initialization and a bfloat16 copy
    would take about as long again as the drawing."""
    import torch
    import transformers

    ckpt = work / "checkpoint"
    if (ckpt / "config.json").exists():
        return ckpt
    with torch.device("meta"):
        model = transformers.LlamaForCausalLM(llama_config(tiny, layers))
    model = model.to(torch.bfloat16).to_empty(device="cpu").eval()
    model.tie_weights()  # to_empty gives the tied output layer storage of its own
    # Random weights of a trained model's scale, so activations stay finite;
    # the norms' weights are ones, as transformers initializes them.
    gen = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for p in model.parameters():
            if p.dim() >= 2:
                p.normal_(0.0, 0.02, generator=gen)
            else:
                p.fill_(1.0)
    model.save_pretrained(str(ckpt))
    return ckpt


def aotirt_packages(kind: str, device: str) -> str:
    """The work folder's packages aotirt runs for |kind|: on CUDA, the pair
    exported with fuse_decode=True (the fused decode layers for bfloat16,
    the MLPs' SiLU-multiply in the gate/up product for int4; their shims
    are aotirt's alone)."""
    return f"{kind}-fused" if device == "cuda" else kind


def packages_to_export(kinds, systems, device: str) -> list:
    """(kind, folder) of each package pair the systems run: the plain pair
    of a kind for libtorch's runner, and for aotirt where it runs that one;
    aotirt's own pair where it differs. transformers' systems run the
    checkpoint, no package."""
    pairs = []
    for kind in kinds:
        mine = aotirt_packages(kind, device)
        if "libtorch-aoti" in systems or ("aotirt" in systems and mine == kind):
            pairs.append((kind, kind))
        if "aotirt" in systems and mine != kind:
            pairs.append((kind, mine))
    return pairs


def export_packages(ckpt: Path, out: Path, kind: str, device: str, cache_len: int, fuse: bool = False) -> None:
    """aotirt.export_llm of the checkpoint (a process of its own per kind)."""
    import torch
    import transformers

    import aotirt

    model = transformers.LlamaForCausalLM.from_pretrained(str(ckpt), dtype=torch.bfloat16).to(device).eval()
    kwargs = {"quantize": "int4", "group_size": INT4_GROUP} if kind == "int4" else {}
    if fuse:
        kwargs["fuse_decode"] = True
    aotirt.export_llm(model, out, max_cache_len=cache_len, device=device, **kwargs)


def measure_bandwidth(device: str) -> float:
    """The device's memory bandwidth in bytes/s: the best of a large copy
    (bytes read and written) and a large reduction (bytes read)."""
    import torch

    n = (1 << 30) if device == "cuda" else (1 << 26)
    x = torch.ones(n, dtype=torch.bfloat16, device=device)
    y = torch.empty_like(x)
    best = 0.0
    for op, moved in ((lambda: y.copy_(x), 2 * x.nbytes), (lambda: x.sum(dtype=torch.float32), x.nbytes)):
        for _ in range(3):
            op()
        sync(device)
        times = []
        for _ in range(10):
            t0 = time.perf_counter()
            op()
            sync(device)
            times.append(time.perf_counter() - t0)
        best = max(best, moved / min(times))
    return best


# ---------------------------------------------------------------- workers
# Each system runs in a process of its own, started by the driver below;
# it prints FIRST_TOKEN_MARKER once its first token is out (the cold start)
# and one JSON line of figures at the end.

def _emit(obj) -> None:
    print(json.dumps(obj), flush=True)


def worker(args) -> None:
    t_start = time.perf_counter()
    if args.system == "libtorch-aoti":
        # The packages are built without linking libtorch (aotirt's lean
        # options), so libtorch's loader resolves their aoti_torch_* calls
        # from the global scope: load libtorch there, as a C++ program linked
        # to it would.
        sys.setdlopenflags(os.RTLD_GLOBAL | os.RTLD_NOW)
    import torch
    import transformers

    device, kind = args.device, args.kind
    shapes = json.loads(args.shapes)
    vocab = args.vocab
    if args.system == "libtorch-aoti":
        import torch._inductor

        prefill = torch._inductor.aoti_load_package(str(Path(args.packages) / "prefill.pt2"))
        decode = torch._inductor.aoti_load_package(str(Path(args.packages) / "decode.pt2"))
        cfg = json.loads((Path(args.packages) / "llm.json").read_text())
        caches = [torch.zeros(cfg["cache_shape"], dtype=getattr(torch, cfg["cache_dtype"]), device=device)
                  for _ in range(2 * cfg["num_layers"])]

        def pick(outs):
            # The packages' greedy token where they return one (as aotirt
            # reads it), else the logits' argmax.
            if isinstance(outs, (list, tuple)) and len(outs) == 2:
                return int(outs[1])
            return int(torch.argmax((outs[0] if isinstance(outs, (list, tuple)) else outs)[0]))

        def generate(prompt, new):
            """Returns (tokens, seconds to the first token, seconds in all)."""
            t0 = time.perf_counter()
            for c in caches:
                c.zero_()
            n = len(prompt)
            ids = torch.tensor([prompt], device=device)
            token = pick(prefill(ids, torch.arange(n, device=device), caches))
            first = time.perf_counter() - t0
            out = [token]
            pos = n
            while len(out) < new:
                token = pick(decode(torch.tensor([[token]], device=device), torch.tensor([pos], device=device),
                                    caches))
                out.append(token)
                pos += 1
            return out, first, time.perf_counter() - t0
    else:
        model = transformers.LlamaForCausalLM.from_pretrained(args.checkpoint, dtype=torch.bfloat16)
        model = model.to(device).eval()
        if kind == "int4":
            import aotirt

            aotirt.quantize_llm(model, "int4", INT4_GROUP, device)
        compiled = args.system == "torch.compile-reduce-overhead"
        cache = transformers.StaticCache(config=model.config, max_cache_len=args.cache_len)
        gen_config = transformers.GenerationConfig(
            do_sample=False, eos_token_id=None, pad_token_id=0, disable_compile=not compiled,
            compile_config=transformers.CompileConfig(mode="reduce-overhead") if compiled else None)

        def run(prompt, new):
            cache.reset()
            with torch.no_grad():
                out = model.generate(torch.tensor([prompt], device=device), generation_config=gen_config,
                                     past_key_values=cache, max_new_tokens=new, min_new_tokens=new)
            sync(device)
            return out[0, len(prompt):].tolist()

        def generate(prompt, new):
            # The first token's time is a generation of one token; the whole,
            # one of |new| (transformers streams no timings of its own).
            t0 = time.perf_counter()
            run(prompt, 1)
            first = time.perf_counter() - t0
            t0 = time.perf_counter()
            out = run(prompt, new)
            return out, first, time.perf_counter() - t0

    # Cold start: the first token of the first shape, then its whole first
    # generation (torch.compile records its graphs there).
    name0, p0, n0 = shapes[0]
    prompt0 = prompt_ids(p0, vocab)
    if args.system == "libtorch-aoti":
        generate(prompt0, 1)
    else:
        run(prompt0, 1)
    cold_start = time.perf_counter() - t_start
    print(FIRST_TOKEN_MARKER, flush=True)
    t0 = time.perf_counter()
    generate(prompt0, n0)
    first_generation = time.perf_counter() - t0
    result = {"cold_start_s": cold_start, "first_generation_s": first_generation, "shapes": {}}
    for name, p, n in shapes:
        prompt = prompt_ids(p, vocab)
        generate(prompt, n)  # warm: torch.compile records this length's graphs
        firsts, decodes, tokens = [], [], None
        for _ in range(REPS):
            out, first, total = generate(prompt, n)
            tokens = out
            firsts.append(first)
            # The n - 1 decode steps: the whole less the first token (timed
            # in the same loop for libtorch, in a one-token call for
            # transformers).
            decodes.append(total - first)
        first_s = statistics.median(firsts)
        decode_s = statistics.median(decodes)
        result["shapes"][name] = {"time_to_first_token_s": first_s, "prefill_tokens_per_s": p / first_s,
                                  "tokens_per_s": (n - 1) / decode_s if decode_s > 0 else 0.0, "tokens": tokens[:16]}
    if device == "cuda":
        result["peak_torch_allocated_mb"] = torch.cuda.max_memory_allocated() / 2**20
    _emit(result)


# ---------------------------------------------------------------- driver

def run_worker(system: str, kind: str, args, work: Path, shapes, vocab: int, gpu) -> dict:
    import procmon

    cmd = [sys.executable, str(Path(__file__).resolve()), "worker", "--system", system, "--kind", kind,
           "--device", args.device, "--checkpoint", str(work / "checkpoint"), "--packages", str(work / kind),
           "--shapes", json.dumps(shapes), "--vocab", str(vocab), "--cache-len", str(args.cache_len)]
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO / "python"), env.get("PYTHONPATH", "")]))
    obs = procmon.run_observed(cmd, env=env, timeout_s=args.row_timeout, marker=FIRST_TOKEN_MARKER, gpu=gpu)
    if not obs.ok() or not obs.stdout.strip():
        return {"error": f"{system} {kind}: exit {obs.returncode}{' (timed out)' if obs.timed_out else ''}: "
                         f"{obs.stderr.strip()[-1500:]}"}
    res = json.loads(obs.stdout.strip().splitlines()[-1])
    # From the process's start: its first token, then its first whole
    # generation (timed inside the process after the first token).
    res["cold_start_s"] = obs.marker_s
    if obs.marker_s is not None:
        res["first_generation_s"] = obs.marker_s + res["first_generation_s"]
    res["peak_device_mb"] = obs.peak_device_mb
    return res


def run_aotirt(kind: str, args, work: Path, shapes, vocab: int, gpu) -> dict:
    import procmon

    cli = Path(args.cli)
    pkgs = work / aotirt_packages(kind, args.device)
    res = {"shapes": {}, "packages": pkgs.name}
    # Cold start: a fresh process to its first token (printed at once with
    # --print-ids), three times; the median.
    name0, p0, n0 = shapes[0]
    ids0 = ",".join(map(str, prompt_ids(p0, vocab)))
    colds, peaks = [], []
    for _ in range(3):
        obs = procmon.run_observed([str(cli), "generate", str(pkgs), "--prompt-ids", ids0, "-n", "1", "--print-ids",
                                    "--ignore-eos"], timeout_s=args.row_timeout, marker=r"^\s*\d+", gpu=gpu)
        if not obs.ok():
            return {"error": f"aotirt {kind}: exit {obs.returncode}: {obs.stderr.strip()[-1500:]}"}
        colds.append(obs.marker_s)
        peaks.append(obs.peak_device_mb or 0)
    res["cold_start_s"] = statistics.median(colds)
    # The first generation of a fresh process: load, then n tokens.
    obs = procmon.run_observed([str(cli), "generate", str(pkgs), "--prompt-ids", ids0, "-n", str(n0), "--json",
                                "--ignore-eos"], timeout_s=args.row_timeout, gpu=gpu)
    if not obs.ok():
        return {"error": f"aotirt {kind}: exit {obs.returncode}: {obs.stderr.strip()[-1500:]}"}
    j = json.loads(obs.stdout.strip().splitlines()[-1])
    res["first_generation_s"] = obs.wall_s
    res["weight_bytes"] = j["weight_bytes"]
    res["unshared_weight_bytes"] = j["unshared_weight_bytes"]
    res["peak_device_mb"] = max(peaks + [obs.peak_device_mb or 0])
    for name, p, n in shapes:
        ids = ",".join(map(str, prompt_ids(p, vocab)))
        rows = []
        for _ in range(REPS):
            obs = procmon.run_observed([str(cli), "generate", str(pkgs), "--prompt-ids", ids, "-n", str(n), "--json",
                                        "--ignore-eos", "--warmup", "2"], timeout_s=args.row_timeout, gpu=gpu)
            if not obs.ok():
                return {"error": f"aotirt {kind} {name}: exit {obs.returncode}: {obs.stderr.strip()[-1500:]}"}
            rows.append(json.loads(obs.stdout.strip().splitlines()[-1]))
        res["shapes"][name] = {
            "time_to_first_token_s": statistics.median(r["time_to_first_token_s"] for r in rows),
            "prefill_tokens_per_s": statistics.median(r["prefill_tokens_per_s"] for r in rows),
            "tokens_per_s": statistics.median(r["decode_tokens_per_s"] for r in rows),
            "graph_replays": rows[-1].get("graph_replays", 0),
            "tokens": rows[-1]["tokens"][:16],
        }
    return res


def cache_bytes_per_token(cfg: dict, context: float) -> float:
    layers, (_, kv_heads, _, head_dim) = cfg["num_layers"], cfg["cache_shape"]
    elem = 2 if cfg["cache_dtype"] in ("bfloat16", "float16") else 4
    return 2 * layers * kv_heads * head_dim * context * elem


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd")
    w = sub.add_parser("worker")
    for flag in ("--system", "--kind", "--device", "--checkpoint", "--packages", "--shapes"):
        w.add_argument(flag, required=True)
    w.add_argument("--vocab", type=int, required=True)
    w.add_argument("--cache-len", type=int, required=True)
    e = sub.add_parser("export")
    e.add_argument("--checkpoint", required=True)
    e.add_argument("--out", required=True)
    e.add_argument("--kind", required=True, choices=KINDS)
    e.add_argument("--device", required=True)
    e.add_argument("--cache-len", type=int, required=True)
    e.add_argument("--fuse-decode", action="store_true")
    ap.add_argument("--device", default="cuda", choices=("cuda", "cpu"))
    ap.add_argument("--tiny", action="store_true", help="a small model and short prompts (proves the pipeline)")
    ap.add_argument("--work", default=str(HERE / ".work" / "llm"))
    ap.add_argument("--label", default=None,
                    help="results name: <date>-<label> (default: <gpu>-llm, h200-llm say, or cpu-llm)")
    ap.add_argument("--systems", default=",".join(SYSTEMS))
    ap.add_argument("--kinds", default=",".join(KINDS))
    ap.add_argument("--cli", default=str(Path(os.environ.get("AOTIRT_BUILD_DIR", REPO / "build")) / "bin" / "aotirt"))
    ap.add_argument("--row-timeout", type=float, default=900)
    ap.add_argument("--results", default=str(HERE / "results"))
    ap.add_argument("--export-only", action="store_true", help="make the checkpoint and packages, measure nothing")
    ap.add_argument("--report-only", action="store_true",
                    help="measure nothing: report the measurements kept in the work folder")
    ap.add_argument("--device-name", default=None, help="the device's name in the report (default: asked of torch)")
    ap.add_argument("--merge-from", default=None,
                    help="an earlier results JSON whose rows fill the (workload, system) pairs this run lacks; "
                         "they keep their commit")
    ap.add_argument("--layers", type=int, default=None,
                    help="fewer layers than the model's (a quick export for kernel profiles; not a benchmark)")
    ap.add_argument("--budget-s", type=float, default=None,
                    help="start no new measurement after this many seconds; the same command again goes on")
    args = ap.parse_args()
    if args.cmd == "worker":
        worker(args)
        return 0
    if args.cmd == "export":
        export_packages(Path(args.checkpoint), Path(args.out), args.kind, args.device, args.cache_len,
                        args.fuse_decode)
        return 0

    import procmon

    work = Path(args.work) / (("tiny" if args.tiny else "llama1b") + (f"-{args.layers}layers" if args.layers else ""))
    work.mkdir(parents=True, exist_ok=True)
    args.cache_len = TINY_CACHE_LEN if args.tiny else MAX_CACHE_LEN
    shapes = [list(s) for s in (TINY_SHAPES if args.tiny else SHAPES)]
    systems = [s for s in args.systems.split(",") if s]
    kinds = [k for k in args.kinds.split(",") if k]
    for s in systems:
        if s not in SYSTEMS:
            ap.error(f"unknown system {s!r}: one of {', '.join(SYSTEMS)}")
    for k in kinds:
        if k not in KINDS:
            ap.error(f"unknown kind {k!r}: one of {', '.join(KINDS)}")
    t0 = time.perf_counter()
    log = lambda msg: print(f"[llm {time.perf_counter() - t0:7.1f}s] {msg}", flush=True)  # noqa: E731

    vocab = llama_config(args.tiny).vocab_size
    if args.report_only:
        return report(args, work, kinds, systems, shapes, t0)
    ckpt = make_checkpoint(work, args.tiny, args.layers)
    # Every export the systems need at once, each in a process of its own.
    procs = {}
    for kind, folder in packages_to_export(kinds, systems, args.device):
        if (work / folder / "llm.json").exists():
            continue
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO / "python"), env.get("PYTHONPATH", "")]))
        fuse = ["--fuse-decode"] if folder != kind else []
        procs[folder] = subprocess.Popen([sys.executable, __file__, "export", "--checkpoint", str(ckpt), "--out",
                                          str(work / folder), "--kind", kind, "--device", args.device, "--cache-len",
                                          str(args.cache_len)] + fuse, env=env, stdout=subprocess.PIPE,
                                         stderr=subprocess.STDOUT, text=True)
        log(f"exporting {folder}")
    for kind, p in procs.items():
        out, _ = p.communicate()
        if p.returncode != 0:
            print(out[-4000:], file=sys.stderr)
            log(f"export of {kind} failed")
            return 1
        log(f"exported {kind}")
    if args.export_only:
        return 0

    # Each measurement is kept in the work folder as it is made, so a run cut
    # short by --budget-s goes on where it stopped.
    done = work / "measured"
    done.mkdir(exist_ok=True)
    bw_file = done / "bandwidth.json"
    if bw_file.exists():
        bandwidth = json.loads(bw_file.read_text())["bytes_per_s"]
    else:
        bandwidth = measure_bandwidth(args.device)
        bw_file.write_text(json.dumps({"bytes_per_s": bandwidth}))
    log(f"bandwidth {bandwidth / 1e9:.0f} GB/s")
    gpu = procmon.GpuMemory() if args.device == "cuda" else None
    measured = {}
    complete = True
    for kind in kinds:
        for system in systems:
            f = done / f"{system}-{kind}.json"
            if f.exists():
                measured[(system, kind)] = json.loads(f.read_text())
                continue
            if args.budget_s is not None and time.perf_counter() - t0 + GUESS_S[system] > args.budget_s:
                complete = False
                continue
            log(f"measuring {system} {kind}")
            if system == "aotirt":
                r = run_aotirt(kind, args, work, shapes, vocab, gpu)
            else:
                r = run_worker(system, kind, args, work, shapes, vocab, gpu)
            if "error" in r:
                log(r["error"])
            else:
                f.write_text(json.dumps(r))
            measured[(system, kind)] = r
    if not complete:
        log("INCOMPLETE: out of --budget-s; run the same command again to go on")
        return 3
    return report(args, work, kinds, systems, shapes, t0)


def report(args, work: Path, kinds: list, systems: list, shapes: list, t0: float) -> int:
    """Rows and targets from the measurements kept in |work|; results files."""
    log = lambda msg: print(f"[llm {time.perf_counter() - t0:7.1f}s] {msg}", flush=True)  # noqa: E731
    done = work / "measured"
    bandwidth = json.loads((done / "bandwidth.json").read_text())["bytes_per_s"]
    measured = {}
    for kind in kinds:
        for system in systems:
            f = done / f"{system}-{kind}.json"
            if f.exists():
                measured[(system, kind)] = json.loads(f.read_text())
    rows = []
    for kind in kinds:
        # The cache's shape from either pair of the kind (the same model): the
        # plain pair is not exported where aotirt alone runs its own.
        made = [work / f / "llm.json" for f in (kind, aotirt_packages(kind, args.device))]
        made = [f for f in made if f.exists()]
        if made:
            cfg = json.loads(made[0].read_text())
        else:  # the packages are elsewhere: the cache follows from the model
            mc = llama_config(args.tiny, args.layers)
            cfg = {"num_layers": mc.num_hidden_layers, "cache_dtype": "bfloat16",
                   "cache_shape": [1, mc.num_key_value_heads, args.cache_len,
                                   getattr(mc, "head_dim", None) or mc.hidden_size // mc.num_attention_heads]}
        weights = measured.get(("aotirt", kind), {}).get("weight_bytes")
        for name, p, n in shapes:
            context = p + n / 2  # the mean context of the decode steps
            limit = None
            if weights:
                limit = bandwidth / (weights + cache_bytes_per_token(cfg, context))
            workload = f"llama_{kind}_{name}"
            for system in systems:
                if (system, kind) not in measured:
                    continue
                r = measured[(system, kind)]
                row = {"workload": workload, "system": system}
                if "error" in r:
                    row["error"] = r["error"]
                    rows.append(row)
                    continue
                s = r["shapes"][name]
                row.update({
                    "tokens_per_s": s["tokens_per_s"],
                    "median_us": 1e6 / s["tokens_per_s"] if s["tokens_per_s"] else None,
                    "prefill_tokens_per_s": s["prefill_tokens_per_s"],
                    "time_to_first_token_s": s["time_to_first_token_s"],
                    "cold_start_s": r.get("cold_start_s"),
                    "first_generation_s": r.get("first_generation_s"),
                    "peak_device_mb": r.get("peak_device_mb"),
                    "limit_tokens_per_s": limit,
                    "bandwidth_fraction": s["tokens_per_s"] / limit if limit else None,
                    "first_tokens": s.get("tokens"),
                })
                if "graph_replays" in s:
                    row["graph_replays"] = s["graph_replays"]
                rows.append(row)
    meta = {
        # A copy of the tree without .git (a GPU machine) names its commit.
        "commit": os.environ.get("AOTIRT_BENCH_COMMIT") or subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True).stdout.strip()
        or "unknown",
        "date": datetime.date.today().isoformat(),
        "device": args.device_name or device_name(args.device),
        "bandwidth_gb_s": bandwidth / 1e9,
        "model": "tiny Llama-style" if args.tiny else "Llama-3.2-1B-shaped (random weights)",
        "max_cache_len": args.cache_len,
        "int4_group_size": INT4_GROUP,
        "weight_bytes": {k: measured.get(("aotirt", k), {}).get("weight_bytes") for k in kinds},
        "unshared_weight_bytes": {k: measured.get(("aotirt", k), {}).get("unshared_weight_bytes") for k in kinds},
        "reps": REPS,
        "aotirt_bf16_fused": measured.get(("aotirt", "bf16"), {}).get("packages") == "bf16-fused",
        "aotirt_int4_fused": measured.get(("aotirt", "int4"), {}).get("packages") == "int4-fused",
    }
    if args.merge_from:
        # Rows of an earlier run (torch.compile's, say, which no aotirt change
        # moves) where this one has none, each naming its commit.
        # Only from the same kind of device: the report compares its rows
        # with this run's (an H100's aotirt row against an H200's
        # torch.compile row would say nothing).
        old = json.loads(Path(args.merge_from).read_text())
        have = {(r["workload"], r["system"]) for r in rows}
        if old.get("device") != meta["device"]:
            log(f"--merge-from {args.merge_from}: measured on {old.get('device')}, this run on "
                f"{meta['device']}: its rows are left out")
            old = {"rows": []}
        for r in old["rows"]:
            if (r["workload"], r["system"]) not in have and "error" not in r:
                rows.append({**r, "commit": r.get("commit") or old["commit"]})
        workloads = [f"llama_{k}_{name}" for k in KINDS for name, _, _ in shapes]
        rows.sort(key=lambda r: (workloads.index(r["workload"]) if r["workload"] in workloads else len(workloads),
                                 SYSTEMS.index(r["system"]) if r["system"] in SYSTEMS else len(SYSTEMS)))
    label = args.label or f"{'cpu' if args.device == 'cpu' else device_label(meta['device'])}-llm"
    write_results(Path(args.results), f"{meta['date']}-{label}", rows, meta)
    bad = [r for r in rows if "error" in r]
    log(f"{len(rows) - len(bad)} rows measured, {len(bad)} failed")
    return 1 if bad else 0


def device_name(device: str) -> str:
    if device == "cuda":
        import torch

        return torch.cuda.get_device_name(0)
    import platform

    return platform.processor() or "cpu"


def targets(rows: list) -> list:
    """The issue's targets, each (text, met)."""
    out = []
    by = {(r["workload"], r["system"]): r for r in rows if "error" not in r}
    for (workload, system), r in sorted(by.items()):
        if system != "aotirt":
            continue
        frac = r.get("bandwidth_fraction")
        need = 0.5 if "int4" in workload else 0.7
        if frac is not None:
            out.append((f"{workload}: decode at {frac:.0%} of the bandwidth limit (target {need:.0%})", frac >= need))
        tc = by.get((workload, "torch.compile-reduce-overhead"))
        if tc:
            out.append((f"{workload}: decode {r['tokens_per_s']:.0f} tokens/s vs torch.compile "
                        f"{tc['tokens_per_s']:.0f} (target: ahead)", r["tokens_per_s"] > tc["tokens_per_s"]))
            out.append((f"{workload}: time to first token {r['time_to_first_token_s'] * 1e3:.1f} ms vs "
                        f"torch.compile {tc['time_to_first_token_s'] * 1e3:.1f} ms (target: ahead)",
                        r["time_to_first_token_s"] < tc["time_to_first_token_s"]))
            if tc.get("cold_start_s") and r.get("cold_start_s") and workload.endswith(("p128_g128", "p16_g16")):
                ratio = r["cold_start_s"] / tc["cold_start_s"]
                out.append((f"{workload}: cold start to the first token {r['cold_start_s']:.2f} s vs torch.compile "
                            f"{tc['cold_start_s']:.2f} s = {ratio:.2f}x (target <= 0.3x)", ratio <= 0.3))
    return out


def write_results(results: Path, stem: str, rows: list, meta: dict) -> None:
    results.mkdir(parents=True, exist_ok=True)
    tgt = targets(rows)
    doc = {**meta, "rows": rows, "targets": [{"text": t, "met": m} for t, m in tgt]}
    (results / f"{stem}.json").write_text(json.dumps(doc, indent=1) + "\n")
    fmt = lambda v, f: "-" if v is None else format(v, f)  # noqa: E731
    lines = [f"# LLM generation: {meta['model']}, {meta['device']}",
             "",
             f"Commit {meta['commit']}, {meta['date']}. Greedy, batch 1, static cache of {meta['max_cache_len']} "
             f"tokens; int4: torchao weight-only, groups of {meta['int4_group_size']}. Measured bandwidth "
             f"{meta['bandwidth_gb_s']:.0f} GB/s; the limit is the weight and mean-context cache bytes each decode "
             f"step reads over it. Medians of {meta['reps']} warm runs; cold start: a fresh process to its first "
             f"token; first generation: its first whole generation (torch.compile compiles there). "
             + ("aotirt's bfloat16 rows run the decode package exported with fuse_decode=True (aotirt's fused "
                "decode layers), the other systems the plain one. " if meta.get("aotirt_bf16_fused") else "")
             + ("aotirt's int4 rows run the decode package exported with fuse_decode=True (SiLU-multiply in the "
                "MLPs' gate/up product), the other systems the plain one. " if meta.get("aotirt_int4_fused") else "")
             + "Made by `bench/llm.py`.",
             "",
             "| workload | system | decode tok/s | limit tok/s | of limit | vs torch.compile | prefill tok/s | "
             "first token ms | cold start s | first generation s | peak device MiB |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    by = {(r["workload"], r["system"]): r for r in rows}
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['workload']} | {r['system']} | failed: {r['error'][:120]} |||||||||")
            continue
        tc = by.get((r["workload"], "torch.compile-reduce-overhead"), {})
        vs = r["tokens_per_s"] / tc["tokens_per_s"] if tc.get("tokens_per_s") else None
        system = r["system"] + (f" (run of {r['commit']})" if r.get("commit") else "")
        lines.append(
            f"| {r['workload']} | {system} | {r['tokens_per_s']:.1f} | {fmt(r['limit_tokens_per_s'], '.0f')} | "
            f"{fmt(r['bandwidth_fraction'], '.0%')} | {fmt(vs, '.2f')}x | {r['prefill_tokens_per_s']:.0f} | "
            f"{r['time_to_first_token_s'] * 1e3:.1f} | {fmt(r['cold_start_s'], '.2f')} | "
            f"{fmt(r['first_generation_s'], '.2f')} | {fmt(r['peak_device_mb'], '.0f')} |")
    merged = sorted({r["commit"] for r in rows if r.get("commit")})
    if merged:
        lines += ["", f"Rows marked \"run of ...\" are kept from an earlier run of this benchmark on the same kind of "
                      f"machine ({', '.join(merged)}), for pairs this run did not measure; transformers' own rows "
                      f"(eager, torch.compile) run no aotirt code."]
    lines += ["", "Weights held by aotirt (prefill and decode share one copy): " + ", ".join(
        f"{k} {v / 2**20:.0f} MiB (the two packages apart: {meta['unshared_weight_bytes'][k] / 2**20:.0f} MiB)"
        for k, v in meta["weight_bytes"].items() if v), "", "## Targets", ""]
    lines += [f"- [{'x' if m else ' '}] {t}" for t, m in tgt]
    (results / f"{stem}.md").write_text("\n".join(lines) + "\n")
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        ok = [r for r in rows if "error" not in r]
        workloads = list(dict.fromkeys(r["workload"] for r in ok))
        systems = list(dict.fromkeys(r["system"] for r in ok))
        fig, ax = plt.subplots(figsize=(10, 4.5))
        width = 0.8 / max(len(systems), 1)
        for i, s in enumerate(systems):
            vals = [by.get((w, s), {}).get("tokens_per_s") or 0 for w in workloads]
            ax.bar([x + i * width for x in range(len(workloads))], vals, width, label=s)
        for x, w in enumerate(workloads):
            lim = next((r["limit_tokens_per_s"] for r in ok if r["workload"] == w and r["limit_tokens_per_s"]), None)
            if lim:
                ax.hlines(lim, x - 0.1, x + 0.9, colors="k", linestyles="dashed")
        ax.set_xticks([x + 0.4 - width / 2 for x in range(len(workloads))])
        ax.set_xticklabels(workloads, rotation=15, fontsize=8)
        ax.set_ylabel("decode tokens/s (dashed: bandwidth limit)")
        ax.set_title(f"{meta['model']} on {meta['device']} ({meta['commit']})")
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(results / f"{stem}.png", dpi=110)
    except Exception as e:  # the table and JSON stand without the chart
        print(f"no chart: {e}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
