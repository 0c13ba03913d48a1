# Exporting a decoder language model for `aotirt generate`: a prefill package
# (any prompt length up to the cache) and a decode package (one token), whose
# KV cache is a set of inputs that both update in place, so the runtime owns
# one cache and passes it to each without copies. llm.json beside them says
# how the runtime must shape the cache and what the stop tokens are.

from __future__ import annotations

import contextlib
import inspect
import json
import shutil
import uuid
from pathlib import Path

import torch

from . import _fused

LLM_CONFIG = "llm.json"
LLM_FORMAT_VERSION = 1
# Package metadata key holding the id one export_llm call stamps on both
# packages and llm.json, so a package from another export is refused.
EXPORT_ID_KEY = "aotirt.llm_export_id"


class _CachedDecoder(torch.nn.Module):
    """A transformers causal LM called with its static KV cache as inputs.

    Inputs: token ids [1, n], their cache positions [n], then each layer's
    key and value cache [1, kv_heads, max_cache_len, head_dim]. The model
    writes the new tokens' keys and values into the caches in place and
    returns the last token's logits [1, vocab] in float32 and their argmax
    [1] (int64), the greedy choice, so that greedy generation on a GPU reads
    back one id instead of the logits.
    """

    def __init__(self, model, max_cache_len: int):
        super().__init__()
        from transformers import StaticCache

        self.model = model
        self.cache = StaticCache(config=model.config, max_cache_len=max_cache_len)
        params = inspect.signature(model.forward).parameters
        self.keeps_logits = "logits_to_keep" in params
        # transformers 5.25 renamed past_key_values to cache.
        self.cache_arg = "cache" if "cache" in params else "past_key_values"

    def forward(self, input_ids, cache_position, caches):
        for i, layer in enumerate(self.cache.layers):
            # The caches are the inputs themselves, so the model's index_copy_
            # lands in the runtime's tensors.
            layer.keys, layer.values = caches[2 * i], caches[2 * i + 1]
            layer.cumulative_length = cache_position[:1].clone().reshape(())
            layer.max_batch_size, layer.num_heads = caches[2 * i].shape[:2]
            layer.k_head_dim = layer.v_head_dim = caches[2 * i].shape[-1]
            layer.device, layer.is_initialized = caches[2 * i].device, True
        # Only the last position's logits: the output layer then multiplies
        # one row, not the whole prompt's (as transformers' generate does).
        keep = {"logits_to_keep": 1} if self.keeps_logits else {}
        out = self.model(input_ids=input_ids, cache_position=cache_position, use_cache=True,
                         **{self.cache_arg: self.cache}, **keep)
        logits = out.logits[:, -1, :].float()
        return logits, _greedy_token(logits)


def _greedy_token(logits):
    """torch.argmax of the one row |logits| [1, vocab] as [1] int64, in two
    steps: the largest of each 1024 values, then the largest of those. The
    generated code then reduces the row with many blocks instead of one (a
    vocabulary of 128k took one block tens of microseconds). Ties go to the
    lowest id, as torch.argmax's."""
    chunk = 1024
    row = logits[0]
    pad = (-row.shape[0]) % chunk
    if pad:
        row = torch.nn.functional.pad(row, (0, pad), value=float("-inf"))
    values, within = row.view(-1, chunk).max(dim=1)
    best = torch.argmax(values).reshape(1)
    return best * chunk + within.gather(0, best)


def _decode_attention(stock):
    """transformers' SDPA attention, except that a one-token step of a model
    with grouped-query attention runs on the key/value heads themselves: the
    query [b, heads, 1, d] is viewed as [b, kv_heads, heads / kv_heads, d],
    each group's query heads becoming rows against their one key/value head.

    transformers does this itself in eager mode, but not under torch.export,
    where it expands the key and value caches to every query head instead
    (repeat_kv): in the decode package that is a copy of the whole static
    cache, twice a layer and every token, and an attention reading
    heads / kv_heads times its bytes. A mask that differs between heads, a
    position bias, a soft cap, dropout or attention weights go to |stock|
    (as does the prefill), a boolean mask made additive as below."""

    # The boolean mask as an additive one with -inf, made once for all the
    # layers of a step: transformers hands every layer the same mask, and the
    # SDPA lowering would otherwise convert it in a kernel of each layer's
    # own (on a GPU, for cuDNN's attention, to -65504 rather than -inf).
    made = {}

    def additive(mask, query):
        if mask is None or mask.dtype != torch.bool:
            return mask
        key = (id(mask), query.dtype)
        if key not in made:
            made.clear()  # a new step's mask (the old one is kept alive until here, so ids stay unique)
            made[key] = (mask, torch.zeros(mask.shape, dtype=query.dtype, device=mask.device).masked_fill(
                mask.logical_not(), float("-inf")))
        return made[key][1]

    def attention(module, query, key, value, attention_mask, dropout=0.0, scaling=None, is_causal=None, **kwargs):
        groups = getattr(module, "num_key_value_groups", 1)
        one_token = isinstance(query.shape[2], int) and query.shape[2] == 1
        plain = (not dropout and kwargs.get("position_bias") is None and kwargs.get("softcap") is None
                 and not kwargs.get("output_attentions", False))
        shared_mask = attention_mask is None or attention_mask.shape[1] == 1
        if not (one_token and isinstance(groups, int) and groups > 1 and query.shape[1] == key.shape[1] * groups
                and plain and shared_mask):
            return stock(module, query, key, value, additive(attention_mask, query), dropout=dropout,
                         scaling=scaling, is_causal=is_causal, **kwargs)
        b, heads, _, d = query.shape
        out = torch.nn.functional.scaled_dot_product_attention(
            query.reshape(b, heads // groups, groups, d), key, value, attn_mask=additive(attention_mask, query),
            scale=scaling)
        return out.reshape(b, heads, 1, value.shape[-1]).transpose(1, 2).contiguous(), None

    return attention


@contextlib.contextmanager
def _packed_decode_attention():
    """Within: transformers' "sdpa" attention is _decode_attention's."""
    try:
        from transformers.modeling_utils import ALL_ATTENTION_FUNCTIONS
    except ImportError:
        yield
        return
    stock = ALL_ATTENTION_FUNCTIONS.get("sdpa")
    if stock is None:
        yield
        return
    # The mapping's own override slot, if it had none, is emptied again after.
    local = getattr(ALL_ATTENTION_FUNCTIONS, "_local_mapping", None)
    overridden = local is None or "sdpa" in local
    ALL_ATTENTION_FUNCTIONS["sdpa"] = _decode_attention(stock)
    try:
        yield
    finally:
        if overridden:
            ALL_ATTENTION_FUNCTIONS["sdpa"] = stock
        else:
            del ALL_ATTENTION_FUNCTIONS["sdpa"]


# Sibling linear layers of transformers' decoders that read the same input:
# the attention's query, key and value projections, the MLP's gate and up
# projections. export_llm stacks each group into one product.
STACKED_PROJECTIONS = (("q_proj", "k_proj", "v_proj"), ("gate_proj", "up_proj"))


class _ProjectionStack:
    """One linear layer holding several projections' output rows stacked,
    computed once per input and handed out a slice per projection.

    Not a module: the stacked nn.Linear is registered on the parent under
    |name| (so its weight is one constant of the package), and looked up
    there at each call, so that quantize_ may replace it."""

    def __init__(self, parent, name: str, widths):
        self.parent, self.name = parent, name
        self.bounds = [sum(widths[:i]) for i in range(len(widths) + 1)]
        self._input = self._version = self._output = None
        self._served = set()
        # (weight, eps) of an RMS norm the product applies to its input
        # first, set by a fused decoder layer (_fused.py) around its call.
        self.norm = None

    def slice(self, x, index: int):
        version = getattr(x, "_version", None)
        if self._input is not x or self._version != version or index in self._served:
            self._input, self._version = x, version
            linear = getattr(self.parent, self.name)
            if self.norm is None:
                self._output = linear(x)
            else:
                self._output = torch.ops.aotirt.aotirt_rms_norm_linear(x, self.norm[0], self.norm[1], linear.weight,
                                                                      linear.bias)
            self._served = set()
        out = self._output[..., self.bounds[index]:self.bounds[index + 1]]
        self._served.add(index)
        if len(self._served) == len(self.bounds) - 1:
            # Every projection has its slice: hold no activation past the call.
            self._input = self._version = self._output = None
            self._served = set()
        return out


class _ProjectionSlice(torch.nn.Module):
    """Stands in for one projection of a stack: its slice of the product."""

    def __init__(self, stack: _ProjectionStack, index: int, in_features: int, out_features: int):
        super().__init__()
        object.__setattr__(self, "_stack", stack)  # not a submodule: the parent holds the weight
        self.index, self.in_features, self.out_features = index, in_features, out_features

    def forward(self, x):
        return self._stack.slice(x, self.index)

    def extra_repr(self) -> str:
        return f"{self._stack.name}[{self._stack.bounds[self.index]}:{self._stack.bounds[self.index + 1]}]"


def _stack_groups(model, keep: bool) -> list:
    """Stacks each group of STACKED_PROJECTIONS in |model| (see
    stack_projections). With |keep|, the layers replaced are kept, their
    weights and biases made views of the stacked ones (no second copy), for
    _unstack; returns (parent, names, layers, stacked name) a group."""
    groups = []
    for parent in list(model.modules()):
        for names in STACKED_PROJECTIONS:
            layers = [getattr(parent, n, None) for n in names]
            if not all(type(m) is torch.nn.Linear for m in layers):
                continue
            w0 = layers[0].weight
            if any(m.in_features != layers[0].in_features or m.weight.dtype != w0.dtype
                   or m.weight.device != w0.device or (m.bias is None) != (layers[0].bias is None) for m in layers):
                continue
            name = "aotirt_" + "_".join(n.removesuffix("_proj") for n in names) + "_proj"
            stack = _ProjectionStack(parent, name, [m.out_features for m in layers])
            bounds = stack.bounds
            fused = torch.nn.Linear(layers[0].in_features, bounds[-1], bias=layers[0].bias is not None,
                                    device="meta")
            with torch.no_grad():
                grad = w0.requires_grad
                fused.weight = torch.nn.Parameter(torch.cat([m.weight for m in layers]), requires_grad=grad)
                if layers[0].bias is not None:
                    fused.bias = torch.nn.Parameter(torch.cat([m.bias for m in layers]), requires_grad=grad)
                if keep:
                    for m, a, b in zip(layers, bounds, bounds[1:]):
                        m.weight.data = fused.weight.data[a:b]
                        if m.bias is not None:
                            m.bias.data = fused.bias.data[a:b]
            parent.add_module(name, fused)
            for i, (n, m) in enumerate(zip(names, layers)):
                setattr(parent, n, _ProjectionSlice(stack, i, m.in_features, m.out_features))
            groups.append((parent, names, layers if keep else None, name))
    return groups


def _unstack(groups) -> None:
    """Puts back the layers _stack_groups(keep=True) replaced, each with a
    weight of its own again, and removes the stacked layers."""
    with torch.no_grad():
        for parent, names, layers, name in groups:
            for n, m in zip(names, layers):
                m.weight.data = m.weight.data.clone()
                if m.bias is not None:
                    m.bias.data = m.bias.data.clone()
                setattr(parent, n, m)
            delattr(parent, name)


def stack_projections(model) -> int:
    """Replaces each group of STACKED_PROJECTIONS in |model| (plain
    nn.Linear layers with one input width, dtype and device, all with or all
    without a bias) by one nn.Linear of their stacked weights, named
    aotirt_<names>, and the layers by slices of its product. Returns the
    number of groups stacked. A decode step then multiplies one larger
    weight instead of two or three small ones, each a launch of a kernel
    bound by its latency rather than by the bytes it reads."""
    return len(_stack_groups(model, keep=False))


@contextlib.contextmanager
def _projections_stacked(model, restore: bool):
    """|model| with its projections stacked within; with |restore|, as it
    was after (the same layer objects and parameter names, each weight its
    own storage again), also when the body raises."""
    groups = _stack_groups(model, keep=restore)
    try:
        yield len(groups)
    finally:
        if restore:
            _unstack(groups)


def _cache_shape(config, max_cache_len: int) -> tuple:
    text = config.get_text_config() if hasattr(config, "get_text_config") else config
    heads = text.num_attention_heads
    kv_heads = getattr(text, "num_key_value_heads", None) or heads
    head_dim = getattr(text, "head_dim", None) or text.hidden_size // heads
    return text.num_hidden_layers, (1, kv_heads, max_cache_len, head_dim)


QUANTIZE_KINDS = ("int4", "int8")
INT4_GROUP_SIZES = (32, 64, 128, 256)


def _is_json_file(path: Path) -> bool:
    if path.suffix == ".json":
        return True
    with open(path, "rb") as f:
        return f.read(64).lstrip()[:1] == b"{"


def _tokenizer_plan(tokenizer, ExportError):
    """What export_llm writes for |tokenizer|: (file name in the export, a
    function that writes it there)."""
    if isinstance(tokenizer, (str, Path)):
        path = Path(tokenizer)
        if path.is_dir():
            # A checkpoint's directory: its tokenizer.json, else its
            # SentencePiece model.
            for name in ("tokenizer.json", "tokenizer.model"):
                if (path / name).is_file():
                    path = path / name
                    break
            else:
                raise ExportError(f"tokenizer directory {tokenizer} has neither tokenizer.json nor tokenizer.model")
        if not path.is_file():
            raise ExportError(f"tokenizer file {tokenizer} does not exist")
        name = "tokenizer.json" if _is_json_file(path) else "tokenizer.model"
        return name, lambda dest: shutil.copyfile(path, dest)
    # A transformers tokenizer that still has its SentencePiece model (a
    # Llama-2-style one) ships that: its tokenizer.json would be a
    # SentencePiece-style BPE, which aotirt's tokenizer.json reader refuses.
    vocab_file = getattr(tokenizer, "vocab_file", None)
    if isinstance(vocab_file, (str, Path)) and str(vocab_file).endswith(".model") and Path(vocab_file).is_file():
        return "tokenizer.model", lambda dest: shutil.copyfile(vocab_file, dest)
    # A transformers fast tokenizer, or a tokenizers.Tokenizer itself.
    backend = getattr(tokenizer, "backend_tokenizer", None) or tokenizer
    if callable(getattr(backend, "save", None)) and callable(getattr(backend, "to_str", None)):
        return "tokenizer.json", lambda dest: backend.save(str(dest))
    raise ExportError(f"tokenizer must be a file path, a directory with tokenizer.json or tokenizer.model, or a "
                      f"transformers / tokenizers tokenizer, not {type(tokenizer).__name__}")


def _warn_unless_byte_level(path: Path) -> None:
    """aotirt reads byte-level BPE tokenizer.json files only (docs/generate.md,
    Tokenizers); another kind (a SentencePiece-style BPE with byte_fallback,
    WordPiece) is said now rather than when `aotirt generate` refuses it."""
    import warnings

    try:
        j = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        warnings.warn(f"{path} cannot be read as JSON ({e}): aotirt generate will refuse it", stacklevel=3)
        return

    def byte_level(p) -> bool:
        if not isinstance(p, dict):
            return False
        if p.get("type") == "ByteLevel":
            return True
        return p.get("type") == "Sequence" and any(byte_level(q) for q in p.get("pretokenizers") or [])

    model = j.get("model") or {}
    if model.get("type", "BPE") != "BPE" or model.get("byte_fallback") or not byte_level(j.get("pre_tokenizer")):
        warnings.warn(f"{path} is not a byte-level BPE tokenizer, which is what aotirt reads from tokenizer.json: "
                      f"`aotirt generate --prompt` will refuse it (pass the SentencePiece .model instead, if the "
                      f"checkpoint has one, or use --prompt-ids)", stacklevel=3)


def quantize_llm(model, quantize: str, group_size: int, device: str):
    """Applies torchao's weight-only quantization to |model|'s linear layers
    in place and returns it: "int4" (groups of |group_size| along the input
    features; torchao's CPU packing on CPU, its tinygemm tile packing on CUDA,
    so the packages call _weight_int4pack_mm_cpu_tensor or
    _weight_int4pack_mm) or "int8" (one scale per output channel). A linear
    layer whose input features are not a multiple of |group_size| stays as it
    is, as torchao leaves it, and so does one whose weight is tied to the
    embedding. This is the eager model the export equals."""
    import torch
    from torchao.quantization import Int4WeightOnlyConfig, Int8WeightOnlyConfig, quantize_

    from ._export import ExportError

    if quantize == "int8":
        config = Int8WeightOnlyConfig(set_inductor_config=False)
    elif quantize == "int4":
        if group_size not in INT4_GROUP_SIZES:
            raise ExportError(f"group_size must be one of {INT4_GROUP_SIZES} for int4, not {group_size}")
        if device == "cpu":
            from torchao.prototype.quantization.int4 import PrototypeInt4WeightOnlyConfig

            config = PrototypeInt4WeightOnlyConfig(group_size=group_size, set_inductor_config=False)
        else:
            dtype = next(model.parameters()).dtype
            if dtype != torch.bfloat16:
                raise ExportError(f"int4 on {device} needs a bfloat16 model (torchao's tinygemm packing), not "
                                  f"{str(dtype).replace('torch.', '')}: model.to(torch.bfloat16)")
            config = Int4WeightOnlyConfig(group_size=group_size, int4_packing_format="tile_packed_to_4d",
                                          set_inductor_config=False)
    else:
        raise ExportError(f"quantize must be one of {QUANTIZE_KINDS} or None, not {quantize!r}")
    # A linear layer that shares its weight with an embedding (a tied
    # lm_head) keeps it: the embedding's lookup cannot read a packed tensor.
    shared = {id(m.weight) for m in model.modules() if isinstance(m, torch.nn.Embedding)}
    quantize_(model, config,
              filter_fn=lambda m, fqn: isinstance(m, torch.nn.Linear) and id(m.weight) not in shared)
    return model


# Inductor options of the GPU packages, per package. A decode step is a few
# hundred small kernels, each costing its launch and its ramp: combo kernels
# put the generated kernels that do not depend on each other into one
# launch (a layer's rotary embeddings and both cache writes), and the
# generated kernels' dependent-launch triggers (Hopper and later; ignored
# before) let aotirt's products, launched dependent, start loading their
# weights while the kernel ahead still runs. With the triggers the
# prefill's first token came later (bench/notes.md), so it takes the combo
# kernels alone.
CUDA_OPTIONS = {
    "prefill": {"combo_kernels": True},
    "decode": {"combo_kernels": True, "triton.enable_pdl": True},
}


def _export_pair(model, out: Path, max_cache_len: int, device: str, layers: int, shape: tuple, dtype,
                 inductor_configs, check_shims: bool, fuse_decode: bool = False, quantized: bool = False) -> str:
    """Exports prefill.pt2 and decode.pt2 of |model| into |out|; returns the
    export id stamped on both."""
    from ._export import LEAN_OPTIONS, check_package_shims
    from ._vec_isa import prepare_vec_isa

    wrapper = _CachedDecoder(model, max_cache_len).eval()

    def caches():
        return [torch.zeros(shape, dtype=dtype, device=device) for _ in range(2 * layers)]

    if device == "cpu":
        prepare_vec_isa()
    export_id = uuid.uuid4().hex
    metadata = {**((inductor_configs or {}).get("aot_inductor.metadata") or {}), EXPORT_ID_KEY: export_id}
    seq = torch.export.Dim("prompt", min=2, max=max_cache_len)
    plans = {
        # torch.export specialises a size of 1, so the prefill's dynamic
        # length starts at 2; a one-token prompt goes through decode.
        "prefill": ((torch.zeros(1, 4, dtype=torch.long, device=device), torch.arange(4, device=device), caches()),
                    {"input_ids": {1: seq}, "cache_position": {0: seq}, "caches": [None] * (2 * layers)}),
        "decode": ((torch.zeros(1, 1, dtype=torch.long, device=device), torch.arange(1, device=device), caches()),
                   None),
    }
    for name, (example, dynamic) in plans.items():
        fuse = fuse_decode and name == "decode"
        if not fuse:
            fused_layers = contextlib.nullcontext(0)
        elif quantized:
            fused_layers = _fused.fused_int4_mlps(model)
        else:
            fused_layers = _fused.fused_decoder_layers(model)
        with torch.no_grad(), _packed_decode_attention(), fused_layers:
            ep = torch.export.export(wrapper, example, dynamic_shapes=dynamic)
            path = out / f"{name}.pt2"
            configs = {**LEAN_OPTIONS, **(CUDA_OPTIONS[name] if device != "cpu" else {}), **(inductor_configs or {}),
                       "aot_inductor.metadata": metadata}
            if fuse:
                configs["aot_inductor.custom_ops_to_c_shims"] = _fused.c_shims("cpu" if device == "cpu" else "cuda")
            torch._inductor.aoti_compile_and_package(ep, package_path=str(path), inductor_configs=configs)
        if check_shims:
            check_package_shims(path, device)
    return export_id


def export_llm(model, out_dir, *, max_cache_len: int = 256, device: str = "cpu", tokenizer=None,
               quantize: str | None = None, group_size: int = 128, stop_token_ids=None,
               inductor_configs: dict | None = None, check_shims: bool = True,
               fuse_decode: bool = False) -> Path:
    """Exports a transformers decoder LM (Llama-style, Qwen2, Mistral) into
    |out_dir|: prefill.pt2, decode.pt2, llm.json and the tokenizer. Returns
    |out_dir|.

    |tokenizer| is a tokenizer.json or SentencePiece model file, a directory
    holding one, or a transformers (or tokenizers) tokenizer, saved as
    tokenizer.json. The packages multiply the query, key and value
    projections, and the MLP's gate and up projections, as one linear layer
    each (see stack_projections); |model| is as it was afterwards, unless
    |quantize| "int4" or "int8" quantized its linear layers' weights with
    torchao (in place: |model| is then changed, and keeps its projections
    stacked, computing what it did); int4 takes
    |group_size| 32, 64, 128 or 256. The caches have room for
    |max_cache_len| tokens (prompt and generated). |stop_token_ids| defaults
    to the model's eos_token_id. With |fuse_decode|, each decoder layer of
    the decode package (Llama, Qwen2, Mistral) runs as four fused products
    (_fused.py), or, with |quantize| "int4", its MLP's gate/up product makes
    SiLU-multiply in its store: aotirt's own shims, which other runtimes
    lack.
    """
    from ._export import ExportError

    if max_cache_len < 2:
        raise ExportError(f"max_cache_len must be at least 2, not {max_cache_len}")
    if quantize is not None and quantize not in QUANTIZE_KINDS:
        raise ExportError(f"quantize must be one of {QUANTIZE_KINDS} or None, not {quantize!r}")
    if quantize == "int4" and group_size not in INT4_GROUP_SIZES:
        raise ExportError(f"group_size must be one of {INT4_GROUP_SIZES} for int4, not {group_size}")
    if fuse_decode and quantize not in (None, "int4"):
        raise ExportError(f"fuse_decode takes weights that are not quantized or int4, not quantize={quantize!r}")
    tokenizer_plan = _tokenizer_plan(tokenizer, ExportError) if tokenizer is not None else None
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    model = model.eval().to(device)
    layers, shape = _cache_shape(model.config, max_cache_len)
    dtype = next(model.parameters()).dtype
    # Quantized weights stay stacked: torchao's tensors are not sliced back.
    with _projections_stacked(model, restore=quantize is None):
        if quantize is not None:
            quantize_llm(model, quantize, group_size, device)
        export_id = _export_pair(model, out, max_cache_len, device, layers, shape, dtype, inductor_configs,
                                 check_shims, fuse_decode=fuse_decode, quantized=quantize is not None)

    text = model.config.get_text_config() if hasattr(model.config, "get_text_config") else model.config
    if stop_token_ids is None:
        eos = getattr(model.generation_config, "eos_token_id", None) or getattr(text, "eos_token_id", None)
        stop_token_ids = [] if eos is None else ([eos] if isinstance(eos, int) else list(eos))
    config = {
        "format_version": LLM_FORMAT_VERSION,
        "export_id": export_id,
        "prefill": "prefill.pt2",
        "decode": "decode.pt2",
        "vocab_size": int(text.vocab_size),
        "max_cache_len": int(max_cache_len),
        "num_layers": int(layers),
        "cache_shape": list(shape),
        "cache_dtype": str(dtype).replace("torch.", ""),
        "stop_token_ids": [int(t) for t in stop_token_ids],
        "bos_token_id": getattr(text, "bos_token_id", None),
    }
    if quantize is not None:
        config["quantize"] = quantize if quantize == "int8" else f"{quantize}-g{group_size}"
    if tokenizer_plan is not None:
        name, write = tokenizer_plan
        write(out / name)
        config["tokenizer"] = name
        if name == "tokenizer.json":
            _warn_unless_byte_level(out / name)
    (out / LLM_CONFIG).write_text(json.dumps(config, indent=2) + "\n")
    return out
