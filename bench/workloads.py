# The benchmark's workloads: each builds a module with seeded random weights
# and its example inputs, so every process (the exporter, the eager and
# torch.compile workers) builds the same model and the same inputs without
# any download. GPT-2 is a compact implementation of GPT-2 small written for
# static shapes (a decode step over a fixed KV cache exports as one graph);
# tests/test_workloads.py checks it against transformers' GPT-2. WORKLOADS
# holds both sets: the GPU one (GPU_WORKLOADS) and the CPU one, sized for a
# two-core machine (CPU_WORKLOADS).

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

import torch
import torch.nn.functional as F
from torch import nn

SEED = 0


@dataclass(frozen=True)
class GPT2Shape:
    n_layer: int = 12
    n_embd: int = 768
    n_head: int = 12
    vocab: int = 50257
    n_positions: int = 1024
    eps: float = 1e-5

    @property
    def head_dim(self) -> int:
        return self.n_embd // self.n_head


GPT2_SMALL = GPT2Shape()
# --quick: two layers of a narrow model, enough to prove the pipeline on a CPU.
GPT2_TINY = GPT2Shape(n_layer=2, n_embd=128, n_head=4, vocab=1024, n_positions=256)


class GPT2Block(nn.Module):
    def __init__(self, s: GPT2Shape):
        super().__init__()
        self.s = s
        self.ln_1 = nn.LayerNorm(s.n_embd, eps=s.eps)
        self.c_attn = nn.Linear(s.n_embd, 3 * s.n_embd)
        self.attn_proj = nn.Linear(s.n_embd, s.n_embd)
        self.ln_2 = nn.LayerNorm(s.n_embd, eps=s.eps)
        self.c_fc = nn.Linear(s.n_embd, 4 * s.n_embd)
        self.mlp_proj = nn.Linear(4 * s.n_embd, s.n_embd)

    def forward(self, x, past_k=None, past_v=None):
        b, t, c = x.shape
        h, d = self.s.n_head, self.s.head_dim
        q, k, v = self.c_attn(self.ln_1(x)).split(c, dim=-1)
        q = q.view(b, t, h, d).transpose(1, 2)
        k = k.view(b, t, h, d).transpose(1, 2)
        v = v.view(b, t, h, d).transpose(1, 2)
        if past_k is None:
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:
            # The new tokens see every cached token, so no mask is needed for
            # a single-token step.
            y = F.scaled_dot_product_attention(
                q, torch.cat([past_k, k], dim=2), torch.cat([past_v, v], dim=2)
            )
        x = x + self.attn_proj(y.transpose(1, 2).reshape(b, t, c))
        x = x + self.mlp_proj(F.gelu(self.c_fc(self.ln_2(x)), approximate="tanh"))
        return x, k, v


class GPT2(nn.Module):
    """GPT-2 with the language-model head tied to the token embedding."""

    def __init__(self, s: GPT2Shape):
        super().__init__()
        self.s = s
        self.wte = nn.Embedding(s.vocab, s.n_embd)
        self.wpe = nn.Embedding(s.n_positions, s.n_embd)
        self.blocks = nn.ModuleList(GPT2Block(s) for _ in range(s.n_layer))
        self.ln_f = nn.LayerNorm(s.n_embd, eps=s.eps)
        self._init_weights()

    def _init_weights(self):
        # GPT-2's initialisation: N(0, 0.02), residual projections scaled by
        # 1/sqrt(2 * layers), zero biases.
        for name, p in self.named_parameters():
            if name.endswith("bias"):
                nn.init.zeros_(p)
            elif "ln_" in name:
                nn.init.ones_(p)
            elif name.endswith("proj.weight"):
                nn.init.normal_(p, std=0.02 / math.sqrt(2 * self.s.n_layer))
            else:
                nn.init.normal_(p, std=0.02)

    def run(self, input_ids, start: int, past_kv=None):
        t = input_ids.shape[1]
        pos = torch.arange(start, start + t, device=input_ids.device)
        x = self.wte(input_ids) + self.wpe(pos)
        ks, vs = [], []
        for i, block in enumerate(self.blocks):
            pk = pv = None
            if past_kv is not None:
                pk, pv = past_kv[i, 0], past_kv[i, 1]
            x, k, v = block(x, pk, pv)
            ks.append(k)
            vs.append(v)
        logits = F.linear(self.ln_f(x), self.wte.weight)
        kv = torch.stack([torch.stack([k, v]) for k, v in zip(ks, vs)])
        return logits, kv


class GPT2Decode(nn.Module):
    """One decode step: (input_ids [1,1], past_kv [L,2,1,H,P,D]) ->
    (logits [1,1,V], this token's kv [L,2,1,H,1,D])."""

    def __init__(self, s: GPT2Shape, past: int):
        super().__init__()
        self.model = GPT2(s)
        self.past = past

    def forward(self, input_ids, past_kv):
        return self.model.run(input_ids, self.past, past_kv)


class GPT2Prefill(nn.Module):
    """Prefill: input_ids [1,T] -> (logits [1,T,V], kv [L,2,1,H,T,D])."""

    def __init__(self, s: GPT2Shape):
        super().__init__()
        self.model = GPT2(s)

    def forward(self, input_ids):
        return self.model.run(input_ids, 0)


class BertWrapper(nn.Module):
    """transformers' BertModel returning plain tensors."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids):
        out = self.model(input_ids=input_ids)
        return out.last_hidden_state, out.pooler_output


@dataclass
class Workload:
    name: str
    description: str
    build: Callable[[bool], tuple]  # quick -> (module, [inputs])
    iters: int
    warmup: int
    # The decode step's bytes per run, for the physical limit.
    memory_bound: bool = False
    meta: dict = field(default_factory=dict)
    # Timed / warm-up runs on a CPU, for the workloads of both sets.
    cpu_iters: int | None = None
    cpu_warmup: int | None = None


def _generator() -> torch.Generator:
    return torch.Generator().manual_seed(SEED)


def _build_mlp(quick: bool):
    torch.manual_seed(SEED)
    m = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10))
    return m, [torch.randn(8, 64, generator=_generator())]


def _build_resnet50(batch: int):
    def build(quick: bool):
        import torchvision

        torch.manual_seed(SEED)
        m = torchvision.models.resnet50(weights=None)
        return m, [torch.randn(batch, 3, 224, 224, generator=_generator())]

    return build


def _build_vit(quick: bool):
    import torchvision

    torch.manual_seed(SEED)
    m = torchvision.models.vit_b_16(weights=None)
    # torchvision starts the classifier at zero, which would make every
    # output 0 and the runners' output check vacuous.
    nn.init.normal_(m.heads.head.weight, std=0.02)
    return m, [torch.randn(1, 3, 224, 224, generator=_generator())]


def _build_vit_s16(quick: bool):
    import torchvision

    torch.manual_seed(SEED)
    # torchvision has no ViT-S/16 builder: the ViT-S/16 shape (DeiT-S) on
    # its VisionTransformer class, 22M parameters.
    m = torchvision.models.VisionTransformer(
        image_size=224, patch_size=16, num_layers=12, num_heads=6, hidden_dim=384, mlp_dim=1536
    )
    nn.init.normal_(m.heads.head.weight, std=0.02)  # zero-initialised, as in _build_vit
    return m, [torch.randn(1, 3, 224, 224, generator=_generator())]


def _build_torchvision(name: str):
    def build(quick: bool):
        import torchvision

        torch.manual_seed(SEED)
        m = getattr(torchvision.models, name)(weights=None)
        return m, [torch.randn(1, 3, 224, 224, generator=_generator())]

    return build


def gpt2_shape(quick: bool) -> GPT2Shape:
    return GPT2_TINY if quick else GPT2_SMALL


def gpt2_context(quick: bool) -> int:
    """Cached tokens of the decode step, and tokens of the prefill."""
    return 64 if quick else 512


def _decode_step(s: GPT2Shape, past: int, dtype: torch.dtype):
    torch.manual_seed(SEED)
    m = GPT2Decode(s, past).to(dtype)
    g = _generator()
    ids = torch.randint(0, s.vocab, (1, 1), generator=g)
    # A plausible cache: keys and values of unit scale, in the model's dtype.
    kv = torch.randn(s.n_layer, 2, 1, s.n_head, past, s.head_dim, generator=g).to(dtype)
    return m, [ids, kv]


def _build_gpt2_decode(quick: bool):
    return _decode_step(gpt2_shape(quick), gpt2_context(quick), torch.bfloat16)


def _build_gpt2_decode128(dtype: torch.dtype):
    """GPT-2 small over a 128-token cache (the CPU set); --quick: the tiny
    model over gpt2_context(True) tokens, as gpt2_decode."""

    def build(quick: bool):
        return _decode_step(gpt2_shape(quick), gpt2_context(quick) if quick else 128, dtype)

    return build


def _build_gpt2_prefill(quick: bool):
    s, t = gpt2_shape(quick), gpt2_context(quick)
    torch.manual_seed(SEED)
    m = GPT2Prefill(s).to(torch.bfloat16)
    return m, [torch.randint(0, s.vocab, (1, t), generator=_generator())]


def _build_bert(quick: bool):
    from transformers import BertConfig, BertModel

    torch.manual_seed(SEED)
    config = BertConfig()
    model = BertModel(config)
    return BertWrapper(model), [
        torch.randint(0, config.vocab_size, (1, 128), generator=_generator())
    ]


# Timed / warm-up runs, sized so that no (workload, system) row times for more
# than about 10 s even for a system ten times slower than libtorch on an H200
# machine (ResNet-50 batch 32 at ~150 ms a run, say), while keeping at least
# 100 timed runs for the sub-millisecond workloads and 30 for the larger ones.
# The CPU set's (its own workloads' iters / warmup, cpu_iters / cpu_warmup of
# the shared ones) are sized for one thread of a two-core machine: at least 30
# timed runs, each row's timing within about 10 s for a system twice as slow
# as libtorch's runner.
_GPU_SET = {
    w.name: w
    for w in [
        Workload("mlp", "MLP 64->128->10, batch 8, fp32", _build_mlp, 500, 50),
        Workload("resnet50_b1", "ResNet-50 (torchvision), batch 1, fp32", _build_resnet50(1), 200, 20),
        Workload("resnet50_b32", "ResNet-50 (torchvision), batch 32, fp32", _build_resnet50(32), 40, 5),
        Workload("vit_b16_b1", "ViT-B/16 (torchvision), batch 1, fp32", _build_vit, 100, 10),
        Workload(
            "gpt2_decode",
            "GPT-2 small decode step, bf16, static KV cache of 512 past tokens",
            _build_gpt2_decode,
            200,
            20,
            memory_bound=True,
        ),
        Workload("gpt2_prefill512", "GPT-2 small prefill of 512 tokens, bf16", _build_gpt2_prefill, 100, 10),
        Workload("bert_base_s128", "BERT-base (transformers), batch 1, seq 128, fp32", _build_bert, 200, 20,
                 cpu_iters=30, cpu_warmup=3),
    ]
}
_CPU_ONLY = {
    w.name: w
    for w in [
        Workload("resnet18_b1", "ResNet-18 (torchvision), batch 1, fp32", _build_torchvision("resnet18"), 40, 4),
        Workload("mobilenet_v3_b1", "MobileNetV3-Large (torchvision mobilenet_v3_large), batch 1, fp32",
                 _build_torchvision("mobilenet_v3_large"), 100, 10),
        Workload("gpt2_decode128_f32", "GPT-2 small decode step, fp32, static KV cache of 128 past tokens",
                 _build_gpt2_decode128(torch.float32), 50, 5, memory_bound=True),
        Workload("gpt2_decode128_bf16", "GPT-2 small decode step, bf16, static KV cache of 128 past tokens",
                 _build_gpt2_decode128(torch.bfloat16), 30, 3, memory_bound=True),
        Workload("vit_s16_b1", "ViT-S/16 (torchvision VisionTransformer: 12 layers, 6 heads, width 384, MLP "
                 "1536), batch 1, fp32", _build_vit_s16, 30, 3),
    ]
}
WORKLOADS = {**_GPU_SET, **{n: w for n, w in _CPU_ONLY.items() if n not in _GPU_SET}}
GPU_WORKLOADS = list(_GPU_SET)
# The CPU benchmark's set (the issue's: mlp, resnet18 and mobilenet_v3 at
# batch 1, bert-base at 128 tokens, the GPT-2 small decode step over 128
# cached tokens in float32 and bfloat16, ViT-S/16), in report order.
CPU_WORKLOADS = ["mlp", "resnet18_b1", "mobilenet_v3_b1", "bert_base_s128", "gpt2_decode128_f32",
                 "gpt2_decode128_bf16", "vit_s16_b1"]

QUICK_WORKLOADS = ["mlp", "gpt2_decode"]
_TINY = "tiny GPT-2 (2 layers, 128 wide, vocab 1024)"
QUICK_DESCRIPTIONS = {
    "gpt2_decode": f"{_TINY} decode step, bf16, 64 cached tokens",
    "gpt2_prefill512": f"{_TINY} prefill of 64 tokens, bf16",
    "gpt2_decode128_f32": f"{_TINY} decode step, fp32, 64 cached tokens",
    "gpt2_decode128_bf16": f"{_TINY} decode step, bf16, 64 cached tokens",
}


def iterations(name: str, cpu: bool) -> tuple:
    """(timed runs, warm-up runs) of a workload on a CPU or a GPU."""
    w = WORKLOADS[name]
    if cpu and w.cpu_iters is not None:
        return w.cpu_iters, w.cpu_warmup if w.cpu_warmup is not None else w.warmup
    return w.iters, w.warmup


def describe(name: str, quick: bool) -> str:
    if quick and name in QUICK_DESCRIPTIONS:
        return QUICK_DESCRIPTIONS[name]
    return WORKLOADS[name].description


def build(name: str, quick: bool):
    """(module in eval mode, list of CPU input tensors) for workload `name`."""
    module, inputs = WORKLOADS[name].build(quick)
    return module.eval(), inputs


def decode_bytes_per_step(module: nn.Module, inputs: list) -> dict:
    """The fewest bytes a decode step must read: every weight once (the tied
    embedding is read whole by the LM head; of the position table only one
    row), plus the KV cache; and the bytes it writes (logits and new kv)."""
    weights = 0
    seen = set()
    for name, p in module.named_parameters():
        if id(p) in seen:
            continue
        seen.add(id(p))
        if name.endswith("wpe.weight"):
            weights += p.shape[1] * p.element_size()
        else:
            weights += p.numel() * p.element_size()
    kv = inputs[1].numel() * inputs[1].element_size()
    s = module.model.s
    written = (s.vocab + s.n_layer * 2 * s.n_embd) * 2
    return {"weight_bytes": weights, "kv_cache_bytes": kv, "write_bytes": written}
