# aotirt.Generator from the installed wheel, without torch (scripts/wheel-check.sh
# runs it in the same torch-free virtual environment as test_runtime_api.py):
# the small Llama-style pair that tests/models/test_generate.py exported
# earlier in the test run, whose reference.json holds transformers' greedy
# tokens for the same weights. Greedy tokens, streaming, callbacks, sampling,
# stop tokens, threads, Ctrl-C and bad input. AOTIRT_LLM_DIR names an export
# directory instead of the newest one in the cache; CUDA cases run where the
# GPU machine's test run exported the CUDA pair.

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

import aotirt


def _export_dir(device: str):
    """The newest export for |device| that carries reference.json, or None."""
    named = os.environ.get("AOTIRT_LLM_DIR")
    if named and device == "cpu":
        return Path(named) if (Path(named) / "reference.json").is_file() else None
    cache = Path(os.environ.get("AOTIRT_CACHE_DIR", Path(__file__).resolve().parents[2] / ".cache")) / "llm"
    pattern = "torch-*/llama-cuda-*" if device == "cuda" else "torch-*/llama-[0-9a-f]*"
    found = [d for d in cache.glob(pattern) if (d / "reference.json").is_file() and (d / "llm.json").is_file()]
    return max(found, key=lambda d: d.stat().st_mtime) if found else None


def _skip_reason(device: str) -> str:
    return (f"no {device} export with reference.json: tests/models/test_generate.py makes it earlier in "
            f"scripts/test.sh" + (" on a GPU machine" if device == "cuda" else ""))


@pytest.fixture(scope="module", params=["cpu", "cuda"])
def llm(request):
    d = _export_dir(request.param)
    if d is None:
        pytest.skip(_skip_reason(request.param))
    return d, aotirt.Generator(d), json.loads((d / "reference.json").read_text())


@pytest.fixture(scope="module")
def cpu_llm():
    d = _export_dir("cpu")
    if d is None:
        pytest.skip(_skip_reason("cpu"))
    return d, aotirt.Generator(d), json.loads((d / "reference.json").read_text())


def test_greedy_matches_transformers(llm):
    d, gen, ref = llm
    for case in ref["greedy"]:
        n = len(case["tokens"])
        assert gen.generate(case["prompt"], n, ignore_eos=True) == case["tokens"], case["prompt"]
        st = gen.last_stats
        assert st["stop_reason"] == "max_new_tokens" and st["generated_tokens"] == n
        assert st["prompt_tokens"] == len(case["prompt"])
        assert st["decode_tokens_per_s"] > 0 and st["prefill_tokens_per_s"] > 0
        if gen.device.startswith("cuda") and n > 2:
            assert st["graph_replays"] > 0
    # numpy token ids are taken as ints.
    case = ref["greedy"][0]
    assert gen.generate(np.array(case["prompt"], dtype=np.int32), 4, ignore_eos=True) == case["tokens"][:4]


def test_reuse_cache_runs_only_the_new_tokens(llm):
    """A second turn with reuse_cache prefills only what follows the first
    call's prompt and tokens, and gives transformers' tokens for the whole."""
    _, gen, ref = llm
    first, follow = ref["greedy"][0], ref["follow"]
    got = gen.generate(first["prompt"], 8, ignore_eos=True)
    assert got == first["tokens"][:8]
    n = len(follow["tokens"])
    assert gen.generate(follow["prompt"], n, ignore_eos=True, reuse_cache=True) == follow["tokens"]
    # The cache held the first prompt and all but the last of its tokens.
    assert gen.last_stats["reused_tokens"] == len(first["prompt"]) + 8 - 1
    # One token past what the cache holds goes through the decode package.
    third = follow["prompt"] + follow["tokens"]
    assert gen.generate(third, 4, ignore_eos=True, reuse_cache=True) == gen.generate(third, 4, ignore_eos=True)
    # A prompt that leaves the cached text keeps only the common prefix.
    again = gen.generate(first["prompt"], 8, ignore_eos=True, reuse_cache=True)
    assert gen.last_stats["reused_tokens"] == len(first["prompt"]) - 1 and again == first["tokens"][:8]
    # Without reuse_cache nothing is reused, and the first call of a
    # Generator has nothing to reuse.
    gen.generate(follow["prompt"], 2, ignore_eos=True)
    assert gen.last_stats["reused_tokens"] == 0
    fresh = aotirt.Generator(Path(gen.config["prefill_package"]).parent, device=gen.device)
    assert fresh.generate(follow["prompt"], n, ignore_eos=True, reuse_cache=True) == follow["tokens"]
    assert fresh.last_stats["reused_tokens"] == 0


def test_config_and_shared_weights(llm):
    d, gen, _ = llm
    cfg = gen.config
    on_disk = json.loads((d / "llm.json").read_text())
    assert cfg["vocab_size"] == on_disk["vocab_size"] and cfg["num_layers"] == on_disk["num_layers"]
    assert cfg["max_cache_len"] == on_disk["max_cache_len"]
    assert Path(cfg["tokenizer"]).name == "tokenizer.model" and Path(cfg["tokenizer"]).is_file()
    assert Path(cfg["prefill_package"]).is_file() and Path(cfg["decode_package"]).is_file()
    assert gen.device.split(":")[0] in ("cpu", "cuda")
    # The two packages share every weight: held once.
    assert 0 < gen.weight_bytes < gen.unshared_weight_bytes
    cfg["vocab_size"] = -1  # a copy: the Generator's own is untouched
    assert gen.config["vocab_size"] == on_disk["vocab_size"]
    assert "Generator" in repr(gen)


def test_stream_yields_the_same_tokens_and_stops_when_left(cpu_llm):
    _, gen, ref = cpu_llm
    case = ref["greedy"][0]
    assert list(gen.stream(case["prompt"], len(case["tokens"]), ignore_eos=True)) == case["tokens"]
    it = gen.stream([1, 5], 1000, ignore_eos=True)
    first = [next(it) for _ in range(3)]
    it.close()
    st = gen.last_stats
    assert st["stop_reason"] == "cancelled" and 3 <= st["generated_tokens"] < 10, st
    # The Generator is free again: the next call runs from an empty cache.
    assert list(gen.stream([1, 5], 3, ignore_eos=True)) == first


def test_on_token_sees_every_token_and_can_stop(cpu_llm):
    _, gen, ref = cpu_llm
    case = ref["greedy"][0]
    seen = []
    assert gen.generate(case["prompt"], 8, ignore_eos=True, on_token=seen.append) == case["tokens"][:8]
    assert seen == case["tokens"][:8]
    stop_at = case["tokens"][3]
    got = gen.generate(case["prompt"], 24, ignore_eos=True, on_token=lambda t: t != stop_at)
    assert got == case["tokens"][:case["tokens"].index(stop_at) + 1]
    assert gen.last_stats["stop_reason"] == "cancelled"


def test_an_exception_in_on_token_stops_and_propagates(cpu_llm):
    _, gen, ref = cpu_llm
    calls = []

    def boom(token):
        calls.append(token)
        raise ValueError("stop here")

    with pytest.raises(ValueError, match="stop here"):
        gen.generate([1, 5], 50, ignore_eos=True, on_token=boom)
    assert len(calls) == 1 and gen.last_stats["stop_reason"] == "cancelled"
    # The consumer's own exception inside a stream's loop stops it too.
    with pytest.raises(ValueError, match="stop here"):
        list(_raising_stream(gen))
    assert gen.last_stats["stop_reason"] == "cancelled"
    # Still usable.
    case = ref["greedy"][1]
    assert gen.generate(case["prompt"], 5, ignore_eos=True) == case["tokens"][:5]


def _raising_stream(gen):
    for i, token in enumerate(gen.stream([1, 5], 50, ignore_eos=True)):
        if i == 2:
            raise ValueError("stop here")
        yield token


def test_sampling_is_seeded_and_top_k_one_is_greedy(cpu_llm):
    _, gen, _ = cpu_llm
    opts = dict(ignore_eos=True, temperature=1.5)
    a = gen.generate([1, 17, 42], 16, seed=5, **opts)
    assert a == gen.generate([1, 17, 42], 16, seed=5, **opts)
    assert a != gen.generate([1, 17, 42], 16, seed=6, **opts)
    greedy = gen.generate([1, 17, 42], 16, ignore_eos=True)
    assert gen.generate([1, 17, 42], 16, top_k=1, **opts) == greedy
    assert gen.generate([1, 17, 42], 16, top_p=1e-6, **opts) == greedy


def test_stop_tokens(cpu_llm):
    _, gen, ref = cpu_llm
    case = ref["greedy"][0]
    stop = case["tokens"][2]
    got = gen.generate(case["prompt"], 24, ignore_eos=True, stop_token_ids=[stop])
    assert got == case["tokens"][:case["tokens"].index(stop) + 1]
    assert gen.last_stats["stop_reason"] == "stop_token"
    # llm.json's stop tokens count unless ignore_eos.
    eos = gen.config["stop_token_ids"]
    got = gen.generate(case["prompt"], 24)
    assert got == case["tokens"][:len(got)]
    assert gen.last_stats["stop_reason"] == ("stop_token" if got[-1] in eos else "max_new_tokens")
    assert gen.generate(case["prompt"], 0) == [] and gen.last_stats["generated_tokens"] == 0


def test_one_call_at_a_time_per_generator(cpu_llm):
    d, gen, ref = cpu_llm
    started, release = threading.Event(), threading.Event()
    out = {}

    def hold(token):
        started.set()
        release.wait(30)

    def first():
        out["first"] = gen.generate([1, 5], 2, ignore_eos=True, on_token=hold)

    t = threading.Thread(target=first)
    t.start()
    try:
        assert started.wait(30)
        with pytest.raises(aotirt.InvalidArgumentError, match="already generating on another thread"):
            gen.generate([1, 5], 2, ignore_eos=True)
    finally:
        release.set()
        t.join(60)
    assert len(out["first"]) == 2
    # Generators of their own run on threads at once, with the same tokens.
    case = ref["greedy"][0]
    results = [None] * 3

    def own(i):
        results[i] = aotirt.Generator(d).generate(case["prompt"], 12, ignore_eos=True)

    threads = [threading.Thread(target=own, args=(i,)) for i in range(3)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(120)
    assert results == [case["tokens"][:12]] * 3


CTRL_C = r"""
import os, signal, sys, threading, time
import aotirt
# Python leaves an ignored SIGINT (a background job's, in CI) ignored.
signal.signal(signal.SIGINT, signal.default_int_handler)
gen = aotirt.Generator(sys.argv[1])
for attempt in range(5):
    timer = threading.Timer(0.02, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    try:
        tokens = gen.generate([1, 5], 100000, ignore_eos=True)
        time.sleep(1)  # finished first: the interrupt lands here
    except KeyboardInterrupt:
        st = gen.last_stats
        if st["stop_reason"] == "cancelled":
            print("CANCELLED", st["generated_tokens"])
            # Still usable after the interrupt.
            print("AFTER", len(gen.generate([1, 5], 3, ignore_eos=True)))
            sys.exit(0)
print("NEVER INTERRUPTED")
sys.exit(1)
"""


ABANDONED = r"""
import sys
import aotirt
gen = aotirt.Generator(sys.argv[1])
it = gen.stream([1, 5], 100000, ignore_eos=True)
print("FIRST", next(it), flush=True)
# The iterator is neither finished nor closed when the interpreter exits.
"""


def test_an_abandoned_stream_lets_the_interpreter_exit(cpu_llm):
    d, _, _ = cpu_llm
    proc = subprocess.run([sys.executable, "-c", ABANDONED, str(d)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.startswith("FIRST") and "Traceback" not in proc.stderr


def test_ctrl_c_stops_after_the_current_token(cpu_llm):
    """SIGINT during generate: KeyboardInterrupt once the current token is
    chosen, generation cancelled, the Generator usable afterwards. In a
    process of its own, so a stray interrupt cannot reach this one."""
    d, _, _ = cpu_llm
    proc = subprocess.run([sys.executable, "-c", CTRL_C, str(d)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "CANCELLED" in proc.stdout and "AFTER 3" in proc.stdout


@pytest.mark.parametrize("kwargs, needle", [
    (dict(prompt="the quick brown fox"), "prompt is text; a Generator takes token ids"),
    (dict(prompt=b"\x01\x02"), "prompt is text"),
    (dict(prompt=5), "prompt must be a sequence of token ids, not int"),
    (dict(prompt=[]), "the prompt is empty"),
    (dict(prompt=[1, 1.5]), "prompt[1] is 1.5 (float), not an integer token id"),
    (dict(prompt=[True]), "prompt[0] is True (bool)"),
    (dict(prompt=[1, 1 << 70]), "does not fit in 64 bits"),
    (dict(prompt=[1, 256]), "prompt token 1 is 256, outside the vocabulary of 256 tokens"),
    (dict(prompt=[1, -3]), "prompt token 1 is -3"),
    (dict(prompt=[7] * 1025), "the prompt has 1025 tokens, but the cache holds 1024"),
    (dict(prompt=[1], max_new_tokens=-1), "max_new_tokens must not be negative, not -1"),
    (dict(prompt=[1], max_new_tokens=2.0), "max_new_tokens must be an int"),
    (dict(prompt=[1], temperature=-0.5), "temperature must be 0 (greedy) or positive"),
    (dict(prompt=[1], temperature=float("nan")), "temperature must be 0 (greedy) or positive"),
    (dict(prompt=[1], temperature="hot"), "temperature must be a number"),
    (dict(prompt=[1], top_k=-1), "top_k must not be negative"),
    (dict(prompt=[1], top_p=0.0), "top_p must be in (0, 1]"),
    (dict(prompt=[1], top_p=1.5), "top_p must be in (0, 1]"),
    (dict(prompt=[1], seed=-1), "seed must not be negative"),
    (dict(prompt=[1], seed=1 << 64), "seed must be at most"),
    (dict(prompt=[1], stop_token_ids="2"), "stop_token_ids is text"),
    (dict(prompt=[1], on_token=3), "on_token must be callable or None"),
], ids=lambda v: v if isinstance(v, str) else None)
def test_bad_arguments_are_named(cpu_llm, kwargs, needle):
    _, gen, _ = cpu_llm
    assert gen.config["vocab_size"] == 256 and gen.config["max_cache_len"] == 1024
    with pytest.raises(aotirt.InvalidArgumentError) as e:
        gen.generate(**kwargs)
    assert needle in str(e.value)


def test_stream_refuses_on_token(cpu_llm):
    _, gen, _ = cpu_llm
    with pytest.raises(aotirt.InvalidArgumentError, match="takes no on_token"):
        gen.stream([1], 3, on_token=print)
    # A bad argument surfaces from the stream's first item.
    with pytest.raises(aotirt.InvalidArgumentError, match="top_p must be in"):
        next(gen.stream([1], 3, top_p=2.0))


def test_bad_directories_and_devices_are_named(cpu_llm, tmp_path):
    d, _, _ = cpu_llm
    with pytest.raises(aotirt.NotFoundError, match="llm.json"):
        aotirt.Generator(tmp_path / "none")
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "llm.json").write_text("{not json")
    with pytest.raises(aotirt.InvalidArgumentError, match="not a JSON object"):
        aotirt.Generator(broken)
    with pytest.raises(aotirt.InvalidArgumentError, match="device must be a str"):
        aotirt.Generator(d, device=0)
    with pytest.raises(aotirt.InvalidArgumentError, match="tpu"):
        aotirt.Generator(d, device="tpu")
