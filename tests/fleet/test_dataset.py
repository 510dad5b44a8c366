"""fleet/dataset.py: files of every format become dataset rows that read back as the same
analysis; Tachyon files are read in batches with the same result; fsspec URLs; bad input
and bad requests fail cleanly, leaving no half-added profile; damaged tables are a
FormatError; a dataset of layout version 1 is migrated. (Kills and concurrent writers:
test_dataset_writers.py.)"""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

pq = pytest.importorskip("pyarrow.parquet", reason="the fleet dataset needs pyarrow")
deltalake = pytest.importorskip("deltalake", reason="the fleet dataset needs deltalake")
pads = pytest.importorskip("pyarrow.dataset", reason="the fleet dataset needs pyarrow")
fsspec = pytest.importorskip("fsspec", reason="URLs need fsspec (the fleet extra)")

import tachyon_format  # noqa: E402
from tachyon_format.analysis import function_table  # noqa: E402
from tachyon_format.cli.main import main  # noqa: E402
from tachyon_format.fleet import dataset, layout  # noqa: E402
from tests.fleet.conftest import write_fleet, write_fleet_to_memory  # noqa: E402


def rows(table) -> list:
    return sorted(table.rows())


def read_back(location, row) -> object:
    return dataset.load_counts(location, row["profile_id"], row["write_id"]).to_profile()


def visible_rows(location, table: str = "samples") -> int:
    """Rows of *table*, of any write (those of writes that did not commit included)."""
    return dataset.arrow(location, table).count_rows()


def data_files(location, table: str) -> list:
    return [p for p in (location / table).rglob("*.parquet") if "_delta_log" not in p.parts]


def test_every_format_reads_back_with_the_same_tables(tmp_path):
    paths = write_fleet(tmp_path / "in", 5, seed=1)
    added = dataset.add(tmp_path / "ds", paths, labels={"service": "api"})
    assert [a.skipped for a in added] == [False] * 5
    table = dataset.profiles(tmp_path / "ds")
    assert sorted(table.column("format").to_pylist()) == sorted(
        ["tachyon", "pprof", "collapsed", "speedscope", "jsonl"])
    for row in table.to_pylist():
        original = tachyon_format.read(row["source"])
        back = read_back(tmp_path / "ds", row)
        assert rows(function_table(back, "line")) == rows(function_table(original, "line"))
        assert row["num_samples"] == int(original.sample_counts().sum())
        assert row["partition"].endswith("/service=api")


def test_batches_give_the_same_rows_and_timestamps_are_kept(tmp_path):
    (path,) = write_fleet(tmp_path / "in", 1, seed=3, num_samples=500)
    dataset.add(tmp_path / "whole", [path])
    dataset.add(tmp_path / "batched", [path], samples_per_batch=7)
    dataset.add(tmp_path / "timeline", [path], samples_per_batch=64, timestamps=True)
    tables = {name: dataset.profiles(tmp_path / name).to_pylist()[0]
              for name in ("whole", "batched", "timeline")}
    backs = {name: read_back(tmp_path / name, row) for name, row in tables.items()}
    reference = rows(function_table(tachyon_format.read(path), "line"))
    assert all(rows(function_table(b, "line")) == reference for b in backs.values())
    original = tachyon_format.read(path)
    written = dataset.arrow(tmp_path / "timeline", "samples").to_table()
    assert written.num_rows == len(original.samples)  # one row per sample
    # (a table has no row order: the batches may be written to files in any order)
    assert sorted(zip(written.column("timestamp_us").to_pylist(),
                      written.column("status").to_pylist(), strict=True)) == sorted(
        zip(original.samples.timestamp_us.tolist(), original.samples.status.tolist(),
            strict=True))
    assert tables["whole"]["num_rows"] == tables["batched"]["num_rows"] < written.num_rows


def test_the_same_file_is_added_once(tmp_path):
    paths = write_fleet(tmp_path / "in", 2, seed=7)
    dataset.add(tmp_path / "ds", paths)
    again = dataset.add(tmp_path / "ds", [*paths, paths[0]])
    assert [a.skipped for a in again] == [True, True, True]
    assert len(dataset.profiles(tmp_path / "ds")) == 2


def test_labels_choose_the_partition_and_are_kept(tmp_path):
    (path,) = write_fleet(tmp_path / "in", 1, seed=9)
    renamed = tmp_path / "in" / "run_4242.bin"
    (tmp_path / "in" / "worker_9.bin").rename(renamed)
    dataset.add(tmp_path / "ds", [renamed], partition_by=("service", "deploy"),
                labels={"service": "web", "deploy": "v7", "host": "h1"})
    (row,) = dataset.profiles(tmp_path / "ds", {"deploy": "v7", "host": "h1"}).to_pylist()
    assert row["partition"] == "service=web/deploy=v7"
    assert (row["host"], row["pid"]) == ("h1", 4242)
    assert dict(row["labels"])["deploy"] == "v7"
    assert json.loads(row["info"])["sample_count"] == row["num_samples"]
    assert len(dataset.profiles(tmp_path / "ds", {"deploy": "v8"})) == 0
    with pytest.raises(ValueError, match="partitioned by service, deploy"):
        dataset.add(tmp_path / "ds", [renamed], partition_by=("date",))


@pytest.mark.parametrize("labels", [{"service": "a/b"}, {"service": ""}, {"service": "x y"}])
def test_a_partition_value_that_would_change_the_path_is_refused(tmp_path, labels):
    (path,) = write_fleet(tmp_path / "in", 1, seed=2)
    with pytest.raises(ValueError, match="cannot be a partition value"):
        dataset.add(tmp_path / "ds", [path], labels=labels)
    assert len(dataset.profiles(tmp_path / "ds")) == visible_rows(tmp_path / "ds") == 0


def test_another_layout_version_is_refused(tmp_path):
    (tmp_path / "ds").mkdir()
    (tmp_path / "ds" / layout.MANIFEST).write_text(json.dumps(
        {"layout": layout.LAYOUT, "version": 99, "partition_by": []}))
    with pytest.raises(ValueError, match="version 99"):
        dataset.profiles(tmp_path / "ds")
    with pytest.raises(ValueError, match="not a profile dataset"):
        dataset.profiles(tmp_path / "nothing")
    (tmp_path / "ds" / layout.MANIFEST).write_text(json.dumps(
        {"layout": layout.LAYOUT, "version": 1, "partition_by": []}))
    with pytest.raises(tachyon_format.FormatError, match="dataset migrate"):
        dataset.summary(tmp_path / "ds")


def test_a_broken_file_adds_nothing(tmp_path):
    (good,) = write_fleet(tmp_path / "in", 1, seed=4, num_samples=300)
    data = (tmp_path / "in" / good).read_bytes()
    broken = tmp_path / "in" / "broken.bin"
    broken.write_bytes(data[: len(data) // 2])
    with pytest.raises(tachyon_format.FormatError):
        dataset.add(tmp_path / "ds", [broken])
    assert len(dataset.profiles(tmp_path / "ds")) == 0


def test_fsspec_urls_in_and_a_url_out(tmp_path):
    """Files from any fsspec URL; the dataset at a URL delta-rs reaches (``file://`` here,
    ``s3://`` ... alike; fsspec's ``memory://`` lives in Python, where delta-rs cannot)."""
    memory = fsspec.filesystem("memory")
    paths = write_fleet_to_memory(3)
    url = (tmp_path / "ds").as_uri()
    dataset.add(url, ["memory://fleet-test/in/p*"],
                labels={"service": "mem"})  # (a wildcard URL: the files it matches)
    table = dataset.profiles(url)
    sources = table.column("source").to_pylist()  # (as fsspec spells the matches)
    assert sorted(s.rsplit("/", 1)[1] for s in sources) == sorted(
        p.rsplit("/", 1)[1] for p in paths)
    for row in table.to_pylist():
        with fsspec.open(row["source"], "rb") as f:
            original = tachyon_format.read(f.read())
        back = read_back(url, row)
        assert rows(function_table(back)) == rows(function_table(original))
    memory.rm("/fleet-test", recursive=True)


def test_the_command_line(tmp_path, capsys):
    paths = write_fleet(tmp_path / "in", 3, seed=11)
    assert main(["dataset", "add", str(tmp_path / "ds"), *paths, "--label", "service=cli",
                 "--label", "date=2026-02-03"]) == 0
    assert "3 profiles added" in capsys.readouterr().err
    assert main(["dataset", "info", str(tmp_path / "ds"), "--json"]) == 0
    facts = json.loads(capsys.readouterr().out)
    assert facts["profiles"] == 3
    assert list(facts["partitions"]) == ["date=2026-02-03/service=cli"]
    assert facts["samples"] == sum(int(tachyon_format.read(p).sample_counts().sum())
                                   for p in paths)
    assert main(["dataset", "add", str(tmp_path / "ds"), paths[0], "--label", "nokey"]) == 1
    assert "KEY=VALUE" in capsys.readouterr().err
    assert facts["rows"] > 0


def test_a_file_that_fails_half_way_leaves_no_rows(tmp_path, monkeypatch):
    paths = write_fleet(tmp_path / "in", 1, seed=5, num_samples=400)
    real = dataset.dictionary_tables

    def failing(counts):  # the samples are written by now; the dictionaries fail
        real(counts)
        raise OSError("disk full")

    monkeypatch.setattr(dataset, "dictionary_tables", failing)
    with pytest.raises(OSError, match="disk full"):
        dataset.add(tmp_path / "ds", paths, timestamps=True, samples_per_batch=50)
    assert len(dataset.profiles(tmp_path / "ds")) == visible_rows(tmp_path / "ds") == 0
    monkeypatch.undo()
    (added,) = dataset.add(tmp_path / "ds", paths, timestamps=True, samples_per_batch=50)
    assert not added.skipped and visible_rows(tmp_path / "ds") == added.num_samples


@pytest.mark.parametrize("table", ["samples", "stacks", "frames", "strings"])
def test_a_damaged_table_file_is_a_format_error(tmp_path, table):
    paths = write_fleet(tmp_path / "in", 1, seed=6)
    dataset.add(tmp_path / "ds", paths)
    (row,) = dataset.profiles(tmp_path / "ds").to_pylist()
    (part,) = data_files(tmp_path / "ds", table)
    data = part.read_bytes()
    part.write_bytes(data[: len(data) // 2])  # truncated: no footer
    with pytest.raises(tachyon_format.FormatError, match=table):
        read_back(tmp_path / "ds", row)


@pytest.mark.parametrize("damage", ["truncated", "missing", "garbage"])
def test_a_damaged_log_is_a_format_error_and_info_says_so(tmp_path, capsys, damage):
    """The last commit of the ``profiles`` table cut short (a store without atomic puts),
    lost, or not JSON: reading is a FormatError, ``dataset info`` reports it and exits 1."""
    paths = write_fleet(tmp_path / "in", 2, seed=12)
    dataset.add(tmp_path / "ds", paths)
    last = sorted((tmp_path / "ds" / "profiles" / "_delta_log").glob("*.json"))[-1]
    if damage == "truncated":
        last.write_bytes(last.read_bytes()[:40])
    elif damage == "missing":
        for part in data_files(tmp_path / "ds", "profiles"):
            part.unlink()
    else:
        last.write_bytes(b"\x00\xff not json\n")
    # (a copy: as another process finds it, not through the tables this one holds open)
    shutil.copytree(tmp_path / "ds", tmp_path / "found")
    with pytest.raises(tachyon_format.FormatError, match="profiles"):
        dataset.summary(tmp_path / "found")
    assert main(["dataset", "info", str(tmp_path / "found")]) == 1
    assert "profiles" in capsys.readouterr().err


def test_a_stack_without_its_dictionary_entry_is_a_format_error(tmp_path):
    paths = write_fleet(tmp_path / "in", 1, seed=8)
    dataset.add(tmp_path / "ds", paths)
    (row,) = dataset.profiles(tmp_path / "ds").to_pylist()
    deltalake.DeltaTable(str(tmp_path / "ds" / "stacks")).delete("depth = 1")  # roots lost
    with pytest.raises(tachyon_format.FormatError, match="no dictionary entry"):
        read_back(tmp_path / "ds", row)


def test_a_value_beyond_an_int64_column_is_refused_by_name(tmp_path):
    """A Tachyon run of 1e300 s (any finite duration is valid) has more nanoseconds than
    the dataset's int64 column holds: the file is refused, naming the column, and nothing
    is added."""
    import struct

    from tests.helpers.paths import DATA_DIR

    data = bytearray((DATA_DIR / "threads_wall_zstd.bin").read_bytes())
    at = len(data) - 32 - 56  # the statistics block: duration_sec first
    data[at : at + 8] = struct.pack("<d", 1e300)
    path = tmp_path / "long.bin"
    path.write_bytes(bytes(data))
    with pytest.raises(tachyon_format.FormatError, match="duration_ns is an int64") as info:
        dataset.add(tmp_path / "ds", [path])
    assert info.value.__notes__ == [f"while adding {path}"]  # (which of the files)
    assert len(dataset.profiles(tmp_path / "ds")) == visible_rows(tmp_path / "ds") == 0


@pytest.mark.parametrize("timestamps", [False, True])
def test_thread_ids_and_addresses_past_2_to_the_63_read_back(tmp_path, timestamps):
    """Delta Lake has no unsigned type: a uint64 column (thread id, native address) is
    stored in a long, and delta-rs refused a value of 2**63 or more (the thread ids
    2**64 - 2 and 2**64 - 1 of synthetic_edges_raw.bin, found by ``tools/fuzz.py --fleet``;
    a kernel address of a native frame) instead of keeping its bits."""
    from dataclasses import replace

    from tachyon_format.fleet.partials import StackCounts
    from tests.helpers.paths import DATA_DIR

    threads = DATA_DIR / "synthetic_edges_raw.bin"
    native = tachyon_format.read(DATA_DIR / "gperftools" / "libprofiler_hot.prof")
    address = native.frames.address.copy()
    address[:] = np.uint64(0xFFFFFFFF81000000) + np.arange(address.size, dtype=np.uint64)  # kernel
    kernel = tmp_path / "kernel.pb"
    tachyon_format.write(replace(native, frames=replace(native.frames, address=address)),
                         kernel, format="pprof")
    added = dataset.add(tmp_path / "ds", [threads, kernel], timestamps=timestamps)
    assert [a.skipped for a in added] == [False, False]
    by_format = {row["format"]: row for row in dataset.profiles(tmp_path / "ds").to_pylist()}
    for path, name in ((threads, "tachyon"), (kernel, "pprof")):
        row = by_format[name]
        back = dataset.load_counts(tmp_path / "ds", row["profile_id"], row["write_id"])
        wanted = StackCounts.of_profile(tachyon_format.read(path))
        assert sorted(zip(back.counts["thread_id"].tolist(), back.counts["count"].tolist(),
                          strict=True)) == sorted(zip(wanted.counts["thread_id"].tolist(),
                                                      wanted.counts["count"].tolist(),
                                                      strict=True))
        assert np.array_equal(np.sort(back.frames["address"]), np.sort(wanted.frames["address"]))
    tachyon = by_format["tachyon"]
    ids = dataset.load_counts(tmp_path / "ds", tachyon["profile_id"], tachyon["write_id"])
    assert {(1 << 64) - 2, (1 << 64) - 1} <= set(ids.counts["thread_id"].tolist())
    assert min(back.frames["address"].view(np.uint64).tolist()) >= 0xFFFFFFFF81000000


def write_version_1(source, target) -> None:
    """The dataset at *source* as layout version 1 wrote it: one Parquet file per profile
    and table under its hive partition, the ``profiles`` row last."""
    target.mkdir()
    manifest = dataset.open_existing(source)
    (target / layout.MANIFEST).write_text(json.dumps(
        {"layout": layout.LAYOUT, "version": 1, "partition_by": list(manifest.partition_by)}))
    for row in dataset.profiles(source).to_pylist():
        for table in (*layout.PARTS, "profiles"):
            rows = dataset.arrow(source, table).to_table().filter(  # (see arrow())
                pads.field("profile_id") == row["profile_id"])
            names = [n for n in layout.TABLES[table].names
                     if table == "samples" or table == "profiles" or n != "profile_id"]
            folder = target / table / row["partition"]
            folder.mkdir(parents=True, exist_ok=True)
            pq.write_table(rows.select(names), folder / f"{row['profile_id']}.parquet")


def test_a_version_1_dataset_is_told_to_migrate_and_migrates(tmp_path, capsys):
    paths = write_fleet(tmp_path / "in", 5, seed=21)
    dataset.add(tmp_path / "now", paths, labels={"service": "api", "date": "2026-05-06"})
    write_version_1(tmp_path / "now", tmp_path / "old")
    with pytest.raises(tachyon_format.FormatError, match="dataset migrate"):
        dataset.summary(tmp_path / "old")
    assert main(["dataset", "info", str(tmp_path / "old")]) == 1
    assert "dataset migrate" in capsys.readouterr().err
    # a profile whose writer was killed half-way (samples cut short; no profiles row for
    # another): reported and left out, or not seen
    damaged = sorted((tmp_path / "old" / "samples").rglob("*.parquet"))[0]
    damaged.write_bytes(damaged.read_bytes()[:100])
    lost = sorted((tmp_path / "old" / "profiles").rglob("*.parquet"))[-1]
    lost.unlink()
    assert main(["dataset", "migrate", str(tmp_path / "old"), str(tmp_path / "new")]) == 1
    assert "3 profiles migrated" in capsys.readouterr().err
    before = {r["profile_id"]: r for r in dataset.profiles(tmp_path / "now").to_pylist()}
    after = dataset.profiles(tmp_path / "new").to_pylist()
    assert len(after) == 3
    for row in after:
        old = before[row["profile_id"]]
        assert {k: row[k] for k in ("source", "labels", "partition", "num_samples", "added_ns")} \
            == {k: old[k] for k in ("source", "labels", "partition", "num_samples", "added_ns")}
        assert rows(function_table(read_back(tmp_path / "new", row), "line")) == rows(
            function_table(read_back(tmp_path / "now", old), "line"))
    assert main(["dataset", "migrate", str(tmp_path / "old"), str(tmp_path / "new")]) == 1
    assert "0 profiles migrated" in capsys.readouterr().err  # (run again: nothing twice)
    assert len(dataset.profiles(tmp_path / "new")) == 3
