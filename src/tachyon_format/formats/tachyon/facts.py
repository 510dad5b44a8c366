"""What a Tachyon file says beyond the format-neutral :class:`~tachyon_format.Profile`.

A profile read from a Tachyon file carries these in ``profile.extras["tachyon"]``: CPython's
``get_info()`` dict (what :func:`tachyon_format.info` returns) and the file's record table,
which lets :func:`tachyon_format.write` reproduce the file byte for byte.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

import numpy as np
import numpy.typing as npt

from .settings import REPLAY_BATCH_MAX

EXTRAS_KEY = "tachyon"


@dataclass(frozen=True)
class Records:
    """The file's record structure: record ``i`` starts at ``offset[i]`` of the (decompressed)
    sample region, has ``encoding[i]`` (:class:`~tachyon_format.schema.tachyon.Encoding`) and
    holds samples ``first_sample[i]:first_sample[i + 1]`` (a REPEAT record may hold none)."""

    offset: npt.NDArray[np.int64]
    encoding: npt.NDArray[np.uint8]
    first_sample: npt.NDArray[np.int64]

    def __len__(self) -> int:
        return int(self.offset.size)

    def columns(self) -> dict[str, np.ndarray]:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @property
    def nbytes(self) -> int:
        return sum(column.nbytes for column in self.columns().values())

    def replay_calls(self, status: npt.NDArray[np.integer]) -> npt.NDArray[np.int64] | None:
        """Vectorised: the first sample of each ``collect`` call CPython's replay makes for
        these records, given the samples' *status*: one call per record, a REPEAT record's
        run cut where the status changes and every ``REPLAY_BATCH_MAX`` samples of a run (any
        other record holds one sample) (docs/format/reader.md#collector-calls). None if the
        records hold more samples than *status* (they are not these samples' records)."""
        n = int(status.size)
        if self.first_sample.size and int(self.first_sample[-1]) > n:
            return None
        if n == 0:
            return np.zeros(0, np.int64)
        head = np.zeros(n, bool)
        head[self.first_sample[self.first_sample < n]] = True
        head[0] = True
        head[1:] |= status[1:] != status[:-1]
        run_start = np.flatnonzero(head)
        position = np.arange(n) - np.repeat(run_start, np.diff(np.r_[run_start, n]))
        head |= position % REPLAY_BATCH_MAX == 0
        return np.flatnonzero(head)


@dataclass
class TachyonFacts:
    """``info``: the keys and values of CPython's ``BinaryReader.get_info()``; ``records``:
    the record table of the file the samples came from (None for a profile made otherwise)."""

    info: dict[str, Any]
    records: Records | None = None
