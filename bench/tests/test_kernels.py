# Tests of bench/kernel_profile.py without a GPU or Nsight Compute: parsing ncu's
# CSV (with the profiled program's output before it), finding the last run
# in the launch sequence, the summary, every error path, and `profile` end to
# end with a fake ncu and a fake aotirt.

import json
import os
import stat
import sys
import textwrap
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import kernel_profile as kernels  # noqa: E402
import run  # noqa: E402

HEADER = ('"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size",'
          '"Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"')


def row(i, name, value, unit="ns", grid="(1, 1, 1)", metric="gpu__time_duration.sum"):
    return (f'"{i}","7","aotirt","127.0.0.1","{name}","1","13","(128, 1, 1)","{grid}","0","9.0",'
            f'"Command line profiler metrics","{metric}","{unit}","{value}"')


def table(names_values, preamble=True):
    lines = []
    if preamble:
        lines += ["==PROF== Connected to process 7 (/x/aotirt)", "package:    model.pt2", "load:       3.1 ms"]
    lines.append(HEADER)
    lines += [row(i, n, v) for i, (n, v) in enumerate(names_values)]
    return "\n".join(lines) + "\n"


def test_parse_skips_program_output_and_converts_units():
    text = "\n".join([
        "==WARNING== Note: Running with unmodified GPU clocks.",
        "first run:  2743166.3 us",
        HEADER,
        row(0, "triton_poi_fused_0", "2,912"),
        row(1, "gemm", "1.5", unit="usecond"),
        row(2, "conv", "0.25", unit="msecond", grid="(24, 7, 1)"),
        row(3, "conv", "123", metric="sm__cycles_elapsed.avg"),  # another metric: ignored
        "==PROF== Disconnected from process 7",
    ])
    ks = kernels.parse_ncu_csv(text)
    assert [k.name for k in ks] == ["triton_poi_fused_0", "gemm", "conv"]
    assert [round(k.us, 3) for k in ks] == [2.912, 1.5, 250.0]
    assert ks[2].grid == "(24, 7, 1)"


@pytest.mark.parametrize("text, words", [
    ("package: x\n==ERROR== The application returned an error code (1).\n", ["no ncu table", "returned an error"]),
    ("", ["no ncu table"]),
    ('"ID","Process ID","Kernel Name"\n"0","7","k"\n', ["lacks the column", "Metric Value"]),
    (HEADER + "\n" + row(0, "k", "5", unit="furlong") + "\n", ["line 2", "unknown duration unit 'furlong'"]),
    (HEADER + "\n" + row(0, "k", "n/a") + "\n", ["line 2", "'n/a' is not a number"]),
    (HEADER + "\n" + row(0, "k", "5", metric="dram__bytes.sum") + "\n", ["no gpu__time_duration.sum rows"]),
])
def test_parse_errors_name_the_problem(text, words):
    with pytest.raises(kernels.ProfileError) as e:
        kernels.parse_ncu_csv(text, "t.csv")
    for w in words:
        assert w in str(e.value)


def ks(names):
    return [kernels.Kernel(n, "(1, 1, 1)", "(128, 1, 1)", 1.0) for n in names]


def test_last_run_is_the_final_period():
    run_ = ["conv", "bn", "gemm", "reduce"]
    seq = ks(["copy_weights", "init"] + ["lazy_init"] + run_ * 3)
    last, found = kernels.last_run(seq)
    assert found and [k.name for k in last] == run_
    # Four runs: still one run, not two.
    last, found = kernels.last_run(ks(run_ * 4))
    assert found and [k.name for k in last] == run_


def test_last_run_keeps_repeated_launches_inside_a_run():
    run_ = ["gemm", "reduce", "reduce", "bn"]  # two equal launches back to back
    last, found = kernels.last_run(ks(["x"] + run_ * 2))
    assert found and [k.name for k in last] == run_
    run_ = ["a", "a"]
    last, _ = kernels.last_run(ks(run_ * 3))
    assert [k.name for k in last] == ["a"]  # a run of one kernel, launched twice per call: indistinguishable


def test_last_run_tells_when_runs_differ():
    seq = ks(["a", "b", "c", "d"])
    last, found = kernels.last_run(seq)
    assert not found and last == seq
    # Same names, different grids: not the same launch.
    a = kernels.Kernel("k", "(1, 1, 1)", "(1, 1, 1)", 1.0)
    b = kernels.Kernel("k", "(2, 1, 1)", "(1, 1, 1)", 1.0)
    last, found = kernels.last_run([a, b, a, b, b, a])
    assert not found


def test_summary_ranks_by_total_and_formats():
    seq = [kernels.Kernel("gemm", "g", "b", 10.0), kernels.Kernel("bn", "g", "b", 2.0),
           kernels.Kernel("gemm", "g", "b", 14.0), kernels.Kernel("x" * 200, "g", "b", 1.0)]
    s = kernels.summarize(seq)
    assert s["launches"] == 4 and s["total_us"] == pytest.approx(27.0)
    assert [g["kernel"] for g in s["kernels"]][:2] == ["gemm", "bn"]
    assert s["kernels"][0]["launches"] == 2 and s["kernels"][0]["mean_us"] == pytest.approx(12.0)
    md = kernels.format_summary(s, "w", whole=False, top=2)
    assert "4 launches in the last run, 27.0 us" in md
    assert "| 2 | 24.0 | 12.00 | 88.9% | `gemm` |" in md
    assert "| 1 | 1.0 | | | 1 other kernels |" in md
    md = kernels.format_summary(s, "w", whole=True, top=5)
    assert "the whole profile (no two equal runs at its end)" in md
    assert "x" * 107 + "..." in md and "x" * 108 not in md


def test_summarize_command(tmp_path, capsys):
    path = tmp_path / "resnet.csv"
    path.write_text(table([("init", "9,000"), ("conv", "10,000"), ("bn", "2,000"), ("conv", "10,000"),
                           ("bn", "2,000")]))
    assert kernels.main(["summarize", str(path)]) == 0
    out = capsys.readouterr().out
    assert "### resnet" in out and "2 launches in the last run, 12.0 us" in out
    assert kernels.main(["summarize", str(path), "--json"]) == 0
    j = json.loads(capsys.readouterr().out)
    assert j["last_run"] is True and j["launches"] == 2 and j["kernels"][0]["kernel"] == "conv"


def test_summarize_errors_exit_2_with_a_message(tmp_path, capsys):
    assert kernels.main(["summarize", str(tmp_path / "missing.csv")]) == 2
    cap = capsys.readouterr()
    assert cap.out == "" and "missing.csv: no such file" in cap.err
    bad = tmp_path / "bad.csv"
    bad.write_text("==ERROR== Failed to profile\n")
    assert kernels.main(["summarize", str(bad)]) == 2
    assert "holds no ncu table" in capsys.readouterr().err


# ---- profile, with a fake ncu and a fake aotirt ----

def _exe(path: Path, text: str) -> Path:
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def _fake_ncu(bindir: Path, tmp_path: Path) -> Path:
    """An ncu that records its arguments in tmp_path/argv and prints tmp_path/table.csv."""
    # PATH holds only the fake tools, so the fake is Python with an absolute interpreter.
    return _exe(bindir / "ncu", textwrap.dedent(f"""\
        #!{sys.executable}
        import sys
        from pathlib import Path
        Path({str(tmp_path)!r}, "argv").write_text(" ".join(sys.argv[1:]))
        sys.stdout.write(Path({str(tmp_path)!r}, "table.csv").read_text())
        """))


@pytest.fixture
def fake_setup(tmp_path, monkeypatch):
    bindir = tmp_path / "bin"
    bindir.mkdir()
    build = tmp_path / "build"
    (build / "bin").mkdir(parents=True)
    _exe(build / "bin" / "aotirt", "#!/bin/sh\nexit 0\n")
    work = tmp_path / "work"
    wdir = work / "cuda" / "mlp"
    wdir.mkdir(parents=True)
    (wdir / "manifest.json").write_text(json.dumps(
        {"package": "model.pt2", "inputs": [{"file": "in0.npy", "dtype": "float32"}]}))
    monkeypatch.setenv("PATH", str(bindir))
    monkeypatch.setattr(kernels.glob, "glob", lambda pattern: [])
    args = kernels.parse_args(["profile", "--workloads", "mlp", "--aotirt-build", str(build), "--work", str(work),
                               "--out", str(tmp_path / "out")])
    h = run.Harness(run.parse_args(["export", "--device", "cuda", "--work", str(work), "--aotirt-build",
                                    str(build), "--workloads", "mlp"]))
    h._env_cache = {"torch_lib": str(tmp_path), "library_dirs": []}
    return tmp_path, bindir, args, h


def test_profile_runs_ncu_on_aotirt_bench_and_summarizes(fake_setup):
    tmp_path, bindir, args, h = fake_setup
    csv_text = table([("copy", "5,000"), ("mm", "3,000"), ("relu", "1,000"), ("mm", "3,000"), ("relu", "1,000")])
    (tmp_path / "table.csv").write_text(csv_text)
    _fake_ncu(bindir, tmp_path)
    args.cuda_graph = True
    md = kernels.profile(args, harness=h)
    assert "### mlp-graph" in md and "2 launches in the last run, 4.0 us" in md
    argv = (tmp_path / "argv").read_text().split()
    assert argv[:7] == ["--clock-control", "none", "--cache-control", "all", "--metrics",
                        "gpu__time_duration.sum", "--csv"]
    assert argv[7].endswith("build/bin/aotirt") and argv[8] == "bench"
    assert argv[9].endswith("work/cuda/mlp/model.pt2")
    assert "caches flushed" in md
    assert "--cuda-graph" in argv and argv[argv.index("--iters") + 1] == "1"
    assert argv[argv.index("--input") + 1].endswith("work/cuda/mlp/in0.npy")
    assert (tmp_path / "out" / "mlp-graph.csv").read_text() == csv_text
    assert (tmp_path / "out" / "mlp-graph.md").read_text() == md


def test_profile_with_warm_caches_passes_cache_control_none(fake_setup):
    tmp_path, bindir, args, h = fake_setup
    (tmp_path / "table.csv").write_text(table([("mm", "3,000"), ("mm", "3,000")]))
    _fake_ncu(bindir, tmp_path)
    args.cache_control = "none"
    md = kernels.profile(args, harness=h)
    argv = (tmp_path / "argv").read_text().split()
    assert argv[argv.index("--cache-control") + 1] == "none"
    assert "### mlp-warm" in md and "caches as the kernels before left them" in md
    assert (tmp_path / "out" / "mlp-warm.md").read_text() == md
    assert kernels.parse_args(["profile", "--cache-control", "none"]).cache_control == "none"
    with pytest.raises(SystemExit):
        kernels.parse_args(["profile", "--cache-control", "some"])


def test_profile_reports_ncu_failures(fake_setup):
    tmp_path, bindir, args, h = fake_setup
    _exe(bindir / "ncu", "#!/bin/sh\necho '==ERROR== Profiling is not supported on this device' >&2\nexit 3\n")
    with pytest.raises(kernels.ProfileError) as e:
        kernels.profile(args, harness=h)
    assert "mlp: ncu exited with 3" in str(e.value) and "not supported on this device" in str(e.value)


def test_profile_without_ncu_or_aotirt_exits_2(fake_setup, capsys):
    tmp_path, bindir, args, h = fake_setup
    argv = ["profile", "--workloads", "mlp", "--aotirt-build", str(tmp_path / "nobuild"), "--work",
            str(tmp_path / "work")]
    assert kernels.main(argv) == 2
    assert "ncu (Nsight Compute) was not found" in capsys.readouterr().err
    _exe(bindir / "ncu", "#!/bin/sh\nexit 0\n")
    assert kernels.main(argv) == 2
    assert "nobuild/bin/aotirt not found" in capsys.readouterr().err


def test_profile_libtorch_runs_ncu_on_the_runner_with_its_package(fake_setup):
    tmp_path, bindir, args, h = fake_setup
    m = json.loads((h.wdir("mlp") / "manifest.json").read_text())
    m["libtorch_package"] = "default.pt2"
    (h.wdir("mlp") / "manifest.json").write_text(json.dumps(m))
    h.runner_bin.parent.mkdir(parents=True, exist_ok=True)
    _exe(h.runner_bin, "#!/bin/sh\nexit 0\n")
    (tmp_path / "table.csv").write_text(table([("gemm", "4,000"), ("gemm", "4,000")]))
    _fake_ncu(bindir, tmp_path)
    args.system = "libtorch-aoti"
    md = kernels.profile(args, harness=h)
    assert "### mlp-libtorch" in md and "1 launches in the last run, 4.0 us" in md
    argv = (tmp_path / "argv").read_text().split()
    assert argv[7] == str(h.runner_bin) and argv[8].endswith("work/cuda/mlp/default.pt2")
    assert "bench" not in argv and argv[argv.index("--iters") + 1] == "1"
    # The runner takes typed inputs (dtype:file).
    assert argv[argv.index("--input") + 1].endswith("work/cuda/mlp/in0.npy:float32")
    assert (tmp_path / "out" / "mlp-libtorch.md").read_text() == md


def test_profile_libtorch_errors_name_the_problem(fake_setup):
    tmp_path, bindir, args, h = fake_setup
    _exe(bindir / "ncu", "#!/bin/sh\nexit 0\n")
    args.system = "libtorch-aoti"
    args.cuda_graph = True
    with pytest.raises(kernels.ProfileError, match="libtorch's runner has none"):
        kernels.profile(args, harness=h)
    args.cuda_graph = False
    with pytest.raises(kernels.ProfileError, match="libtorch's runner was not built"):
        kernels.profile(args, harness=h)
    h.runner_bin.parent.mkdir(parents=True, exist_ok=True)
    _exe(h.runner_bin, "#!/bin/sh\nexit 0\n")
    with pytest.raises(kernels.ProfileError, match="mlp: no package for libtorch's runner"):
        kernels.profile(args, harness=h)
