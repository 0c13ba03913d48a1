"""CPU packages get the host's vector ISA: a lean export in a fresh Inductor
cache, and one in a cache whose probe an earlier lean process spoilt, both
compile for the ISA that a normal (libtorch-linked) probe finds; and
`aotirt inspect` warns about a scalar CPU package on a CPU with vector
instructions."""
from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(REPO / "python"))

from test_bad_input import CLI, rewrite_package, run_cli, zoo  # noqa: E402,F401

PYTHON = sys.executable


def host_has_vector_isa() -> bool:
    if platform.machine() not in ("x86_64", "AMD64"):
        return False
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return False
    return any(" avx2" in line for line in text.splitlines() if line.startswith("flags"))


def python(code: str, cache: Path, *args) -> str:
    """Runs `code` in a fresh interpreter with its own Inductor cache; returns
    its last line of output."""
    env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=str(cache), PYTHONPATH=str(REPO / "python"))
    proc = subprocess.run([PYTHON, "-c", code, *map(str, args)], capture_output=True, text=True,
                          env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout.strip().splitlines()[-1]


NORMAL_PROBE = """
from torch._inductor import cpu_vec_isa
print(str(cpu_vec_isa.pick_vec_isa()).upper())
"""

LEAN_PROBE = """
from torch._inductor import config, cpu_vec_isa
with config.patch({"aot_inductor.link_libtorch": False}):
    print(str(cpu_vec_isa.pick_vec_isa()).upper())
"""

EXPORT = """
import sys, torch, aotirt
m = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4)).eval()
aotirt.export(m, (torch.randn(4, 16),), sys.argv[1], device="cpu")
print(aotirt.read_metadata(sys.argv[1]).get("AOTI_CPU_ISA", ""))
"""


@pytest.fixture(scope="module")
def host_best(tmp_path_factory) -> str:
    """The ISA a normal configuration picks in a fresh cache."""
    if not host_has_vector_isa():
        pytest.skip("this CPU has no AVX2: there is no vector ISA to expect")
    best = python(NORMAL_PROBE, tmp_path_factory.mktemp("inductor-normal"))
    assert best != "INVALID_VEC_ISA", "a normal Inductor probe finds no vector ISA on an AVX2 CPU"
    return best


def test_lean_export_in_a_fresh_cache_is_vectorised(host_best, tmp_path):
    isa = python(EXPORT, tmp_path / "inductor", tmp_path / "m.pt2")
    assert isa == host_best, f"package compiled for {isa!r}, the host's best is {host_best!r}"


def test_export_repairs_a_probe_spoilt_by_a_lean_process(host_best, tmp_path):
    cache = tmp_path / "inductor"
    # The trap: the first probe of this cache runs under the lean options.
    assert python(LEAN_PROBE, cache) == "INVALID_VEC_ISA", "the lean probe no longer spoils the cache"
    assert python(LEAN_PROBE, cache) == "INVALID_VEC_ISA", "a spoilt probe should stay spoilt"
    isa = python(EXPORT, cache, tmp_path / "m.pt2")
    assert isa == host_best, f"package compiled for {isa!r}, the host's best is {host_best!r}"
    # Repaired on disk: a plain lean process (no aotirt) sees the ISA again.
    assert python(LEAN_PROBE, cache) == host_best


def test_prepare_vec_isa_is_the_one_line_helper(host_best, tmp_path):
    cache = tmp_path / "inductor"
    python(LEAN_PROBE, cache)
    code = "import aotirt; print(aotirt.prepare_vec_isa().upper())"
    assert python(code, cache) == host_best


@pytest.mark.skipif(not CLI.exists(), reason=f"aotirt CLI not built at {CLI}")
def test_inspect_warns_about_a_scalar_cpu_package(zoo, tmp_path):
    if not host_has_vector_isa():
        pytest.skip("this CPU has no AVX2: a scalar package is what it can run")
    good = run_cli(["inspect", zoo["mlp"]["pt2"], "--json"], tmp_path)
    assert good.returncode == 0, good.stderr
    assert json.loads(good.stdout)["warnings"] == []
    assert "warning" not in good.stderr

    scalar = tmp_path / "scalar.pt2"
    rewrite_package(zoo["mlp"]["pt2"], scalar,
                    edit_metadata=lambda m: m.__setitem__("AOTI_CPU_ISA", "INVALID_VEC_ISA"))
    text = run_cli(["inspect", scalar], tmp_path)
    assert text.returncode == 0, text.stderr
    assert "aotirt: warning:" in text.stderr and "without vector instructions" in text.stderr
    assert "prepare_vec_isa" in text.stderr
    js = run_cli(["inspect", scalar, "--json"], tmp_path)
    warnings = json.loads(js.stdout)["warnings"]
    assert len(warnings) == 1 and "INVALID_VEC_ISA" in warnings[0]
    # It still runs: the warning is advice, not a refusal.
    out = tmp_path / "out"
    run = run_cli(["run", scalar, *sum((["--input", i] for i in zoo["mlp"]["inputs"]), []),
                   "--output-dir", out], tmp_path)
    assert run.returncode == 0, run.stderr
    assert "without vector instructions" in run.stderr
