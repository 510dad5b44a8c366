"""Per-sample keys that mean the same in two profiles of different formats.

Two profiles number their strings, frames, stacks and threads in their own ways (and a
format may keep less of a frame than another). :class:`SharedKeys` gives each distinct
frame (as far as the chosen detail goes), each distinct stack of such frames, and each
(interpreter, thread) one number shared by every profile it is given, so that samples of
different profiles compare as plain integer columns. Python touches each frame row and each
thread once; stacks are numbered with numpy, one pass per level of the stack trees.
"""

from __future__ import annotations

import posixpath
from typing import TYPE_CHECKING, Literal

import numpy as np
import numpy.typing as npt

from tachyon_format.kernels.paths import scan_path
from tachyon_format.kernels.prefix_tree import number_pairs
from tachyon_format.kernels.tree import Levels
from tachyon_format.model.internal import INTERNAL_FRAME_SUFFIXES

from .notation import frame_text

if TYPE_CHECKING:
    from tachyon_format import Profile

FrameDetail = Literal["function", "line", "opcode", "position"]
FRAME_DETAILS: tuple[str, ...] = ("function", "line", "opcode", "position")
"""What makes two frames the same: file and function; also the line (the default; line 0 is
"no line", as pprof and collapsed stacks write it); also the opcode; also the exact line, end
line and columns."""

class SharedKeys:
    """Shared numbering of frames, stacks and threads over several profiles."""

    def __init__(self, detail: FrameDetail = "line", *, basenames: bool = False,
                 drop_internal: bool = False, interpreters: bool = True) -> None:
        if detail not in FRAME_DETAILS:
            raise ValueError(f"unknown frame detail {detail!r} (known: "
                             f"{', '.join(FRAME_DETAILS)})")
        self.detail = detail
        self.basenames = basenames
        self.drop_internal = drop_internal
        self.interpreters = interpreters
        self.frame_ids: dict[tuple, int] = {}
        self.frame_texts: list[str] = []
        # per shared stack but the empty one (number - 1): its frame and the row of its parent
        self.stack_frame = np.zeros(0, np.int64)
        self.stack_parent = np.zeros(0, np.int64)
        self.thread_ids: dict[tuple[int | None, int], int] = {}
        self.thread_keys: list[tuple[int | None, int]] = []

    # -- frames and stacks ------------------------------------------------------------------

    def frame_rows(self, profile: Profile) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.bool_]]:
        """Per frame row of *profile*: its shared frame number, and whether it is one of the
        profiler's own frames to leave out."""
        texts = [*profile.strings.texts(), "?"]  # (the last for an index past the table)
        frames = profile.frames
        last = len(texts) - 1
        columns = [np.minimum(frames.filename.astype(np.int64), last).tolist(),
                   np.minimum(frames.funcname.astype(np.int64), last).tolist(),
                   frames.lineno.tolist(), frames.opcode.tolist()]
        if self.detail == "position":
            columns += [frames.end_lineno.tolist(), frames.column.tolist(),
                        frames.end_column.tolist()]
        ids = np.empty(len(columns[0]), np.int64)
        internal = np.zeros(len(columns[0]), bool)
        for row, (file_index, func_index, lineno, opcode, *position) in enumerate(
                zip(*columns, strict=True)):
            filename = texts[file_index]
            internal[row] = self.drop_internal and filename.endswith(INTERNAL_FRAME_SUFFIXES)
            if self.basenames:
                filename = posixpath.basename(filename.replace("\\", "/"))
            # (pprof and collapsed stacks write "no line" as line 0: one key for both,
            # but where the whole position is compared)
            line = (-1 if self.detail == "function" or (lineno <= 0 and not position)
                    else lineno)
            code = opcode if self.detail in ("opcode", "position") and opcode >= 0 else None
            key = (filename, texts[func_index], line, code, *position)
            number = self.frame_ids.get(key)
            if number is None:
                number = self.frame_ids[key] = len(self.frame_texts)
                text = frame_text(filename, texts[func_index], line, code)
                if position and lineno >= 0:  # [line:column-end_line:end_column]
                    text += f" [{lineno}:{position[1]}-{position[0]}:{position[2]}]"
                self.frame_texts.append(text)
            ids[row] = number
        return ids, internal

    def sample_stacks(self, *profiles: Profile) -> list[npt.NDArray[np.int64]]:
        """Per sample of each of *profiles* (all at once: the numbering is made for them
        together), the shared number of its stack; 0 is the empty stack.

        Vectorised, one pass per level of the stack trees: the nodes of every tree at depth
        *d* are numbered by the distinct (number of the parent, shared frame) pairs among
        them (:func:`~tachyon_format.kernels.prefix_tree.number_pairs`), so that equal stacks
        get equal numbers in any profile. The profiler's own frames, when left out, are taken
        out of the trees first (``Stacks.without_frames``).
        """
        frames, parents, samples = [], [], []
        for profile in profiles:
            frame_ids, internal = self.frame_rows(profile)
            tree, stack = profile.stacks, profile.samples.stack.astype(np.int64)
            if self.drop_internal and internal.any():
                tree, stack = tree.without_frames(internal, stack)
            frames.append(frame_ids[tree.frame.astype(np.int64)])
            parents.append(tree.parent.astype(np.int64))
            samples.append(np.asarray(stack, np.int64))
        # every tree's nodes in one numbering: node i of tree k is base[k] + i
        base = np.zeros(len(profiles) + 1, np.int64)
        np.cumsum([f.size for f in frames], out=base[1:])
        frame = np.concatenate(frames)
        parent = np.concatenate([np.where(p >= 0, p + b, -1)
                                 for p, b in zip(parents, base[:-1], strict=True)])
        levels = Levels(parent)
        row = np.full(frame.size + 1, -1, np.int64)  # shared number - 1 (the last: no stack)
        stack_frame, stack_parent = [np.zeros(0, np.int64)], [np.zeros(0, np.int64)]
        num_rows = 0
        for nodes, up in zip(levels.levels, levels.parents, strict=True):
            up_row = np.where(up >= 0, row[np.maximum(up, 0)], -1)
            row[nodes], new = number_pairs(up_row, frame[nodes], num_rows)
            num_rows += new.size
            stack_frame.append(frame[nodes[new]])
            stack_parent.append(up_row[new])
        self.stack_frame = np.concatenate(stack_frame)
        self.stack_parent = np.concatenate(stack_parent)
        number = row + 1
        return [number[np.where(stack >= 0, stack + b, frame.size)]
                for stack, b in zip(samples, base[:-1], strict=True)]

    def stack_lines(self, number: int) -> list[str]:
        """The frames of a shared stack as notation lines, outermost first."""
        frames = scan_path(self.stack_frame, self.stack_parent, number - 1)
        return [self.frame_texts[int(f)] for f in reversed(frames)]

    # -- threads ----------------------------------------------------------------------------

    def sample_threads(self, profile: Profile) -> npt.NDArray[np.int64]:
        """Per sample: the shared number of its (interpreter, thread), -1 when it has none."""
        threads = profile.threads
        rows = np.empty(len(threads) + 1, np.int64)
        rows[-1] = -1  # (samples without a thread: row -1)
        interpreter_ids = (threads.interpreter_id.tolist() if self.interpreters
                           else [None] * len(threads))
        for row, key in enumerate(zip(interpreter_ids, threads.thread_id.tolist(),
                                      strict=True)):
            number = self.thread_ids.get(key)
            if number is None:
                number = self.thread_ids[key] = len(self.thread_keys)
                self.thread_keys.append(key)
            rows[row] = number
        return rows[profile.samples.thread.astype(np.int64)]

    def thread_text(self, number: int) -> str:
        if number < 0:
            return "no thread"
        interpreter, thread = self.thread_keys[number]
        return f"thread {thread}" + ("" if interpreter is None else
                                     f" (interpreter {interpreter})")
