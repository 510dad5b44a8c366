"""The TACHSTAT profile-statistics block: its values, their rules, and the block itself.

One copy of the rules for both directions: the writer refuses values that break them (with
CPython's ``set_stats()`` messages, docs/format/writer.md#set_stats) and the reader refuses a
block holding such values (docs/format/reader.md#statistics-block).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

from tachyon_format.errors import FormatError
from tachyon_format.schema import tachyon_plain as plain
from tachyon_format.schema import tachyon_values as spec
from tachyon_format.schema.plain import ByteOrder

KEYS = ("duration_sec", "sample_rate", "error_rate", "missed_samples")
"""The statistics keys of CPython's ``get_info()``, in its order."""


@dataclass(frozen=True)
class Stats:
    """The block's values; ``None`` = absent (the optional two, or a legacy block's)."""

    duration_sec: float
    sample_rate: float
    error_rate: float | None = None
    missed_samples: float | None = None

    def problem(self) -> str | None:
        """What breaks the rules, in CPython's ``set_stats()`` words; None if nothing."""
        if not (math.isfinite(self.duration_sec) and self.duration_sec >= 0):
            return "duration must be a finite non-negative value"
        if not (math.isfinite(self.sample_rate) and self.sample_rate >= 0):
            return "sample rate must be a finite non-negative value"
        if self.error_rate is not None and not (
            math.isfinite(self.error_rate) and self.error_rate >= 0
        ):
            return "error rate must be a finite non-negative value"
        if self.missed_samples is not None and not math.isfinite(self.missed_samples):
            return "missed samples must be a finite value"
        return None

    def info(self) -> dict[str, float | None]:
        """The values under ``get_info()``'s keys."""
        return asdict(self)

    def build(self, order: ByteOrder) -> bytes:
        """The 56-byte block as CPython 3.15.2 writes it."""
        from tachyon_format.schema.tachyon import stats  # (construct: only to write)

        return stats(order).build(
            {
                "duration_sec": self.duration_sec,
                "sample_rate": self.sample_rate,
                # (not `or 0.0`: a present -0.0 is written as given, sign bit and all)
                "error_rate": 0.0 if self.error_rate is None else self.error_rate,
                "missed_samples": 0.0 if self.missed_samples is None else self.missed_samples,
                "present": {
                    "error_rate": self.error_rate is not None,
                    "missed_samples": self.missed_samples is not None,
                },
                "reserved": 0,
                "trailer": {"version": 1, "size": spec.STATS_SIZE},
            }
        )


def parse_stats(data, order: ByteOrder) -> Stats | None:
    """The optional block, found backwards from the footer; None when the file has none (or
    one of a version this reader ignores). *data* is the whole file."""
    size = len(data)
    trailer_at = size - spec.FOOTER_SIZE - plain.STATS_TRAILER.size
    if trailer_at < 0 or bytes(data[trailer_at : trailer_at + 8]) != spec.STATS_MAGIC:
        return None
    trailer = plain.STATS_TRAILER.parse(data, order, trailer_at)
    if trailer.size < spec.LEGACY_STATS_SIZE or trailer.size > size - spec.FOOTER_SIZE:
        raise FormatError(
            "Invalid profiling statistics size",
            offset=trailer_at + plain.STATS_TRAILER.offset("size"),
            path="stats -> trailer -> size",
        )
    if trailer.version != 1:
        return None
    start = size - spec.FOOTER_SIZE - trailer.size
    if trailer.size >= spec.STATS_SIZE:  # (a larger block: its first 56 bytes)
        block = plain.STATS.parse(data, order, start)
        present = block.present
        stats = Stats(
            block.duration_sec,
            block.sample_rate,
            block.error_rate if present.error_rate else None,
            block.missed_samples if present.missed_samples else None,
        )
    else:
        block = plain.LEGACY_STATS.parse(data, order, start)
        stats = Stats(block.duration_sec, block.sample_rate)
    if stats.problem() is not None:
        raise FormatError("Invalid profiling statistics values", offset=start, path="stats")
    return stats
