"""pprof: Google's ``profile.proto`` (``go tool pprof``, Pyroscope, Parca, Datadog...).

The format's verbs for the registry (:mod:`tachyon_format.formats`). Only :func:`sniff` is
defined here; the others load the reader or writer on first use.
"""

from __future__ import annotations

from typing import Any


def sniff(head: bytes) -> bool:
    """Is *head* (the first bytes of a file) the start of a pprof file: a ``Profile``
    message, raw or in gzip or zstd (of which only a small prefix is decompressed)?"""
    from .compression import sniff

    return sniff(head)


def read(source, **options: Any):
    from .reader import read

    return read(source, **options)


def write(profile, destination, **options: Any) -> None:
    from .writer import write

    write(profile, destination, **options)


def validate(source, **options: Any) -> list[str]:
    """Every problem found reading *source* (the first that stops the reader; pprof's
    ``CheckValid`` and the decoder's checks, see ``validation.py``); never raises on
    malformed input."""
    from tachyon_format.errors import FormatError

    from .reader import read

    try:
        read(source, **options)
    except FormatError as exc:
        return [str(exc)]
    except OSError as exc:
        return [f"cannot read: {exc}"]
    return []


def info(source) -> dict[str, Any]:
    from .reader import info

    return info(source)
