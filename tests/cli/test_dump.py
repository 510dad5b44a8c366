"""``tachyon-format dump``: CPython's own decode, to a file or standard output."""

from __future__ import annotations

import subprocess
import sys

from tachyon_format.cli import main
from tests.helpers.golden import reference_text
from tests.helpers.paths import DATA_DIR


def test_dump_to_a_file_is_cpythons_decode(tmp_path):
    path = DATA_DIR / "exceptions_mode_zstd.bin"
    out = tmp_path / "dump.jsonl"
    assert main(["dump", str(path), "-o", str(out)]) == 0
    assert out.read_text() == reference_text(path)


def test_dump_to_stdout(capsys):
    path = DATA_DIR / "invalid_utf8_strings.bin"
    assert main(["dump", str(path)]) == 0
    assert capsys.readouterr().out == reference_text(path)


def test_a_closed_pipe_is_not_an_error():
    """``tachyon-format dump big.bin | head``: exit 0, nothing on stderr."""
    path = DATA_DIR / "synthetic_long_repeat_zstd.bin"
    run = subprocess.run(
        f"'{sys.executable}' -m tachyon_format dump '{path}' | head -n 1",
        shell=True, capture_output=True, text=True, check=True)
    assert run.stdout.count("\n") == 1
    assert run.stderr == ""


def test_a_profile_without_timestamps_is_refused_in_words(capsys):
    path = DATA_DIR / "gperftools" / "libprofiler_mixed.prof"
    assert main(["dump", str(path)]) == 1
    assert "with their time and status" in capsys.readouterr().err
