"""What the two decoders of the sample region share (:class:`.decoder.SampleDecoder`, the
vectorised one, and :class:`.walk_decoder.WalkDecoder`, the record walk): the facts they
check records against, and :meth:`RegionDecoder.decode`, a batch at a time over their
``decode_into``, which appends to the caller's columns."""

from __future__ import annotations

from typing import Literal

import numpy as np
import numpy.typing as npt

from .columns import GrowingColumns, SampleBatch
from .records import RegionFacts

JOIN = 1 << 12
"""Bytes of a new chunk joined to the record cut by the end of the previous one: more than
any record but a REPEAT, so that a chunk is not copied whole to join them."""

__all__ = ["JOIN", "RegionDecoder"]


class RegionDecoder:
    """Incremental decoder of a sample region: the facts (:meth:`.records.RegionFacts.of`)
    and :meth:`decode`; subclasses give ``decode_into``."""

    def __init__(
        self,
        *,
        order: Literal["<", ">"],
        start_time_us: int,
        thread_count: int,
        frame_count: int,
        frame_string_ok: npt.NDArray[np.bool_] | None = None,
        region_size: int | None = None,
    ) -> None:
        self.facts = RegionFacts.of(order=order, start_time_us=start_time_us,
                                    thread_count=thread_count, frame_count=frame_count,
                                    frame_string_ok=frame_string_ok, region_size=region_size)
        self.order = self.facts.order

    def decode(self, data, *, final: bool) -> SampleBatch:
        """Decode every complete record of (carried-over tail + *data*) into a new batch;
        ``record_first_sample`` counts from the batch's first sample."""
        samples, records = GrowingColumns.samples(), GrowingColumns.records()
        self.decode_into(data, final=final, samples=samples, records=records)
        s, r = samples.finish(), records.finish()
        return SampleBatch(**s, record_offset=r["offset"], record_encoding=r["encoding"],
                           record_first_sample=r["first_sample"])

    def decode_into(self, data, *, final: bool, samples, records: GrowingColumns) -> None:
        raise NotImplementedError
