# Tests of bench/run.py's own logic, without a GPU, a model or an aotirt
# build: the install footprint (on a fake build folder, ldd replaced), the
# missing-shims check (the lists, and a fake `aotirt inspect --json`), the
# prewarm of the torch.compile rows (fake warm-up commands), failed exports,
# and the final line.

import json
import os
import stat
import sys
import textwrap
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import procmon  # noqa: E402
import report  # noqa: E402
import run  # noqa: E402

MIB = 2**20


@pytest.fixture(autouse=True)
def _fresh_procmon():
    procmon._stopping.clear()
    yield
    procmon._stopping.clear()


def _harness(tmp_path, *extra, device="cuda", build=None):
    argv = ["all", "--device", device, "--work", str(tmp_path / "work"),
            "--aotirt-build", str(build or tmp_path / "build")] + list(extra)
    h = run.Harness(run.parse_args(argv))
    torch_lib = tmp_path / "torch_lib"
    torch_lib.mkdir(exist_ok=True)
    h._env_cache = {"torch_lib": str(torch_lib), "library_dirs": [str(torch_lib)]}
    return h


def _file(path: Path, mib: float) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as f:
        f.truncate(int(mib * MIB))  # sparse: only st_size counts
    return path


# ---- footprint ----


def _fake_build(tmp_path):
    lib = tmp_path / "build" / "lib"
    _file(lib / "libaotirt.so.0.1.0", 1.0)
    (lib / "libaotirt.so.0").symlink_to("libaotirt.so.0.1.0")
    (lib / "libaotirt.so").symlink_to("libaotirt.so.0")
    deps = lib / "deps"
    for name, mib in [("libfmt.so.9", 0.25), ("libminizip.so.1", 0.25), ("libz.so.1", 0.25),
                      ("libelf.so.1", 0.25), ("libgomp.so.1", 0.5), ("libopenblas.so.0", 30.0),
                      ("libgfortran.so.5", 3.0), ("libquadmath.so.0", 0.5), ("libsleef.so.3", 2.0)]:
        _file(deps / name, mib)
    _file(tmp_path / "torch_lib" / "libtorch_cpu.so", 400.0)
    _file(tmp_path / "torch_lib" / "libtorch_cuda.so", 600.0)
    _file(tmp_path / "torch_lib" / "libcublasLt.so.12", 500.0)  # left out
    return lib, deps


def _fake_ldd(deps, calls):
    def fake(lib, library_dirs=()):
        calls.append((Path(lib), [Path(d) for d in library_dirs]))
        return {
            "libfmt.so.9": str(deps / "libfmt.so.9"),
            "libminizip.so.1": str(deps / "libminizip.so.1"),
            "libelf.so.1": str(deps / "libelf.so.1"),
            "libz.so.1": str(deps / "libz.so.1"),
            "libgomp.so.1": str(deps / "libgomp.so.1"),
            "libstdc++.so.6": "/lib/x86_64-linux-gnu/libstdc++.so.6",
            "libc.so.6": "/lib/x86_64-linux-gnu/libc.so.6",
            "libcudart.so.12": "/opt/nvidia/libcudart.so.12",
            "libcublasLt.so.12": "/opt/nvidia/libcublasLt.so.12",
        }
    return fake


def test_footprint_counts_the_needed_closure_and_lists_cpu_libraries_apart(tmp_path, monkeypatch):
    lib, deps = _fake_build(tmp_path)
    calls = []
    monkeypatch.setattr(run, "ldd", _fake_ldd(deps, calls))
    fp = _harness(tmp_path).footprint({})
    assert calls and calls[0][0] == lib / "libaotirt.so" and calls[0][1] == [deps]
    assert set(fp["aotirt_files"]) == {"libaotirt.so", "deps/libfmt.so.9", "deps/libminizip.so.1",
                                       "deps/libelf.so.1", "deps/libz.so.1", "deps/libgomp.so.1"}
    assert fp["aotirt_mb"] == pytest.approx(1.0 + 4 * 0.25 + 0.5)
    assert set(fp["aotirt_optional_files"]) == {"deps/libopenblas.so.0", "deps/libgfortran.so.5",
                                                "deps/libquadmath.so.0", "deps/libsleef.so.3"}
    assert fp["aotirt_optional_mb"] == pytest.approx(35.5)
    assert fp["aotirt_optional_note"] == run.OPTIONAL_NOTE
    assert fp["libtorch_mb"] == pytest.approx(1000.0)  # cuBLAS left out
    assert fp["ratio"] == pytest.approx(2.5 / 1000.0)
    assert fp["ratio_with_optional"] == pytest.approx(38.0 / 1000.0)
    assert fp["aotirt_unresolved"] == []


def test_footprint_on_cpu_counts_the_cpu_libraries(tmp_path, monkeypatch):
    _, deps = _fake_build(tmp_path)
    monkeypatch.setattr(run, "ldd", _fake_ldd(deps, []))
    fp = _harness(tmp_path, device="cpu").footprint({})
    assert fp["ratio"] == pytest.approx(38.0 / 1000.0)


def test_footprint_without_a_bundle_counts_the_linked_system_libraries(tmp_path, monkeypatch):
    lib = tmp_path / "build" / "lib"
    _file(lib / "libaotirt.so", 1.0)
    sys_fmt = _file(tmp_path / "usr" / "libfmt.so.9", 0.5)
    _file(tmp_path / "torch_lib" / "libtorch_cpu.so", 100.0)
    monkeypatch.setattr(run, "ldd", lambda p, dirs=(): {"libfmt.so.9": str(sys_fmt), "libmissing.so.1": None})
    fp = _harness(tmp_path).footprint({})
    assert set(fp["aotirt_files"]) == {"libaotirt.so", "linked/libfmt.so.9"}
    assert fp["aotirt_optional_files"] == {}
    assert fp["aotirt_unresolved"] == ["libmissing.so.1"]


def test_parse_ldd():
    text = textwrap.dedent("""\
        \tlinux-vdso.so.1 (0x00007ffd)
        \tlibfmt.so.9 => /build/lib/deps/libfmt.so.9 (0x00007f86)
        \tlibgone.so.2 => not found
        \t/lib64/ld-linux-x86-64.so.2 (0x00007f86)
        """)
    assert run.parse_ldd(text) == {"libfmt.so.9": "/build/lib/deps/libfmt.so.9", "libgone.so.2": None}


def test_footprint_markdown_names_the_optional_libraries(tmp_path, monkeypatch):
    _, deps = _fake_build(tmp_path)
    monkeypatch.setattr(run, "ldd", _fake_ldd(deps, []))
    fp = _harness(tmp_path).footprint({})
    doc = {"label": "t", "date": "2026-01-01", "commit": "c", "device": "d", "rows": [], "row_details": {},
           "ratios": {}, "targets": [], "footprint": fp}
    md = report.render_markdown(doc)
    assert "deps/libopenblas.so.0" in md
    assert "loaded only by CPU ops; a CUDA deployment can leave them out" in md
    assert "DT_NEEDED" in md


# ---- missing shims ----


def _fake_workload(h, name="mlp", missing=()):
    wdir = h.wdir(name)
    wdir.mkdir(parents=True, exist_ok=True)
    (wdir / "model.pt2").write_bytes(b"PK")
    (wdir / "manifest.json").write_text(json.dumps({
        "workload": name, "package": "model.pt2", "quick": True, "inputs": [], "reference": [],
        "missing_shims": list(missing)}))
    return wdir


def test_shim_lists_cover_cuda_packages(tmp_path):
    cuda = run.provided_shims("cuda")
    cpu = run.provided_shims("cpu")
    assert "aoti_torch_create_cuda_stream_guard" in cuda and "aoti_torch_cuda_addmm_out" in cuda
    assert "aoti_torch_create_cuda_stream_guard" not in cpu
    folder = tmp_path / "lists"
    folder.mkdir()
    (folder / "provided_shims.txt").write_text("# comment\naoti_torch_empty_strided\n")
    (folder / "provided_shims_cuda.txt").write_text("cuda_mm_out\n")  # short form
    assert run.provided_shims("cuda", folder) == {"aoti_torch_empty_strided", "aoti_torch_cuda_mm_out"}


def test_missing_shims_from_the_lists_accept_the_cuda_build(tmp_path):
    h = _harness(tmp_path)  # no aotirt binary in the fake build
    _fake_workload(h, missing=["aoti_torch_create_cuda_stream_guard", "aoti_torch_cuda_addmm_out",
                               "aoti_torch_no_such_shim"])
    missing, source = h.missing_shims("mlp")
    assert missing == ["aoti_torch_no_such_shim"]
    assert "provided_shims" in source


def test_missing_shims_from_aotirt_inspect(tmp_path):
    build = tmp_path / "build"
    (build / "bin").mkdir(parents=True)
    answer = {"path": "x", "imported_shims": [{"name": "aoti_torch_cuda_addmm_out", "provided": True},
                                              {"name": "aoti_torch_cuda_weird", "provided": False}],
              "missing_shims": 1}
    script = build / "bin" / "aotirt"
    script.write_text("#!/bin/sh\n[ \"$1\" = inspect ] && [ \"$2\" = --json ] || exit 2\ncat <<'EOF'\n"
                      + json.dumps(answer, indent=2) + "\nEOF\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    h = _harness(tmp_path, build=build)
    _fake_workload(h, missing=["aoti_torch_cuda_addmm_out"])  # the lists' view is overruled
    missing, source = h.missing_shims("mlp")
    assert missing == ["aoti_torch_cuda_weird"]
    assert "aotirt inspect" in source


# ---- prewarm ----


def _warm_script(tmp_path, body: str) -> list:
    f = tmp_path / "warm.py"
    f.write_text(textwrap.dedent(body))
    return [sys.executable, str(f)]


def _prewarm_harness(tmp_path, *extra):
    h = _harness(tmp_path, "--workloads", "mlp,gpt2_decode", *extra)
    h.prewarm_enabled = True
    for w in h.workloads:
        _fake_workload(h, w)
    return h


def test_prewarm_runs_the_compilations_in_parallel_and_records_them(tmp_path, monkeypatch):
    h = _prewarm_harness(tmp_path, "--prewarm-jobs", "4")
    log = tmp_path / "log"
    cmd = _warm_script(tmp_path, f"""
        import os, sys, time
        with open({str(log)!r}, "a") as f:
            f.write(f"start {{time.time()}} {{os.environ['TORCHINDUCTOR_CACHE_DIR']}}\\n")
        time.sleep(1.0)
        with open({str(log)!r}, "a") as f:
            f.write(f"end {{time.time()}}\\n")
        """)
    monkeypatch.setattr(h, "warm_command", lambda w, s, t=None: cmd)
    assert h.row_guess("mlp", "torch.compile") == run.ROW_GUESS_S["torch.compile"]
    start = time.monotonic()
    h.prewarm_finish()
    took = time.monotonic() - start
    lines = log.read_text().splitlines()
    starts = [float(l.split()[1]) for l in lines if l.startswith("start")]
    ends = [float(l.split()[1]) for l in lines if l.startswith("end")]
    assert len(starts) == 4  # 2 workloads x 2 torch.compile systems
    assert max(starts) < min(ends)  # all four at once
    assert took < 3.5
    assert all(l.split()[2] == str(h.inductor_cache) for l in lines if l.startswith("start"))
    state = json.loads(h.prewarm_file.read_text())
    assert set(state) == {f"{w}/{s}" for w in h.workloads for s in run.PREWARM_SYSTEMS}
    assert all(v["status"] == "ok" for v in state.values())
    assert h.row_guess("mlp", "torch.compile") == run.WARM_COMPILE_GUESS_S
    assert h.row_guess("mlp", "eager") == run.ROW_GUESS_S["eager"]
    # A second call finds the marker and starts nothing.
    log.unlink()
    h2 = _prewarm_harness(tmp_path)
    monkeypatch.setattr(h2, "warm_command", lambda w, s, t=None: cmd)
    assert h2.prewarm_pairs(h2.workloads) == []
    h2.prewarm_finish()
    assert not log.exists()


def test_prewarm_skips_rows_already_measured_and_python_env_shares_the_cache(tmp_path):
    h = _prewarm_harness(tmp_path)
    h.rows_dir.mkdir(parents=True)
    h.row_path("mlp", "torch.compile").write_text("{}")
    pairs = h.prewarm_pairs(h.workloads)
    assert ("mlp", "torch.compile") not in pairs and ("mlp", "torch.compile-reduce-overhead") in pairs
    assert all(s in run.PREWARM_SYSTEMS for _, s in pairs)
    assert h.python_env()["TORCHINDUCTOR_CACHE_DIR"] == str(h.inductor_cache)
    h_off = _harness(tmp_path, "--no-prewarm")
    assert h_off.prewarm_pairs(h.workloads) == []


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_prewarm_timeout_leaves_no_process(tmp_path, monkeypatch):
    h = _prewarm_harness(tmp_path, "--workloads", "mlp", "--systems", "torch.compile")
    pids = tmp_path / "pids"
    cmd = _warm_script(tmp_path, f"""
        import os, subprocess, sys, time
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        with open({str(pids)!r}, "w") as f:
            f.write(f"{{os.getpid()}} {{child.pid}}")
        time.sleep(60)
        """)
    monkeypatch.setattr(h, "warm_command", lambda w, s, t=None: cmd)
    monkeypatch.setattr(run, "PREWARM_TIMEOUT_S", 1.5)
    h.prewarm_finish()
    state = json.loads(h.prewarm_file.read_text())
    assert state["mlp/torch.compile"]["status"] == "timeout"
    assert h.row_guess("mlp", "torch.compile") == run.ROW_GUESS_S["torch.compile"]
    deadline = time.monotonic() + 5
    ids = [int(x) for x in pids.read_text().split()]
    while any(_alive(p) for p in ids) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(_alive(p) for p in ids)
    assert procmon.live_count() == 0


def test_prewarm_stopped_at_the_budget_is_not_recorded(tmp_path, monkeypatch):
    h = _prewarm_harness(tmp_path, "--workloads", "mlp", "--systems", "torch.compile", "--budget-s", "100")
    cmd = _warm_script(tmp_path, "import time; time.sleep(60)\n")
    monkeypatch.setattr(h, "warm_command", lambda w, s, t=None: cmd)
    monkeypatch.setattr(run, "PREWARM_MIN_S", 10)
    h.budget.seconds = 17  # 17 - 15 s of margin: a 2 s limit, below PREWARM_TIMEOUT_S
    h.prewarm_finish()
    assert not h.prewarm_file.exists()  # the next call compiles it again
    assert h.prewarm_pairs(h.workloads) == [("mlp", "torch.compile")]


def test_stop_all_ends_a_running_command_and_refuses_new_ones(tmp_path):
    import threading

    result = {}
    t = threading.Thread(target=lambda: result.setdefault(
        "obs", procmon.run_observed([sys.executable, "-c", "import time; time.sleep(60)"], timeout_s=60)))
    t.start()
    deadline = time.monotonic() + 10
    while procmon.live_count() == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert procmon.stop_all() == 1
    t.join(10)
    assert not t.is_alive() and not result["obs"].ok()
    later = procmon.run_observed([sys.executable, "-c", "print(1)"])
    assert later.not_started and not later.ok()


# ---- failed exports, final line ----


def test_a_failed_export_marks_its_rows_failed_so_calls_converge(tmp_path):
    h = _harness(tmp_path, "--workloads", "mlp", "--systems", "aotirt,eager")
    h.prewarm_enabled = True
    h._record_export("mlp", "exit 1: unsupported op")
    assert h.export_failure("mlp") == "exit 1: unsupported op"
    assert h.phase_measure() is True
    row = json.loads(h.row_path("mlp", "eager").read_text())
    assert row["status"] == "failed" and "unsupported op" in row["reason"]
    assert h.rows_left() == 0


def test_final_line():
    assert run.final_line("all", True, 0, 42) == "bench: COMPLETE (all 42 rows measured)"
    line = run.final_line("all", False, 5, 42)
    assert line.startswith("bench: INCOMPLETE (5 of 42 rows left")
    assert run.final_line("all", False, 0, 42).startswith("bench: INCOMPLETE")
    assert run.final_line("export", True, 42, 42).startswith("bench: COMPLETE (export")
    assert run.final_line("report", True, 3, 42).startswith("bench: REPORT WRITTEN (39 of 42 rows measured")


def test_footprint_counts_the_whole_bundle_when_ldd_fails(tmp_path, monkeypatch):
    _fake_build(tmp_path)
    monkeypatch.setattr(run, "ldd", lambda p, dirs=(): {})
    fp = _harness(tmp_path).footprint({})
    assert fp["aotirt_optional_files"] == {}
    assert fp["aotirt_mb"] == pytest.approx(1.0 + 4 * 0.25 + 0.5 + 35.5)
    assert fp["aotirt_unresolved"]


def test_ldd_resolves_against_the_deps_folder_first(tmp_path):
    import shutil

    user = Path("/lib/x86_64-linux-gnu/libminizip.so.1")
    libz = Path("/lib/x86_64-linux-gnu/libz.so.1")
    if not (user.exists() and libz.exists() and shutil.which("ldd")):
        pytest.skip("needs ldd, libminizip and libz")
    deps = tmp_path / "deps"
    deps.mkdir()
    shutil.copy(libz, deps / "libz.so.1")
    assert run.ldd(user)["libz.so.1"] != str(deps / "libz.so.1")
    assert run.ldd(user, [deps])["libz.so.1"] == str(deps / "libz.so.1")


# ---- cold start ----


def _cold_script(tmp_path, delays):
    """A fake runner: its n-th run sleeps delays[n] s, then prints its first
    output line; past the list it fails."""
    counter = tmp_path / "runs"
    script = tmp_path / "runner.py"
    script.write_text(textwrap.dedent(f"""
        import sys, time
        from pathlib import Path
        c = Path({str(counter)!r})
        n = int(c.read_text()) if c.exists() else 0
        c.write_text(str(n + 1))
        delays = {delays!r}
        if n >= len(delays):
            print("no device", file=sys.stderr)
            sys.exit(3)
        time.sleep(delays[n])
        print("first_output", flush=True)
    """))
    return [sys.executable, str(script)], counter


def test_cold_start_is_the_median_of_fresh_processes(tmp_path):
    h = _harness(tmp_path, "--workloads", "mlp", "--cold-runs", "3")
    cmd, counter = _cold_script(tmp_path, [0.05, 0.6, 0.25])
    d = {"commands": []}
    h._compare = lambda workload, out: 0.0
    h._cold_start(d, "mlp", cmd, dict(os.environ), r"^first_output", tmp_path / "output0.npy", "libtorch runner")
    assert counter.read_text() == "3"
    runs = d["cold_start_runs_s"]
    assert len(runs) == 3 and runs[0] < runs[2] < runs[1]
    assert d["cold_start_s"] == runs[2]
    assert d["commands"] == [" ".join(cmd)]
    assert "cold_note" not in d and d["rel_err_vs_reference"] == 0.0


def test_a_failing_cold_run_leaves_no_cold_start_and_says_why(tmp_path):
    h = _harness(tmp_path, "--workloads", "mlp", "--cold-runs", "3")
    cmd, counter = _cold_script(tmp_path, [0.01])
    d = {"commands": []}
    h._cold_start(d, "mlp", cmd, dict(os.environ), r"^first_output", tmp_path / "output0.npy", "libtorch runner")
    assert counter.read_text() == "2"  # stopped at the first failure
    assert "cold_start_s" not in d
    assert d["cold_note"].startswith("libtorch runner") and "no device" in d["cold_note"]


# ---- environment ----


def test_rows_run_without_tuning_switches(tmp_path, monkeypatch):
    # A strict-float32 or forced-kernel switch left in the shell would measure
    # another runtime; where libraries come from is the caller's to say.
    monkeypatch.setenv("AOTIRT_CUDA_ALLOW_TF32", "0")
    monkeypatch.setenv("AOTIRT_CUDA_GEMM", "aotirt")
    monkeypatch.setenv("AOTIRT_CUBLASLT_LIBRARY", "/opt/x/libcublasLt.so.13")
    h = _harness(tmp_path)
    assert run.dropped_tuning_vars(os.environ) == ["AOTIRT_CUDA_ALLOW_TF32", "AOTIRT_CUDA_GEMM"]
    for env in (h.base_env(), h.aotirt_env(), h.python_env()):
        assert "AOTIRT_CUDA_ALLOW_TF32" not in env and "AOTIRT_CUDA_GEMM" not in env
        assert env["AOTIRT_CUBLASLT_LIBRARY"] == "/opt/x/libcublasLt.so.13"
    assert "AOTIRT_CUDA_ALLOW_TF32" in os.environ  # the harness's own environment is left alone


def test_footprint_counts_libaotirt_as_it_ships(tmp_path):
    # A library with its symbol tables counts without them; a file strip
    # cannot read counts as it is.
    import shutil as _sh
    import subprocess as _sp
    if not (_sh.which("strip") and _sh.which("cc")):
        pytest.skip("needs strip and a C compiler")
    src = tmp_path / "f.c"
    src.write_text("".join(f"int f{i}(int x) {{ return x * {i}; }}\n" for i in range(400)))
    so = tmp_path / "libf.so"
    _sp.run(["cc", "-shared", "-fPIC", "-o", str(so), str(src)], check=True)
    assert 0 < run.shipped_size(so) < so.stat().st_size
    blob = _file(tmp_path / "libaotirt.so.0.1.0", 1.0)
    assert run.shipped_size(blob) == blob.stat().st_size
