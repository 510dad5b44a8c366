"""Where files are: a local path (the default) or an fsspec URL (``s3://bucket/key``,
``gs://...``, ``memory://...``; fsspec is needed only for URLs, and the filesystem's own
package, e.g. s3fs, for that protocol)."""

from __future__ import annotations

import os
import posixpath
from collections.abc import Iterable, Iterator
from typing import Any


def is_url(location: str | os.PathLike) -> bool:
    """Whether *location* names a file through an fsspec protocol (``proto://...``)."""
    return "://" in os.fspath(location)


def expand(locations: Iterable[str | os.PathLike]) -> Iterator[str | os.PathLike]:
    """*locations*, each URL with a wildcard (``s3://bucket/run/*.pb.gz``, which no shell
    expands) replaced by the URLs it matches, in order; local paths as they are."""
    for location in locations:
        text = os.fspath(location)
        if not is_url(text) or not any(c in text for c in "*?["):
            yield location
            continue
        fs, pattern = filesystem(text)
        yield from (fs.unstrip_protocol(path) for path in sorted(fs.glob(pattern)))


def filesystem(location: str | os.PathLike) -> tuple[Any, str]:
    """``(fs, path)``: the fsspec filesystem of *location* and the path inside it (the local
    filesystem for a plain path)."""
    import fsspec

    fs, path = fsspec.core.url_to_fs(os.fspath(location))
    return fs, path


def join(*parts: str) -> str:
    """Parts of a path inside a filesystem, joined with ``/`` (what fsspec paths use)."""
    return posixpath.join(*parts)


def read_source(location: str | os.PathLike) -> str | os.PathLike | bytes:
    """What ``tachyon_format.read`` and ``iter_batches`` take for *location*: a local path
    as it is, the bytes of a file behind a URL (one file's bytes: the unit of work)."""
    if not is_url(location):
        return location
    fs, path = filesystem(location)
    with fs.open(path, "rb") as f:
        return f.read()


def display_name(location: str | os.PathLike) -> str:
    """The name a profile is recorded under: the URL, or the local path made absolute."""
    text = os.fspath(location)
    return text if is_url(text) else os.path.abspath(text)
