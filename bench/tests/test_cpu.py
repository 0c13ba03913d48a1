# Tests of the CPU benchmark's own logic, without a GPU and without compiling
# a package: the CPU targets (latency, RSS and cold start against libtorch's
# runner, the count against onnxruntime), the ratios per thread count, the
# thread counts from the command line down to every measured process (with a
# fake aotirt and a fake libtorch runner), the per-package export records,
# the CPU markdown, the CPU workloads, and the onnxruntime row on a tiny
# model (skipped, visibly, when onnxruntime is not installed).

import json
import os
import stat
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import procmon  # noqa: E402
import report  # noqa: E402
import run  # noqa: E402

W7 = report.CPU_WORKLOAD_ORDER


@pytest.fixture(autouse=True)
def _fresh_procmon():
    procmon._stopping.clear()
    yield
    procmon._stopping.clear()


def _row(w, s, t, median, rss=100.0, cold=1.0):
    return {"workload": w, "system": s, "threads": t, "median_us": median,
            "p99_us": None if median is None else median * 1.1,
            "cold_start_s": cold, "load_ms": 1.0, "peak_rss_mb": rss, "peak_device_mb": None}


def _checks(checks, t, target):
    return {c["workload"]: c for c in checks if c["threads"] == t and c["target"].startswith(target)}


# ---- targets and ratios ----


def test_cpu_targets_per_thread_count():
    rows = []
    for i, w in enumerate(W7):
        rows.append(_row(w, "libtorch-aoti", 1, 100.0, rss=400.0, cold=0.5))
        # aotirt: 0.85x on the first six, 0.95x on the last; RSS 0.25x; cold 0.35x on mlp.
        rows.append(_row(w, "aotirt", 1, 85.0 if i < 6 else 95.0, rss=100.0, cold=0.175 if w == "mlp" else 0.1))
        # At 2 threads libtorch's runner is twice as fast and aotirt is not.
        rows.append(_row(w, "libtorch-aoti", 2, 50.0, rss=400.0, cold=0.5))
        rows.append(_row(w, "aotirt", 2, 85.0, rss=100.0, cold=0.1))
    ratios = report.compute_cpu_ratios(rows)
    assert set(ratios) == {"t1", "t2"}
    assert ratios["t1"]["mlp"]["aotirt"]["median_us"] == pytest.approx(0.85)
    assert ratios["t2"]["mlp"]["aotirt"]["median_us"] == pytest.approx(1.7)
    checks = report.evaluate_cpu_targets(rows, ratios)
    lat1, lat2 = _checks(checks, 1, "median latency"), _checks(checks, 2, "median latency")
    assert [lat1[w]["result"] for w in W7] == ["pass"] * 6 + ["fail"]
    assert all(lat2[w]["result"] == "fail" for w in W7)
    assert all(c["result"] == "pass" for c in _checks(checks, 1, "peak RSS").values())
    cold = _checks(checks, 1, "cold start")
    assert cold["mlp"]["result"] == "fail" and cold["mlp"]["value"] == pytest.approx(0.35)
    assert cold["vit_s16_b1"]["result"] == "pass"
    # No onnxruntime rows: the count has nothing to compare.
    ort = [c for c in checks if "onnxruntime" in c["target"]]
    assert [c["result"] for c in ort] == ["n/a", "n/a"]
    # 7 workloads x 3 metrics + the count, per thread count.
    assert len(checks) == 2 * (3 * 7 + 1)


@pytest.mark.parametrize("ort_medians, result, wins", [
    # aotirt takes 100 us everywhere. Equal medians count as no slower.
    ([100, 100, 120, 150, 200, 50, 50], "pass", 5),
    ([100, 120, 150, 200, 50, 50, 50], "fail", 4),
    # onnxruntime has no latency for one workload (bfloat16): not compared,
    # so 5 of the other 6 are needed.
    ([120, 150, 200, 300, None, 400, 50], "pass", 5),
    ([120, 150, 200, 300, None, 50, 50], "fail", 4),
])
def test_ort_count_needs_five_of_seven(ort_medians, result, wins):
    rows = []
    for w, o in zip(W7, ort_medians):
        rows += [_row(w, "libtorch-aoti", 1, 110.0), _row(w, "aotirt", 1, 100.0), _row(w, "onnxruntime", 1, o)]
    reasons = {f"{w}/onnxruntime/t1": "onnxruntime has no CPU kernel for Add(14)"
               for w, o in zip(W7, ort_medians) if o is None}
    checks = report.evaluate_cpu_targets(rows, report.compute_cpu_ratios(rows), reasons)
    (c,) = [c for c in checks if "onnxruntime" in c["target"]]
    assert c["limit"] == 5 and c["comparison"] == ">="
    assert c["result"] == result and c["value"] == wins
    assert c["compared"] == sum(o is not None for o in ort_medians)
    if None in ort_medians:
        assert "not compared" in c["detail"] and "Add(14)" in c["detail"]


def test_ort_count_waits_for_rows_not_measured_yet():
    rows = []
    for i, w in enumerate(W7):
        measured = i < 3
        rows += [_row(w, "aotirt", 1, 100.0 if measured else None),
                 _row(w, "onnxruntime", 1, 150.0 if measured else None)]
    pending = {f"{w}/{s}/t1" for w in W7[3:] for s in ("aotirt", "onnxruntime")}
    (c,) = [c for c in report.evaluate_cpu_targets(rows, {}, pending=pending) if "onnxruntime" in c["target"]]
    assert c["result"] == "n/a" and c["value"] == 3
    (c,) = [c for c in report.evaluate_cpu_targets(rows, {}) if "onnxruntime" in c["target"]]
    assert c["result"] == "fail"  # the same rows, failed rather than pending


def test_ort_required_share():
    assert report.ort_required(7) == 5
    assert report.ort_required(2) == 2
    assert report.ort_required(1) == 1
    assert report.ort_required(4) == 3


def test_ratios_to_onnxruntime_stay_within_a_thread_count():
    rows = [_row("mlp", "onnxruntime", 1, 10.0), _row("mlp", "aotirt", 1, 5.0),
            _row("mlp", "onnxruntime", 2, 20.0), _row("mlp", "aotirt", 2, 5.0)]
    r = report.compute_cpu_ratios(rows, baseline="onnxruntime", metrics=["median_us"])
    assert r["t1"]["mlp"]["aotirt"] == {"median_us": 0.5}
    assert r["t2"]["mlp"]["aotirt"] == {"median_us": 0.25}


def _cpu_doc(rows, details):
    ratios = report.compute_cpu_ratios(rows)
    return {"kind": "cpu", "label": "cpu", "date": "2026-01-01", "commit": "abc", "device": "a CPU (2 cores)",
            "rows": rows, "row_details": details, "ratios": ratios, "thread_counts": [1, 2],
            "systems": report.CPU_SYSTEMS,
            "ratios_vs_onnxruntime": report.compute_cpu_ratios(rows, "onnxruntime", ["median_us"]),
            "targets": report.evaluate_cpu_targets(rows, ratios), "footprint": {}, "notes": ["a note"]}


def test_cpu_markdown_has_a_table_per_thread_count_and_the_failures(tmp_path):
    rows, details = [], {}
    for t in (1, 2):
        for s, med in (("aotirt", 50.0), ("libtorch-aoti", 100.0), ("onnxruntime", 80.0)):
            rows.append(_row("mlp", s, t, med * t))
            details[f"mlp/{s}/t{t}"] = {"status": "ok", "rel_err_vs_reference": 1e-7}
        rows.append(_row("mlp", "aotirt-frozen", t, None))
        details[f"mlp/aotirt-frozen/t{t}"] = {
            "status": "failed", "reason": "aotirt bench exit 1: missing shims: aoti_torch_cpu_mkldnn_rnn_layer"}
    md = report.render_markdown(_cpu_doc(rows, details))
    for heading in ("### 1 thread", "### 2 threads", "## Median latency relative to libtorch-aoti",
                    "## Median latency relative to onnxruntime", "### mlp, 1 thread", "### mlp, 2 threads"):
        assert heading in md, heading
    assert "| aotirt | 50.0 | 55.0 | 0.50x | 0.62x |" in md
    assert "failed: aotirt bench exit 1: missing shims: aoti_torch_cpu_mkldnn_rnn_layer" in md
    assert "no slower than onnxruntime on at least 1 of 1 workloads | - | 1 of 1 | ≥ 1 | PASS" in md
    written = report.write_all(_cpu_doc(rows, details), tmp_path / "2026-01-01-cpu")
    assert {p.suffix for p in written} >= {".json", ".md"}
    assert json.loads((tmp_path / "2026-01-01-cpu.json").read_text())["kind"] == "cpu"


# ---- thread counts ----


def test_threads_option():
    assert run.parse_args(["all", "--device", "cpu"]).thread_counts == [1, 2]
    assert run.parse_args(["all", "--device", "cpu", "--quick"]).thread_counts == [1]
    a = run.parse_args(["all", "--device", "cpu", "--threads", "2,1"])
    assert a.thread_counts == [1, 2] and a.threads is None
    a = run.parse_args(["all", "--device", "cuda", "--threads", "4"])
    assert a.threads == 4 and a.thread_counts is None
    for bad in (["--device", "cuda", "--threads", "1,2"], ["--device", "cpu", "--threads", "0"],
                ["--device", "cpu", "--threads", "1,1"], ["--device", "cpu", "--threads", "two"]):
        with pytest.raises(SystemExit):
            run.parse_args(["all"] + bad)


def _harness(tmp_path, *extra, build=None):
    argv = ["all", "--device", "cpu", "--work", str(tmp_path / "work"),
            "--aotirt-build", str(build or tmp_path / "build"), "--cold-runs", "1", "--iters", "3", "--warmup", "1"]
    h = run.Harness(run.parse_args(argv + list(extra)))
    h._env_cache = {"torch_lib": str(tmp_path), "library_dirs": []}
    return h


def test_cpu_defaults_rows_and_environments(tmp_path):
    h = _harness(tmp_path)
    assert h.workloads == report.CPU_WORKLOAD_ORDER
    assert h.systems == report.CPU_SYSTEMS
    assert h.thread_counts == [1, 2]
    assert h.row_path("mlp", "aotirt", 2).name == "mlp__aotirt__t2.json"
    assert h.row_path("mlp", "aotirt").name == "mlp__aotirt.json"  # CUDA's names stay
    assert run.row_key("mlp", "onnxruntime", 1) == "mlp/onnxruntime/t1"
    for t in (1, 2):
        env = h.base_env(t)
        assert env["OMP_NUM_THREADS"] == env["OPENBLAS_NUM_THREADS"] == env["MKL_NUM_THREADS"] == str(t)
    assert h.python_env(1)["TORCHINDUCTOR_CACHE_DIR"] != h.python_env(2)["TORCHINDUCTOR_CACHE_DIR"]
    assert h.warm_command("mlp", "torch.compile", 2)[-2:] == ["--threads", "2"]
    assert h.cpu_artifacts()[:4] == ["t1", "t2", "frozen-t1", "frozen-t2"]
    assert run.Harness.artifact_flags("t2") == ["--key", "t2", "--package-name", "model.t2.pt2", "--cpp-threads", "2"]
    assert run.Harness.artifact_flags("frozen-t1")[-3:] == ["--cpp-threads", "1", "--freezing"]
    assert run.Harness.artifact_flags("onnx") == ["--onnx"]
    assert _harness(tmp_path, "--systems", "eager").cpu_artifacts() == ["t1"]
    assert h.rows_total() == 7 * 7 * 2
    with pytest.raises(SystemExit):
        _harness(tmp_path, "--systems", "aotirt-cudagraph")


def test_a_failed_package_fails_only_its_rows(tmp_path):
    h = _harness(tmp_path, "--workloads", "mlp", "--systems", "aotirt,aotirt-frozen,eager")
    wdir = _fake_cpu_workload(h, packages=("t1", "t2"))
    h._record_artifact("mlp", "frozen-t1", "exit 1: freezing failed")
    assert not h.exported("mlp")  # frozen-t2 is neither written nor failed
    h._record_artifact("mlp", "frozen-t2", "exit 1: freezing failed")
    assert h.exported("mlp") and h.export_failure("mlp") is None
    d = h.measure_aotirt("mlp", graph=False, threads=2, frozen=True)
    assert d["status"] == "failed" and "frozen-t2 package failed: exit 1: freezing failed" in d["reason"]
    # Written later: the record no longer applies.
    (wdir / "model.frozen.t1.pt2").write_bytes(b"PK")
    m = h.manifest("mlp")
    m["packages"]["frozen-t1"] = "model.frozen.t1.pt2"
    h._save_manifest("mlp", m)
    assert h.artifact_failure("mlp", "frozen-t1") is None
    h._record_artifact("mlp", "frozen-t1", None)
    assert set(json.loads((wdir / "export_failed.json").read_text())["artifacts"]) == {"frozen-t2"}


def test_a_workload_fails_whole_only_when_every_export_failed(tmp_path):
    h = _harness(tmp_path, "--workloads", "mlp", "--systems", "aotirt", "--threads", "1")
    h._record_artifact("mlp", "t1", "exit 1: unsupported op")
    assert h.export_failure("mlp") == "t1: exit 1: unsupported op"
    assert h.phase_measure() is True
    row = json.loads(h.row_path("mlp", "aotirt", 1).read_text())
    assert row["status"] == "failed" and row["threads"] == 1 and "unsupported op" in row["reason"]


def _fake_exports(h, monkeypatch, fail=()):
    """_export_one replaced: each call writes its artifact (inputs and
    references too) unless its key is in `fail`; returns the log of keys."""
    calls = []

    def export_one(workload, lean, default, extra=()):
        extra = list(extra)
        key = "onnx" if extra == ["--onnx"] else extra[extra.index("--key") + 1]
        calls.append((key, lean, default, extra))
        if key in fail:
            return "exit 1: no"
        wdir = _fake_cpu_workload(h, packages=()) if h.manifest(workload) is None else h.wdir(workload)
        m = h.manifest(workload)
        if key == "onnx":
            (wdir / "model.onnx").write_bytes(b"onnx")
            m["onnx"] = {"file": "model.onnx", "exporter": "fake"}
        else:
            name = extra[extra.index("--package-name") + 1]
            (wdir / name).write_bytes(b"PK")
            m.setdefault("packages", {})[key] = name
        h._save_manifest(workload, m)
        return None

    monkeypatch.setattr(h, "_export_one", export_one)
    monkeypatch.setattr(h, "ort_missing", lambda: [])
    return calls


def test_cpu_exports_each_package_once_and_records_failures(tmp_path, monkeypatch):
    h = _harness(tmp_path, "--workloads", "mlp")
    checked = []
    monkeypatch.setattr(h, "_check_libtorch_cpu", lambda w, key: checked.append(key))
    calls = _fake_exports(h, monkeypatch, fail={"frozen-t2"})
    assert h._export_cpu("mlp", check=True) is None
    assert [c[0] for c in calls] == ["t1", "t2", "frozen-t1", "frozen-t2", "onnx"]
    assert all(c[1] for c in calls[:4]) and not calls[4][1]  # --lean for the packages only
    assert checked == ["t1", "t2", "frozen-t1"]  # libtorch's runner checks what was written
    assert h.exported("mlp") and h.export_failure("mlp") is None
    assert h.artifact_failure("mlp", "frozen-t2") == "exit 1: no"
    # The next call has nothing to do; --retry-failed redoes the failed one only.
    calls.clear()
    assert h._export_cpu("mlp", check=False) is None and calls == []
    h2 = _harness(tmp_path, "--workloads", "mlp", "--retry-failed")
    calls2 = _fake_exports(h2, monkeypatch)
    assert h2._export_cpu("mlp", check=False) is None
    assert [c[0] for c in calls2] == ["frozen-t2"]
    assert h2.artifact_failure("mlp", "frozen-t2") is None and h2.artifact_done("mlp", "frozen-t2")


def test_cpu_exports_stop_at_the_budget(tmp_path, monkeypatch):
    h = _harness(tmp_path, "--workloads", "mlp", "--systems", "aotirt")
    calls = _fake_exports(h, monkeypatch)
    h.budget.seconds = run.EXPORT_GUESS_S - 1
    assert h._export_cpu("mlp", check=False) == "budget" and calls == []
    assert not h.exported("mlp")


def _fake_cpu_workload(h, packages=("t1", "t2")):
    wdir = h.wdir("mlp")
    (wdir / "inputs").mkdir(parents=True, exist_ok=True)
    (wdir / "reference").mkdir(parents=True, exist_ok=True)
    np.save(wdir / "inputs" / "input0.npy", np.ones((2, 3), np.float32))
    np.save(wdir / "reference" / "output0.npy", np.ones((2, 2), np.float32))
    for k in packages:
        (wdir / f"model.{k.replace('-', '.')}.pt2").write_bytes(b"PK")
    wdir.joinpath("manifest.json").write_text(json.dumps({
        "workload": "mlp", "quick": False, "inputs": [{"file": "inputs/input0.npy", "dtype": "float32"}],
        "reference": ["reference/output0.npy"],
        "packages": {k: f"model.{k.replace('-', '.')}.pt2" for k in packages},
        "libtorch_packages": {k: f"model.{k.replace('-', '.')}.pt2" for k in packages}}))
    return wdir


def _fake_program(path: Path, log: Path, marker: str, json_line: bool = True) -> Path:
    """A stand-in for `aotirt` or libtorch's runner: logs its arguments and
    OMP_NUM_THREADS, prints the first-output line and, for a timing call,
    one JSON line."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(f"""\
        #!{sys.executable}
        import json, os, sys
        args = sys.argv[1:]
        if "--help" in args:
            print("--json --iters --warmup")
            sys.exit(0)
        with open({str(log)!r}, "a") as f:
            f.write(json.dumps({{"args": args, "omp": os.environ.get("OMP_NUM_THREADS")}}) + "\\n")
        print({marker!r}, flush=True)
        if "--json" in args:
            print(json.dumps({{"median_us": 10.0, "p99_us": 12.0, "load_ms": 1.0, "peak_rss_mb": 9.0,
                              "synchronized": True}}))
        """))
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_every_cpp_row_runs_its_thread_counts_package_with_omp_pinned(tmp_path):
    log = tmp_path / "calls.jsonl"
    build = tmp_path / "build"
    _fake_program(build / "bin" / "aotirt", log, "output0: float32 [2, 2] -> x")
    h = _harness(tmp_path, "--workloads", "mlp", "--systems", "aotirt,libtorch-aoti", build=build)
    _fake_program(h.runner_bin, log, "first_output")
    _fake_cpu_workload(h)
    h.build_runner = lambda: None  # the fake is the runner
    assert h.phase_measure() is True
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    for t in (1, 2):
        pkg = str(h.wdir("mlp") / f"model.t{t}.pt2")
        mine = [c for c in calls if pkg in c["args"]]
        # aotirt: bench and one cold run; the runner: its timing and one cold run.
        assert len(mine) == 4, mine
        assert all(c["omp"] == str(t) for c in mine)
        for s in ("aotirt", "libtorch-aoti"):
            row = json.loads(h.row_path("mlp", s, t).read_text())
            assert row["status"] == "ok" and row["threads"] == t and row["median_us"] == 10.0
            assert row["package"] == f"model.t{t}.pt2"
            assert row["cold_start_s"] is not None
    assert h.rows_left() == 0


def test_python_rows_pass_the_thread_count(tmp_path, monkeypatch):
    h = _harness(tmp_path, "--workloads", "mlp", "--systems", "eager,torch.compile", "--threads", "2")
    seen = []

    def fake_run(cmd, env=None, **kw):
        seen.append((cmd, env))
        return procmon.Observed(cmd=cmd, returncode=0, stdout='first_output\n{"median_us": 5.0}\n', marker_s=0.5)

    monkeypatch.setattr(procmon, "run_observed", fake_run)
    for s in ("eager", "torch.compile"):
        d = h.measure_python("mlp", s, 2)
        assert d["status"] == "ok" and d["threads"] == 2 and d["cold_start_s"] == 0.5
    for cmd, env in seen:
        assert cmd[cmd.index("--threads") + 1] == "2"
        assert env["OMP_NUM_THREADS"] == "2"
        assert env["TORCHINDUCTOR_CACHE_DIR"].endswith("inductor-cache-t2")


# ---- workloads ----


def test_cpu_workloads_match_the_report_order():
    workloads = pytest.importorskip("workloads")
    assert workloads.CPU_WORKLOADS == report.CPU_WORKLOAD_ORDER
    assert set(workloads.GPU_WORKLOADS) == set(report.WORKLOAD_ORDER)
    assert workloads.iterations("bert_base_s128", cpu=True) == (30, 3)
    assert workloads.iterations("bert_base_s128", cpu=False) == (200, 20)
    assert "mobilenet_v3_large" in workloads.describe("mobilenet_v3_b1", False)


def test_gpt2_decode128_in_both_dtypes():
    torch = pytest.importorskip("torch")
    workloads = pytest.importorskip("workloads")
    for name, dtype in (("gpt2_decode128_f32", torch.float32), ("gpt2_decode128_bf16", torch.bfloat16)):
        m, (ids, kv) = workloads.build(name, quick=True)
        assert kv.dtype == dtype and kv.shape[4] == workloads.gpt2_context(True)
        assert next(m.parameters()).dtype == dtype
    # The full size is GPT-2 small over 128 cached tokens (shapes only).
    s = workloads.GPT2_SMALL
    assert (s.n_layer, s.n_embd, s.n_head) == (12, 768, 12)


def test_vit_s16_shape_and_head():
    torch = pytest.importorskip("torch")
    pytest.importorskip("torchvision")
    workloads = pytest.importorskip("workloads")
    m, (x,) = workloads.build("vit_s16_b1", quick=False)
    assert x.shape == (1, 3, 224, 224)
    assert m.hidden_dim == 384 and len(m.encoder.layers) == 12 and m.encoder.layers[0].num_heads == 6
    assert 21e6 < sum(p.numel() for p in m.parameters()) < 23e6
    assert torch.count_nonzero(m.heads.head.weight) > 0


# ---- onnxruntime ----


def _ort_workload(h, module, inputs):
    torch = pytest.importorskip("torch")
    import worker

    wdir = h.wdir("mlp")
    wdir.mkdir(parents=True, exist_ok=True)
    specs = []
    for i, t in enumerate(inputs):
        worker.save_npy(t, wdir / f"inputs/input{i}.npy")
        specs.append({"file": f"inputs/input{i}.npy", "dtype": worker.dtype_name(t.dtype), "shape": list(t.shape)})
    with torch.no_grad():
        ref = module(*inputs)
    worker.save_npy(ref, wdir / "reference/output0.npy")
    info = worker.export_onnx(module, tuple(inputs), wdir)
    (wdir / "manifest.json").write_text(json.dumps(
        {"workload": "mlp", "quick": True, "inputs": specs, "reference": ["reference/output0.npy"], "onnx": info}))
    return info


def _needs_ort():
    for m in ("onnxruntime", "onnx", "onnxscript"):
        pytest.importorskip(m, reason=f"{m} is not installed (./bench/setup-cpu.sh installs it)")


def test_onnxruntime_row_on_a_tiny_model(tmp_path):
    _needs_ort()
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    module = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4)).eval()
    h = _harness(tmp_path, "--workloads", "mlp", "--systems", "onnxruntime", "--threads", "1,2")
    info = _ort_workload(h, module, [torch.randn(3, 16)])
    assert info["exporter"].startswith("torch.onnx.export") and (h.wdir("mlp") / "model.onnx").exists()
    for t in (1, 2):
        d = h.measure_onnxruntime("mlp", t)
        assert d["status"] == "ok", d.get("reason")
        assert d["threads"] == t and d["intra_op_num_threads"] == t and d["inter_op_num_threads"] == 1
        assert d["graph_optimization_level"] == "ORT_ENABLE_ALL" and d["providers"] == ["CPUExecutionProvider"]
        assert d["rel_err_vs_reference"] < 1e-5
        assert d["median_us"] > 0 and d["cold_start_s"] > 0 and d["peak_rss_mb"] > 0
        assert d["iters"] == 3 and d["onnx_exporter"] == info["exporter"]


def test_onnxruntime_row_on_a_bfloat16_model_says_why_it_failed(tmp_path):
    _needs_ort()
    torch = pytest.importorskip("torch")

    class AddScale(torch.nn.Module):
        def forward(self, x, y):
            return x * 2 + y

    h = _harness(tmp_path, "--workloads", "mlp", "--systems", "onnxruntime", "--threads", "1")
    x, y = torch.randn(4, 8).to(torch.bfloat16), torch.randn(4, 8).to(torch.bfloat16)
    _ort_workload(h, AddScale().eval(), [x, y])
    d = h.measure_onnxruntime("mlp", 1)
    if d["status"] == "ok":
        # An onnxruntime that runs bfloat16 on the CPU: then the row is real.
        assert d["rel_err_vs_reference"] < 1e-2
    else:
        assert d["status"] == "failed"
        assert "bfloat16" in d["reason"] and "NOT_IMPLEMENTED" in d["reason"], d["reason"]


def test_onnxruntime_row_skipped_when_not_installed(tmp_path, monkeypatch):
    h = _harness(tmp_path, "--workloads", "mlp", "--systems", "onnxruntime")
    monkeypatch.setattr(run.Harness, "ort_missing", lambda self: ["onnxruntime"])
    d = h.measure_onnxruntime("mlp", 1)
    assert d["status"] == "skipped" and "setup-cpu.sh" in d["reason"]
    assert "onnx" not in h.cpu_artifacts()


def test_bfloat16_feeds_are_exact():
    import ort_worker

    vals = np.array([1.0, -2.5, 0.0078125, 3.140625], np.float32)  # bfloat16 values
    bits = ort_worker.bfloat16_bits(vals)
    assert bits.dtype == np.uint16
    assert np.array_equal(ort_worker.bfloat16_to_float32(bits), vals)
