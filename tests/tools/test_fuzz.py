"""tools/fuzz.py: its pieces without atheris (the seed corpus, one input through every verb,
crash records, minimising), and a short bounded fuzzing run when atheris is installed."""

from __future__ import annotations

import contextlib
import importlib.util
import io
import os
import re
import shlex
import subprocess
import sys

import pytest

import tachyon_format
from tests.helpers.paths import DATA_DIR, REPO
from tests.helpers.tools import TOOLS, load_tool

fuzz = load_tool("fuzz_tool", TOOLS / "fuzz.py")


def test_the_seed_corpus_covers_every_readable_format(tmp_path):
    count = fuzz.write_seed_corpus(tmp_path)
    files = list(tmp_path.iterdir())
    assert count == len(files) > 0
    formats = {tachyon_format.sniff(p) for p in files}
    assert set(fuzz.readable_formats()) <= formats
    assert not any(p.name.endswith((".md", ".py", ".ref.jsonl.gz")) for p in files)


def test_golden_files_pass_through_every_verb():
    for path in [DATA_DIR / "synthetic_edges_zstd.bin", DATA_DIR / "synthetic_edges_raw.pstats",
                 *sorted((DATA_DIR / "gperftools").glob("*.prof"))[:1]]:
        fuzz.exercise(path.read_bytes())  # no Crash


def test_bytes_no_format_claims_still_reach_a_reader():
    # nothing sniffs them: a format is picked from the bytes, and its reader says no
    fuzz.exercise(b"\x00garbage")
    fuzz.exercise(b"")


def test_a_reader_bug_is_a_crash_with_its_signature_and_a_record(tmp_path, monkeypatch):
    from tachyon_format.formats.collapsed import reader

    def broken(source, **options):
        raise KeyError("a bug")

    monkeypatch.setattr(reader, "read", broken)
    data = (DATA_DIR / "synthetic_edges_raw.collapsed.txt").read_bytes()
    with pytest.raises(fuzz.Crash) as info:
        fuzz.exercise(data)
    crash = info.value
    assert (crash.verb, crash.format_name, type(crash.error)) == ("read", "collapsed", KeyError)
    # the innermost frame of the library: the verb that called the broken reader
    assert re.fullmatch(r"collapsed-read-KeyError-_api\.py:\d+", crash.signature())
    for _ in range(5):  # kept up to three times per signature
        fuzz.record_crash(crash, data + os.urandom(4), tmp_path)
    inputs = sorted(tmp_path.glob("*.input"))
    assert len(inputs) == 3
    text = inputs[0].with_suffix(".txt").read_text()
    assert "collapsed read: KeyError" in text and "Traceback" in text


def test_salvage_is_a_verb_of_its_own_with_its_contract_checked(monkeypatch):
    from tachyon_format.formats.tachyon import salvage

    whole = (DATA_DIR / "synthetic_edges_raw.bin").read_bytes()
    assert fuzz.exercise(whole) == fuzz.Reached(samples=True, salvaged=False)
    cut = whole[:len(whole) // 2]  # strict reading refuses it, salvage recovers the samples
    assert fuzz.exercise(cut) == fuzz.Reached(samples=False, salvaged=True)
    real = salvage.read

    def lists_fatal_problems_last(source, **options):
        profile = real(source, **options)
        profile.extras["salvage"].reverse()
        return profile

    monkeypatch.setattr(salvage, "read", lists_fatal_problems_last)
    with pytest.raises(fuzz.Crash) as info:
        fuzz.exercise(cut)
    assert (info.value.verb, info.value.format_name) == ("salvage", "tachyon")
    assert isinstance(info.value.error, fuzz.SalvageContractError)
    monkeypatch.setattr(salvage, "read", lambda source, **options: [][1])
    with pytest.raises(fuzz.Crash, match="tachyon salvage: IndexError"):
        fuzz.exercise(cut)


def test_a_verb_slower_than_the_bound_is_a_crash():
    with pytest.raises(fuzz.Crash, match=r"slow: .* s \(more than 0.0 s\)"):
        fuzz.exercise((DATA_DIR / "synthetic_edges_raw.collapsed.txt").read_bytes(),
                      max_seconds=0.0)


def test_minimize_keeps_the_failure_and_drops_the_rest(tmp_path, monkeypatch):
    from tachyon_format.formats.collapsed import reader

    real = reader.read

    def fails_on_x(source, **options):
        if b"X" in bytes(source):
            raise IndexError("X")
        return real(source, **options)

    monkeypatch.setattr(reader, "read", fails_on_x)
    crash = tmp_path / "crash.input"
    crash.write_bytes(b"a;b 1\n" * 20 + b"a;X 1\n" + b"c;d 2\n" * 20)
    assert fuzz.minimize(crash, 10.0, tmp_path / "out") == 0
    smallest = (tmp_path / "out").read_bytes()
    assert b"X" in smallest and len(smallest) < 12


@pytest.mark.skipif(importlib.util.find_spec("atheris") is None,
                    reason="atheris is not installed (pip install atheris)")
def test_a_short_fuzzing_run_finds_no_crash(tmp_path):
    # blind mutation (no coverage instrumentation) of small inputs: a few thousand inputs in
    # well under a minute, over every format the library reads.
    formats = ",".join(fuzz.readable_formats())
    result = subprocess.run(
        [sys.executable, str(TOOLS / "fuzz.py"), "--runs", "4000", "--no-coverage",
         "--max-len", "4096", "--formats", formats, "--crash-dir", str(tmp_path / "crashes"),
         "--progress", "0", "--max-mb", "3072"],
        capture_output=True, text=True, timeout=170, cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO / "src")})
    summary = re.search(r"fuzzed (\d+) inputs in (\d+) s .* peak memory (\d+) MiB.*; "
                        r"(\d+)% of the inputs got to the samples, (\d+)% were salvaged",
                        result.stdout)
    assert summary, result.stdout + result.stderr
    assert result.returncode == 0, result.stdout + result.stderr
    assert int(summary[1]) >= 4000
    # the seeds themselves are mutated (not one empty input, as libFuzzer does without
    # coverage): some of the mutants still read
    assert int(summary[4]) >= 5, result.stdout
    assert not list((tmp_path / "crashes").glob("*"))


@pytest.mark.skipif(importlib.util.find_spec("atheris") is None,
                    reason="atheris is not installed (pip install atheris)")
def test_region_fuzzing_gets_every_input_to_the_record_walk(tmp_path):
    result = subprocess.run(
        [sys.executable, str(TOOLS / "fuzz.py"), "--runs", "300", "--no-coverage", "--region",
         "--formats", "tachyon", "--crash-dir", str(tmp_path / "crashes"), "--progress", "0"],
        capture_output=True, text=True, timeout=170, cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO / "src")})
    assert result.returncode == 0, result.stdout + result.stderr
    share = re.search(r"(\d+)% of the inputs got to the samples", result.stdout)
    assert share and int(share[1]) >= 90, result.stdout


needs_fleet = pytest.mark.skipif(not fuzz.fleet_installed(),
                                 reason="the fleet dataset needs pyarrow and deltalake "
                                 "(the fleet extra)")
needs_atheris = pytest.mark.skipif(importlib.util.find_spec("atheris") is None,
                                   reason="atheris is not installed (pip install atheris)")


@needs_fleet
def test_the_fleet_target_counts_each_profile_once_in_a_dataset_it_reuses(tmp_path):
    from tachyon_format.fleet import dataset, file_rows

    fleet = fuzz.Fleet(tmp_path / "fleet", max_adds=4)
    tachyon = (DATA_DIR / "synthetic_edges_raw.bin").read_bytes()
    collapsed = (DATA_DIR / "synthetic_edges_raw.collapsed.txt").read_bytes()
    assert fuzz.exercise_fleet(tachyon, fleet)
    assert fuzz.exercise_fleet(collapsed, fleet)
    assert fuzz.exercise_fleet(tachyon, fleet)  # already there: skipped, still a profile
    assert not fuzz.exercise_fleet(tachyon[:100], fleet)  # a FormatError naming the file
    first = fleet.location
    facts = dataset.summary(first)
    assert facts["profiles"] == len(fleet.profiles) == 2
    assert facts["samples"] == sum(fleet.profiles.values()) == fuzz.samples_kept(
        tachyon_format.read(tachyon)) + fuzz.samples_kept(tachyon_format.read(collapsed)) > 0
    assert fuzz.exercise_fleet(collapsed, fleet)  # past max_adds: a new dataset
    assert fleet.location != first and not first.exists()
    assert list(fleet.profiles) == [file_rows.content_id(collapsed)]


@needs_fleet
def test_a_fleet_that_breaks_its_contract_is_a_crash(tmp_path, monkeypatch):
    from tachyon_format import FormatError
    from tachyon_format.fleet import dataset, file_rows

    data = (DATA_DIR / "synthetic_edges_raw.collapsed.txt").read_bytes()
    real_summary = dataset.summary

    def one_sample_more(location):
        return {**real_summary(location), "samples": real_summary(location)["samples"] + 1}

    broken = {
        "summary": (one_sample_more, "contract", fuzz.FleetContractError),
        # a different id for each add: the second add of the file is not skipped
        "content_id": (lambda source: os.urandom(8).hex(), "add again",
                       fuzz.FleetContractError),
        "add": (lambda *a, **k: (_ for _ in ()).throw(FormatError("bad")), "add",
                fuzz.FleetContractError),  # a FormatError that does not say which file
        "load_counts": (lambda *a, **k: [][1], "load_counts", IndexError),
    }
    for name, (replacement, verb, error) in broken.items():
        monkeypatch.setattr(file_rows if name == "content_id" else dataset, name, replacement)
        with pytest.raises(fuzz.Crash) as info:
            fuzz.exercise_fleet(data, fuzz.Fleet(tmp_path / name))
        assert (info.value.verb, type(info.value.error)) == (verb, error), name
        monkeypatch.undo()


@needs_atheris
@needs_fleet
def test_a_short_fleet_fuzzing_run_finds_no_crash(tmp_path):
    # the gperftools and JSONL seeds (13) and a few mutants added to one dataset: the option
    # end to end in about 15 s (an input costs 0.3-0.5 s of CPU; real runs: docs/fuzzing.md)
    result = subprocess.run(
        [sys.executable, str(TOOLS / "fuzz.py"), "--fleet", "--runs", "20", "--no-coverage",
         "--formats", "gperftools,jsonl", "--crash-dir", str(tmp_path / "crashes"),
         "--progress", "0"],
        capture_output=True, text=True, timeout=170, cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO / "src")})
    assert result.returncode == 0, result.stdout + result.stderr
    summary = re.search(r"fuzzed (\d+) inputs .* (\d+)% of the inputs made a profile of the "
                        r"dataset", result.stdout)
    assert summary and int(summary[1]) >= 20, result.stdout
    assert int(summary[2]) >= 20, result.stdout  # (the seeds themselves all do)
    assert not list((tmp_path / "crashes").glob("*"))


PAGE = REPO / "docs" / "fuzzing.md"
PAGE_TEXT = PAGE.read_text(encoding="utf-8")


def test_the_fuzzing_page_examples_print_what_it_shows():
    python = re.findall(r"```python\n(.*?)```", PAGE_TEXT, re.S)
    shown = re.findall(r"```text\n(.*?)```", PAGE_TEXT, re.S)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        for index, block in enumerate(python):
            exec(compile(block, f"{PAGE.name} block {index}", "exec"), {})
    assert printed.getvalue() == "".join(shown)


@pytest.mark.parametrize("line", [line for block in re.findall(r"```sh\n(.*?)```", PAGE_TEXT,
                                                                re.S)
                                  for line in block.splitlines()
                                  if line.startswith("python tools/fuzz.py ")])
def test_the_fuzzing_page_command_lines_parse(line):
    fuzz.build_parser().parse_args(shlex.split(line)[2:])


def test_the_fuzzing_page_is_linked_from_the_readme():
    assert "(docs/fuzzing.md)" in (REPO / "README.md").read_text(encoding="utf-8")
