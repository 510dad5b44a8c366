"""``tachyon-format info``: CPython's get_info() as JSON or as a table."""

from __future__ import annotations

import json

from tachyon_format.cli import main
from tests.helpers.golden import reference_text
from tests.helpers.paths import DATA_DIR


def test_info_json_is_cpythons_get_info(capsys):
    path = DATA_DIR / "threads_gil_blocking.bin"
    assert main(["info", "--json", str(path)]) == 0
    assert json.loads(capsys.readouterr().out) == json.loads(reference_text(path).split("\n")[0])


def test_info_table_names_the_mode_and_features(capsys):
    assert main(["info", str(DATA_DIR / "threads_gil_blocking.bin")]) == 0
    out = capsys.readouterr().out
    assert "gil (2)" in out
    assert "blocking" in out and "python_version      3.15.2" in out


def test_format_errors_are_one_line_with_the_file(tmp_path, capsys):
    bad = tmp_path / "bad.bin"
    bad.write_bytes(b"XXXX" + bytes(100))
    assert main(["info", str(bad)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert str(bad) in err and "Invalid magic number" in err and "offset 0" in err


def test_a_file_that_is_no_profile_says_what_it_looks_like(tmp_path, capsys):
    gz = tmp_path / "profile.pb.gz"
    gz.write_bytes(b"\x1f\x8b\x08\x00" + bytes(60))
    assert main(["info", str(gz)]) == 1
    assert "gzip-compressed data" in capsys.readouterr().err


def test_a_missing_file_is_reported(tmp_path, capsys):
    assert main(["info", str(tmp_path / "absent.bin")]) == 1
    assert "No such file" in capsys.readouterr().err


def test_several_files_as_json_lines_past_a_bad_one(tmp_path, capsys):
    paths = [DATA_DIR / "threads_gil_blocking.bin", tmp_path / "absent.bin",
             DATA_DIR / "threads_wall_zstd.bin"]
    assert main(["info", "--json", *map(str, paths)]) == 1
    captured = capsys.readouterr()
    rows = [json.loads(line) for line in captured.out.splitlines()]
    assert [row["file"] for row in rows] == [str(paths[0]), str(paths[2])]
    assert rows[0]["sample_count"] > 0
    assert str(paths[1]) in captured.err and "No such file" in captured.err


def test_several_files_as_tables(capsys):
    paths = [DATA_DIR / "threads_gil_blocking.bin", DATA_DIR / "threads_wall_zstd.bin"]
    assert main(["info", *map(str, paths)]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"{paths[0]}:\n") and f"\n\n{paths[1]}:\n" in out


def test_version(capsys):
    import pytest

    import tachyon_format

    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0
    out = capsys.readouterr().out.strip()
    assert out.startswith(f"tachyon-format {tachyon_format.__version__}: ")
    active = tachyon_format.decoder_info()["active"]
    assert ("the compiled record walk" if active == "compiled" else "the numpy decoder") in out


def test_version_says_when_the_numpy_decoder_is_forced(capsys, monkeypatch):
    import pytest

    monkeypatch.setenv("TACHYON_FORMAT_DECODER", "numpy")
    with pytest.raises(SystemExit):
        main(["--version"])
    assert "read by the numpy decoder" in capsys.readouterr().out
