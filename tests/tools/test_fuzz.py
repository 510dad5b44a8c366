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
