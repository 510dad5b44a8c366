"""Check a whole Tachyon file without keeping it: for CI jobs and ingestion pipelines."""

from __future__ import annotations

from tachyon_format.errors import FormatError

from .file import Source
from .reader import iter_batches
from .settings import MAX_DECOMPRESSED_SIZE


def validate(source: Source, *, samples_per_batch: int = 1 << 20,
             max_region_size: int = MAX_DECOMPRESSED_SIZE) -> list[str]:
    """Problems that make CPython's reader reject the file, ``[]`` if there are none.

    Every check of ``read`` runs (header, statistics, tables, every record, the sample
    count), in memory bounded by ``samples_per_batch`` (*max_region_size* as for
    ``read``). Malformed input never raises; an
    unreadable path still raises ``OSError``. Decoding stops at the first problem, as
    CPython's reader does, so the list has at most one entry today."""
    try:
        for _ in iter_batches(source, samples_per_batch=samples_per_batch,
                              max_region_size=max_region_size):
            pass
    except FormatError as exc:
        return [str(exc)]
    return []
