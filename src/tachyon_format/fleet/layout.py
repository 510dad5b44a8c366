"""The dataset layout, version 2: one Delta Lake table per kind of row under one directory
(or object-store URL), described in docs/fleet.md.

::

    DIR/tachyon-dataset.json          the manifest: layout name, version, partition keys
    DIR/<table>/_delta_log/...        each table below: Parquet files and a transaction log

Every profile added appends its rows to ``samples``, ``stacks``, ``frames`` and ``strings``
under a ``write_id`` of its own, then commits its ``profiles`` row, which names that
``write_id``, in a merge keyed by ``profile_id``. The ``profiles`` row is the commit: rows of
a write with no ``profiles`` row (a writer killed half-way, or one that lost the merge to a
concurrent writer of the same file) are not part of the dataset, and readers leave them out.
``samples`` is partitioned by the UTC day of the profile's start (``date``, from the file
itself); the partition keys of the manifest are columns of ``profiles``. Stacks, frames and
strings carry global ids (:mod:`.ids`): the same entry may appear in the rows of many
profiles, with the same id and content (readers take it once).
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pyarrow as pa

from tachyon_format.errors import FormatError

LAYOUT = "tachyon-format fleet dataset"
VERSION = 2
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
WRITE_ID = pa.field("write_id", pa.string())
"""The rows one writer appended for one profile (32 hex digits, random); the ``profiles`` row
names the write that counts."""
SAMPLES = pa.schema([
    ("profile_id", pa.string()),
    ("stack_id", pa.int64()),         # a node of the stacks table: the innermost frame
    ("interpreter_id", pa.int64()),   # null when the format has no threads
    ("thread_id", pa.uint64()),
    ("status", pa.int16()),           # ThreadStatus bits; null when the format has none
    ("timestamp_us", pa.uint64()),    # null in a counts row
    ("count", pa.int64()),            # samples this row stands for
])
DATE = pa.field("date", pa.string())
"""The partition of ``samples``: the profile's start day (UTC), :data:`UNKNOWN` if the format
records none; from the file alone, so that every writer of a file puts it in one place."""
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
"""The rows' columns; what is stored: :func:`stored`."""
PARTS = ("samples", "stacks", "frames", "strings")
"""The tables a profile's write appends to before its ``profiles`` row commits it."""


def stored(table: str, partition_by: Sequence[str] = ()) -> pa.Schema:
    """The columns of the Delta table *table*: the rows' (:data:`TABLES`), with ``write_id``
    (and ``profile_id``, ``date``) in the parts, a string column per partition key in
    ``profiles``."""
    if table == "profiles":
        return pa.schema([*PROFILES, WRITE_ID, *(pa.field(k, pa.string()) for k in partition_by)])
    fields = [f for f in TABLES[table] if f.name != "profile_id"]
    extra = [DATE] if table == "samples" else []
    return pa.schema([TABLES["samples"].field("profile_id"), WRITE_ID, *fields, *extra])


@dataclass(frozen=True)
class Manifest:
    """What the manifest file says: the layout's version and the partition keys."""

    partition_by: tuple[str, ...] = DEFAULT_PARTITION_BY
    version: int = VERSION

    def to_json(self) -> str:
        return json.dumps({"layout": LAYOUT, "version": self.version,
                           "partition_by": list(self.partition_by)}, indent=2) + "\n"

    @classmethod
    def from_json(cls, text: str, versions: Sequence[int] = (VERSION,)) -> Manifest:
        """The manifest in *text*; FormatError if it is not one of *versions* (a dataset of
        version 1 is told how to migrate)."""
        try:
            data = json.loads(text)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise FormatError(f"not a dataset manifest: {exc}", path=MANIFEST) from None
        if not isinstance(data, dict) or data.get("layout") != LAYOUT:
            raise FormatError(f"not a dataset manifest (no \"layout\": {LAYOUT!r})",
                              path=MANIFEST)
        version = data.get("version")
        if version not in versions:
            how = (": `tachyon-format dataset migrate DIR NEW_DIR` copies it into version "
                   f"{VERSION}" if version == 1 else "")
            raise FormatError(f"dataset layout version {version!r}: this version of "
                              f"tachyon-format reads version {VERSION}{how}", path=MANIFEST)
        keys = data.get("partition_by")
        if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
            raise FormatError("the manifest's partition_by is not a list of names",
                              path=MANIFEST)
        return cls(tuple(check_key(k) for k in keys), version)


def check_key(key: str) -> str:
    """*key* if it may name a partition (a label name), else ValueError."""
    taken = {*TABLES["samples"].names, *PROFILES.names, WRITE_ID.name, "partition"}
    if not re.fullmatch(r"[a-z][a-z0-9_]{0,40}", key) or key in taken:
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


def day_of(time_ns: int | None) -> str:
    """The ``date`` of a profile that started at *time_ns* (ns since the Unix epoch): its
    UTC day, :data:`UNKNOWN` if its format records no start."""
    if time_ns is None:
        return UNKNOWN
    return dt.datetime.fromtimestamp(time_ns / 1e9, dt.UTC).date().isoformat()
