#!/usr/bin/env python3
# Exports small CUDA models whose AOTInductor libraries call aotirt's CUDA
# fallback ops (convolution, mm/addmm/bmm, the three SDPA variants), built
# with link_libtorch=False so they import the CUDA runtime from aotirt. Needs
# torch with a GPU. For each model it writes
#
#   <out>/<name>/model.pt2
#   <out>/<name>/input<i>.npy     (float32 or int64; bf16 models cast inside)
#   <out>/<name>/expected<i>.npy  (eager PyTorch on the same GPU, as float32)
#   <out>/<name>/meta.json        (tolerances)
#
# Usage: make_cuda_models.py OUT_DIR [--only NAME ...]

import argparse
import contextlib
import json
import sys
import time
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

# The reference must not use TF32 either (PyTorch's cuDNN default allows it).
torch.backends.cudnn.allow_tf32 = False
torch.backends.cuda.matmul.allow_tf32 = False


class CnnAttention(nn.Module):
    """conv2d -> relu -> linear q/k/v -> causal SDPA -> bmm -> linear (float32)."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.qkv = nn.Linear(64, 192)
        self.out = nn.Linear(64, 32)

    def forward(self, x, y):
        h = F.relu(self.conv(x))                    # [B, 8, 8, 8]
        t = h.flatten(2)                            # [B, 8 tokens, 64]
        q, k, v = self.qkv(t).chunk(3, dim=-1)
        b = t.shape[0]
        q, k, v = (z.reshape(b, 8, 2, 32).transpose(1, 2) for z in (q, k, v))
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        a = a.transpose(1, 2).reshape(b, 8, 64)
        return self.out(a), torch.bmm(a, y)


class AttentionBf16(nn.Module):
    """bfloat16 inside: linear + causal SDPA + linear; float32 in and out."""

    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(128, 384, dtype=torch.bfloat16)
        self.proj = nn.Linear(128, 128, dtype=torch.bfloat16)

    def forward(self, x):
        x = x.to(torch.bfloat16)
        b, t, _ = x.shape
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q, k, v = (z.reshape(b, t, 2, 64).transpose(1, 2) for z in (q, k, v))
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.proj(a.transpose(1, 2).reshape(b, t, 128)).float()


class DecodeBf16(nn.Module):
    """One decode step over a 512-entry KV cache with an additive mask."""

    def forward(self, q, k, v, mask):
        q, k, v, mask = (z.to(torch.bfloat16) for z in (q, k, v, mask))
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask).float()


class Convs(nn.Module):
    """conv1d, grouped conv2d and conv_transpose2d (float32)."""

    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv1d(4, 8, 5, stride=2, padding=2)
        self.c2 = nn.Conv2d(8, 8, 3, padding=1, groups=4)
        self.ct = nn.ConvTranspose2d(8, 4, 4, stride=2, padding=1)

    def forward(self, s, img):
        a = self.c1(s)
        b = self.ct(self.c2(img))
        return a, b


def _rand(*shape):
    return torch.randn(*shape, device="cuda")


# name -> (module, inputs, tolerance[, SDPA backend forced while exporting])
MODELS = {
    "cnn_attention_fp32": (CnnAttention, lambda: (_rand(2, 3, 8, 8), _rand(2, 64, 16)), 1e-4),
    "attention_bf16": (AttentionBf16, lambda: (_rand(2, 64, 128),), 3e-2),
    "attention_bf16_flash": (AttentionBf16, lambda: (_rand(2, 64, 128),), 3e-2, "FLASH_ATTENTION"),
    "decode_bf16": (
        DecodeBf16,
        lambda: (_rand(1, 8, 1, 64), _rand(1, 8, 512, 64), _rand(1, 8, 512, 64),
                 torch.where(torch.rand(1, 1, 1, 512, device="cuda") < 0.1, -1e4, 0.0)),
        3e-2,
    ),
    "convs_fp32": (Convs, lambda: (_rand(2, 4, 33), _rand(2, 8, 10, 12)), 1e-4),
}


def export(name, out_dir):
    make, inputs_fn, tol, *backend = MODELS[name]
    torch.manual_seed(0)
    model = make().cuda().eval()
    inputs = inputs_fn()
    d = out_dir / name
    d.mkdir(parents=True, exist_ok=True)
    ctx = contextlib.nullcontext()
    if backend:
        from torch.nn.attention import SDPBackend, sdpa_kernel
        ctx = sdpa_kernel([getattr(SDPBackend, backend[0])])
    with torch.no_grad(), ctx:
        expected = model(*inputs)
        if isinstance(expected, torch.Tensor):
            expected = (expected,)
        ep = torch.export.export(model, inputs)
        t0 = time.time()
        torch._inductor.aoti_compile_and_package(
            ep, package_path=str(d / "model.pt2"),
            inductor_configs={"aot_inductor.link_libtorch": False})
    for i, x in enumerate(inputs):
        np.save(d / f"input{i}.npy", x.cpu().numpy())
    for i, y in enumerate(expected):
        np.save(d / f"expected{i}.npy", y.float().cpu().numpy())
    (d / "meta.json").write_text(json.dumps({"atol": tol, "rtol": tol, "outputs": len(expected)}))
    print(f"{name}: exported in {time.time() - t0:.1f}s", flush=True)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("out", type=Path)
    p.add_argument("--only", action="append", default=[])
    args = p.parse_args()
    failed = 0
    for name in args.only or MODELS:
        try:
            export(name, args.out)
        except Exception as e:  # keep going: one model's failure must not hide the others
            failed += 1
            print(f"{name}: EXPORT FAILED: {type(e).__name__}: {e}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
