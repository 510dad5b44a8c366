"""gperftools CPU profiles: libprofiler's binary "legacy" format, which pprof still reads.

The format's verbs for the registry (:mod:`tachyon_format.formats`). Only :func:`sniff` is
defined here; the others load the reader or writer on first use.
"""

from __future__ import annotations

from typing import Any


def sniff(head: bytes) -> bool:
    """Is *head* (the first bytes of a file) a gperftools CPU profile's header?"""
    from tachyon_format.schema.gperftools import layout_of

    return layout_of(head) is not None


def read(source, **options: Any):
    from .reader import read

    return read(source, **options)


def write(profile, destination, **options: Any) -> None:
    from .writer import write

    write(profile, destination, **options)


def validate(source, **options: Any) -> list[str]:
    from .validation import validate

    return validate(source, **options)


def info(source) -> dict[str, Any]:
    from .reader import info

    return info(source)
