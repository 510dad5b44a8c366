"""The dataset layout, version 1: Parquet tables under one directory (or URL), described in
docs/fleet.md.

::

    DIR/tachyon-dataset.json                  the manifest: layout name, version, partition keys
    DIR/<table>/<key>=<value>/.../<profile_id>.parquet    for every table below

Every table is partitioned the same way (hive style, by default ``date`` then ``service``),
and every profile added writes one file per table, named by its ``profile_id``; the
``profiles`` row is written last, so a profile whose row is missing was not fully added.
Stacks, frames and strings carry global ids (:mod:`.ids`): the same entry may appear in the
files of many profiles, with the same id and content (readers take it once).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pyarrow as pa

from .storage import join

LAYOUT = "tachyon-format fleet dataset"
VERSION = 1
MANIFEST = "tachyon-dataset.json"
DEFAULT_PARTITION_BY = ("date", "service")
UNKNOWN = "unknown"
"""The partition value of a profile that has no label for that key."""
_VALUE = re.compile(r"[A-Za-z0-9._:+-]{1,200}")

PROFILES = pa.schema([
    ("profile_id", pa.string()),      # 16 hex digits: BLAKE2b-64 of the file's bytes
    ("source", pa.string()),          # the path or URL the file was read from
    ("format", pa.string()),          # the format it was read as (tachyon, pprof, ...)
    ("host", pa.string()),            # the label "host", if given
    ("pid", pa.int64()),              # the label "pid", else from a name <base>_<pid>.<ext>
    ("labels", pa.map_(pa.string(), pa.string())),
    ("num_samples", pa.int64()),      # the sum of the samples table's count
    ("num_rows", pa.int64()),         # rows in the samples table
    ("period_type", pa.string()),     # e.g. "wall/nanoseconds"
    ("period", pa.int64()),
    ("time_ns", pa.int64()),          # wall-clock start, when the format records one
    ("duration_ns", pa.int64()),
    ("added_ns", pa.int64()),         # when it was added (ns since the Unix epoch)
    ("info", pa.string()),            # JSON: the file's header facts (tachyon_format.info)
])
SAMPLES = pa.schema([
    ("profile_id", pa.string()),
    ("stack_id", pa.int64()),         # a node of the stacks table: the innermost frame
    ("interpreter_id", pa.int64()),   # null when the format has no threads
    ("thread_id", pa.uint64()),
    ("status", pa.int16()),           # ThreadStatus bits; null when the format has none
    ("timestamp_us", pa.uint64()),    # null in a counts row
    ("count", pa.int64()),            # samples this row stands for
])
STACKS = pa.schema([
    ("stack_id", pa.int64()),
    ("parent_id", pa.int64()),        # null for an outermost frame
    ("frame_id", pa.int64()),
    ("depth", pa.int32()),            # frames from the outermost (1) to this one
])
FRAMES = pa.schema([
    ("frame_id", pa.int64()),
    ("filename_id", pa.int64()),
    ("funcname_id", pa.int64()),
    ("lineno", pa.int32()),           # -1: no location
    ("end_lineno", pa.int32()),
    ("column", pa.int32()),
    ("end_column", pa.int32()),
    ("opcode", pa.int16()),           # -1: not captured
    ("address", pa.uint64()),         # null but for native frames
])
STRINGS = pa.schema([
    ("string_id", pa.int64()),
    ("text", pa.string()),            # as shown (invalid UTF-8 replaced)
    ("raw", pa.binary()),             # the bytes, only where they are not text's UTF-8
])
TABLES: dict[str, pa.Schema] = {"profiles": PROFILES, "samples": SAMPLES, "stacks": STACKS,
                                "frames": FRAMES, "strings": STRINGS}


@dataclass(frozen=True)
class Manifest:
    """What the manifest file says: the layout's version and the partition keys."""

    partition_by: tuple[str, ...] = DEFAULT_PARTITION_BY
    version: int = VERSION

    def to_json(self) -> str:
        return json.dumps({"layout": LAYOUT, "version": self.version,
                           "partition_by": list(self.partition_by)}, indent=2) + "\n"

    @classmethod
    def from_json(cls, text: str) -> Manifest:
        """The manifest in *text*; ValueError if it is not one this version reads."""
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"not a dataset manifest: {exc}") from None
        if not isinstance(data, dict) or data.get("layout") != LAYOUT:
            raise ValueError(f"not a dataset manifest (no \"layout\": {LAYOUT!r})")
        if data.get("version") != VERSION:
            raise ValueError(f"dataset layout version {data.get('version')!r}: this version "
                             f"of tachyon-format reads version {VERSION}")
        keys = data.get("partition_by")
        if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
            raise ValueError("the manifest's partition_by is not a list of names")
        return cls(tuple(check_key(k) for k in keys))


def check_key(key: str) -> str:
    """*key* if it may name a partition (a label name), else ValueError."""
    if not re.fullmatch(r"[a-z][a-z0-9_]{0,40}", key) or key in TABLES["samples"].names:
        raise ValueError(f"{key!r} cannot name a partition: lower-case letters, digits "
                         "and _, not a column name")
    return key


def check_value(key: str, value: str) -> str:
    """*value* if it may be a partition value (it becomes part of a path), else
    ValueError."""
    if not _VALUE.fullmatch(value):
        raise ValueError(f"the value {value!r} of {key!r} cannot be a partition value: "
                         "letters, digits and . _ : + - only")
    return value


def partition_dir(manifest: Manifest, labels: Mapping[str, str]) -> str:
    """``key=value/...`` for a profile with *labels* (a missing key: :data:`UNKNOWN`)."""
    return "/".join(f"{key}={check_value(key, labels.get(key, UNKNOWN))}"
                    for key in manifest.partition_by)


def part_path(root: str, table: str, partition: str, profile_id: str) -> str:
    """The file of one profile's part of *table*."""
    return join(root, table, partition, f"{profile_id}.parquet")


def partition_values(path: str, keys: Sequence[str]) -> dict[str, str]:
    """The ``key=value`` parts of a file's path, for the partition *keys*."""
    found = dict(part.split("=", 1) for part in path.split("/") if "=" in part)
    return {key: found.get(key, UNKNOWN) for key in keys}
