"""Peak memory while a model loads its weights. The model library copies each
constant out of the package's mapped weights blob; aotirt drops the blob's
pages behind that copy, so loading costs about one copy of the weights plus
the largest constant, not two copies. Checked on a plain package and on a
frozen one (whose prepacked weights' tensor sizes are nominal, so the loader
must follow the library's own sizes), from the load trace's peak RSS."""
from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest
import torch
import torch.nn as nn

import aotirt

REPO = Path(__file__).resolve().parent.parent.parent
BUILD = Path(os.environ.get("AOTIRT_BUILD_DIR", REPO / "build"))
CLI = Path(os.environ.get("AOTIRT_CLI", BUILD / "bin" / "aotirt"))

pytestmark = pytest.mark.skipif(not CLI.exists(), reason=f"aotirt not built in {BUILD}")

WIDTH, LAYERS = 4096, 3
WEIGHT_BYTES = LAYERS * (WIDTH * WIDTH + WIDTH) * 4
LARGEST = WIDTH * WIDTH * 4


class Wide(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.Sequential(*[nn.Linear(WIDTH, WIDTH) for _ in range(LAYERS)])

    def forward(self, x):
        return self.layers(x)


@pytest.fixture(scope="module")
def packages(tmp_path_factory):
    root = tmp_path_factory.mktemp("load_memory")
    torch.manual_seed(3)
    model = Wide().eval()
    x = torch.randn(2, WIDTH)
    out = {}
    for name, freezing in (("plain", False), ("frozen", True)):
        path = root / f"wide_{name}.pt2"
        aotirt.export(model, (x,), path, device="cpu", freezing=freezing)
        out[name] = path
    return out


def _load_peak_bytes(pt2: Path) -> int:
    env = dict(os.environ, AOTIRT_LOG_LEVEL="debug", OMP_NUM_THREADS="1")
    proc = subprocess.run([str(CLI), "bench", str(pt2), "--iters", "1", "--warmup", "0"], capture_output=True,
                          text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr
    m = re.search(r"weights loaded .*peak (\d+) MiB", proc.stderr)
    assert m, proc.stderr
    return int(m.group(1)) << 20


@pytest.mark.parametrize("name", ["plain", "frozen"])
def test_loading_holds_the_weights_about_once(packages, name):
    peak = _load_peak_bytes(packages[name])
    # One copy, the largest constant still mapped while it is copied, and
    # the process itself; two copies would be far above this.
    limit = WEIGHT_BYTES + LARGEST + (48 << 20)
    assert peak <= limit, f"peak RSS while loading {peak >> 20} MiB, limit {limit >> 20} MiB " \
                          f"(weights {WEIGHT_BYTES >> 20} MiB)"
    assert peak >= WEIGHT_BYTES, "the weights were not loaded"
