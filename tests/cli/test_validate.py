"""``tachyon-format validate``: every file checked, every problem printed with its severity;
exit 1 if any is malformed (notes alone are fine), 2 if one cannot be read."""

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
    assert (f"{bad}: unreadable: Sample count mismatch: header declares 1360 samples but replay "
            "decoded 1361: expected 1360, found 1361 (offset 28, header -> sample_count)") in out


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
    assert f"{tmp_path}: unreadable: cannot read: Is a directory" in out
    assert f"{good}: ok" in out and f"{tmp_path / 'absent.bin'}: unreadable: cannot read:" in out
    assert f"{bad}: " in out
    assert main(["validate", str(good), str(bad)]) == 1


def test_json_lines(tmp_path, capsys):
    import json

    good = DATA_DIR / "threads_wall_zstd.bin"
    assert main(["validate", "--json", str(good), str(tmp_path)]) == 2
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(r["file"], r["status"]) for r in rows] == [(str(good), "valid"),
                                                       (str(tmp_path), "unreadable")]
    assert rows[0]["problems"] == []
    assert rows[1]["problems"] == [{"severity": "unreadable", "message": "cannot read: Is a "
                                    "directory", "offset": None, "field": None, "record": None,
                                    "region": False, "expected": None, "found": None,
                                    "region_start": None, "compressed": False,
                                    "file_offset": None}]


def test_json_problem_fields(tmp_path, capsys):
    import json

    data = bytearray((DATA_DIR / "threads_wall_zstd.bin").read_bytes())
    data[-24:-16] = (len(data) + 5).to_bytes(8, "little")  # the footer's file size
    bad = tmp_path / "bad.bin"
    bad.write_bytes(bytes(data))
    assert main(["validate", "--json", str(bad)]) == 1
    row = json.loads(capsys.readouterr().out)
    assert row["status"] == "invalid"
    assert row["problems"] == [{
        "severity": "inconsistent", "message": row["problems"][0]["message"],
        "offset": len(data) - 24, "field": "footer -> file_size", "record": None,
        "region": False, "expected": str(len(data)), "found": str(len(data) + 5),
        "region_start": None, "compressed": False, "file_offset": len(data) - 24}]


def test_notes_alone_are_valid_and_printed(capsys):
    path = DATA_DIR / "invalid_utf8_strings.bin"
    assert main(["validate", str(path)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"{path}: ok"
    assert f"{path}: note: a string that is not valid UTF-8" in out[1]
    assert all(line.startswith(f"{path}: note: ") for line in out[1:])


def test_killed_recording_says_so(tmp_path, capsys):
    data = (DATA_DIR / "threads_wall_zstd.bin").read_bytes()
    killed = tmp_path / "killed.bin"
    killed.write_bytes(bytes(64) + data[64:int.from_bytes(data[40:48], "little")])
    assert main(["validate", str(killed)]) == 1
    out = capsys.readouterr().out
    assert ("the profiler was killed before it finished writing" in out
            and "read(..., strict=False) recovers the samples" in out)
    assert f"{killed}: note: read(..., strict=False) recovers 1361 samples of 4 threads" in out


def test_other_formats_validate(tmp_path, capsys):
    import tachyon_format

    out = tmp_path / "p.pb.gz"
    tachyon_format.convert(DATA_DIR / "threads_wall_zstd.bin", out)
    assert main(["validate", str(out)]) == 0
    assert main(["validate", "--format", "tachyon", str(out)]) == 1
