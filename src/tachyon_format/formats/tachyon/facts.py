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


@dataclass
class TachyonFacts:
    """``info``: the keys and values of CPython's ``BinaryReader.get_info()``; ``records``:
    the record table of the file the samples came from (None for a profile made otherwise)."""

    info: dict[str, Any]
    records: Records | None = None
