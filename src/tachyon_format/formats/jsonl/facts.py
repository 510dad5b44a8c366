"""What a JSONL file says beyond the format-neutral :class:`~tachyon_format.Profile`.

A profile read from CPython's JSONL export carries a :class:`JsonlFacts` in
``profile.extras["jsonl"]``: the run id, the meta record's fields, and the per-frame
``cumulative`` counts, which no stack of the profile can hold (the file has no stacks).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

EXTRAS_KEY = "jsonl"
SCHEMA_VERSION = 0
"""The record schema version (``"v"``) CPython 3.15 writes and this package reads."""


@dataclass
class JsonlFacts:
    """``run_id`` (hex) and ``meta`` (the first record, as parsed); ``samples_total`` (the
    ``end`` record's); per frame row of the profile, ``cumulative``: samples whose stack holds
    the frame (``self`` is in the profile's samples). ``info`` is what
    :func:`tachyon_format.info` returns for the profile."""

    run_id: str
    meta: dict[str, Any]
    samples_total: int
    cumulative: npt.NDArray[np.int64] = field(default_factory=lambda: np.zeros(0, np.int64))

    @property
    def info(self) -> dict[str, Any]:
        return {**{k: v for k, v in self.meta.items() if k not in ("type", "v")},
                "samples_total": self.samples_total}
