"""Collapsed stacks into a :class:`~tachyon_format.Profile`.

1. Decode the text (:mod:`.text`: UTF-8, or UTF-16 / UTF-8 with a byte order mark).
2. Split it into lines (``\\n`` or ``\\r\\n``); blank lines and comment lines (starting
   ``#`` or ``//``, and not ending in a count) are left out; every other line must be
   ``<stack> <count>`` (a space or tab, then a decimal count), else :class:`FormatError`
   names its line number (``errors="skip"`` leaves it out and lists it in the facts).
3. A first frame ``tid:<id>`` is the thread (CPython's prefix) unless ``thread_prefix=False``.
4. Frames are split on ``;``, outermost first; each distinct frame text is parsed once
   (:func:`.frames.parse_frame`) in the dialect given or detected
   (:func:`.frames.detect_style`), then the stacks become one prefix tree.

``values`` are the counts (one ``samples``/``count`` column); one sample row per line.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from tachyon_format.errors import FormatError
from tachyon_format.model import Frames, Meta, Profile, Samples, Stacks, Strings, Threads
from tachyon_format.problems import Problem

from ..sources import Source, check_stack_depths, problems_reading
from ..sources import read_bytes as load
from .facts import EXTRAS_KEY, CollapsedFacts
from .frames import STYLES, detect_style, parse_frame
from .text import decode, encoding_of

_COUNT = re.compile(r"[ \t]([0-9]+)[ \t]*\Z")
"""The end of a stack line: one space or tab, the count, maybe blanks (searched, not matched
with the stack: a pattern with two open-ended repeats could take quadratic time)."""
_SLOW_START = ("", "#", "/", " ", "\t")
"""Lines whose stack starts so may be blank or a comment: :func:`_split_lines` looks closer."""
_THREAD = re.compile(r"tid:([0-9]{1,20})")
MAX_COUNT = 2**63 - 1
MAX_THREAD_ID = 2**64 - 1
INT32 = (-(2**31), 2**31 - 1)


def read(source: Source, *, style: str = "auto", lines: bool = True,
         thread_prefix: bool = True, errors: str = "strict") -> Profile:
    """The profile in *source* (a path, bytes or a binary file object).

    ``style``: ``"auto"`` (detect), ``"cpython"``, ``"py-spy"`` or ``"function"`` (frames as
    names); ``lines``: whether the frames carry line numbers (``cpython`` and ``py-spy``);
    ``thread_prefix``: read a first frame ``tid:<id>`` as the thread; ``errors``:
    ``"strict"`` (a line that is not ``stack count`` raises :class:`FormatError`) or
    ``"skip"`` (it is left out; its number is in ``extras["collapsed"].skipped_lines``)."""
    if style != "auto" and style not in STYLES:
        raise ValueError(f"unknown style {style!r} (known: auto, {', '.join(STYLES)})")
    if errors not in ("strict", "skip"):
        raise ValueError(f"errors must be 'strict' or 'skip', not {errors!r}")
    data = load(source)
    text, encoding = decode(data)
    stacks, counts, numbers, facts = _split_lines(text, data, errors)
    thread_of, thread_ids = _threads(stacks, numbers, thread_prefix, data, text)
    offsets, tokens, distinct = _tokens(stacks)
    check_stack_depths(offsets, lambda i: f"line {numbers[i]}")
    chosen = detect_style(distinct) if style == "auto" else style
    frames, strings = _frames(distinct, chosen, lines, tokens, offsets, numbers, data, text)
    tree, stack_ids = Stacks.from_csr(offsets, tokens, innermost_first=False)
    threads = Threads(np.zeros(len(thread_ids), np.uint32),
                      np.array(thread_ids, dtype=np.uint64))
    samples = Samples(stack=stack_ids.astype(np.int32),
                      thread=np.asarray(thread_of, dtype=np.int32),
                      values=np.asarray(counts, dtype=np.int64).reshape(-1, 1))
    facts = CollapsedFacts(encoding=encoding, style=chosen, lines=lines, **facts)
    return Profile(strings=strings, frames=frames, stacks=tree, threads=threads,
                   samples=samples, meta=Meta(), extras={EXTRAS_KEY: facts})


def validate(source: Source, **options: Any) -> list[Problem]:
    """The problems that make *source* unreadable, ``[]`` if none; never raises on bad input."""
    return problems_reading(read, source, **options)


def info(source: Source) -> dict[str, Any]:
    """What :class:`.facts.CollapsedFacts` says of *source* (read leniently)."""
    return read(source, errors="skip").extras[EXTRAS_KEY].info



# -- the steps --------------------------------------------------------------------------------


def _split_lines(text: str, data: bytes, errors: str):
    """Stack texts, counts and line numbers (from 1) of the stack lines, and the facts."""
    stacks: list[str] = []
    counts: list[int] = []
    numbers: list[int] = []
    skipped: list[int] = []
    comments = 0
    crlf = False
    all_lines = text.split("\n")
    if all_lines and all_lines[-1] == "":
        all_lines.pop()
    for number, line in enumerate(all_lines, 1):
        stack, sep, count = line.rpartition(" ")
        if (sep and count.isdigit() and count.isascii() and len(count) < 19
                and stack[:1] not in _SLOW_START):  # the usual line, without a pattern
            stacks.append(stack)
            counts.append(int(count))
            numbers.append(number)
            continue
        if line.endswith("\r"):
            line = line[:-1]
            crlf = True
        stripped = line.strip()
        if not stripped:
            continue
        match = _COUNT.search(line)
        if match is None and stripped.startswith(("#", "//")):
            comments += 1  # (a line that is `stack count` is data, whatever its start)
            continue
        if match is None or len(match[1]) > 19 or int(match[1]) > MAX_COUNT:
            if errors == "skip":
                skipped.append(number)
                continue
            what = ("count above 2**63 - 1" if match is not None
                    else "not '<stack> <count>'")
            raise _error(f"line {number}: {what}: {_shown(line)}", number, data, text)
        stacks.append(line[: match.start()])
        counts.append(int(match[1]))
        numbers.append(number)
    if sum(counts) > MAX_COUNT:  # (a sum of any of them must fit the int64 values too)
        total = 0
        for count, number in zip(counts, numbers, strict=True):
            total += count
            if total > MAX_COUNT:
                raise _error(f"line {number}: the counts add up to more than 2**63 - 1 by "
                             "this line (a sum of them would not fit)", number, data, text)
    facts = {"num_lines": len(all_lines), "num_stacks": len(stacks), "num_comments": comments,
             "skipped_lines": tuple(skipped), "line_ends": "\r\n" if crlf else "\n"}
    return stacks, counts, numbers, facts


def _threads(stacks: list[str], numbers: list[int], thread_prefix: bool, data: bytes,
             text: str) -> tuple[list[int], list[int]]:
    """Per stack line its thread row (-1: none), and the thread ids in order of appearance;
    the ``tid:`` frame is taken off *stacks* (in place)."""
    rows: dict[int, int] = {}
    thread_of = [-1] * len(stacks)
    if not thread_prefix:
        return thread_of, []
    for i, stack in enumerate(stacks):
        if not stack.startswith("tid:"):
            continue
        head, _, rest = stack.partition(";")
        match = _THREAD.fullmatch(head)
        if match is None:
            continue
        tid = int(match[1])
        if tid > MAX_THREAD_ID:
            raise _error(f"line {numbers[i]}: thread id above 2**64 - 1: {head}", numbers[i],
                         data, text, path="tid")
        thread_of[i] = rows.setdefault(tid, len(rows))
        stacks[i] = rest
    return thread_of, list(rows)


def _tokens(stacks: list[str]) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """CSR offsets of the stacks' frames (outermost first), each frame's index among the
    distinct frame texts, and those texts in order of first appearance."""
    lengths = np.fromiter((s.count(";") + 1 if s else 0 for s in stacks), np.int64, len(stacks))
    offsets = np.zeros(len(stacks) + 1, np.int64)
    np.cumsum(lengths, out=offsets[1:])
    joined = ";".join(s for s in stacks if s)
    tokens = joined.split(";") if int(offsets[-1]) else []
    index = {t: i for i, t in enumerate(dict.fromkeys(tokens))}
    ids = np.fromiter(map(index.__getitem__, tokens), np.int64, len(tokens))
    return offsets, ids, list(index)


def _frames(distinct: list[str], style: str, lines: bool, tokens: np.ndarray,
            offsets: np.ndarray, numbers: list[int], data: bytes, text: str):
    """The frame table (one row per distinct frame text) and its strings."""
    texts: dict[str, int] = {}
    filename = np.empty(len(distinct), np.uint32)
    funcname = np.empty(len(distinct), np.uint32)
    lineno = np.empty(len(distinct), np.int32)
    for row, frame_text in enumerate(distinct):
        file, name, line = parse_frame(frame_text, style, lines)  # type: ignore[arg-type]
        if not INT32[0] <= line <= INT32[1]:
            at = int(np.flatnonzero(tokens == row)[0])
            number = numbers[int(np.searchsorted(offsets, at, side="right")) - 1]
            raise _error(f"line {number}: line number outside int32: {_shown(frame_text)}",
                         number, data, text, path="frame")
        filename[row] = texts.setdefault(file, len(texts))
        funcname[row] = texts.setdefault(name, len(texts))
        lineno[row] = line
    unknown = np.full(len(distinct), -1, np.int32)
    frames = Frames(filename=filename, funcname=funcname, lineno=lineno, end_lineno=lineno.copy(),
                    column=unknown, end_column=unknown.copy(),
                    opcode=np.full(len(distinct), -1, np.int16))
    return frames, Strings.from_texts(texts)


def _shown(line: str, limit: int = 60) -> str:
    return repr(line if len(line) <= limit else line[:limit] + "...")


def _error(message: str, number: int, data: bytes, text: str, path: str = "") -> FormatError:
    """A :class:`FormatError` at the start of line *number* (byte offset in the file)."""
    encoding, skip = encoding_of(data)
    before = "\n".join(text.split("\n", number - 1)[: number - 1])
    before += "\n" if number > 1 else ""
    offset = skip + len(before.encode(encoding, "surrogateescape"))
    return FormatError(message, offset=offset,
                       path=f"line {number}" + (f" -> {path}" if path else ""))
