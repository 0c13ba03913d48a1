# Tests of bench/ab.py without a GPU: variant parsing and its errors, the
# alternation of variants, the table, and failures of `aotirt bench`, with a
# fake aotirt whose median depends on the environment it is given.

import json
import stat
import sys
import textwrap
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import ab  # noqa: E402
import kernel_profile as kernels  # noqa: E402
import run  # noqa: E402


def test_parse_variant():
    assert ab.parse_variant("new:") == ("new", {})
    assert ab.parse_variant("old: AOTIRT_X=0, AOTIRT_Y=a b") == ("old", {"AOTIRT_X": "0", "AOTIRT_Y": "a b"})
    for bad, words in [("nocolon", "write NAME:"), (":A=1", "write NAME:"), ("x:A", "'A' is not VAR=VALUE"),
                       ("x:A-B=1", "'A-B=1' is not VAR=VALUE")]:
        with pytest.raises(kernels.ProfileError) as e:
            ab.parse_variant(bad)
        assert words in str(e.value)


@pytest.fixture
def setup(tmp_path):
    build = tmp_path / "build"
    (build / "bin").mkdir(parents=True)
    fake = build / "bin" / "aotirt"
    # Median 100 by default, AOTIRT_FAKE_MEDIAN when set; +1 with --cuda-graph;
    # AOTIRT_FAKE_FAIL makes it fail. Every call is logged.
    fake.write_text(textwrap.dedent(f"""\
        #!{sys.executable}
        import json, os, sys
        with open({str(tmp_path / "calls")!r}, "a") as f:
            f.write(os.environ.get("AOTIRT_FAKE_MEDIAN", "default") + " " + " ".join(sys.argv[1:]) + "\\n")
        if os.environ.get("AOTIRT_FAKE_FAIL"):
            sys.stderr.write("error: the package is damaged\\n")
            sys.exit(1)
        median = float(os.environ.get("AOTIRT_FAKE_MEDIAN", "100")) + ("--cuda-graph" in sys.argv)
        print("1 runs after 1 warm-up runs (us):")
        print(json.dumps({{"median_us": median, "p99_us": median + 5, "peak_rss_mb": median * 2, "load_ms": 7}}))
        """))
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    work = tmp_path / "work"
    wdir = work / "cpu" / "mlp"
    wdir.mkdir(parents=True)
    (wdir / "manifest.json").write_text(json.dumps(
        {"package": "model.pt2", "inputs": [{"file": "in0.npy", "dtype": "float32"}]}))
    h = run.Harness(run.parse_args(["export", "--device", "cpu", "--systems", "aotirt", "--work", str(work),
                                    "--aotirt-build", str(build), "--workloads", "mlp"]))
    h._env_cache = {"torch_lib": str(tmp_path), "library_dirs": []}
    base = ["--workloads", "mlp", "--device", "cpu", "--aotirt-build", str(build), "--work", str(work),
            "--out", str(tmp_path / "out"), "--iters", "5", "--warmup", "1"]
    return tmp_path, h, base


def test_variants_alternate_and_fill_the_table(setup):
    tmp_path, h, base = setup
    args = ab.parse_args(base + ["--variant", "new:", "--variant", "old:AOTIRT_FAKE_MEDIAN=250",
                                 "--graph", "both", "--reps", "2"])
    md = ab.run_ab(args, harness=h)
    assert "| workload | graph | new | old |" in md
    assert "| mlp | no | 100.0 | 250.0 |" in md and "| mlp | yes | 101.0 | 251.0 |" in md
    assert "new: default environment; old: AOTIRT_FAKE_MEDIAN=250." in md
    # Peak RSS and load time of the same runs, in a second table.
    assert "| mlp | no | 200 / 7 | 500 / 7 |" in md and "| mlp | yes | 202 / 7 | 502 / 7 |" in md
    calls = (tmp_path / "calls").read_text().splitlines()
    # Per graph setting: new, old, new, old.
    assert [c.split()[0] for c in calls] == ["default", "250"] * 4
    first = calls[0].split()
    assert first[1:3] == ["bench", str(h.wdir("mlp") / "model.pt2")]
    assert first[first.index("--iters") + 1] == "5" and first[first.index("--warmup") + 1] == "1"
    assert first[first.index("--input") + 1] == str(h.wdir("mlp") / "in0.npy")
    j = json.loads((tmp_path / "out" / "ab.json").read_text())
    assert j["results"][0]["variants"][1]["median_us"] == [250.0, 250.0]
    assert j["results"][0]["variants"][1]["peak_rss_mb"] == [500.0, 500.0]
    assert (tmp_path / "out" / "ab.md").read_text() == md


def test_a_failing_variant_is_reported_in_its_cell(setup):
    tmp_path, h, base = setup
    args = ab.parse_args(base + ["--variant", "ok:", "--variant", "bad:AOTIRT_FAKE_FAIL=1", "--reps", "1"])
    md = ab.run_ab(args, harness=h)
    assert "| mlp | no | 100.0 | failed: aotirt bench exited with 1: error: the package is damaged |" in md


def test_errors_exit_2(setup, capsys, tmp_path):
    _, h, base = setup
    assert ab.main(base + ["--variant", "a:", "--variant", "a:X=1"]) == 2
    assert "two variants have the same name" in capsys.readouterr().err
    assert ab.main(base + ["--variant", "a:", "--aotirt-build", str(tmp_path / "none")]) == 2
    assert "none/bin/aotirt not found" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        ab.parse_args(base + ["--variant", "a:", "--reps", "0"])
    assert e.value.code == 2
