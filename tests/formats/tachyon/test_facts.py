"""The Tachyon facts of a profile: the record table, and the ``collect`` calls CPython's
``replay()`` makes for it (what the Gecko writer needs for CPython's ``meta.interval``)."""

from __future__ import annotations

import json

import numpy as np
import pytest

import tachyon_format
from tachyon_format.formats.tachyon.facts import Records
from tachyon_format.formats.tachyon.settings import REPLAY_BATCH_MAX
from tests.helpers.paths import DATA_DIR
from tests.helpers.reference import requires_reference, run_reference

FILES = sorted(DATA_DIR.glob("*.bin"))

CPYTHON_CALLS = r'''
import json, sys
from _remote_debugging import BinaryReader

class Calls:
    def __init__(self):
        self.sizes = []
    def collect(self, stack_frames, timestamps_us):
        self.sizes.append(len(timestamps_us))

out = {}
for path in sys.argv[1:]:
    calls = Calls()
    with BinaryReader(path) as reader:
        reader.replay(calls)
    out[path] = calls.sizes
print(json.dumps(out))
'''
"""The number of samples of each ``collect`` call of CPython's ``replay()``, per file."""


@requires_reference
def test_replay_calls_are_cpython_s():
    sizes = json.loads(run_reference(CPYTHON_CALLS, *map(str, FILES)).stdout)
    for path in FILES:
        profile = tachyon_format.read(path)
        status = profile.samples.status
        theirs = np.cumsum([0, *sizes[str(path)]])[:-1]
        ours = profile.extras["tachyon"].records.replay_calls(status)
        assert ours.tolist() == theirs.tolist(), path.name


def records(first_sample: list[int], encoding: list[int]) -> Records:
    return Records(offset=np.arange(len(first_sample), dtype=np.int64),
                   encoding=np.array(encoding, np.uint8),
                   first_sample=np.array(first_sample, np.int64))


def test_a_long_repeat_run_is_cut_every_batch_and_at_each_status_change():
    # FULL (1 sample), then a REPEAT record of 2.5 batches whose status changes once
    n = 1 + REPLAY_BATCH_MAX * 5 // 2
    status = np.zeros(n, np.uint8)
    change = 1 + REPLAY_BATCH_MAX + 10
    status[change:] = 3
    calls = records([0, 1], [1, 0]).replay_calls(status)
    run = n - change
    assert calls.tolist() == [0, 1, 1 + REPLAY_BATCH_MAX, change,
                              *range(change + REPLAY_BATCH_MAX, n, REPLAY_BATCH_MAX)]
    assert run > REPLAY_BATCH_MAX  # (the second run is cut too)


@pytest.mark.parametrize("first_sample", [[0, 5], [0, 1, 9]])
def test_records_of_other_samples_have_no_calls(first_sample):
    """Records that hold more samples than given are another profile's: no answer."""
    assert records(first_sample, [1] * len(first_sample)).replay_calls(
        np.zeros(4, np.uint8)) is None


def test_no_samples_no_calls():
    assert records([], []).replay_calls(np.zeros(0, np.uint8)).tolist() == []
