"""The Firefox Profiler's Gecko profile JSON, as CPython 3.15 writes it
(``profiling.sampling replay --gecko``). Written only.

Only :func:`sniff` is here, light to import; the registry (:mod:`tachyon_format.formats`)
names the modules of the other verbs, loaded on first use.
"""

from __future__ import annotations


def sniff(head: bytes) -> bool:
    """Is *head* (the first bytes of a file) the start of a Gecko profile? A ``.json`` name
    says nothing, so the content decides: a JSON object whose first key is ``meta``, holding
    the Gecko meta fields (``interval``, ``startTime``), as the Firefox Profiler and CPython
    write it; the ``threads`` key comes after the meta object, often past *head*."""
    start = head.lstrip()
    if not start.startswith(b"{"):
        return False
    first_key = start[1:].lstrip()
    return (first_key.startswith(b'"meta"') and b'"interval"' in head
            and b'"startTime"' in head) or (
        first_key.startswith(b'"threads"') or b'"threads":' in head) and b'"meta"' in head
