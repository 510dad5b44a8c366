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


def test_keeps_going_past_unreadable_paths_exit_2(tmp_path, capsys):
    good = DATA_DIR / "threads_wall_zstd.bin"
    bad = tmp_path / "bad.bin"
    bad.write_bytes(b"HCAT" + bytes(10))
    code = main(["validate", str(tmp_path), str(good), str(tmp_path / "absent.bin"), str(bad)])
    assert code == 2  # unreadable outranks malformed
    out = capsys.readouterr().out
    assert f"{tmp_path}: cannot read: Is a directory" in out
    assert f"{good}: ok" in out and f"{tmp_path / 'absent.bin'}: cannot read:" in out
    assert f"{bad}: " in out
    assert main(["validate", str(good), str(bad)]) == 1


def test_json_lines(tmp_path, capsys):
    import json

    good = DATA_DIR / "threads_wall_zstd.bin"
    assert main(["validate", "--json", str(good), str(tmp_path)]) == 2
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(r["file"], r["status"]) for r in rows] == [(str(good), "valid"),
                                                       (str(tmp_path), "unreadable")]
    assert rows[0]["problems"] == [] and rows[1]["problems"]


def test_other_formats_validate(tmp_path, capsys):
    import tachyon_format

    out = tmp_path / "p.pb.gz"
    tachyon_format.convert(DATA_DIR / "threads_wall_zstd.bin", out)
    assert main(["validate", str(out)]) == 0
    assert main(["validate", "--format", "tachyon", str(out)]) == 1
