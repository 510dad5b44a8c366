"""fleet/dataset.py's compaction and batched adds: ``compact`` leaves every answer as it was
with fewer files, a checkpointed log and the rows of stale writes gone; an add after it
skips what is there; a batch of files is one commit per table, and a bad file in it is
reported and left out while the others are added."""

from __future__ import annotations

import uuid

import pytest

pa = pytest.importorskip("pyarrow", reason="the fleet dataset needs pyarrow")
pads = pytest.importorskip("pyarrow.dataset", reason="the fleet dataset needs pyarrow")
pytest.importorskip("deltalake", reason="the fleet dataset needs deltalake")

from tachyon_format.cli.main import main  # noqa: E402
from tachyon_format.fleet import dataset, delta, layout  # noqa: E402
from tests.fleet.conftest import write_fleet  # noqa: E402


def answers(location) -> dict:
    """The summary and, per profile, what its committed write reads back as."""
    per_profile = {}
    for row in dataset.profiles(location).to_pylist():
        counts = dataset.load_counts(location, row["profile_id"], row["write_id"])
        per_profile[row["profile_id"]] = (
            counts.num_samples, sorted(map(tuple, zip(*(counts.counts[k].tolist() for k in
                                                        sorted(counts.counts)), strict=True))),
            sorted(counts.frames["frame_id"].tolist()), row["partition"])
    return {"summary": dataset.summary(location), "profiles": per_profile}


def data_files(location, table: str) -> list:
    return [p for p in (location / table).rglob("*.parquet") if "_delta_log" not in p.parts]


def commits(location, table: str) -> int:
    return len(list((location / table / "_delta_log").glob("*.json")))


@pytest.fixture
def grown(tmp_path):
    """A dataset grown by one add per file (a file per table each), with the rows of a
    stale write of one profile (as a writer killed before a re-run committed it leaves)."""
    location = tmp_path / "ds"
    for path in write_fleet(tmp_path / "in", 8, seed=900):
        dataset.add(location, [path], labels={"service": "api"})
    row = dataset.profiles(location).to_pylist()[0]
    stale = uuid.uuid4().hex
    for table in layout.PARTS:  # (the committed write's rows again, under another id)
        rows = delta.read(location, table, layout.stored(table),
                          pads.field("write_id") == row["write_id"],
                          files=f"profile_id = '{row['profile_id']}'")
        rows = rows.set_column(rows.schema.get_field_index("write_id"), layout.WRITE_ID,
                               pa.array([stale] * len(rows), pa.string()))
        delta.append(location, table, lambda rows=rows: rows)
    return location, stale


def test_compact_keeps_the_answers_with_fewer_files(grown):
    location, stale = grown
    before = answers(location)
    files = {table: len(data_files(location, table)) for table in layout.TABLES}
    raw = dataset.arrow(location, "samples").count_rows()
    done = dataset.compact(location, retention_hours=0)
    assert answers(location) == before
    assert done.stale_writes == 1
    for table in layout.TABLES:  # (rewritten into one, the old ones deleted from the disk)
        assert len(data_files(location, table)) < files[table] and \
            done.tables[table]["files_deleted"] >= files[table], table
        assert list((location / table / "_delta_log").glob("*.checkpoint.parquet")), table
    ids = dataset.arrow(location, "samples").to_table(columns=["write_id"]).column(0)
    assert stale not in ids.to_pylist()
    assert dataset.arrow(location, "samples").count_rows() < raw
    again = dataset.compact(location, retention_hours=0)  # (nothing left to do)
    assert again.stale_writes == 0 and answers(location) == before


def test_an_add_after_compact_skips_what_is_there(grown, tmp_path):
    location, _ = grown
    dataset.compact(location, retention_hours=0)
    paths = sorted(str(p) for p in (tmp_path / "in").iterdir())
    more = write_fleet(tmp_path / "more", 2, seed=950)
    added = dataset.add(location, [*paths, *more], labels={"service": "api"})
    assert [a.skipped for a in added] == [True] * len(paths) + [False, False]
    assert dataset.summary(location)["profiles"] == len(paths) + 2


def test_the_default_retention_keeps_the_files_older_versions_need(grown):
    location, _ = grown
    files = len(data_files(location, "samples"))
    done = dataset.compact(location)
    assert done.tables["samples"]["files_deleted"] == 0
    assert len(data_files(location, "samples")) == files + 1  # (the old ones, and the new)


def test_one_add_of_many_files_is_one_commit_per_table(tmp_path, monkeypatch):
    monkeypatch.setattr(dataset, "BATCH_FILES", 4)
    paths = write_fleet(tmp_path / "in", 6, seed=960)
    location = tmp_path / "ds"
    dataset.add(location, paths[:1])
    before = {table: commits(location, table) for table in layout.TABLES}
    added = dataset.add(location, [*paths, paths[2]])
    assert [a.skipped for a in added] == [True, False, False, False, False, False, True]
    for table in layout.TABLES:  # (6 new files in batches of 4: two commits)
        assert commits(location, table) - before[table] == 2, table
    assert dataset.summary(location)["profiles"] == 6


def test_a_bad_file_in_a_batch_is_reported_and_the_others_added(tmp_path, capsys):
    paths = write_fleet(tmp_path / "in", 3, seed=970)
    bad = tmp_path / "in" / "bad.bin"
    bad.write_bytes(b"HCAT" + bytes(100))
    location = tmp_path / "ds"
    failed = []
    added = dataset.add(location, [paths[0], bad, tmp_path / "missing.bin", *paths[1:]],
                        on_error=lambda name, exc: failed.append(name))
    assert failed == [str(bad), str(tmp_path / "missing.bin")]
    assert [a.skipped for a in added] == [False, False, False]
    assert main(["dataset", "compact", str(location), "--retention-hours", "0"]) == 0
    assert "profiles: " in capsys.readouterr().out
    assert dataset.summary(location)["profiles"] == 3


def test_a_reader_of_the_version_before_reads_on_within_the_retention(grown):
    """A reader that opened a table before the compaction reads the files of its version:
    they stay for the retention, and go with a retention of 0."""
    location, _ = grown
    rows = dataset.arrow(location, "samples").count_rows()
    first, second = (dataset.arrow(location, "samples") for _ in range(2))  # (not read yet)
    dataset.compact(location)
    assert first.to_table().num_rows == rows
    dataset.compact(location, retention_hours=0)
    with pytest.raises(OSError):
        second.to_table()


def test_profiles_read_back_from_files_a_delete_rewrote(tmp_path):
    """delta-rs writes the files a delete rewrites with string_view columns, which a filter
    pushed into pyarrow's scan cannot compare (as a writer that lost a race leaves them)."""
    paths = write_fleet(tmp_path / "in", 3, seed=980)
    location = tmp_path / "ds"
    dataset.add(location, paths)
    gone, *kept = dataset.profiles(location).to_pylist()
    for table in layout.PARTS:
        delta.delete(location, table, f"write_id = '{gone['write_id']}'")
    for row in kept:
        counts = dataset.load_counts(location, row["profile_id"], row["write_id"])
        assert counts.num_samples == row["num_samples"]
