# The architecture zoo: real model classes from torchvision, timm and
# transformers, built with random weights and small configurations (no
# downloads), exported as a user would: plain
# torch._inductor.aoti_compile_and_package with aotirt's lean options. It
# covers CNNs, ViTs and Swin, segmentation and detection heads, a video CNN,
# decoder LLMs (one with a static KV cache updated in place), encoder and
# encoder-decoder transformers, an audio encoder behind an STFT front end, a
# dynamic sequence length, bfloat16, and an int4 weight-only linear layer.
#
# The libraries are pinned beside torch in scripts/setup.sh; each builder
# imports its library only when called, so listing the zoo needs none of them.

from __future__ import annotations

import torch
import torch.nn as nn

from zoo import BF16_TOLERANCE, ZooModel, _gen, _randn

# Deep random-weight networks sum in a different order than eager PyTorch's
# kernels (oneDNN convolutions, blocked GEMMs), so the bound is looser than
# the small zoo's.
DEEP_TOLERANCE = {"rtol": 1e-3, "atol": 1e-3}
LOOSE_BF16 = {"rtol": 5e-2, "atol": 5e-2}


def _seeded(seed, make):
    def build():
        torch.manual_seed(seed)
        return make().eval()

    return build


def _image(seed, n=1, size=64, channels=3):
    return lambda: [(_randn(_gen(seed), n, channels, size, size),)]


class FirstOutput(nn.Module):
    """Returns one named tensor (or several) of a model whose forward
    returns a dict, a ModelOutput or a list."""

    def __init__(self, model, keys=None, **kwargs):
        super().__init__()
        self.model = model
        self.keys = keys
        self.kwargs = kwargs

    def forward(self, *args):
        out = self.model(*args, **self.kwargs)
        return out if self.keys is None else tuple(out[k] for k in self.keys)


# --- torchvision ----------------------------------------------------------------


def _tv(name, **kwargs):
    def make():
        import torchvision

        family, _, short = name.rpartition(".")
        where = getattr(torchvision.models, family) if family else torchvision.models
        return getattr(where, short)(weights=None, **kwargs)

    return make


def _tv_densenet():
    from torchvision.models.densenet import DenseNet

    return DenseNet(growth_rate=16, block_config=(2, 3, 4), num_init_features=32, num_classes=10)


def _tv_vit():
    from torchvision.models.vision_transformer import VisionTransformer

    return VisionTransformer(image_size=64, patch_size=16, num_layers=2, num_heads=4, hidden_dim=64,
                             mlp_dim=128, num_classes=10)


def _tv_swin(v2):
    def make():
        from torchvision.models import swin_transformer as sw

        block = sw.SwinTransformerBlockV2 if v2 else sw.SwinTransformerBlock
        merge = sw.PatchMergingV2 if v2 else sw.PatchMerging
        return sw.SwinTransformer(patch_size=[4, 4], embed_dim=32, depths=[2, 2], num_heads=[2, 4],
                                  window_size=[4, 4], num_classes=10, block=block, downsample_layer=merge)

    return make


def _tv_segmentation(name):
    def make():
        import torchvision

        model = getattr(torchvision.models.segmentation, name)(weights=None, weights_backbone=None,
                                                               num_classes=5)
        return FirstOutput(model, keys=["out"])

    return make


class RetinaNetHeads(nn.Module):
    """RetinaNet's ResNet-50 FPN backbone and its classification and box
    heads: the detector without its data-dependent box decoding and NMS."""

    def __init__(self):
        super().__init__()
        import torchvision

        det = torchvision.models.detection.retinanet_resnet50_fpn(weights=None, weights_backbone=None,
                                                                  num_classes=5)
        self.backbone = det.backbone
        self.head = det.head

    def forward(self, x):
        features = list(self.backbone(x).values())
        out = self.head(features)
        return out["cls_logits"], out["bbox_regression"]


# --- timm -------------------------------------------------------------------------


def _timm(name, **kwargs):
    def make():
        import timm

        return timm.create_model(name, pretrained=False, num_classes=10, **kwargs)

    return make


# --- transformers -------------------------------------------------------------------


def _tokens(seed, batch, length, vocab=128):
    return torch.randint(0, vocab, (batch, length), generator=_gen(seed))


def _hf(model_cls, config_cls, keys, dtype=None, **config):
    def make():
        import transformers

        cfg = getattr(transformers, config_cls)(**config)
        model = getattr(transformers, model_cls)(cfg)
        if dtype is not None:
            model = model.to(dtype)
        return FirstOutput(model, keys=keys, use_cache=False) if "use_cache" in _forward_args(model) \
            else FirstOutput(model, keys=keys)

    return make


def _forward_args(model):
    import inspect

    return inspect.signature(model.forward).parameters


_DECODER = dict(vocab_size=128, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=128)


class KvCacheLM(nn.Module):
    """Llama with its static KV cache as inputs that the model updates in
    place (index_copy_), as aotirt.export_llm exports decoders: token ids,
    their cache positions, then a key and a value cache per layer."""

    def __init__(self):
        super().__init__()
        import transformers
        from aotirt._llm import _CachedDecoder

        self.inner = _CachedDecoder(transformers.LlamaForCausalLM(transformers.LlamaConfig(**_DECODER)), 16)

    def forward(self, input_ids, cache_position, k0, v0, k1, v1):
        return self.inner(input_ids, cache_position, [k0, v0, k1, v1])


def _kv_cache_inputs():
    # Earlier tokens' keys and values already in the cache (positions 0-5),
    # the new tokens at 6-9: the output depends on what the cache holds.
    gen = _gen(41)
    caches = []
    for _ in range(4):
        c = torch.zeros(1, 2, 16, 16)
        c[:, :, :6] = torch.randn(1, 2, 6, 16, generator=gen)
        caches.append(c)
    return [(_tokens(41, 1, 4), torch.arange(6, 10), *caches)]


class SeqToSeq(nn.Module):
    """An encoder-decoder model's logits for a source and a target sequence."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids, decoder_input_ids):
        return self.model(input_ids=input_ids, decoder_input_ids=decoder_input_ids, use_cache=False).logits


def _t5():
    import transformers

    cfg = transformers.T5Config(vocab_size=128, d_model=64, d_kv=16, d_ff=128, num_layers=2, num_heads=4,
                                decoder_start_token_id=0)
    return SeqToSeq(transformers.T5ForConditionalGeneration(cfg))


def _bart():
    import transformers

    cfg = transformers.BartConfig(vocab_size=128, d_model=64, encoder_layers=2, decoder_layers=2,
                                  encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=128,
                                  decoder_ffn_dim=128, max_position_embeddings=64)
    return SeqToSeq(transformers.BartForConditionalGeneration(cfg))


class LogMelWhisper(nn.Module):
    """Whisper's encoder behind a log-mel front end computed in the graph:
    an STFT with a Hann window, the power spectrum, a mel filter bank and
    Whisper's log compression."""

    def __init__(self, n_fft=64, hop=16, mels=16):
        super().__init__()
        import transformers
        from transformers.audio_utils import mel_filter_bank

        cfg = transformers.WhisperConfig(num_mel_bins=mels, d_model=64, encoder_layers=2, encoder_attention_heads=4,
                                         encoder_ffn_dim=128, decoder_layers=1, decoder_attention_heads=4,
                                         decoder_ffn_dim=128, max_source_positions=32, vocab_size=128,
                                         pad_token_id=1, bos_token_id=2, eos_token_id=3,
                                         decoder_start_token_id=2)
        self.encoder = transformers.WhisperForConditionalGeneration(cfg).get_encoder()
        self.n_fft, self.hop = n_fft, hop
        self.register_buffer("window", torch.hann_window(n_fft))
        filters = mel_filter_bank(num_frequency_bins=n_fft // 2 + 1, num_mel_filters=mels, min_frequency=0.0,
                                  max_frequency=8000.0, sampling_rate=16000, norm="slaney", mel_scale="slaney")
        self.register_buffer("mel", torch.tensor(filters, dtype=torch.float32))

    def forward(self, audio):
        spec = torch.stft(audio, self.n_fft, self.hop, window=self.window, return_complex=True)
        power = spec[..., :-1].abs() ** 2
        mel = (self.mel.T @ power).clamp(min=1e-10).log10()
        mel = torch.maximum(mel, mel.amax(dim=(-2, -1), keepdim=True) - 8.0)
        return self.encoder(input_features=(mel + 4.0) / 4.0).last_hidden_state


def _audio_inputs():
    # 64 STFT frames of 16 samples: the encoder's two convolutions halve
    # them to its 32 positions.
    return [(_randn(_gen(51), 1, 64 * 16),)]


class HiddenStates(nn.Module):
    """An encoder's last hidden state for a batch of token ids."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids):
        return self.model(input_ids=input_ids).last_hidden_state


def _bert_dynamic():
    import transformers

    cfg = transformers.BertConfig(vocab_size=128, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                                  intermediate_size=128, max_position_embeddings=64)
    return HiddenStates(transformers.BertModel(cfg))


def _bert_inputs():
    return [(_tokens(61, 2, 12),), (_tokens(62, 2, 5),), (_tokens(63, 2, 31),)]


def _bert_dynamic_shapes():
    return {"input_ids": {1: torch.export.Dim("seq", min=2, max=64)}}


class Int4Linear(nn.Module):
    """Two linear layers, the second int4 weight-only quantized by torchao
    (group size 32, torchao's CPU packing)."""

    def __init__(self):
        super().__init__()
        self.up = nn.Linear(64, 128)
        self.down = nn.Linear(128, 64).to(torch.bfloat16)

    def forward(self, x):
        return self.down(torch.relu(self.up(x)).to(torch.bfloat16)).float()


def _int4_place(module, device):
    """torchao's int4 packing is per device: its CPU layout lowers to
    _weight_int4pack_mm_for_cpu, its CUDA tile layout to _weight_int4pack_mm."""
    from torchao.quantization import Int4WeightOnlyConfig, quantize_

    module = module.to(device)
    if device == "cpu":
        from torchao.prototype.quantization.int4 import PrototypeInt4WeightOnlyConfig

        config = PrototypeInt4WeightOnlyConfig(group_size=32, set_inductor_config=False)
    else:
        config = Int4WeightOnlyConfig(group_size=32, int4_packing_format="tile_packed_to_4d",
                                      set_inductor_config=False)
    quantize_(module, config, filter_fn=lambda m, fqn: fqn == "down")
    return module


# torch 2.11's vectorised C++ code for Swin's shifted windows does not
# compile (a masked load typed as a scalar; pytorch/pytorch#179135): these
# packages take scalar CPU kernels, as a user of torch would have to.
SCALAR_CPU_KERNELS = {"cpp.simdlen": 1}


def _m(name, make, inputs, tolerance=None, seed=0, **kw):
    return ZooModel(name=name, build=_seeded(seed, make), input_sets=inputs,
                    tolerance=dict(tolerance or DEEP_TOLERANCE), plain=True, **kw)


MODELS = [
    # torchvision: classification
    _m("tv_resnet18", _tv("resnet18", num_classes=10), _image(1)),
    _m("tv_mobilenet_v3_small", _tv("mobilenet_v3_small", num_classes=10), _image(2)),
    _m("tv_efficientnet_b0", _tv("efficientnet_b0", num_classes=10), _image(3)),
    _m("tv_regnet_y_400mf", _tv("regnet_y_400mf", num_classes=10), _image(4)),
    _m("tv_shufflenet_v2", _tv("shufflenet_v2_x0_5", num_classes=10), _image(5)),
    _m("tv_squeezenet", _tv("squeezenet1_1", num_classes=10), _image(6)),
    _m("tv_densenet", _tv_densenet, _image(7)),
    _m("tv_convnext_tiny", _tv("convnext_tiny", num_classes=10), _image(8)),
    _m("tv_mnasnet", _tv("mnasnet0_5", num_classes=10), _image(9)),
    _m("tv_vit", _tv_vit, _image(10)),
    _m("tv_swin", _tv_swin(False), _image(11), inductor_configs=SCALAR_CPU_KERNELS),
    _m("tv_swin_v2", _tv_swin(True), _image(12), inductor_configs=SCALAR_CPU_KERNELS),
    # torchvision: segmentation, detection heads, video
    _m("tv_lraspp", _tv_segmentation("lraspp_mobilenet_v3_large"), _image(13)),
    _m("tv_deeplabv3", _tv_segmentation("deeplabv3_mobilenet_v3_large"), _image(14)),
    _m("tv_retinanet_heads", RetinaNetHeads, _image(15)),
    _m("tv_r3d_18", _tv("video.r3d_18", num_classes=10), lambda: [(_randn(_gen(16), 1, 3, 4, 32, 32),)]),
    # timm
    _m("timm_vit_tiny", _timm("vit_tiny_patch16_224", img_size=64), _image(21)),
    _m("timm_deit_tiny_distilled", _timm("deit_tiny_distilled_patch16_224", img_size=64), _image(22)),
    _m("timm_convnext_atto", _timm("convnext_atto"), _image(23)),
    _m("timm_mobilevit_xxs", _timm("mobilevit_xxs"), _image(24)),
    _m("timm_levit_128s", _timm("levit_128s", img_size=64), _image(25)),
    _m("timm_regnetx_002", _timm("regnetx_002"), _image(26)),
    _m("timm_ghostnet", _timm("ghostnet_100"), _image(27)),
    _m("timm_poolformer_s12", _timm("poolformer_s12"), _image(28)),
    _m("timm_edgenext_xx_small", _timm("edgenext_xx_small"), _image(29)),
    _m("timm_mixer_s16", _timm("mixer_s16_224", img_size=64), _image(30)),
    # transformers: decoders, encoders, encoder-decoders, audio
    _m("hf_gpt2", _hf("GPT2LMHeadModel", "GPT2Config", ["logits"], vocab_size=128, n_embd=64, n_layer=2, n_head=4,
                      n_positions=64, bos_token_id=0, eos_token_id=0), lambda: [(_tokens(31, 2, 10),)]),
    _m("hf_llama_gqa", _hf("LlamaForCausalLM", "LlamaConfig", ["logits"], **_DECODER),
       lambda: [(_tokens(32, 2, 10),)]),
    _m("hf_mistral", _hf("MistralForCausalLM", "MistralConfig", ["logits"], sliding_window=8, **_DECODER),
       lambda: [(_tokens(33, 1, 12),)]),
    _m("hf_qwen2_bf16", _hf("Qwen2ForCausalLM", "Qwen2Config", ["logits"], dtype=torch.bfloat16, **_DECODER),
       lambda: [(_tokens(34, 1, 10),)], tolerance=LOOSE_BF16),
    _m("hf_llama_kv_cache", KvCacheLM, _kv_cache_inputs,
       notes="transformers' static cache as inputs updated in place (aotirt.export_llm's form)"),
    _m("hf_bert_dynamic", _bert_dynamic, _bert_inputs, dynamic_shapes=_bert_dynamic_shapes),
    _m("hf_t5", _t5, lambda: [(_tokens(35, 1, 9), _tokens(36, 1, 5))]),
    _m("hf_bart", _bart, lambda: [(_tokens(37, 1, 9), _tokens(38, 1, 5))]),
    _m("hf_whisper_stft", LogMelWhisper, _audio_inputs),
    _m("hf_wav2vec2", _hf("Wav2Vec2Model", "Wav2Vec2Config", ["last_hidden_state"], hidden_size=64,
                          num_hidden_layers=2, num_attention_heads=4, intermediate_size=128,
                          conv_dim=(32, 32, 32), conv_stride=(5, 2, 2), conv_kernel=(10, 3, 3),
                          num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=4),
       lambda: [(_randn(_gen(39), 1, 800),)]),
    _m("hf_segformer", _hf("SegformerForSemanticSegmentation", "SegformerConfig", ["logits"],
                           num_encoder_blocks=2, depths=[1, 1], sr_ratios=[2, 1], hidden_sizes=[16, 32],
                           num_attention_heads=[1, 2], mlp_ratios=[2, 2], patch_sizes=[7, 3], strides=[4, 2],
                           decoder_hidden_size=32, num_labels=5), _image(40)),
    # torchao
    _m("ao_int4_linear", Int4Linear, lambda: [(_randn(_gen(42), 4, 64),)], tolerance=LOOSE_BF16,
       notes="int4 weight-only (group 32) linear layer from torchao", place=_int4_place),
]

BY_NAME = {m.name: m for m in MODELS}
assert len(BY_NAME) == len(MODELS), "duplicate architecture zoo names"
