"""``tachyon-format validate``: every file checked, exit 1 if any is malformed."""

from __future__ import annotations

from tachyon_format.cli import main
from tests.helpers.paths import DATA_DIR


def test_validate_lists_each_file(tmp_path, capsys):
    good = DATA_DIR / "threads_wall_zstd.bin"
    data = bytearray(good.read_bytes())
    data[28] ^= 1  # the header's sample count no longer matches the records
    bad = tmp_path / "bad.bin"
    bad.write_bytes(bytes(data))
    assert main(["validate", str(good), str(bad)]) == 1
    out = capsys.readouterr().out
    assert f"{good}: ok" in out
    assert f"{bad}: Sample count mismatch" in out


def test_all_valid_is_exit_0(capsys):
    assert main(["validate", *map(str, sorted(DATA_DIR.glob("*.bin")))]) == 0
    assert capsys.readouterr().out.count(": ok\n") == len(list(DATA_DIR.glob("*.bin")))
