"""Sample labels that are model columns: thread, interpreter, thread status, timestamp.

A label key becomes a column only when every sample has exactly one label under it, of the
expected kind, whose value reads back exactly (a canonical decimal, a known status name, a
whole number of microseconds): then writing the column back gives the same labels. Otherwise
the key's labels stay labels (``extras["pprof"]``). Keys and kinds: docs/formats/pprof.md
(section "Labels").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from tachyon_format.model import Strings
from tachyon_format.model.thread_status import ThreadStatus

from .facts import INTERPRETER_ID, NANOSECONDS, THREAD_ID, THREAD_STATUS, TIMESTAMP

STRING_KEYS = {THREAD_ID: 2**64 - 1, INTERPRETER_ID: 2**32 - 1, THREAD_STATUS: None}
"""String-valued label keys read as columns (with the largest id they may hold)."""
NUMERIC_KEYS = (TIMESTAMP,)
CANDIDATES = (*STRING_KEYS, *NUMERIC_KEYS)
NO_STATUS = "none"


def status_name(status: int) -> str:
    """``has_gil|on_cpu|main_thread``; ``none`` for 0; bits without a name as ``bit6``."""
    names = [flag.name.lower() for flag in ThreadStatus if status & flag]
    known = sum(int(flag) for flag in ThreadStatus)
    names += [f"bit{b}" for b in range(8) if status & ~known & (1 << b)]
    return "|".join(names) or NO_STATUS


def parse_status(text: str) -> int | None:
    """The inverse of :func:`status_name`, None if *text* is not one."""
    if text == NO_STATUS:
        return 0
    value = 0
    for name in text.split("|"):
        if name.startswith("bit") and name[3:].isdigit() and int(name[3:]) < 8:
            value |= 1 << int(name[3:])
        elif name.upper() in ThreadStatus.__members__:
            value |= ThreadStatus[name.upper()]
        else:
            return None
    return value if status_name(value) == text else None


def parse_decimal(text: str, limit: int) -> int | None:
    if text.isascii() and text.isdigit() and str(int(text)) == text and int(text) <= limit:
        return int(text)
    return None


@dataclass
class LabelColumns:
    """Collects, chunk by chunk, the candidate keys' values (one per sample) and every other
    label; :meth:`finish` decides which keys become columns."""

    strings: Strings
    num_samples: int
    key_rows: dict[str, set[int]] = field(init=False)
    values: dict[str, np.ndarray] = field(init=False)
    counts: dict[str, np.ndarray] = field(init=False)
    broken: set[str] = field(default_factory=set)
    other: list[dict[str, np.ndarray]] = field(default_factory=list)

    def __post_init__(self) -> None:
        # (by their bytes: decoding every string of a table of millions to find a few keys
        # cost seconds and a Python object each)
        self.key_rows = {key: set(self.strings.rows_of(key.encode()).tolist())
                         for key in CANDIDATES}
        self.nanoseconds = set(self.strings.rows_of(NANOSECONDS.encode()).tolist())
        self.values = {}
        self.counts = {key: np.zeros(self.num_samples, np.uint8) for key in CANDIDATES}

    def add(self, first: int, sample: np.ndarray, labels: dict[str, np.ndarray]) -> None:
        """The labels of one chunk (``sample`` within the chunk, starting at *first*)."""
        sample = sample + first
        keep = np.ones(sample.size, bool)
        for key in CANDIDATES:
            rows = self.key_rows[key]
            if not rows:
                continue
            mine = np.isin(labels["key"], list(rows))
            if not mine.any():
                continue
            if key in NUMERIC_KEYS:
                well = (labels["str"] == 0) & np.isin(labels["num_unit"], list(self.nanoseconds))
                value = labels["num"]
            else:
                well = (labels["num"] == 0) & (labels["num_unit"] == 0) & (labels["str"] != 0)
                value = labels["str"]
            if not well[mine].all():
                self.broken.add(key)
                continue  # every label of the key stays a label
            at = sample[mine]
            if np.bincount(at - first).max() > 1:  # a key twice in a sample: labels stay
                self.broken.add(key)
                continue
            self.counts[key][at] = 1
            column = self.values.setdefault(key, np.zeros(self.num_samples, np.int64))
            column[at] = value[mine]
            keep &= ~mine
        self.other.append({"sample": sample[keep], **{k: v[keep] for k, v in labels.items()}})

    def finish(self) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
        """``(columns, other labels)``: columns by key (thread ids as uint64, interpreter ids,
        statuses as uint8, timestamps in microseconds); the labels left as labels."""
        texts = self.strings  # (entries decoded one at a time, as _convert needs them)
        columns: dict[str, np.ndarray] = {}
        other = list(self.other)
        for key, value in self.values.items():
            ok = key not in self.broken and bool((self.counts[key] == 1).all())
            converted = _convert(key, value, texts) if ok else None
            if converted is not None:
                columns[key] = converted
                continue
            present = np.flatnonzero(self.counts[key] > 0)
            # a key that cannot be a column: its labels go back, in a canonical form
            if key in NUMERIC_KEYS:
                unit = min(self.nanoseconds)
                back = {"key": value[present] * 0 + min(self.key_rows[key]), "str": value[
                    present] * 0, "num": value[present], "num_unit": value[present] * 0 + unit}
            else:
                back = {"key": value[present] * 0 + min(self.key_rows[key]),
                        "str": value[present], "num": value[present] * 0,
                        "num_unit": value[present] * 0}
            other.append({"sample": present, **back})
        merged = {name: np.concatenate([o[name] for o in other]) if other else
                  np.zeros(0, np.int64) for name in ("sample", "key", "str", "num", "num_unit")}
        order = np.argsort(merged["sample"], kind="stable")
        return columns, {name: column[order] for name, column in merged.items()}


def _convert(key: str, value: np.ndarray, texts: Sequence[str]) -> np.ndarray | None:
    if key == TIMESTAMP:
        if (value < 0).any() or (value % 1000).any():
            return None
        return (value // 1000).astype(np.uint64)
    # string indices are below len(texts): factorised by a table, not a sort
    present = np.zeros(len(texts), bool)
    present[value] = True
    distinct = np.flatnonzero(present)
    code = np.cumsum(present) - 1
    inverse = code[value]
    parsed = []
    for index in distinct.tolist():
        text = texts[index]
        got = parse_status(text) if key == THREAD_STATUS else parse_decimal(text,
                                                                           STRING_KEYS[key])
        if got is None:
            return None
        parsed.append(got)
    dtype = {THREAD_ID: np.uint64, INTERPRETER_ID: np.uint32, THREAD_STATUS: np.uint8}[key]
    return np.asarray(parsed, dtype)[inverse]
