"""What a gperftools CPU profile says beyond the format-neutral :class:`~tachyon_format.Profile`.

A profile read from such a file carries a :class:`GperftoolsFacts` in
``profile.extras["gperftools"]``: the layout and header words, the text after the trailer
exactly as stored (the memory map, or the Java variant's symbol lines), and what pprof's
reading removed. ``tachyon_format.info(profile)`` returns :attr:`GperftoolsFacts.info`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tachyon_format.schema.gperftools import Variant
from tachyon_format.schema.primitives import ByteOrder

EXTRAS_KEY = "gperftools"


@dataclass(frozen=True)
class Layout:
    """How the file stores its words, and which variant it is."""

    word_size: int = 8
    byte_order: ByteOrder = "<"
    variant: Variant = Variant.CPP


@dataclass
class GperftoolsFacts:
    """``layout`` and ``header`` (the five header words); ``num_records`` (records before
    the trailer); ``text``: every byte after the trailer, unchanged; ``mappings``: the
    mappings (start, limit, offset, file, build id) the reader derived from ``text``, so a
    writer can tell whether the profile's mappings are still those and write ``text`` back;
    ``dropped_frames``: addresses of the "signal frames" removed as pprof removes them (the
    second pc shared by nearly every record, up to two rounds); ``duplicate_frames``: how
    many samples lost a caller equal to their leaf address - 1 (pprof's
    ``cleanupDuplicateLocations``); ``java_pcs``: for the Java variant, each frame row's pc
    as the file has it (pprof sets the addresses to 0), so a writer can keep them."""

    layout: Layout
    header: tuple[int, ...]
    num_records: int
    text: bytes
    mappings: tuple[tuple[int, int, int, bytes, bytes], ...] = ()
    dropped_frames: tuple[int, ...] = ()
    duplicate_frames: int = 0
    java_pcs: tuple[int, ...] | None = None

    @property
    def period_us(self) -> int:
        return self.header[3]

    @property
    def info(self) -> dict[str, Any]:
        """Header-level facts as plain values (what :func:`tachyon_format.info` returns)."""
        return info_dict(self.layout, self.header, self.num_records, len(self.text))


def info_dict(layout: Layout, header: tuple[int, ...], num_records: int | None,
              text_bytes: int | None) -> dict[str, Any]:
    return {
        "format": EXTRAS_KEY,
        "variant": layout.variant.name.lower(),
        "word_size": layout.word_size,
        "byte_order": "little" if layout.byte_order == "<" else "big",
        "period_us": header[3],
        "num_records": num_records,
        "text_bytes": text_bytes,
    }
