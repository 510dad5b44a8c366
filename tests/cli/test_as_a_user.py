"""The command line as a perf engineer meets it (issue 20): no tracebacks, no lost input, every
written file valid, units and names a person reads, and the commands CPython's replay users
expect (threads, callers/callees, a regression gate for CI). Each test drives ``main`` as the
shell would and reads what it prints."""

from __future__ import annotations

import gzip
import shutil
import subprocess
import sys
import textwrap

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tachyon_format
from tachyon_format import analysis
from tachyon_format.cli import main
from tests.helpers.paths import DATA_DIR

WALL = DATA_DIR / "threads_wall_zstd.bin"
CPU = DATA_DIR / "threads_cpu_opcodes_raw.bin"
GIL = DATA_DIR / "threads_gil_blocking.bin"
GOLDEN = sorted(DATA_DIR.glob("*.bin"))


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def fatal(path) -> list:
    return [p for p in tachyon_format.validate(path) if p.severity != "note"]


# -- every file the command line writes passes validate ---------------------------------------
WRITING = ["slice-thread", "slice-window", "slice-focus", "slice-empty", "merge", "convert",
           "anonymize", "write"]


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(path=st.sampled_from(GOLDEN), verb=st.sampled_from(WRITING),
       suffix=st.sampled_from([".bin", ".pb.gz", ".pb.zst", ".collapsed", ".speedscope.json"]),
       window=st.tuples(st.integers(0, 400), st.integers(1, 400)))
def test_every_written_file_validates(tmp_path_factory, path, verb, suffix, window):
    tmp = tmp_path_factory.mktemp("out")
    out = tmp / f"out{suffix}"
    profile = tachyon_format.read(path)
    thread = int(profile.threads.thread_id[0]) if len(profile.threads) else 1
    if verb == "slice-window" and suffix not in (".bin", ".speedscope.json"):
        suffix = ".bin"
        out = tmp / "out.bin"
    argv = {
        "slice-thread": ["slice", path, out, "--thread", thread],
        "slice-window": ["slice", path, out, "--from-ms", window[0], "--to-ms",
                         window[0] + window[1]],
        "slice-focus": ["slice", path, out, "--focus", "main|work|fib"],
        "slice-empty": ["slice", path, out, "--thread", 1],
        "merge": ["merge", "-o", out, path, path],
        "convert": ["convert", path, out],
    }.get(verb)
    if argv is not None:
        assert main([str(a) for a in argv]) == 0
    elif verb == "anonymize":
        tachyon_format.write(analysis.anonymize(profile), out)
    else:
        tachyon_format.write(profile, out)
    assert fatal(out) == [], (verb, fatal(out))
    if suffix == ".bin" and verb.startswith("slice"):
        back = tachyon_format.read(out)  # the header declares the threads it holds
        assert tachyon_format.info(out)["thread_count"] == len(back.threads)


def test_a_time_window_has_the_windows_duration(tmp_path):
    out = tmp_path / "first.bin"
    assert main(["slice", str(WALL), str(out), "--to-ms", "100"]) == 0
    whole, part = tachyon_format.info(WALL), tachyon_format.info(out)
    assert whole["duration_sec"] > 0.5
    assert 0.09 <= part["duration_sec"] <= 0.101
    pprof = tmp_path / "first.pb.gz"
    assert main(["slice", str(WALL), str(pprof), "--to-ms", "100"]) == 0
    assert tachyon_format.info(pprof)["duration_nanos"] == round(part["duration_sec"] * 1e9)


# -- no lost input ------------------------------------------------------------------------------
def test_merge_never_writes_over_an_input(tmp_path, capsys):
    one, two = tmp_path / "run_1.bin", tmp_path / "run_2.bin"
    shutil.copy(WALL, one)
    shutil.copy(WALL, two)
    before = one.read_bytes()
    code, _, err = run(capsys, "merge", one, two)  # the old form: OUT FILE...
    assert code == 1 and "run_1.bin exists" in err and "-o OUT" in err
    assert one.read_bytes() == before
    code, _, err = run(capsys, "merge", "-o", one, one, two)
    assert code == 1 and "over one of the inputs" in err and one.read_bytes() == before
    assert run(capsys, "merge", "-o", tmp_path / "all.bin", one, two)[0] == 0
    assert run(capsys, "merge", tmp_path / "new.bin", one, two)[0] == 0  # (a new OUT)
    assert run(capsys, "merge", tmp_path / "new.bin", one, two, "--overwrite")[0] == 0
    code, _, err = run(capsys, "convert", one, one)
    assert code == 1 and "over one of the inputs" in err and one.read_bytes() == before


def test_dataset_add_keeps_going_past_a_bad_file(tmp_path, capsys):
    pytest.importorskip("pyarrow", reason="datasets need pyarrow (the fleet extra)")
    bad = tmp_path / "bad.bin"
    bad.write_bytes(b"HCAT" + bytes(100))
    code, _, err = run(capsys, "dataset", "add", tmp_path / "ds", WALL, bad, CPU)
    assert code == 1
    assert f"{bad}:" in err and "(not added)" in err
    assert "2 profiles added" in err
    assert tachyon_format.fleet.dataset.summary(str(tmp_path / "ds"))["profiles"] == 2


def test_dataset_add_names_a_bad_file_as_given(tmp_path, capsys, monkeypatch):
    pytest.importorskip("pyarrow", reason="datasets need pyarrow (the fleet extra)")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bad.bin").write_bytes(b"HCAT" + bytes(100))
    code, _, err = run(capsys, "dataset", "add", "ds", "bad.bin")
    assert code == 1 and "tachyon-format: bad.bin: " in err and str(tmp_path) not in err


def test_dataset_without_its_extra_says_which(tmp_path):
    script = textwrap.dedent("""
        import sys
        sys.modules["pyarrow"] = None
        from tachyon_format.cli import main
        sys.exit(main(["dataset", "info", sys.argv[1]]))
    """)
    done = subprocess.run([sys.executable, "-c", script, str(tmp_path)], capture_output=True,
                          text=True)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "pip install 'tachyon-format[fleet]'" in done.stderr


# -- one line, not a traceback --------------------------------------------------------------------
@pytest.mark.parametrize(("argv", "words"), [
    (["top", WALL, "--focus", "("], "not a regular expression"),
    (["top", WALL, "--thread", "-1"], "not a thread id"),
    (["slice", WALL, "x.bin", "--interpreter", "-5"], "not an interpreter id"),
])
def test_usage_errors(capsys, argv, words):
    with pytest.raises(SystemExit) as done:
        main([str(a) for a in argv])
    assert done.value.code == 2 and words in capsys.readouterr().err


@pytest.mark.parametrize(("argv", "words"), [
    (["convert", WALL, "o.pstats", "-O", "bogus=1"], "pstats writer has no option 'bogus'"),
    (["convert", WALL, "o.pstats", "-O", "sampled_marker=nope"], "is true or false"),
    (["convert", WALL, "o.collapsed", "-O", "style=bogus"], "is not one of"),
    (["convert", WALL, "o.txt"], "no format writes files named like 'o.txt'"),
    (["convert", WALL, "-"], "needs --to FORMAT"),
    (["top", WALL, "--sample-type", "bogus"], "no sample type 'bogus'"),
    (["merge", "-o", "m.bin", WALL, WALL, "--sample-type", "bogus"], "no sample type"),
    (["flamegraph", WALL, "-o", "f.html", "--sample-type", "bogus"], "no sample type"),
    (["flamegraph", CPU, "-o", "f.html", "--diff", WALL], "--force compares them anyway"),
    (["merge", "-o", "m.bin", WALL, CPU], "--force merges anyway"),
    (["top", WALL, "-n", "0"], "-n 0 shows no rows"),
])
def test_request_errors_are_one_line(tmp_path, monkeypatch, capsys, argv, words):
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, *argv)
    assert code == 1 and words in err and "Traceback" not in err and out == ""
    assert "force=True" not in err and "to=FORMAT" not in err


def test_writer_options_are_listed(capsys):
    code, out, _ = run(capsys, "convert", WALL, "x.pb.gz", "-O", "help")
    assert code == 0 and "pstats: interval_us=" in out and "sampled_marker=True" in out


def test_dump_of_counts_prints_nothing(tmp_path, capsys):
    counts = tmp_path / "counts.pb.gz"
    tachyon_format.convert(WALL, counts)
    code, out, err = run(capsys, "dump", counts)
    assert code == 1 and out == "" and "aggregated values" in err


# -- the output's extension chooses its compression ---------------------------------------------
@pytest.mark.parametrize(("name", "magic"), [("o.pb.zst", b"\x28\xb5\x2f\xfd"),
                                              ("o.pb.gz", b"\x1f\x8b"), ("o.pprof", b"\x1f\x8b"),
                                              ("o.pb", b"\x0a")])
def test_pprof_compression_from_the_name(tmp_path, capsys, name, magic):
    out = tmp_path / name
    assert run(capsys, "convert", WALL, out)[0] == 0
    assert out.read_bytes().startswith(magic)
    assert len(tachyon_format.read(out).samples) > 0


# -- a cut file: the hint, and --salvage ----------------------------------------------------------
def test_a_cut_file_says_so_and_salvage_reads_it(tmp_path, capsys):
    cut = tmp_path / "cut.bin"
    cut.write_bytes(CPU.read_bytes()[:4000])
    code, _, err = run(capsys, "top", cut)
    assert code == 1 and "cut short" in err and "--salvage" in err
    code, out, err = run(capsys, "top", cut, "--salvage", "-n", "3")
    assert code == 0 and "total:" in out and "salvage:" in err


# -- what a perf engineer reads ---------------------------------------------------------------
def test_top_shows_seconds_and_opcode_names(capsys):
    code, out, _ = run(capsys, "top", CPU, "--by", "opcode", "-n", "3")
    lines = out.splitlines()
    assert code == 0 and "self s" in lines[0]
    interval = tachyon_format.info(CPU)["sample_interval_us"] / 1e6
    first = lines[1].split()
    assert float(first[1]) == pytest.approx(int(first[0]) * interval, abs=1e-3)
    assert any(name in out for name in ("CALL", "RESUME", "LOAD_", "BINARY_"))
    assert "(1.759 s)" in out or " s)" in lines[-1]


def test_empty_results_say_so(capsys, tmp_path):
    code, out, err = run(capsys, "top", WALL, "--thread", "1")
    assert code == 0 and out == "" and "nothing to show: no sample passes --thread" in err
    code, _, err = run(capsys, "slice", WALL, tmp_path / "none.bin", "--from-ms", "900000")
    assert code == 0 and "no sample passes --from-ms" in err


def test_info_threads_lists_what_thread_takes(capsys):
    code, out, _ = run(capsys, "info", "--threads", GIL)
    profile = tachyon_format.read(GIL)
    assert code == 0
    for tid in profile.threads.thread_id.tolist():
        assert f" {tid} " in out
    assert "has_gil" in out and "gil_requested" in out and f"{len(profile.samples)} samples" in out
    table = analysis.thread_table(profile)
    assert table.total == len(profile.samples)
    assert main(["info", "--threads", str(GIL), "--json"]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line]
    assert len(rows) == len(profile.threads)


def test_callers_and_callees(capsys):
    code, out, _ = run(capsys, "callees", WALL, "parse_worker", "-n", "3")
    expected = analysis.callees(tachyon_format.read(WALL), "parse_worker")
    assert code == 0 and expected.rows() and str(expected.rows()[0][0]) in out
    code, out, _ = run(capsys, "callers", WALL, "fib", "--json")
    assert code == 0 and '"funcname"' in out


def test_validate_recurses(tmp_path, capsys):
    (tmp_path / "a" / "b").mkdir(parents=True)
    shutil.copy(WALL, tmp_path / "a" / "one.bin")
    shutil.copy(CPU, tmp_path / "a" / "b" / "two.bin")
    (tmp_path / "a" / "notes.txt").write_text("not a profile")
    code, out, _ = run(capsys, "validate", "-r", tmp_path / "a")
    assert code == 0 and out.count(": ok") == 2 and "notes.txt" not in out


def test_diff_gate_for_ci(capsys):
    other = DATA_DIR / "deep_recursion_wall.bin"
    code, out, err = run(capsys, "diff", WALL, other, "--fail-above", "5%", "--markdown")
    assert code == 1 and out.startswith(":x:") and "| base | other |" in out
    assert "leaf_work" in err
    code, out, err = run(capsys, "diff", WALL, WALL, "--fail-above", "5")
    assert code == 0 and "no row grew" in err
    code, _, err = run(capsys, "diff", CPU, WALL, "--fail-above", "5")
    assert code == 1 and "--force compares them anyway" in err


def test_version_and_gz_outputs_still_work(tmp_path, capsys):
    out = tmp_path / "o.collapsed.gz"
    assert run(capsys, "convert", WALL, out)[0] == 0
    assert gzip.decompress(out.read_bytes()).count(b"\n") > 10
