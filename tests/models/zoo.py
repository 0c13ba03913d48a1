# The model zoo: small models that cover what aotirt has to run (fallback
# GEMMs and convolutions, attention, several dtypes, dynamic shapes, buffer
# mutation). Each entry builds a seeded module and seeded, non-zero inputs, so
# packages and expected outputs are reproducible. Kept small so one export
# compiles in well under a minute on two cores.

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Optional

import torch
import torch.nn as nn
import torch.nn.functional as F

FP32_TOLERANCE = {"rtol": 1e-4, "atol": 1e-5}
BF16_TOLERANCE = {"rtol": 2e-2, "atol": 2e-2}


def _gen(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def _randn(gen, *shape, dtype=torch.float32):
    return torch.randn(*shape, generator=gen).to(dtype)


@dataclass
class ZooModel:
    name: str
    # Returns a fresh module in eval mode; identical weights on every call.
    build: Callable[[], nn.Module]
    # Input sets: the first is the export example; each set is run separately.
    input_sets: Callable[[], list]
    dynamic_shapes: Optional[Callable[[], object]] = None
    tolerance: dict = field(default_factory=lambda: dict(FP32_TOLERANCE))
    # Compile with plain torch._inductor.aoti_compile_and_package (no aotirt
    # metadata) instead of aotirt.export.
    plain: bool = False
    # Consecutive calls in one process with expected outputs recorded; more
    # than one only matters for models with state (buffer mutation).
    calls: int = 1
    notes: str = ""
    # Moves a built module to the device, where that takes more than .to()
    # (a quantized layer whose packing depends on the device).
    place: Optional[Callable[[nn.Module, str], nn.Module]] = None
    # Inductor options added to the lean ones of a plain export (a
    # workaround a user of torch would need as well).
    inductor_configs: dict = field(default_factory=dict)

    def on_device(self, module: nn.Module, device: str) -> nn.Module:
        return self.place(module, device) if self.place else module.to(device)


def _seeded(seed: int, make: Callable[[], nn.Module]) -> Callable[[], nn.Module]:
    def build() -> nn.Module:
        torch.manual_seed(seed)
        return make().eval()

    return build


# --- mlp --------------------------------------------------------------------


class Mlp(nn.Module):
    def __init__(self, d_in=32, d_hidden=64, d_out=16):
        super().__init__()
        self.fc1 = nn.Linear(d_in, d_hidden)
        self.fc2 = nn.Linear(d_hidden, d_out)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


def _mlp_inputs():
    return [(_randn(_gen(1), 4, 32),)]


# --- cnn --------------------------------------------------------------------


class SmallCnn(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(8)
        self.pool = nn.MaxPool2d(2)
        self.conv2 = nn.Conv2d(8, 8, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(8)
        self.head = nn.Linear(8, classes)
        # Non-trivial running statistics, so eval-mode BatchNorm is not an
        # identity and a wrong normalisation shows up in the outputs.
        for bn in (self.bn1, self.bn2):
            bn.running_mean.uniform_(-0.5, 0.5)
            bn.running_var.uniform_(0.5, 1.5)
            bn.weight.data.uniform_(0.5, 1.5)
            bn.bias.data.uniform_(-0.2, 0.2)

    def forward(self, x):
        y = self.pool(F.relu(self.bn1(self.conv1(x))))
        y = F.relu(y + self.bn2(self.conv2(y)))
        y = F.adaptive_avg_pool2d(y, 1).flatten(1)
        return self.head(y)


def _cnn_inputs():
    return [(_randn(_gen(2), 2, 3, 16, 16),)]


# --- transformer --------------------------------------------------------------


class TinyTransformer(nn.Module):
    def __init__(self, vocab=64, max_len=16, dim=32, heads=2):
        super().__init__()
        self.heads = heads
        self.tok = nn.Embedding(vocab, dim)
        self.pos = nn.Embedding(max_len, dim)
        self.ln1 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.ln2 = nn.LayerNorm(dim)
        self.up = nn.Linear(dim, 4 * dim)
        self.down = nn.Linear(4 * dim, dim)
        self.head = nn.Linear(dim, vocab)

    def forward(self, tokens):
        b, t = tokens.shape
        positions = torch.arange(t, device=tokens.device)
        x = self.tok(tokens) + self.pos(positions)
        q, k, v = self.qkv(self.ln1(x)).chunk(3, dim=-1)
        split = lambda z: z.view(b, t, self.heads, -1).transpose(1, 2)  # noqa: E731
        att = F.scaled_dot_product_attention(split(q), split(k), split(v), is_causal=True)
        x = x + self.proj(att.transpose(1, 2).reshape(b, t, -1))
        x = x + self.down(F.gelu(self.up(self.ln2(x))))
        return self.head(x)


def _transformer_inputs():
    return [(torch.randint(0, 64, (2, 16), generator=_gen(3)),)]


# --- multi_io -----------------------------------------------------------------


class MultiIo(nn.Module):
    """Float, int64 and bool inputs; float32, int64 and bool outputs."""

    def __init__(self, rows=10, dim=8):
        super().__init__()
        self.table = nn.Embedding(rows, dim)
        self.scale = nn.Parameter(torch.linspace(0.5, 1.5, dim))

    def forward(self, x, idx, mask):
        looked_up = self.table(idx)                                  # int64 -> embedding
        picked = torch.gather(x, 1, (idx % x.shape[1]).unsqueeze(1))  # int64 -> gather
        mixed = torch.where(mask, x * self.scale, looked_up)         # bool -> where
        values = mixed + picked
        return values, values.argmax(dim=1), values > 0


def _multi_io_inputs():
    g = _gen(4)
    x = _randn(g, 6, 8)
    idx = torch.randint(0, 10, (6,), generator=g)
    mask = torch.rand(6, 8, generator=g) > 0.5
    return [(x, idx, mask)]


# --- view_output -----------------------------------------------------------------


class ViewOutput(nn.Module):
    """Returns a view of its input beside a computed tensor: the package hands
    the input's own memory back as its first output (the Python API's DLPack
    test checks that no copy is made on the way in or out)."""

    def __init__(self):
        super().__init__()
        # A weight, so that the package has a weights blob: libtorch's
        # loader (the zoo's reference runner) cannot map an empty one.
        self.proj = nn.Linear(5, 16)

    def forward(self, x):
        return x.view(x.shape[0], -1), self.proj(x).sum(dim=1)


def _view_output_inputs():
    return [(_randn(_gen(21), 3, 4, 5),)]


# --- dynamic_batch --------------------------------------------------------------


class DynamicMlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(16, 32)
        self.fc2 = nn.Linear(32, 8)

    def forward(self, x):
        h = torch.tanh(self.fc1(x))
        return self.fc2(h) * x.mean(dim=1, keepdim=True)


def _dynamic_inputs():
    # Exported at batch 5 (the first set); the others run batch 37 and 1
    # (torch.export assumes dynamic sizes of at least 2: aotirt.export turns
    # off the library's lower-bound check so that batch 1 runs).
    return [(_randn(_gen(5), 5, 16),), (_randn(_gen(6), 37, 16),), (_randn(_gen(7), 1, 16),)]


def _dynamic_shapes():
    return ({0: torch.export.Dim("batch", min=1, max=64)},)


# --- bf16 ---------------------------------------------------------------------


def _bf16_mlp():
    return Mlp(32, 64, 16).to(torch.bfloat16)


def _bf16_inputs():
    return [(_randn(_gen(8), 4, 32, dtype=torch.bfloat16),)]


# --- buffer_mutation ------------------------------------------------------------


class BufferMutation(nn.Module):
    """Accumulates into a registered buffer in place, then reads it back."""

    def __init__(self):
        super().__init__()
        self.register_buffer("total", torch.full((1,), 0.5))
        self.register_buffer("calls", torch.zeros((), dtype=torch.int64))
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        self.total.add_(x.sum())
        self.calls.add_(1)
        return self.fc(x) * self.total + self.calls


def _buffer_inputs():
    return [(_randn(_gen(9), 3, 8),)]


# --- convolutions beyond 2-D ---------------------------------------------------


class Conv1dNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(4, 6, 3, stride=2, padding=1, dilation=2)
        self.up = nn.ConvTranspose1d(6, 4, 4, stride=2, padding=1, groups=2)

    def forward(self, x):
        return self.up(F.relu(self.conv(x)))


def _conv1d_inputs():
    return [(_randn(_gen(10), 2, 4, 20),)]


class Conv3dNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv3d(4, 6, 3, padding=1, groups=2)
        self.up = nn.ConvTranspose3d(6, 2, 2, stride=2)

    def forward(self, x):
        return self.up(torch.sigmoid(self.conv(x)))


def _conv3d_inputs():
    return [(_randn(_gen(11), 1, 4, 4, 6, 6),)]


class ConvTranspose2dNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.up = nn.ConvTranspose2d(4, 3, 3, stride=2, padding=1, output_padding=1)

    def forward(self, x):
        return self.up(x)


def _conv_transpose2d_inputs():
    return [(_randn(_gen(12), 2, 4, 5, 7),)]


# --- a deep, small convolution -------------------------------------------------


class DeepCnn(nn.Module):
    """A CNN's last stage at batch 1: 7x7 pixels, 256 channels in and out of a
    3x3 convolution with a bias. Few output tiles for a GPU, so aotirt's CUDA
    convolution kernels split its channels (in parallel slices on an H200)."""

    def __init__(self, classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(64, 256, 1)
        self.conv2 = nn.Conv2d(256, 256, 3, padding=1)
        self.conv3 = nn.Conv2d(256, 64, 1, bias=False)
        self.head = nn.Linear(64, classes)

    def forward(self, x):
        y = F.relu(self.conv1(x))
        y = F.relu(self.conv2(y))
        y = F.relu(x + self.conv3(y))
        return self.head(F.adaptive_avg_pool2d(y, 1).flatten(1))


def _deep_cnn_inputs():
    return [(_randn(_gen(13), 1, 64, 7, 7),)]


MODELS = [
    ZooModel("mlp", _seeded(100, Mlp), _mlp_inputs),
    ZooModel(
        "mlp_plain",
        _seeded(100, Mlp),
        _mlp_inputs,
        plain=True,
        notes="plain aoti_compile_and_package with the three lean options; no aotirt metadata",
    ),
    ZooModel("cnn", _seeded(101, SmallCnn), _cnn_inputs),
    ZooModel("transformer", _seeded(102, TinyTransformer), _transformer_inputs),
    ZooModel("multi_io", _seeded(103, MultiIo), _multi_io_inputs),
    ZooModel(
        "dynamic_batch",
        _seeded(104, DynamicMlp),
        _dynamic_inputs,
        dynamic_shapes=_dynamic_shapes,
        notes="exported at batch 5 with batch in [1, 64]; run at batch 5, 37 and 1",
    ),
    ZooModel("bf16", _seeded(105, _bf16_mlp), _bf16_inputs, tolerance=dict(BF16_TOLERANCE)),
    ZooModel(
        "buffer_mutation",
        _seeded(106, BufferMutation),
        _buffer_inputs,
        calls=2,
        notes="buffers live in the constants blob and are updated in place; 'expected' is "
        "the first call on a fresh model, 'expected_repeat' the second call in the same process",
    ),
    ZooModel("conv1d", _seeded(107, Conv1dNet), _conv1d_inputs),
    ZooModel("view_output", _seeded(111, ViewOutput), _view_output_inputs,
             notes="the first output is a view of the input"),
    ZooModel("conv3d", _seeded(108, Conv3dNet), _conv3d_inputs),
    ZooModel("conv_transpose2d", _seeded(109, ConvTranspose2dNet), _conv_transpose2d_inputs),
    ZooModel("deep_cnn", _seeded(110, DeepCnn), _deep_cnn_inputs),
]

BY_NAME = {m.name: m for m in MODELS}
