"""Tachyon: the binary files of CPython 3.15's sampling profiler (``profiling.sampling``).

Only :func:`sniff` is here, light to import; the registry (:mod:`tachyon_format.formats`)
names the modules of the other verbs, loaded on first use.
"""

from __future__ import annotations


def sniff(head: bytes) -> bool:
    """Is *head* (the first bytes of a file) the start of a Tachyon file?"""
    from .header_info import sniff as sniff_magic  # (the standard library only)

    return sniff_magic(head)
