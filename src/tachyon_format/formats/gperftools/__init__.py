"""gperftools CPU profiles: libprofiler's binary "legacy" format, which pprof still reads.

Only :func:`sniff` is here, light to import; the registry (:mod:`tachyon_format.formats`)
names the modules of the other verbs, loaded on first use.
"""

from __future__ import annotations


def sniff(head: bytes) -> bool:
    """Is *head* (the first bytes of a file) a gperftools CPU profile's header?"""
    from .header import layout_of

    return layout_of(head) is not None
