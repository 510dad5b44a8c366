"""speedscope's JSON file format (``*.speedscope.json``), sampled and evented profiles.

Only :func:`sniff` is here, light to import; the registry (:mod:`tachyon_format.formats`)
names the modules of the other verbs, loaded on first use.
"""

from __future__ import annotations

import re

SCHEMA_URL = "https://www.speedscope.app/file-format-schema.json"
"""The ``$schema`` value every speedscope file carries (speedscope itself imports a
``.speedscope.json`` file by its name, other JSON by this value)."""

_SCHEMA = re.compile(rb'"\$schema"\s*:\s*"' + re.escape(SCHEMA_URL.encode()) + rb'"')


def sniff(head: bytes) -> bool:
    """Is *head* (the first bytes of a file) the start of a speedscope JSON file?

    A JSON object whose ``$schema`` is :data:`SCHEMA_URL`, or, when the head does not reach
    it, whose first key is ``shared`` with ``frames`` in it (speedscope's writer puts
    ``$schema`` first, others put it anywhere; ``read`` checks both)."""
    text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if not text.startswith(b"{"):
        return False
    if _SCHEMA.search(head):
        return True
    return re.match(rb'\{\s*"shared"\s*:\s*\{\s*"frames"\s*:', text) is not None
