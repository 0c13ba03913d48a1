# Tests of the harness's own logic, without any model: the process watcher
# (marker timing, peak RSS, exit codes, timeouts) and the report (schema rows,
# ratios, target checks, the three output files).

import json
import sys
import textwrap
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import procmon  # noqa: E402
import report  # noqa: E402


def _py(code: str) -> list:
    return [sys.executable, "-c", textwrap.dedent(code)]


def test_marker_time_and_peak_rss():
    obs = procmon.run_observed(
        _py(
            """
            import time
            time.sleep(0.3)
            print("first_output", flush=True)
            block = bytearray(300 * 2**20)  # touched: counted in the RSS
            for i in range(0, len(block), 4096):
                block[i] = 1
            time.sleep(0.2)  # long enough for a poll to see it
            """
        ),
        marker=r"^first_output",
    )
    assert obs.ok(), obs.failure()
    assert 0.3 <= obs.marker_s < obs.wall_s
    assert obs.max_rss_mb >= 300
    assert obs.polled_hwm_mb is not None and obs.polled_hwm_mb >= 300


def test_polled_peak_rss_leaves_out_the_harness_memory():
    # wait4's ru_maxrss of a child starts from the forking process's own
    # memory; the polled VmHWM is the child's alone.
    ballast = bytearray(400 * 2**20)
    for i in range(0, len(ballast), 4096):
        ballast[i] = 1
    obs = procmon.run_observed(_py("import time; time.sleep(0.3)"))
    del ballast
    assert obs.ok(), obs.failure()
    assert obs.max_rss_mb >= 400
    assert obs.polled_hwm_mb is not None and obs.polled_hwm_mb < 100, obs.polled_hwm_mb


def test_marker_absent_leaves_none():
    obs = procmon.run_observed(_py("print('something else')"), marker=r"^first_output")
    assert obs.ok()
    assert obs.marker_s is None
    assert "something else" in obs.stdout


def test_failure_is_reported_with_stderr():
    obs = procmon.run_observed(_py("import sys; sys.stderr.write('boom happened\\n'); sys.exit(3)"))
    assert not obs.ok()
    assert obs.returncode == 3
    assert "boom happened" in obs.failure()


def test_timeout_kills_the_process_group():
    obs = procmon.run_observed(_py("import time; time.sleep(30)"), timeout_s=0.5)
    assert obs.timed_out
    assert not obs.ok()
    assert obs.wall_s < 10
    assert "timed out" in obs.failure()


def test_mapped_libraries_are_seen():
    obs = procmon.run_observed(_py("import ctypes, time; ctypes.CDLL('libm.so.6'); time.sleep(0.6)"),
                               watch_maps=True)
    assert obs.ok()
    assert any("libm" in p for p in obs.mapped_libs)


def _detail(workload, system, median, cold=1.0, rss=100.0, status="ok"):
    return {"workload": workload, "system": system, "status": status, "median_us": median, "p99_us": median * 1.1,
            "cold_start_s": cold, "load_ms": 5.0, "peak_rss_mb": rss, "peak_device_mb": None, "extra": 1}


def _rows():
    details = [
        _detail("gpt2_decode", "libtorch-aoti", 1000.0, cold=1.0, rss=800.0),
        _detail("gpt2_decode", "aotirt", 850.0, cold=0.2, rss=100.0),
        _detail("gpt2_decode", "aotirt-cudagraph", 400.0, cold=0.2, rss=100.0),
        _detail("gpt2_decode", "torch.compile-reduce-overhead", 600.0),
        _detail("mlp", "libtorch-aoti", 40.0, cold=1.0, rss=800.0),
        _detail("mlp", "aotirt", 39.0, cold=0.5, rss=300.0),
    ]
    return [report.schema_row(d) for d in details]


def test_schema_rows_have_exactly_the_issue_keys():
    row = report.schema_row(_detail("mlp", "eager", 10.0))
    assert list(row) == ["workload", "system", "median_us", "p99_us", "cold_start_s", "load_ms", "peak_rss_mb",
                         "peak_device_mb"]


def test_ratios_are_to_libtorch():
    ratios = report.compute_ratios(_rows())
    assert ratios["gpt2_decode"]["aotirt"]["median_us"] == pytest.approx(0.85)
    assert ratios["mlp"]["aotirt"]["peak_rss_mb"] == pytest.approx(300 / 800)
    assert ratios["gpt2_decode"]["libtorch-aoti"]["median_us"] == pytest.approx(1.0)


def _result(checks, target_start, workload):
    found = [c for c in checks if c["target"].startswith(target_start) and c["workload"] == workload]
    assert len(found) == 1, (target_start, workload, checks)
    return found[0]["result"]


def test_targets_pass_and_fail():
    rows = _rows()
    checks = report.evaluate_targets(rows, report.compute_ratios(rows), {"ratio": 0.03})
    assert _result(checks, "steady latency", "gpt2_decode") == "pass"  # 0.85x
    assert _result(checks, "steady latency", "mlp") == "fail"  # 0.975x
    assert _result(checks, "cold start", "gpt2_decode") == "pass"  # 0.2x
    assert _result(checks, "cold start", "mlp") == "fail"  # 0.5x
    assert _result(checks, "peak RSS", "mlp") == "fail"  # 0.375x
    assert _result(checks, "footprint", "-") == "fail"  # 3%
    assert _result(checks, "CUDA graphs: median", "gpt2_decode") == "pass"  # 0.4x
    assert _result(checks, "CUDA graphs: faster", "gpt2_decode") == "pass"  # 400 < 600


def test_graph_target_fails_when_not_faster_than_reduce_overhead():
    details = [_detail("gpt2_decode", "libtorch-aoti", 1000.0), _detail("gpt2_decode", "aotirt-cudagraph", 450.0),
               _detail("gpt2_decode", "torch.compile-reduce-overhead", 450.0)]
    rows = [report.schema_row(d) for d in details]
    checks = report.evaluate_targets(rows, report.compute_ratios(rows), None)
    assert _result(checks, "CUDA graphs: median", "gpt2_decode") == "pass"
    assert _result(checks, "CUDA graphs: faster", "gpt2_decode") == "fail"  # equal is not faster
    assert _result(checks, "footprint", "-") == "n/a"


def test_unsynchronized_latency_is_invalid():
    rows = _rows()
    checks = report.evaluate_targets(rows, report.compute_ratios(rows), None,
                                     unsynchronized={("gpt2_decode", "aotirt")})
    assert _result(checks, "steady latency", "gpt2_decode") == "invalid"
    assert _result(checks, "cold start", "gpt2_decode") == "pass"


def test_write_all_makes_the_three_files(tmp_path):
    rows = _rows()
    ratios = report.compute_ratios(rows)
    doc = {
        "commit": "0123456789abcdef", "device": "test device", "rows": rows, "footprint": {"ratio": 0.01},
        "physical_limit": None, "notes": ["a note"], "ratios": ratios,
        "targets": report.evaluate_targets(rows, ratios, {"ratio": 0.01}), "label": "test", "date": "2026-01-01",
        "row_details": {f"{r['workload']}/{r['system']}": {"status": "ok"} for r in rows},
    }
    written = report.write_all(doc, tmp_path / "2026-01-01-test")
    names = sorted(p.name for p in written)
    pytest.importorskip("matplotlib")
    assert names == ["2026-01-01-test.json", "2026-01-01-test.md", "2026-01-01-test.png"]
    loaded = json.loads((tmp_path / "2026-01-01-test.json").read_text())
    assert loaded["commit"] == "0123456789abcdef"
    assert loaded["rows"] == rows
    md = (tmp_path / "2026-01-01-test.md").read_text()
    assert "0123456789abcdef" in md and "| gpt2_decode |" in md and "FAIL" in md
