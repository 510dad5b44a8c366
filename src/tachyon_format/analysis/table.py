"""Small column tables: what the analysis functions return.

A :class:`Table` holds equal-length numpy columns (text columns are object arrays), one row
per distinct key (a function, a line, a stack ...), never one per sample. ``to_pandas()``
gives a DataFrame when pandas is installed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Table:
    """Columns by name, in display order; ``total`` is what fractions are taken of (the
    weight of every counted sample), ``info`` facts about how the table was made."""

    columns: dict[str, np.ndarray]
    total: int = 0
    info: dict[str, Any] = field(default_factory=dict)

    def __getitem__(self, name: str) -> np.ndarray:
        return self.columns[name]

    def __len__(self) -> int:
        return len(next(iter(self.columns.values()))) if self.columns else 0

    @property
    def names(self) -> list[str]:
        """The column names, in order."""
        return list(self.columns)

    def take(self, rows: np.ndarray) -> Table:
        """The table with only *rows* (indices or a boolean mask), in that order."""
        return Table({k: v[rows] for k, v in self.columns.items()}, self.total, self.info)

    def sort(self, by: str | tuple[str, ...], *, descending: bool = True) -> Table:
        """Rows ordered by the columns *by* (first the most significant); ties keep their
        order (a stable sort). Text columns sort by their text."""
        names = (by,) if isinstance(by, str) else tuple(by)
        ranks = []
        for name in reversed(names):
            rank = np.unique(self.columns[name], return_inverse=True)[1].reshape(-1)
            ranks.append(-rank if descending else rank)
        return self.take(np.lexsort(ranks) if ranks else np.arange(len(self)))

    def head(self, n: int) -> Table:
        """The first *n* rows (all of them if there are fewer)."""
        return self.take(np.arange(min(n, len(self))))

    def rows(self) -> list[tuple]:
        """The rows as tuples of Python values (for small tables)."""
        return list(zip(*(v.tolist() for v in self.columns.values()), strict=True))

    def where(self, **equal: Any) -> Table:
        """The rows whose columns equal the given values."""
        mask = np.ones(len(self), bool)
        for name, value in equal.items():
            mask &= self.columns[name] == value
        return self.take(np.flatnonzero(mask))

    def to_pandas(self):
        """The table as a pandas DataFrame (needs pandas)."""
        import pandas as pd

        return pd.DataFrame(self.columns)

    def __repr__(self) -> str:
        head = ", ".join(self.names)
        return f"Table({len(self)} rows: {head}; total={self.total})"
