"""Tests of tests/ops/op_inventory.py: the header parser on torch's real
headers, the coverage arithmetic and the exception checks on a tiny fake
header set, and --check on a stale doc. The tests that read the real
libaotirt.so skip, visibly, when it is not built."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import op_inventory as inv  # noqa: E402

REPO = HERE.parent.parent
LIB = Path(os.environ.get("AOTIRT_BUILD_DIR", REPO / "build")) / "lib" / "libaotirt.so"
needs_library = pytest.mark.skipif(not LIB.exists(), reason=f"{LIB} not built")


def real_aoti_dir() -> Path:
    try:
        return inv.find_aoti_dir()
    except inv.InventoryError as e:
        pytest.skip(f"torch's headers not installed: {e}")


# A miniature of torch's five headers: one-line and multi-line declarations,
# a [[deprecated]] attribute, a backward op and a commented-out declaration
# the parser must not count.
FAKE_HEADERS = {
    "generated/c_shim_cpu.h": """
AOTI_TORCH_EXPORT AOTITorchError aoti_torch_cpu_mm_out(AtenTensorHandle out, AtenTensorHandle self, AtenTensorHandle mat2);
AOTI_TORCH_EXPORT AOTITorchError aoti_torch_cpu_cumsum(AtenTensorHandle self, int64_t dim, int32_t* dtype, AtenTensorHandle* ret0);
AOTI_TORCH_EXPORT AOTITorchError aoti_torch_cpu_sort(AtenTensorHandle self, int64_t dim, int32_t descending, AtenTensorHandle* ret0, AtenTensorHandle* ret1);
AOTI_TORCH_EXPORT AOTITorchError aoti_torch_cpu_topk(AtenTensorHandle self, int64_t k, AtenTensorHandle* ret0);
AOTI_TORCH_EXPORT AOTITorchError aoti_torch_cpu_max_pool2d_with_indices_backward(AtenTensorHandle grad_output, AtenTensorHandle* ret0);
// AOTI_TORCH_EXPORT AOTITorchError aoti_torch_cpu_commented_out(AtenTensorHandle self);
""",
    "c/shim_cpu.h": """
#if AT_MKLDNN_ENABLED()
AOTI_TORCH_EXPORT AOTITorchError
aoti_torch_cpu_mkldnn__convolution_pointwise(
    AtenTensorHandle X,
    AtenTensorHandle* ret0);
/* AOTI_TORCH_EXPORT AOTITorchError aoti_torch_cpu_also_commented(int x); */
#endif
""",
    "generated/c_shim_cuda.h": """
AOTI_TORCH_EXPORT AOTITorchError aoti_torch_cuda_mm_out(AtenTensorHandle out, AtenTensorHandle self, AtenTensorHandle mat2);
AOTI_TORCH_EXPORT AOTITorchError aoti_torch_cuda_sort(AtenTensorHandle self, AtenTensorHandle* ret0);
AOTI_TORCH_EXPORT AOTITorchError aoti_torch_cuda_convolution_backward(AtenTensorHandle grad_output, AtenTensorHandle* ret0);
""",
    "generated/c_shim_aten.h": """
AOTI_TORCH_EXPORT AOTITorchError aoti_torch_aten_amax(AtenTensorHandle self, AtenTensorHandle* ret0);
""",
    "c/shim_deprecated.h": """
[[deprecated(
    "aoti_torch_mm_out is deprecated // and will be removed.")]]
AOTI_TORCH_EXPORT AOTITorchError aoti_torch_mm_out(
    AtenTensorHandle out,
    AtenTensorHandle self,
    AtenTensorHandle mat2);
""",
}

EMPTY_EXCEPTIONS = {"cpu": {}, "cuda": {}, "generic": {}}


@pytest.fixture
def fake_aoti(tmp_path: Path) -> Path:
    root = tmp_path / "include" / "torch" / "csrc" / "inductor" / "aoti_torch"
    for rel, text in FAKE_HEADERS.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def write_json(path: Path, data) -> Path:
    path.write_text(json.dumps(data))
    return path


# ---- the real headers -------------------------------------------------------

def test_real_headers_hold_known_ops():
    ops = inv.parse_headers(real_aoti_dir())
    assert "aoti_torch_cpu_cumsum" in ops["cpu"]
    assert "aoti_torch_cuda_mm_out" in ops["cuda"]
    assert "aoti_torch_aten_amax" in ops["generic"]
    # Declared over two lines in c/shim_cpu.h.
    assert "aoti_torch_cpu_mkldnn__convolution_pointwise" in ops["cpu"]
    # c/shim_deprecated.h: names without a device part.
    assert "aoti_torch_mm_out" in ops["generic"]
    assert ops["cpu"]["aoti_torch_cpu_cumsum"] == "generated/c_shim_cpu.h"


def test_real_headers_have_backward_ops_and_they_stay_out_of_the_surface():
    ops = inv.parse_headers(real_aoti_dir())
    inventory = inv.build_inventory(ops, set(), EMPTY_EXCEPTIONS, {})
    for device in inv.DEVICES:
        d = inventory["devices"][device]
        assert d["backward_excluded"] > 0
        assert not any("backward" in r["symbol"] for r in d["ops"])
        assert d["surface"] + d["backward_excluded"] == len(ops[device]) + len(ops["generic"])


# ---- the parser and the arithmetic on fake headers ---------------------------

def test_parser_skips_comments_and_reads_multiline_declarations(fake_aoti):
    ops = inv.parse_headers(fake_aoti)
    assert sorted(ops["cpu"]) == [
        "aoti_torch_cpu_cumsum",
        "aoti_torch_cpu_max_pool2d_with_indices_backward",
        "aoti_torch_cpu_mkldnn__convolution_pointwise",
        "aoti_torch_cpu_mm_out",
        "aoti_torch_cpu_sort",
        "aoti_torch_cpu_topk",
    ]
    assert sorted(ops["generic"]) == ["aoti_torch_aten_amax", "aoti_torch_mm_out"]


def test_parser_rejects_a_declaration_outside_the_files_prefix():
    with pytest.raises(inv.InventoryError, match="prefix"):
        inv.parse_header_text(
            "AOTI_TORCH_EXPORT AOTITorchError aoti_torch_cuda_mm_out(int x);", "aoti_torch_cpu_")


def test_coverage_arithmetic(fake_aoti):
    ops = inv.parse_headers(fake_aoti)
    exported = {"aoti_torch_cpu_mm_out", "aoti_torch_cpu_cumsum", "aoti_torch_cuda_mm_out",
                "aoti_torch_mm_out", "aoti_torch_empty_strided",
                # Exported but backward: must not count as coverage.
                "aoti_torch_cuda_convolution_backward"}
    exceptions = {"cpu": {"aoti_torch_cpu_topk": "not used by inference graphs here"},
                  "cuda": {}, "generic": {}}
    result = inv.build_inventory(ops, exported, exceptions, {})
    cpu, cuda = result["devices"]["cpu"], result["devices"]["cuda"]
    # CPU: 5 cpu ops (one backward left out) + 2 generic = 7.
    assert (cpu["surface"], cpu["provided"], cpu["exceptions"], cpu["missing"],
            cpu["backward_excluded"]) == (7, 3, 1, 3, 1)
    assert cpu["coverage_percent"] == 42  # 3/7 = 42.86%, rounded down
    # CUDA: 2 cuda ops + 2 generic = 4; the CPU exception does not apply.
    assert (cuda["surface"], cuda["provided"], cuda["exceptions"], cuda["missing"]) == (4, 2, 0, 2)
    assert cuda["coverage_percent"] == 50
    rows = {r["symbol"]: r for r in cpu["ops"]}
    assert rows["aoti_torch_cpu_topk"]["status"] == "exception"
    assert rows["aoti_torch_aten_amax"]["generic"] and rows["aoti_torch_aten_amax"]["status"] == "missing"
    assert [r["symbol"] for r in cpu["ops"]] == sorted(rows)
    # One CPU exception in 7 ops is 14%: over the 10% limit.
    assert cpu["exceptions_over_limit"] and not cuda["exceptions_over_limit"]
    text = inv.render_markdown(result)
    assert "CPU coverage: 42% (3 of 7 ops provided)" in text.splitlines()
    assert "CUDA coverage: 50% (2 of 4 ops provided)" in text.splitlines()
    assert "**Warning:** CPU exceptions are 1 of 7 ops (14%), not under 10%." in text
    assert "| `aoti_torch_cpu_topk` | not used by inference graphs here |" in text


def test_generic_exception_applies_to_both_devices(fake_aoti):
    ops = inv.parse_headers(fake_aoti)
    exceptions = {"cpu": {}, "cuda": {}, "generic": {"aoti_torch_aten_amax": "lowered by Inductor"}}
    result = inv.build_inventory(ops, set(), exceptions, {})
    for device in inv.DEVICES:
        assert result["devices"][device]["exceptions"] == 1
    # Listed once in the exceptions section.
    assert inv.render_markdown(result).count("| `aoti_torch_aten_amax` | lowered by Inductor |") == 1


def test_results_fill_the_tested_dtypes(fake_aoti):
    ops = inv.parse_headers(fake_aoti)
    results = {"aoti_torch_cpu_mm_out": {"dtypes": ["float32", "bfloat16"], "status": "pass"},
               "aoti_torch_cpu_cumsum": {"dtypes": ["int64"], "status": "fail"}}
    result = inv.build_inventory(ops, {"aoti_torch_cpu_mm_out"}, EMPTY_EXCEPTIONS, results)
    text = inv.render_markdown(result, "results.json")
    assert "| `aoti_torch_cpu_mm_out` | provided | bfloat16, float32 |  |" in text
    assert "| `aoti_torch_cpu_cumsum` | missing | int64 (fail) |  |" in text
    assert "| `aoti_torch_cpu_sort` | missing |  |  |" in text


def test_malformed_results_are_an_error(tmp_path):
    bad = write_json(tmp_path / "r.json", {"aoti_torch_cpu_mm_out": {"dtypes": "float32", "status": "ok"}})
    with pytest.raises(inv.InventoryError, match="dtypes"):
        inv.load_results(bad)


# ---- exceptions ---------------------------------------------------------------

@pytest.mark.parametrize("exceptions, message", [
    ({"cpu": {"aoti_torch_cpu_no_such_op": "r"}}, "unknown op"),
    # A CUDA op under "cpu" is in the wrong section.
    ({"cpu": {"aoti_torch_cuda_sort": "r"}}, "it is a cuda op"),
    ({"cpu": {"aoti_torch_cpu_max_pool2d_with_indices_backward": "r"}}, "backward"),
    ({"cpu": {"aoti_torch_cpu_mm_out": "r"}}, "provides it"),
])
def test_bad_exceptions_are_errors(fake_aoti, tmp_path, exceptions, message):
    ops = inv.parse_headers(fake_aoti)
    loaded = inv.load_exceptions(write_json(tmp_path / "exc.json", exceptions))
    with pytest.raises(inv.InventoryError, match=message):
        inv.build_inventory(ops, {"aoti_torch_cpu_mm_out"}, loaded, {})


@pytest.mark.parametrize("data, message", [
    ({"cpu": {"aoti_torch_cpu_sort": ""}}, "needs a reason"),
    ({"mps": {}}, "unknown sections"),
    (["aoti_torch_cpu_sort"], "expected an object"),
])
def test_malformed_exceptions_file(tmp_path, data, message):
    with pytest.raises(inv.InventoryError, match=message):
        inv.load_exceptions(write_json(tmp_path / "exc.json", data))


def test_committed_exceptions_file_is_well_formed():
    exceptions = inv.load_exceptions(inv.DEFAULT_EXCEPTIONS)
    ops = inv.parse_headers(real_aoti_dir())
    for group, entries in exceptions.items():
        for symbol in entries:
            assert symbol in ops[group], f"{group}/{symbol}: not an op of torch's {group} headers"


# ---- the command line ---------------------------------------------------------

@pytest.fixture
def fake_cli(fake_aoti, tmp_path, monkeypatch):
    """main() over the fake headers, a placeholder library and a fixed symbol
    list, so the command line is tested without a build."""
    library = tmp_path / "libaotirt.so"
    library.write_bytes(b"")
    monkeypatch.setattr(inv, "read_exported_symbols", lambda lib: {"aoti_torch_cpu_mm_out"})
    exceptions = write_json(tmp_path / "exc.json", EMPTY_EXCEPTIONS)
    doc = tmp_path / "ops.md"

    def cli(*extra):
        return inv.main(["--torch-include", str(fake_aoti.parents[3]), "--library", str(library),
                         "--exceptions", str(exceptions), "--doc", str(doc), *extra])
    return cli, doc


def test_check_detects_a_stale_doc(fake_cli, capsys):
    cli, doc = fake_cli
    assert cli("--check") == 1  # no doc yet
    assert cli() == 0
    assert cli("--check") == 0
    doc.write_text(doc.read_text().replace("CPU coverage: 14%", "CPU coverage: 99%"))
    capsys.readouterr()
    assert cli("--check") == 1
    err = capsys.readouterr().err
    assert "is stale" in err and "CPU coverage: 99%" in err


def test_generation_is_deterministic_and_writes_json(fake_cli, tmp_path):
    cli, doc = fake_cli
    assert cli("--json", str(tmp_path / "a.json")) == 0
    first = doc.read_text()
    assert cli("--json", str(tmp_path / "b.json")) == 0
    assert doc.read_text() == first
    assert (tmp_path / "a.json").read_text() == (tmp_path / "b.json").read_text()
    data = json.loads((tmp_path / "a.json").read_text())
    assert data["devices"]["cpu"]["provided"] == 1
    assert "generated by `tests/ops/op_inventory.py`" in first


def test_missing_headers_or_library_exit_2(tmp_path, fake_aoti):
    script = str(HERE / "op_inventory.py")
    run = lambda *a: subprocess.run([sys.executable, script, *a], capture_output=True, text=True)
    proc = run("--torch-include", str(tmp_path / "nowhere"), "--doc", str(tmp_path / "d.md"))
    assert proc.returncode == 2 and "no aoti_torch headers" in proc.stderr
    (fake_aoti / "c" / "shim_deprecated.h").unlink()
    proc = run("--torch-include", str(fake_aoti), "--doc", str(tmp_path / "d.md"))
    assert proc.returncode == 2 and "missing shim headers: c/shim_deprecated.h" in proc.stderr
    proc = run("--library", str(tmp_path / "no.so"), "--doc", str(tmp_path / "d.md"))
    assert proc.returncode == 2 and "library not found" in proc.stderr


# ---- the real library -----------------------------------------------------------

@needs_library
def test_real_library_provides_the_matrix_products():
    exported = inv.read_exported_symbols(LIB)
    result = inv.build_inventory(inv.parse_headers(real_aoti_dir()), exported,
                                 inv.load_exceptions(inv.DEFAULT_EXCEPTIONS), {})
    rows = {r["symbol"]: r for r in result["devices"]["cpu"]["ops"]}
    assert rows["aoti_torch_cpu_mm_out"]["status"] == "provided"
    assert 0 < result["devices"]["cpu"]["coverage_percent"] <= 100


def test_committed_doc_is_current():
    assert inv.main(["--check"]) == 0, \
        "docs/ops.md is stale: run .venv/bin/python tests/ops/op_inventory.py"


@needs_library
def test_shim_lists_match_the_library():
    exported = {s for s in inv.read_exported_symbols(LIB) if s.startswith("aoti_torch_")}
    listed = inv.read_shim_lists()
    if not any(s.startswith("aoti_torch_cuda_") for s in exported):
        listed = inv.read_shim_lists(inv.SHIM_LISTS[:1])
    assert exported == listed


def test_a_generic_op_served_on_the_cpu_only_is_missing_for_cuda(monkeypatch):
    ops = {"cpu": {"aoti_torch_cpu_mm_out": "h"}, "cuda": {"aoti_torch_cuda_mm_out": "h"},
           "generic": {"aoti_torch_nonzero": "g", "aoti_torch_view_dtype": "g"}}
    monkeypatch.setattr(inv, "GENERIC_DEVICES", {"aoti_torch_nonzero": ("cpu",)})
    result = inv.build_inventory(ops, {"aoti_torch_nonzero", "aoti_torch_view_dtype"}, EMPTY_EXCEPTIONS, {})
    status = {d: {r["symbol"]: r["status"] for r in result["devices"][d]["ops"]} for d in ("cpu", "cuda")}
    assert status["cpu"]["aoti_torch_nonzero"] == "provided"
    assert status["cuda"]["aoti_torch_nonzero"] == "missing"
    assert status["cuda"]["aoti_torch_view_dtype"] == "provided"


def test_generic_devices_names_real_generic_ops():
    ops = inv.parse_headers(real_aoti_dir())
    assert set(inv.GENERIC_DEVICES) <= set(ops["generic"])
