# Exporting a decoder language model for `aotirt generate`: a prefill package
# (any prompt length up to the cache) and a decode package (one token), whose
# KV cache is a set of inputs that both update in place, so the runtime owns
# one cache and passes it to each without copies. llm.json beside them says
# how the runtime must shape the cache and what the stop tokens are.

from __future__ import annotations

import json
import shutil
import uuid
from pathlib import Path

import torch

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
    returns the last token's logits [1, vocab] in float32.
    """

    def __init__(self, model, max_cache_len: int):
        super().__init__()
        from transformers import StaticCache

        self.model = model
        self.cache = StaticCache(config=model.config, max_cache_len=max_cache_len)

    def forward(self, input_ids, cache_position, caches):
        for i, layer in enumerate(self.cache.layers):
            # The caches are the inputs themselves, so the model's index_copy_
            # lands in the runtime's tensors.
            layer.keys, layer.values = caches[2 * i], caches[2 * i + 1]
            layer.cumulative_length = cache_position[:1].clone().reshape(())
            layer.max_batch_size, layer.num_heads = caches[2 * i].shape[:2]
            layer.k_head_dim = layer.v_head_dim = caches[2 * i].shape[-1]
            layer.device, layer.is_initialized = caches[2 * i].device, True
        out = self.model(input_ids=input_ids, cache_position=cache_position, past_key_values=self.cache,
                         use_cache=True)
        return out.logits[:, -1, :].float()


def _cache_shape(config, max_cache_len: int) -> tuple:
    text = config.get_text_config() if hasattr(config, "get_text_config") else config
    heads = text.num_attention_heads
    kv_heads = getattr(text, "num_key_value_heads", None) or heads
    head_dim = getattr(text, "head_dim", None) or text.hidden_size // heads
    return text.num_hidden_layers, (1, kv_heads, max_cache_len, head_dim)


def export_llm(model, out_dir, *, max_cache_len: int = 256, device: str = "cpu", tokenizer=None,
               stop_token_ids=None, inductor_configs: dict | None = None, check_shims: bool = True) -> Path:
    """Exports a transformers decoder LM (Llama-style, Qwen2, Mistral) into
    |out_dir|: prefill.pt2, decode.pt2, llm.json and, when |tokenizer| names
    a SentencePiece model file, tokenizer.model. Returns |out_dir|.

    The caches have room for |max_cache_len| tokens (prompt and generated).
    |stop_token_ids| defaults to the model's eos_token_id.
    """
    from ._export import LEAN_OPTIONS, ExportError, check_package_shims
    from ._vec_isa import prepare_vec_isa

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    if max_cache_len < 2:
        raise ExportError(f"max_cache_len must be at least 2, not {max_cache_len}")
    if tokenizer is not None and not Path(tokenizer).is_file():
        raise ExportError(f"tokenizer file {tokenizer} does not exist")
    model = model.eval().to(device)
    layers, shape = _cache_shape(model.config, max_cache_len)
    dtype = next(model.parameters()).dtype
    wrapper = _CachedDecoder(model, max_cache_len).eval()

    def caches():
        return [torch.zeros(shape, dtype=dtype, device=device) for _ in range(2 * layers)]

    if device == "cpu":
        prepare_vec_isa()
    export_id = uuid.uuid4().hex
    configs = {**LEAN_OPTIONS, **(inductor_configs or {})}
    configs["aot_inductor.metadata"] = {**(configs.get("aot_inductor.metadata") or {}), EXPORT_ID_KEY: export_id}
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
        with torch.no_grad():
            ep = torch.export.export(wrapper, example, dynamic_shapes=dynamic)
            path = out / f"{name}.pt2"
            torch._inductor.aoti_compile_and_package(ep, package_path=str(path), inductor_configs=configs)
        if check_shims:
            check_package_shims(path, device)

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
    if tokenizer is not None:
        shutil.copyfile(tokenizer, out / "tokenizer.model")
        config["tokenizer"] = "tokenizer.model"
    (out / LLM_CONFIG).write_text(json.dumps(config, indent=2) + "\n")
    return out
