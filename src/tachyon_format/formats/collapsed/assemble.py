"""The bytes of collapsed lines, from per-node work on the prefix tree (tier c).

The writer hands over a tree whose nodes are rendered frames (``parent``, ``text`` per
node, no two siblings of one text key) and the lines: a thread prefix, a node (the stack's
innermost frame) and a count each. Two steps, neither a Python step per frame:

1. **Order** (:meth:`Lines.order`): CPython sorts lines by count, most first, then by text.
   Where texts allow (every frame's text distinct and free of ``;``, and either every line
   or none has a thread prefix), the text order comes from one keyed preorder of the tree
   (:meth:`~tachyon_format.kernels.tree.Levels.preorder`): below a node, a child's own line
   sorts at its text, the lines through it at its text plus ``;``. Else the lines' bytes are
   sorted.
2. **Bytes** (:meth:`Lines.chunks`): a path is cut into blocks of :data:`BLOCK` frames; each
   node a line reaches by jumping up a block at a time keeps its path's bytes since the last
   block start (made by one join of all their frames and a slice each); a line is its
   prefix, its blocks and `` count\\n``, joined :data:`CHUNK_PIECES` pieces at a time, so
   memory past the tree and the blocks stays bounded however long the output.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import numpy.typing as npt

from tachyon_format.kernels.paths import gather_paths, mark_paths
from tachyon_format.kernels.tree import Levels

BLOCK = 8
"""Frames per block of a path: each node keeps the bytes of its path back to a block start."""
CHUNK_PIECES = 1 << 12
"""Pieces (prefixes, blocks, counts) joined at a time."""


def _encode(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


class Lines:
    """Collapsed lines over a tree of rendered frames: ``parent`` and ``text`` (a row of
    ``texts``) per node; per line a ``prefix`` (a row of ``prefixes``, the text before the
    stack: ``tid:<id>;`` or empty), ``node`` and ``count``."""

    def __init__(self, parent: npt.NDArray[np.int64], text: npt.NDArray[np.int64],
                 texts: list[str], prefixes: list[str], prefix: npt.NDArray[np.int64],
                 node: npt.NDArray[np.int64], count: npt.NDArray[np.int64]) -> None:
        self.parent, self.text, self.texts = parent, text, texts
        self.prefixes, self.prefix, self.node, self.count = prefixes, prefix, node, count
        self.levels = Levels(parent)
        self.depth = self.levels.depth
        self._num_blocks = (self.depth - 1) // BLOCK + 1
        self._up = self.levels.nearest_above(self.depth % BLOCK == 0)  # (the last block's end)
        self._blocks: list[bytes] | None = None
        self._block_row = np.zeros(0, np.int64)

    def order(self) -> npt.NDArray[np.int64]:
        """The lines in CPython's order: count (most first), then text (code points)."""
        texts = self.texts
        used = {self.prefixes[i] == "" for i in np.unique(self.prefix).tolist()}
        mixed = len(used) > 1
        if mixed or len(set(texts)) < len(texts) or any(";" in t for t in texts):
            return self._order_by_bytes()
        # rank of every text and of every text followed by ';', as strings sort
        ranked = sorted([(t, 0, i) for i, t in enumerate(texts)]
                        + [(t + ";", 1, i) for i, t in enumerate(texts)])
        rank = np.empty((2, len(texts)), np.int64)
        for r, (_, kind, i) in enumerate(ranked):
            rank[kind, i] = r
        place = self.levels.preorder(rank[0][self.text], rank[1][self.text])
        prefix_rank = np.empty(len(self.prefixes), np.int64)
        prefix_rank[sorted(range(len(self.prefixes)), key=self.prefixes.__getitem__)] = (
            np.arange(len(self.prefixes)))
        return np.lexsort((place[self.node], prefix_rank[self.prefix], -self.count))

    def _order_by_bytes(self) -> npt.NDArray[np.int64]:
        """The same order by the lines' bytes (UTF-8 keeps code point order, surrogates
        included), for texts the tree walk cannot order."""
        table, _ = self._table(counts=False)
        everything = np.arange(self.node.size)
        pieces = self._pieces(everything, None)
        length = np.fromiter(map(len, table), np.int64, len(table))[pieces]
        ends = np.cumsum(length)[np.cumsum(self._num_blocks[self.node] + 2) - 1]
        blob = b"".join(np.array(table, dtype=object)[pieces].tolist())
        starts = [0, *ends[:-1].tolist()]
        texts = [blob[a:b - 1] for a, b in zip(starts, ends.tolist(), strict=True)]
        counts = (-self.count).tolist()
        return np.asarray(sorted(everything.tolist(), key=lambda i: (counts[i], texts[i])),
                          np.int64)

    def _table(self, counts: bool) -> tuple[list[bytes], npt.NDArray[np.int64] | None]:
        """Every piece a line is made of: the blocks, the prefixes, then the count endings
        (or a newline); and the distinct counts, in the order of their endings."""
        if self._blocks is None:
            self._blocks = self._make_blocks()
        table = self._blocks + [_encode(p) for p in self.prefixes]
        if not counts:
            return [*table, b"\n"], None
        distinct = np.unique(self.count)
        return table + [b" %d\n" % c for c in distinct.tolist()], distinct

    def chunks(self, order: npt.NDArray[np.int64]) -> Iterator[bytes]:
        """The bytes of the lines in *order*, a chunk of lines at a time."""
        table, distinct = self._table(counts=True)
        table_array = np.array(table, dtype=object)
        pieces = self._num_blocks[self.node[order]] + 2
        ends = np.cumsum(pieces)
        start = 0
        while start < order.size:
            stop = int(np.searchsorted(ends, ends[start] - pieces[start] + CHUNK_PIECES,
                                       side="right"))
            stop = max(stop, start + 1)
            yield b"".join(table_array[self._pieces(order[start:stop], distinct)].tolist())
            start = stop

    def _pieces(self, lines: npt.NDArray[np.int64], distinct: npt.NDArray[np.int64] | None
                ) -> npt.NDArray[np.int64]:
        """The rows of :meth:`_table` that make *lines*, in order."""
        node = self.node[lines]
        m = self._num_blocks[node]
        offsets = np.zeros(lines.size + 1, np.int64)
        np.cumsum(m + 2, out=offsets[1:])
        out = np.empty(int(offsets[-1]), np.int64)
        prefix_base = len(self._blocks)  # type: ignore[arg-type]
        out[offsets[:-1]] = prefix_base + self.prefix[lines]
        ending = prefix_base + len(self.prefixes)
        out[offsets[1:] - 1] = ending if distinct is None else (
            ending + np.searchsorted(distinct, self.count[lines]))
        is_block = np.ones(out.size, bool)
        is_block[offsets[:-1]] = is_block[offsets[1:] - 1] = False
        out[is_block] = gather_paths(self._block_row, self._up, node, m,
                                     innermost_first=False)[1]  # (the innermost block last)
        return out

    def _make_blocks(self) -> list[bytes]:
        """The block of every node some line reaches by jumping up a block at a time: the
        path's frames from the last block start to the node (a block after the first starts
        with ``;``), as bytes; and (:attr:`_block_row`) each node's row in that list. One
        join of all their frames, then one slice per block."""
        needed = np.flatnonzero(mark_paths(self._up, self.node))
        self._block_row = np.full(self.parent.size, -1, np.int64)
        self._block_row[needed] = np.arange(needed.size)
        frames = (self.depth[needed] - 1) % BLOCK + 1
        # pieces: ";text" (rows below the number of texts), or "text" at depth 1
        piece = self.text + np.where(self.depth == 1, len(self.texts), 0)
        offsets, flat = gather_paths(piece, self.parent, needed, frames, innermost_first=False)
        plain = [_encode(t) for t in self.texts]
        pieces = np.array([b";" + t for t in plain] + plain, dtype=object)
        length = np.fromiter(map(len, pieces), np.int64, pieces.size)[flat]
        blob = b"".join(pieces[flat].tolist())
        ends = np.zeros(flat.size + 1, np.int64)
        np.cumsum(length, out=ends[1:])
        bounds = ends[offsets].tolist()
        return [blob[a:b] for a, b in zip(bounds[:-1], bounds[1:], strict=True)]
