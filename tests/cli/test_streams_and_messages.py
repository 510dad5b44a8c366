"""``-`` as standard input or output, and the words of the command line's errors for a file
that is not what the command needs: an unfinished Tachyon file (all-zero header), gzip'd data
that is no profile, a pstats or pprof file given to a command that needs samples."""

from __future__ import annotations

import gzip
import io
import sys

import pytest

from tachyon_format.cli import hints, main
from tests.helpers.paths import DATA_DIR

FILE = DATA_DIR / "threads_wall_zstd.bin"
PSTATS = DATA_DIR / "exceptions_mode_zstd.pstats"


def run_main(args: list[str], capsysbinary, stdin: bytes | None = None,
             monkeypatch=None) -> tuple[int, bytes, str]:
    if stdin is not None:
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin)))
    code = main(args)
    out, err = capsysbinary.readouterr()
    return code, out, err.decode()


@pytest.mark.parametrize("args", [
    ["info", "{}"], ["info", "{}", "--json"], ["dump", "{}"], ["top", "{}", "-n", "3"],
    ["slice", "{}", "-", "--to", "collapsed"], ["diff", "{}", str(FILE), "--force"],
    ["merge", "-", "{}", "--to", "collapsed"],
], ids=["info", "info-json", "dump", "top", "slice", "diff", "merge"])
def test_standard_input_reads_as_the_file_does(args, capsysbinary, monkeypatch):
    by_path = run_main([a.replace("{}", str(FILE)) for a in args], capsysbinary)
    by_stdin = run_main([a.replace("{}", "-") for a in args], capsysbinary,
                        FILE.read_bytes(), monkeypatch)
    assert by_path[0] == by_stdin[0] == 0
    assert by_stdin[1] == by_path[1] and by_path[1]


@pytest.mark.parametrize("command", [["flamegraph"], ["flamegraph", "--svg"], ["timeline"]],
                         ids=["flamegraph", "svg", "timeline"])
def test_pictures_go_to_standard_output(command, tmp_path, capsysbinary):
    out = tmp_path / ("out.svg" if "--svg" in command else "out.html")
    assert main([command[0], str(FILE), "-o", str(out), *command[1:]]) == 0
    capsysbinary.readouterr()
    assert main([command[0], str(FILE), "-o", "-", *command[1:]]) == 0
    piped, err = capsysbinary.readouterr()
    assert piped == out.read_bytes()
    assert err == b""  # (the "FILE -> OUT" line is only for a file)


def test_dump_to_dash_is_standard_output(capsysbinary):
    assert main(["dump", str(FILE)]) == 0
    plain = capsysbinary.readouterr().out
    assert main(["dump", str(FILE), "-o", "-"]) == 0
    assert capsysbinary.readouterr().out == plain


def unfinished(tmp_path, name: str = "killed.bin"):
    """A Tachyon file as a profiler killed mid-run leaves it: CPython's writer reserves the
    header as zeros and fills it in (with the footer) only when it finishes."""
    data = FILE.read_bytes()
    path = tmp_path / name
    path.write_bytes(bytes(64) + data[64 : len(data) // 2])
    return path


@pytest.mark.parametrize("command", [["info"], ["dump"], ["top"], ["info", "--json"]])
def test_an_unfinished_file_is_called_so(command, tmp_path, capsys):
    path = unfinished(tmp_path)
    assert main([command[0], str(path), *command[1:]]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"tachyon-format: {path}: Invalid magic number: 0x00000000")
    assert "all zeros" in err and "stopped before it finished" in err
    assert "validate" in err and "--salvage" in err


@pytest.mark.parametrize("command", ["info", "dump", "top"])
def test_a_real_killed_recording_is_called_so(command, capsys):
    """The recording CPython's profiler left when it was killed (tests/data/killed/)."""
    path = DATA_DIR / "killed" / "killed_zstd.bin"
    assert main([command, str(path)]) == 1
    err = capsys.readouterr().err
    assert "Invalid magic number: 0x00000000" in err and "stopped before it finished" in err


def test_an_unfinished_file_among_several(tmp_path, capsys):
    path = unfinished(tmp_path)
    assert main(["info", str(FILE), str(path)]) == 1
    captured = capsys.readouterr()
    assert captured.err.count("all zeros") == 1 and str(path) in captured.err
    assert "sample_count" in captured.out


def test_an_unfinished_file_without_a_tachyon_name(tmp_path, capsys):
    path = unfinished(tmp_path, "profile.dat")
    assert main(["top", str(path)]) == 1
    err = capsys.readouterr().err
    assert "an all-zero start" in err and "stopped before it finished" in err


def test_only_an_all_zero_header_gets_the_hint(tmp_path, capsys):
    data = bytearray(unfinished(tmp_path).read_bytes())
    data[63] = 1  # one byte of the header set: something else is wrong with this file
    path = tmp_path / "other.bin"
    path.write_bytes(data)
    assert hints.hint(path) is None
    assert main(["info", str(path)]) == 1
    assert "all zeros" not in capsys.readouterr().err
    assert hints.hint(tmp_path / "missing.bin") is None and hints.hint("-") is None


def test_gzipped_data_that_is_no_profile(tmp_path, capsys):
    path = tmp_path / "notes.gz"
    path.write_bytes(gzip.compress(b"hello, world\n"))
    assert main(["top", str(path)]) == 1
    assert "gzip-compressed data" in capsys.readouterr().err


def test_a_gzipped_tachyon_file_is_read(tmp_path, capsys):
    path = tmp_path / "profile.bin.gz"
    path.write_bytes(gzip.compress(FILE.read_bytes()))
    assert main(["top", str(path), "-n", "2"]) == 0
    gunzipped = capsys.readouterr().out
    assert main(["top", str(FILE), "-n", "2"]) == 0
    assert capsys.readouterr().out == gunzipped


@pytest.mark.parametrize("command", ["top", "dump", "timeline"])
def test_a_pstats_file_says_what_it_holds(command, tmp_path, capsys):
    assert main([command, str(PSTATS), "-o", str(tmp_path / "x.html")]
                if command == "timeline" else [command, str(PSTATS)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"tachyon-format: {PSTATS}: a pstats file holds per-function totals")


@pytest.mark.parametrize("command", ["dump", "timeline"])
def test_an_aggregated_profile_to_a_command_that_needs_times(command, tmp_path, capsys):
    pprof = tmp_path / "profile.pb.gz"
    assert main(["convert", str(FILE), str(pprof)]) == 0
    capsys.readouterr()
    args = [command, str(pprof)] + (["-o", str(tmp_path / "t.html")]
                                    if command == "timeline" else [])
    assert main(args) == 1
    err = capsys.readouterr().err
    assert "has none" in err and ("time" in err or "timestamps" in err)
