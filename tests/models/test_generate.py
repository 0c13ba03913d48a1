"""`aotirt generate` and aotirt.export_llm on CPU, and on CUDA on a GPU
machine: a small random-weight Llama-style model (grouped-query attention) from transformers, with a
SentencePiece tokenizer that the test trains, exported as a prefill and a
decode package sharing one KV cache; and int4 and int8 (torchao) exports of
another with a byte-level BPE tokenizer.json, against torchao's eager
quantized models. Greedy generation is compared token by
token with transformers' own generate on the same weights; sampling, stop
tokens, Ctrl-C and bad input are checked through the CLI. The export is
cached by torch version and source."""
from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import cache_lock
from cli_util import CLI, REPO, cpu_zoo_packages, requires_cli

MISSING = [m for m in ("transformers", "sentencepiece") if importlib.util.find_spec(m) is None]
pytestmark = [
    requires_cli,
    pytest.mark.skipif(bool(MISSING), reason=f"not installed: {', '.join(MISSING)} (scripts/setup.sh installs them)"),
]

MAX_CACHE_LEN = 1024
WORDS = ("the quick brown fox jumps over a lazy dog while seven bright stars shine above quiet green hills "
         "and rivers run to distant seas under morning light").split()


def _model():
    import torch
    import transformers

    torch.manual_seed(0)
    cfg = transformers.LlamaConfig(vocab_size=256, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                                   num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=2048,
                                   bos_token_id=1, eos_token_id=2, pad_token_id=0)
    return transformers.LlamaForCausalLM(cfg).eval()


def _train_tokenizer(prefix: Path) -> Path:
    import random

    import sentencepiece as spm

    rng = random.Random(0)
    lines = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(4, 12))) for _ in range(2000)]
    spm.SentencePieceTrainer.train(sentence_iterator=iter(lines), model_prefix=str(prefix), vocab_size=120,
                                   model_type="bpe", bos_id=1, eos_id=2, unk_id=0, pad_id=-1,
                                   minloglevel=2)
    return prefix.with_suffix(".model")


# The quantized exports: a float32 model whose every linear layer torchao
# quantizes (int4 in groups of 32, or int8), with a byte-level BPE
# tokenizer.json.
INT4_GROUP = 32
QUANT_VOCAB = 320


def _quant_model(kind: str, device: str = "cpu"):
    """float32, but bfloat16 for int4 on CUDA, where torchao's packing needs it."""
    import torch
    import transformers

    torch.manual_seed(1)
    cfg = transformers.LlamaConfig(vocab_size=QUANT_VOCAB, hidden_size=64, intermediate_size=128,
                                   num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                                   max_position_embeddings=2048, bos_token_id=0, eos_token_id=1, pad_token_id=1)
    model = transformers.LlamaForCausalLM(cfg).eval()
    # Weights of a trained model's scale, so int4 rounding is visible but
    # the logits stay apart.
    with torch.no_grad():
        for p in model.parameters():
            p.mul_(4.0)
    return model.to(torch.bfloat16) if kind == "int4" and device != "cpu" else model


def _quant_eager(kind: str, device: str = "cpu"):
    """torchao's own quantized model of the same weights, run eagerly."""
    from torchao.quantization import Int4WeightOnlyConfig, Int8WeightOnlyConfig, quantize_

    model = _quant_model(kind, device).to(device)
    if kind == "int8":
        config = Int8WeightOnlyConfig(set_inductor_config=False)
    elif device == "cpu":
        from torchao.prototype.quantization.int4 import PrototypeInt4WeightOnlyConfig

        config = PrototypeInt4WeightOnlyConfig(group_size=INT4_GROUP, set_inductor_config=False)
    else:
        config = Int4WeightOnlyConfig(group_size=INT4_GROUP, int4_packing_format="tile_packed_to_4d",
                                      set_inductor_config=False)
    quantize_(model, config)
    return model


def _bpe_tokenizer():
    """A byte-level BPE (Llama-3's split pattern) trained on WORDS, as a
    transformers tokenizer, so export_llm saves its tokenizer.json."""
    import random

    import transformers
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, trainers

    pattern = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|"
               r"\s*[\r\n]+|\s+(?!\S)|\s+")
    tok = Tokenizer(models.BPE(ignore_merges=True))
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(pattern), behavior="isolated"),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    tok.decoder = decoders.ByteLevel()
    rng = random.Random(0)
    lines = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(4, 12))) for _ in range(500)]
    trainer = trainers.BpeTrainer(vocab_size=300, special_tokens=["<|begin_of_text|>", "<|end_of_text|>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(lines, trainer)
    return transformers.PreTrainedTokenizerFast(tokenizer_object=tok)


REFERENCE_PROMPTS = ([1, 17, 42, 99, 5, 63], [1])
REFERENCE_TOKENS = 24


def _exported(device: str, variant: str = "plain") -> Path:
    """The prefill/decode pair for |device|, exported once per torch version and source."""
    import torch

    sources = [Path(__file__), REPO / "python" / "aotirt" / "_llm.py", REPO / "python" / "aotirt" / "_export.py",
               REPO / "python" / "aotirt" / "_fused.py"]
    key = hashlib.sha256(b"".join(p.read_bytes() for p in sources)).hexdigest()[:12]
    cache = Path(os.environ.get("AOTIRT_CACHE_DIR", REPO / ".cache")) / "llm" / f"torch-{torch.__version__}"
    name = "llama" if variant == "plain" else f"llama-{variant}"
    final = cache / (f"{name}-{key}" if device == "cpu" else f"{name}-{device}-{key}")
    with cache_lock.held(cache / f".{final.name}.lock"):
        if not (final / "llm.json").is_file():
            _export_pair(final, cache, device, variant)
    return final


def _export_pair(final: Path, cache: Path, device: str, variant: str) -> None:
    """Exports the pair into a staging folder, then renames it to |final|."""
    import aotirt

    staging = cache / f".partial-{os.getpid()}"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    try:
        if variant == "fused":
            aotirt.export_llm(_model(), staging / "out", max_cache_len=MAX_CACHE_LEN, device=device,
                              fuse_decode=True)
        elif variant in ("int4", "int8"):
            aotirt.export_llm(_quant_model(variant, device), staging / "out", max_cache_len=64, device=device,
                              tokenizer=_bpe_tokenizer(), quantize=variant, group_size=INT4_GROUP)
        elif variant == "int4-fused":
            aotirt.export_llm(_quant_model("int4", device), staging / "out", max_cache_len=64, device=device,
                              quantize="int4", group_size=INT4_GROUP, fuse_decode=True)
        else:
            tok = _train_tokenizer(staging / "sp")
            aotirt.export_llm(_model(), staging / "out", max_cache_len=MAX_CACHE_LEN, device=device,
                              tokenizer=tok)
            # transformers' greedy tokens beside the packages, for the
            # wheel's torch-free tests of aotirt.Generator
            # (tests/wheel/test_generator_api.py).
            greedy = [{"prompt": p, "tokens": _reference(p, REFERENCE_TOKENS, device=device)}
                      for p in REFERENCE_PROMPTS]
            # A second turn: the first prompt, 8 of its tokens and 3 more.
            turn = REFERENCE_PROMPTS[0] + greedy[0]["tokens"][:8] + [7, 9, 11]
            follow = {"prompt": turn, "tokens": _reference(turn, 16, device=device)}
            (staging / "out" / "reference.json").write_text(json.dumps({"greedy": greedy, "follow": follow}))
        shutil.rmtree(final, ignore_errors=True)
        (staging / "out").rename(final)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


@pytest.fixture(scope="module")
def llm_dir() -> Path:
    return _exported("cpu")


def _has_cuda() -> bool:
    try:
        import torch

        return torch.cuda.is_available()
    except ImportError:
        return False


requires_cuda = pytest.mark.skipif(not _has_cuda(), reason="no CUDA GPU here: the CUDA generation test runs on a "
                                                           "GPU machine (scripts/gpu-check.sh)")


def _reference(prompt: list, new_tokens: int, device: str = "cpu") -> list:
    """transformers' greedy generation with a static cache, no stop token."""
    import torch
    import transformers

    model = _model().to(device)
    config = transformers.GenerationConfig(do_sample=False, max_new_tokens=new_tokens, min_new_tokens=new_tokens,
                                           eos_token_id=None, pad_token_id=0, cache_implementation="static")
    with torch.no_grad():
        out = model.generate(torch.tensor([prompt], device=device), generation_config=config)
    return out[0, len(prompt):].tolist()


def _generate(llm_dir, *args, check=True, timeout=300):
    proc = subprocess.run([str(CLI), "generate", str(llm_dir), "--json", *args], capture_output=True, text=True,
                          timeout=timeout)
    if check:
        assert proc.returncode == 0, proc.stderr
        return json.loads(proc.stdout.strip().splitlines()[-1])
    return proc


@pytest.mark.parametrize("prompt", [[1, 17, 42, 99, 5, 63], [1]], ids=["prompt6", "prompt1"])
def test_greedy_matches_transformers(llm_dir, prompt):
    got = _generate(llm_dir, "--prompt-ids", ",".join(map(str, prompt)), "-n", "24", "--ignore-eos")
    assert got["tokens"] == _reference(prompt, 24)
    assert got["stop_reason"] == "max_new_tokens"
    assert got["generated_tokens"] == 24 and got["prompt_tokens"] == len(prompt)
    assert got["decode_tokens_per_s"] > 0 and got["prefill_tokens_per_s"] > 0
    assert got["graph_replays"] == 0  # CPU: no graphs


FUSED_SHIMS = {"aotirt_rms_norm_linear", "aotirt_linear_add", "aotirt_rms_norm_linear_silu_mul"}


def test_fused_decode_matches_transformers():
    """export_llm(fuse_decode=True): the decode package calls aotirt's fused
    shims (two norms, the residual adds and SiLU-multiply folded into the
    four products of a layer), the prefill package none; greedy tokens equal
    transformers', and the pair shares its weights."""
    import aotirt

    pair = _exported("cpu", "fused")
    fused = {f"aoti_torch_cpu_{n}" for n in FUSED_SHIMS}
    assert fused <= set(aotirt.imported_shims(pair / "decode.pt2"))
    assert not fused & set(aotirt.imported_shims(pair / "prefill.pt2"))
    for prompt in REFERENCE_PROMPTS:
        got = _generate(pair, "--prompt-ids", ",".join(map(str, prompt)), "-n", "24", "--ignore-eos")
        assert got["tokens"] == _reference(prompt, 24)
    # The fused layers keep their weights' names, so the pair holds one copy
    # of them, as the plain pair does.
    plain = _generate(_exported("cpu"), "--prompt-ids", "1,17,42", "-n", "2", "--ignore-eos")
    assert got["weight_bytes"] < got["unshared_weight_bytes"], got
    assert (got["weight_bytes"], got["unshared_weight_bytes"]) == (plain["weight_bytes"],
                                                                   plain["unshared_weight_bytes"])


def test_warm_up_runs_repeat_the_same_tokens(llm_dir):
    """--warmup generates first unprinted; the cache is zeroed for each call."""
    ids = "1,17,42,99,5,63"
    cold = _generate(llm_dir, "--prompt-ids", ids, "-n", "12", "--ignore-eos")
    warm = _generate(llm_dir, "--prompt-ids", ids, "-n", "12", "--ignore-eos", "--warmup", "2")
    assert warm["tokens"] == cold["tokens"] and warm["generated_tokens"] == 12


@requires_cuda
def test_greedy_on_cuda_matches_transformers():
    """The pair exported for CUDA, run on the GPU, against transformers on the GPU."""
    prompt = [1, 17, 42, 99, 5, 63]
    ids = ",".join(map(str, prompt))
    got = _generate(_exported("cuda"), "--prompt-ids", ids, "-n", "24", "--ignore-eos")
    assert got["tokens"] == _reference(prompt, 24, device="cuda")
    assert got["generated_tokens"] == 24 and got["stop_reason"] == "max_new_tokens"
    # Decode steps replay a CUDA graph that updates the cache in place: the
    # first decode step runs without it, the second records and replays it,
    # and so do the other 21.
    assert got["graph_replays"] == 22, got
    # A second call on the same Generator replays the graph recorded by the
    # first for every decode step, from a cache zeroed again.
    warm = _generate(_exported("cuda"), "--prompt-ids", ids, "-n", "24", "--ignore-eos", "--warmup", "1")
    assert warm["tokens"] == got["tokens"] and warm["graph_replays"] == 23, warm
    plain = _generate(_exported("cuda"), "--prompt-ids", ids, "-n", "24", "--ignore-eos", "--no-cuda-graph")
    assert plain["tokens"] == got["tokens"] and plain["graph_replays"] == 0, plain


@requires_cuda
def test_fused_decode_on_cuda_matches_transformers():
    """export_llm(fuse_decode=True) for CUDA: aotirt's fused shims on the
    GPU (a float32 model: the general path; tests/ops times and checks the
    one-row bfloat16 kernel), the same greedy tokens as transformers."""
    prompt = [1, 17, 42, 99, 5, 63]
    got = _generate(_exported("cuda", "fused"), "--prompt-ids", ",".join(map(str, prompt)), "-n", "24",
                    "--ignore-eos")
    assert got["tokens"] == _reference(prompt, 24, device="cuda")
    assert got["graph_replays"] == 22, got


def _greedy_recomputed(model, prompt: list, new_tokens: int, device: str) -> list:
    """Greedy tokens of |model| run eagerly on the whole sequence at each
    step. The quantized models' reference: transformers' cached generate of
    torchao's CPU int4 model drifts from its own full recomputation within a
    few tokens (its one-row products round otherwise), so the cache-free run
    is the model's answer."""
    import torch

    seq = list(prompt)
    with torch.no_grad():
        for _ in range(new_tokens):
            logits = model(torch.tensor([seq], device=device)).logits[0, -1]
            seq.append(int(torch.argmax(logits.float())))
    return seq[len(prompt):]


def _package_calls(pt2: Path, symbol: str) -> bool:
    import zipfile

    with zipfile.ZipFile(pt2) as z:
        return any(symbol.encode() in z.read(n) for n in z.namelist() if n.endswith((".so", ".cpp")))


@pytest.mark.skipif(importlib.util.find_spec("torchao") is None or importlib.util.find_spec("tokenizers") is None,
                    reason="not installed: torchao, tokenizers (scripts/setup.sh installs them)")
@pytest.mark.parametrize("kind", ["int4", "int8"])
@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=requires_cuda)])
def test_quantized_export_with_a_tokenizer_json_matches_torchao(device, kind):
    """export_llm(quantize=...) of a model with a transformers BPE
    tokenizer: the int4 packages call the int4 kernel, the text prompt goes
    through tokenizer.json, and greedy tokens equal torchao's eager
    quantized model's (recomputed over the whole sequence at each step)."""
    out = _exported(device, kind)
    cfg = json.loads((out / "llm.json").read_text())
    assert cfg["tokenizer"] == "tokenizer.json"
    assert cfg["quantize"] == (f"int4-g{INT4_GROUP}" if kind == "int4" else "int8")
    if kind == "int4":
        symbol = f"aoti_torch_{device}__weight_int4pack_mm" + ("_cpu_tensor" if device == "cpu" else "")
        for pkg in ("prefill.pt2", "decode.pt2"):
            assert _package_calls(out / pkg, symbol), pkg

    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(out / "tokenizer.json"))
    text = "the quick brown fox jumps"
    ids = [0] + tok.encode(text, add_special_tokens=False).ids
    got = _generate(out, "--prompt", text, "-n", "16", "--ignore-eos")
    assert got["prompt_ids"] == ids
    eager = _quant_eager(kind, device)
    _check_greedy(eager, ids, got["tokens"], device, bf16=kind == "int4" and device != "cpu")
    assert got["text"] == tok.decode([t for t in got["tokens"] if t < tok.get_vocab_size()])
    # A one-token prompt goes through the decode package alone.
    got = _generate(out, "--prompt-ids", "0", "-n", "8", "--ignore-eos")
    _check_greedy(eager, [0], got["tokens"], device, bf16=kind == "int4" and device != "cpu")


@pytest.mark.skipif(importlib.util.find_spec("torchao") is None or importlib.util.find_spec("tokenizers") is None,
                    reason="not installed: torchao, tokenizers (scripts/setup.sh installs them)")
@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=requires_cuda)])
def test_fused_int4_decode_matches_torchao(device):
    """export_llm(quantize="int4", fuse_decode=True): the decode package's
    MLPs make SiLU-multiply in their gate/up product
    (aotirt_int4pack_mm_silu_mul), the prefill package's do not; greedy
    tokens equal torchao's eager int4 model's, and the pair holds one copy
    of the weights, as the plain int4 pair does."""
    import aotirt

    pair = _exported(device, "int4-fused")
    fused = f"aoti_torch_{device}_aotirt_int4pack_mm_silu_mul"
    assert fused in aotirt.imported_shims(pair / "decode.pt2")
    assert fused not in aotirt.imported_shims(pair / "prefill.pt2")
    eager = _quant_eager("int4", device)
    bf16 = device != "cpu"
    for prompt in ([0, 17, 42, 99, 5, 63], [0]):
        got = _generate(pair, "--prompt-ids", ",".join(map(str, prompt)), "-n", "16", "--ignore-eos")
        _check_greedy(eager, prompt, got["tokens"], device, bf16=bf16)
    plain = _generate(_exported(device, "int4"), "--prompt-ids", "0,17,42", "-n", "2", "--ignore-eos")
    assert got["weight_bytes"] < got["unshared_weight_bytes"], got
    assert got["weight_bytes"] == plain["weight_bytes"], (got, plain)


def test_a_decode_package_with_more_weights_than_the_prefill_is_refused(tmp_path):
    """The CPU int4 fused pair's decode package carries a few bytes less
    than its prefill (its fused op takes the group size as a number, not a
    tensor constant); swapped, the decode side would need weights the
    prefill lacks."""
    if importlib.util.find_spec("torchao") is None:
        pytest.skip("not installed: torchao (scripts/setup.sh installs it)")
    pair = _exported("cpu", "int4-fused")
    swapped = tmp_path / "swapped"
    shutil.copytree(pair, swapped)
    shutil.copyfile(pair / "prefill.pt2", swapped / "decode.pt2")
    shutil.copyfile(pair / "decode.pt2", swapped / "prefill.pt2")
    _fails(_generate(swapped, "--prompt-ids", "0,1", check=False), "INCOMPATIBLE", "more than the prefill package's",
           "not one model's pair")


def _check_greedy(model, prompt: list, tokens: list, device: str, bf16: bool):
    """float32: |tokens| are |model|'s greedy tokens. bfloat16 (int4 on
    CUDA) rounds otherwise in compiled kernels than in eager ones, so a near
    tie may go either way: each token, fed the same sequence, must be within
    a few bfloat16 steps of the model's largest logit."""
    import torch

    if not bf16:
        assert tokens == _greedy_recomputed(model, prompt, len(tokens), device)
        return
    seq = prompt + tokens
    with torch.no_grad():
        logits = model(torch.tensor([seq], device=device)).logits[0, len(prompt) - 1:-1].float()
    chosen = logits[torch.arange(len(tokens), device=device), torch.tensor(tokens, device=device)]
    behind = (logits.max(dim=-1).values - chosen).tolist()
    assert max(behind) <= 0.15, behind


def test_text_prompt_goes_through_the_tokenizer(llm_dir):
    import sentencepiece as spm

    sp = spm.SentencePieceProcessor(model_file=str(llm_dir / "tokenizer.model"))
    text = "the quick brown fox"
    ids = [1] + sp.encode(text)
    got = _generate(llm_dir, "--prompt", text, "-n", "8", "--ignore-eos")
    assert got["prompt_ids"] == ids
    assert got["tokens"] == _reference(ids, 8)
    assert got["text"] == sp.decode([t for t in got["tokens"] if t < sp.get_piece_size()])


def test_tokenize_reads_the_sentencepiece_model(llm_dir):
    import sentencepiece as spm

    sp = spm.SentencePieceProcessor(model_file=str(llm_dir / "tokenizer.model"))
    items = ["the quick brown fox", "", "seven  stars", [5, 17, 42]]
    proc = subprocess.run([str(CLI), "tokenize", str(llm_dir / "tokenizer.model"), "--batch"],
                          input=json.dumps(items), capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout)
    for item, g in zip(items, got):
        ids = sp.encode(item) if isinstance(item, str) else item
        assert g["ids"] == ids and g["text"] == sp.decode(ids), item


def test_streamed_text_is_the_decoded_tokens(llm_dir):
    proc = subprocess.run([str(CLI), "generate", str(llm_dir), "--prompt", "seven stars", "-n", "6", "--ignore-eos"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    got = _generate(llm_dir, "--prompt", "seven stars", "-n", "6", "--ignore-eos")
    assert proc.stdout.rstrip("\n") == got["text"]
    assert "6 generated (max_new_tokens)" in proc.stderr and "decode" in proc.stderr


def _chat(llm_dir, lines, *args, check=True):
    proc = subprocess.run([str(CLI), "generate", str(llm_dir), "--chat", "--json", *args],
                          input="".join(line + "\n" for line in lines), capture_output=True, text=True, timeout=300)
    if check:
        assert proc.returncode == 0, proc.stderr
        return [json.loads(line) for line in proc.stdout.strip().splitlines()]
    return proc


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=requires_cuda)])
def test_chat_turns_reuse_the_cache_and_match_transformers(device):
    """--chat: each line continues the conversation; a turn prefills only its
    line (the cache keeps the rest) and replies with transformers' greedy
    tokens for the whole conversation."""
    import sentencepiece as spm

    out = _exported(device)
    sp = spm.SentencePieceProcessor(model_file=str(out / "tokenizer.model"))
    lines = ["the quick brown fox", "seven stars shine", "and rivers run"]
    turns = _chat(out, ["", *lines], "-n", "8", "--ignore-eos")  # an empty line is skipped
    assert len(turns) == 3
    conversation = []
    for i, (line, turn) in enumerate(zip(lines, turns)):
        added = ([1] if i == 0 else []) + sp.encode(line)
        reused = max(len(conversation) - 1, 0)  # all but the last reply token
        conversation += added
        assert turn["prompt_ids"] == conversation
        assert turn["tokens"] == _reference(conversation, 8, device=device), i
        assert turn["reused_tokens"] == reused and turn["prompt_tokens"] == len(conversation)
        assert turn["text"] == sp.decode([t for t in turn["tokens"] if t < sp.get_piece_size()])
        conversation += turn["tokens"]
    # A --prompt is the first turn; the lines follow it.
    first = _chat(out, ["seven stars shine"], "--prompt", "the quick brown fox", "-n", "8", "--ignore-eos")
    assert [t["tokens"] for t in first] == [t["tokens"] for t in turns[:2]]


def test_chat_errors_are_named(llm_dir, tmp_path):
    # A conversation past the cache names its turn.
    long_line = " ".join(["seven stars"] * 200)
    proc = _chat(llm_dir, [long_line] * 6, "-n", "4", "--ignore-eos", check=False)
    _fails(proc, "INVALID_ARGUMENT", "but the cache holds 1024", "turn ")
    copy = tmp_path / "no-tokenizer"
    shutil.copytree(llm_dir, copy)
    (copy / "tokenizer.model").unlink()
    cfg = json.loads((copy / "llm.json").read_text())
    cfg.pop("tokenizer", None)
    (copy / "llm.json").write_text(json.dumps(cfg))
    _fails(_chat(copy, ["hello"], check=False), "NOT_FOUND", "--chat reads text and needs a tokenizer")
    proc = subprocess.run([str(CLI), "generate", str(llm_dir), "--chat", "--warmup", "2"], input="", text=True,
                          capture_output=True, timeout=60)
    assert proc.returncode != 0 and "--warmup excludes --chat" in proc.stderr


def test_sampling_is_seeded_and_top_k_one_is_greedy(llm_dir):
    base = ["--prompt-ids", "1,17,42", "-n", "16", "--ignore-eos", "--temperature", "1.5"]
    a = _generate(llm_dir, *base, "--seed", "5")["tokens"]
    assert a == _generate(llm_dir, *base, "--seed", "5")["tokens"]
    assert a != _generate(llm_dir, *base, "--seed", "6")["tokens"]
    greedy = _generate(llm_dir, "--prompt-ids", "1,17,42", "-n", "16", "--ignore-eos")["tokens"]
    assert _generate(llm_dir, *base, "--top-k", "1")["tokens"] == greedy
    assert _generate(llm_dir, *base, "--top-p", "0.000001")["tokens"] == greedy


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=requires_cuda)])
def test_a_stop_token_ends_generation_and_is_returned(device):
    """On CUDA the decode step for a token is queued before the token is read
    back, so a stop token leaves one step queued for nothing: the tokens are
    still those before it, and a second generation (--warmup 1 runs two)
    repeats them."""
    out = _exported(device)
    greedy = _generate(out, "--prompt-ids", "1,17,42", "-n", "8", "--ignore-eos")["tokens"]
    got = _generate(out, "--prompt-ids", "1,17,42", "-n", "8", "--ignore-eos", "--stop", str(greedy[2]))
    first = greedy.index(greedy[2])
    assert got["tokens"] == greedy[: first + 1]
    assert got["stop_reason"] == "stop_token"
    again = _generate(out, "--prompt-ids", "1,17,42", "-n", "8", "--ignore-eos", "--stop", str(greedy[2]),
                      "--warmup", "1")
    assert again["tokens"] == got["tokens"] and again["stop_reason"] == "stop_token"


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=requires_cuda)])
def test_generation_stops_when_the_cache_is_full(device):
    prompt = [7] * (MAX_CACHE_LEN - 3)
    got = _generate(_exported(device), "--prompt-ids", ",".join(map(str, prompt)), "-n", "50", "--ignore-eos")
    assert got["stop_reason"] == "cache_full" and got["generated_tokens"] == 4
    if device == "cuda":
        assert got["tokens"] == _reference(prompt, 4, device="cuda")


def test_ctrl_c_stops_after_the_current_token(llm_dir):
    # The interrupt goes out as soon as the first token is printed; on a busy
    # machine the whole generation (about a thousand tokens) may end first,
    # so a run that finished before the signal arrived is tried again.
    for _ in range(3):
        # SIGINT at its default in the child: a shell's background job (CI)
        # starts with it ignored, and the CLI leaves an ignored SIGINT alone.
        proc = subprocess.Popen([str(CLI), "generate", str(llm_dir), "--prompt-ids", "1,5", "-n", "100000",
                                 "--ignore-eos", "--print-ids"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        try:
            assert proc.stdout.read(1), "no token was printed"
            proc.send_signal(signal.SIGINT)
            out, err = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
        err = err.decode()
        if proc.returncode == 0 and "(cache_full)" in err:
            continue
        assert proc.returncode == 130, err
        assert "(cancelled)" in err and "generated" in err
        return
    pytest.fail("generation always ended before the interrupt arrived")


# ---- bad input ------------------------------------------------------------------


def _fails(proc, *needles):
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr and "Sanitizer" not in proc.stderr
    for n in needles:
        assert n in proc.stderr, proc.stderr


def test_a_prompt_longer_than_the_cache_is_refused(llm_dir):
    proc = _generate(llm_dir, "--prompt-ids", ",".join(["7"] * (MAX_CACHE_LEN + 1)), check=False)
    _fails(proc, "INVALID_ARGUMENT", f"the prompt has {MAX_CACHE_LEN + 1} tokens", f"holds {MAX_CACHE_LEN}")


def test_an_unknown_token_id_is_refused(llm_dir):
    _fails(_generate(llm_dir, "--prompt-ids", "1,256", check=False), "prompt token 1 is 256",
           "vocabulary of 256")
    _fails(_generate(llm_dir, "--prompt-ids", "1,-3", check=False), "prompt token 1 is -3")


def test_a_missing_tokenizer_file_is_named(llm_dir, tmp_path):
    _fails(_generate(llm_dir, "--prompt", "hello", "--tokenizer", str(tmp_path / "none.model"), check=False),
           "NOT_FOUND", "none.model")
    bad = tmp_path / "bad.model"
    bad.write_bytes(b"not a model")
    _fails(_generate(llm_dir, "--prompt", "hello", "--tokenizer", str(bad), check=False), "bad.model",
           "not a SentencePiece model")
    copy = tmp_path / "copy"
    shutil.copytree(llm_dir, copy)
    (copy / "tokenizer.model").unlink()
    _fails(_generate(copy, "--prompt", "hello", check=False), "tokenizer", "cannot be opened")


def test_mismatched_packages_are_refused(llm_dir, tmp_path):
    mlp = cpu_zoo_packages(("mlp",)).get("mlp")
    if mlp is None:
        pytest.fail("the zoo's mlp package did not export")
    copy = tmp_path / "mixed"
    shutil.copytree(llm_dir, copy)
    shutil.copyfile(mlp["pt2"], copy / "decode.pt2")
    _fails(_generate(copy, "--prompt-ids", "1,2", check=False), "decode package", "not from one export")
    # llm.json that describes another configuration than the packages.
    copy2 = tmp_path / "layers"
    shutil.copytree(llm_dir, copy2)
    cfg = json.loads((copy2 / "llm.json").read_text())
    cfg["num_layers"] = 3
    (copy2 / "llm.json").write_text(json.dumps(cfg))
    _fails(_generate(copy2, "--prompt-ids", "1,2", check=False), "prefill package", "not from one export")
    cfg["num_layers"] = 2
    cfg["cache_shape"][3] = 8
    (copy2 / "llm.json").write_text(json.dumps(cfg))
    _fails(_generate(copy2, "--prompt-ids", "1,2", check=False), "another shape than llm.json")
    # Packages of another export (other weights, say) carry another id.
    cfg["cache_shape"][3] = json.loads((llm_dir / "llm.json").read_text())["cache_shape"][3]
    cfg["export_id"] = "0" * 32
    (copy2 / "llm.json").write_text(json.dumps(cfg))
    _fails(_generate(copy2, "--prompt-ids", "1,2", check=False), "prefill package was not made by the export",
           "0" * 32)


@pytest.mark.parametrize("edit,needle", [
    (lambda c: c.pop("decode"), 'no "decode"'),
    (lambda c: c.update(format_version=99), "format_version 99"),
    (lambda c: c.update(prefill="../prefill.pt2"), "is not a file name in the model directory"),
    (lambda c: c.update(stop_token_ids=[9999]), "stop token 9999"),
    (lambda c: c.update(cache_dtype="int64"), "not a floating-point dtype"),
    (lambda c: c.update(max_cache_len=7), "does not match cache_shape"),
], ids=["no-decode", "version", "escape", "stop", "dtype", "cache-len"])
def test_a_broken_llm_json_is_named(llm_dir, tmp_path, edit, needle):
    copy = tmp_path / "d"
    shutil.copytree(llm_dir, copy)
    cfg = json.loads((copy / "llm.json").read_text())
    edit(cfg)
    (copy / "llm.json").write_text(json.dumps(cfg))
    _fails(_generate(copy, "--prompt-ids", "1,2", check=False), "llm.json", needle)


def test_a_directory_without_llm_json_is_named(tmp_path):
    proc = subprocess.run([str(CLI), "generate", str(tmp_path), "--prompt-ids", "1"], capture_output=True, text=True)
    _fails(proc, "NOT_FOUND", "llm.json", "aotirt.export_llm")
    (tmp_path / "llm.json").write_text("{not json")
    proc = subprocess.run([str(CLI), "generate", str(tmp_path), "--prompt-ids", "1"], capture_output=True, text=True)
    _fails(proc, "not a JSON object")


def test_usage_errors_exit_2(llm_dir):
    for args in (["--prompt-ids", "1", "--temperature", "-1"], ["--prompt-ids", "1", "--top-p", "1.5"],
                 ["--prompt", "a", "--prompt-ids", "1"], ["--prompt-ids", "1", "--warmup", "-1"]):
        proc = subprocess.run([str(CLI), "generate", str(llm_dir), *args], capture_output=True, text=True)
        assert proc.returncode == 2, (args, proc.stderr)
    proc = subprocess.run([str(CLI), "generate", str(llm_dir)], capture_output=True, text=True)
    _fails(proc, "give a prompt")


def test_export_llm_refuses_bad_arguments(tmp_path):
    import aotirt

    with pytest.raises(aotirt.ExportError, match="max_cache_len"):
        aotirt.export_llm(_model(), tmp_path, max_cache_len=1)
    with pytest.raises(aotirt.ExportError, match="tokenizer file"):
        aotirt.export_llm(_model(), tmp_path, tokenizer=tmp_path / "missing.model")
    with pytest.raises(aotirt.ExportError, match="neither tokenizer.json nor tokenizer.model"):
        aotirt.export_llm(_model(), tmp_path, tokenizer=tmp_path)
    with pytest.raises(aotirt.ExportError, match="not int"):
        aotirt.export_llm(_model(), tmp_path, tokenizer=3)
    with pytest.raises(aotirt.ExportError, match="quantize must be one of"):
        aotirt.export_llm(_model(), tmp_path, quantize="int3")
    with pytest.raises(aotirt.ExportError, match="group_size must be one of"):
        aotirt.export_llm(_model(), tmp_path, quantize="int4", group_size=48)
    with pytest.raises(aotirt.ExportError, match="fuse_decode"):
        aotirt.export_llm(_model(), tmp_path, quantize="int8", fuse_decode=True)


def _sdpa_calls(wrapper, example, packed: bool) -> list:
    """Every attention call's node in the exported graph."""
    import torch
    from aotirt._llm import _packed_decode_attention

    with torch.no_grad(), (_packed_decode_attention() if packed else contextlib.nullcontext()):
        ep = torch.export.export(wrapper, example)
    return [n for n in ep.graph.nodes if n.op == "call_function" and "scaled_dot_product" in str(n.target)]


def _sdpa_query_heads(wrapper, example, packed: bool) -> list:
    """The query heads of every attention call in the exported graph."""
    return [n.args[0].meta["val"].shape[1] for n in _sdpa_calls(wrapper, example, packed)]


def _sdpa_mask(node):
    return node.args[3] if len(node.args) > 3 else node.kwargs.get("attn_mask")


def test_decode_attention_runs_on_the_key_value_heads():
    """export_llm's decode step views the query heads of each key/value head
    as rows of that head instead of expanding the caches to every query
    head, gives transformers' logits, and leaves transformers as it was."""
    import torch
    from aotirt._llm import _CachedDecoder, _cache_shape, _packed_decode_attention
    from transformers.modeling_utils import ALL_ATTENTION_FUNCTIONS

    stock = ALL_ATTENTION_FUNCTIONS["sdpa"]
    model = _model()
    layers, shape = _cache_shape(model.config, 16)
    wrapper = _CachedDecoder(model, 16).eval()
    gen = torch.Generator().manual_seed(3)
    caches = [torch.randn(shape, generator=gen) for _ in range(2 * layers)]
    example = (torch.tensor([[17]]), torch.tensor([5]), [c.clone() for c in caches])

    assert _sdpa_query_heads(wrapper, example, packed=False) == [4] * layers
    assert _sdpa_query_heads(wrapper, example, packed=True) == [2] * layers
    # A prefill (several query rows) keeps transformers' own path.
    prefill = (torch.tensor([[17, 18, 19]]), torch.arange(3), [c.clone() for c in caches])
    assert _sdpa_query_heads(wrapper, prefill, packed=True) == [4] * layers
    # Every layer of the packed step takes one additive mask, made once.
    stock_masks = {_sdpa_mask(n) for n in _sdpa_calls(wrapper, example, packed=False)}
    assert [m.meta["val"].dtype for m in stock_masks] == [torch.bool]
    masks = {_sdpa_mask(n) for n in _sdpa_calls(wrapper, example, packed=True)}
    assert len(masks) == 1 and next(iter(masks)).meta["val"].dtype == torch.float32
    # The prefill's too (transformers' own path otherwise).
    masks = {_sdpa_mask(n) for n in _sdpa_calls(wrapper, prefill, packed=True)}
    assert len(masks) == 1 and next(iter(masks)).meta["val"].dtype == torch.float32

    def step(packed: bool):
        c = [t.clone() for t in caches]
        with torch.no_grad(), (_packed_decode_attention() if packed else contextlib.nullcontext()):
            logits, token = wrapper(torch.tensor([[17]]), torch.tensor([5]), c)
        return logits, token, c

    want, want_token, want_caches = step(False)
    got, got_token, got_caches = step(True)
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)
    assert torch.equal(got_token, want_token)
    for a, b in zip(got_caches, want_caches):
        assert torch.equal(a, b)
    assert ALL_ATTENTION_FUNCTIONS["sdpa"] is stock


def test_stacked_projections_compute_what_the_layers_did():
    """export_llm stacks q/k/v and gate/up into one linear layer each; the
    model gives the same logits, a projection called on its own input still
    gets its own product, no activation is held after a call, and the
    exported decode step multiplies four weights a layer instead of seven."""
    import copy

    import torch
    from aotirt._llm import _CachedDecoder, _cache_shape, stack_projections

    model = _model()
    ref = copy.deepcopy(model)
    assert stack_projections(model) == 2 * model.config.num_hidden_layers
    assert stack_projections(model) == 0  # nothing left to stack
    names = {n for n, _ in model.named_parameters()}
    assert "model.layers.0.self_attn.aotirt_q_k_v_proj.weight" in names
    assert "model.layers.0.mlp.aotirt_gate_up_proj.weight" in names
    assert not any(n.endswith((".q_proj.weight", ".k_proj.weight", ".up_proj.weight")) for n in names)

    ids = torch.tensor([[1, 17, 42, 99, 5]])
    with torch.no_grad():
        torch.testing.assert_close(model(ids).logits, ref(ids).logits, rtol=1e-5, atol=1e-5)
        attn, ref_attn = model.model.layers[1].self_attn, ref.model.layers[1].self_attn
        x, y = torch.randn(1, 3, 64), torch.randn(1, 3, 64)
        # Out of order, a projection twice, another input in between.
        torch.testing.assert_close(attn.v_proj(x), ref_attn.v_proj(x), rtol=1e-6, atol=1e-6)
        torch.testing.assert_close(attn.k_proj(y), ref_attn.k_proj(y), rtol=1e-6, atol=1e-6)
        torch.testing.assert_close(attn.k_proj(x), ref_attn.k_proj(x), rtol=1e-6, atol=1e-6)
        x.mul_(2)  # changed in place: computed again
        torch.testing.assert_close(attn.q_proj(x), ref_attn.q_proj(x), rtol=1e-6, atol=1e-6)
        model(ids)
    for layer in model.model.layers:
        assert layer.self_attn.q_proj._stack._output is None
        assert layer.mlp.up_proj._stack._output is None

    layers, shape = _cache_shape(model.config, 16)
    example = (torch.tensor([[17]]), torch.tensor([5]), [torch.zeros(shape) for _ in range(2 * layers)])

    def linears(m) -> int:
        with torch.no_grad():
            ep = torch.export.export(_CachedDecoder(m, 16).eval(), example)
        return sum(1 for n in ep.graph.nodes if n.op == "call_function" and "linear" in str(n.target))

    # Per layer 4 (q/k/v, o, gate/up, down) against 7, and the output layer.
    assert linears(model) == 4 * layers + 1
    assert linears(ref) == 7 * layers + 1


def test_stacked_projections_keep_biases():
    """Qwen2's query, key and value projections carry biases: they are
    stacked too, and the logits stay the same."""
    import copy

    import torch
    import transformers
    from aotirt._llm import stack_projections

    torch.manual_seed(2)
    cfg = transformers.Qwen2Config(vocab_size=96, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                                   num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256)
    model = transformers.Qwen2ForCausalLM(cfg).eval()
    with torch.no_grad():
        for layer in model.model.layers:
            layer.self_attn.k_proj.bias.normal_()
    ref = copy.deepcopy(model)
    assert stack_projections(model) == 4
    assert model.model.layers[0].self_attn.aotirt_q_k_v_proj.bias.shape == (64 + 2 * 32,)
    ids = torch.tensor([[3, 17, 42, 9]])
    with torch.no_grad():
        torch.testing.assert_close(model(ids).logits, ref(ids).logits, rtol=1e-5, atol=1e-5)


def test_projections_that_differ_are_not_stacked():
    import torch
    from aotirt._llm import stack_projections

    class Quant(torch.nn.Linear):
        pass

    def block(k_bias=True, k_in=8, k_type=torch.nn.Linear, v_dtype=torch.float32):
        m = torch.nn.Module()
        m.q_proj, m.k_proj = torch.nn.Linear(8, 8), k_type(k_in, 4, bias=k_bias)
        m.v_proj = torch.nn.Linear(8, 4, dtype=v_dtype)
        return m

    assert stack_projections(block()) == 1
    assert stack_projections(block(k_bias=False)) == 0
    assert stack_projections(block(k_in=6)) == 0
    assert stack_projections(block(k_type=Quant)) == 0
    assert stack_projections(block(v_dtype=torch.float64)) == 0
    partial = torch.nn.Module()
    partial.gate_proj = torch.nn.Linear(8, 8)  # no up_proj beside it
    assert stack_projections(partial) == 0


def test_export_llm_leaves_the_model_as_it_was(tmp_path):
    """Within the export the projections are stacked; after it (here, a
    failed one) the model has the same layer objects and parameter names,
    the same values, and each weight in storage of its own."""
    import torch
    import aotirt
    from aotirt._llm import _projections_stacked

    model = _model()
    layer = model.model.layers[0]
    objects = (layer.self_attn.q_proj, layer.self_attn.k_proj, layer.mlp.up_proj)
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    ids = torch.tensor([[1, 17, 42]])
    with torch.no_grad():
        want = model(ids).logits
        with _projections_stacked(model, restore=True) as groups:
            assert groups == 4
            assert "model.layers.0.self_attn.aotirt_q_k_v_proj.weight" in dict(model.named_parameters())
            torch.testing.assert_close(model(ids).logits, want, rtol=1e-5, atol=1e-5)

    def check():
        after = dict(model.named_parameters())
        assert after.keys() == before.keys()
        for n, p in after.items():
            assert torch.equal(p, before[n]), n
        assert (layer.self_attn.q_proj, layer.self_attn.k_proj, layer.mlp.up_proj) == objects
        pointers = {p.untyped_storage().data_ptr() for p in after.values()}
        assert len(pointers) == len(after)
        with torch.no_grad():
            assert torch.equal(model(ids).logits, want)

    check()
    with pytest.raises(Exception, match="no_such_option"):
        aotirt.export_llm(model, tmp_path, max_cache_len=8, inductor_configs={"no_such_option": 1},
                          check_shims=False)
    check()
