"""The golden files in tests/data, and the CPython oracle that produced their decodes.

Without the reference interpreter these check that every golden file is complete and its
stored decode is well formed. With it, they check that ``tools/cpython_decode.py`` reproduces
every stored decode byte for byte (so the goldens and the oracle agree) and that
``reference_write`` drives CPython's writer as described.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from tests.helpers.paths import DATA_DIR
from tests.helpers.reference import (
    reference_batches,
    reference_decode,
    reference_info,
    reference_stats,
    reference_write,
    requires_reference,
)

GOLDEN = sorted(DATA_DIR.glob("*.bin"))
COMPANIONS = (".ref.jsonl.gz", ".collapsed.txt", ".pstats")
INFO_KEYS = {
    "version", "python_version", "start_time_us", "sample_interval_us", "sample_count",
    "thread_count", "string_count", "frame_count", "compression_type", "duration_sec",
    "sample_rate", "error_rate", "missed_samples", "mode", "capture_features",
}
# Where a neutral profile's frames come from: the workload, the stdlib, or a pseudo-file
# (frozen modules, "~" for <native>/<GC> frames, and names CPython reports for C slots).
NEUTRAL_PREFIXES = ("/app/", "/usr/lib/python3.15/", "<", "~")


def companion(binary: Path, suffix: str) -> Path:
    return binary.with_name(binary.name.removesuffix(".bin") + suffix)


def stored_decode(binary: Path) -> str:
    return gzip.decompress(companion(binary, ".ref.jsonl.gz").read_bytes()).decode("utf-8")


def by_name(paths: list[Path]):
    return pytest.mark.parametrize("binary", paths, ids=[path.stem for path in paths])


def test_golden_files_exist(golden_bins):
    assert golden_bins == GOLDEN
    assert len(golden_bins) >= 6


def test_golden_files_are_small(data_dir):
    assert sum(path.stat().st_size for path in data_dir.iterdir()) < 1_000_000


@by_name(GOLDEN)
def test_companions_present(binary):
    for suffix in COMPANIONS:
        assert companion(binary, suffix).is_file(), suffix


@by_name(GOLDEN)
def test_stored_decode_is_well_formed(binary):
    text = stored_decode(binary)
    assert text.endswith("\n")
    info_line, *sample_lines = text.splitlines()
    info = json.loads(info_line)
    assert set(info) == INFO_KEYS
    assert info["sample_count"] == len(sample_lines)
    for line in sample_lines:
        interpreter_id, thread_id, timestamp_us, status, frames = json.loads(line)
        assert 0 <= status <= 255
        assert len(frames) <= 256
        assert all(len(frame) == 7 for frame in frames)


@by_name(GOLDEN)
def test_recorded_paths_are_neutral(binary):
    for line in stored_decode(binary).splitlines()[1:]:
        for filename, *_ in json.loads(line)[4]:
            assert filename.startswith(NEUTRAL_PREFIXES) or "/" not in filename, filename


def test_readme_describes_every_golden_file(data_dir):
    readme = (data_dir / "README.md").read_text(encoding="utf-8")
    for binary in GOLDEN:
        assert f"`{binary.stem}`" in readme


# --- with the reference interpreter ---------------------------------------------------------


@pytest.mark.reference
@requires_reference
@by_name(GOLDEN)
def test_oracle_reproduces_golden_decode(binary):
    assert reference_decode(binary) == stored_decode(binary)


@pytest.mark.reference
@requires_reference
def test_oracle_reproduces_shared_fixture_decodes(shared_fixtures):
    binaries = sorted((shared_fixtures / "tachyon").glob("*/*.bin"))
    assert binaries
    mismatched = [b.name for b in binaries if reference_decode(b) != stored_decode(b)]
    assert mismatched == []


def frame(funcname, line, opcode=None):
    return ["/app/m.py", [line, line + 1, 4, 12], funcname, opcode]


MAIN, WORK = frame("main", 3), frame("work", 10, opcode=90)
SAMPLES = [  # one thread: FULL, REPEAT x4 with a status change, SUFFIX, then a second thread
    [1_000, [[0, [[7, 0x21, [MAIN]]]]]],
    [2_000, [[0, [[7, 0x21, [MAIN]]]]]],
    [3_000, [[0, [[7, 0x21, [MAIN]]]]]],
    [4_000, [[0, [[7, 0x23, [MAIN]]]]]],
    [5_000, [[0, [[7, 0x23, [MAIN]]]]]],
    [6_000, [
        [0, [[7, 0x21, [WORK, MAIN]]]],
        [1, [[2**64 - 1, 0, [["~", None, "<GC>", None]]]]],
    ]],
]


def expected_row(interpreter_id, thread_id, timestamp_us, status, frames):
    rows = [[name, func, *(loc or [None] * 4), op] for name, loc, func, op in frames]
    return json.dumps([interpreter_id, thread_id, timestamp_us, status, rows],
                      separators=(",", ":"))


@pytest.mark.reference
@requires_reference
def test_reference_write_round_trips(tmp_path):
    path = reference_write(SAMPLES, tmp_path / "small.bin", start_time_us=500,
                           stats=[0.006, 1000.0], compression=1, mode=1, capture_features=9)
    info_line, *rows = reference_decode(path).splitlines()
    expected = [expected_row(iid, tid, ts, status, frames)
                for ts, interpreters in SAMPLES
                for iid, threads in interpreters
                for tid, status, frames in threads]
    assert rows == expected
    info = json.loads(info_line)
    assert info == reference_info(path)
    assert (info["compression_type"], info["mode"], info["capture_features"]) == (1, 1, 9)
    assert (info["duration_sec"], info["error_rate"], info["start_time_us"]) == (0.006, None, 500)
    assert info["thread_count"] == 2 and info["sample_count"] == 7


@pytest.mark.reference
@requires_reference
def test_reference_counters_and_batches(tmp_path):
    path = reference_write(SAMPLES, tmp_path / "small.bin")
    stats = reference_stats(path)
    assert (stats["full_records"], stats["repeat_records"], stats["suffix_records"]) == (2, 1, 1)
    assert stats["repeat_samples"] == 4 and stats["total_samples"] == 7
    # A REPEAT run is delivered in batches of equal status.
    assert reference_batches(path) == [
        [0, 7, 0x21, 1], [0, 7, 0x21, 2], [0, 7, 0x23, 2], [0, 7, 0x21, 1], [1, 2**64 - 1, 0, 1],
    ]
