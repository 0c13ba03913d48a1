# Tests of bench/llm.py without a GPU: the bandwidth limit's bytes, the
# targets, and the report from kept measurements, merged with an earlier
# run's rows.

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import llm  # noqa: E402

CFG = {"num_layers": 16, "cache_shape": [1, 8, 2048, 64], "cache_dtype": "bfloat16"}


def test_cache_bytes_per_token():
    # A key and a value per layer: 2 * 16 * 8 * 64 values of 2 bytes a position.
    assert llm.cache_bytes_per_token(CFG, 1) == 32768
    assert llm.cache_bytes_per_token(CFG, 192) == 32768 * 192
    assert llm.cache_bytes_per_token({**CFG, "cache_dtype": "float32"}, 1) == 65536


def row(workload, system, tps, frac=None, ttft=0.01, cold=None):
    return {"workload": workload, "system": system, "tokens_per_s": tps, "bandwidth_fraction": frac,
            "time_to_first_token_s": ttft, "cold_start_s": cold}


def test_targets():
    rows = [row("llama_bf16_p128_g128", "aotirt", 600, 0.71, 0.007, 0.3),
            row("llama_bf16_p128_g128", "torch.compile-reduce-overhead", 400, 0.2, 0.014, 1.0),
            row("llama_int4_ctx2048", "aotirt", 500, 0.49, 0.03),
            row("llama_int4_ctx2048", "torch.compile-reduce-overhead", 600, 0.3, 0.02),
            {"workload": "llama_int4_ctx2048", "system": "eager", "error": "boom"}]
    got = {t: m for t, m in llm.targets(rows)}
    texts = list(got)
    assert any("71% of the bandwidth limit (target 70%)" in t and got[t] for t in texts)
    assert [got[t] for t in texts if t.startswith("llama_bf16_p128_g128: decode 600")] == [True]
    assert [got[t] for t in texts if t.startswith("llama_bf16_p128_g128: time to first token")] == [True]
    assert any("49% of the bandwidth limit (target 50%)" in t and not got[t] for t in texts)
    assert any("cold start" in t and "0.30x" in t and got[t] for t in texts)
    # int4's decode is behind torch.compile's, and so is its first token.
    assert [got[t] for t in texts if t.startswith("llama_int4_ctx2048: decode 500")] == [False]
    assert [got[t] for t in texts if t.startswith("llama_int4_ctx2048: time to first token")] == [False]
    assert len(texts) == 7


def kept(tmp_path, kind, system, tps, first=0.007, replays=None, **extra):
    d = tmp_path / "tiny" / "measured"
    d.mkdir(parents=True, exist_ok=True)
    (d / "bandwidth.json").write_text(json.dumps({"bytes_per_s": 1e12}))
    shapes = {name: {"time_to_first_token_s": first, "prefill_tokens_per_s": p / first, "tokens_per_s": tps,
                     "tokens": [1, 2], **({"graph_replays": replays} if replays is not None else {})}
              for name, p, _ in llm.TINY_SHAPES}
    (d / f"{system}-{kind}.json").write_text(json.dumps({"cold_start_s": 0.2, "first_generation_s": 0.3,
                                                         "shapes": shapes, **extra}))


def report_only(monkeypatch, tmp_path, device, device_name, *extra):
    """Runs llm.py's report from the kept measurements; its results files."""
    results = tmp_path / "results"
    monkeypatch.setattr(sys, "argv", ["llm.py", "--report-only", "--tiny", "--device", device, "--kinds", "bf16",
                                      "--work", str(tmp_path), "--results", str(results),
                                      "--device-name", device_name, *extra])
    assert llm.main() == 0
    return results


def test_report_merges_an_earlier_run(tmp_path, monkeypatch):
    pytest.importorskip("transformers")
    kept(tmp_path, "bf16", "aotirt", 1000.0, replays=15, weight_bytes=int(1e9), unshared_weight_bytes=int(2e9))
    kept(tmp_path, "bf16", "libtorch-aoti", 400.0)
    earlier = {"commit": "abc1234", "device": "a test CPU", "rows": [
        {**row("llama_bf16_p16_g16", "torch.compile-reduce-overhead", 500.0, 0.5, 0.02, 10.0),
         "limit_tokens_per_s": 1000.0, "prefill_tokens_per_s": 1.0, "first_generation_s": 11.0,
         "peak_device_mb": None},
        {**row("llama_bf16_p16_g16", "aotirt", 1.0), "limit_tokens_per_s": 1.0, "prefill_tokens_per_s": 1.0,
         "first_generation_s": 1.0, "peak_device_mb": None}]}
    (tmp_path / "earlier.json").write_text(json.dumps(earlier))
    monkeypatch.setenv("AOTIRT_BENCH_COMMIT", "def5678")
    results = report_only(monkeypatch, tmp_path, "cpu", "a test CPU", "--label", "t",
                          "--merge-from", str(tmp_path / "earlier.json"))
    (js,) = results.glob("*-t.json")
    doc = json.loads(js.read_text())
    assert doc["commit"] == "def5678" and doc["device"] == "a test CPU"
    p16 = [r for r in doc["rows"] if r["workload"] == "llama_bf16_p16_g16"]
    # This run's aotirt row wins over the earlier one; torch.compile's comes
    # from the earlier run with its commit; the order follows SYSTEMS.
    assert [r["system"] for r in p16] == ["aotirt", "torch.compile-reduce-overhead", "libtorch-aoti"]
    assert p16[0]["tokens_per_s"] == 1000.0 and "commit" not in p16[0]
    assert p16[1]["commit"] == "abc1234"
    # The limit: 1e12 bytes/s over the weights and the mean context's cache.
    cfg = {"num_layers": 2, "cache_shape": [1, 2, llm.TINY_CACHE_LEN, 32], "cache_dtype": "bfloat16"}
    limit = 1e12 / (1e9 + llm.cache_bytes_per_token(cfg, 16 + 16 / 2))
    assert p16[0]["limit_tokens_per_s"] == pytest.approx(limit)
    assert p16[0]["bandwidth_fraction"] == pytest.approx(1000.0 / limit)
    assert p16[0]["graph_replays"] == 15
    md = js.with_suffix(".md").read_text()
    assert "torch.compile-reduce-overhead (run of abc1234)" in md
    assert "kept from an earlier run" in md and "abc1234" in md
    assert "the two packages apart: 1907 MiB" in md


def test_report_leaves_out_an_earlier_run_of_another_device(tmp_path, monkeypatch, capsys):
    pytest.importorskip("transformers")
    kept(tmp_path, "bf16", "aotirt", 1000.0, weight_bytes=int(1e9), unshared_weight_bytes=int(2e9))
    earlier = {"commit": "abc1234", "device": "another GPU", "rows": [
        {**row("llama_bf16_p16_g16", "torch.compile-reduce-overhead", 500.0, 0.5, 0.02, 10.0),
         "limit_tokens_per_s": 1000.0, "prefill_tokens_per_s": 1.0, "first_generation_s": 11.0,
         "peak_device_mb": None}]}
    (tmp_path / "earlier.json").write_text(json.dumps(earlier))
    results = report_only(monkeypatch, tmp_path, "cpu", "a test CPU", "--label", "t",
                          "--merge-from", str(tmp_path / "earlier.json"))
    (js,) = results.glob("*-t.json")
    doc = json.loads(js.read_text())
    assert [r["system"] for r in doc["rows"] if r["workload"] == "llama_bf16_p16_g16"] == ["aotirt"]
    assert "measured on another GPU, this run on a test CPU: its rows are left out" in capsys.readouterr().out
    assert "kept from an earlier run" not in js.with_suffix(".md").read_text()


def test_results_are_named_after_the_gpu(tmp_path, monkeypatch):
    # Without --label the results name the GPU's model, not always an H200.
    pytest.importorskip("transformers")
    from measure_util import device_label

    assert device_label("NVIDIA H200") == "h200"
    assert device_label("NVIDIA H100 80GB HBM3") == "h100"
    assert device_label("NVIDIA A100-SXM4-40GB") == "a100"
    assert device_label("NVIDIA L4") == "l4"
    assert device_label("NVIDIA GeForce RTX 4090") == "cuda"
    assert device_label("") == "cuda"
    kept(tmp_path, "bf16", "aotirt", 1000.0, weight_bytes=int(1e9), unshared_weight_bytes=int(2e9))
    results = report_only(monkeypatch, tmp_path, "cuda", "NVIDIA H100 80GB HBM3")
    assert [p.name.split("-", 3)[-1] for p in results.glob("*.json")] == ["h100-llm.json"]


def test_report_reads_the_cache_shape_of_aotirts_own_pair(tmp_path, monkeypatch):
    # On CUDA aotirt alone exports only its fused bfloat16 pair: the limit's
    # cache bytes come from that pair's llm.json, not from the model config.
    pytest.importorskip("transformers")
    kept(tmp_path, "bf16", "aotirt", 1000.0, weight_bytes=int(1e9), unshared_weight_bytes=int(2e9))
    cfg = {"num_layers": 3, "cache_shape": [1, 4, 64, 16], "cache_dtype": "bfloat16"}
    (tmp_path / "tiny" / "bf16-fused").mkdir(parents=True)
    (tmp_path / "tiny" / "bf16-fused" / "llm.json").write_text(json.dumps(cfg))
    results = report_only(monkeypatch, tmp_path, "cuda", "NVIDIA H100 80GB HBM3", "--systems", "aotirt")
    (js,) = results.glob("*.json")
    (p16,) = [r for r in json.loads(js.read_text())["rows"] if r["workload"] == "llama_bf16_p16_g16"]
    assert p16["limit_tokens_per_s"] == pytest.approx(1e12 / (1e9 + llm.cache_bytes_per_token(cfg, 16 + 16 / 2)))


def test_unknown_system_is_a_usage_error(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(sys, "argv", ["llm.py", "--systems", "nope", "--work", str(tmp_path)])
    with pytest.raises(SystemExit) as e:
        llm.main()
    assert e.value.code == 2
    assert "unknown system 'nope'" in capsys.readouterr().err


def test_only_the_packages_the_systems_run_are_exported():
    both = ["bf16", "int4"]
    # On CUDA aotirt runs the fused pairs, not the plain ones.
    assert llm.packages_to_export(both, ["aotirt"], "cuda") == [("bf16", "bf16-fused"), ("int4", "int4-fused")]
    assert llm.packages_to_export(both, ["aotirt"], "cpu") == [("bf16", "bf16"), ("int4", "int4")]
    # libtorch's runner needs the plain pairs; transformers' systems none.
    assert llm.packages_to_export(["bf16"], ["aotirt", "libtorch-aoti"], "cuda") == [
        ("bf16", "bf16"), ("bf16", "bf16-fused")]
    assert llm.packages_to_export(both, ["eager", "torch.compile-reduce-overhead"], "cuda") == []
