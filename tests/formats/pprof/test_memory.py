"""A million-sample pprof reads into columns: what stays is the columns (no Python object per
sample), and the peak is bounded by the decompressed message and the columns."""

from __future__ import annotations

import gzip
import tracemalloc
from dataclasses import replace

import numpy as np
import pytest

import tachyon_format
from tachyon_format.formats.pprof.writer import dumps
from tests.helpers.paths import DATA_DIR

N = 1_000_000


@pytest.mark.slow
def test_million_samples_stay_columns():
    base = tachyon_format.read(DATA_DIR / "threads_wall_zstd.bin")
    reps = -(-N // len(base.samples))
    s = base.samples
    samples = replace(
        s, stack=np.tile(s.stack, reps)[:N], thread=np.tile(s.thread, reps)[:N],
        status=np.tile(s.status, reps)[:N],
        timestamp_us=np.arange(N, dtype=np.uint64) * 50 + 1)
    profile = replace(base, samples=samples, extras={})
    data = dumps(profile, timestamps=True)
    message_bytes = len(gzip.decompress(data))
    tracemalloc.start()
    try:
        back = tachyon_format.read(data)
        kept, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    columns = back.nbytes + back.extras["pprof"].nbytes
    assert len(back.samples) == N
    assert back.samples.timestamp_us.tolist()[:3] == [1, 51, 101]
    # what stays: the columns (about 34 bytes a sample), not an object per sample (>= 50)
    assert kept < columns + 8 * 2**20, (kept, columns)
    assert peak < 4 * message_bytes + 2 * columns, (peak, message_bytes, columns)
