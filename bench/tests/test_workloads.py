# Checks the benchmark's own GPT-2 against transformers' GPT-2 with the same
# weights (prefill logits, and a decode step over the prefill's cache), and
# the decode step's byte count used for the physical limit.

import sys
from pathlib import Path

import pytest
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import workloads  # noqa: E402


def _hf_model(s):
    transformers = pytest.importorskip("transformers")
    config = transformers.GPT2Config(
        n_layer=s.n_layer,
        n_embd=s.n_embd,
        n_head=s.n_head,
        vocab_size=s.vocab,
        n_positions=s.n_positions,
        resid_pdrop=0.0,
        embd_pdrop=0.0,
        attn_pdrop=0.0,
    )
    config._attn_implementation = "eager"
    return transformers.GPT2LMHeadModel(config).eval()


def _copy_weights(ours: workloads.GPT2, hf) -> None:
    t = hf.transformer
    with torch.no_grad():
        ours.wte.weight.copy_(t.wte.weight)
        ours.wpe.weight.copy_(t.wpe.weight)
        ours.ln_f.weight.copy_(t.ln_f.weight)
        ours.ln_f.bias.copy_(t.ln_f.bias)
        for mine, theirs in zip(ours.blocks, t.h):
            for a, b in [("ln_1", theirs.ln_1), ("ln_2", theirs.ln_2)]:
                getattr(mine, a).weight.copy_(b.weight)
                getattr(mine, a).bias.copy_(b.bias)
            # transformers' Conv1D stores weights as [in, out].
            pairs = [
                (mine.c_attn, theirs.attn.c_attn),
                (mine.attn_proj, theirs.attn.c_proj),
                (mine.c_fc, theirs.mlp.c_fc),
                (mine.mlp_proj, theirs.mlp.c_proj),
            ]
            for lin, conv in pairs:
                lin.weight.copy_(conv.weight.t())
                lin.bias.copy_(conv.bias)


def _rel(a, b):
    return ((a.double() - b.double()).norm() / b.double().norm()).item()


@pytest.fixture(scope="module")
def models():
    s = workloads.GPT2_TINY
    torch.manual_seed(1)
    hf = _hf_model(s)
    for p in hf.parameters():  # random LayerNorms and biases too
        torch.nn.init.normal_(p, std=0.05)
    prefill = workloads.GPT2Prefill(s).eval()
    _copy_weights(prefill.model, hf)
    return s, hf, prefill


def test_prefill_matches_transformers(models):
    s, hf, prefill = models
    ids = torch.randint(0, s.vocab, (1, 40))
    with torch.no_grad():
        ours, kv = prefill(ids)
        theirs = hf(ids).logits
    assert kv.shape == (s.n_layer, 2, 1, s.n_head, 40, s.head_dim)
    assert _rel(ours, theirs) < 1e-5


def test_decode_matches_transformers(models):
    s, hf, prefill = models
    past = 40
    ids = torch.randint(0, s.vocab, (1, past + 1))
    decode = workloads.GPT2Decode(s, past).eval()
    decode.model.load_state_dict(prefill.model.state_dict())
    with torch.no_grad():
        _, kv = prefill(ids[:, :past])
        logits, new_kv = decode(ids[:, past:], kv)
        theirs = hf(ids).logits[:, past:]
        _, full_kv = prefill(ids)
    assert logits.shape == (1, 1, s.vocab)
    assert _rel(logits, theirs) < 1e-5
    # The step's own key/value equal what a prefill of all tokens computes.
    assert _rel(new_kv, full_kv[:, :, :, :, past:]) < 1e-5


def test_decode_detects_a_wrong_cache(models):
    # The comparison above can fail: a cache from other tokens changes logits.
    s, hf, prefill = models
    past = 40
    ids = torch.randint(0, s.vocab, (1, past + 1))
    decode = workloads.GPT2Decode(s, past).eval()
    decode.model.load_state_dict(prefill.model.state_dict())
    with torch.no_grad():
        _, kv = prefill(torch.randint(0, s.vocab, (1, past)))
        logits, _ = decode(ids[:, past:], kv)
        theirs = hf(ids).logits[:, past:]
    assert _rel(logits, theirs) > 1e-3


def test_decode_bytes_counts_weights_and_cache():
    module, inputs = workloads.build("gpt2_decode", quick=True)
    counted = workloads.decode_bytes_per_step(module, inputs)
    s = workloads.GPT2_TINY
    params = sum(p.numel() for p in module.parameters())
    # Everything but all but one row of the position table, in bf16.
    assert counted["weight_bytes"] == 2 * (params - (s.n_positions - 1) * s.n_embd)
    assert counted["kv_cache_bytes"] == 2 * s.n_layer * 2 * s.n_head * 64 * s.head_dim


@pytest.mark.parametrize("name", ["mlp", "gpt2_decode", "gpt2_prefill512"])
def test_outputs_are_not_trivial(name):
    # A workload whose output is all zeros would make the output check pass
    # for any runner.
    module, inputs = workloads.build(name, quick=True)
    with torch.no_grad():
        out = module(*inputs)
    first = out[0] if isinstance(out, tuple) else out
    assert first.float().abs().max() > 0
    assert first.float().std() > 0


def test_vit_output_is_not_trivial():
    pytest.importorskip("torchvision")
    module, inputs = workloads.build("vit_b16_b1", quick=False)
    with torch.no_grad():
        out = module(*inputs)
    assert out.float().std() > 0


def test_iteration_counts_stay_short_and_sufficient():
    # At least 100 timed runs for the sub-millisecond workloads, 30 for the
    # others; ResNet-50 batch 32 (the slowest, up to ~150 ms a run for a
    # system ten times slower than libtorch) times for ~10 s at most.
    for name, w in workloads.WORKLOADS.items():
        assert w.iters >= (100 if name in ("mlp", "gpt2_decode") else 30), name
        assert 1 <= w.warmup <= w.iters // 2, name
    b32 = workloads.WORKLOADS["resnet50_b32"]
    assert (b32.iters + b32.warmup) * 0.150 <= 10.0
