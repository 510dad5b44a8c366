"""pprof: Google's ``profile.proto`` (``go tool pprof``, Pyroscope, Parca, Datadog...).

Only :func:`sniff` is here, light to import; the registry (:mod:`tachyon_format.formats`)
names the modules of the other verbs, loaded on first use.
"""

from __future__ import annotations


def sniff(head: bytes) -> bool:
    """Is *head* (the first bytes of a file) the start of a pprof file: a ``Profile``
    message, raw or in gzip or zstd (of which only a small prefix is decompressed)?"""
    from .compression import sniff

    return sniff(head)
