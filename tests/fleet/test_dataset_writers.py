"""fleet/dataset.py against kills and concurrent writers: ``tachyon-format dataset add`` run as
real processes, SIGKILLed at random moments (and just before and after its commit) then run
again, and run two and four at once with overlapping files and different labels. Every time
the dataset then answers as one clean run does, and reading it never raises anything but
FormatError, even between a kill and the re-run."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time

import pytest

pytest.importorskip("pyarrow", reason="the fleet dataset needs pyarrow")
pytest.importorskip("deltalake", reason="the fleet dataset needs deltalake")

import tachyon_format  # noqa: E402
from tachyon_format.fleet import dataset  # noqa: E402
from tests.fleet.conftest import write_fleet  # noqa: E402
from tests.helpers.paths import REPO  # noqa: E402

LABELS = ("--label", "service=api", "--label", "date=2026-03-04")
KILL_AT = """
import os, signal, sys
from tachyon_format.fleet import delta
from tachyon_format.cli.main import main

where = os.environ["KILL_AT"]
real = delta.insert_new

def insert_new(*args, **kwargs):  # SIGKILL just before, or just after, the commit
    if where == "before":
        os.kill(os.getpid(), signal.SIGKILL)
    out = real(*args, **kwargs)
    os.kill(os.getpid(), signal.SIGKILL)
    return out

delta.insert_new = insert_new
sys.exit(main(sys.argv[1:]))
"""


def command(location, paths, *labels: str) -> list[str]:
    return [sys.executable, "-m", "tachyon_format", "dataset", "add", str(location), *paths,
            *labels]


def environment() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(REPO / "src"), os.environ.get("PYTHONPATH", "")])}


def answers(location) -> dict:
    """What a query of the dataset gives: its summary, and per profile the samples and
    rows that its committed write holds (read back) and its labels."""
    facts = dataset.summary(location)
    per_profile = {}
    for row in dataset.profiles(location).to_pylist():
        counts = dataset.load_counts(location, row["profile_id"], row["write_id"])
        per_profile[row["profile_id"]] = (counts.num_samples, counts.counts["count"].size,
                                          row["num_samples"], row["num_rows"])
    return {"summary": facts, "profiles": per_profile}


def readable_or_format_error(location) -> None:
    """Reading a dataset a writer was killed in: an answer, or FormatError, nothing else."""
    try:
        answers(location)
    except tachyon_format.FormatError:
        pass
    except ValueError as exc:  # (no manifest yet: killed before it was written)
        assert "not a profile dataset" in str(exc)


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> list[str]:
    return write_fleet(tmp_path_factory.mktemp("writers"), 6, seed=300, num_samples=300)


@pytest.fixture(scope="module")
def clean(tmp_path_factory, files) -> tuple[dict, float]:
    """One clean run's answers, and how long the run took."""
    location = tmp_path_factory.mktemp("clean") / "ds"
    start = time.monotonic()
    subprocess.run(command(location, files, *LABELS), env=environment(), check=True,
                   capture_output=True)
    return answers(location), time.monotonic() - start


def killed_then_rerun(location, files, seconds: float) -> None:
    writer = subprocess.Popen(command(location, files, *LABELS), env=environment(),
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(seconds)
    writer.send_signal(signal.SIGKILL)
    writer.wait()
    readable_or_format_error(location)
    subprocess.run(command(location, files, *LABELS), env=environment(), check=True,
                   capture_output=True)


@pytest.mark.parametrize("rounds", [pytest.param(3, id="3-kills"),
                                    pytest.param(12, id="12-kills", marks=pytest.mark.slow)])
def test_sigkill_at_random_moments_then_a_rerun_equals_a_clean_run(tmp_path, files, clean,
                                                                   rounds):
    expected, seconds = clean
    rng = random.Random(rounds)
    for i in range(rounds):
        location = tmp_path / f"ds{i}"
        killed_then_rerun(location, files, rng.uniform(0.2, seconds))
        assert answers(location) == expected, f"killed at round {i}"


@pytest.mark.parametrize("where", ["before", "after"])
def test_a_writer_killed_at_its_commit_then_a_rerun(tmp_path, files, clean, where):
    location = tmp_path / "ds"
    killed = subprocess.run([sys.executable, "-c", KILL_AT, "dataset", "add", str(location),
                             *files, *LABELS], env={**environment(), "KILL_AT": where},
                            capture_output=True)
    assert killed.returncode == -signal.SIGKILL
    readable_or_format_error(location)
    committed = dataset.profiles(location)  # (after: the first batch's files, at most all)
    assert (len(committed) > 0) if where == "after" else (len(committed) == 0)
    subprocess.run(command(location, files, *LABELS), env=environment(), check=True,
                   capture_output=True)
    assert answers(location) == clean[0]


def run_at_once(location, jobs: list[tuple[list[str], tuple[str, ...]]]) -> None:
    writers = [subprocess.Popen(command(location, paths, *labels), env=environment(),
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
               for paths, labels in jobs]
    for writer in writers:
        _, err = writer.communicate(timeout=600)
        assert writer.returncode == 0, err.decode()


@pytest.mark.parametrize("num_writers", [2, pytest.param(4, marks=pytest.mark.slow)])
def test_concurrent_writers_with_overlapping_files_and_other_labels(tmp_path, files, clean,
                                                                   num_writers):
    """Each writer adds most of the files (every one is added by several), under a service
    label of its own: every file is added once, with one writer's labels."""
    location = tmp_path / "ds"
    jobs = []
    for k in range(num_writers):
        mine = [p for i, p in enumerate(files) if i % (num_writers + 1) != k]
        jobs.append((mine, ("--label", f"service=w{k}", "--label", "date=2026-03-04")))
    run_at_once(location, jobs)
    found = answers(location)
    assert found["profiles"] == clean[0]["profiles"]
    facts, expected = found["summary"], clean[0]["summary"]
    assert (facts["profiles"], facts["samples"], facts["rows"]) == (
        expected["profiles"], expected["samples"], expected["rows"])
    services = {dict(r["labels"])["service"] for r in dataset.profiles(location).to_pylist()}
    assert services <= {f"w{k}" for k in range(num_writers)}
    for row in dataset.profiles(location).to_pylist():
        assert row["partition"] == f"date=2026-03-04/service={dict(row['labels'])['service']}"


def test_concurrent_writers_with_the_same_labels_equal_a_clean_run(tmp_path, files, clean):
    location = tmp_path / "ds"
    run_at_once(location, [(files, LABELS), (list(reversed(files)), LABELS)])
    assert answers(location) == clean[0]
