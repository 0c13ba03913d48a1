# Fused decode-step ops: custom ops that export_llm(fuse_decode=True) puts
# into the decode package, each a product with the small steps around it
# (the RMS norm before it, the residual add or the MLP's SiLU-multiply
# after it), so that a decode step launches fewer kernels.
# Inductor calls them as aotirt's C shims (aot_inductor.custom_ops_to_c_shims):
# aoti_torch_<device>_aotirt_<name>. Their eager definitions here are the
# reference, and round as transformers' modules do: each step's result is
# rounded to the model's dtype before the next step reads it.

from __future__ import annotations

import contextlib

import torch
import torch.nn.functional as F

# transformers' RMS norms that compute weight * (x * rsqrt(mean(x^2) + eps)),
# the norm rms_norm_linear folds in (Gemma's 1 + weight is another).
RMS_NORMS = ("LlamaRMSNorm", "Qwen2RMSNorm", "MistralRMSNorm")
# The MLP activations that are F.silu (torch's module, transformers' own).
SILU = ("SiLU", "SiLUActivation")


def _rms_norm(x, weight, eps: float):
    xf = x.to(torch.float32)
    return weight * (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps)).to(x.dtype)


@torch.library.custom_op("aotirt::aotirt_rms_norm_linear", mutates_args=())
def rms_norm_linear(x: torch.Tensor, norm_weight: torch.Tensor, eps: float, weight: torch.Tensor,
                    bias: torch.Tensor | None) -> torch.Tensor:
    """linear(rms_norm(x), weight, bias)."""
    return F.linear(_rms_norm(x, norm_weight, eps), weight, bias)


@rms_norm_linear.register_fake
def _(x, norm_weight, eps, weight, bias):
    return x.new_empty((*x.shape[:-1], weight.shape[0]))


@torch.library.custom_op("aotirt::aotirt_linear_add", mutates_args=())
def linear_add(x: torch.Tensor, weight: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
    """residual + linear(x, weight)."""
    return residual + F.linear(x, weight)


@linear_add.register_fake
def _(x, weight, residual):
    return residual.new_empty(residual.shape)


@torch.library.custom_op("aotirt::aotirt_rms_norm_linear_silu_mul", mutates_args=())
def rms_norm_linear_silu_mul(x: torch.Tensor, norm_weight: torch.Tensor, eps: float,
                             weight: torch.Tensor) -> torch.Tensor:
    """silu(gate) * up, gate and up the two halves of the last dimension of
    linear(rms_norm(x), weight)."""
    gate, up = F.linear(_rms_norm(x, norm_weight, eps), weight).chunk(2, dim=-1)
    return F.silu(gate) * up


@rms_norm_linear_silu_mul.register_fake
def _(x, norm_weight, eps, weight):
    return x.new_empty((*x.shape[:-1], weight.shape[0] // 2))


def c_shims(device: str) -> dict:
    """aot_inductor.custom_ops_to_c_shims for |device| ("cpu" or "cuda"):
    each op and its C declaration, as aotirt exports it."""
    t, h = "AtenTensorHandle", "AOTITorchError"
    p = f"aoti_torch_{device}_aotirt_"
    return {
        torch.ops.aotirt.aotirt_rms_norm_linear.default: [
            f"{h} {p}rms_norm_linear({t} x, {t} norm_weight, double eps, {t} weight, {t}* bias, {t}* ret0)"],
        torch.ops.aotirt.aotirt_linear_add.default: [
            f"{h} {p}linear_add({t} x, {t} weight, {t} residual, {t}* ret0)"],
        torch.ops.aotirt.aotirt_rms_norm_linear_silu_mul.default: [
            f"{h} {p}rms_norm_linear_silu_mul({t} x, {t} norm_weight, double eps, {t} weight, {t}* ret0)"],
    }


class _Residual:
    """The residual a fused layer hands its attention's output projection
    for one call."""

    def __init__(self):
        self.value = None


def _residual_linear_forward(linear, residual):
    """An output projection's forward that adds the residual its layer set
    before the call (the layer's own add then does not happen)."""

    def forward(x):
        r, residual.value = residual.value, None
        return torch.ops.aotirt.aotirt_linear_add(x, linear.weight, r)

    return forward


def _fused_layer_forward(layer, qkv_stack, residual):
    """A decoder layer's forward as four fused products: the q/k/v product
    with the input norm, the output projection with the residual add, the
    gate/up product with the second norm and SiLU-multiply, and the down
    product with the residual add. Same results as the layer, up to the
    float32 sums' order. It replaces the layer's forward in place (not
    the layer), so that its weights keep the names they have in the prefill
    package and the pair shares them."""

    def forward(hidden_states, **kwargs):
        attn, mlp = layer.self_attn, layer.mlp
        norm1, norm2 = layer.input_layernorm, layer.post_attention_layernorm
        qkv_stack.norm = (norm1.weight, float(norm1.variance_epsilon))
        residual.value = hidden_states
        try:
            # The attention reads the layer's input itself: its q/k/v
            # product applies the input norm.
            h, _ = attn(hidden_states=hidden_states, **kwargs)
        finally:
            qkv_stack.norm = None
            residual.value = None
        act = torch.ops.aotirt.aotirt_rms_norm_linear_silu_mul(h, norm2.weight, float(norm2.variance_epsilon),
                                                              mlp.aotirt_gate_up_proj.weight)
        return torch.ops.aotirt.aotirt_linear_add(act, mlp.down_proj.weight, h)

    return forward


def _fusable(layer) -> bool:
    attn, mlp = getattr(layer, "self_attn", None), getattr(layer, "mlp", None)
    norms = [getattr(layer, n, None) for n in ("input_layernorm", "post_attention_layernorm")]
    if attn is None or mlp is None or any(type(n).__name__ not in RMS_NORMS for n in norms):
        return False
    stack = getattr(getattr(attn, "q_proj", None), "_stack", None)
    plain = lambda m: type(m) is torch.nn.Linear and m.weight.dtype in (torch.float32, torch.bfloat16, torch.float16)
    return (stack is not None and stack.name == "aotirt_q_k_v_proj" and plain(getattr(attn, stack.name, None))
            and plain(getattr(attn, "o_proj", None)) and attn.o_proj.bias is None
            and plain(getattr(mlp, "aotirt_gate_up_proj", None)) and mlp.aotirt_gate_up_proj.bias is None
            and plain(getattr(mlp, "down_proj", None))
            and mlp.down_proj.bias is None and type(getattr(mlp, "act_fn", None)).__name__ in SILU)


@contextlib.contextmanager
def fused_decoder_layers(model):
    """|model| (its projections stacked, weights not quantized) with the
    forward of each _fusable decoder layer (and of its output projection)
    replaced by the fused one within; yields how many. As it was after,
    also when the body raises."""
    swapped = []
    try:
        for parent in list(model.modules()):
            layers = getattr(parent, "layers", None)
            if not isinstance(layers, torch.nn.ModuleList):
                continue
            for i, layer in enumerate(layers):
                if not _fusable(layer):
                    continue
                o_proj, residual = layer.self_attn.o_proj, _Residual()
                # Instance attributes: nn.Module calls self.forward.
                o_proj.forward = _residual_linear_forward(o_proj, residual)
                layer.forward = _fused_layer_forward(layer, layer.self_attn.q_proj._stack, residual)
                swapped.append((layer, o_proj))
        yield len(swapped)
    finally:
        for layer, o_proj in swapped:
            del o_proj.forward
            del layer.forward
