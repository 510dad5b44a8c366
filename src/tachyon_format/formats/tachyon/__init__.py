"""Tachyon: the binary files of CPython 3.15's sampling profiler (``profiling.sampling``).

The format's verbs for the registry (:mod:`tachyon_format.formats`). Only :func:`sniff` is
defined here; the others load the reader or writer on first use.
"""

from __future__ import annotations

from typing import Any


def sniff(head: bytes) -> bool:
    """Is *head* (the first bytes of a file) the start of a Tachyon file?"""
    from tachyon_format.schema.tachyon import byte_order

    return byte_order(head) is not None


def read(source, **options: Any):
    from .reader import read

    return read(source, **options)


def iter_batches(source, **options: Any):
    from .reader import iter_batches

    return iter_batches(source, **options)


def write(profile, destination, **options: Any) -> None:
    from .writer import write

    write(profile, destination, **options)


def validate(source, **options: Any) -> list[str]:
    from .validation import validate

    return validate(source, **options)


def info(source) -> dict[str, Any]:
    from .file import info

    return info(source)
