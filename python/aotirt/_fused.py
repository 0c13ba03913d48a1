# Fused decode-step ops: custom ops that export_llm(fuse_decode=True) puts
# into the decode package, each a product with the small steps around it
# (the RMS norm before it, the residual add or the MLP's SiLU-multiply
# after it), so that a decode step launches fewer kernels. Weights that
# torchao quantized to int4 take one of them: the MLP's gate/up product
# with SiLU-multiply.
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


def _int4pack_mm(x, qdata, group_size: int, scale_and_zero):
    """torch's int4 weight-only product of |x| [M, K] in the device's
    packing: torchao's CPU one (Int4OpaqueTensor) or its CUDA tile packing
    (Int4TilePackedTo4dTensor)."""
    if x.device.type == "cpu":
        return torch.ops.aten._weight_int4pack_mm_for_cpu(x, qdata, group_size, scale_and_zero)
    return torch.ops.aten._weight_int4pack_mm(x, qdata, group_size, scale_and_zero)


@torch.library.custom_op("aotirt::aotirt_int4pack_mm_silu_mul", mutates_args=())
def int4pack_mm_silu_mul(x: torch.Tensor, qdata: torch.Tensor, group_size: int,
                         scale_and_zero: torch.Tensor) -> torch.Tensor:
    """silu(gate) * up, gate and up the two halves of the columns of the
    int4 weight-only product of x [M, K] (the device's packing, as
    _int4pack_mm)."""
    gate, up = _int4pack_mm(x, qdata, group_size, scale_and_zero).chunk(2, dim=-1)
    return F.silu(gate) * up


@int4pack_mm_silu_mul.register_fake
def _(x, qdata, group_size, scale_and_zero):
    return x.new_empty((x.shape[0], scale_and_zero.shape[1] // 2))


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
        torch.ops.aotirt.aotirt_int4pack_mm_silu_mul.default: [
            f"{h} {p}int4pack_mm_silu_mul({t} x, {t} qdata, int64_t group_size, {t} scale_and_zero, {t}* ret0)"],
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


def _int4_packed(weight):
    """(qdata, group size, scale_and_zero, padded input width) of a torchao
    int4 weight whose product int4pack_mm_silu_mul can take as it is: the
    plain A16W4 form, no padding of its output rows, an even number of
    them; else None."""
    qdata, sz, block = (getattr(weight, n, None) for n in ("qdata", "scale_and_zero", "block_size"))
    if qdata is None or sz is None or block is None or getattr(weight, "act_pre_scale", None) is not None:
        return None
    if getattr(weight, "act_mapping_type", None) is not None or weight.dim() != 2 or block[0] != 1:
        return None
    n, k = weight.shape
    if sz.dim() != 3 or sz.shape[1] != n or n % 2:
        return None
    if qdata.dim() == 4:  # the CUDA tile packing: K padded as torchao's linear pads it
        padded = qdata.shape[1] * qdata.shape[3] * 2 * 16
    elif qdata.dim() == 2 and qdata.shape[0] == n:  # the CPU packing
        padded = qdata.shape[1] * 2
    else:
        return None
    if padded < k:
        return None
    return qdata, int(block[1]), sz, padded


def _int4_mlp_forward(mlp, gate_up: str):
    """An MLP's forward whose gate/up product (torchao int4 weights,
    stacked as |gate_up|) makes SiLU-multiply in its store. The packed
    tensors are read from the weight at each call, not kept: under export
    they must come from the traced weight, or they would be constants of
    their own, a second copy the pair would not share."""

    def forward(x):
        qdata, group, sz, padded = _int4_packed(getattr(mlp, gate_up).weight)
        rows = x.reshape(-1, x.shape[-1]).contiguous()
        if padded > rows.shape[-1]:
            rows = F.pad(rows, (0, padded - rows.shape[-1]))
        act = torch.ops.aotirt.aotirt_int4pack_mm_silu_mul(rows.to(torch.bfloat16) if qdata.dim() == 4 else rows,
                                                          qdata, group, sz)
        return mlp.down_proj(act.to(x.dtype).reshape(*x.shape[:-1], act.shape[-1]))

    return forward


def _int4_fusable(layer):
    """The packed gate/up weight of |layer|'s MLP where it can take
    _int4_mlp_forward, else None."""
    mlp = getattr(layer, "mlp", None)
    stack = getattr(getattr(mlp, "gate_proj", None), "_stack", None)
    if stack is None or stack.name != "aotirt_gate_up_proj" or len(stack.bounds) != 3:
        return None
    gate_up = getattr(mlp, stack.name, None)
    if gate_up is None or getattr(gate_up, "bias", None) is not None or stack.bounds[1] * 2 != stack.bounds[2]:
        return None
    if type(getattr(mlp, "act_fn", None)).__name__ not in SILU or getattr(mlp, "down_proj", None) is None:
        return None
    return _int4_packed(gate_up.weight)


def _decoder_layers(model):
    """The layers of each `layers` ModuleList in |model| (the decoder's)."""
    for parent in list(model.modules()):
        layers = getattr(parent, "layers", None)
        if isinstance(layers, torch.nn.ModuleList):
            yield from layers


@contextlib.contextmanager
def fused_int4_mlps(model):
    """|model| (its projections stacked and quantized by torchao to int4)
    with the forward of each decoder layer's MLP that _int4_fusable takes
    replaced by one whose gate/up product makes SiLU-multiply
    (aotirt_int4pack_mm_silu_mul) within; yields how many. The weights keep
    their names, so the pair shares them. As it was after, also when the
    body raises."""
    swapped = []
    try:
        for layer in _decoder_layers(model):
            if _int4_fusable(layer) is not None:
                layer.mlp.forward = _int4_mlp_forward(layer.mlp, layer.mlp.gate_proj._stack.name)
                swapped.append(layer.mlp)
        yield len(swapped)
    finally:
        for mlp in swapped:
            del mlp.forward


@contextlib.contextmanager
def fused_decoder_layers(model):
    """|model| (its projections stacked, weights not quantized) with the
    forward of each _fusable decoder layer (and of its output projection)
    replaced by the fused one within; yields how many. As it was after,
    also when the body raises."""
    swapped = []
    try:
        for layer in _decoder_layers(model):
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
